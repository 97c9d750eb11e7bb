/* Element-wise y = a * x + b on float32: the one kernel behind out_of_place's forms
 * (x + 1, x += 1, and a chain ((x * 2) + 1) * 3, fused or with temporaries). out may
 * equal in (in place). Memory-bound: reads and writes 4 bytes per element. */
#ifndef VL_KERNEL_AFFINE_H
#define VL_KERNEL_AFFINE_H

#include <cuda_runtime.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = a * in[i] + b for i < n on stream s; checks the launch. */
void vl_affine_f32(float *out, const float *in, size_t n, float a, float b, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
