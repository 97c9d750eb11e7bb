/* Fixed-size object pools for the caching allocator's own records (block headers,
 * stream-use and pending-event nodes): allocation is a pop from a free list, so the
 * hot path never calls malloc; the pool grows by whole chunks and gives memory back
 * only when destroyed.
 *
 * Invariant: every object lives in exactly one chunk and is either handed out or on
 * the free list, never both. */
#ifndef VL_CACHING_SLAB_H
#define VL_CACHING_SLAB_H

#include <stddef.h>

typedef struct vl_slab_free { struct vl_slab_free *next; } vl_slab_free;

typedef struct vl_slab {
    size_t item_size;     /* >= sizeof(vl_slab_free), a multiple of the pointer size */
    size_t items_per_chunk;
    void *chunks;         /* singly linked through each chunk's first word */
    vl_slab_free *free_list;
    size_t live;          /* objects handed out */
} vl_slab;

void vl_slab_init(vl_slab *s, size_t item_size, size_t items_per_chunk);
void vl_slab_destroy(vl_slab *s);
/* Grows the pool by one chunk; 0 or -1 when out of host memory. */
int vl_slab_grow(vl_slab *s);

/* An object with undefined contents (the caller initialises it), or NULL when out of
 * host memory. */
static inline void *vl_slab_get(vl_slab *s)
{
    if (!s->free_list && vl_slab_grow(s) != 0) return NULL;
    vl_slab_free *f = s->free_list;
    s->free_list = f->next;
    s->live++;
    return f;
}

static inline void vl_slab_put(vl_slab *s, void *p)
{
    vl_slab_free *f = p;
    f->next = s->free_list;
    s->free_list = f;
    s->live--;
}

#endif
