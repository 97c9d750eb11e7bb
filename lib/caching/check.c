/* The invariant checker: walks every segment, bin, stream FIFO and the pointer table
 * and compares them with each other and with the statistics. The property test runs
 * it after every step; it is O(blocks), never used on a hot path. */
#include <inttypes.h>
#include <stdarg.h>

#include "caching/allocator.h"
#include "caching/chunks.h"
#include "caching/park.h"

static int fail(char *err, size_t errlen, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsnprintf(err, errlen, format, ap);
    va_end(ap);
    return -1;
}

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) return fail(err, errlen, __VA_ARGS__); \
    } while (0)

/* b starts and ends on chunk boundaries of its expandable segment s. */
static int on_chunk_boundaries(const vl_csegment *s, const vl_cblock *b)
{
    return vl_chunk_is_boundary(s->granule, s->chunk, b->addr - s->base) &&
           vl_chunk_is_boundary(s->granule, s->chunk, b->addr + b->size - s->base);
}

/* The live spans (spans.h) tile each run of non-UNMAPPED blocks exactly, on chunk
 * boundaries, their number is mapped_chunks, RETIRING blocks are whole spans, and no
 * span bit lies in an UNMAPPED block. */
static int check_spans(const vl_csegment *s, char *err, size_t errlen)
{
    const vl_spans *sp = &s->spans;
    size_t spans = 0;
    for (const vl_cblock *b = s->first; b;) {
        size_t g = (b->addr - s->base) / s->granule;
        if (b->state == VL_CB_UNMAPPED) {
            for (size_t k = g; k < g + b->size / s->granule; k++)
                CHECK(!vl_spans_bit(sp->first, k) && !vl_spans_bit(sp->last, k), "segment %#" PRIxPTR ": span bit in an unmapped block at granule %zu", s->base, k);
            b = b->next;
            continue;
        }
        /* The run of mapped blocks from b; a RETIRING one is unmapped whole when its event completes. */
        const vl_cblock *run = b;
        for (;; run = run->next) {
            size_t rg = (run->addr - s->base) / s->granule, re = (run->addr + run->size - s->base) / s->granule;
            CHECK(run->state != VL_CB_RETIRING || (vl_spans_bit(sp->first, rg) && vl_spans_bit(sp->last, re - 1)),
                  "retiring block %#" PRIxPTR " not on span boundaries", run->addr);
            if (!run->next || run->next->state == VL_CB_UNMAPPED) break;
        }
        size_t end = (run->addr + run->size - s->base) / s->granule; /* runs end on chunk boundaries */
        while (g < end) {
            CHECK(vl_spans_bit(sp->first, g), "segment %#" PRIxPTR ": no span starts at granule %zu", s->base, g);
            size_t e = g;
            while (e < end && !vl_spans_bit(sp->last, e)) e++;
            CHECK(e < end, "segment %#" PRIxPTR ": the span at granule %zu runs past its mapped blocks", s->base, g);
            for (size_t k = g + 1; k <= e; k++)
                CHECK(!vl_spans_bit(sp->first, k), "segment %#" PRIxPTR ": spans overlap at granule %zu", s->base, k);
            size_t off = (e + 1) * s->granule;
            CHECK(vl_chunk_is_boundary(s->granule, s->chunk, off), "segment %#" PRIxPTR ": span ends off a chunk boundary", s->base);
            spans++;
            g = e + 1;
        }
        b = run->next;
    }
    CHECK(spans == s->mapped_chunks, "segment %#" PRIxPTR ": %zu spans, %zu map calls alive", s->base, spans, s->mapped_chunks);
    return 0;
}

