/* See pattern.h. Grid-stride loops, 256-thread blocks, enough blocks to fill the GPU. */
#include "pattern.h"

#include "cuda/gpu.h"

static unsigned grid_for(size_t n)
{
    size_t blocks = (n + 255) / 256;
    if (blocks > 65535u * 4u) blocks = 65535u * 4u;
    return blocks ? (unsigned)blocks : 1u;
}

static __global__ void fill_kernel(uint32_t *p, size_t n, uint32_t value, int iota)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = iota ? (value ^ (uint32_t)i) : value;
}

static __global__ void mismatch_kernel(const uint32_t *p, size_t n, uint32_t seed, int iota,
                                       unsigned long long *count)
{
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        local += p[i] != (iota ? (seed ^ (uint32_t)i) : seed);
    if (local) atomicAdd(count, local);
}

static __global__ void touch_kernel(uint32_t *p, size_t n, int passes)
{
    for (int pass = 0; pass < passes; pass++)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
            p[i] += 1u;
}

extern "C" void vl_fill_u32(uint32_t *p, size_t n, uint32_t value, cudaStream_t s)
{
    fill_kernel<<<grid_for(n), 256, 0, s>>>(p, n, value, 0);
    VL_LAUNCH_CHECK();
}

extern "C" void vl_fill_iota_u32(uint32_t *p, size_t n, uint32_t seed, cudaStream_t s)
{
    fill_kernel<<<grid_for(n), 256, 0, s>>>(p, n, seed, 1);
    VL_LAUNCH_CHECK();
}

extern "C" void vl_count_mismatch_u32(const uint32_t *p, size_t n, uint32_t seed, int iota,
                                      unsigned long long *mismatches, cudaStream_t s)
{
    mismatch_kernel<<<grid_for(n), 256, 0, s>>>(p, n, seed, iota, mismatches);
    VL_LAUNCH_CHECK();
}

extern "C" void vl_touch_u32(uint32_t *p, size_t n, int passes, cudaStream_t s)
{
    touch_kernel<<<grid_for(n), 256, 0, s>>>(p, n, passes);
    VL_LAUNCH_CHECK();
}
