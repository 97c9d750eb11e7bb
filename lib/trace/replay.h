/* Replaying a parsed trace (trace.h) against an allocator: one pass plays every
 * operation in order, timing each call on the host monotonic clock, then frees what
 * the trace left live (untimed). No CUDA here: streams come from the caller (created
 * CUDA streams on a GPU, tokens on the simulated device; lib/bench/streams.h). */
#ifndef VL_TRACE_REPLAY_H
#define VL_TRACE_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "stats.h"
#include "trace.h"

typedef struct vl_replay_pass {
    size_t allocs, frees;      /* calls made */
    size_t ooms;               /* allocs that returned NULL (size > 0) */
    size_t frees_after_oom;    /* frees left out because their alloc had failed */
    double wall_ns;            /* the whole pass incl. a final device synchronize */
    vl_summary alloc_ns, free_ns;
    vl_alloc_stats stats;      /* the allocator's statistics at the end of the pass */
} vl_replay_pass;

typedef struct vl_replay {
    const vl_trace *trace;
    vl_allocator *alloc;
    vl_stream *streams;        /* one per trace stream index */
    void **ptrs;               /* by slot; NULL: not allocated or failed */
    double *alloc_lat, *free_lat;
    size_t op;                 /* the operation being played (its index in trace->ops) */
} vl_replay;

/* streams: trace->nstreams entries, kept by the caller. Returns 0 or -1 (no memory). */
int vl_replay_init(vl_replay *r, const vl_trace *trace, vl_allocator *a, vl_stream *streams);
/* One pass; resets the allocator's peaks first so each pass's peaks are its own. */
void vl_replay_pass_run(vl_replay *r, vl_replay_pass *out);
void vl_replay_destroy(vl_replay *r);

#endif
