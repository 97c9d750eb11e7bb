/* The expandable reclaim budget: its state and the calls that move it (budget.c has the
 * rules and why). Reclaim (segments_expandable.c) and the spares' cap (release.c) read
 * `value`; core.c asks vl_budget_decay_due at every allocation; a relocating grow
 * reports its map calls. Every call gets the state it changes and the allocator's
 * figures it reads, so the rules run on their own (test_caching_budget drives them so). */
#ifndef VL_CACHING_BUDGET_H
#define VL_CACHING_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

struct vl_caching_config;
struct vl_cretire;

typedef struct vl_cbudget {
    int64_t decay_at;      /* the allocation count at which the level drops (INT64_MAX: none); first: every allocation reads it */
    double value; /* the budget now: a stream's reserved may pass its peak allocated by this share */
    int level;    /* doublings above cfg->reclaim: value is the level's (budget.c, level_value) */
    /* The burst window: allocations at its start (its first relocating map call after
     * the last one ended), relocating map calls in it, the allocated high-water mark then. */
    int64_t window_allocs, window_maps, window_high_water;
    int64_t quiet_windows; /* windows without a burst that a decay waits for (backoff doubles it) */
    int probation;         /* lowered by a decay, not raised since: only sustained relocation raises it */
    /* Probation's bucket: relocating map calls x VL_BUDGET_WINDOW, drained raise_maps per
     * allocation since bucket_allocs, emptied when the high-water mark passes bucket_high_water. */
    int64_t bucket, bucket_allocs, bucket_high_water;
    int64_t raises, decays; /* since open (vl_budget_info) */
} vl_cbudget;

/* Relocating map calls since open, by whether work queued on the stream before the
 * reclaim was still running after them (hidden) or not (exposed), a diagnostic. While a
 * relocating grow maps, watch is its reclaim's batch (NULL: complete already) and
 * watch_hidden counts its map calls made before that batch was seen complete. */
typedef struct vl_crelocation {
    int64_t maps_hidden, maps_exposed;
    /* Host time in those map calls (monotonic clock), and the part after the batch was
     * seen complete: what the GPU can have waited for. watch_start_ns: when the watched
     * maps began; watch_exposed_ns: the last look at the batch while it ran, then (once it
     * is seen complete) where the exposed time starts. */
    int64_t map_ns, exposed_ns;
    int64_t unmap_ns; /* host time unmapping retired chunks once their batch completed (release.c) */
    struct vl_cretire *watch;
    int watching, watch_done;
    int64_t watch_hidden;
    uint64_t watch_start_ns, watch_exposed_ns;
} vl_crelocation;

/* The budget at open: cfg->reclaim, nothing seen. allocs and high_water: the allocator's
 * allocation count and allocated high-water mark now (so for every call below). */
void vl_budget_init(vl_cbudget *b, const struct vl_caching_config *cfg, int64_t allocs, int64_t high_water);
/* A grow that had to reclaim made `maps` map calls: counts them; raises the budget on a
 * burst (or, in probation, on sustained relocation), and holds its level. */
void vl_budget_relocated(vl_cbudget *b, const struct vl_caching_config *cfg, int64_t allocs, int64_t high_water,
                         int64_t maps);
/* Whether the quiet stretch ended at this allocation: then vl_budget_decay. One compare. */
static inline int vl_budget_decay_due(const vl_cbudget *b, int64_t allocs) { return allocs >= b->decay_at; }
/* The budget falls one level. */
void vl_budget_decay(vl_cbudget *b, const struct vl_caching_config *cfg, int64_t allocs, int64_t high_water);
/* The budget's invariants, for vl_caching_check: 0, or -1 with the first broken one in err. */
int vl_budget_check(const vl_cbudget *b, const struct vl_caching_config *cfg, int64_t allocs, char *err,
                    size_t errlen);

/* A relocating grow's maps, watched: vl_relocation_watch before them (batch: the one
 * its reclaim queued, NULL when that completed at once), vl_relocation_mapped after each
 * map call (a map after which the batch's work was still running was hidden behind it),
 * vl_relocation_unwatch right after the maps (before anything may drain that batch),
 * vl_relocation_count once the grow (unwatched) mapped `maps` in all: splits them into
 * hidden and exposed. The grow then tells the budget (vl_budget_relocated). */
void vl_relocation_watch(vl_crelocation *r, struct vl_cretire *batch);
void vl_relocation_unwatch(vl_crelocation *r);
void vl_relocation_mapped(vl_crelocation *r, vl_device *dev);
void vl_relocation_count(vl_crelocation *r, int64_t maps);

#endif
