/* Cross-stream use: record_use(ptr, s) notes that stream s also works on a block; when
 * the block is freed, an event is recorded on each such stream and the block stays
 * PENDING (active, not reusable) until all of them completed. Without record_use a
 * free makes the block reusable by its own stream at once, even while another stream
 * still reads it: PyTorch's record_stream contract, race included.
 *
 * Pending events sit in one FIFO per stream where they were recorded; events on one
 * stream complete in order, so processing asks only the oldest of each FIFO until one
 * is still running. */
#include "caching/allocator.h"

int vl_caching_record_use(vl_caching *c, void *ptr, vl_stream s)
{
    if (c->plan && vl_plan_owns(c->plan, ptr)) return vl_plan_record_use(c, ptr, s);
    vl_addrmap_slot *slot = vl_addrmap_find(&c->table, (uintptr_t)ptr);
    if (!slot || ((vl_cblock *)(uintptr_t)slot->value)->state != VL_CB_ALLOCATED) { /* PARKED: freed */
        fprintf(stderr, "caching: record_use of %p, which is not allocated here; ignored\n", ptr);
        return VL_UNSUPPORTED;
    }
    vl_cblock *b = (vl_cblock *)(uintptr_t)slot->value;
    vl_cstream *st = vl_caching_stream(c, s);
    if (!st) return VL_FAILED;
    if (st == b->seg->pool->stream) return VL_OK; /* its own stream orders reuse already */
    for (vl_cuse *u = b->uses; u; u = u->next)
        if (u->stream == st) return VL_OK;
    vl_cuse *u = vl_slab_get(&c->nodes);
    if (!u) {
        vl_caching_fail_host(c, "host allocation of a stream-use record");
        return VL_FAILED;
    }
    *u = (vl_cuse){.stream = st, .next = b->uses};
    b->uses = u;
    return VL_OK;
}

/* Records an event on st for block b, queued in st's FIFO; 0, or -1 when no node or
 * event could be had (recorded). */
static int queue_event(vl_caching *c, vl_cstream *st, vl_cblock *b)
{
    vl_cpending *p = vl_slab_get(&c->nodes);
    if (!p) {
        vl_caching_fail_host(c, "host allocation of a pending-event record");
        return -1;
    }
    int rc = c->dev->ops->event_record(c->dev, st->handle, &p->event);
    if (rc != VL_DEV_OK) {
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "event_record", rc);
        vl_slab_put(&c->nodes, p);
        return -1;
    }
    p->block = b;
    p->next = NULL;
    if (st->pending_tail) {
        st->pending_tail->next = p;
    } else { /* the FIFO was empty: the stream joins the list of streams to ask */
        st->pending_head = p;
        st->next_waiting = c->waiting_streams;
        c->waiting_streams = st;
    }
    st->pending_tail = p;
    b->pending_events++;
    c->npending++;
    return 0;
}

void vl_caching_defer_free(vl_caching *c, vl_cblock *b)
{
    vl_cuse *uses = b->uses; /* shares space with pending_events (block.h) */
    b->state = VL_CB_PENDING;
    b->pending_events = 0;
    int waited = 0;
    for (vl_cuse *u = uses, *next; u; u = next) {
        next = u->next;
        vl_cstream *st = u->stream;
        vl_slab_put(&c->nodes, u);
        if (waited || queue_event(c, st, b) == 0) continue;
        /* No event: wait for the whole device instead, which covers this stream and the
         * rest. If even that fails the device is lost and nothing will run on it again. */
        int rc = c->dev->ops->synchronize(c->dev);
        if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "synchronize", rc);
        waited = 1;
    }
    if (b->pending_events == 0) {
        c->st.active_bytes -= (int64_t)b->size;
        vl_caching_release_block(c, b);
    }
}

void vl_caching_process_events(vl_caching *c, int wait)
{
    if (!c->npending) return;
    if (wait) {
        int rc = c->dev->ops->synchronize(c->dev);
        if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "synchronize", rc); /* ask each event */
    }
    /* Only streams with events to ask (an allocator may know 10^4 streams). */
    for (vl_cstream **link = &c->waiting_streams, *st; (st = *link) != NULL;) {
        vl_cpending *p;
        while ((p = st->pending_head) != NULL) {
            int done = c->dev->ops->event_query(c->dev, p->event);
            /* A failed query: the device lost the work (CUDA errors are sticky), so the
             * event is taken as complete rather than holding its block for ever. */
            if (done < 0) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "event_query", done);
            if (done == 0) break;
            st->pending_head = p->next;
            if (!st->pending_head) st->pending_tail = NULL;
            c->dev->ops->event_release(c->dev, p->event);
            vl_cblock *b = p->block;
            vl_slab_put(&c->nodes, p);
            c->npending--;
            if (--b->pending_events == 0) {
                c->st.active_bytes -= (int64_t)b->size;
                vl_caching_release_block(c, b);
            }
        }
        if (st->pending_head) {
            link = &st->next_waiting;
        } else {
            *link = st->next_waiting;
            st->next_waiting = NULL;
        }
    }
}
