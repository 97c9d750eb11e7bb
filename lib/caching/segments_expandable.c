/* segments=expandable: each stream and pool owns virtual address ranges as large as the
 * device, and physical memory is mapped into them in whole chunks (chunk sizes grow
 * with the offset, chunks.h), one dev->ops->map per span of at most cfg.span bytes
 * (spans.h; 64 MiB by default), only where blocks need it. Free space next to mapped
 * space grows instead of a new segment being made, so there is no per-segment rounding
 * and no stranded segment tails: reserved stays close to allocated. Trim, memory
 * pressure and reclaim unmap spans that lie entirely inside a FREE block.
 *
 * Address space: live blocks scattered over one device-sized range can leave no unmapped
 * stretch long enough for a large request although physical memory is free. So a
 * request that fits no unmapped space of the pool's ranges opens a further range (VA is
 * plentiful: 2^47 bytes, one range per device's worth); the mapping's memory then comes
 * from free chunks unmapped elsewhere under pressure. Ranges that hold nothing mapped
 * are released on trim and after an OOM.
 *
 * Reclaim, and why it is stream-local: a chunk can be unmapped only once the work queued
 * before its free completed, which only an event recorded on its own stream tells
 * without waiting (release.c), and moving memory between streams at every step stalls
 * a multi-stream loop with an unmap per step. A stream
 * therefore retires only its own free chunks to stay under (1 + reclaim) x its peak
 * allocated (release.c unmaps them once their event completed, keeping the memory for
 * the next map), and takes other streams' chunks only when the device is out of memory
 * for the mapping (then after waiting for the device).
 *
 * Bounded work: placement looks at the largest free blocks of the pool (at most
 * VL_FRONTIER_PROBES of them, for a hole next to one that the request can extend) and at
 * the smallest hole that fits (the pool's holes are bins: O(log n)), never at every
 * hole; a mapping that cannot fit in what the device could still give fails at once.
 *
 * Invariants (besides block.h's): a chunk is mapped iff it is covered by non-UNMAPPED
 * blocks, each chunk by exactly one map call (its span: spans.h's invariants); UNMAPPED
 * blocks start and end on chunk boundaries, are never adjacent to each other, and are
 * the members of their pool's holes; mapped_chunks counts the map calls (spans) alive; every
 * range is on its pool's `ranges` list exactly once. */
#include <stdlib.h>

#include "caching/expandable.h"
#include "caching/hostmem.h"
#include "caching/sizes.h"

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

size_t vl_expandable_span_at(const vl_csegment *s, uintptr_t a)
{
    return vl_spans_length(&s->spans, granule_of(s, a)) * s->granule;
}

/* Spans are used only while reserved stays within this share of what the process can
 * reach, its reserved plus the device's free memory: a span is unmapped only whole, and
 * near that limit partly used spans strand memory. The reach, not the device's total:
 * where others hold most of the device, a share of the total lets spans cover all that
 * is left. An eighth is the largest share at which churn near the reach fails only when
 * memory is short (docs/caching-measured.md). */
#define VL_SPAN_ROOM_DIV 8

/* The most a fresh map at a may cover on the way to end (both chunk boundaries):
 * up to cfg.span bytes, ending on a chunk boundary, at least the chunk at a (span=0,
 * or reserved past the VL_SPAN_ROOM_DIV-th of its reach: just that chunk). reach is
 * the range's reading of reserved + device free (fresh_could_fit), which its maps leave
 * as it was (they move memory from free to reserved); 0, unknown, allows no span. */
static size_t fresh_span(const vl_caching *c, const vl_csegment *s, uintptr_t a, uintptr_t end, size_t reach)
{
    size_t need = end - a;
    if (c->cfg.span == 0 || (size_t)c->st.reserved_bytes + need > reach / VL_SPAN_ROOM_DIV) return chunk_at(s, a);
    size_t room = need < c->cfg.span ? need : c->cfg.span;
    uintptr_t hi = chunk_floor(s, a + room);
    return hi > a ? hi - a : chunk_at(s, a);
}

