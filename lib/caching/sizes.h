/* Size policy of the caching allocator, as pure functions: request rounding, which pool
 * a request goes to, how big a classic segment is, and when a block is split. The
 * constants are PyTorch's (c10/cuda/CUDACachingAllocator.cpp), so `segments=classic`
 * reproduces its behaviour and its failure modes. */
#ifndef VL_CACHING_SIZES_H
#define VL_CACHING_SIZES_H

#include <stddef.h>
#include <stdint.h>

#define VL_KiB ((size_t)1 << 10)
#define VL_MiB ((size_t)1 << 20)

#define VL_CACHING_MIN_BLOCK ((size_t)512)      /* every block size is a multiple of this */
#define VL_CACHING_SMALL_SIZE VL_MiB            /* requests <= this go to the small pool */
#define VL_CACHING_SMALL_SEGMENT (2 * VL_MiB)   /* classic small-pool segment */
#define VL_CACHING_LARGE_SEGMENT (20 * VL_MiB)  /* classic segment for requests < MIN_LARGE_ALLOC */
#define VL_CACHING_MIN_LARGE_ALLOC (10 * VL_MiB)
#define VL_CACHING_ROUND_LARGE (2 * VL_MiB)     /* larger classic segments round up to this */
#define VL_CACHING_LARGE_BUFFER (20 * VL_MiB)   /* oversize blocks serve requests < size + this */
/* Largest request the allocator takes (its size classes end there): 2 PiB. */
#define VL_CACHING_MAX_REQUEST ((size_t)1 << 51)

/* Rounds a request to a block size (a multiple of 512, at least 512). With divisions > 1
 * (a power of two, PyTorch's roundup_power2_divisions) sizes above 512 B are first
 * rounded up to the next of `divisions` equal steps between two powers of two; unlike
 * PyTorch, a step below 512 B is then rounded to 512 B too, keeping every size a
 * multiple of 512. Requires size <= VL_CACHING_MAX_REQUEST. */
size_t vl_caching_round_divisions(size_t size, unsigned divisions);
static inline size_t vl_caching_round_size(size_t size, unsigned divisions)
{
    if (divisions > 1) return vl_caching_round_divisions(size, divisions);
    if (size < VL_CACHING_MIN_BLOCK) return VL_CACHING_MIN_BLOCK;
    return (size + VL_CACHING_MIN_BLOCK - 1) & ~(VL_CACHING_MIN_BLOCK - 1);
}

static inline int vl_caching_is_small(size_t rounded) { return rounded <= VL_CACHING_SMALL_SIZE; }

/* Bytes of one classic (cudaMalloc-backed) segment for a rounded request. */
size_t vl_caching_classic_segment_size(size_t rounded);

/* Whether taking `rounded` bytes from a free block of block_size leaves a remainder that
 * becomes a free block of its own. Small pool and expandable segments split any
 * remainder >= 512 B; classic large blocks only when the remainder is > 1 MiB and the
 * request is below max_split (0 = unlimited). */
static inline int vl_caching_should_split(size_t block_size, size_t rounded, int small_pool, int expandable,
                                          size_t max_split)
{
    size_t remaining = block_size - rounded;
    if (small_pool || expandable) return remaining >= VL_CACHING_MIN_BLOCK;
    if (max_split != 0 && rounded >= max_split) return 0;
    return remaining > VL_CACHING_SMALL_SIZE;
}

/* Whether a cached free block may serve a request under max_split (classic segments):
 * blocks >= max_split are kept for requests >= max_split, and then only when they
 * waste less than VL_CACHING_LARGE_BUFFER. */
int vl_caching_oversize_ok(size_t block_size, size_t rounded, size_t max_split);

#endif
