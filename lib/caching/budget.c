/* The expandable reclaim budget, and why it adapts. A stream's reserved may exceed its
 * peak allocated by the budget; past that, reclaim unmaps its free chunks before mapping
 * more (segments_expandable.c). A tight budget keeps waste low where the free memory
 * fits the next requests, but where it does not (a fixed-shape model whose largest
 * blocks are split up by smaller requests between steps; shapes that change every step)
 * each step unmaps free chunks in one place to map the same amount in another: device
 * calls every step, for no growth. So the budget starts at cfg.reclaim and doubles,
 * up to cfg.reclaim_max, whenever map calls made while reclaiming exceed
 * VL_BUDGET_MAPS_PER_WINDOW within VL_BUDGET_WINDOW allocations: in steady state such
 * calls stay under about 1 per 100 allocations, and a workload that needs the room
 * pays it once, in waste, instead of on every step. It never falls back: a workload's
 * layout need does not shrink while it runs.
 *
 * raise=idle: a relocation costs the step only the host time the GPU spends waiting for
 * it. After the maps, the event of the batch the reclaim queued tells whether the work
 * queued before the reclaim was still running (the maps were hidden behind it) or
 * done (the stream was idle: exposed). With raise=idle only exposed maps count toward
 * the raise, so a workload whose GPU stays busy keeps the tight budget and its low waste
 * (live, ckpt spent 9 ms a step in relocation for a much smaller step cost: the
 * results' h200-zoo-tradeoff-targeted-f2f55a2). On the simulated device with
 * events=immediate every batch is complete, so every relocation is exposed there.
 * Invariants: cfg.reclaim <= budget <= max(cfg.reclaim, cfg.reclaim_max);
 * budget_window_allocs <= st.allocs. */
#include "caching/allocator.h"

#define VL_BUDGET_WINDOW 1024          /* allocations */
#define VL_BUDGET_MAPS_PER_WINDOW 10   /* relocating map calls allowed in one window */
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
    if (c->budget_window_maps <= VL_BUDGET_MAPS_PER_WINDOW || c->budget >= c->cfg.reclaim_max) return;
    double raised = c->budget < VL_BUDGET_FLOOR ? VL_BUDGET_FLOOR : 2.0 * c->budget;
    c->budget = raised < c->cfg.reclaim_max ? raised : c->cfg.reclaim_max;
    window_restart(c); /* one raise per window */
}

void vl_budget_relocated_after(vl_caching *c, int64_t maps, vl_cretire *waiting)
{
    /* A failed query (< 0) counts as exposed; the batch's processing records it. */
    int hidden = waiting && waiting->event && c->dev->ops->event_query(c->dev, waiting->event) == 0;
    if (hidden) c->relocation_maps_hidden += maps;
    else c->relocation_maps_exposed += maps;
    vl_budget_relocated(c, hidden && c->cfg.raise_idle ? 0 : maps);
}
