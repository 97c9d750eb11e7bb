/* The pinned host memory cache (see host_cache.h). Blocks live in one array, searched
 * linearly: a pinned pool holds hundreds of blocks, not millions. */
#include "host_cache.h"

#include <stdlib.h>

typedef struct host_block {
    void *ptr;
    size_t size;      /* pinned size (rounded) */
    size_t requested; /* 0 while cached */
    int in_use;
} host_block;

struct vl_host_cache {
    vl_host_rounding rounding;
    vl_host_pinner pinner;
    host_block *blocks;
    size_t n, cap;
    vl_host_cache_stats st;
};

size_t vl_host_round(vl_host_rounding rounding, size_t size)
{
    if (size == 0 || rounding == VL_HOST_ROUND_EXACT) return size;
    size_t p = 1;
    while (p < size) {
        if (p > SIZE_MAX / 2) return 0;
        p <<= 1;
    }
    return p;
}

vl_host_cache *vl_host_cache_create(vl_host_rounding rounding, const vl_host_pinner *pinner)
{
    vl_host_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->rounding = rounding;
    c->pinner = *pinner;
    return c;
}

static void note_peaks(vl_host_cache_stats *st)
{
    if (st->requested_bytes > st->peak_requested_bytes) st->peak_requested_bytes = st->requested_bytes;
    if (st->held_bytes > st->peak_held_bytes) st->peak_held_bytes = st->held_bytes;
}

void *vl_host_cache_alloc(vl_host_cache *c, size_t size)
{
    size_t rounded = vl_host_round(c->rounding, size);
    if (rounded == 0) return NULL;
    for (size_t i = 0; i < c->n; i++) {
        host_block *b = &c->blocks[i];
        if (!b->in_use && b->size == rounded) {
            b->in_use = 1;
            b->requested = size;
            c->st.cached_bytes -= rounded;
            c->st.requested_bytes += size;
            c->st.cache_hits++;
            note_peaks(&c->st);
            return b->ptr;
        }
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        host_block *grown = realloc(c->blocks, cap * sizeof *grown);
        if (!grown) return NULL;
        c->blocks = grown;
        c->cap = cap;
    }
    void *ptr = NULL;
    if (c->pinner.pin(c->pinner.ctx, rounded, &ptr) != 0 || !ptr) return NULL;
    c->blocks[c->n++] = (host_block){.ptr = ptr, .size = rounded, .requested = size, .in_use = 1};
    c->st.pins++;
    c->st.held_bytes += rounded;
    c->st.requested_bytes += size;
    note_peaks(&c->st);
    return ptr;
}

int vl_host_cache_free(vl_host_cache *c, void *ptr)
{
    for (size_t i = 0; i < c->n; i++) {
        host_block *b = &c->blocks[i];
        if (b->ptr != ptr) continue;
        if (!b->in_use) return -1;
        b->in_use = 0;
        c->st.requested_bytes -= b->requested;
        c->st.cached_bytes += b->size;
        b->requested = 0;
        return 0;
    }
    return -1;
}

/* Unpins the blocks that are cached (all_blocks: every block) and compacts the array. */
static uint64_t unpin_blocks(vl_host_cache *c, int all_blocks)
{
    uint64_t released = 0;
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        host_block *b = &c->blocks[i];
        if (b->in_use && !all_blocks) {
            c->blocks[kept++] = *b;
            continue;
        }
        c->pinner.unpin(c->pinner.ctx, b->ptr, b->size);
        c->st.unpins++;
        c->st.held_bytes -= b->size;
        if (b->in_use)
            c->st.requested_bytes -= b->requested;
        else
            c->st.cached_bytes -= b->size;
        released += b->size;
    }
    c->n = kept;
    return released;
}

uint64_t vl_host_cache_empty(vl_host_cache *c) { return unpin_blocks(c, 0); }

void vl_host_cache_stats_get(const vl_host_cache *c, vl_host_cache_stats *st) { *st = c->st; }

void vl_host_cache_destroy(vl_host_cache *c)
{
    if (!c) return;
    unpin_blocks(c, 1);
    free(c->blocks);
    free(c);
}
