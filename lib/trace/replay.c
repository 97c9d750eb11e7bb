/* One replay pass of a trace against an allocator (see replay.h). */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"

int vl_replay_init(vl_replay *r, const vl_trace *trace, vl_allocator *a, vl_stream *streams)
{
    memset(r, 0, sizeof *r);
    r->trace = trace;
    r->alloc = a;
    r->streams = streams;
    size_t slots = trace->nallocs ? trace->nallocs : 1, frees = trace->nfrees ? trace->nfrees : 1;
    r->ptrs = calloc(slots, sizeof *r->ptrs);
    r->alloc_lat = malloc(slots * sizeof *r->alloc_lat);
    r->free_lat = malloc(frees * sizeof *r->free_lat);
    if (!r->ptrs || !r->alloc_lat || !r->free_lat) {
        vl_replay_destroy(r);
        return -1;
    }
    return 0;
}

static void device_sync(vl_allocator *a)
{
    if (a->dev && a->dev->ops->synchronize) a->dev->ops->synchronize(a->dev);
}

void vl_replay_pass_run(vl_replay *r, vl_replay_pass *out)
{
    const vl_trace *t = r->trace;
    vl_allocator *a = r->alloc;
    memset(out, 0, sizeof *out);
    memset(r->ptrs, 0, (t->nallocs ? t->nallocs : 1) * sizeof *r->ptrs);
    vl_alloc_reset_peaks(a);

    uint64_t start = vl_now_ns();
    for (size_t i = 0; i < t->nops; i++) {
        const vl_trace_op *op = &t->ops[i];
        vl_stream s = r->streams[op->stream];
        r->op = i;
        if (op->kind == VL_TRACE_ALLOC) {
            uint64_t t0 = vl_now_ns();
            void *p = vl_allocate(a, op->size, s);
            uint64_t t1 = vl_now_ns();
            r->alloc_lat[out->allocs++] = (double)(t1 - t0);
            r->ptrs[op->slot] = p;
            if (!p && op->size > 0) out->ooms++;
        } else {
            void *p = r->ptrs[op->slot];
            if (!p) {
                if (op->size > 0) out->frees_after_oom++;
                continue;
            }
            uint64_t t0 = vl_now_ns();
            vl_deallocate(a, p, op->size, s);
            uint64_t t1 = vl_now_ns();
            r->free_lat[out->frees++] = (double)(t1 - t0);
            r->ptrs[op->slot] = NULL;
        }
    }
    device_sync(a);
    out->wall_ns = (double)(vl_now_ns() - start);
    vl_alloc_stats_get(a, &out->stats);

    /* What the trace never freed goes back now (untimed), on the stream it came from. */
    for (size_t i = 0; i < t->nops; i++) {
        const vl_trace_op *op = &t->ops[i];
        if (op->kind != VL_TRACE_ALLOC || !r->ptrs[op->slot]) continue;
        vl_deallocate(a, r->ptrs[op->slot], op->size, r->streams[op->stream]);
        r->ptrs[op->slot] = NULL;
    }
    device_sync(a);
    out->alloc_ns = vl_summarize(r->alloc_lat, out->allocs);
    out->free_ns = vl_summarize(r->free_lat, out->frees);
}

void vl_replay_destroy(vl_replay *r)
{
    free(r->ptrs);
    free(r->alloc_lat);
    free(r->free_lat);
    memset(r, 0, sizeof *r);
}
