/* The caching allocator's alloc and free paths: take a cached block from the stream's
 * pool (fit.c), split it, hand it out; on free, coalesce with free neighbours or, when
 * other streams used the block, defer through events (events.c). A miss grows a segment
 * (segments_classic.c / segments_expandable.c); a device OOM releases the whole cache
 * and retries once, then returns NULL with a report (stats.c).
 *
 * Hot path of a cache hit: when the block best fit would hand out is the one the stream
 * freed last (park.h), a few compares (fast.h) or a read-only treap descent and a few
 * counters, and its free a pointer-table lookup; otherwise one pointer-table probe, a bitmap lookup, a treap
 * descent (a few nodes), an unlink and a link, a few counters. No malloc, no device
 * call either way. */
#include <stdlib.h>
#include <string.h>

#include "caching/allocator.h"
#include "caching/hostmem.h"
#include "caching/sizes.h"
#include "caching/fast.h"
#include "caching/park.h"

void vl_caching_fail(vl_caching *c, int code, const char *what, int rc)
{
    c->last_error = code;
    if (code == VL_CACHING_ERR_HOST_MEMORY)
        snprintf(c->last_error_text, sizeof c->last_error_text, "caching: %s: out of host memory", what);
    else
        snprintf(c->last_error_text, sizeof c->last_error_text, "caching: %s failed (device status %d)", what, rc);
    fprintf(stderr, "%s\n", c->last_error_text);
}

vl_cblock *vl_caching_new_block(vl_caching *c)
{
    vl_cblock *b = vl_slab_get(&c->blocks);
    if (!b) {
        vl_caching_fail_host(c, "host allocation of a block header");
        return NULL;
    }
    *b = (vl_cblock){0}; /* inline stores; a memset call would cost a tenth of a cache hit */
    return b;
}

/* The stream table's key: handles are pointers (NULL = the default stream) and the
 * table reserves key 0, so the key is the handle + 1. */
static uintptr_t stream_key(vl_stream s) { return (uintptr_t)s + 1; }

vl_cstream *vl_caching_stream(vl_caching *c, vl_stream s)
{
    if (c->last_stream && c->last_stream->handle == s) return c->last_stream;
    vl_addrmap_slot *slot = vl_addrmap_find(&c->stream_table, stream_key(s));
    if (slot) return c->last_stream = (vl_cstream *)(uintptr_t)slot->value;
    if (c->nstreams == c->streams_cap) {
        size_t cap = c->streams_cap ? c->streams_cap * 2 : 4;
        vl_cstream **grown = vl_host_realloc(c->streams, cap * sizeof *grown);
        if (!grown) {
            vl_caching_fail_host(c, "host allocation of the stream list");
            return NULL;
        }
        c->streams = grown;
        c->streams_cap = cap;
    }
    vl_cstream *st = vl_host_calloc(1, sizeof *st);
    if (!st || vl_addrmap_insert(&c->stream_table, stream_key(s), (uint64_t)(uintptr_t)st) != 0) {
        free(st);
        vl_caching_fail_host(c, "host allocation of a stream record");
        return NULL;
    }
    st->handle = s;
    for (int k = 0; k < 2; k++) {
        st->pools[k].stream = st;
        st->pools[k].small = k == 0;
    }
    c->streams[c->nstreams++] = st;
    return c->last_stream = st;
}


/* Takes `rounded` bytes from the FREE block b (in its bins, or detached: fresh from an
 * expandable mapping, never inserted, which saves a treap insert and removal per
 * growth); the remainder, if the split rules allow, stays cached as a FREE block of its
 * own (two, either side, when chunk_spot puts the request inside the block). Its
 * neighbours are not FREE (b was coalesced), so the remainder needs no coalescing. */
/* The broken-allocator check (make test-broken-allocator) builds this file with
 * -DVL_CACHING_FAULT_SPLIT=512: the remainder then starts inside the block handed out,
 * and the tests must fail. 0 (no fault) in every other build. */
#ifndef VL_CACHING_FAULT_SPLIT
#define VL_CACHING_FAULT_SPLIT 0
#endif

static void take(vl_caching *c, vl_cpool *p, vl_cblock *b, size_t rounded, int detached)
{
    if (!detached) vl_free_remove(c, b);
    vl_cblock *rest;
    /* Without a header for the remainder the block is handed out whole: wasteful, not wrong. */
    if (vl_caching_should_split(b->size, rounded, p->small, b->seg->expandable, c->cfg.max_split) &&
        (rest = vl_caching_new_block(c)) != NULL) {
        uintptr_t end = b->addr + b->size;
        uintptr_t at = vl_caching_split_spot(c, b->seg, b->prev, b->next, b->addr, end, rounded, detached);
        /* A remainder before the request: `rest` when it is the only one, else a second
         * header (none to be had: the request goes to the low end). */
        vl_cblock *low = NULL;
        if (at > b->addr && (low = at + rounded < end ? vl_caching_new_block(c) : rest) == NULL) at = b->addr;
        if (low != NULL) {
            vl_free_insert(c, vl_block_insert_after(b->seg, b->prev, low, b->addr, at - b->addr));
            b->addr = at;
        }
        if (at + rounded < end)
            vl_free_insert(c, vl_block_insert_after(b->seg, b, rest, at + rounded - VL_CACHING_FAULT_SPLIT,
                                                    end - at - rounded + VL_CACHING_FAULT_SPLIT));
        b->size = rounded;
    }
    vl_assert_internal(vl_block_tiles(b) && (!b->prev || vl_block_tiles(b->prev)) && (!b->next || vl_block_tiles(b->next)));
    b->state = VL_CB_ALLOCATED;
}

