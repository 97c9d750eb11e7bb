/* Statistics in the shape of torch.cuda.memory_stats(), the printable memory summary
 * (torch.cuda.memory_summary()) and the OOM report.
 *
 * Counters are kept current by the paths that change them (core.c, segments_*.c,
 * events.c); two values are derived: inactive split bytes = FREE bytes outside segments
 * that are entirely free (= reserved - active - whole_free_bytes, since the mapped bytes
 * of every segment are exactly its ALLOCATED + PENDING + FREE blocks), and the largest
 * free block, found on demand from the bins' highest classes. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "caching/allocator.h"
#include "caching/chunks.h"
#include "caching/park.h"
#include "caching/sizes.h"
#include "size.h"

size_t vl_caching_largest_free(vl_caching *c)
{
    size_t largest = vl_park_largest(c);
    for (size_t i = 0; i < c->nstreams; i++) {
        for (int k = 0; k < 2; k++) {
            size_t l = vl_bins_largest(&c->streams[i]->pools[k].bins);
            if (l > largest) largest = l;
        }
    }
    return largest;
}

static size_t cached_free_bytes(vl_caching *c)
{
    size_t bytes = 0;
    for (size_t i = 0; i < c->nstreams; i++)
        for (int k = 0; k < 2; k++) bytes += c->streams[i]->pools[k].bins.free_bytes;
    return bytes;
}

void vl_caching_get_stats(vl_caching *c, vl_alloc_stats *out)
{
    vl_caching_stats_touch(c);
    *out = c->st;
    out->largest_free_block_bytes = (int64_t)vl_caching_largest_free(c);
}

void vl_caching_reset_peaks(vl_caching *c)
{
    vl_caching_stats_touch(c);
    c->st.peak_requested_bytes = c->st.requested_bytes;
    c->st.peak_allocated_bytes = c->st.allocated_bytes;
    c->st.peak_reserved_bytes = c->st.reserved_bytes;
    c->st.peak_active_bytes = c->st.active_bytes;
    c->st.peak_inactive_split_bytes = c->st.inactive_split_bytes;
    /* Streams' peak_allocated stays: it steers expandable reclaim, not statistics
     * (a program resetting its peaks every epoch would otherwise have its cache
     * unmapped and mapped again). */
}

static const char *fmt(uint64_t bytes, char *buf, size_t len) { return vl_format_size(bytes, buf, len); }

/* The largest request the pools of stream st can serve from cached FREE blocks alone
 * (small-pool blocks serve only small requests unless the pools lend, lend=1). */
static size_t largest_cached_for(const vl_caching *c, const vl_cstream *st)
{
    size_t largest = 0;
    for (int k = 0; st && k < 2; k++) {
        size_t l = vl_bins_largest(&st->pools[k].bins);
        if (k == 0 && !c->cfg.lend && l > VL_CACHING_SMALL_SIZE) l = VL_CACHING_SMALL_SIZE;
        if (l > largest) largest = l;
    }
    return largest;
}

/* Whether a cached FREE block of stream st serves `rounded` now (the pool's rules). */
static int cached_fits(const vl_caching *c, const vl_cstream *st, size_t rounded)
{
    if (!st) return 0;
    if (c->cfg.lend) return largest_cached_for(c, st) >= rounded;
    size_t l = vl_bins_largest(&st->pools[vl_caching_is_small(rounded) ? 0 : 1].bins);
    return l >= rounded &&
           (vl_caching_is_small(rounded) || c->cfg.expandable || vl_caching_oversize_ok(l, rounded, c->cfg.max_split));
}

/* The expandable chunk geometry a new range would have (segments_expandable.c). */
static size_t new_range_chunk(const vl_caching *c) { return vl_chunk_max_for(c->dev->granularity, c->cfg.chunk); }

/* Device memory a new segment (classic) or the mapping of a new range (expandable)
 * takes for a request of `rounded` bytes. */
static size_t device_need(const vl_caching *c, size_t rounded)
{
    if (!c->cfg.expandable) return vl_caching_classic_segment_size(rounded);
    return vl_chunk_ceil(c->dev->granularity, new_range_chunk(c), rounded);
}

/* The largest request that `free_bytes` of device memory serve through a new segment or
 * range. Classic: a request of >= 10 MiB gets a segment of its size rounded to 2 MiB;
 * below that a request needs a 20 MiB segment (or 2 MiB for <= 1 MiB). Expandable: the
 * mapping ends on a chunk boundary of a new range. */