/* Whether the rest of a range, from its first fresh map on (lending never resumes),
 * could be mapped with kept memory and the device's free memory; *reach gets reserved
 * + device free for fresh_span (one mem_info per range). Without this check, a range
 * that could not fit would be mapped chunk by chunk until the device refused, then
 * unmapped: thousands of calls near a full device (a bisection of the largest
 * allocation, for instance). Unknown free memory: the device decides. */
static int fresh_could_fit(const vl_caching *c, size_t rest, size_t *reach)
{
    size_t free_bytes = 0, total = 0;
    if (c->dev->ops->mem_info(c->dev, &free_bytes, &total) != VL_DEV_OK) return 1;
    *reach = (size_t)c->st.reserved_bytes + free_bytes;
    return rest <= (size_t)c->spare_bytes + free_bytes;
}

/* Maps [lo, lo+bytes) (both ends on chunk boundaries) span by span: first with the
 * memory of spans that lend (release.c; lend may be NULL), then with kept memory where
 * there is some, then fresh, in spans of at most cfg.span (on a device OOM, kept memory
 * that did not fit is given back first). On a device OOM or error it
 * unmaps what it mapped (never used: no waiting) and returns VL_DEV_OOM or VL_DEV_ERROR
 * (recorded), leaving everything as it was (unless that unmap fails too: then the
 * device is lost). */
int vl_expandable_map_range(vl_caching *c, vl_csegment *s, uintptr_t lo, size_t bytes, vl_clend *lend)
{
    int64_t n = 0;
    vl_cretire *lender = lend ? lend->batch : NULL;
    uintptr_t lent_end = lo, end = lo + bytes; /* [lo, lent_end) took lent memory */
    size_t reach = 0;                          /* reserved + device free, read once */
    int weighed = 0, gave = 0;                 /* the fresh part weighed; spares given back */
    for (uintptr_t a = lo; a < end; n++) {
        size_t size = lend ? vl_release_lend_span(c, lend, s, a, end - a) : 0;
        int rc = VL_DEV_OK;
        if (size) lent_end = a + size;
        else if (!weighed++ && !fresh_could_fit(c, end - a, &reach)) rc = VL_DEV_OOM;
        else {
            rc = vl_release_map_span(c, s, a, fresh_span(c, s, a, end, reach), &size);
            if (rc == VL_DEV_OOM && !gave++ && c->spare_bytes > 0) {
                /* Kept memory of sizes this range could not take: given back, it lets
                 * the map go on instead of unmapping what was mapped and trying again
                 * (once: a release the device refuses leaves spares, recorded). */
                vl_release_spares(c, 0);
                rc = vl_release_map_span(c, s, a, fresh_span(c, s, a, end, reach), &size);
            }
        }
        if (rc == VL_DEV_OK) {
            span_mark(s, a, size, 1);
            a += size;
            vl_relocation_mapped(&c->relocation, c->dev);
            continue;
        }
        if (rc != VL_DEV_OOM) {
            vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "map of a span", rc);
            rc = VL_DEV_ERROR;
        }
        for (uintptr_t back = lo; back < a; back += size) {
            size = vl_expandable_span_at(s, back);
            if (back < lent_end) vl_release_unlend_span(c, lender, back, size);
            else {
                (void)vl_release_unmap_span(c, back, size, 0);
                c->st.segments++; /* a mapping undone counts as neither (as before) */
                c->st.device_frees--;
            }
            span_mark(s, back, size, 0);
        }
        return rc;
    }
    s->mapped_bytes += bytes;
    s->mapped_chunks += (size_t)n;
    vl_assert_internal(s->mapped_bytes <= s->size);
    s->pool->stream->reserved += (int64_t)bytes;
    c->st.segments += n;
    c->st.device_allocs += n;
    return VL_DEV_OK;
}

/* Unmaps [lo, lo+bytes) (span boundaries) span by span, known unused (the device was
 * synchronized); returns the bytes unmapped, all of them unless the device refused one
 * span (recorded): then [lo, lo+returned) is unmapped and the rest still mapped. */
