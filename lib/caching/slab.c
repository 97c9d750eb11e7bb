/* Fixed-size object pools (see slab.h). */
#include "caching/slab.h"

#include <stdlib.h>

#include "caching/hostmem.h"

void vl_slab_init(vl_slab *s, size_t item_size, size_t items_per_chunk)
{
    size_t align = sizeof(void *);
    if (item_size < sizeof(vl_slab_free)) item_size = sizeof(vl_slab_free);
    s->item_size = (item_size + align - 1) / align * align;
    s->items_per_chunk = items_per_chunk;
    s->chunks = NULL;
    s->free_list = NULL;
    s->live = 0;
}

void vl_slab_destroy(vl_slab *s)
{
    while (s->chunks) {
        void *next = *(void **)s->chunks;
        free(s->chunks);
        s->chunks = next;
    }
    s->free_list = NULL;
    s->live = 0;
}

int vl_slab_grow(vl_slab *s)
{
    /* The first item-sized slot of a chunk holds the chunk link. Cache-line aligned, so
     * 64-byte items (block headers) never straddle two lines. */
    size_t bytes = (s->item_size * (s->items_per_chunk + 1) + 63) / 64 * 64;
    char *chunk = vl_host_aligned_alloc(64, bytes);
    if (!chunk) return -1;
    *(void **)chunk = s->chunks;
    s->chunks = chunk;
    /* Push in reverse so objects are handed out in address order (friendlier caches). */
    for (size_t i = s->items_per_chunk; i >= 1; i--) {
        vl_slab_free *f = (vl_slab_free *)(chunk + i * s->item_size);
        f->next = s->free_list;
        s->free_list = f;
    }
    return 0;
}
