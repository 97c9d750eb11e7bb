/* "How large a request can still succeed right now?" by bisection through an
 * allocator. The single-allocation probe is what a user hitting "CUDA out of memory
 * ... X GiB free" needs, and the number fragmentation steals; the general form asks
 * the same of any allocation pattern (an expression with temporaries, say).
 *
 * Side effects: failed probes count as OOMs in the allocator's stats (callers that
 * report OOMs subtract r.failures), and a caching allocator may release its cache to
 * satisfy a probe, as it would for a real request. Works on the simulated device. */
#ifndef VL_SCENARIO_LARGEST_ALLOC_H
#define VL_SCENARIO_LARGEST_ALLOC_H

#include <stddef.h>

#include "alloc.h"

typedef struct vl_largest_alloc {
    size_t largest_bytes; /* largest size that succeeded (0: none did) */
    size_t probes;        /* attempts made */
    size_t failures;      /* of which did not fit */
} vl_largest_alloc;

/* fits(ctx, bytes): try the pattern at this size, give everything back, return 1 if
 * it fitted, 0 if not. */
typedef int (*vl_fits_fn)(void *ctx, size_t bytes);

/* Largest multiple of `resolution` in [resolution, upper] for which fits() holds,
 * assuming fits() is monotone (what fits at n fits below n). 0 when nothing fits. */
vl_largest_alloc vl_largest_fit(size_t upper, size_t resolution, vl_fits_fn fits, void *ctx);

/* The same, starting from a guess (in bytes) of the answer: a correct guess costs two
 * probes instead of a whole bisection, which matters where each probe maps tens of
 * GiB. A wrong guess only costs a few more probes (galloping, then bisection). */
vl_largest_alloc vl_largest_fit_near(size_t upper, size_t resolution, size_t guess, vl_fits_fn fits, void *ctx);

/* The same for one allocation of `bytes` on stream s (allocate, then free at once).
 * Its failed probes take no OOM report (they are the measurement). */
vl_largest_alloc vl_largest_alloc_probe(vl_allocator *a, vl_stream s, size_t upper, size_t resolution);

#endif