static int check_segment(vl_caching *c, vl_csegment *s, int64_t sums[9], char *err, size_t errlen)
{
    /* sums: allocated, requested, pending, mapped, whole_free, allocated blocks,
     * unmapped blocks, retiring bytes, parked blocks */
    CHECK(s->first && s->first->addr == s->base && !s->first->prev, "segment %#" PRIxPTR ": bad first block", s->base);
    size_t mapped = 0;
    const vl_cblock *last = NULL;
    for (const vl_cblock *b = s->first; b; b = b->next) {
        CHECK(b->seg == s, "block %#" PRIxPTR ": wrong segment", b->addr);
        CHECK(b->size > 0 && b->size % 512 == 0 && b->addr % 512 == 0, "block %#" PRIxPTR ": size %zu or address not 512-aligned", b->addr, b->size);
        if (b->next) {
            CHECK(b->addr + b->size == b->next->addr && b->next->prev == b, "block %#" PRIxPTR ": not contiguous with its next", b->addr);
            CHECK(!(b->state == VL_CB_FREE && b->next->state == VL_CB_FREE), "blocks %#" PRIxPTR ": two FREE neighbours", b->addr);
            CHECK(!(b->state == VL_CB_UNMAPPED && b->next->state == VL_CB_UNMAPPED), "blocks %#" PRIxPTR ": two UNMAPPED neighbours", b->addr);
        }
        switch (b->state) {
        case VL_CB_ALLOCATED: {
            vl_addrmap_slot *slot = vl_addrmap_find(&c->table, b->addr);
            CHECK(slot && slot->value == (uint64_t)(uintptr_t)b, "allocated block %#" PRIxPTR " missing from the table", b->addr);
            CHECK(b->requested > 0 && b->requested <= b->size, "block %#" PRIxPTR ": requested %zu > size %zu", b->addr, b->requested, b->size);
            sums[0] += (int64_t)b->size;
            sums[1] += (int64_t)b->requested;
            sums[5]++;
            mapped += b->size;
            break;
        }
        case VL_CB_PARKED: {
            vl_addrmap_slot *slot = vl_addrmap_find(&c->table, b->addr);
            CHECK(slot && slot->value == (uint64_t)(uintptr_t)b, "parked block %#" PRIxPTR " missing from the table", b->addr);
            CHECK(b->uses == NULL, "parked block %#" PRIxPTR " with stream uses", b->addr);
            CHECK(b->requested > 0 && b->requested <= b->size, "parked block %#" PRIxPTR ": request %zu > size %zu", b->addr, b->requested, b->size);
            CHECK(s->pool->stream->park.block == b, "parked block %#" PRIxPTR " not its stream's", b->addr);
            CHECK(b->whole == (!b->prev && !b->next), "parked block %#" PRIxPTR ": stale whole flag", b->addr);
            if (b->whole) sums[4] += (int64_t)b->size;
            sums[8]++;
            mapped += b->size;
            break;
        }
        case VL_CB_PENDING:
            CHECK(b->pending_events > 0, "pending block %#" PRIxPTR " without events", b->addr);
            sums[2] += (int64_t)b->size;
            mapped += b->size;
            break;
        case VL_CB_FREE:
            CHECK(b->bin == vl_bin_index(b->size), "free block %#" PRIxPTR " in the wrong class", b->addr);
            CHECK(b->whole == (!b->prev && !b->next), "free block %#" PRIxPTR ": stale whole flag", b->addr);
            if (b->whole) sums[4] += (int64_t)b->size;
            mapped += b->size;
            break;
        case VL_CB_UNMAPPED:
            CHECK(s->expandable, "UNMAPPED block in a classic segment");
            CHECK(on_chunk_boundaries(s, b), "unmapped block %#" PRIxPTR " not on chunk boundaries", b->addr);
            CHECK(b->bin == vl_bin_index(b->size), "unmapped block %#" PRIxPTR " in the wrong hole class", b->addr);
            sums[6]++;
            break;
        case VL_CB_RETIRING:
            CHECK(s->expandable, "RETIRING block in a classic segment");
            CHECK(on_chunk_boundaries(s, b), "retiring block %#" PRIxPTR " not on chunk boundaries", b->addr);
            CHECK(b->retire_spare != NULL, "retiring block %#" PRIxPTR " without its spare header", b->addr);
            sums[7] += (int64_t)b->size;
            mapped += b->size;
            break;
        default:
            return fail(err, errlen, "block %#" PRIxPTR ": bad state %d", b->addr, b->state);
        }
        last = b;
    }
    CHECK(last->addr + last->size == s->base + s->size, "segment %#" PRIxPTR ": blocks do not end at its end", s->base);
    CHECK(mapped == s->mapped_bytes, "segment %#" PRIxPTR ": mapped %zu, blocks say %zu", s->base, s->mapped_bytes, mapped);
    if (s->expandable && check_spans(s, err, errlen) != 0) return -1;
    if (s->expandable) {
        const vl_csegment *r = s->pool->ranges;
        while (r && r != s) r = r->pool_next;
        CHECK(r == s, "expandable segment %#" PRIxPTR " not on its pool's range list", s->base);
    }
    sums[3] += (int64_t)mapped;
    return 0;
}

