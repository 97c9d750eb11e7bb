/* The expandable reclaim budget, and why it adapts. A stream's reserved may exceed its
 * peak allocated by the budget; past that, reclaim unmaps its free chunks before mapping
 * more (segments_expandable.c). A tight budget keeps waste low where the free memory
 * fits the next requests, but where it does not (a fixed-shape model whose largest
 * blocks are split up by smaller requests between steps; shapes that change every step)
 * each step unmaps free chunks in one place to map the same amount in another: device
 * calls every step, for no growth. So the budget moves by doublings ("levels") between
 * cfg.reclaim and cfg.reclaim_max, by four rules:
 *
 *   raise    more than cfg.raise_maps map calls made while reclaiming in one window
 *            (VL_BUDGET_WINDOW allocations from its first such call, at a steady peak)
 *            double it: a workload that needs the room pays once, in waste, instead
 *            of in device calls on every step;
 *   decay    a quiet stretch (quiet_windows windows without such a burst) takes it one
 *            level down: a need not seen for that long has passed, and one level down
 *            undoes exactly one raise;
 *   probation after a decay only sustained relocation raises it again: a bucket that
 *            relocating maps fill and that drains cfg.raise_maps per window must
 *            overflow VL_BUDGET_QUIET x cfg.raise_maps. A burst (the lower budget
 *            relocating what the higher one cached) only holds the level, delaying the
 *            next decay: the budget neither climbs back nor falls further then;
 *   backoff  a raise out of probation (the decay was premature: the need persists)
 *            doubles quiet_windows, up to VL_BUDGET_QUIET_MAX; a decay whose
 *            predecessor held halves it again, down to VL_BUDGET_QUIET: a persisting
 *            need costs a number of probes logarithmic in the time it lasts.
 *
 * The budget bounds what a grow may add. Memory already mapped comes back only
 * through reclaim at a grow (and kept memory through the spares' cap, release.c, which
 * follows the budget): giving free chunks back at a decay re-lays out the cache, and on
 * the recorded traces that cost more map calls and more waste than it saved
 * (docs/caching-measured.md, "The reclaim budget"). decay=0 keeps the raise rule only
 * (the budget never falls back).
 *
 * Hidden and exposed relocation, a diagnostic: a relocation costs the step only the
 * host time the GPU spends waiting for it (VMM calls do not wait for queued work:
 * bench/vmm_wait). After each map call, the event of the batch the reclaim queued tells
 * whether the work queued before the reclaim was still running (that map was hidden
 * behind it) or done (exposed). The budget rises on counts, not on exposed maps only:
 * the hidden share does not separate the workloads where the tight budget is cheap
 * from those where it is not (docs/caching-measured.md). On the simulated device with
 * events=immediate every batch is complete, so every relocation is exposed there.
 *
 * Invariants (vl_budget_check): value == level_value(level), so cfg.reclaim <= value
 * <= max(cfg.reclaim, cfg.reclaim_max); window_allocs <= st.allocs; decay_at ==
 * INT64_MAX iff level == 0 or decay=0; VL_BUDGET_QUIET <= quiet_windows <=
 * VL_BUDGET_QUIET_MAX; bucket >= 0, and bucket == 0 outside probation. */
#include <stdio.h>

#include "caching/allocator.h"
#include "caching/budget.h"
#include "clock.h"
#include "debug.h"

#define VL_BUDGET_WINDOW 1024    /* allocations */
#define VL_BUDGET_FLOOR 0.004    /* where doubling starts when reclaim is below it */
#define VL_BUDGET_QUIET 32       /* windows without a burst before a decay, at first */
#define VL_BUDGET_QUIET_MAX 1024 /* the longest wait backoff reaches (about a million allocations) */

/* The budget at level k: reclaim, then doublings from reclaim (or from the floor when
 * reclaim is below it), never above reclaim_max (nor below reclaim). */
static double level_value(const vl_caching_config *cfg, int k)
{
    if (k == 0) return cfg->reclaim;
    double v = cfg->reclaim < VL_BUDGET_FLOOR ? VL_BUDGET_FLOOR : cfg->reclaim;
    for (int i = cfg->reclaim < VL_BUDGET_FLOOR ? 1 : 0; i < k; i++) v *= 2.0;
    if (v > cfg->reclaim_max) v = cfg->reclaim_max;
    return v > cfg->reclaim ? v : cfg->reclaim;
}

static void window_restart(vl_cbudget *b, int64_t allocs, int64_t high_water)
{
    b->window_allocs = allocs;
    b->window_maps = 0;
    b->window_high_water = high_water;
}

/* The next decay: quiet_windows from now, none at the lowest level or with decay=0. */
static void schedule_decay(vl_cbudget *b, const vl_caching_config *cfg, int64_t allocs)
{
    b->decay_at = b->level > 0 && cfg->decay ? allocs + b->quiet_windows * VL_BUDGET_WINDOW : INT64_MAX;
}

void vl_budget_init(vl_cbudget *b, const vl_caching_config *cfg, int64_t allocs, int64_t high_water)
{
    *b = (vl_cbudget){0};
    b->value = cfg->reclaim;
    b->quiet_windows = VL_BUDGET_QUIET;
    window_restart(b, allocs, high_water);
    schedule_decay(b, cfg, allocs);
}

static void raise_level(vl_cbudget *b, const vl_caching_config *cfg, int64_t allocs, int64_t high_water)
{
    b->level++;
    b->value = level_value(cfg, b->level);
    b->raises++;
    window_restart(b, allocs, high_water); /* one raise per window */
    schedule_decay(b, cfg, allocs);
    vl_assert_internal(b->value <= (cfg->reclaim_max > cfg->reclaim ? cfg->reclaim_max : cfg->reclaim));
}

