/* The cache-hit fast path, inlined into the entry points (backend.c) ahead of
 * vl_caching_alloc and vl_caching_free (core.c), which decide everything else.
 *
 * Alloc: the stream's parked block (park.h) is handed back when its last hit's verdict
 * still holds (the same block, both pools' bins at the versions it was found at: what
 * vl_caching_parked_is_best_fit answers first, without a descent), and nothing else
 * has work to do at this allocation (no plan, no pending events or retire batches).
 * Free: a block without uses is parked in its stream's empty slot while the stream's
 * parking pays. A PARKED block keeps its pointer-table entry, so a pair touches the
 * table once, a lookup. Any other case goes the whole way, which decides the same. */
#ifndef VL_CACHING_FAST_H
#define VL_CACHING_FAST_H

#include "caching/allocator.h"
#include "caching/park.h"
#include "caching/sizes.h"

/* b (in the pointer table already) goes to the caller, who asked for `size` bytes. */
static inline void *vl_caching_give(vl_caching *c, vl_cstream *st, vl_cblock *b, size_t size)
{
    b->state = VL_CB_ALLOCATED;
    b->requested = size;
    if (c->plan) vl_plan_note_alloc(c, st, b);
    vl_caching_count_alloc(c, st, size, b->size);
    return (void *)b->addr;
}

static inline void *vl_caching_alloc_fast(vl_caching *c, size_t size, vl_stream s)
{
    vl_cstream *st = c->last_stream;
    vl_cblock *x;
    /* size - 1: 0 (not counted) wraps; above the largest request rounding does not apply. */
    if (!c->fast || size - 1 >= VL_CACHING_MAX_REQUEST || c->npending || c->retire_head || !st ||
        st->handle != s || !(x = st->park.block))
        return vl_caching_alloc(c, size, s);
    size_t rounded = vl_caching_round_size(size, 0); /* fast: no roundup_div */
    const vl_cpool *p = &st->pools[vl_caching_is_small(rounded) ? 0 : 1];
    if (x->size != rounded || x != st->park.ok || p->bins.version != st->park.ok_version ||
        x->seg->pool != st->park.ok_own || st->park.ok_own->bins.version != st->park.ok_own_version)
        return vl_caching_alloc(c, size, s);
    c->st.allocs++;
    vl_caching_budget_tick(c);
    vl_park_score(&st->park, 1);
    c->parking.hits++;
    return vl_caching_give(c, st, vl_park_take(c, st), size);
}

static inline void vl_caching_free_fast(vl_caching *c, void *ptr)
{
    vl_addrmap_slot *slot;
    vl_cblock *b;
    vl_cstream *st;
    /* score >= 0: vl_park_wanted's yes without a probe count (c->fast implies cfg.park). */
    if (!c->fast || !(slot = vl_addrmap_find(&c->table, (uintptr_t)ptr)) ||
        (b = (vl_cblock *)(uintptr_t)slot->value)->state != VL_CB_ALLOCATED || b->uses ||
        (st = b->seg->pool->stream)->park.block || st->park.score < 0) {
        vl_caching_free(c, ptr);
        return;
    }
    vl_caching_count_free(c, st, b->requested, b->size);
    c->st.active_bytes -= (int64_t)b->size;
    vl_park_hold(c, st, b);
    vl_caching_stats_touch(c);
}

#endif
