/* See affine.h. Grid-stride loop over 4-element vectors when the pointers allow it
 * (the allocators hand out 256-byte-aligned blocks), so one thread moves 16 bytes. */
#include "affine.h"

#include <stdint.h>

#include "cuda/gpu.h"

static unsigned grid_for(size_t work)
{
    size_t blocks = (work + 255) / 256;
    if (blocks > 65535u * 4u) blocks = 65535u * 4u;
    return blocks ? (unsigned)blocks : 1u;
}

static __global__ void affine_vec4(float4 *out, const float4 *in, size_t n4, float a, float b)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = a * v.x + b;
        v.y = a * v.y + b;
        v.z = a * v.z + b;
        v.w = a * v.w + b;
        out[i] = v;
    }
}

static __global__ void affine_scalar(float *out, const float *in, size_t n, float a, float b)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = a * in[i] + b;
}

extern "C" void vl_affine_f32(float *out, const float *in, size_t n, float a, float b, cudaStream_t s)
{
    if (n == 0) return;
    int aligned = ((uintptr_t)out % 16 == 0) && ((uintptr_t)in % 16 == 0);
    size_t n4 = aligned ? n / 4 : 0;
    if (n4) {
        affine_vec4<<<grid_for(n4), 256, 0, s>>>((float4 *)out, (const float4 *)in, n4, a, b);
        VL_LAUNCH_CHECK();
    }
    size_t tail = n - n4 * 4;
    if (tail) {
        affine_scalar<<<grid_for(tail), 256, 0, s>>>(out + n4 * 4, in + n4 * 4, tail, a, b);
        VL_LAUNCH_CHECK();
    }
}
