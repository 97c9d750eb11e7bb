/* segments=expandable's interface between its own files (segments_expandable.c has the
 * design): chunk and span geometry in a range's addresses, the holes' bins, block
 * headers taken before a change, and the calls that cross files:
 *   segments_expandable.c   ranges, mapping and unmapping spans, growth, trim, close
 *   expandable_place.c      where a request goes: the holes placement looks at
 *   expandable_reclaim.c    reclaim: retiring free chunks, and finishing retired ones
 *   expandable_pack.c       pack=1: an idle stream's ranges laid out again
 * Only these files include it. */
#ifndef VL_CACHING_EXPANDABLE_H
#define VL_CACHING_EXPANDABLE_H

#include "caching/allocator.h"
#include "caching/chunks.h"
#include "caching/spans.h"
#include "debug.h"

/* Chunk geometry in addresses of segment s. */
static inline size_t chunk_at(const vl_csegment *s, uintptr_t a)
{
    return vl_chunk_at(s->granule, s->chunk, a - s->base);
}
static inline uintptr_t chunk_floor(const vl_csegment *s, uintptr_t a)
{
    return s->base + vl_chunk_floor(s->granule, s->chunk, a - s->base);
}
static inline uintptr_t chunk_ceil(const vl_csegment *s, uintptr_t a)
{
    return s->base + vl_chunk_ceil(s->granule, s->chunk, a - s->base);
}

/* Span geometry (spans.h): where the map calls that made s's mapped memory start and end. */
static inline size_t granule_of(const vl_csegment *s, uintptr_t a) { return (a - s->base) / s->granule; }
static inline uintptr_t span_floor(const vl_csegment *s, uintptr_t a)
{
    return s->base + vl_spans_floor(&s->spans, s->granule, a - s->base);
}
static inline uintptr_t span_ceil(const vl_csegment *s, uintptr_t a)
{
    return s->base + vl_spans_ceil(&s->spans, s->granule, a - s->base);
}
static inline void span_mark(vl_csegment *s, uintptr_t a, size_t size, int on)
{
    vl_assert_internal(a >= s->base && a + size <= s->base + s->size && size % s->granule == 0);
    vl_spans_mark(&s->spans, granule_of(s, a), size / s->granule, on);
}

/* The holes (UNMAPPED blocks) of a range's pool, in their bins. */
static inline void unmapped_add(vl_csegment *s, vl_cblock *b)
{
    vl_assert_internal(b->seg == s && chunk_floor(s, b->addr) == b->addr && chunk_floor(s, b->addr + b->size) ==
                                                                                 b->addr + b->size);
    b->state = VL_CB_UNMAPPED;
    vl_bins_insert(s->pool->holes, b);
}
static inline void unmapped_remove(vl_csegment *s, vl_cblock *b)
{
    vl_assert_internal(b->state == VL_CB_UNMAPPED && b->seg == s);
    vl_bins_remove(s->pool->holes, b);
}

/* n headers (n <= 3) into out[], or 0 with none taken when out of host memory (recorded). */
static inline int take_headers(vl_caching *c, vl_cblock **out, int n)
{
    for (int i = 0; i < n; i++) {
        out[i] = vl_caching_new_block(c);
        if (out[i]) continue;
        while (i-- > 0) vl_slab_put(&c->blocks, out[i]);
        return 0;
    }
    return 1;
}
static inline void put_headers(vl_caching *c, vl_cblock **h, int n)
{
    for (int i = 0; i < n; i++)
        if (h[i]) vl_slab_put(&c->blocks, h[i]);
}

/* segments_expandable.c */
/* Maps [lo, lo+bytes) of s (chunk boundaries) span by span, lent memory first (lend may
 * be NULL), then kept, then fresh; VL_DEV_OK, or VL_DEV_OOM / VL_DEV_ERROR with nothing
 * mapped. */
int vl_expandable_map_range(vl_caching *c, vl_csegment *s, uintptr_t lo, size_t bytes, vl_clend *lend);
/* A new range for pool p, large enough for `rounded`; NULL with *rc set. */
vl_csegment *vl_expandable_open_range(vl_caching *c, vl_cpool *p, size_t rounded, int *rc);

/* expandable_place.c: where a request goes in an expandable range: the unmapped block u
 * is cut so that [lo, lo+bytes) gets mapped. */
typedef struct vl_cplacement {
    vl_cblock *u;
    uintptr_t lo;
    size_t bytes;
} vl_cplacement;
/* A placement for `rounded` in pool p, opening a further range when none fits; 0 with
 * *rc set when there is none. */
int vl_expandable_place(vl_caching *c, vl_cpool *p, size_t rounded, vl_cplacement *best, int *rc);

/* expandable_reclaim.c */
/* Retires free chunks of st's pools into *list (largest free blocks, those next to a
 * hole first) until *released reaches bytes, leaving keep1 and keep2 alone. */
void vl_expandable_reclaim_stream(vl_caching *c, vl_cstream *st, size_t bytes, const vl_cblock *keep1,
                                  const vl_cblock *keep2, size_t *released, vl_cblock **list);
/* Memory pressure: waits for the device, then unmaps up to `bytes` of any stream's free
 * chunks but keep1/keep2; returns the bytes given back. */
size_t vl_expandable_reclaim_under_pressure(vl_caching *c, size_t bytes, const vl_cblock *keep1,
                                            const vl_cblock *keep2);
/* Turns the whole spans inside the FREE block b (at most `limit` bytes from its high end)
 * into a RETIRING block pushed on *list; NULL when there are none or no headers. */
vl_cblock *vl_expandable_retire_free_block(vl_caching *c, vl_csegment *s, vl_cblock *b, size_t limit,
                                           size_t *released, vl_cblock **list, vl_cblock **right_out);

#endif
