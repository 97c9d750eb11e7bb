/* What the caching allocator offers beyond lib/alloc.h, for tests and benchmarks:
 * an invariant check and a look at a block's real size. The allocator itself is used
 * through lib/alloc.h as `--alloc caching[:options]` (vl_backend_caching). */
#ifndef VL_CACHING_H
#define VL_CACHING_H

#include <stddef.h>

#include "alloc.h"

/* Checks every internal invariant (block tiling, bins, pointer table, statistics).
 * 0, or -1 with the first violation in err. a must be a caching allocator. */
int vl_caching_check(vl_allocator *a, char *err, size_t errlen);

/* The size of the block behind an allocated pointer (its request rounded), 0 if p is
 * not allocated by a. */
size_t vl_caching_block_size(vl_allocator *a, void *p);

#endif
