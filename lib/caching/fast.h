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

/* The parked block handed back, or NULL with nothing changed (then vl_caching_alloc):
 * a pointer handed out is never NULL (the pointer table's key 0 is empty). */
static inline void *vl_caching_alloc_fast(vl_caching *c, size_t size, vl_stream s)
{
    vl_cstream *st = c->last_stream;
    vl_cblock *x;
    /* size - 1: 0 (not counted) wraps; above the largest request rounding does not apply.
     * A budget decay due at this allocation goes the whole way too. */
    if (!c->fast || size - 1 >= VL_CACHING_MAX_REQUEST || c->npending || c->retire_head ||
        c->st.allocs + 1 >= c->budget.decay_at || !st || st->handle != s || !(x = st->park.block))
        return NULL;
    size_t rounded = vl_caching_round_size(size, 0); /* fast: no roundup_div */
    const vl_cpool *p = &st->pools[vl_caching_is_small(rounded) ? 0 : 1];
    if (x->size != rounded || x != st->park.ok || p->bins.version != st->park.ok_version ||
        x->seg->pool != st->park.ok_own || st->park.ok_own->bins.version != st->park.ok_own_version)
        return NULL;
    c->st.allocs++;
    vl_park_score(&st->park, 1);
    c->parking.hits++;
    vl_park_take(c, st);
    /* vl_caching_give without the plan's note (fast: no plan) */
    x->state = VL_CB_ALLOCATED;
    x->requested = size;
    vl_caching_count_alloc(c, st, size, x->size);
    return (void *)x->addr;
}

/* 1 when ptr's block was parked, else 0 with nothing changed (then vl_caching_free). */
static inline int vl_caching_free_fast(vl_caching *c, void *ptr)
{
    vl_addrmap_slot *slot;
    vl_cblock *b;
    vl_cstream *st;
    /* score >= 0: vl_park_wanted's yes without a probe count (c->fast implies cfg.park). */
    if (!c->fast || !(slot = vl_addrmap_find(&c->table, (uintptr_t)ptr)) ||
        (b = (vl_cblock *)(uintptr_t)slot->value)->state != VL_CB_ALLOCATED || b->uses ||
        (st = b->seg->pool->stream)->park.block || st->park.score < 0)
        return 0;
    vl_caching_count_free(c, st, b->requested, b->size);
    c->st.active_bytes -= (int64_t)b->size;
    vl_park_hold(c, st, b);
    vl_caching_stats_touch(c);
    return 1;
}

#endif
