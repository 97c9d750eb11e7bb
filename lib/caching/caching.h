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

/* Why the last failed call of a caching allocator failed, other than an OOM: 0 when
 * nothing failed since open, else one of these, with one line in buf. A failed alloc
 * returns NULL (counted in stats.ooms), a failed record_use returns VL_FAILED; the
 * allocator stays consistent and usable either way. */
enum { VL_CACHING_ERR_HOST_MEMORY = 1, VL_CACHING_ERR_DEVICE = 2 };
int vl_caching_last_error(vl_allocator *a, char *buf, size_t buflen);

/* The size of the block behind an allocated pointer (its request rounded), 0 if p is
 * not allocated by a. */
size_t vl_caching_block_size(vl_allocator *a, void *p);

/* Requests served by taking the stream's parked block back (lib/caching/park.h): the
 * cache-hit fast path, since open. */
unsigned long long vl_caching_park_hits(vl_allocator *a);

/* The report of the allocator's last OOM (lib/oom_report.h), taken from its state at
 * the moment of the OOM, after its release-and-retry: 1 with *out filled, 0 when it has
 * had no OOM since open. Taken at every OOM whatever the program asks (it costs a walk
 * of the segments, on the OOM path only). vl_alloc_oom_report asks the same of a
 * request now. */
int vl_caching_last_oom_report(vl_allocator *a, vl_oom_report *out);

#endif
