/* "Would this trace have fitted with setting X?": the smallest capacity of the
 * simulated device at which a trace replays without an OOM, for one allocator SPEC,
 * found by bisection on sim:capacity (bench/replay --fit).
 *
 * Each try opens a fresh sim device of that capacity (the caller's other sim options,
 * such as granularity and overhead, kept) and a fresh allocator, and replays `passes`
 * passes (the first one cold); a try fits when no pass had an OOM. The search assumes
 * that what fits at capacity C fits above C. It starts at the trace's peak live bytes
 * plus the device's overhead (below that nothing can fit), doubles until a try fits,
 * then bisects: the answer is a multiple of `resolution`, and one resolution less did
 * not fit. On the simulated device every allocator of the suite that runs there maps
 * whole 2 MiB granules (classic segments are multiples of 2 MiB too), so with the
 * default 2 MiB resolution and granularity the answer is the exact smallest capacity. */
#ifndef VL_TRACE_FIT_H
#define VL_TRACE_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "spec.h"
#include "trace.h"

typedef struct vl_trace_fit {
    int found;                   /* 0: nothing up to the search limit fitted */
    uint64_t smallest_capacity;  /* when found */
    uint64_t limit;              /* the largest capacity the search would try */
    size_t tries;                /* replays of the trace (each of `passes` passes) */
} vl_trace_fit;

/* device: a parsed "sim" SPEC (its capacity is replaced); streams: trace->nstreams
 * entries (sim tokens, lib/bench/streams.h). Returns 0, or -1 with one line in err and
 * *status an exit status (VL_EXIT_USAGE: the allocator or device cannot open there,
 * VL_EXIT_FAIL: a device call failed, out of host memory). */
int vl_trace_fit_capacity(const vl_trace *t, vl_stream *streams, const vl_spec *device, const char *alloc_spec,
                          uint64_t resolution, int passes, vl_trace_fit *out, int *status, char *err, size_t errlen);

#endif
