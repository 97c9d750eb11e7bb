/* Checked CUDA calls and GPU timing for programs that run on a real device. */
#ifndef VL_GPU_H
#define VL_GPU_H

#include <cuda_runtime.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Any CUDA runtime call: on error print "file:line: call: error-name: message" and
 * exit(VL_EXIT_FAIL). For calls whose failure is a result (an OOM), test the return
 * value yourself instead. */
#define VL_CUDA_CHECK(call) vl_cuda_check((call), #call, __FILE__, __LINE__)
/* After every kernel launch. */
#define VL_LAUNCH_CHECK() vl_cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

void vl_cuda_check(cudaError_t err, const char *call, const char *file, int line);

/* 1 if a CUDA device is usable; else 0 with the reason ("no GPU found (no CUDA driver /
 * device): ...") in why. */
int vl_cuda_available(char *why, size_t whylen);

/* Device time with CUDA events. stop() synchronises on the stop event. */
typedef struct vl_gpu_timer {
    cudaEvent_t start, stop;
} vl_gpu_timer;
void vl_gpu_timer_init(vl_gpu_timer *t);
void vl_gpu_timer_start(vl_gpu_timer *t, cudaStream_t s);
float vl_gpu_timer_stop_ms(vl_gpu_timer *t, cudaStream_t s);
void vl_gpu_timer_destroy(vl_gpu_timer *t);

/* cudaMemGetInfo, checked. */
void vl_gpu_mem_info(size_t *free_bytes, size_t *total_bytes);

#ifdef __cplusplus
}
#endif

#endif
