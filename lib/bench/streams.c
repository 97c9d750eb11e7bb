/* Benchmark streams: created CUDA streams, or tokens on the simulated device (streams.h). */
#include "streams.h"

#include <stdint.h>
#include <stdlib.h>

#include "cuda/gpu.h"

int vl_bench_streams_create(vl_bench_streams *bs, vl_device *dev, size_t n, const int *is_default)
{
    bs->dev = dev;
    bs->n = n;
    bs->s = calloc(n ? n : 1, sizeof *bs->s);
    if (!bs->s) return -1;
    for (size_t i = 0; i < n; i++) {
        if (is_default && is_default[i]) continue;
        if (dev->simulated) {
            bs->s[i] = (vl_stream)(uintptr_t)(i + 1); /* any distinct non-NULL token */
        } else {
            cudaStream_t cs;
            VL_CUDA_CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
            bs->s[i] = (vl_stream)cs;
        }
    }
    return 0;
}

void vl_bench_streams_destroy(vl_bench_streams *bs)
{
    if (!bs->s) return;
    if (!bs->dev->simulated)
        for (size_t i = 0; i < bs->n; i++)
            if (bs->s[i]) VL_CUDA_CHECK(cudaStreamDestroy((cudaStream_t)bs->s[i]));
    free(bs->s);
    bs->s = NULL;
    bs->n = 0;
}
