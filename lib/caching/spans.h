/* Mapping spans of an expandable range: which chunks one map call covers.
 *
 * A map call costs the driver about the same whatever its size, so growth maps the
 * chunks a request needs with one call (a span, at most cfg.span bytes) instead of one
 * call per chunk, which would dominate a cold pass (docs/caching-measured.md).
 * cuMemUnmap takes exactly what one map made, so a span is unmapped whole:
 * reclaim gives back only spans that lie entirely inside a free block.
 *
 * Representation: two bitmaps over the range's granules (bit g = the granule at
 * base + g * granule): first has the first granule of every live span set, last its last
 * granule. Both are bounded scans (a word covers 64 granules), only over mapped memory.
 *
 * Invariants: the live spans tile the mapped granules exactly (a granule is mapped iff
 * it lies in one span); span boundaries are chunk boundaries (chunks.h); a bit is set
 * only in the granules of a live span (first and last of it). */
#ifndef VL_CACHING_SPANS_H
#define VL_CACHING_SPANS_H

#include <stddef.h>
#include <stdint.h>

typedef struct vl_spans {
    uint64_t *first, *last;
    size_t granules;
} vl_spans;

static inline int vl_spans_bit(const uint64_t *bits, size_t g) { return (int)(bits[g / 64] >> (g % 64) & 1); }

static inline void vl_spans_set(uint64_t *bits, size_t g, int on)
{
    if (on) bits[g / 64] |= UINT64_C(1) << (g % 64);
    else bits[g / 64] &= ~(UINT64_C(1) << (g % 64));
}

/* The lowest set bit at or above g (some bit must be set there). */
static inline size_t vl_spans_next(const uint64_t *bits, size_t g)
{
    size_t w = g / 64;
    uint64_t word = bits[w] & (~UINT64_C(0) << (g % 64));
    while (!word) word = bits[++w];
    return w * 64 + (size_t)__builtin_ctzll(word);
}

/* The highest set bit at or below g (some bit must be set there). */
static inline size_t vl_spans_prev(const uint64_t *bits, size_t g)
{
    size_t w = g / 64;
    uint64_t word = bits[w] & (~UINT64_C(0) >> (63 - g % 64));
    while (!word) word = bits[--w];
    return w * 64 + 63 - (size_t)__builtin_clzll(word);
}

/* Records (on = 1) or forgets (on = 0) the span of `count` granules at granule g. */
static inline void vl_spans_mark(vl_spans *sp, size_t g, size_t count, int on)
{
    vl_spans_set(sp->first, g, on);
    vl_spans_set(sp->last, g + count - 1, on);
}

/* Granules of the span that starts at granule g. */
static inline size_t vl_spans_length(const vl_spans *sp, size_t g) { return vl_spans_next(sp->last, g) - g + 1; }

/* Whether granule offset g (0..granules) is a span boundary: a span starts or ends there. */
static inline int vl_spans_boundary(const vl_spans *sp, size_t g)
{
    return (g < sp->granules && vl_spans_bit(sp->first, g)) || (g > 0 && vl_spans_bit(sp->last, g - 1));
}

/* For a byte offset off whose granule is mapped (or that is a boundary): the span
 * boundary at or below it, and the one at or above it, as byte offsets. */
static inline size_t vl_spans_floor(const vl_spans *sp, size_t granule, size_t off)
{
    size_t g = off / granule;
    if (off % granule == 0 && vl_spans_boundary(sp, g)) return off;
    return vl_spans_prev(sp->first, g) * granule;
}

static inline size_t vl_spans_ceil(const vl_spans *sp, size_t granule, size_t off)
{
    size_t g = off / granule;
    if (off % granule == 0 && vl_spans_boundary(sp, g)) return off;
    return (vl_spans_next(sp->last, g) + 1) * granule;
}

#endif
