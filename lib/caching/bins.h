/* Segregated free lists with bitmaps (TLSF-style) for one pool: O(1) insert, remove,
 * and "smallest non-empty class above this one".
 *
 * Size classes, on units of 512 B (u = size / 512): u < 64 has a class of its own
 * (exact sizes up to 32 KiB); above, each power-of-two range [2^k, 2^(k+1)) is cut into
 * 32 classes, so a class spans at most 1/32 (3.1%) of its sizes. Every block in a class
 * above the request's class is big enough; the request's own class may hold blocks
 * that are too small, and the caller scans it.
 *
 * Invariants: bit i of words[] is set iff heads[i] is non-empty; bit w of summary is
 * set iff words[w] != 0; a block is in exactly the list of its size's class, linked
 * through bin_prev/bin_next, iff its state is FREE. */
#ifndef VL_CACHING_BINS_H
#define VL_CACHING_BINS_H

#include <stddef.h>
#include <stdint.h>

#include "caching/block.h"

#define VL_BIN_COUNT 1536 /* classes for sizes up to 2^51 B; 24 bitmap words */
#define VL_BIN_WORDS (VL_BIN_COUNT / 64)

typedef struct vl_bins {
    uint64_t summary;
    uint64_t words[VL_BIN_WORDS];
    vl_cblock *heads[VL_BIN_COUNT];
    size_t free_blocks; /* blocks in all lists */
    size_t free_bytes;  /* their sizes */
} vl_bins;

static inline unsigned vl_bin_index(size_t size)
{
    uint64_t u = size >> 9;
    if (u < 64) return (unsigned)u;
    unsigned shift = (unsigned)(63 - __builtin_clzll(u)) - 5;
    return shift * 32 + (unsigned)(u >> shift);
}

static inline void vl_bins_insert(vl_bins *b, vl_cblock *blk)
{
    unsigned i = vl_bin_index(blk->size);
    vl_cblock *head = b->heads[i];
    blk->bin = i;
    blk->bin_prev = NULL;
    blk->bin_next = head;
    if (head) head->bin_prev = blk;
    b->heads[i] = blk;
    b->words[i >> 6] |= UINT64_C(1) << (i & 63);
    b->summary |= UINT64_C(1) << (i >> 6);
    b->free_blocks++;
    b->free_bytes += blk->size;
}

static inline void vl_bins_remove(vl_bins *b, vl_cblock *blk)
{
    unsigned i = blk->bin;
    if (blk->bin_prev) blk->bin_prev->bin_next = blk->bin_next;
    else b->heads[i] = blk->bin_next;
    if (blk->bin_next) blk->bin_next->bin_prev = blk->bin_prev;
    if (!b->heads[i]) {
        b->words[i >> 6] &= ~(UINT64_C(1) << (i & 63));
        if (!b->words[i >> 6]) b->summary &= ~(UINT64_C(1) << (i >> 6));
    }
    blk->bin_prev = blk->bin_next = NULL;
    b->free_blocks--;
    b->free_bytes -= blk->size;
}

/* The lowest non-empty class > i, or -1. */
static inline int vl_bins_next_nonempty(const vl_bins *b, unsigned i)
{
    unsigned j = i + 1;
    if (j >= VL_BIN_COUNT) return -1;
    unsigned w = j >> 6;
    uint64_t m = b->words[w] & (~UINT64_C(0) << (j & 63));
    if (m) return (int)(w * 64 + (unsigned)__builtin_ctzll(m));
    if (w + 1 >= VL_BIN_WORDS) return -1;
    uint64_t s = b->summary & (~UINT64_C(0) << (w + 1));
    if (!s) return -1;
    w = (unsigned)__builtin_ctzll(s);
    return (int)(w * 64 + (unsigned)__builtin_ctzll(b->words[w]));
}

/* The highest non-empty class < i, or -1. */
static inline int vl_bins_prev_nonempty(const vl_bins *b, unsigned i)
{
    if (i == 0) return -1;
    unsigned j = i - 1;
    unsigned w = j >> 6;
    uint64_t m = b->words[w] & (~UINT64_C(0) >> (63 - (j & 63)));
    if (m) return (int)(w * 64 + 63 - (unsigned)__builtin_clzll(m));
    uint64_t s = w ? b->summary & (~UINT64_C(0) >> (64 - w)) : 0;
    if (!s) return -1;
    w = 63 - (unsigned)__builtin_clzll(s);
    return (int)(w * 64 + 63 - (unsigned)__builtin_clzll(b->words[w]));
}

/* The largest free block in the bins (0 if none); scans only the highest class. */
size_t vl_bins_largest(const vl_bins *b);

#endif
