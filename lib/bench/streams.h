/* Streams for benchmarks: n distinct vl_stream values on a device. On a CUDA device
 * they are created non-blocking CUDA streams (so they overlap with each other and
 * with the default stream); on the simulated device they are distinct tokens. An
 * entry asked for as the default stream is NULL on both. */
#ifndef VL_BENCH_STREAMS_H
#define VL_BENCH_STREAMS_H

#include <stddef.h>

#include "device.h"

typedef struct vl_bench_streams {
    vl_device *dev;
    vl_stream *s;
    size_t n;
} vl_bench_streams;

/* is_default: NULL, or n flags (1: that entry is the default stream). Returns 0, or -1
 * (out of host memory; CUDA errors exit through VL_CUDA_CHECK). */
int vl_bench_streams_create(vl_bench_streams *bs, vl_device *dev, size_t n, const int *is_default);
void vl_bench_streams_destroy(vl_bench_streams *bs);

#endif
