/* Is memory growing per iteration? A least-squares line through (iteration, bytes)
 * samples and a verdict from it: what a leak detector in a training loop computes.
 *
 * Verdict rule (documented here because scenarios and README quote it):
 *   leak     slope >= min_slope bytes/iteration AND r2 >= min_r2: steady growth;
 *   bounded  anything else: flat, or a sawtooth that returns (low r2), or too few points.
 * A sawtooth (memory freed at each epoch end) has a positive slope inside each epoch
 * but a poor linear fit over several epochs, hence the r2 condition. */
#ifndef VL_SCENARIO_LEAK_FIT_H
#define VL_SCENARIO_LEAK_FIT_H

#include <stddef.h>

typedef struct vl_line_fit {
    size_t n;
    double slope;     /* y units per x unit */
    double intercept;
    double r2;        /* 1 for a perfect line; 1 as well when every y is equal (slope 0) */
} vl_line_fit;

/* Fits y = slope * x + intercept. n < 2, or all x equal, gives slope 0, r2 0. */
vl_line_fit vl_line_fit_xy(const double *x, const double *y, size_t n);

typedef enum vl_leak_verdict { VL_BOUNDED = 0, VL_LEAK = 1 } vl_leak_verdict;

#define VL_LEAK_MIN_R2 0.9

vl_leak_verdict vl_leak_verdict_of(const vl_line_fit *f, double min_slope, double min_r2);
const char *vl_leak_verdict_name(vl_leak_verdict v);

/* Iterations until `headroom_bytes` are used up at the fitted slope; -1 when the
 * slope is not positive (never). */
double vl_iterations_until(const vl_line_fit *f, double headroom_bytes);

#endif
