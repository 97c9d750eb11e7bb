/* See largest_alloc.h. Invariant of the bisection, in units of `resolution`:
 * lo fits (or is 0) and nothing above hi was seen to fit. */
#include "scenario/largest_alloc.h"

static int try_fit(vl_fits_fn fits, void *ctx, size_t bytes, vl_largest_alloc *r)
{
    r->probes++;
    if (fits(ctx, bytes)) return 1;
    r->failures++;
    return 0;
}

/* Bisection of (lo, hi] in units of resolution, lo known to fit (or 0). */
static size_t bisect(size_t lo, size_t hi, size_t resolution, vl_fits_fn fits, void *ctx, vl_largest_alloc *r)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (try_fit(fits, ctx, mid * resolution, r))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

vl_largest_alloc vl_largest_fit(size_t upper, size_t resolution, vl_fits_fn fits, void *ctx)
{
    vl_largest_alloc r = {0, 0, 0};
    if (resolution == 0) resolution = 1;
    size_t hi = upper / resolution;
    if (hi == 0) return r;
    /* Often everything fits: try the top first. */
    if (try_fit(fits, ctx, hi * resolution, &r)) {
        r.largest_bytes = hi * resolution;
        return r;
    }
    r.largest_bytes = bisect(0, hi - 1, resolution, fits, ctx, &r) * resolution;
    return r;
}

vl_largest_alloc vl_largest_fit_near(size_t upper, size_t resolution, size_t guess, vl_fits_fn fits, void *ctx)
{
    vl_largest_alloc r = {0, 0, 0};
    if (resolution == 0) resolution = 1;
    size_t lo = 0, hi = upper / resolution, g = guess / resolution;
    if (hi == 0) return r;
    if (g < 1) g = 1;
    if (g > hi) g = hi;
    if (try_fit(fits, ctx, g * resolution, &r)) {
        lo = g; /* gallop up: g+1, g+2, g+4, ... until one fails */
        for (size_t step = 1; lo < hi; step *= 2) {
            size_t t = hi - lo > step ? lo + step : hi;
            if (!try_fit(fits, ctx, t * resolution, &r)) {
                hi = t - 1;
                break;
            }
            lo = t;
        }
    } else {
        hi = g - 1; /* gallop down: g-1, g-2, g-4, ... until one fits */
        for (size_t step = 1; hi > lo; step *= 2) {
            size_t t = hi > step ? hi - step + 1 : 1;
            if (try_fit(fits, ctx, t * resolution, &r)) {
                lo = t;
                break;
            }
            hi = t - 1;
        }
    }
    r.largest_bytes = bisect(lo, hi, resolution, fits, ctx, &r) * resolution;
    return r;
}

typedef struct single_alloc {
    vl_allocator *a;
    vl_stream s;
} single_alloc;

static int single_alloc_fits(void *ctx, size_t bytes)
{
    single_alloc *sa = ctx;
    void *p = vl_allocate(sa->a, bytes, sa->s);
    if (!p) return 0;
    vl_deallocate(sa->a, p, bytes, sa->s);
    return 1;
}

vl_largest_alloc vl_largest_alloc_probe(vl_allocator *a, vl_stream s, size_t upper, size_t resolution)
{
    single_alloc sa = {a, s};
    int reports = vl_alloc_oom_reports(a, VL_OOM_REPORT_OFF); /* its failures are the measurement */
    vl_largest_alloc r = vl_largest_fit(upper, resolution, single_alloc_fits, &sa);
    vl_alloc_oom_reports(a, reports);
    return r;
}