static size_t unmap_range(vl_caching *c, vl_csegment *s, uintptr_t lo, size_t bytes)
{
    size_t n = 0;
    uintptr_t a = lo;
    while (a < lo + bytes) {
        size_t size = vl_expandable_span_at(s, a);
        if (vl_release_unmap_span(c, a, size, 0) != VL_DEV_OK) break;
        span_mark(s, a, size, 0);
        a += size;
        n++;
    }
    bytes = a - lo;
    vl_assert_internal(bytes <= s->mapped_bytes && n <= s->mapped_chunks);
    s->mapped_bytes -= bytes;
    s->mapped_chunks -= n;
    s->pool->stream->reserved -= (int64_t)bytes;
    return bytes;
}

/* A new range for pool p, large enough for `rounded` (at least the device's size:
 * address space is plentiful, memory is only what gets mapped). NULL with *rc =
 * VL_DEV_OOM when the device has no address space left (an OOM like any other), or
 * VL_DEV_ERROR after a device or host failure (recorded). */
vl_csegment *vl_expandable_open_range(vl_caching *c, vl_cpool *p, size_t rounded, int *rc)
{
    size_t granule = c->dev->granularity;
    size_t chunk = vl_chunk_max_for(granule, c->cfg.chunk);
    size_t want = rounded > c->dev->total_bytes ? rounded : c->dev->total_bytes;
    size_t size = round_up(want, chunk); /* ends on a chunk boundary */
    *rc = VL_DEV_ERROR;
    if (!p->holes && !(p->holes = vl_host_calloc(1, sizeof *p->holes))) {
        vl_caching_fail_host(c, "host allocation of a pool's holes");
        return NULL;
    }
    void *base = NULL;
    int vrc = c->dev->ops->va_reserve(c->dev, size, &base);
    if (vrc == VL_DEV_OOM) {
        *rc = VL_DEV_OOM;
        return NULL;
    }
    *rc = VL_DEV_ERROR;
    if (vrc != VL_DEV_OK) {
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "va_reserve of an expandable segment", vrc);
        return NULL;
    }
    vl_cblock *whole = vl_caching_new_block(c);
    size_t words = (size / granule + 63) / 64;
    uint64_t *first = whole ? vl_host_calloc(words, sizeof *first) : NULL;
    uint64_t *last = first ? vl_host_calloc(words, sizeof *last) : NULL;
    vl_csegment *s = last ? vl_segment_new(c, p, (uintptr_t)base, size) : NULL;
    if (!s) { /* out of host memory (recorded) */
        if (whole && !last) vl_caching_fail_host(c, "host allocation of a range's span maps");
        free(first);
        free(last);
        if (whole) vl_slab_put(&c->blocks, whole);
        int rrc = c->dev->ops->va_release(c->dev, base, size);
        if (rrc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "va_release of an expandable segment", rrc);
        return NULL;
    }
    *rc = VL_DEV_OK;
    s->granule = granule;
    s->chunk = chunk;
    s->spans = (vl_spans){first, last, size / granule};
    s->expandable = 1;
    unmapped_add(s, vl_block_insert_after(s, NULL, whole, s->base, size));
    s->pool_next = p->ranges;
    p->ranges = s;
    return s;
}

int vl_expandable_could_fit(vl_caching *c, size_t bytes)
{
    /* Everything not active could at best be unmapped and mapped here. */
    int64_t active = c->st.active_bytes;
    if ((int64_t)bytes > (int64_t)c->dev->total_bytes - active) return 0;
    /* A large mapping asks the device what is free (other processes hold memory too):
     * one cudaMemGetInfo, only where mapping chunk after chunk and then failing would
     * cost far more. */
    if (bytes >= VL_CHUNKS_PER_STEP * c->dev->granularity) {
        size_t free_bytes = 0, total = 0;
        if (c->dev->ops->mem_info(c->dev, &free_bytes, &total) == VL_DEV_OK &&
            (int64_t)bytes > (int64_t)free_bytes + (c->st.reserved_bytes - active))
            return 0;
    }
    return 1;
}

