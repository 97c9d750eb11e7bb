/* See size_ladder.h. */
#include "scenario/size_ladder.h"

size_t vl_size_ladder(uint64_t lo, uint64_t hi, unsigned factor, uint64_t *out, size_t max)
{
    size_t n = 0;
    if (lo == 0 || lo > hi || factor < 2) return 0;
    for (uint64_t s = lo; s <= hi && n < max; s *= factor) {
        out[n++] = s;
        if (s > UINT64_MAX / factor) break; /* the next step would wrap */
    }
    return n;
}

int vl_reps_for_size(uint64_t size, uint64_t bytes_per_step, int min_reps, int max_reps)
{
    if (min_reps < 1) min_reps = 1;
    if (max_reps < min_reps) max_reps = min_reps;
    uint64_t reps = size ? bytes_per_step / size : (uint64_t)max_reps;
    if (reps < (uint64_t)min_reps) return min_reps;
    if (reps > (uint64_t)max_reps) return max_reps;
    return (int)reps;
}

uint64_t vl_share_of_free(uint64_t free_bytes, double fraction, uint64_t cap, uint64_t granule)
{
    if (granule == 0) granule = 1;
    if (!(fraction > 0)) return 0;
    if (fraction > 1) fraction = 1;
    uint64_t share = (uint64_t)((double)free_bytes * fraction);
    if (share > free_bytes) share = free_bytes; /* double rounding at the top */
    if (cap && share > cap) share = cap;
    return share / granule * granule;
}
