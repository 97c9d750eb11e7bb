/* The expandable reclaim budget, and why it adapts. A stream's reserved may exceed its
 * peak allocated by the budget; past that, reclaim unmaps its free chunks before mapping
 * more (segments_expandable.c). A tight budget keeps waste low where the free memory
 * fits the next requests, but where it does not (a fixed-shape model whose largest
 * blocks are split up by smaller requests between steps; shapes that change every step)
 * each step unmaps free chunks in one place to map the same amount in another: device
 * calls every step, for no growth. So the budget starts at cfg.reclaim and doubles,
 * up to cfg.reclaim_max, whenever map calls made while reclaiming exceed cfg.raise_maps
 * (10 by default) within VL_BUDGET_WINDOW allocations: in steady state such calls then
 * stay under about 1 per 100 allocations, and a workload that needs the room
 * pays it once, in waste, instead of on every step. It never falls back: a workload's
 * layout need does not shrink while it runs.
 *
 * Hidden and exposed relocation, a diagnostic: a relocation costs the step only the
 * host time the GPU spends waiting for it (VMM calls do not wait for queued work:
 * bench/vmm_wait). After each map call, the event of the batch the reclaim queued tells
 * whether the work queued before the reclaim was still running (that map was hidden
 * behind it) or done (exposed). The budget rises on counts, not on exposed maps only:
 * the hidden share does not separate the workloads where the tight budget is cheap
 * from those where it is not (docs/caching-measured.md). On the simulated device with
 * events=immediate every batch is complete, so every relocation is exposed there.
 * Invariants: cfg.reclaim <= budget <= max(cfg.reclaim, cfg.reclaim_max);
 * budget_window_allocs <= st.allocs. */
#include "caching/allocator.h"
#include "clock.h"

#define VL_BUDGET_WINDOW 1024          /* allocations */
#define VL_BUDGET_FLOOR 0.004          /* where doubling starts when reclaim is 0 */

static void window_restart(vl_caching *c)
{
    c->budget_window_allocs = c->st.allocs;
    c->budget_window_maps = 0;
    c->budget_window_high_water = c->allocated_high_water;
}

void vl_budget_init(vl_caching *c)
{
    c->budget = c->cfg.reclaim;
    window_restart(c);
}

void vl_budget_relocated(vl_caching *c, int64_t maps)
{
    /* A quiet window ended, or the peak grew (warming up: relocating is growth then). */
    if (c->st.allocs - c->budget_window_allocs >= VL_BUDGET_WINDOW || c->allocated_high_water > c->budget_window_high_water)
        window_restart(c);
    c->budget_window_maps += maps;
    if (c->budget_window_maps <= c->cfg.raise_maps || c->budget >= c->cfg.reclaim_max) return;
    double raised = c->budget < VL_BUDGET_FLOOR ? VL_BUDGET_FLOOR : 2.0 * c->budget;
    c->budget = raised < c->cfg.reclaim_max ? raised : c->cfg.reclaim_max;
    window_restart(c); /* one raise per window */
}

void vl_budget_watch(vl_caching *c, vl_cretire *batch)
{
    c->watching = 1;
    c->watch = batch;
    c->watch_done = !batch || !batch->event;
    c->watch_hidden = 0;
    c->watch_start_ns = c->watch_exposed_ns = vl_now_ns();
}

void vl_budget_unwatch(vl_caching *c)
{
    if (c->watching) {
        uint64_t now = vl_now_ns();
        c->relocation_map_ns += (int64_t)(now - c->watch_start_ns);
        if (c->watch_done) c->relocation_exposed_ns += (int64_t)(now - c->watch_exposed_ns);
    }
    c->watching = 0;
    c->watch = NULL; /* the batch may be drained and freed from here on */
}

void vl_budget_mapped(vl_caching *c)
{
    if (!c->watching || c->watch_done) return;
    /* One query per map call (well under a microsecond against tens for the map); a
     * failed query (< 0) counts as complete: the batch's processing records it. The map
     * that first finds it complete may have run partly after it: from that map's start
     * (the previous look) on, the time counts as exposed. */
    c->watch_done = c->dev->ops->event_query(c->dev, c->watch->event) != 0;
    if (!c->watch_done) { /* still running: this map was hidden, exposed time starts after it */
        c->watch_hidden++;
        c->watch_exposed_ns = vl_now_ns();
    } /* found complete: watch_exposed_ns stays at the previous look */
}

void vl_budget_relocated_watched(vl_caching *c, int64_t maps)
{
    int64_t hidden = c->watch_hidden < maps ? c->watch_hidden : maps;
    c->relocation_maps_hidden += hidden;
    c->relocation_maps_exposed += maps - hidden;
    vl_budget_relocated(c, maps);
}
