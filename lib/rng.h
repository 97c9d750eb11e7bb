/* Seeded pseudo-random numbers (splitmix64 seeding xoshiro256**): every run with the
 * same --seed draws the same sequence on every machine. */
#ifndef VL_RNG_H
#define VL_RNG_H

#include <stdint.h>

typedef struct vl_rng { uint64_t s[4]; } vl_rng;

void vl_rng_seed(vl_rng *r, uint64_t seed);
uint64_t vl_rng_next(vl_rng *r);
/* Uniform in [0, n) for n > 0 (Lemire's multiply-shift, unbiased). */
uint64_t vl_rng_below(vl_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double vl_rng_unit(vl_rng *r);
/* Log-uniform integer in [lo, hi], lo >= 1. */
uint64_t vl_rng_log_uniform(vl_rng *r, uint64_t lo, uint64_t hi);

#endif