/* The stream's own counts (allocator.h): allocated blocks and mapped bytes of its segments. */
static int check_stream_counts(vl_caching *c, const vl_cstream *st, char *err, size_t errlen)
{
    int64_t allocated = 0, reserved = 0;
    for (const vl_csegment *s = c->segments; s; s = s->next) {
        if (s->pool->stream != st) continue;
        if (s->expandable) reserved += (int64_t)s->mapped_bytes;
        for (const vl_cblock *b = s->first; b; b = b->next) {
            if (b->state == VL_CB_ALLOCATED) allocated += (int64_t)b->size;
            if (b->state == VL_CB_RETIRING) reserved -= (int64_t)b->size; /* on its way out */
        }
    }
    if (c->plan && vl_plan_stream(c->plan) == st) { /* plan=1: its blocks and arena (plan.h) */
        allocated += vl_plan_live_bytes(c->plan);
        reserved += vl_plan_mapped_bytes(c->plan);
    }
    CHECK(allocated == st->allocated, "stream allocated %" PRId64 ", its blocks sum to %" PRId64, st->allocated, allocated);
    CHECK(reserved == st->reserved, "stream reserved %" PRId64 ", its ranges map %" PRId64, st->reserved, reserved);
    CHECK(st->peak_allocated >= st->allocated, "stream peak allocated below allocated");
    return 0;
}

/* One class's treap: in-order keys increase, no child outranks its parent, every node
 * is a block of this pool and class in `state` (FREE in bins, UNMAPPED in holes).
 * Recursive: the checker is not a hot path. */
static int check_treap(const vl_cpool *p, int state, unsigned i, const vl_cblock *t, const vl_cblock **prev,
                       size_t *blocks, size_t *bytes, char *err, size_t errlen)
{
    if (!t) return 0;
    CHECK(t->state == state && t->bin == i && t->seg->pool == p && vl_bin_index(t->size) == i,
          "bin %u holds a foreign block or one in another state", i);
    CHECK(!t->bin_left || vl_bin_priority(t->bin_left) <= vl_bin_priority(t), "bin %u: heap order broken", i);
    CHECK(!t->bin_right || vl_bin_priority(t->bin_right) <= vl_bin_priority(t), "bin %u: heap order broken", i);
    if (check_treap(p, state, i, t->bin_left, prev, blocks, bytes, err, errlen) != 0) return -1;
    CHECK(!*prev || vl_bin_key_less((*prev)->size, (*prev)->addr, t), "bin %u: keys out of order", i);
    *prev = t;
    (*blocks)++;
    *bytes += t->size;
    return check_treap(p, state, i, t->bin_right, prev, blocks, bytes, err, errlen);
}

static int check_bins(const vl_cpool *p, const vl_bins *bins, int state, char *err, size_t errlen)
{
    size_t blocks = 0, bytes = 0;
    for (unsigned i = 0; i < VL_BIN_COUNT; i++) {
        int bit = (int)(bins->words[i / 64] >> (i % 64) & 1);
        CHECK(bit == (bins->roots[i] != NULL), "bin %u: bitmap disagrees with its treap", i);
        const vl_cblock *prev = NULL;
        if (check_treap(p, state, i, bins->roots[i], &prev, &blocks, &bytes, err, errlen) != 0) return -1;
    }
    for (unsigned w = 0; w < VL_BIN_WORDS; w++)
        CHECK((int)(bins->summary >> w & 1) == (bins->words[w] != 0), "bin summary word %u wrong", w);
    CHECK(blocks == bins->free_blocks && bytes == bins->free_bytes, "bin totals wrong");
    return 0;
}

static int check_pool(const vl_cpool *p, char *err, size_t errlen)
{
    if (check_bins(p, &p->bins, VL_CB_FREE, err, errlen) != 0) return -1;
    return p->holes ? check_bins(p, p->holes, VL_CB_UNMAPPED, err, errlen) : 0;
}

/* The parked blocks (park.h): each stream's is PARKED and its own, the segments hold
 * `parked` of them (each its stream's, checked there), and the list holds every stream
 * that has one. */
