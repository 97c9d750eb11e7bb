/* Stream-ordered release of expandable spans (spans.h; up to cfg.span each, 64 MiB by default):
 * unmap memory only once the work that
 * used it is known complete, without waiting for the device on the alloc/free path.
 *
 * Why: cuMemUnmap does not wait for queued work, and a chunk freed in stream order may
 * still be read by kernels queued before the free. Waiting for the device before every
 * unmap would stall each allocation that reclaims behind all the queued work.
 *
 * How:
 *   - reclaim (expandable_reclaim.c) turns the free chunks it gives up into RETIRING
 *     blocks: out of the bins, still mapped, never reused; one event recorded on the
 *     stream whose pools hold them covers them all (a batch). That stream is alive: the
 *     caller is allocating on it right now. Programs may destroy a stream while the
 *     allocator caches its blocks, so nothing is ever recorded on (or synchronized
 *     with) a stream other than the one the caller hands us;
 *   - FREE blocks have no other users to wait for: a block used on other streams
 *     (record_use) stays PENDING until events on those streams complete (events.c);
 *     a block freed without record_use is reusable by its own stream at once anyway;
 *   - batches are queried (cudaEventQuery, never synchronized) oldest first at each
 *     alloc; a complete batch's chunks are unmapped, in one pass, and their physical
 *     memory kept as spares that the next map of a span it fits takes (no
 *     cuMemCreate / cuMemRelease, no zeroing of fresh memory);
 *   - hysteresis: spares stay while reserved <= (1 + reclaim) x the allocated
 *     high-water mark plus what the last reclaim retired, and only the surplus goes back
 *     to the device, so memory about to be mapped again is not released and created
 *     again (on a GPU a batch is rarely complete when its reclaim maps: the next
 *     reclaim's mapping takes its memory);
 *   - lending: the mapping that a reclaim made room for is on the same stream as the
 *     chunks it retired, and work queued later on a stream runs after the work queued
 *     before. So that mapping takes the retiring chunks' memory at once (phys_share +
 *     map_phys: the same memory under two addresses) instead of fresh memory; the old
 *     addresses are unmapped when the batch's event completes, without releasing the
 *     memory. On a GPU the batch is rarely complete when its reclaim maps, and without
 *     lending reserved would hold both the retiring and the fresh memory at the peak;
 *   - only trim, close and device memory pressure wait for the device (drain): there,
 *     waiting is the point.
 *
 * Invariants (allocator.h): every RETIRING block is in exactly one batch; a batch's
 * chunks are unmapped only after its event completed or the device was synchronized;
 * batches complete in FIFO order (a younger one on another stream may wait behind an
 * older one: later, never earlier); spare memory is counted in reserved_bytes, memory
 * mapped twice (lent) once; only chunks of the batch made by the current reclaim, on
 * the stream that maps, are lent, and only to that mapping. */
#include "caching/allocator.h"
#include "caching/chunks.h"
#include "clock.h"


/* Spare lists by size class: list k holds sizes in [2^k, 2^(k+1)). */
static unsigned spare_class(size_t size) { return 63u - (unsigned)__builtin_clzll((unsigned long long)size); }

/* How many spares of one class a map looks at for one that fits. */
#define VL_SPARE_PROBES 4

/* addr + size ends on a chunk boundary of s (spans are made of whole chunks). */
static int ends_on_chunk(const vl_csegment *s, uintptr_t addr, size_t size)
{
    return vl_chunk_is_boundary(s->granule, s->chunk, addr + size - s->base);
}

/* The link to the largest spare (by class, a few probes each) that fits `room` at addr
 * of s, or NULL. Every spare of a class below room's fits by size. */
static vl_cspare **fitting_spare(vl_caching *c, const vl_csegment *s, uintptr_t addr, size_t room)
{
    for (unsigned k = spare_class(room) + 1; k-- > 0;) {
        int probes = 0;
        for (vl_cspare **link = &c->spares[k]; *link && probes < VL_SPARE_PROBES; link = &(*link)->next, probes++)
            if ((*link)->size <= room && ends_on_chunk(s, addr, (*link)->size)) return link;
    }
    return NULL;
}

