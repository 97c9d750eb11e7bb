/* Chunk geometry of an expandable segment: where its mapping units start and end.
 *
 * Small chunks waste little at the end of what is mapped; big chunks map fast (a map
 * call costs about the same at any size). So chunk size grows with
 * the offset: one granule g below offset 128g, then offsets [64g * 2^j, 64g * 2^(j+1))
 * for j >= 1 use chunks of g * 2^j (64 chunks per doubling of the offset), up to `max`.
 * The unused tail of the last chunk stays under 1/64 of what lies below it, and growing
 * to N bytes takes O(64 log N) map calls instead of N / g.
 *
 * Invariants: g and max are powers of two times g (max >= g); every region boundary is a
 * multiple of both chunk sizes around it, so no chunk straddles two regions, and every
 * multiple of max is a chunk boundary. Offsets are relative to the segment's base. */
#ifndef VL_CACHING_CHUNKS_H
#define VL_CACHING_CHUNKS_H

#include <stddef.h>

#define VL_CHUNKS_PER_STEP 64

/* The size of the chunk that contains offset off. */
static inline size_t vl_chunk_at(size_t g, size_t max, size_t off)
{
    size_t first = VL_CHUNKS_PER_STEP * g;
    if (off < first) return g;
    size_t steps = off / first; /* >= 1 */
    size_t c = g << (63 - __builtin_clzll((unsigned long long)steps));
    return c < max ? c : max;
}

/* The chunk boundary at or below off / at or above off. */
static inline size_t vl_chunk_floor(size_t g, size_t max, size_t off)
{
    return off - off % vl_chunk_at(g, max, off);
}

static inline size_t vl_chunk_ceil(size_t g, size_t max, size_t off)
{
    size_t c = vl_chunk_at(g, max, off), r = off % c;
    return r ? off - r + c : off;
}

/* Whether off is a chunk boundary. */
static inline int vl_chunk_is_boundary(size_t g, size_t max, size_t off) { return vl_chunk_floor(g, max, off) == off; }

/* The largest power-of-two multiple of g that is <= want (at least g). */
static inline size_t vl_chunk_max_for(size_t g, size_t want)
{
    size_t max = g;
    while (max <= want / 2) max *= 2;
    return max;
}

#endif
