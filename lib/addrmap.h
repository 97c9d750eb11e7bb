/* An open-addressing map from device address to a 64-bit value: the caching
 * allocator's pointer -> block table, and the simulated device's record of what it
 * handed out. O(1) lookups with no allocation on the hot path (the table only grows,
 * by doubling, when it passes half full).
 *
 * Invariants:
 *   - key 0 marks an empty slot, so address 0 is never stored (devices never hand it out);
 *   - linear probing with backward-shift deletion: no tombstones, so every key sits in
 *     the run of occupied slots that starts at its home slot, and probe lengths stay
 *     short at load factor <= 1/2. */
#ifndef VL_CACHING_ADDRMAP_H
#define VL_CACHING_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct vl_addrmap_slot {
    uintptr_t key;
    uint64_t value;
} vl_addrmap_slot;

typedef struct vl_addrmap {
    vl_addrmap_slot *slots; /* capacity = mask + 1 = 2^(64 - shift) */
    size_t mask;
    unsigned shift;
    size_t count;
} vl_addrmap;

/* 0 or -1 when out of host memory. */
int vl_addrmap_init(vl_addrmap *m, size_t initial_capacity);
void vl_addrmap_destroy(vl_addrmap *m);

static inline size_t vl_addrmap_home(const vl_addrmap *m, uintptr_t key)
{
    /* Fibonacci hashing: the TOP bits of the product depend on every bit of the key
     * (a middle slice ignored the bits above ~28 + log2(capacity), so addresses that
     * differ only there all collided), and consecutive keys spread over the table. */
    return (size_t)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift);
}

/* Returns the slot holding key, or NULL. */
static inline vl_addrmap_slot *vl_addrmap_find(const vl_addrmap *m, uintptr_t key)
{
    size_t i = vl_addrmap_home(m, key);
    for (;;) {
        vl_addrmap_slot *s = &m->slots[i];
        if (s->key == key) return s;
        if (s->key == 0) return NULL;
        i = (i + 1) & m->mask;
    }
}

int vl_addrmap_grow(vl_addrmap *m);
int vl_addrmap_remove_at(vl_addrmap *m, size_t i, uint64_t *value);

/* Inserts key (which must not be present). 0, or -1 when out of host memory. */
static inline int vl_addrmap_insert(vl_addrmap *m, uintptr_t key, uint64_t value)
{
    if ((m->count + 1) * 2 > m->mask + 1 && vl_addrmap_grow(m) != 0) return -1;
    size_t i = vl_addrmap_home(m, key);
    while (m->slots[i].key != 0) i = (i + 1) & m->mask;
    m->slots[i].key = key;
    m->slots[i].value = value;
    m->count++;
    return 0;
}

/* Removes the entry in `slot` (from vl_addrmap_find), whose value the caller has read. */
static inline void vl_addrmap_remove_slot(vl_addrmap *m, vl_addrmap_slot *slot)
{
    size_t i = (size_t)(slot - m->slots);
    if (m->slots[(i + 1) & m->mask].key != 0) {
        vl_addrmap_remove_at(m, i, NULL);
        return;
    }
    slot->key = 0;
    m->count--;
}

/* Removes the key; returns 1 with its value in *value, or 0 if absent. */
static inline int vl_addrmap_remove(vl_addrmap *m, uintptr_t key, uint64_t *value)
{
    size_t i = vl_addrmap_home(m, key);
    for (;;) {
        if (m->slots[i].key == 0) return 0;
        if (m->slots[i].key == key) break;
        i = (i + 1) & m->mask;
    }
    if (m->slots[(i + 1) & m->mask].key != 0) return vl_addrmap_remove_at(m, i, value);
    /* The common case: the probe run ends here, nothing to shift. */
    if (value) *value = m->slots[i].value;
    m->slots[i].key = 0;
    m->count--;
    return 1;
}

#endif
