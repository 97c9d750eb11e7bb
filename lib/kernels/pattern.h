/* Fill a buffer with a pattern and count elements that differ from it: the way
 * scenarios detect that someone else wrote into "their" memory. */
#ifndef VL_KERNEL_PATTERN_H
#define VL_KERNEL_PATTERN_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* p[i] = value for i < n. */
void vl_fill_u32(uint32_t *p, size_t n, uint32_t value, cudaStream_t s);
/* p[i] = seed ^ i (a pattern that differs per element). */
void vl_fill_iota_u32(uint32_t *p, size_t n, uint32_t seed, cudaStream_t s);
/* Adds to *mismatches (device memory) the number of i < n with p[i] != (iota ? seed ^ i : seed). */
void vl_count_mismatch_u32(const uint32_t *p, size_t n, uint32_t seed, int iota,
                           unsigned long long *mismatches, cudaStream_t s);
/* Reads and rewrites p[i] += 1 for i < n, repeated `passes` times: a long-running
 * kernel that both reads and writes a buffer. */
void vl_touch_u32(uint32_t *p, size_t n, int passes, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
