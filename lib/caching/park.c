/* Parking's slower half (park.h): parking a freed block, and releasing parked blocks
 * into the bins, as their frees would have. */
#include "caching/park.h"

void vl_park_release(vl_caching *c, vl_cstream *st)
{
    if (!st->park.block) return;
    vl_caching_release_block(c, vl_park_take(c, st));
}

void vl_park_put(vl_caching *c, vl_cstream *st, vl_cblock *b)
{
    vl_park_release(c, st);
    vl_assert_internal(b->state == VL_CB_ALLOCATED && !b->uses && b->seg->pool->stream == st);
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

void vl_park_release_all(vl_caching *c)
{
    while (c->parking.streams) {
        vl_cstream *st = c->parking.streams;
        c->parking.streams = st->park.next;
        st->park.next = NULL;
        st->park.listed = 0;
        vl_park_release(c, st);
    }
}

size_t vl_park_largest(const vl_caching *c)
{
    size_t largest = 0;
    for (const vl_cstream *st = c->parking.streams; st; st = st->park.next)
        if (st->park.block && st->park.block->size > largest) largest = st->park.block->size;
    return largest;
}
