/* What the caching allocator offers beyond lib/alloc.h, for tests and benchmarks:
 * an invariant check and a look at a block's real size. The allocator itself is used
 * through lib/alloc.h as `--alloc caching[:options]` (vl_backend_caching). */
#ifndef VL_CACHING_H
#define VL_CACHING_H

#include <stddef.h>
#include <stdint.h>

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

/* What plan=1 did (caching/plan.h): 0 with *out filled, -1 when a is not a caching
 * allocator with plan=1. */
struct vl_plan_info;
int vl_caching_plan_info(vl_allocator *a, struct vl_plan_info *out);

/* The expandable reclaim budget (caching/budget.c): its value now, and the map calls
 * grows made while reclaiming since open, split by whether the work queued before the
 * reclaim was still running after them (hidden) or had completed (exposed), with the
 * host time in those calls and its exposed part (from the call that found the work
 * complete on), the host time unmapping the retired chunks once their batches
 * completed, and how often the budget rose and fell back. 0 with *out filled, -1 when
 * a is not a caching allocator. */
typedef struct vl_budget_info {
    double budget;
    int64_t relocation_maps_hidden, relocation_maps_exposed;
    int64_t relocation_map_ns, relocation_exposed_ns, relocation_unmap_ns;
    int64_t raises, decays;
} vl_budget_info;
int vl_caching_budget_info(vl_allocator *a, vl_budget_info *out);

/* Requests served by taking the stream's parked block back (lib/caching/park.h): the
 * cache-hit fast path, since open. */
unsigned long long vl_caching_park_hits(vl_allocator *a);

/* The report of the allocator's last OOM (lib/oom_report.h), taken from its state at
 * the moment of the OOM, after its release-and-retry: 1 with *out filled, 0 when it has
 * had no OOM since open. Taken at every OOM whatever the program asks (it costs a walk
 * of the segments, on the OOM path only). vl_alloc_oom_report asks the same of a
 * request now. */
int vl_caching_last_oom_report(vl_allocator *a, vl_oom_report *out);

/* One growth: a request no cached block served, so the allocator asked the device for
 * more (a classic segment, or expandable chunks mapped, maybe after unmapping free ones
 * to stay within the reclaim budget). largest_free_bytes < request_bytes while
 * free_bytes >= request_bytes is growth despite free memory: fragmentation, the layout
 * question behind "reserved far above allocated". */
typedef struct vl_caching_growth {
    size_t request_bytes;         /* the request, rounded */
    size_t largest_free_bytes;    /* the largest FREE block the request could have used, before */
    int64_t free_bytes;           /* reserved - allocated, before (all streams; includes blocks */
                                  /* waiting for events and chunks being unmapped) */
    int64_t allocated_bytes;      /* before, all streams */
    int64_t reserved_bytes;       /* before */
    int64_t reserved_after_bytes; /* after (lower than before + mapped where reclaim unmapped) */
    int64_t map_calls, unmap_calls; /* device calls this growth made (mem_alloc or map; unmap, free) */
} vl_caching_growth;

/* Calls fn(ctx, g) after every growth of a caching allocator, from inside the allocator
 * (its lock held): fn must not call the allocator. NULL fn stops it. 0, or -1 when a is
 * not a caching allocator. For diagnostics (bench/replay --growth-log); costs nothing
 * when unset. */
typedef void (*vl_caching_growth_fn)(void *ctx, const vl_caching_growth *g);
int vl_caching_on_growth(vl_allocator *a, vl_caching_growth_fn fn, void *ctx);

#endif
