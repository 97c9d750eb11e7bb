/* Segregated free lists with bitmaps (TLSF-style) for one pool: O(1) "smallest
 * non-empty class above this one", and inside a class an ordered set, so that best fit
 * (the smallest block >= the request, lowest address among equal sizes: PyTorch's
 * order) costs O(log n) however many blocks a class caches.
 *
 * Size classes, on units of 512 B (u = size / 512): u < 64 has a class of its own
 * (exact sizes up to 32 KiB); above, each power-of-two range [2^k, 2^(k+1)) is cut into
 * 32 classes, so a class spans at most 1/32 (3.1%) of its sizes. Every block in a class
 * above the request's class is big enough; in the request's own class the ordered set
 * finds the smallest one that is.
 *
 * Each class is a treap keyed by (size, addr) whose priorities are a hash of the
 * address (no storage: a block header stays one cache line); expected depth O(log n),
 * with no per-node balance data and no recursion.
 *
 * Invariants: bit i of words[] is set iff roots[i] is non-empty; bit w of summary is
 * set iff words[w] != 0; a block is in exactly the treap of its size's class, linked
 * through bin_left/bin_right, iff its state is FREE; in every treap keys increase
 * in-order and no child has a higher priority than its parent. A FREE block's size and
 * address do not change while it is in a treap (callers remove, change, insert). */
#ifndef VL_CACHING_BINS_H
#define VL_CACHING_BINS_H

#include <stddef.h>
#include <stdint.h>

#include "caching/block.h"

#define VL_BIN_COUNT 1536 /* classes for sizes up to 2^51 B; 24 bitmap words */
#define VL_BIN_WORDS (VL_BIN_COUNT / 64)

typedef struct vl_bins {
    uint64_t summary;
    uint64_t version;   /* bumped by every insertion and removal: a best fit found at one
                           version holds while it stays (park.h's repeated pairs); next to
                           summary, in the line a parked hit reads (fast.h) */
    size_t free_blocks; /* blocks in all classes */
    size_t free_bytes;  /* their sizes */
    uint64_t words[VL_BIN_WORDS];
    vl_cblock *roots[VL_BIN_COUNT];
} vl_bins;

static inline unsigned vl_bin_index(size_t size)
{
    uint64_t u = size >> 9;
    if (u < 64) return (unsigned)u;
    unsigned shift = (unsigned)(63 - __builtin_clzll(u)) - 5;
    return shift * 32 + (unsigned)(u >> shift);
}

/* Treap order and priority. */
static inline int vl_bin_key_less(size_t size_a, uintptr_t addr_a, const vl_cblock *b)
{
    return size_a < b->size || (size_a == b->size && addr_a < b->addr);
}
static inline uint32_t vl_bin_priority(const vl_cblock *b)
{
    return (uint32_t)(((uint64_t)b->addr * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

static inline void vl_bins_insert(vl_bins *b, vl_cblock *blk)
{
    unsigned i = vl_bin_index(blk->size);
    uint32_t prio = vl_bin_priority(blk);
    /* Down to where blk's priority belongs, then split that subtree around blk's key. */
    vl_cblock **link = &b->roots[i];
    while (*link && vl_bin_priority(*link) >= prio)
        link = vl_bin_key_less(blk->size, blk->addr, *link) ? &(*link)->bin_left : &(*link)->bin_right;
    vl_cblock *t = *link, **lo = &blk->bin_left, **hi = &blk->bin_right;
    while (t) {
        if (vl_bin_key_less(t->size, t->addr, blk)) {
            *lo = t;
            lo = &t->bin_right;
            t = t->bin_right;
        } else {
            *hi = t;
            hi = &t->bin_left;
            t = t->bin_left;
        }
    }
    *lo = *hi = NULL;
    *link = blk;
    blk->bin = (uint16_t)i;
    b->words[i >> 6] |= UINT64_C(1) << (i & 63);
    b->summary |= UINT64_C(1) << (i >> 6);
    b->free_blocks++;
    b->version++;
    b->free_bytes += blk->size;
}

static inline void vl_bins_remove(vl_bins *b, vl_cblock *blk)
{
    unsigned i = blk->bin;
    vl_cblock **link = &b->roots[i];
    while (*link != blk)
        link = vl_bin_key_less(blk->size, blk->addr, *link) ? &(*link)->bin_left : &(*link)->bin_right;
    /* Replace blk by the merge of its subtrees (all of the left one's keys are smaller). */
    vl_cblock *l = blk->bin_left, *r = blk->bin_right;
    while (l && r) {
        if (vl_bin_priority(l) >= vl_bin_priority(r)) {
            *link = l;
            link = &l->bin_right;
            l = l->bin_right;
        } else {
            *link = r;
            link = &r->bin_left;
            r = r->bin_left;
        }
    }
    *link = l ? l : r;
    if (!b->roots[i]) {
        b->words[i >> 6] &= ~(UINT64_C(1) << (i & 63));
        if (!b->words[i >> 6]) b->summary &= ~(UINT64_C(1) << (i >> 6));
    }
    blk->bin_left = blk->bin_right = NULL;
    b->free_blocks--;
    b->version++;
    b->free_bytes -= blk->size;
}

/* Class i's smallest block of at least `size` bytes (lowest address among equal sizes),
 * or NULL. */
static inline vl_cblock *vl_bins_fit_in_class(const vl_bins *b, unsigned i, size_t size)
{
    vl_cblock *best = NULL;
    for (vl_cblock *t = b->roots[i]; t;) {
        if (t->size >= size) {
            best = t;
            t = t->bin_left;
        } else {
            t = t->bin_right;
        }
    }
    return best;
}

/* Class i's smallest / largest block (NULL when empty). */
static inline vl_cblock *vl_bins_first(const vl_bins *b, unsigned i)
{
    vl_cblock *t = b->roots[i];
    while (t && t->bin_left) t = t->bin_left;
    return t;
}
static inline vl_cblock *vl_bins_last(const vl_bins *b, unsigned i)
{
    vl_cblock *t = b->roots[i];
    while (t && t->bin_right) t = t->bin_right;
    return t;
}

/* Class i's largest block whose key is below (size, addr), or NULL: walks a class from
 * its largest block down while blocks come and go. */
static inline vl_cblock *vl_bins_before(const vl_bins *b, unsigned i, size_t size, uintptr_t addr)
{
    vl_cblock *best = NULL;
    for (vl_cblock *t = b->roots[i]; t;) {
        if (t->size < size || (t->size == size && t->addr < addr)) {
            best = t;
            t = t->bin_right;
        } else {
            t = t->bin_left;
        }
    }
    return best;
}

/* Class i's smallest block whose key is above (size, addr), or NULL. */
static inline vl_cblock *vl_bins_after(const vl_bins *b, unsigned i, size_t size, uintptr_t addr)
{
    vl_cblock *best = NULL;
    for (vl_cblock *t = b->roots[i]; t;) {
        if (t->size > size || (t->size == size && t->addr > addr)) {
            best = t;
            t = t->bin_left;
        } else {
            t = t->bin_right;
        }
    }
    return best;
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

/* The largest free block in the bins (0 if none). */
size_t vl_bins_largest(const vl_bins *b);

#endif