void vl_budget_decay(vl_cbudget *b, const vl_caching_config *cfg, int64_t allocs, int64_t high_water)
{
    vl_assert_internal(b->level > 0 && cfg->decay);
    if (b->probation && b->quiet_windows > VL_BUDGET_QUIET) b->quiet_windows /= 2; /* the last decay held */
    b->level--;
    b->value = level_value(cfg, b->level);
    b->decays++;
    b->probation = 1;
    b->bucket = 0;
    b->bucket_allocs = allocs;
    b->bucket_high_water = high_water;
    schedule_decay(b, cfg, allocs);
    vl_assert_internal(b->value >= cfg->reclaim);
}

/* Probation: whether the relocating maps since the decay, drained cfg->raise_maps per
 * window, overflow VL_BUDGET_QUIET x cfg->raise_maps (counted in maps x allocations, so
 * the drain is exact): a need above the raise rule's rate shows within about
 * VL_BUDGET_QUIET windows, however long backoff made the wait. A grown peak empties
 * it: relocating is growth then. */
static int sustained(vl_cbudget *b, const vl_caching_config *cfg, int64_t allocs, int64_t high_water, int64_t maps)
{
    int64_t drained = (allocs - b->bucket_allocs) * cfg->raise_maps;
    b->bucket = b->bucket > drained ? b->bucket - drained : 0;
    b->bucket_allocs = allocs;
    if (high_water > b->bucket_high_water) {
        b->bucket = 0;
        b->bucket_high_water = high_water;
    }
    b->bucket += maps * VL_BUDGET_WINDOW;
    return b->bucket > (int64_t)VL_BUDGET_QUIET * cfg->raise_maps * VL_BUDGET_WINDOW;
}

void vl_budget_relocated(vl_cbudget *b, const vl_caching_config *cfg, int64_t allocs, int64_t high_water, int64_t maps)
{
    /* A quiet window ended, or the peak grew (warming up: relocating is growth then). */
    if (allocs - b->window_allocs >= VL_BUDGET_WINDOW || high_water > b->window_high_water)
        window_restart(b, allocs, high_water);
    b->window_maps += maps;
    int burst = b->window_maps > cfg->raise_maps;
    int can_rise = b->value < cfg->reclaim_max;
    if (b->probation) {
        if (sustained(b, cfg, allocs, high_water, maps) && can_rise) {
            b->probation = 0;
            b->bucket = 0;
            if (b->quiet_windows < VL_BUDGET_QUIET_MAX) b->quiet_windows *= 2;
            raise_level(b, cfg, allocs, high_water);
            return;
        }
    } else if (burst && can_rise) {
        raise_level(b, cfg, allocs, high_water);
        return;
    }
    if (burst) schedule_decay(b, cfg, allocs); /* the need is still there: the level holds */
}

void vl_relocation_watch(vl_crelocation *r, vl_cretire *batch)
{
    r->watching = 1;
    r->watch = batch;
    r->watch_done = !batch || !batch->event;
    r->watch_hidden = 0;
    r->watch_start_ns = r->watch_exposed_ns = vl_now_ns();
}

void vl_relocation_unwatch(vl_crelocation *r)
{
    if (r->watching) {
        uint64_t now = vl_now_ns();
        r->map_ns += (int64_t)(now - r->watch_start_ns);
        if (r->watch_done) r->exposed_ns += (int64_t)(now - r->watch_exposed_ns);
    }
    r->watching = 0;
    r->watch = NULL; /* the batch may be drained and freed from here on */
}

void vl_relocation_mapped(vl_crelocation *r, vl_device *dev)
{
    if (!r->watching || r->watch_done) return;
    /* One query per map call (well under a microsecond against tens for the map); a
     * failed query (< 0) counts as complete: the batch's processing records it. The map
     * that first finds it complete may have run partly after it: from that map's start
     * (the previous look) on, the time counts as exposed. */
    r->watch_done = dev->ops->event_query(dev, r->watch->event) != 0;
    if (!r->watch_done) { /* still running: this map was hidden, exposed time starts after it */
        r->watch_hidden++;
        r->watch_exposed_ns = vl_now_ns();
    } /* found complete: watch_exposed_ns stays at the previous look */
}

void vl_relocation_count(vl_crelocation *r, int64_t maps)
{
    vl_assert_internal(!r->watching && maps >= 0);
    int64_t hidden = r->watch_hidden < maps ? r->watch_hidden : maps;
    r->maps_hidden += hidden;
    r->maps_exposed += maps - hidden;
}

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            snprintf(err, errlen, "budget: " __VA_ARGS__);                                                             \
            return -1;                                                                                                 \
        }                                                                                                              \
    } while (0)

int vl_budget_check(const vl_cbudget *b, const vl_caching_config *cfg, int64_t allocs, char *err, size_t errlen)
{
    CHECK(b->level >= 0 && b->value == level_value(cfg, b->level), "%g at level %d", b->value, b->level);
    CHECK(b->window_allocs <= allocs, "a window starts after the last allocation");
    CHECK((b->decay_at == INT64_MAX) == (b->level == 0 || !cfg->decay), "decay at %lld on level %d",
          (long long)b->decay_at, b->level);
    CHECK(b->quiet_windows >= VL_BUDGET_QUIET && b->quiet_windows <= VL_BUDGET_QUIET_MAX, "waits %lld windows",
          (long long)b->quiet_windows);
    CHECK(b->bucket >= 0 && (b->probation || b->bucket == 0), "bucket %lld outside probation", (long long)b->bucket);
    return 0;
}
