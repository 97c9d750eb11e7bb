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

#include "caching/allocator.h"
#include "caching/hostmem.h"
#include "caching/chunks.h"
#include "caching/sizes.h"
#include "caching/spans.h"

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

/* Chunk geometry in addresses of segment s. */
static size_t chunk_at(const vl_csegment *s, uintptr_t a) { return vl_chunk_at(s->granule, s->chunk, a - s->base); }
static uintptr_t chunk_floor(const vl_csegment *s, uintptr_t a)
{
    return s->base + vl_chunk_floor(s->granule, s->chunk, a - s->base);
}
static uintptr_t chunk_ceil(const vl_csegment *s, uintptr_t a)
{
    return s->base + vl_chunk_ceil(s->granule, s->chunk, a - s->base);
}

/* Span geometry (spans.h): where the map calls that made s's mapped memory start and end. */
static size_t granule_of(const vl_csegment *s, uintptr_t a) { return (a - s->base) / s->granule; }
static uintptr_t span_floor(const vl_csegment *s, uintptr_t a)
{
    return s->base + vl_spans_floor(&s->spans, s->granule, a - s->base);
}
static uintptr_t span_ceil(const vl_csegment *s, uintptr_t a)
{
    return s->base + vl_spans_ceil(&s->spans, s->granule, a - s->base);
}
size_t vl_expandable_span_at(const vl_csegment *s, uintptr_t a)
{
    return vl_spans_length(&s->spans, granule_of(s, a)) * s->granule;
}
static void span_mark(vl_csegment *s, uintptr_t a, size_t size, int on)
{
    vl_spans_mark(&s->spans, granule_of(s, a), size / s->granule, on);
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

/* How many of the pool's largest free blocks placement probes for a hole next to them. */
#define VL_FRONTIER_PROBES 8

static void unmapped_add(vl_csegment *s, vl_cblock *b)
{
    b->state = VL_CB_UNMAPPED;
    vl_bins_insert(s->pool->holes, b);
}

static void unmapped_remove(vl_csegment *s, vl_cblock *b) { vl_bins_remove(s->pool->holes, b); }

/* n headers (n <= 3) into out[], or 0 with none taken when out of host memory (recorded). */
static int take_headers(vl_caching *c, vl_cblock **out, int n)
{
    for (int i = 0; i < n; i++) {
        out[i] = vl_caching_new_block(c);
        if (out[i]) continue;
        while (i-- > 0) vl_slab_put(&c->blocks, out[i]);
        return 0;
    }
    return 1;
}

static void put_headers(vl_caching *c, vl_cblock **h, int n)
{
    for (int i = 0; i < n; i++)
        if (h[i]) vl_slab_put(&c->blocks, h[i]);
}

/* Maps [lo, lo+bytes) (both ends on chunk boundaries) span by span: first with the
 * memory of spans that lend (release.c; lend may be NULL), then with kept memory where
 * there is some, then fresh, in spans of at most cfg.span (on a device OOM, kept memory
 * that did not fit is given back first). On a device OOM or error it
 * unmaps what it mapped (never used: no waiting) and returns VL_DEV_OOM or VL_DEV_ERROR
 * (recorded), leaving everything as it was (unless that unmap fails too: then the
 * device is lost). */
static int map_range(vl_caching *c, vl_csegment *s, uintptr_t lo, size_t bytes, vl_clend *lend)
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
            vl_budget_mapped(c);
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
    s->mapped_bytes -= bytes;
    s->mapped_chunks -= n;
    s->pool->stream->reserved -= (int64_t)bytes;
    return bytes;
}

/* A new range for pool p, large enough for `rounded` (at least the device's size:
 * address space is plentiful, memory is only what gets mapped). NULL with *rc =
 * VL_DEV_OOM when the device has no address space left (an OOM like any other), or
 * VL_DEV_ERROR after a device or host failure (recorded). */
static vl_csegment *open_range(vl_caching *c, vl_cpool *p, size_t rounded, int *rc)
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

static vl_cblock *retire_free_block(vl_caching *c, vl_csegment *s, vl_cblock *b, size_t limit, size_t *released,
                                    vl_cblock **list, vl_cblock **right_out);

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
static void reclaim_stream(vl_caching *c, vl_cstream *st, size_t bytes, const vl_cblock *keep1,
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
                        retire_free_block(c, b->seg, b, bytes - *released, released, list, &right);
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
static size_t reclaim_under_pressure(vl_caching *c, size_t bytes, const vl_cblock *keep1, const vl_cblock *keep2)
{
    int64_t before = c->st.reserved_bytes;
    int rc = c->dev->ops->synchronize(c->dev);
    if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "synchronize", rc);
    vl_release_process(c, 1);
    vl_release_spares(c, 0);
    size_t released = 0;
    vl_cblock *list = NULL;
    for (size_t i = 0; i < c->nstreams && released < bytes; i++)
        reclaim_stream(c, c->streams[i], bytes, keep1, keep2, &released, &list);
    for (vl_cblock *b = list, *next; b; b = next) {
        next = b->retire_next;
        vl_expandable_finish_retire(c, b, 0, 0);
    }
    return (size_t)(before - c->st.reserved_bytes);
}