int vl_release_map_span(vl_caching *c, const vl_csegment *s, uintptr_t addr, size_t room, size_t *size)
{
    vl_cspare **link = c->spare_bytes > 0 ? fitting_spare(c, s, addr, room) : NULL;
    if (link) {
        vl_cspare *sp = *link;
        int rc = c->dev->ops->map_phys(c->dev, (void *)addr, sp->size, sp->phys);
        if (rc == VL_DEV_OK) {
            *size = sp->size;
            *link = sp->next;
            c->spare_bytes -= (int64_t)sp->size;
            vl_slab_put(&c->nodes, sp);
            return VL_DEV_OK;
        }
        if (rc != VL_DEV_OOM) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "map of kept memory", rc);
        /* the spare stays; try fresh memory */
    }
    int rc = c->dev->ops->map(c->dev, (void *)addr, room);
    if (rc != VL_DEV_OK) return rc;
    *size = room;
    vl_stat_add(&c->st.reserved_bytes, &c->st.peak_reserved_bytes, (int64_t)room);
    return VL_DEV_OK;
}

int vl_release_unmap_span(vl_caching *c, uintptr_t addr, size_t size, int keep)
{
    vl_cspare *sp = keep ? vl_slab_get(&c->nodes) : NULL; /* no node: give it back instead */
    int rc;
    if (sp) {
        rc = c->dev->ops->unmap_keep(c->dev, (void *)addr, size, &sp->phys);
        if (rc == VL_DEV_OK) {
            vl_cspare **head = &c->spares[spare_class(size)];
            sp->size = size;
            sp->next = *head;
            *head = sp;
            c->spare_bytes += (int64_t)size;
        } else {
            vl_slab_put(&c->nodes, sp);
        }
    } else {
        rc = c->dev->ops->unmap(c->dev, (void *)addr, size);
        if (rc == VL_DEV_OK) c->st.reserved_bytes -= (int64_t)size;
    }
    if (rc != VL_DEV_OK) {
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "unmap of a span", rc);
        return rc;
    }
    c->st.segments--;
    c->st.device_frees++;
    return VL_DEV_OK;
}

int64_t vl_release_spare_cap(const vl_caching *c)
{
    double reclaim = c->budget.value > 0 ? c->budget.value : 0;
    return (int64_t)((1.0 + reclaim) * (double)c->allocated_high_water) + c->last_batch_bytes;
}

void vl_release_spares(vl_caching *c, int64_t target)
{
    for (unsigned k = VL_SPARE_CLASSES; k-- > 0 && c->spare_bytes > 0 && c->st.reserved_bytes > target;) {
        while (c->spares[k] && (c->st.reserved_bytes > target || target == 0)) {
            vl_cspare *sp = c->spares[k];
            int rc = c->dev->ops->phys_release(c->dev, sp->phys, sp->size);
            if (rc != VL_DEV_OK) { /* kept for a later try (recorded) */
                vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "release of kept memory", rc);
                return;
            }
            c->spares[k] = sp->next;
            c->spare_bytes -= (int64_t)sp->size;
            c->st.reserved_bytes -= (int64_t)sp->size;
            vl_slab_put(&c->nodes, sp);
        }
    }
}

size_t vl_release_lend_span(vl_caching *c, vl_clend *l, const vl_csegment *s, uintptr_t addr, size_t room)
{
    if (!l->batch) return 0;
    if (l->at == l->block->addr + l->block->size) {
        l->block = l->block->retire_next;
        if (l->block) l->at = l->block->addr;
    }
    size_t size = l->block ? vl_expandable_span_at(l->block->seg, l->at) : 0;
    if (!size || size > room || !ends_on_chunk(s, addr, size)) { /* lent spans stay a prefix */
        l->batch = NULL;
        return 0;
    }
    vl_phys phys = NULL;
    int rc = c->dev->ops->phys_share(c->dev, (void *)l->at, size, &phys);
    if (rc == VL_DEV_OK) {
        rc = c->dev->ops->map_phys(c->dev, (void *)addr, size, phys);
        if (rc != VL_DEV_OK) (void)c->dev->ops->phys_release(c->dev, phys, size); /* drops the handle only */
    }
    if (rc != VL_DEV_OK) {
        if (rc != VL_DEV_OOM) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "map of a lent span", rc);
        l->batch = NULL; /* fresh memory instead */
        return 0;
    }
    l->at += size;
    l->batch->lent += size;
    c->lent_bytes += (int64_t)size;
    /* Lent bytes are a prefix of the batch, each block from its low end. */
    vl_assert_internal(l->at <= l->block->addr + l->block->size);
    return size;
}

void vl_release_unlend_span(vl_caching *c, vl_cretire *batch, uintptr_t addr, size_t size)
{
    int rc = c->dev->ops->unmap_shared(c->dev, (void *)addr, size);
    if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "unmap of a lent span", rc);
    batch->lent -= size;
    c->lent_bytes -= (int64_t)size;
}

