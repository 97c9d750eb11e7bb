/* Parking's slower half (park.h): parking a freed block, and releasing parked blocks
 * into the bins, as their frees would have. */
#include "caching/park.h"

void vl_park_release(vl_caching *c, vl_cstream *st)
{
    if (!st->parked) return;
    vl_caching_release_block(c, vl_park_take(c, st));
}

void vl_park_put(vl_caching *c, vl_cstream *st, vl_cblock *b)
{
    vl_park_release(c, st);
    b->state = VL_CB_PARKED; /* requested stays the caller's: only the block's size is asked */
    b->whole = !b->prev && !b->next; /* free memory of a whole segment, as a FREE block counts */
    if (b->whole) c->whole_free_bytes += (int64_t)b->size;
    st->parked = b;
    if (!st->on_parked_list) {
        st->on_parked_list = 1;
        st->next_parked = c->parked_streams;
        c->parked_streams = st;
    }
}

void vl_park_release_all(vl_caching *c)
{
    while (c->parked_streams) {
        vl_cstream *st = c->parked_streams;
        c->parked_streams = st->next_parked;
        st->next_parked = NULL;
        st->on_parked_list = 0;
        vl_park_release(c, st);
    }
}

size_t vl_park_largest(const vl_caching *c)
{
    size_t largest = 0;
    for (const vl_cstream *st = c->parked_streams; st; st = st->next_parked)
        if (st->parked && st->parked->size > largest) largest = st->parked->size;
    return largest;
}
