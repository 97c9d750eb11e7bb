/* segments=classic: every segment is one plain device allocation (cudaMalloc), sized by
 * PyTorch's rules (sizes.c), and goes back to the device only when it is entirely free
 * and the cache is trimmed, garbage-collected (gc=) or flushed after an OOM. This is
 * the configuration whose waste the scenarios show: a segment with one live block in
 * it cannot be returned, and its free parts serve only its own stream and pool. */
#include <stdlib.h>

#include "caching/allocator.h"
#include "caching/hostmem.h"
#include "caching/sizes.h"

vl_csegment *vl_segment_new(vl_caching *c, vl_cpool *p, uintptr_t base, size_t size)
{
    vl_csegment *s = vl_host_calloc(1, sizeof *s);
    if (!s) {
        vl_caching_fail_host(c, "host allocation of a segment record");
        return NULL;
    }
    s->base = base;
    s->size = size;
    s->pool = p;
    vl_segment_link(c, s);
    return s;
}

void vl_segment_link(vl_caching *c, vl_csegment *s)
{
    s->prev = NULL;
    s->next = c->segments;
    if (c->segments) c->segments->prev = s;
    c->segments = s;
}

void vl_segment_unlink(vl_caching *c, vl_csegment *s)
{
    if (s->prev) s->prev->next = s->next;
    else c->segments = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = NULL;
}

/* --- the idle heap: entirely free classic segments, oldest (lowest serial) on top --- */

static void idle_place(vl_caching *c, size_t i, vl_csegment *s)
{
    c->idle[i] = s;
    s->idle_at = i + 1;
}

static void idle_sift_up(vl_caching *c, size_t i)
{
    vl_csegment *s = c->idle[i];
    while (i > 0 && c->idle[(i - 1) / 2]->serial > s->serial) {
        idle_place(c, i, c->idle[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    idle_place(c, i, s);
}

static void idle_sift_down(vl_caching *c, size_t i)
{
    vl_csegment *s = c->idle[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= c->nidle) break;
        if (child + 1 < c->nidle && c->idle[child + 1]->serial < c->idle[child]->serial) child++;
        if (c->idle[child]->serial >= s->serial) break;
        idle_place(c, i, c->idle[child]);
        i = child;
    }
    idle_place(c, i, s);
}

void vl_classic_idle_add(vl_caching *c, vl_csegment *s)
{
    /* idle_cap >= classic segments (reserved in vl_classic_grow): never allocates. */
    c->idle[c->nidle] = s;
    idle_sift_up(c, c->nidle++);
}

void vl_classic_idle_remove(vl_caching *c, vl_csegment *s)
{
    size_t i = s->idle_at - 1;
    s->idle_at = 0;
    vl_csegment *last = c->idle[--c->nidle];
    if (i == c->nidle) return;
    idle_place(c, i, last);
    idle_sift_up(c, i);
    idle_sift_down(c, last->idle_at - 1);
}

/* Room in the idle heap for one more classic segment; 0, or -1 when out of host memory
 * (recorded). */
static int idle_reserve(vl_caching *c)
{
    if (c->nclassic < c->idle_cap) return 0;
    size_t cap = c->idle_cap ? 2 * c->idle_cap : 64;
    vl_csegment **grown = vl_host_realloc(c->idle, cap * sizeof *grown);
    if (!grown) {
        vl_caching_fail_host(c, "host allocation of the idle-segment heap");
        return -1;
    }
    c->idle = grown;
    c->idle_cap = cap;
    return 0;
}

/* Gives one entirely free segment back to the device; s is unlinked and freed. When the
 * device refuses, the segment stays cached as it was (error recorded) and 0 is returned. */
static size_t release_segment(vl_caching *c, vl_csegment *s)
{
    vl_cblock *b = s->first;
    int rc = c->dev->ops->mem_free(c->dev, (void *)s->base, s->size);
    if (rc != VL_DEV_OK) {
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "mem_free of a segment", rc);
        return 0;
    }
    vl_free_remove(c, b);
    size_t size = s->size;
    vl_slab_put(&c->blocks, b);
    vl_segment_unlink(c, s);
    free(s);
    c->nclassic--;
    c->st.reserved_bytes -= (int64_t)size;
    c->st.segments--;
    c->st.device_frees++;
    return size;
}

/* Releases entirely free segments, oldest first (PyTorch's gc order), until reserved <=
 * target (0: all). The idle heap holds exactly those segments, so this costs O(log n)
 * per segment released, not a walk of every segment. A refused release stops the
 * round (recorded; the segment stays cached for the next one). */
size_t vl_classic_release_free(vl_caching *c, size_t target)
{
    size_t released = 0;
    while (c->nidle > 0 && !((size_t)c->st.reserved_bytes <= target && target != 0)) {
        size_t got = release_segment(c, c->idle[0]);
        if (got == 0) break;
        released += got;
    }
    return released;
}

vl_cblock *vl_classic_grow(vl_caching *c, vl_cpool *p, size_t rounded, int *rc)
{
    size_t size = vl_caching_classic_segment_size(rounded);
    if (c->cfg.gc_threshold > 0) {
        /* Garbage collection: keep reserved under gc * capacity by giving back whole
         * free segments (oldest first) before asking the device for more. */
        size_t limit = (size_t)(c->cfg.gc_threshold * (double)c->dev->total_bytes);
        if ((size_t)c->st.reserved_bytes + size > limit)
            vl_classic_release_free(c, limit > size ? limit - size : 1);
    }
    if (idle_reserve(c) != 0) {
        *rc = VL_DEV_ERROR;
        return NULL;
    }
    void *ptr = NULL;
    int status = c->dev->ops->mem_alloc(c->dev, size, &ptr);
    if (status == VL_DEV_OOM) {
        *rc = VL_DEV_OOM;
        return NULL;
    }
    if (status != VL_DEV_OK) {
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "mem_alloc of a segment", status);
        *rc = VL_DEV_ERROR;
        return NULL;
    }
    vl_csegment *s = vl_segment_new(c, p, (uintptr_t)ptr, size);
    vl_cblock *b = s ? vl_caching_new_block(c) : NULL;
    if (!b) { /* out of host memory (recorded): give the segment back */
        if (s) {
            vl_segment_unlink(c, s);
            free(s);
        }
        int frc = c->dev->ops->mem_free(c->dev, ptr, size);
        if (frc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "mem_free of a segment", frc);
        *rc = VL_DEV_ERROR;
        return NULL;
    }
    s->mapped_bytes = size;
    s->serial = c->next_serial++;
    c->nclassic++;
    b->addr = s->base;
    b->size = size;
    b->seg = s;
    s->first = b;
    vl_stat_add(&c->st.reserved_bytes, &c->st.peak_reserved_bytes, (int64_t)size);
    c->st.segments++;
    c->st.device_allocs++;
    vl_free_insert(c, b);
    return b;
}