vl_cblock *vl_block_insert_after(vl_csegment *s, vl_cblock *after, vl_cblock *b, uintptr_t addr, size_t size)
{
    b->addr = addr;
    b->size = size;
    b->seg = s;
    b->prev = after;
    b->next = after ? after->next : s->first;
    if (b->next) b->next->prev = b;
    if (after) after->next = b;
    else s->first = b;
    return b;
}

void vl_block_absorb_next(vl_caching *c, vl_cblock *b)
{
    vl_cblock *next = b->next;
    vl_assert_internal(next && b->addr + b->size == next->addr && next->prev == b);
    b->size += next->size;
    b->next = next->next;
    if (next->next) next->next->prev = b;
    vl_slab_put(&c->blocks, next);
}

vl_cblock *vl_caching_coalesce(vl_caching *c, vl_cblock *b)
{
    vl_cblock *prev = b->prev, *next = b->next;
    if (prev && prev->state == VL_CB_FREE) {
        vl_free_remove(c, prev);
        vl_block_absorb_next(c, prev);
        b = prev;
    }
    if (next && next->state == VL_CB_FREE) {
        vl_free_remove(c, next);
        vl_block_absorb_next(c, b);
    }
    b->pending_events = 0;
    b->state = VL_CB_FREE;
    b->whole = 0;
    vl_assert_internal(vl_block_tiles(b));
    return b;
}

vl_cblock *vl_caching_release_block(vl_caching *c, vl_cblock *b)
{
    b = vl_caching_coalesce(c, b);
    vl_free_insert(c, b);
    return b;
}


/* The figures of a growth (caching.h) before it; map_calls and unmap_calls hold the
 * counters, which grow turns into the calls made. The block the request could have used:
 * its own pool's largest, and for expandable segments the stream's other pool's too
 * (they lend each other, cached_fit). */
static void growth_before(const vl_caching *c, const vl_cpool *p, size_t rounded, vl_caching_growth *g)
{
    size_t largest = vl_bins_largest(&p->bins);
    if (c->cfg.lend) {
        size_t other = vl_bins_largest(&vl_caching_other_pool(p)->bins);
        if (other > largest) largest = other;
    }
    *g = (vl_caching_growth){.request_bytes = rounded, .largest_free_bytes = largest,
                             .free_bytes = c->st.reserved_bytes - c->st.allocated_bytes,
                             .allocated_bytes = c->st.allocated_bytes, .reserved_bytes = c->st.reserved_bytes,
                             .map_calls = c->st.device_allocs, .unmap_calls = c->st.device_frees};
}

/* *detached: the block is in no bins (expandable's fresh mappings); set only for the
 * block returned, so a cached block found after a failed growth is taken out of its bins. */
static vl_cblock *grow(vl_caching *c, vl_cpool *p, size_t rounded, int *rc, int *detached)
{
    /* Growth, gc, reclaim and pressure see every stream's free memory (park.h). */
    vl_park_release_all(c);
    vl_caching_growth g;
    if (c->on_growth) growth_before(c, p, rounded, &g);
    vl_cblock *b = c->cfg.expandable ? vl_expandable_grow(c, p, rounded, rc) : vl_classic_grow(c, p, rounded, rc);
    *detached = b && c->cfg.expandable;
    if (b && c->on_growth) {
        g.reserved_after_bytes = c->st.reserved_bytes;
        g.map_calls = c->st.device_allocs - g.map_calls;
        g.unmap_calls = c->st.device_frees - g.unmap_calls;
        c->on_growth(c->on_growth_ctx, &g);
    }
    return b;
}

static size_t release_cache(vl_caching *c)
{
    vl_park_release_all(c);
    return vl_classic_release_free(c, 0) + vl_expandable_release_free(c);
}


/* b (taken out of the bins) goes to the caller, who asked for `size` bytes; NULL when
 * the pointer table cannot take it (b then goes back to the cache). */
static void *hand_out(vl_caching *c, vl_cstream *st, vl_cblock *b, size_t size)
{
    if (vl_addrmap_insert(&c->table, b->addr, (uint64_t)(uintptr_t)b) != 0) {
        vl_caching_fail_host(c, "host allocation of the pointer table");
        vl_caching_release_block(c, b); /* back to the cache, merged with its remainder */
        c->st.ooms++;
        return NULL;
    }
    return vl_caching_give(c, st, b, size);
}

