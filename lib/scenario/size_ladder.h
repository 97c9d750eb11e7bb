/* Sizes for "by size" experiments: a geometric ladder of sizes, a repetition count
 * that keeps the bytes moved per step bounded (small sizes get many repetitions, huge
 * ones a few), and a share of free device memory rounded to a granule, so that an
 * experiment scales itself to the GPU it runs on. */
#ifndef VL_SCENARIO_SIZE_LADDER_H
#define VL_SCENARIO_SIZE_LADDER_H

#include <stddef.h>
#include <stdint.h>

/* lo, lo*factor, lo*factor^2, ... while <= hi, written to out (at most max entries).
 * Returns how many were written; 0 when lo == 0, lo > hi or factor < 2. */
size_t vl_size_ladder(uint64_t lo, uint64_t hi, unsigned factor, uint64_t *out, size_t max);

/* bytes_per_step / size repetitions, clamped to [min_reps, max_reps] (min_reps >= 1). */
int vl_reps_for_size(uint64_t size, uint64_t bytes_per_step, int min_reps, int max_reps);

/* fraction (0..1] of free_bytes, capped at cap (0: no cap), rounded down to a multiple
 * of granule (>= 1). 0 when less than one granule remains. */
uint64_t vl_share_of_free(uint64_t free_bytes, double fraction, uint64_t cap, uint64_t granule);

#endif
