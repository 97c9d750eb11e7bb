/* A deliberately slowed allocator for testing scripts/compare on a GPU: PyTorch's
 * pluggable-allocator ABI (the default symbols of --alloc plugin: vl_alloc, vl_free)
 * around cudaMallocAsync / cudaFreeAsync, plus a fixed busy-wait in every alloc
 * (SLOW_ALLOC_NS nanoseconds, default 20000; 0 makes it a plain async allocator, the
 * fair baseline). Built by `make slow-alloc` into $(BUILD)/lib/libslow_alloc.so:
 *   build/bin/alloc_latency --alloc plugin:build/lib/libslow_alloc.so */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

static uint64_t delay_ns(void)
{
    static int64_t cached = -1;
    if (cached < 0) {
        const char *env = getenv("SLOW_ALLOC_NS");
        cached = env && *env ? strtoll(env, NULL, 10) : 20000;
        if (cached < 0) cached = 0;
    }
    return (uint64_t)cached;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void *vl_alloc(ssize_t size, int device, cudaStream_t stream)
{
    (void)device;
    uint64_t until = now_ns() + delay_ns();
    while (now_ns() < until) {
        /* busy-wait: a slow allocator costs CPU time, not sleep */
    }
    void *p = NULL;
    if (size <= 0) return NULL;
    cudaError_t err = cudaMallocAsync(&p, (size_t)size, stream);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* an OOM is an answer (NULL), not a sticky error */
        return NULL;
    }
    return p;
}

void vl_free(void *ptr, ssize_t size, int device, cudaStream_t stream)
{
    (void)size;
    (void)device;
    if (ptr && cudaFreeAsync(ptr, stream) != cudaSuccess)
        fprintf(stderr, "slow_alloc: cudaFreeAsync failed: %s\n", cudaGetErrorString(cudaGetLastError()));
}
