/* Parking's slower half (park.h): parking a freed block, and releasing parked blocks
 * into the bins, as their frees would have. */
#include "caching/park.h"

void vl_park_release(vl_caching *c, vl_cstream *st)
{
    if (!st->park.block) return;
    vl_cblock *b = vl_park_take(c, st);
    uint64_t value;
    int found = vl_addrmap_remove(&c->table, b->addr, &value);
    vl_assert_internal(found && value == (uint64_t)(uintptr_t)b);
    (void)found;
    vl_caching_release_block(c, b);
}

void vl_park_put(vl_caching *c, vl_cstream *st, vl_cblock *b)
{
    vl_park_release(c, st);
    vl_park_hold(c, st, b);
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
