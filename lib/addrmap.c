/* Open-addressing address map (see addrmap.h for the invariants). */
#include "addrmap.h"

#include <stdlib.h>

#include "caching/hostmem.h"

int vl_addrmap_init(vl_addrmap *m, size_t initial_capacity)
{
    size_t cap = 64;
    while (cap < initial_capacity) cap <<= 1;
    m->slots = vl_host_calloc(cap, sizeof *m->slots);
    if (!m->slots) return -1;
    m->mask = cap - 1;
    m->shift = (unsigned)__builtin_clzll((unsigned long long)cap) + 1; /* 64 - log2(cap) */
    m->count = 0;
    return 0;
}

void vl_addrmap_destroy(vl_addrmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->mask = 0;
    m->count = 0;
}

static void place(vl_addrmap *m, uintptr_t key, uint64_t value)
{
    size_t i = vl_addrmap_home(m, key);
    while (m->slots[i].key != 0) i = (i + 1) & m->mask;
    m->slots[i].key = key;
    m->slots[i].value = value;
}

int vl_addrmap_grow(vl_addrmap *m)
{
    vl_addrmap old = *m;
    size_t cap = (old.mask + 1) * 2;
    m->slots = vl_host_calloc(cap, sizeof *m->slots);
    if (!m->slots) {
        *m = old;
        return -1;
    }
    m->mask = cap - 1;
    m->shift = old.shift - 1;
    for (size_t i = 0; i <= old.mask; i++)
        if (old.slots[i].key != 0) place(m, old.slots[i].key, old.slots[i].value);
    free(old.slots);
    return 0;
}

int vl_addrmap_remove_at(vl_addrmap *m, size_t i, uint64_t *value)
{
    if (value) *value = m->slots[i].value;
    /* Backward-shift deletion: pull later members of the probe run into the hole when
     * the hole lies on their path from their home slot, so lookups never need tombstones. */
    size_t hole = i;
    size_t j = i;
    for (;;) {
        j = (j + 1) & m->mask;
        if (m->slots[j].key == 0) break;
        size_t home = vl_addrmap_home(m, m->slots[j].key);
        /* Move j to hole unless home lies cyclically in (hole, j]. */
        int home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_in_range) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = 0;
    m->slots[hole].value = 0;
    m->count--;
    return 1;
}
