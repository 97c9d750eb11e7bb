/* "Does this call wait for the GPU?": keep one stream busy with a kernel of known
 * length (lib/kernels/spin.h), make the call from the host at once, and time it.
 * A call that synchronises the device (cudaFree) takes about the kernel's remaining
 * time; one that does not (cudaFreeAsync, a cache hit) takes microseconds.
 * Used by free_stall; async_free_race's "raw cudaFree is safe but stalls" is the same
 * measurement.
 *
 * The kernel's own length is taken with events recorded around it on the busy stream
 * (device time), so stall_ratio compares the call with what the GPU really did. */
#ifndef VL_SCENARIO_STALL_PROBE_H
#define VL_SCENARIO_STALL_PROBE_H

#include <cuda_runtime.h>
#include <stdint.h>

typedef struct vl_stall_probe {
    cudaStream_t busy; /* a non-blocking stream owned by the probe */
    cudaEvent_t start, stop;
} vl_stall_probe;

typedef struct vl_stall {
    double call_ns;   /* host time of the call */
    double kernel_ms; /* device time of the kernel that kept the busy stream busy */
    double ratio;     /* call time / kernel time: ~1 means the call waited for the kernel */
} vl_stall;

/* The call under test; it must not use the probe's busy stream. */
typedef void (*vl_stall_call)(void *arg);

void vl_stall_probe_init(vl_stall_probe *p);
void vl_stall_probe_destroy(vl_stall_probe *p);

/* Launches a kernel spinning kernel_ns on the busy stream, times call(arg) from the
 * host, then waits for the kernel. Returns both times. CUDA errors exit (VL_CUDA_CHECK). */
vl_stall vl_stall_measure(vl_stall_probe *p, uint64_t kernel_ns, vl_stall_call call, void *arg);

#endif
