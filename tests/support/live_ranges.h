/* The tests' own record of the blocks an allocator has handed out and not yet taken
 * back: address ranges kept sorted and pairwise disjoint, so a block that overlaps a
 * live one (a duplicated or lost block) is seen the moment it is handed out.
 * Binary search plus memmove: meant for hundreds to thousands of live blocks. Not
 * thread-safe; a multi-threaded test wraps it in its own lock. */
#ifndef VL_TEST_LIVE_RANGES_H
#define VL_TEST_LIVE_RANGES_H

#include <stddef.h>
#include <stdint.h>

typedef struct live_range {
    uintptr_t lo, hi;  /* [lo, hi) */
    size_t requested;  /* what the caller asked for (hi - lo is the block as handed out) */
    int owner;         /* e.g. the thread that holds it */
} live_range;

typedef struct live_ranges {
    live_range *v; /* sorted by lo, pairwise disjoint */
    size_t n, cap;
} live_ranges;

/* Inserts r unless it overlaps a live range; then returns that range and inserts nothing. */
const live_range *live_ranges_add(live_ranges *s, live_range r);
/* Removes and returns the range at index i (i < s->n). */
live_range live_ranges_take(live_ranges *s, size_t i);
/* Index of the range that starts at lo, or -1. */
ptrdiff_t live_ranges_find(const live_ranges *s, uintptr_t lo);
void live_ranges_free(live_ranges *s);

#endif
