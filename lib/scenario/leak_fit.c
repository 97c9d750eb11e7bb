/* See leak_fit.h. Sums are taken around the means (two passes) so that byte counts
 * in the tens of GiB times iteration numbers lose no precision. */
#include "scenario/leak_fit.h"

vl_line_fit vl_line_fit_xy(const double *x, const double *y, size_t n)
{
    vl_line_fit f = {.n = n, .slope = 0, .intercept = 0, .r2 = 0};
    if (n < 2) {
        if (n == 1) f.intercept = y[0];
        return f;
    }
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (sxx == 0) {
        f.intercept = my;
        return f;
    }
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    /* Every y equal: a perfect (flat) line. */
    f.r2 = syy == 0 ? 1.0 : (sxy * sxy) / (sxx * syy);
    return f;
}

vl_leak_verdict vl_leak_verdict_of(const vl_line_fit *f, double min_slope, double min_r2)
{
    if (f->n < 3) return VL_BOUNDED;
    return f->slope >= min_slope && f->r2 >= min_r2 ? VL_LEAK : VL_BOUNDED;
}

const char *vl_leak_verdict_name(vl_leak_verdict v)
{
    return v == VL_LEAK ? "leak" : "bounded";
}

double vl_iterations_until(const vl_line_fit *f, double headroom_bytes)
{
    if (!(f->slope > 0)) return -1;
    return headroom_bytes > 0 ? headroom_bytes / f->slope : 0;
}
