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
    vl_addrmap_slot *slots; /* capacity = mask + 1, a power of two */
    size_t mask;
    size_t count;
} vl_addrmap;

/* 0 or -1 when out of host memory. */
int vl_addrmap_init(vl_addrmap *m, size_t initial_capacity);
void vl_addrmap_destroy(vl_addrmap *m);

static inline size_t vl_addrmap_home(const vl_addrmap *m, uintptr_t key)
{
    /* Device addresses are at least 256-byte aligned: drop the low bits, then a
     * Fibonacci multiply spreads consecutive addresses over the table. */
    return (size_t)(((uint64_t)(key >> 8) * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & m->mask;
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

/* Inserts key (which must not be present). 0, or -1 when out of host memory. */
int vl_addrmap_insert(vl_addrmap *m, uintptr_t key, uint64_t value);
/* Removes the key; returns 1 with its value in *value, or 0 if absent. */
int vl_addrmap_remove(vl_addrmap *m, uintptr_t key, uint64_t *value);

#endif
