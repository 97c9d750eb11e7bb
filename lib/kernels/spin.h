/* A kernel that keeps the GPU busy for a set time (reads %globaltimer), so that
 * experiments can hold a stream busy for a known duration. */
#ifndef VL_KERNEL_SPIN_H
#define VL_KERNEL_SPIN_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One block of one thread spins for ns nanoseconds on stream s; checks the launch. */
void vl_spin(cudaStream_t s, uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif
