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
    c->st.reserved_bytes -= (int64_t)size;
    c->st.segments--;
    c->st.device_frees++;
    return size;
}

/* Releases entirely free segments, oldest first (PyTorch's gc order; the list is
 * newest-first, so it is walked from the tail), until reserved <= target (0: all). */
size_t vl_classic_release_free(vl_caching *c, size_t target)
{
    vl_csegment *tail = c->segments;
    while (tail && tail->next) tail = tail->next;
    size_t released = 0;
    for (vl_csegment *s = tail; s;) {
        vl_csegment *older_to_newer = s->prev;
        if ((size_t)c->st.reserved_bytes <= target && target != 0) break;
        if (!s->expandable && s->first->state == VL_CB_FREE && !s->first->next)
            released += release_segment(c, s);
        s = older_to_newer;
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