int vl_release_unmap_lent_span(vl_caching *c, uintptr_t addr, size_t size)
{
    int rc = c->dev->ops->unmap_shared(c->dev, (void *)addr, size);
    if (rc != VL_DEV_OK) {
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "unmap of a lent span", rc);
        return rc;
    }
    c->lent_bytes -= (int64_t)size;
    c->st.segments--;
    c->st.device_frees++;
    return VL_DEV_OK;
}

int vl_release_requeue(vl_caching *c, vl_cblock *b, size_t lent)
{
    vl_cretire *r = vl_slab_get(&c->nodes);
    if (!r) {
        vl_caching_fail_host(c, "host allocation of a retire batch");
        return -1;
    }
    *r = (vl_cretire){NULL, b, NULL, lent};
    b->retire_next = NULL;
    c->retiring_bytes += (int64_t)b->size;
    if (c->retire_tail) c->retire_tail->next = r;
    else c->retire_head = r;
    c->retire_tail = r;
    return 0;
}

/* Unmaps a batch's blocks (the first `lent` bytes lent) once its event is released or absent. */
static void finish_batch(vl_caching *c, vl_cblock *blocks, int keep, size_t lent)
{
    for (vl_cblock *b = blocks, *next; b; b = next) {
        next = b->retire_next;
        size_t lent_here = lent < b->size ? lent : b->size;
        lent -= lent_here;
        vl_expandable_finish_retire(c, b, keep, lent_here);
    }
}

vl_cretire *vl_release_queue(vl_caching *c, vl_cstream *st, vl_cblock *list)
{
    if (!list) return NULL;
    vl_cretire *r = vl_slab_get(&c->nodes);
    int rc = VL_DEV_ERROR;
    if (!r) vl_caching_fail_host(c, "host allocation of a retire batch");
    else if ((rc = c->dev->ops->event_record(c->dev, st->handle, &r->event)) != VL_DEV_OK)
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "event_record for a retire batch", rc);
    if (rc != VL_DEV_OK) {
        /* No event: wait for the device instead, then unmap now. If even that fails the
         * device is lost and nothing runs on it any more. */
        if (r) vl_slab_put(&c->nodes, r);
        int src = c->dev->ops->synchronize(c->dev);
        if (src != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "synchronize", src);
        finish_batch(c, list, 1, 0);
        return NULL;
    }
    r->blocks = list;
    r->next = NULL;
    r->lent = 0;
    vl_assert_internal(list->state == VL_CB_RETIRING && (c->retire_tail == NULL) == (c->retire_head == NULL));
    c->last_batch_bytes = 0;
    for (const vl_cblock *b = list; b; b = b->retire_next) c->last_batch_bytes += (int64_t)b->size;
    if (c->retire_tail) c->retire_tail->next = r;
    else c->retire_head = r;
    c->retire_tail = r;
    return r;
}

void vl_release_process(vl_caching *c, int all)
{
    vl_cretire *r, *last = c->retire_tail; /* not the batches requeued by this pass */
    for (int more = last != NULL; more && (r = c->retire_head) != NULL;) {
        more = r != last;
        if (!all && r->event) {
            int done = c->dev->ops->event_query(c->dev, r->event);
            /* A failed query: the device lost the work (errors are sticky); unmapping is
             * then harmless, holding the memory for ever is not. */
            if (done < 0) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "event_query of a retire batch", done);
            if (done == 0) break;
        }
        c->retire_head = r->next;
        if (!c->retire_head) c->retire_tail = NULL;
        if (r->event) c->dev->ops->event_release(c->dev, r->event);
        vl_cblock *blocks = r->blocks;
        size_t lent = r->lent; /* lent_bytes goes down chunk by chunk as they are unmapped */
        vl_assert_internal((int64_t)lent <= c->lent_bytes && c->retiring_bytes >= 0);
        vl_slab_put(&c->nodes, r);
        /* The stream-ordered unmaps of relocation (drains, all = 1, are trim and pressure). */
        uint64_t t0 = all ? 0 : vl_now_ns();
        finish_batch(c, blocks, !all, lent);
        if (!all) c->relocation.unmap_ns += (int64_t)(vl_now_ns() - t0);
    }
    if (!all && c->spare_bytes > 0) vl_release_spares(c, vl_release_spare_cap(c));
}

void vl_release_drain(vl_caching *c)
{
    if (c->retire_head) {
        int rc = c->dev->ops->synchronize(c->dev);
        if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "synchronize", rc);
        vl_release_process(c, 1);
    }
    vl_release_spares(c, 0);
}
