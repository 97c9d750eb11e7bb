/* segments=expandable: reclaim and the end of retirement (expandable.h). A stream over
 * its cap retires its own free spans, largest free blocks first and those next to a
 * hole before any (retiring beside a hole grows it; a new hole between live blocks
 * strands a partly used chunk either side); memory pressure takes any stream's after
 * waiting for the device. A retired block becomes UNMAPPED once its batch's event
 * completed (release.c), or, after a refused unmap, partly FREE again or queued again.
 * Invariants: a RETIRING block covers whole spans, carries the header a refused unmap
 * needs to split it, and is out of its stream's reserved (segments_expandable.c). */
#include "caching/expandable.h"

/* How many free blocks reclaim looks at for ones next to a hole before it takes any. */
#define VL_RECLAIM_EDGE_PROBES 32

static int next_to_hole(const vl_cblock *b)
{
    return (b->prev && b->prev->state == VL_CB_UNMAPPED) || (b->next && b->next->state == VL_CB_UNMAPPED);
}

/* Retires free chunks of stream st's pools into *list, largest free blocks first, found
 * through the bins (only classes that can hold a whole chunk are visited), until
 * *released reaches bytes. A class is walked from its largest block down by key, so the
 * remainders that retiring leaves (smaller keys, holding no whole chunk) are at most
 * looked at again.
 *
 * Two sweeps: first only blocks next to an unmapped hole (at most VL_RECLAIM_EDGE_PROBES
 * looked at), then any. Retiring chunks of a block next to a hole grows that hole; a
 * block between two live ones gets a new hole in its middle, with a partly used chunk
 * either side that only small requests can use: remnants that no reclaim can take. */
void vl_expandable_reclaim_stream(vl_caching *c, vl_cstream *st, size_t bytes, const vl_cblock *keep1,
                           const vl_cblock *keep2, size_t *released, vl_cblock **list)
{
    int lowest = (int)vl_bin_index(c->dev->granularity); /* smaller blocks hold no chunk */
    for (int edges_only = 1; edges_only >= 0 && *released < bytes; edges_only--) {
        int probes = 0;
        for (int k = 0; k < 2 && *released < bytes; k++) {
            vl_cpool *p = &st->pools[k];
            if (!p->ranges) continue;
            for (int j = vl_bins_prev_nonempty(&p->bins, VL_BIN_COUNT); j >= lowest && *released < bytes;
                 j = vl_bins_prev_nonempty(&p->bins, (unsigned)j)) {
                for (vl_cblock *b = vl_bins_last(&p->bins, (unsigned)j); b && *released < bytes;) {
                    if (edges_only && probes++ >= VL_RECLAIM_EDGE_PROBES) goto next_sweep;
                    size_t size = b->size;
                    uintptr_t addr = b->addr;
                    vl_cblock *right;
                    if (b != keep1 && b != keep2 && (!edges_only || next_to_hole(b)))
                        vl_expandable_retire_free_block(c, b->seg, b, bytes - *released, released, list, &right);
                    b = vl_bins_before(&p->bins, (unsigned)j, size, addr);
                }
            }
        }
    next_sweep:;
    }
}

/* Memory pressure: waits for the device (the point here), completes every retire
 * batch, gives kept memory back, and unmaps up to `bytes` of any stream's wholly free
 * chunks but keep1/keep2 (the FREE neighbours the new mapping extends). Returns the
 * bytes given back to the device. */
size_t vl_expandable_reclaim_under_pressure(vl_caching *c, size_t bytes, const vl_cblock *keep1,
                                            const vl_cblock *keep2)
{
    int64_t before = c->st.reserved_bytes;
    int rc = c->dev->ops->synchronize(c->dev);
    if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "synchronize", rc);
    vl_release_process(c, 1);
    vl_release_spares(c, 0);
    size_t released = 0;
    vl_cblock *list = NULL;
    for (size_t i = 0; i < c->nstreams && released < bytes; i++)
        vl_expandable_reclaim_stream(c, c->streams[i], bytes, keep1, keep2, &released, &list);
    for (vl_cblock *b = list, *next; b; b = next) {
        next = b->retire_next;
        vl_expandable_finish_retire(c, b, 0, 0);
    }
    return (size_t)(before - c->st.reserved_bytes);
}

/* Makes b (not in the holes) UNMAPPED, merged with UNMAPPED neighbours, and puts the
 * result in the pool's holes; returns it. */
static vl_cblock *merge_unmapped(vl_caching *c, vl_csegment *s, vl_cblock *b)
{
    b->state = VL_CB_UNMAPPED;
    vl_cblock *prev = b->prev, *next = b->next;
    if (prev && prev->state == VL_CB_UNMAPPED) {
        unmapped_remove(s, prev);
        vl_block_absorb_next(c, prev);
        b = prev;
    }
    if (next && next->state == VL_CB_UNMAPPED) {
        unmapped_remove(s, next);
        vl_block_absorb_next(c, b);
    }
    unmapped_add(s, b);
    return b;
}

/* Turns the whole chunks inside the FREE block b, at most `limit` bytes (rounded up to
 * chunks) taken from its high end, into a RETIRING block pushed on *list, leaving the
 * rest FREE (the right remainder in *right_out, or NULL). Returns the RETIRING block,
 * or NULL when b holds no whole chunk or there is no host memory for the headers (b
 * then stays FREE as it was). */
