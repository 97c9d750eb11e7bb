/* The address-to-slot bookkeeping every trace parser shares (see builder.h). */
#include "builder.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A trace op count or slot must fit the 32-bit fields of vl_trace_op. */
#define MAX_OPS ((size_t)UINT32_MAX)

void vl_tb_init(vl_trace_builder *b, vl_trace *t, vl_trace_format fmt, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->format = fmt;
    memset(b, 0, sizeof *b);
    b->t = t;
    b->err = err;
    b->errlen = errlen;
    if (err && errlen) err[0] = '\0';
}

int vl_tb_finish(vl_trace_builder *b, int rc)
{
    b->t->live_at_end = b->live_count;
    free(b->live);
    b->live = NULL;
    b->live_cap = b->live_count = 0;
    if (rc != 0) {
        vl_trace_format fmt = b->t->format;
        vl_trace_free(b->t);
        b->t->format = fmt;
    }
    return rc;
}

int vl_tb_error(vl_trace_builder *b, uint32_t line, const char *fmt, ...)
{
    if (!b->err || b->errlen == 0) return -1;
    size_t used = 0;
    if (line) {
        int n = snprintf(b->err, b->errlen, "%u: ", line);
        used = n > 0 && (size_t)n < b->errlen ? (size_t)n : 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err + used, b->errlen - used, fmt, ap);
    va_end(ap);
    return -1;
}

/* splitmix64's finaliser: addresses share low zero bits, so they must be mixed. */
static size_t hash_addr(uint64_t a, size_t mask)
{
    a ^= a >> 30;
    a *= UINT64_C(0xbf58476d1ce4e5b9);
    a ^= a >> 27;
    a *= UINT64_C(0x94d049bb133111eb);
    a ^= a >> 31;
    return (size_t)a & mask;
}

static vl_trace_live *find(vl_trace_builder *b, uint64_t addr)
{
    if (b->live_cap == 0) return NULL;
    size_t mask = b->live_cap - 1;
    for (size_t i = hash_addr(addr, mask);; i = (i + 1) & mask) {
        if (!b->live[i].used) return NULL;
        if (b->live[i].addr == addr) return &b->live[i];
    }
}

static void insert(vl_trace_builder *b, const vl_trace_live *e)
{
    size_t mask = b->live_cap - 1, i = hash_addr(e->addr, mask);
    while (b->live[i].used) i = (i + 1) & mask;
    b->live[i] = *e;
    b->live_count++;
}

/* Backward-shift deletion keeps every probe chain unbroken without tombstones. */
static void erase(vl_trace_builder *b, vl_trace_live *e)
{
    size_t mask = b->live_cap - 1, hole = (size_t)(e - b->live);
    b->live[hole].used = 0;
    b->live_count--;
    for (size_t j = (hole + 1) & mask; b->live[j].used; j = (j + 1) & mask) {
        size_t home = hash_addr(b->live[j].addr, mask);
        /* Entry j may move into the hole unless its home lies cyclically in (hole, j]. */
        int home_after_hole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (home_after_hole) continue;
        b->live[hole] = b->live[j];
        b->live[j].used = 0;
        hole = j;
    }
}

static int grow_table(vl_trace_builder *b)
{
    size_t cap = b->live_cap ? b->live_cap * 2 : 1024;
    vl_trace_live *old = b->live;
    size_t old_cap = b->live_cap;
    b->live = calloc(cap, sizeof *b->live);
    if (!b->live) {
        b->live = old;
        return -1;
    }
    b->live_cap = cap;
    b->live_count = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used) insert(b, &old[i]);
    free(old);
    return 0;
}

