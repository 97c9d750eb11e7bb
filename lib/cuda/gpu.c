/* Checked CUDA calls, device detection and event timing (see gpu.h). */
#include "cuda/gpu.h"

#include <stdio.h>
#include <stdlib.h>

#include "exitcodes.h"

void vl_cuda_check(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess) return;
    fprintf(stderr, "%s:%d: %s: %s: %s\n", file, line, call, cudaGetErrorName(err), cudaGetErrorString(err));
    exit(VL_EXIT_FAIL);
}

int vl_cuda_available(char *why, size_t whylen)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    /* Said plainly: without a driver the runtime reports cudaErrorInsufficientDriver,
     * whose text ("driver version is insufficient") sends people off to upgrade one. */
    if (err == cudaErrorInsufficientDriver) {
        int runtime = 0;
        cudaRuntimeGetVersion(&runtime);
        snprintf(why, whylen,
                 "no GPU found (no CUDA driver / device): no CUDA driver is loaded, or it is older than "
                 "this CUDA runtime (%d.%d) (cudaErrorInsufficientDriver)",
                 runtime / 1000, runtime % 1000 / 10);
        cudaGetLastError();
        return 0;
    }
    if (err != cudaSuccess) {
        snprintf(why, whylen, "no GPU found (no CUDA driver / device): %s (%s)", cudaGetErrorString(err),
                 cudaGetErrorName(err));
        cudaGetLastError();
        return 0;
    }
    if (count == 0) {
        snprintf(why, whylen, "no GPU found (no CUDA driver / device): the driver reports 0 devices");
        return 0;
    }
    return 1;
}

void vl_gpu_timer_init(vl_gpu_timer *t)
{
    VL_CUDA_CHECK(cudaEventCreate(&t->start));
    VL_CUDA_CHECK(cudaEventCreate(&t->stop));
}

void vl_gpu_timer_start(vl_gpu_timer *t, cudaStream_t s) { VL_CUDA_CHECK(cudaEventRecord(t->start, s)); }

float vl_gpu_timer_stop_ms(vl_gpu_timer *t, cudaStream_t s)
{
    float ms = 0;
    VL_CUDA_CHECK(cudaEventRecord(t->stop, s));
    VL_CUDA_CHECK(cudaEventSynchronize(t->stop));
    VL_CUDA_CHECK(cudaEventElapsedTime(&ms, t->start, t->stop));
    return ms;
}

void vl_gpu_timer_destroy(vl_gpu_timer *t)
{
    VL_CUDA_CHECK(cudaEventDestroy(t->start));
    VL_CUDA_CHECK(cudaEventDestroy(t->stop));
}

void vl_gpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    VL_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
}