static int check_parked(const vl_caching *c, int64_t parked, char *err, size_t errlen)
{
    size_t listed = 0, marked = 0;
    int64_t held = 0;
    for (const vl_cstream *st = c->parking.streams; st && listed <= c->nstreams; st = st->park.next, listed++)
        CHECK(st->park.listed, "a stream on the parked list not marked so");
    for (size_t i = 0; i < c->nstreams; i++) {
        const vl_cstream *st = c->streams[i];
        marked += st->park.listed != 0;
        held += st->park.block != NULL;
        CHECK(!st->park.block || st->park.listed, "a stream with a parked block off the parked list");
        CHECK(!st->park.block || (st->park.block->state == VL_CB_PARKED && st->park.block->seg->pool->stream == st),
              "a stream's parked block is not a PARKED block of its own");
    }
    CHECK(listed == marked, "parked list holds %zu streams, %zu marked", listed, marked);
    CHECK(held == parked, "streams hold %" PRId64 " parked blocks, segments %" PRId64, held, parked);
    return 0;
}

int vl_caching_check_locked(vl_caching *c, char *err, size_t errlen)
{
    int64_t sums[9] = {0};
    size_t free_blocks_in_segments = 0, header_count = 0, idle_count = 0, classic = 0;
    int64_t segment_count = 0;
    for (vl_csegment *s = c->segments; s; s = s->next) {
        if (check_segment(c, s, sums, err, errlen) != 0) return -1;
        for (const vl_cblock *b = s->first; b; b = b->next) {
            header_count++;
            if (b->state == VL_CB_FREE) free_blocks_in_segments++;
            if (b->state == VL_CB_RETIRING) header_count++; /* its spare header (block.h) */
        }
        segment_count += s->expandable ? (int64_t)s->mapped_chunks : 1;
        if (!s->expandable) {
            int idle = s->first->state == VL_CB_FREE && !s->first->next;
            classic++;
            idle_count += idle;
            CHECK(idle == (s->idle_at != 0), "segment %#" PRIxPTR ": idle %d but heap index %zu", s->base, idle, s->idle_at);
            CHECK(!idle || (s->idle_at <= c->nidle && c->idle[s->idle_at - 1] == s), "segment %#" PRIxPTR ": wrong heap slot", s->base);
        }
    }
    CHECK(idle_count == c->nidle && classic == c->nclassic && c->nclassic <= c->idle_cap,
          "idle heap: %zu idle segments, heap holds %zu; %zu classic segments, counter %zu, room %zu", idle_count,
          c->nidle, classic, c->nclassic, c->idle_cap);
    for (size_t i = 1; i < c->nidle; i++)
        CHECK(c->idle[(i - 1) / 2]->serial <= c->idle[i]->serial, "idle heap order broken at %zu", i);
    size_t free_blocks_in_bins = 0, pending_nodes = 0, holes = 0;
    for (size_t i = 0; i < c->nstreams; i++) {
        vl_cstream *st = c->streams[i];
        if (check_stream_counts(c, st, err, errlen) != 0) return -1;
        for (int k = 0; k < 2; k++) {
            if (check_pool(&st->pools[k], err, errlen) != 0) return -1;
            free_blocks_in_bins += st->pools[k].bins.free_blocks;
            if (st->pools[k].holes) holes += st->pools[k].holes->free_blocks;
        }
        for (vl_cpending *p = st->pending_head; p; p = p->next) {
            CHECK(p->block->state == VL_CB_PENDING, "pending event for a block that is not PENDING");
            CHECK(p->next || st->pending_tail == p, "pending FIFO tail wrong");
            pending_nodes++;
        }
    }
    CHECK(free_blocks_in_bins == free_blocks_in_segments, "bins hold %zu blocks, segments %zu FREE ones", free_blocks_in_bins, free_blocks_in_segments);
    CHECK(pending_nodes == c->npending, "pending events %zu, counter %zu", pending_nodes, c->npending);
    size_t waiting = 0, with_events = 0;
    for (const vl_cstream *st = c->waiting_streams; st && waiting <= c->nstreams; st = st->next_waiting, waiting++)
        CHECK(st->pending_head, "a stream without pending events on the waiting list");
    for (size_t i = 0; i < c->nstreams; i++) with_events += c->streams[i]->pending_head != NULL;
    CHECK(waiting == with_events, "waiting list holds %zu streams, %zu have pending events", waiting, with_events);
    CHECK(header_count == c->blocks.live, "block headers: %zu in segments, %zu handed out", header_count, c->blocks.live);
    CHECK((size_t)(sums[5] + sums[8]) == c->table.count, "pointer table holds %zu, allocated and parked blocks %" PRId64,
          c->table.count, sums[5] + sums[8]);
    if (check_parked(c, sums[8], err, errlen) != 0) return -1;
    if (c->plan) { /* plan=1: planned blocks are no blocks of a segment, its arena no segment (plan.h) */
        sums[0] += vl_plan_live_bytes(c->plan);
        sums[1] += vl_plan_live_requested(c->plan);
        sums[3] += vl_plan_mapped_bytes(c->plan);
    }
    CHECK(sums[0] == c->st.allocated_bytes, "allocated_bytes %" PRId64 ", blocks sum to %" PRId64, c->st.allocated_bytes, sums[0]);
    CHECK(sums[1] == c->st.requested_bytes, "requested_bytes %" PRId64 ", blocks sum to %" PRId64, c->st.requested_bytes, sums[1]);
    CHECK(sums[0] + sums[2] == c->st.active_bytes, "active_bytes %" PRId64 ", blocks sum to %" PRId64, c->st.active_bytes, sums[0] + sums[2]);
    CHECK(holes == (size_t)sums[6], "holes hold %zu blocks, segments %" PRId64 " UNMAPPED ones", holes, sums[6]);
    int64_t retiring = 0, spare = 0, lent = 0;
    for (const vl_cretire *r = c->retire_head; r; r = r->next) {
        CHECK(r->next || c->retire_tail == r, "retire FIFO tail wrong");
        size_t batch_bytes = 0;
        for (const vl_cblock *b = r->blocks; b; b = b->retire_next) {
            CHECK(b->state == VL_CB_RETIRING, "a retire batch holds a block that is not RETIRING");
            retiring += (int64_t)b->size;
            batch_bytes += b->size;
        }
        CHECK(r->lent <= batch_bytes, "a batch lent %zu of its %zu bytes", r->lent, batch_bytes);
        lent += (int64_t)r->lent;
    }
    CHECK(lent == c->lent_bytes, "lent bytes: batches %" PRId64 ", counter %" PRId64, lent, c->lent_bytes);
    CHECK(retiring == sums[7] && retiring == c->retiring_bytes, "retiring bytes: batches %" PRId64 ", blocks %" PRId64 ", counter %" PRId64, retiring, sums[7], c->retiring_bytes);
    for (unsigned k = 0; k < VL_SPARE_CLASSES; k++)
        for (const vl_cspare *sp = c->spares[k]; sp; sp = sp->next) {
            /* list k holds [2^k, 2^(k+1)): a span of several chunks need not be a power of two */
            CHECK(sp->size >> k == 1, "a spare of %zu bytes in class %u", sp->size, k);
            spare += (int64_t)sp->size;
        }
    CHECK(spare == c->spare_bytes, "spare bytes %" PRId64 ", counter %" PRId64, spare, c->spare_bytes);
    CHECK(sums[3] + spare - lent == c->st.reserved_bytes,
          "reserved_bytes %" PRId64 ", segments + spares - lent sum to %" PRId64, c->st.reserved_bytes, sums[3] + spare - lent);
    CHECK(sums[4] == c->whole_free_bytes, "whole free bytes %" PRId64 ", blocks sum to %" PRId64, c->whole_free_bytes, sums[4]);
    CHECK(segment_count == c->st.segments, "segments %" PRId64 ", counted %" PRId64, c->st.segments, segment_count);
    CHECK(c->st.reserved_bytes >= c->st.active_bytes && c->st.active_bytes >= c->st.allocated_bytes &&
              c->st.allocated_bytes >= c->st.requested_bytes && c->st.requested_bytes >= 0,
          "reserved >= active >= allocated >= requested >= 0 violated");
    CHECK(c->st.peak_reserved_bytes >= c->st.reserved_bytes && c->st.peak_allocated_bytes >= c->st.allocated_bytes,
          "a peak below its current value");
    /* A relocating grow watches its reclaim's batch only during its maps (budget.c). */
    CHECK(!c->relocation.watching && !c->relocation.watch, "a relocating grow's watch outlived its maps");
    CHECK(c->relocation.exposed_ns <= c->relocation.map_ns, "relocation: exposed time above the whole");
    if (vl_budget_check(&c->budget, &c->cfg, c->st.allocs, err, errlen) != 0) return -1;
    if (c->plan && vl_plan_check(c->plan, err, errlen) != 0) return -1;
    return 0;
}