static int stream_index(vl_trace_builder *b, uint64_t stream, uint32_t *out)
{
    vl_trace *t = b->t;
    /* Traces use a handful of streams: a linear scan beats a table here. */
    for (uint32_t i = 0; i < t->nstreams; i++)
        if (t->stream_ids[i] == stream) {
            *out = i;
            return 0;
        }
    if (t->nstreams == t->streams_cap) {
        uint32_t cap = t->streams_cap ? t->streams_cap * 2 : 8;
        if (cap > 65536) return -1; /* no real trace has that many streams */
        uint64_t *ids = realloc(t->stream_ids, cap * sizeof *ids);
        if (!ids) return -1;
        t->stream_ids = ids;
        t->streams_cap = cap;
    }
    t->stream_ids[t->nstreams] = stream;
    *out = t->nstreams++;
    return 0;
}

static int push_op(vl_trace_builder *b, const vl_trace_op *op)
{
    vl_trace *t = b->t;
    if (t->nops == t->ops_cap) {
        if (t->ops_cap >= MAX_OPS) return -1;
        size_t cap = t->ops_cap ? t->ops_cap * 2 : 1024;
        if (cap > MAX_OPS) cap = MAX_OPS;
        vl_trace_op *ops = realloc(t->ops, cap * sizeof *ops);
        if (!ops) return -1;
        t->ops = ops;
        t->ops_cap = cap;
    }
    t->ops[t->nops++] = *op;
    return 0;
}

int vl_tb_alloc(vl_trace_builder *b, uint64_t addr, uint64_t size, uint64_t stream, uint32_t line)
{
    vl_trace *t = b->t;
    const vl_trace_live *prev = find(b, addr);
    if (prev)
        return vl_tb_error(b, line, "address 0x%llx allocated again while live (allocated on line %u)",
                           (unsigned long long)addr, prev->line);
    if (size > (UINT64_C(1) << 62)) return vl_tb_error(b, line, "size %llu is not plausible", (unsigned long long)size);
    if (t->nallocs >= MAX_OPS) return vl_tb_error(b, line, "too many allocations (at most %zu)", MAX_OPS);
    /* The sums are uint64_t: a trace past 2^64 live or allocated bytes would wrap into
     * a small, wrong peak. */
    if (size > UINT64_MAX - b->live_bytes)
        return vl_tb_error(b, line, "live bytes pass 2^64 (%llu live + %llu)", (unsigned long long)b->live_bytes,
                           (unsigned long long)size);
    if (size > UINT64_MAX - t->total_alloc_bytes)
        return vl_tb_error(b, line, "allocated bytes in total pass 2^64");
    if ((b->live_count + 1) * 2 > b->live_cap && grow_table(b) != 0)
        return vl_tb_error(b, line, "out of memory");
    vl_trace_op op = {.size = size, .slot = (uint32_t)t->nallocs, .line = line, .kind = VL_TRACE_ALLOC};
    if (stream_index(b, stream, &op.stream) != 0) return vl_tb_error(b, line, "too many streams");
    if (push_op(b, &op) != 0) return vl_tb_error(b, line, "out of memory for operations");
    insert(b, &(vl_trace_live){.addr = addr, .size = size, .slot = op.slot, .line = line, .used = 1});
    t->nallocs++;
    t->total_alloc_bytes += size;
    b->live_bytes += size;
    if (b->live_bytes > t->peak_live_bytes) t->peak_live_bytes = b->live_bytes;
    return 0;
}

int vl_tb_free(vl_trace_builder *b, uint64_t addr, uint64_t stream, uint32_t line)
{
    vl_trace *t = b->t;
    vl_trace_live *e = find(b, addr);
    if (!e) {
        if (t->unknown_frees < VL_TRACE_FIRST_UNKNOWN) t->unknown_free_lines[t->unknown_frees] = line;
        t->unknown_frees++;
        return 0;
    }
    vl_trace_op op = {.size = e->size, .slot = e->slot, .line = line, .kind = VL_TRACE_FREE};
    if (stream_index(b, stream, &op.stream) != 0) return vl_tb_error(b, line, "too many streams");
    if (push_op(b, &op) != 0) return vl_tb_error(b, line, "out of memory for operations");
    b->live_bytes -= e->size;
    erase(b, e);
    t->nfrees++;
    return 0;
}
