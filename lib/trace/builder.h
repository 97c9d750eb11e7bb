/* Internal to lib/trace: what every trace parser shares. A builder turns address-based
 * alloc/free records into the slot-based operations of a vl_trace (trace.h), keeps the
 * live-address table and the trace's statistics, and formats errors; lines.h splits
 * the input. A parser only reads its syntax and calls these. */
#ifndef VL_TRACE_BUILDER_H
#define VL_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Live-address table entry. Invariant: used == 1 exactly for addresses allocated and
 * not yet freed; open addressing with linear probing and backward-shift deletion, so
 * there are no tombstones and a lookup stops at the first unused entry. */
typedef struct vl_trace_live {
    uint64_t addr, size;
    uint32_t slot, line;
    uint8_t used;
} vl_trace_live;

typedef struct vl_trace_builder {
    vl_trace *t;
    vl_trace_live *live;
    size_t live_cap, live_count; /* live_cap: a power of two, kept >= 2 * live_count */
    uint64_t live_bytes;
    char *err;
    size_t errlen;
} vl_trace_builder;

void vl_tb_init(vl_trace_builder *b, vl_trace *t, vl_trace_format fmt, char *err, size_t errlen);
/* Releases the table; on failure (rc != 0) also empties the trace. Returns rc. */
int vl_tb_finish(vl_trace_builder *b, int rc);

/* An allocation of size bytes at addr on the trace's stream value `stream`.
 * Returns 0, or -1 (error set) when addr is live already or memory runs out. */
int vl_tb_alloc(vl_trace_builder *b, uint64_t addr, uint64_t size, uint64_t stream, uint32_t line);
/* A free of addr. An address that is not live is counted as an unknown free (0). */
int vl_tb_free(vl_trace_builder *b, uint64_t addr, uint64_t stream, uint32_t line);
/* Sets err to "LINE: reason" (line 0: no line) and returns -1. */
int vl_tb_error(vl_trace_builder *b, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