vl_cblock *vl_expandable_retire_free_block(vl_caching *c, vl_csegment *s, vl_cblock *b, size_t limit,
                                           size_t *released, vl_cblock **list, vl_cblock **right_out)
{
    *right_out = NULL;
    uintptr_t lo = span_ceil(s, b->addr);
    uintptr_t hi = span_floor(s, b->addr + b->size);
    if (hi <= lo) return NULL;
    if (hi - lo > limit) {
        uintptr_t from = span_floor(s, hi - limit);
        if (from > lo) lo = from;
    }
    uintptr_t end = b->addr + b->size;
    /* Two remainders at most, and the header a refused unmap needs to split (release.c). */
    vl_cblock *pieces[3] = {NULL, NULL, NULL};
    if (!take_headers(c, pieces, 3)) return NULL;
    vl_free_remove(c, b);
    if (lo > b->addr) {
        vl_free_insert(c, vl_block_insert_after(s, b->prev, pieces[0], b->addr, lo - b->addr));
        pieces[0] = NULL;
    }
    if (hi < end) {
        *right_out = vl_block_insert_after(s, b, pieces[1], hi, end - hi);
        pieces[1] = NULL;
    }
    b->addr = lo;
    b->size = hi - lo;
    b->state = VL_CB_RETIRING;
    b->retire_spare = pieces[2];
    pieces[2] = NULL;
    b->retire_next = *list;
    *list = b;
    put_headers(c, pieces, 3);
    if (*right_out) vl_free_insert(c, *right_out);
    s->pool->stream->reserved -= (int64_t)b->size;
    c->retiring_bytes += (int64_t)b->size;
    *released += b->size;
    /* A RETIRING block covers whole spans (a span is unmapped only whole). */
    vl_assert_internal(span_ceil(s, b->addr) == b->addr && span_floor(s, b->addr + b->size) == b->addr + b->size &&
                       vl_block_tiles(b) && s->pool->stream->reserved >= 0);
    return b;
}

/* After a refused unmap of a lent chunk at `from`: [b->addr, from) is unmapped and
 * becomes UNMAPPED, [from, end) stays RETIRING (its first `lent` bytes lent) and is
 * queued again. Without host memory for that (recorded) the rest is given up: the
 * books let it go while the device keeps it mapped. Returns the block at `from`. */
static vl_cblock *requeue_rest(vl_caching *c, vl_cblock *b, uintptr_t from, size_t lent)
{
    vl_csegment *s = b->seg;
    size_t done = from - b->addr;
    vl_cblock *rest = b, *header = NULL;
    if (done > 0 && take_headers(c, &header, 1)) { /* b keeps [addr, from), unmapped */
        rest = vl_block_insert_after(s, b, b->retire_spare, from, b->addr + b->size - from);
        rest->state = VL_CB_RETIRING;
        rest->retire_spare = header;
        b->size = done;
        s->mapped_bytes -= done;
        merge_unmapped(c, s, b);
    }
    if ((rest != b || done == 0) && vl_release_requeue(c, rest, lent) == 0) return rest;
    /* No host memory (recorded): [from, end) is given up, and all of rest becomes UNMAPPED. */
    uintptr_t end = rest->addr + rest->size;
    c->lent_bytes -= (int64_t)lent;
    for (uintptr_t a = from, size; a < end; a += size) {
        size = vl_expandable_span_at(s, a);
        span_mark(s, a, size, 0);
        s->mapped_chunks--;
        c->st.segments--;
    }
    s->mapped_bytes -= end - rest->addr;
    vl_slab_put(&c->blocks, rest->retire_spare);
    return merge_unmapped(c, s, rest);
}

/* vl_expandable_finish_retire, returning the block that now covers the retired range's
 * last byte (the walk of release_free goes on after it). */
static vl_cblock *finish_retire(vl_caching *c, vl_cblock *b, int keep, size_t lent)
{
    vl_csegment *s = b->seg;
    vl_cblock *split = b->retire_spare;
    uintptr_t lo = b->addr, end = b->addr + b->size, a = lo;
    vl_assert_internal(b->state == VL_CB_RETIRING && lent <= b->size && c->retiring_bytes >= (int64_t)b->size);
    c->retiring_bytes -= (int64_t)b->size;
    /* Lent chunks: another mapping holds their memory, so after a refused unmap they
     * can become neither FREE nor UNMAPPED: the rest stays RETIRING, queued again. */
    for (size_t size; a < lo + lent; a += size) {
        size = vl_expandable_span_at(s, a);
        if (vl_release_unmap_lent_span(c, a, size) != VL_DEV_OK) return requeue_rest(c, b, a, lo + lent - a);
        span_mark(s, a, size, 0);
        s->mapped_chunks--;
    }
    for (size_t size; a < end; a += size) {
        size = vl_expandable_span_at(s, a);
        if (vl_release_unmap_span(c, a, size, keep) != VL_DEV_OK) break;
        span_mark(s, a, size, 0);
        s->mapped_chunks--;
    }
    size_t done = a - lo;
    s->mapped_bytes -= done;
    if (done == b->size) {
        vl_slab_put(&c->blocks, split);
        return merge_unmapped(c, s, b);
    }
    /* The device refused an unmap (recorded): what is still mapped is FREE again. */
    s->pool->stream->reserved += (int64_t)(end - a);
    if (done == 0) {
        vl_slab_put(&c->blocks, split);
        return vl_caching_release_block(c, b);
    }
    vl_cblock *rest = vl_block_insert_after(s, b, split, a, end - a);
    b->size = done;
    merge_unmapped(c, s, b);
    return vl_caching_release_block(c, rest);
}

void vl_expandable_finish_retire(vl_caching *c, vl_cblock *b, int keep, size_t lent)
{
    (void)finish_retire(c, b, keep, lent);
}
