/* Implementation of tests/fuzz/trace_check.h: what a parsed trace must satisfy
 * whatever bytes it came from (the contract in lib/trace/trace.h). */
#include "trace_check.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Every operation refers to a known slot and stream; slots are numbered in the order
 * of their allocs; each slot is freed at most once, after its alloc, with its size;
 * the counters agree with the operations. */
static void check_trace(const vl_trace *t)
{
    VL_FUZZ_ASSERT(t->nops == t->nallocs + t->nfrees, "nops %zu != nallocs %zu + nfrees %zu", t->nops, t->nallocs,
                   t->nfrees);
    VL_FUZZ_ASSERT(t->nops == 0 || t->ops != NULL, "nops %zu with no ops", t->nops);
    VL_FUZZ_ASSERT(t->nops <= t->ops_cap || t->ops_cap == 0, "nops %zu > ops_cap %zu", t->nops, t->ops_cap);
    VL_FUZZ_ASSERT(t->nstreams == 0 || t->stream_ids != NULL, "streams without ids");
    VL_FUZZ_ASSERT(t->unknown_frees == 0 || t->unknown_free_lines[0] > 0, "unknown free without a line");

    uint64_t *slot_size = calloc(t->nallocs + 1, sizeof *slot_size);
    uint8_t *slot_state = calloc(t->nallocs + 1, 1); /* 0 unseen, 1 live, 2 freed */
    size_t next_slot = 0, live = 0, nallocs = 0, nfrees = 0;
    uint64_t live_bytes = 0, peak = 0;
    for (size_t i = 0; i < t->nops; i++) {
        const vl_trace_op *op = &t->ops[i];
        VL_FUZZ_ASSERT(op->stream < t->nstreams, "op %zu: stream %u of %u", i, op->stream, t->nstreams);
        VL_FUZZ_ASSERT(op->line >= 1, "op %zu: no source line", i);
        if (op->kind == VL_TRACE_ALLOC) {
            VL_FUZZ_ASSERT(op->slot == next_slot, "op %zu: alloc slot %u, expected %zu", i, op->slot, next_slot);
            VL_FUZZ_ASSERT(op->slot < t->nallocs, "op %zu: slot %u >= nallocs %zu", i, op->slot, t->nallocs);
            slot_size[op->slot] = op->size;
            slot_state[op->slot] = 1;
            next_slot++, nallocs++, live++;
            live_bytes += op->size;
            if (live_bytes > peak) peak = live_bytes;
        } else {
            VL_FUZZ_ASSERT(op->kind == VL_TRACE_FREE, "op %zu: kind %u", i, op->kind);
            VL_FUZZ_ASSERT(op->slot < next_slot, "op %zu: free of slot %u before its alloc", i, op->slot);
            VL_FUZZ_ASSERT(slot_state[op->slot] == 1, "op %zu: slot %u freed twice", i, op->slot);
            VL_FUZZ_ASSERT(op->size == slot_size[op->slot], "op %zu: free size %llu != alloc size %llu", i,
                           (unsigned long long)op->size, (unsigned long long)slot_size[op->slot]);
            slot_state[op->slot] = 2;
            nfrees++, live--;
            live_bytes -= op->size;
        }
    }
    VL_FUZZ_ASSERT(nallocs == t->nallocs && nfrees == t->nfrees, "counters disagree with ops");
    VL_FUZZ_ASSERT(live == t->live_at_end, "live_at_end %zu, ops leave %zu", t->live_at_end, live);
    VL_FUZZ_ASSERT(peak == t->peak_live_bytes, "peak_live_bytes %llu, ops give %llu",
                   (unsigned long long)t->peak_live_bytes, (unsigned long long)peak);
    free(slot_state);
    free(slot_size);
}

void vl_fuzz_trace_one(const uint8_t *data, size_t size, const vl_trace_options *opt)
{
    /* An exact-size heap copy: reading past len is an ASan report. */
    char *buf = malloc(size ? size : 1);
    if (size) memcpy(buf, data, size);
    char err[256];
    vl_trace t;
    memset(&t, 0xA5, sizeof t); /* the parser must set everything itself */
    if (vl_trace_parse_buffer_opts(buf, size, opt, &t, err, sizeof err) == 0) {
        check_trace(&t);
        /* Parsing is deterministic: the same bytes give the same operations. */
        vl_trace again;
        char err2[256];
        VL_FUZZ_ASSERT(vl_trace_parse_buffer_opts(buf, size, opt, &again, err2, sizeof err2) == 0,
                       "second parse failed: %s", err2);
        VL_FUZZ_ASSERT(again.nops == t.nops, "second parse gives %zu ops, first %zu", again.nops, t.nops);
        for (size_t i = 0; i < t.nops; i++) /* field by field: vl_trace_op has padding */
            VL_FUZZ_ASSERT(again.ops[i].size == t.ops[i].size && again.ops[i].slot == t.ops[i].slot &&
                               again.ops[i].stream == t.ops[i].stream && again.ops[i].kind == t.ops[i].kind,
                           "second parse differs at op %zu", i);
        vl_trace_free(&again);
    } else {
        vl_fuzz_check_error_line(err, sizeof err, NULL);
        VL_FUZZ_ASSERT(t.nops == 0, "failed parse left %zu ops", t.nops);
    }
    vl_trace_free(&t);
    vl_trace_free(&t); /* documented harmless after a failure; and after a free it must stay so */
    free(buf);
}