/* Where a request goes in an expandable range: the unmapped block u is cut so that
 * [lo, lo+bytes) gets mapped. */
typedef struct placement {
    vl_cblock *u;
    uintptr_t lo;
    size_t bytes;
} placement;

/* Improves *best with the hole u: the placement that maps the fewest bytes, at the
 * start of u (extending a FREE block before it), at its end (extending one after it),
 * or all of it (joining both). */
static void consider_hole(const vl_cblock *hole, size_t rounded, placement *best)
{
    vl_cblock *u = (vl_cblock *)hole;
    const vl_csegment *s = u->seg;
    size_t before = u->prev && u->prev->state == VL_CB_FREE ? u->prev->size : 0;
    size_t after = u->next && u->next->state == VL_CB_FREE ? u->next->size : 0;
    uintptr_t end = u->addr + u->size;
    if (rounded > before && rounded - before <= u->size) {
        size_t need = chunk_ceil(s, u->addr + (rounded - before)) - u->addr;
        if (need < best->bytes) *best = (placement){u, u->addr, need};
    }
    if (rounded > after && rounded - after <= u->size) {
        uintptr_t lo = chunk_floor(s, end - (rounded - after));
        if (end - lo < best->bytes) *best = (placement){u, lo, end - lo};
    }
    if (before + u->size + after >= rounded && u->size < best->bytes) *best = (placement){u, u->addr, u->size};
}

/* The best placement among: the holes next to the pool's VL_FRONTIER_PROBES largest
 * free blocks (a hole extending a large free block maps the fewest bytes), the
 * VL_FRONTIER_PROBES largest holes no larger than the request (joined with FREE
 * neighbours), and the smallest hole that holds the request alone. O(log n) per probe. */
static void find_placement(const vl_cpool *p, size_t rounded, placement *best)
{
    int probes = 0;
    for (int j = vl_bins_prev_nonempty(&p->bins, VL_BIN_COUNT); j >= 0 && probes < VL_FRONTIER_PROBES;
         j = vl_bins_prev_nonempty(&p->bins, (unsigned)j)) {
        for (vl_cblock *b = vl_bins_last(&p->bins, (unsigned)j); b && probes < VL_FRONTIER_PROBES;
             b = vl_bins_before(&p->bins, (unsigned)j, b->size, b->addr), probes++) {
            if (b->next && b->next->state == VL_CB_UNMAPPED) consider_hole(b->next, rounded, best);
            if (b->prev && b->prev->state == VL_CB_UNMAPPED) consider_hole(b->prev, rounded, best);
        }
    }
    /* The largest holes up to the request's size: with FREE blocks on both sides (what
     * reclaim leaves: the chunks it unmapped, a remainder either side) they are joined. */
    unsigned i = vl_bin_index(rounded);
    probes = 0;
    for (int j = vl_bins_prev_nonempty(p->holes, i + 1); j >= 0 && probes < VL_FRONTIER_PROBES;
         j = vl_bins_prev_nonempty(p->holes, (unsigned)j)) {
        for (vl_cblock *h = vl_bins_last(p->holes, (unsigned)j); h && probes < VL_FRONTIER_PROBES;
             h = vl_bins_before(p->holes, (unsigned)j, h->size, h->addr), probes++)
            consider_hole(h, rounded, best);
    }
    vl_cblock *h = vl_bins_fit_in_class(p->holes, i, rounded);
    if (!h) {
        int j = vl_bins_next_nonempty(p->holes, i);
        if (j >= 0) h = vl_bins_first(p->holes, (unsigned)j);
    }
    if (h) consider_hole(h, rounded, best);
}

/* A placement for `rounded` in pool p, opening a further range when none fits; 0 with
 * *rc set when there is none. */
