/* Static layouts of a trace, found offline: "how little could an allocator reserve if it
 * never moved a block and never mapped or unmapped anything once warm?"
 *
 * A static layout gives every block of the trace one offset for its whole life, such that
 * two blocks live at the same time never overlap. An allocator that makes no device map
 * or unmap calls in steady state keeps every chunk it ever used mapped, so what it
 * reserves is at least the chunks some block of its layout touches (the footprint here).
 * The heuristics below know every block's lifetime in advance, which no online allocator
 * does, and lay out all streams in one address space (the allocator keeps a pool per
 * stream), so they have more freedom than any allocator. They are heuristics, not the
 * optimum (that problem, dynamic storage allocation, is NP-hard): the best footprint
 * found is what SOME static layout achieves, an upper bound on the best one; the trivial
 * lower bound is the peak of live bytes.
 *
 * Time is the operation index: a block lives from its ALLOC to its FREE (to the end of
 * the trace if never freed), so a block freed at operation i and one allocated after i
 * may share memory. Sizes are rounded up to `align` (the caching allocator's 512 B).
 *
 * Heuristics (the offline greedy of TFLite's and others' memory planners):
 *   size-best   blocks by size, largest first; each at the smallest gap between the
 *               blocks already placed that overlap it in time, else above them all
 *   size-first  the same order, each at the lowest gap that holds it
 *   area-best   blocks by size x lifetime, largest first; smallest gap
 *   size-first-late  as size-first, but of blocks of one size the one freed last goes
 *               first (the order among equal sizes decides much on periods with many
 *               blocks of one size, such as a ViT's) */
#ifndef VL_TRACE_LAYOUT_H
#define VL_TRACE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

typedef enum vl_layout_heuristic {
    VL_LAYOUT_SIZE_BEST = 0,
    VL_LAYOUT_SIZE_FIRST,
    VL_LAYOUT_AREA_BEST,
    VL_LAYOUT_SIZE_FIRST_LATE,
    VL_LAYOUT_NHEURISTICS
} vl_layout_heuristic;

const char *vl_layout_heuristic_name(vl_layout_heuristic h);

typedef struct vl_layout_result {
    uint64_t peak_bytes;      /* max over time of the live bytes, sizes rounded to align */
    uint64_t extent_bytes;    /* the highest end of any block */
    uint64_t footprint_bytes; /* chunks touched by any block, times the chunk size */
} vl_layout_result;

/* Which blocks a layout covers: those whose requested size is in [min, max). A pool of
 * their own for some sizes is laid out by covering those sizes alone. */
typedef struct vl_layout_sizes {
    uint64_t min, max;
} vl_layout_sizes;
#define VL_LAYOUT_ALL_SIZES ((vl_layout_sizes){0, UINT64_MAX})

/* Lays out the blocks of t that `sizes` covers with heuristic h: offsets[slot] for each
 * of t->nallocs slots (others left as they were; offsets may be NULL when only the result
 * is wanted). peak_bytes counts the covered blocks only. align and chunk: powers of two,
 * chunk >= align. Returns 0, or -1 with one line in err (bad arguments, out of host
 * memory, offsets past 2^64). */
int vl_trace_layout(const vl_trace *t, vl_layout_heuristic h, vl_layout_sizes sizes, uint64_t align, uint64_t chunk,
                    uint64_t *offsets, vl_layout_result *out, char *err, size_t errlen);

/* A block of a periodic program, in one period [0, period) of its operations: live over
 * [t0, t1), where t1 past the period means it is freed in the next period, at t1 -
 * period (so it also lives over [0, t1 - period) there, in the same place). */
typedef struct vl_layout_block {
    uint64_t size;
    uint64_t t0, t1; /* t0 < period, t0 < t1 <= t0 + period */
} vl_layout_block;

/* Lays out blocks[0..n) of one period so that the layout holds for every period (a
 * block's wrapped part overlaps no block live at that time of the period). Same
 * heuristics and results as vl_trace_layout; peak_bytes counts wrapped parts. Returns 0,
 * or -1 with one line in err (bad arguments, a block not within one period, out of
 * host memory). */
int vl_layout_periodic(const vl_layout_block *blocks, size_t n, uint64_t period, vl_layout_heuristic h,
                       uint64_t align, uint64_t chunk, uint64_t *offsets, vl_layout_result *out, char *err,
                       size_t errlen);
/* Whether two blocks of one period live at the same time at some point of the period. */
int vl_layout_periodic_conflict(const vl_layout_block *a, const vl_layout_block *b, uint64_t period);

/* Checks a layout of the blocks `sizes` covers: offsets aligned, and no two of them live
 * at the same time overlap. Returns 0, or -1 with the first conflict in err. Independent
 * of the heuristics (a sweep over the operations keeping the live blocks ordered by
 * offset). */
int vl_trace_layout_check(const vl_trace *t, vl_layout_sizes sizes, const uint64_t *offsets, uint64_t align,
                          char *err, size_t errlen);

#endif