void *vl_caching_alloc(vl_caching *c, size_t size, vl_stream s)
{
    if (size == 0) return NULL;
    void *planned;
    if (c->plan && vl_plan_serve(c, size, s, &planned)) return planned;
    c->st.allocs++;
    vl_caching_budget_tick(c);
    if (c->npending) vl_caching_process_events(c, 0);
    if (c->retire_head) vl_release_process(c, 0);
    size_t rounded = size <= VL_CACHING_MAX_REQUEST ? vl_caching_round_size(size, c->cfg.roundup_div) : size;
    vl_cstream *st = vl_caching_stream(c, s);
    if (!st) {
        c->st.ooms++;
        return NULL;
    }
    vl_cpool *p = &st->pools[vl_caching_is_small(rounded) ? 0 : 1];
    if (st->park.block) {
        int hit = vl_caching_parked_is_best_fit(c, p, st->park.block, rounded);
        vl_park_score(&st->park, hit);
        if (hit) {
            vl_park_remember(&st->park, p);
            c->parking.hits++;
            return vl_caching_give(c, st, vl_park_take(c, st), size); /* in the table still */
        }
        vl_park_release(c, st); /* any other request sees it in the bins, as after its free */
    }

    vl_cblock *b = NULL;
    int rc = VL_DEV_OK, detached = 0;
    /* A request larger than the whole device can never be served: refuse it at once
     * (an expandable range would otherwise map chunk after chunk up to the capacity,
     * then unmap them all). */
    if (size <= VL_CACHING_MAX_REQUEST && rounded <= c->dev->total_bytes) {
        b = vl_caching_cached_fit(c, &p, rounded);
        if (!b) b = grow(c, p, rounded, &rc, &detached);
        if (!b && rc == VL_DEV_ERROR) {
            c->st.ooms++; /* a device or host failure, recorded; flushing would not help */
            return NULL;
        }
        /* Like PyTorch: wait for deferred frees, give every cached byte back, retry once.
         * Not when the mapping cannot fit whatever is given back, unless deferred frees
         * (counted as in use) may complete and serve the request from the cache. */
        if (!b && (rc != VL_GROW_NEVER_FITS || c->npending)) {
            c->st.alloc_retries++;
            vl_caching_process_events(c, 1);
            release_cache(c);
            b = vl_caching_cached_fit(c, &p, rounded);
            if (!b) b = grow(c, p, rounded, &rc, &detached);
        }
    }
    if (!b) {
        c->st.ooms++;
        vl_caching_oom_report(c, size, s);
        return NULL;
    }
    take(c, p, b, rounded, detached);
    return hand_out(c, st, b, size);
}

void vl_caching_free(vl_caching *c, void *ptr)
{
    if (c->plan && vl_plan_owns(c->plan, ptr)) {
        vl_plan_free(c, ptr);
        return;
    }
    vl_addrmap_slot *slot = vl_addrmap_find(&c->table, (uintptr_t)ptr);
    vl_cblock *b = slot ? (vl_cblock *)(uintptr_t)slot->value : NULL;
    if (!b || b->state != VL_CB_ALLOCATED) { /* a PARKED block is in the table too (park.h) */
        fprintf(stderr, "caching: free of %p, which is not allocated here (double free?); ignored\n", ptr);
        return;
    }
    if (c->plan) vl_plan_note_free(c, b);
    vl_cstream *st = b->seg->pool->stream;
    vl_caching_count_free(c, st, b->requested, b->size);
    if (b->uses) {
        vl_addrmap_remove_slot(&c->table, slot);
        vl_caching_defer_free(c, b); /* stays active until its events complete */
    } else {
        /* No record_use: reusable at once by the block's own stream, even if another
         * stream still works on it. That is PyTorch's race, reproduced on purpose. */
        c->st.active_bytes -= (int64_t)b->size;
        if (vl_park_wanted(&st->park, c->cfg.park)) {
            vl_park_put(c, st, b); /* keeps its pointer-table entry */
        } else {
            vl_addrmap_remove_slot(&c->table, slot);
            vl_caching_release_block(c, b);
        }
        /* The stream holds nothing: lay its cache out again as a cold pass would find it. */
        if (c->cfg.pack && st->allocated == 0) vl_expandable_idle(c, st);
    }
    vl_caching_stats_touch(c);
}

size_t vl_caching_release_cached(vl_caching *c)
{
    /* Like torch.cuda.empty_cache(): wait for deferred frees first. */
    vl_caching_process_events(c, 1);
    size_t released = release_cache(c);
    vl_caching_stats_touch(c);
    return released;
}

size_t vl_caching_trim(vl_caching *c)
{
    if (c->plan) vl_plan_trim(c); /* an arena holding no planned block is cache too */
    return vl_caching_release_cached(c);
}
