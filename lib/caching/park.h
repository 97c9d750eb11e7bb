/* Parking a stream's last free: the cache-hit fast path.
 *
 * A free of a block that no other stream used (with park=1, the default) leaves it
 * PARKED in its stream's one parking slot instead of coalescing it into the bins. The
 * stream's next request takes it back at once when it is exactly the block that best
 * fit over the coalesced cache would hand out, at the same address (fit.c,
 * vl_caching_parked_is_best_fit), as in a pair of alloc and free of one size. Such a pair then
 * costs a pointer-table lookup (the block keeps its entry while PARKED), a read-only
 * best-fit descent and a few stores, instead of two treap removals, two insertions, a
 * split and a merge; and
 * when nothing entered or left the bins since the stream's last such hit (the bins'
 * version), the same block at the same place gets the same verdict without the descent.
 *
 * Parking pays only where the next request takes the block back: elsewhere each free
 * and request costs a little more (in recorded training traces most requests after a
 * free ask for another size). So a stream
 * keeps a score, +3 for a block taken back and -1 for one released; below 0 it parks
 * only every VL_PARK_PROBE-th free, and a probe taken back sets it to 3 again. It parks
 * on while more than 1 in 4 are taken back (the thresholds' cost:
 * docs/caching-measured.md).
 *
 * The stream's next request of any other kind first releases the parked block into the
 * bins, as its free would have; every path that grows, reclaims, releases or reports
 * releases every stream's. So the allocator's decisions are those it makes with park=0,
 * address for address (test_caching_property runs both in lockstep and compares every
 * address); only statistics read between a free and the next request can differ (the
 * parked block is not merged with its free neighbours yet).
 *
 * Invariants (checked by vl_caching_check): a PARKED block is the `park.block` of the
 * stream that owns its pool, is in the pointer table (its free found it there; a free
 * or record_use of it is refused by its state) but not in the bins, and has no uses; a stream with one is on the allocator's parking list (park_state.h; a stream
 * may stay listed without one: the list is emptied at every release of all). */
#ifndef VL_CACHING_PARK_H
#define VL_CACHING_PARK_H

#include "caching/allocator.h"

#define VL_PARK_PROBE 32
#define VL_PARK_SCORE_MAX 64

/* Whether a stream with slot p parks its next free now (enabled: cfg.park). */
static inline int vl_park_wanted(vl_cpark *p, int enabled)
{
    return enabled && (p->score >= 0 || ++p->skipped % VL_PARK_PROBE == 0);
}

/* The request after a parked free took the block back (hit) or not. */
static inline void vl_park_score(vl_cpark *p, int hit)
{
    if (hit && p->score < 0) p->score = 0; /* a probe taken back: park again */
    p->score += hit ? 3 : -1;
    if (p->score > VL_PARK_SCORE_MAX) p->score = VL_PARK_SCORE_MAX;
    if (p->score < -VL_PARK_SCORE_MAX) p->score = -VL_PARK_SCORE_MAX;
}

/* A hit's verdict, kept while both pools' bins stay as they are (parked_is_best_fit):
 * the block, the request's pool's version and the block's own pool and its version. */
static inline void vl_park_remember(vl_cpark *p, const vl_cpool *request_pool)
{
    p->ok = p->block;
    p->ok_version = request_pool->bins.version;
    p->ok_own = p->block->seg->pool;
    p->ok_own_version = p->ok_own->bins.version;
}

/* Takes st's parked block out of its slot (PARKED still, in the pointer table: the
 * caller hands it out or releases it). */
static inline vl_cblock *vl_park_take(vl_caching *c, vl_cstream *st)
{
    vl_cblock *b = st->park.block;
    st->park.block = NULL;
    if (b->whole) c->whole_free_bytes -= (int64_t)b->size;
    b->whole = 0;
    return b;
}

/* Parks the ALLOCATED block b of stream st (no uses; its statistics already taken
 * off; its pointer-table entry stays) in st's empty slot. */
static inline void vl_park_hold(vl_caching *c, vl_cstream *st, vl_cblock *b)
{
    vl_assert_internal(b->state == VL_CB_ALLOCATED && !b->uses && b->seg->pool->stream == st && !st->park.block);
    b->state = VL_CB_PARKED; /* requested stays the caller's: only the block's size is asked */
    b->whole = !b->prev && !b->next; /* free memory of a whole segment, as a FREE block counts */
    if (b->whole) c->whole_free_bytes += (int64_t)b->size;
    st->park.block = b;
    if (!st->park.listed) {
        st->park.listed = 1;
        st->park.next = c->parking.streams;
        c->parking.streams = st;
    }
}

/* vl_park_hold, releasing the block parked there before. */
void vl_park_put(vl_caching *c, vl_cstream *st, vl_cblock *b);
/* Releases st's parked block, if any, into the bins, as its free would have. */
void vl_park_release(vl_caching *c, vl_cstream *st);
/* The same for every stream. */
void vl_park_release_all(vl_caching *c);
/* The largest parked block (0 if none), for the statistics. */
size_t vl_park_largest(const vl_caching *c);

#endif