vl_cblock *vl_expandable_grow(vl_caching *c, vl_cpool *p, size_t rounded, int *rc)
{
    if (c->retire_head) vl_release_process(c, 0);
    vl_cplacement best;
    if (!vl_expandable_place(c, p, rounded, &best, rc)) return NULL;
    if (!vl_expandable_could_fit(c, best.bytes)) {
        *rc = VL_GROW_NEVER_FITS; /* fails at once: nothing mapped, nothing flushed */
        return NULL;
    }
    vl_cstream *st = p->stream;
    vl_clend lend = {NULL, NULL, 0};
    int reclaimed = 0;
    if (c->cfg.reclaim >= 0) {
        /* The stream's reserved may grow to (1 + reclaim) x its peak allocated (counting
         * this request); past that, the new chunks come out of its own free ones: retired
         * behind an event on this stream, their memory mapped again here once complete. */
        int64_t want = st->allocated + (int64_t)rounded;
        double cap = (1.0 + c->budget.value) * (double)(want > st->peak_allocated ? want : st->peak_allocated);
        double over = (double)st->reserved + (double)best.bytes - cap;
        if (over > 0) {
            size_t released = 0;
            vl_cblock *list = NULL;
            vl_expandable_reclaim_stream(c, st, (size_t)over, best.u->prev, best.u->next, &released, &list);
            if (list) {
                reclaimed = 1;
                vl_cretire *batch = vl_release_queue(c, st, list);
                vl_release_process(c, 0);
                /* Still queued (the tail; processing takes from the head): this mapping
                 * takes its memory (lending). Complete: its memory is spare already. */
                if (batch && c->retire_tail == batch) lend = (vl_clend){batch, batch->blocks, batch->blocks->addr};
                if (!vl_expandable_place(c, p, rounded, &best, rc)) return NULL; /* completed retirements merge holes */
            }
        }
    }
    /* Headers for the unmapped pieces left of and right of the mapping, before anything
     * is mapped. */
    vl_cblock *pieces[2] = {NULL, NULL};
    int npieces = (best.lo > best.u->addr) + (best.lo + best.bytes < best.u->addr + best.u->size);
    if (!take_headers(c, pieces, npieces)) {
        *rc = VL_DEV_ERROR;
        return NULL;
    }
    int64_t maps_before = c->st.device_allocs;
    if (reclaimed) vl_relocation_watch(&c->relocation, lend.batch); /* NULL: the batch completed already */
    int mrc = vl_expandable_map_range(c, best.u->seg, best.lo, best.bytes, &lend);
    vl_relocation_unwatch(&c->relocation); /* before anything drains the batch it watched */
    if (mrc == VL_DEV_OOM && c->cfg.reclaim >= 0 &&
        vl_expandable_reclaim_under_pressure(c, best.bytes, best.u->prev, best.u->next) > 0) {
        put_headers(c, pieces, npieces);
        if (!vl_expandable_place(c, p, rounded, &best, rc)) return NULL;
        npieces = (best.lo > best.u->addr) + (best.lo + best.bytes < best.u->addr + best.u->size);
        pieces[0] = pieces[1] = NULL;
        if (!take_headers(c, pieces, npieces)) {
            *rc = VL_DEV_ERROR;
            return NULL;
        }
        if (reclaimed) vl_relocation_watch(&c->relocation, NULL); /* the batch was drained */
        mrc = vl_expandable_map_range(c, best.u->seg, best.lo, best.bytes, NULL);
        vl_relocation_unwatch(&c->relocation);
    }
    if (mrc != VL_DEV_OK) {
        put_headers(c, pieces, npieces);
        *rc = mrc;
        return NULL;
    }
    if (reclaimed) {
        int64_t maps = c->st.device_allocs - maps_before;
        vl_relocation_count(&c->relocation, maps);
        vl_budget_relocated(&c->budget, &c->cfg, c->st.allocs, c->allocated_high_water, maps);
    }
    if (c->spare_bytes > 0) vl_release_spares(c, vl_release_spare_cap(c));
    /* Cut the unmapped block into [unmapped][mapped, now FREE][unmapped]. */
    vl_csegment *s = best.u->seg;
    vl_cblock *u = best.u;
    uintptr_t best_lo = best.lo;
    size_t best_bytes = best.bytes;
    unmapped_remove(s, u);
    uintptr_t end = u->addr + u->size;
    int used = 0;
    if (best_lo > u->addr) unmapped_add(s, vl_block_insert_after(s, u->prev, pieces[used++], u->addr, best_lo - u->addr));
    if (best_lo + best_bytes < end)
        unmapped_add(s, vl_block_insert_after(s, u, pieces[used++], best_lo + best_bytes, end - best_lo - best_bytes));
    u->addr = best_lo;
    u->size = best_bytes;
    return vl_caching_coalesce(c, u);
}