static int place(vl_caching *c, vl_cpool *p, size_t rounded, placement *best, int *rc)
{
    *best = (placement){NULL, 0, SIZE_MAX};
    if (p->holes) find_placement(p, rounded, best);
    if (!best->u) {
        vl_csegment *fresh = open_range(c, p, rounded, rc);
        if (!fresh) return 0;
        consider_hole(fresh->first, rounded, best);
    }
    if (!best->u) {
        *rc = VL_DEV_OOM;
        return 0;
    }
    return 1;
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
    placement best;
    if (!place(c, p, rounded, &best, rc)) return NULL;
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
        double cap = (1.0 + c->budget) * (double)(want > st->peak_allocated ? want : st->peak_allocated);
        double over = (double)st->reserved + (double)best.bytes - cap;
        if (over > 0) {
            size_t released = 0;
            vl_cblock *list = NULL;
            reclaim_stream(c, st, (size_t)over, best.u->prev, best.u->next, &released, &list);
            if (list) {
                reclaimed = 1;
                vl_cretire *batch = vl_release_queue(c, st, list);
                vl_release_process(c, 0);
                /* Still queued (the tail; processing takes from the head): this mapping
                 * takes its memory (lending). Complete: its memory is spare already. */
                if (batch && c->retire_tail == batch) lend = (vl_clend){batch, batch->blocks, batch->blocks->addr};
                if (!place(c, p, rounded, &best, rc)) return NULL; /* completed retirements merge holes */
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
    if (reclaimed) vl_budget_watch(c, lend.batch); /* NULL: the batch completed already */
    int mrc = map_range(c, best.u->seg, best.lo, best.bytes, &lend);
    vl_budget_unwatch(c); /* before anything drains the batch it watched */
    if (mrc == VL_DEV_OOM && c->cfg.reclaim >= 0 &&
        reclaim_under_pressure(c, best.bytes, best.u->prev, best.u->next) > 0) {
        put_headers(c, pieces, npieces);
        if (!place(c, p, rounded, &best, rc)) return NULL;
        npieces = (best.lo > best.u->addr) + (best.lo + best.bytes < best.u->addr + best.u->size);
        pieces[0] = pieces[1] = NULL;
        if (!take_headers(c, pieces, npieces)) {
            *rc = VL_DEV_ERROR;
            return NULL;
        }
        if (reclaimed) vl_budget_watch(c, NULL); /* the batch was drained */
        mrc = map_range(c, best.u->seg, best.lo, best.bytes, NULL);
        vl_budget_unwatch(c);
    }
    if (mrc != VL_DEV_OK) {
        put_headers(c, pieces, npieces);
        *rc = mrc;
        return NULL;
    }
    if (reclaimed) vl_budget_relocated_watched(c, c->st.device_allocs - maps_before);
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

/* The highest FREE block of range s, above which there are only holes and chunks
 * retired by consolidate_range, or NULL. */
static vl_cblock *top_free(const vl_csegment *s)
{
    vl_cblock *b = s->first;
    while (b->next) b = b->next;
    while (b && (b->state == VL_CB_UNMAPPED || b->state == VL_CB_RETIRING)) b = b->prev;
    return b && b->state == VL_CB_FREE ? b : NULL;
}

/* The most blocks a range may have for consolidate_range to lay it out again: idle
 * moments can come at every free, so their work stays bounded (an idle range is FREE
 * blocks between holes). Small idle layouts (a few holes) are packed; ranges with many
 * holes are left as they are, since re-laying those maps more chunks than packing
 * saves (docs/caching-measured.md). */
#define VL_CONSOLIDATE_BLOCKS 33

/* Fills the holes of range s below its top with the top's own chunks, lowest first, so
 * its mapped memory becomes one FREE block from the range's start (only when nothing in
 * s is in use: FREE and UNMAPPED blocks only). Each hole is mapped with the memory of
 * the chunks retired for it (lent, release.c), so reserved does not grow. Stops where
 * the top cannot fill the next hole, or at a failure: the layout is then only partly
 * consolidated, which is harmless. */
static void consolidate_range(vl_caching *c, vl_csegment *s)
{
    /* Only where every chunk is one granule and one span (the default): then the top's
     * chunks fit any hole, each is lent whole, and kept memory stays in granules. With
     * chunks growing with the offset the top's are larger than a low hole's, so the
     * hole would take fresh memory instead. */
    if (s->chunk != s->granule || c->cfg.span >= 2 * s->chunk) return;
    int n = 0;
    for (vl_cblock *b = s->first; b; b = b->next)
        if ((b->state != VL_CB_FREE && b->state != VL_CB_UNMAPPED) || ++n > VL_CONSOLIDATE_BLOCKS) return;
    vl_cstream *st = s->pool->stream;
    for (vl_cblock *h = s->first; h && h->next; h = h->next) {
        if (h->state != VL_CB_UNMAPPED) continue;
        vl_cblock *top = top_free(s), *list = NULL, *right;
        size_t released = 0;
        if (!top || top->addr < h->addr || span_floor(s, top->addr + top->size) < span_ceil(s, top->addr) + h->size)
            return;
        if (!retire_free_block(c, s, top, h->size, &released, &list, &right)) return;
        vl_cretire *batch = vl_release_queue(c, st, list);
        vl_clend lend = {batch, batch ? batch->blocks : NULL, batch ? batch->blocks->addr : 0};
        if (map_range(c, s, h->addr, h->size, batch ? &lend : NULL) != VL_DEV_OK) return;
        unmapped_remove(s, h);
        h = vl_caching_release_block(c, h); /* FREE, merged with the FREE blocks beside it */
    }
}

void vl_expandable_idle(vl_caching *c, vl_cstream *st)
{
    if (c->retire_head) vl_release_process(c, 0);
    if (c->npending || c->retire_head) return; /* blocks still in use elsewhere: not now */
    for (int k = 0; k < 2; k++)
        for (vl_csegment *s = st->pools[k].ranges; s; s = s->pool_next) consolidate_range(c, s);
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
static vl_cblock *retire_free_block(vl_caching *c, vl_csegment *s, vl_cblock *b, size_t limit, size_t *released,
                                    vl_cblock **list, vl_cblock **right_out)
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
        reclaim_stream(c, st, SIZE_MAX, NULL, NULL, &released, &list);
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
