/* Statistics in the shape of torch.cuda.memory_stats(), the printable memory summary
 * (torch.cuda.memory_summary()) and the OOM report.
 *
 * Counters are kept current by the paths that change them (core.c, segments_*.c,
 * events.c); two values are derived: inactive split bytes = FREE bytes outside segments
 * that are entirely free (= reserved - active - whole_free_bytes, since the mapped bytes
 * of every segment are exactly its ALLOCATED + PENDING + FREE blocks), and the largest
 * free block, found on demand from the bins' highest classes. */
#include <inttypes.h>
#include <string.h>

#include "caching/allocator.h"
#include "size.h"

void vl_caching_stats_touch(vl_caching *c)
{
    int64_t inactive = c->st.reserved_bytes - c->st.active_bytes - c->whole_free_bytes;
    c->st.inactive_split_bytes = inactive;
    if (inactive > c->st.peak_inactive_split_bytes) c->st.peak_inactive_split_bytes = inactive;
}

size_t vl_caching_largest_free(vl_caching *c)
{
    size_t largest = 0;
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

void vl_caching_oom_report(vl_caching *c, size_t requested, size_t rounded, vl_stream s)
{
    size_t dev_free = 0, dev_total = 0;
    if (c->dev->ops->mem_info(c->dev, &dev_free, &dev_total) != VL_DEV_OK) dev_free = dev_total = 0;
    size_t cached = cached_free_bytes(c), largest = vl_caching_largest_free(c);
    int64_t unallocated = c->st.reserved_bytes - c->st.allocated_bytes;
    double fragmentation = cached ? (double)(cached - largest) / (double)cached : 0.0;
    char a[32], b[32], t[32], f[32], al[32], rs[32], un[32], lg[32];
    snprintf(c->last_oom, sizeof c->last_oom,
             "caching: out of memory: tried to allocate %s (%s rounded) on stream %p; device "
             "%s total, %s free; this allocator: %s allocated, %s reserved, %s reserved but "
             "unallocated, largest free block %s, fragmentation %.1f%% (free cached bytes "
             "outside the largest block); OOM #%" PRId64,
             fmt(requested, a, sizeof a), fmt(rounded, b, sizeof b), (void *)s, fmt(dev_total, t, sizeof t),
             fmt(dev_free, f, sizeof f), fmt((uint64_t)c->st.allocated_bytes, al, sizeof al),
             fmt((uint64_t)c->st.reserved_bytes, rs, sizeof rs),
             fmt((uint64_t)(unallocated > 0 ? unallocated : 0), un, sizeof un), fmt(largest, lg, sizeof lg),
             100.0 * fragmentation, c->st.ooms);
    if (c->cfg.oom_report) fprintf(stderr, "%s\n", c->last_oom);
}

static void row(FILE *out, const char *name, int64_t cur, int64_t peak)
{
    char a[32], b[32];
    fprintf(out, "  %-28s %14s %14s\n", name, fmt((uint64_t)cur, a, sizeof a), fmt((uint64_t)peak, b, sizeof b));
}

void vl_caching_print_summary(vl_caching *c, FILE *out)
{
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