/* Gives the range's address space back and frees its record; at close (force) also
 * when the device refuses. Returns 0, or -1 when it was refused (recorded) and the
 * range stays. */
static int release_range(vl_caching *c, vl_csegment *s, int force)
{
    int rc = c->dev->ops->va_release(c->dev, (void *)s->base, s->size);
    if (rc != VL_DEV_OK) {
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "va_release of an expandable segment", rc);
        if (!force) return -1;
    }
    vl_segment_unlink(c, s);
    vl_csegment **link = &s->pool->ranges;
    while (*link != s) link = &(*link)->pool_next;
    *link = s->pool_next;
    free(s->spans.first);
    free(s->spans.last);
    free(s);
    return 0;
}

size_t vl_expandable_release_free(vl_caching *c)
{
    int any = 0;
    for (size_t i = 0; i < c->nstreams && !any; i++) any = c->streams[i]->pools[0].ranges || c->streams[i]->pools[1].ranges;
    if (!any) return 0;
    /* Trim and the flush after an OOM: wait for the device once (the point here), then
     * every free chunk can go at once. Free blocks are found through the bins (classes
     * that can hold a chunk), not by walking every block. */
    int64_t before = c->st.reserved_bytes;
    int rc = c->dev->ops->synchronize(c->dev);
    if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "synchronize", rc);
    vl_release_process(c, 1);
    vl_release_spares(c, 0);
    for (size_t i = 0; i < c->nstreams; i++) {
        vl_cstream *st = c->streams[i];
        size_t released = 0;
        vl_cblock *list = NULL;
        vl_expandable_reclaim_stream(c, st, SIZE_MAX, NULL, NULL, &released, &list);
        for (vl_cblock *b = list, *next; b; b = next) {
            next = b->retire_next;
            vl_expandable_finish_retire(c, b, 0, 0);
        }
        for (int k = 0; k < 2; k++) {
            for (vl_csegment *s = st->pools[k].ranges, *next; s; s = next) {
                next = s->pool_next;
                if (s->mapped_bytes != 0) continue;
                /* Nothing mapped: one UNMAPPED block spans the range (they merge). */
                vl_cblock *whole = s->first;
                unmapped_remove(s, whole);
                if (release_range(c, s, 0) == 0) vl_slab_put(&c->blocks, whole);
                else unmapped_add(s, whole);
            }
        }
    }
    return (size_t)(before - c->st.reserved_bytes);
}

void vl_expandable_destroy(vl_caching *c, vl_csegment *s)
{
    /* Every mapped chunk is covered by non-UNMAPPED blocks: walk them in address order
     * and unmap each chunk once. */
    uintptr_t done = s->base;
    for (vl_cblock *b = s->first, *next; b; b = next) {
        next = b->next;
        if (b->state != VL_CB_UNMAPPED) {
            uintptr_t lo = span_floor(s, b->addr);
            uintptr_t hi = span_ceil(s, b->addr + b->size);
            if (lo < done) lo = done;
            /* A refused unmap leaves the chunks to the device (recorded): this is close. */
            if (hi > lo) (void)unmap_range(c, s, lo, hi - lo);
            if (hi > done) done = hi;
        }
        if (b->state == VL_CB_FREE) vl_free_remove(c, b);
        vl_slab_put(&c->blocks, b);
    }
    release_range(c, s, 1);
}
