/* See spin.h. */
#include "spin.h"

#include "cuda/gpu.h"

static __global__ void spin_kernel(uint64_t ns)
{
    uint64_t start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

extern "C" void vl_spin(cudaStream_t s, uint64_t ns)
{
    spin_kernel<<<1, 1, 0, s>>>(ns);
    VL_LAUNCH_CHECK();
}