static size_t device_largest(const vl_caching *c, size_t free_bytes)
{
    if (c->cfg.expandable) {
        size_t g = c->dev->granularity;
        return vl_chunk_floor(g, new_range_chunk(c), free_bytes - free_bytes % g);
    }
    size_t whole = free_bytes - free_bytes % VL_CACHING_ROUND_LARGE;
    if (whole >= VL_CACHING_MIN_LARGE_ALLOC) return whole;
    return free_bytes >= VL_CACHING_SMALL_SEGMENT ? VL_CACHING_SMALL_SIZE : 0;
}

/* What trim would give back to the device now: classic segments that are one FREE
 * block; expandable whole chunks inside FREE blocks, kept (spare) memory and chunks
 * retiring behind events (not the lent ones, whose memory a new mapping holds). Frees
 * still waiting on events are not counted. */
static size_t releasable_bytes(const vl_caching *c)
{
    size_t bytes = (size_t)c->spare_bytes + (size_t)(c->retiring_bytes - c->lent_bytes);
    for (const vl_csegment *s = c->segments; s; s = s->next) {
        if (!s->expandable) {
            if (s->first->state == VL_CB_FREE && !s->first->next) bytes += s->size;
            continue;
        }
        for (const vl_cblock *b = s->first; b; b = b->next) {
            if (b->state != VL_CB_FREE) continue;
            size_t lo = vl_chunk_ceil(s->granule, s->chunk, b->addr - s->base);
            size_t hi = vl_chunk_floor(s->granule, s->chunk, b->addr + b->size - s->base);
            if (hi > lo) bytes += hi - lo;
        }
    }
    return bytes;
}

static const vl_cstream *find_stream(const vl_caching *c, vl_stream s)
{
    for (size_t i = 0; i < c->nstreams; i++)
        if (c->streams[i]->handle == s) return c->streams[i];
    return NULL;
}

void vl_caching_fill_oom_report(vl_caching *c, size_t requested, vl_stream s, vl_oom_report *r)
{
    vl_park_release_all(c); /* the report reads the bins: parked blocks go there first */
    vl_caching_stats_touch(c);
    size_t dev_free = 0, dev_total = 0;
    int have_dev = c->dev->ops->mem_info(c->dev, &dev_free, &dev_total) == VL_DEV_OK;
    r->request_bytes = (int64_t)requested;
    size_t rounded = requested <= VL_CACHING_MAX_REQUEST ? vl_caching_round_size(requested, c->cfg.roundup_div)
                                                          : requested;
    r->rounded_bytes = (int64_t)rounded;
    r->allocated_bytes = c->st.allocated_bytes;
    r->reserved_bytes = c->st.reserved_bytes;
    r->reserved_unused_bytes = c->st.reserved_bytes - c->st.allocated_bytes;
    r->cached_free_bytes = (int64_t)cached_free_bytes(c);
    r->ooms = c->st.ooms;
    r->releasable_bytes = (int64_t)releasable_bytes(c);
    if (!have_dev) return; /* device figures unknown: so are the ones built on them */
    r->device_free_bytes = (int64_t)dev_free;
    r->device_total_bytes = (int64_t)dev_total;
    const vl_cstream *st = find_stream(c, s);
    size_t cached = largest_cached_for(c, st), after = dev_free + (size_t)r->releasable_bytes;
    size_t now = device_largest(c, dev_free);
    r->largest_block_bytes = (int64_t)(cached > now ? cached : now);
    r->largest_block_method = "allocator state";
    size_t piece = dev_free - dev_free % c->dev->granularity, block = vl_caching_largest_free(c);
    r->largest_free_bytes = (int64_t)(block > piece ? block : piece);
    size_t later = device_largest(c, after);
    r->largest_after_release_bytes = (int64_t)(cached > later ? cached : later);
    r->fits_after_release = rounded <= VL_CACHING_MAX_REQUEST &&
                            (cached_fits(c, st, rounded) || device_need(c, rounded) <= after);
    r->fits_after_release_basis = "allocator state: a cached block, or a new segment in device free + releasable";
}

