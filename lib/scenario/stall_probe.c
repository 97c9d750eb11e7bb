/* See stall_probe.h. */
#include "scenario/stall_probe.h"

#include "clock.h"
#include "cuda/gpu.h"
#include "kernels/spin.h"

void vl_stall_probe_init(vl_stall_probe *p)
{
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&p->busy, cudaStreamNonBlocking));
    VL_CUDA_CHECK(cudaEventCreate(&p->start));
    VL_CUDA_CHECK(cudaEventCreate(&p->stop));
}

void vl_stall_probe_destroy(vl_stall_probe *p)
{
    VL_CUDA_CHECK(cudaStreamSynchronize(p->busy));
    VL_CUDA_CHECK(cudaEventDestroy(p->start));
    VL_CUDA_CHECK(cudaEventDestroy(p->stop));
    VL_CUDA_CHECK(cudaStreamDestroy(p->busy));
}

vl_stall vl_stall_measure(vl_stall_probe *p, uint64_t kernel_ns, vl_stall_call call, void *arg)
{
    vl_stall r;
    /* Both events are queued before the call, so the stop event's time is the end of
     * the kernel even when the call itself waits for it. */
    VL_CUDA_CHECK(cudaEventRecord(p->start, p->busy));
    vl_spin(p->busy, kernel_ns);
    VL_CUDA_CHECK(cudaEventRecord(p->stop, p->busy));
    uint64_t t0 = vl_now_ns();
    call(arg);
    uint64_t t1 = vl_now_ns();
    VL_CUDA_CHECK(cudaEventSynchronize(p->stop));
    float ms = 0;
    VL_CUDA_CHECK(cudaEventElapsedTime(&ms, p->start, p->stop));
    r.call_ns = (double)(t1 - t0);
    r.kernel_ms = ms;
    r.ratio = ms > 0 ? r.call_ns / (ms * 1e6) : 0;
    return r;
}
