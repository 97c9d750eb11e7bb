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

vl_largest_alloc vl_largest_fit(size_t upper, size_t resolution, vl_fits_fn fits, void *ctx)
{
    vl_largest_alloc r = {0, 0, 0};
    if (resolution == 0) resolution = 1;
    size_t lo = 0, hi = upper / resolution;
    if (hi == 0) return r;
    /* Often everything fits: try the top first. */
    if (try_fit(fits, ctx, hi * resolution, &r)) {
        r.largest_bytes = hi * resolution;
        return r;
    }
    hi--;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (try_fit(fits, ctx, mid * resolution, &r))
            lo = mid;
        else
            hi = mid - 1;
    }
    r.largest_bytes = lo * resolution;
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
    return vl_largest_fit(upper, resolution, single_alloc_fits, &sa);
}