void vl_caching_oom_report(vl_caching *c, size_t requested, vl_stream s)
{
    vl_oom_report *r = &c->last_report;
    vl_oom_report_unknown(r);
    vl_caching_fill_oom_report(c, requested, s, r);
    vl_oom_report_derive_fragmentation(r);
    char a[32], b[32], t[32], f[32], al[32], rs[32], un[32], lg[32];
    snprintf(c->last_oom, sizeof c->last_oom,
             "caching: out of memory: tried to allocate %s (%s rounded) on stream %p; device "
             "%s total, %s free; this allocator: %s allocated, %s reserved, %s reserved but "
             "unallocated, largest block that fits now %s, fragmentation %.1f%% (free memory "
             "outside its largest piece); OOM #%" PRId64,
             fmt(requested, a, sizeof a), fmt((uint64_t)r->rounded_bytes, b, sizeof b), (void *)s,
             fmt((uint64_t)(r->device_total_bytes > 0 ? r->device_total_bytes : 0), t, sizeof t),
             fmt((uint64_t)(r->device_free_bytes > 0 ? r->device_free_bytes : 0), f, sizeof f),
             fmt((uint64_t)c->st.allocated_bytes, al, sizeof al), fmt((uint64_t)c->st.reserved_bytes, rs, sizeof rs),
             fmt((uint64_t)(r->reserved_unused_bytes > 0 ? r->reserved_unused_bytes : 0), un, sizeof un),
             fmt((uint64_t)(r->largest_block_bytes > 0 ? r->largest_block_bytes : 0), lg, sizeof lg),
             isnan(r->fragmentation) ? 0.0 : 100.0 * r->fragmentation, c->st.ooms);
    if (c->cfg.oom_report) fprintf(stderr, "%s\n", c->last_oom);
}

static void row(FILE *out, const char *name, int64_t cur, int64_t peak)
{
    char a[32], b[32];
    fprintf(out, "  %-28s %14s %14s\n", name, fmt((uint64_t)cur, a, sizeof a), fmt((uint64_t)peak, b, sizeof b));
}

void vl_caching_print_summary(vl_caching *c, FILE *out)
{
    vl_park_release_all(c); /* the summary walks FREE blocks: parked ones go there first */
    vl_alloc_stats st;
    vl_caching_get_stats(c, &st);
    char buf[32];
    fprintf(out, "caching allocator memory summary (segments=%s)\n", c->cfg.expandable ? "expandable" : "classic");
    fprintf(out, "  %-28s %14s %14s\n", "metric", "current", "peak");
    row(out, "requested", st.requested_bytes, st.peak_requested_bytes);
    row(out, "allocated", st.allocated_bytes, st.peak_allocated_bytes);
    row(out, "active (incl. pending frees)", st.active_bytes, st.peak_active_bytes);
    row(out, "reserved", st.reserved_bytes, st.peak_reserved_bytes);
    row(out, "inactive split", st.inactive_split_bytes, st.peak_inactive_split_bytes);
    fprintf(out, "  %-28s %14s\n", "largest free block", fmt((uint64_t)st.largest_free_block_bytes, buf, sizeof buf));
    fprintf(out, "  %-28s %14" PRId64 "\n", "segments / mapped chunks", st.segments);
    fprintf(out, "  %-28s %14" PRId64 " / %" PRId64 "\n", "device allocs / frees", st.device_allocs, st.device_frees);
    fprintf(out, "  %-28s %14" PRId64 " / %" PRId64 "\n", "allocs / frees", st.allocs, st.frees);
    fprintf(out, "  %-28s %14" PRId64 "\n", "alloc retries (cache flushes)", st.alloc_retries);
    fprintf(out, "  %-28s %14" PRId64 "\n", "OOMs", st.ooms);
    fprintf(out, "  %-28s %14zu\n", "pending events", c->npending);
    fprintf(out, "  %-28s %14zu\n", "streams", c->nstreams);
    for (size_t i = 0; i < c->nstreams; i++) {
        for (int k = 0; k < 2; k++) {
            const vl_cpool *p = &c->streams[i]->pools[k];
            size_t reserved = 0;
            for (const vl_csegment *seg = c->segments; seg; seg = seg->next)
                if (seg->pool == p) reserved += seg->mapped_bytes;
            if (!reserved) continue;
            char r[32], f[32], l[32];
            fprintf(out, "  pool stream %p %-5s reserved %s, free %s in %zu blocks, largest %s\n",
                    (void *)c->streams[i]->handle, p->small ? "small" : "large", fmt(reserved, r, sizeof r),
                    fmt(p->bins.free_bytes, f, sizeof f), p->bins.free_blocks,
                    fmt(vl_bins_largest(&p->bins), l, sizeof l));
        }
    }
    if (c->last_oom[0]) fprintf(out, "  last OOM: %s\n", c->last_oom);
}
