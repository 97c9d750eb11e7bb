/* plan=1, serving: from a cut on, the k-th request of the period goes to arena +
 * offset[k] while the program repeats; a request that differs, or whose place is still
 * taken, ends the plan, and the arena goes back as its blocks do (plan.h says what and
 * why; plan_learn.c makes the layout). The invariants of both halves (vl_plan_check):
 *   - in LEARNING and ARMED no arena exists and no slot is live; in ACTIVE and DRAINING
 *     the arena is address space of the plan's own, and mapped_bytes (counted in the
 *     allocator's reserved and its stream's) are its mapped chunks;
 *   - live_count / live_bytes / live_requested are the live slots' count and sums;
 *   - two live slots never share an address (every serve checks the slots that do);
 *   - the log's allocations are in event order (their ev increases), each free_ev is
 *     after its ev, and nev <= VL_PLAN_LOG_EVENTS. */
#include <stdio.h>
#include <stdlib.h>

#include "caching/plan_state.h"
#include "caching/sizes.h"

static const char *const state_names[] = {"learning", "armed", "active", "draining", "off"};

/* A slot is live while its bit (at its rank) is set. */
static int is_live(const vl_cplan *p, size_t k) { return p->live_bits[p->rank[k] / 64] >> (p->rank[k] % 64) & 1; }
static void set_live(vl_cplan *p, size_t k, int on)
{
    uint64_t *word = &p->live_bits[p->rank[k] / 64], bit = 1ull << (p->rank[k] % 64);
    *word = on ? *word | bit : *word & ~bit;
}

static size_t nspans(const vl_cplan *p) { return (size_t)((p->va_size + p->span - 1) / p->span); }
/* The spans under slot k: [*lo, *hi]. */
static void spans_of(const vl_cplan *p, size_t k, size_t *lo, size_t *hi)
{
    *lo = (size_t)(p->off[k] / p->span);
    *hi = (size_t)((p->off[k] + p->size[k] - 1) / p->span);
}
static size_t span_bytes(const vl_cplan *p, size_t i)
{
    uint64_t lo = (uint64_t)i * p->span, hi = lo + p->span < p->va_size ? lo + p->span : p->va_size;
    return (size_t)(hi - lo);
}

/* Unmaps the arena's spans that no live slot touches (all of them when none is live),
 * after waiting for the device: work queued on the plan's stream (or, after record_use,
 * on another) may still use them. Once per plan, as it ends. */
static void unmap_unused(vl_caching *c)
{
    vl_cplan *p = c->plan;
    vl_device *d = c->dev;
    if (p->mapped_bytes && d->ops->synchronize(d) != VL_DEV_OK)
        vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "synchronize before the plan's arena is unmapped", 0);
    uint8_t *keep = p->mapped; /* a span a live slot touches: marked 2 below, then back to 1 */
    for (size_t k = 0; k < p->m; k++)
        if (is_live(p, k))
            for (size_t lo, hi, i = (spans_of(p, k, &lo, &hi), lo); i <= hi; i++) keep[i] = 2;
    for (size_t i = 0; i < nspans(p); i++) {
        if (keep[i] != 1) {
            if (keep[i] == 2) keep[i] = 1;
            continue;
        }
        size_t bytes = span_bytes(p, i);
        int rc = d->ops->unmap(d, (void *)(p->base + i * p->span), bytes);
        if (rc != VL_DEV_OK) { /* left mapped and counted; released with the arena */
            vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "unmap of a plan arena span", rc);
            continue;
        }
        p->mapped[i] = 0;
        p->mapped_bytes -= (int64_t)bytes;
        c->st.reserved_bytes -= (int64_t)bytes;
        p->stream->reserved -= (int64_t)bytes;
        c->st.device_frees++;
    }
}

static void release_arena(vl_caching *c)
{
    vl_cplan *p = c->plan;
    unmap_unused(c);
    if (p->mapped_bytes == 0) {
        int rc = c->dev->ops->va_release(c->dev, (void *)p->base, p->va_size);
        if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "release of a plan arena's address space", rc);
    } else { /* an unmap failed (reported): that memory and its address space are lost to us */
        c->st.reserved_bytes -= p->mapped_bytes;
        p->stream->reserved -= p->mapped_bytes;
    }
    free(p->mapped);
    p->mapped = NULL;
    p->mapped_bytes = 0;
    p->base = 0;
    vl_plan_drop_layout(p);
    vl_plan_restart_log(p);
    p->state = p->short_ends >= VL_PLAN_ATTEMPTS ? OFF : LEARNING;
}

/* A request that differs, or a place still taken: no more planned requests; the arena
 * goes back once its last planned block is freed. */
static void end_plan(vl_caching *c, const char *why)
{
    vl_cplan *p = c->plan;
    snprintf(p->info.last_end, sizeof p->info.last_end, "%s", why);
    p->info.ends++;
    p->short_ends = p->served_since_open < 2 * p->m ? p->short_ends + 1 : 0;
    p->state = DRAINING;
    if (p->live_count == 0) release_arena(c);
    else unmap_unused(c); /* the allocator serves from now on: keep only what live blocks use */
}

/* At a cut: the arena's address space, nothing mapped yet, and the cache given back (the
 * repeating blocks' free memory, which the arena replaces). 0, or -1 (learning again). */
static int open_arena(vl_caching *c)
{
    vl_cplan *p = c->plan;
    size_t g = c->dev->granularity;
    p->va_size = (p->arena_size + g - 1) / g * g;
    p->span = VL_PLAN_SPAN > g ? VL_PLAN_SPAN / g * g : g;
    p->mapped = calloc(nspans(p), 1);
    void *base = NULL;
    if (!p->mapped || c->dev->ops->va_reserve(c->dev, p->va_size, &base) != VL_DEV_OK) {
        free(p->mapped);
        p->mapped = NULL;
        vl_plan_refuse(p, "no address space for the arena");
        vl_plan_restart_log(p);
        return -1;
    }
    p->base = (uintptr_t)base;
    p->k = 0;
    p->old_live = 0;
    for (size_t i = first_alloc_at(p, p->regime); i < p->nallocs; i++)
        p->old_live += p->allocs[i].free_ev == VL_PLAN_NOT_FREED;
    p->info.activations++;
    p->served_since_open = 0;
    p->state = ACTIVE;
    /* The cache goes back now: it holds the repeating blocks' free memory, which the arena
     * replaces; left mapped beside the arena it would nearly double reserved. */
    vl_caching_release_cached(c);
    p->trim_due = 0;
    return 0;
}

/* Maps the arena's spans under slot k that are not mapped yet. 0, or -1 (the device
 * refused: the plan ends, the allocator serves). */
static int map_slot(vl_caching *c, size_t k)
{
    vl_cplan *p = c->plan;
    size_t first, last;
    spans_of(p, k, &first, &last);
    for (size_t i = first; i <= last; i++) {
        if (p->mapped[i]) continue;
        size_t bytes = span_bytes(p, i);
        int rc = c->dev->ops->map(c->dev, (void *)(p->base + i * p->span), bytes);
        if (rc != VL_DEV_OK) {
            if (rc != VL_DEV_OOM) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "map of a plan arena span", rc);
            end_plan(c, rc == VL_DEV_OOM ? "no device memory for the arena" : "a map of the arena failed");
            return -1;
        }
        p->mapped[i] = 1;
        p->mapped_bytes += (int64_t)bytes;
        vl_stat_add(&c->st.reserved_bytes, &c->st.peak_reserved_bytes, (int64_t)bytes);
        p->stream->reserved += (int64_t)bytes;
        c->st.device_allocs++;
    }
    return 0;
}

/* Whether a live slot shares bytes with slot k: one that starts inside k's bytes (a set
 * bit in k's rank range), or the live slot that starts last before k (live slots never
 * overlap each other, so only it can reach into k). */
static int place_taken(const vl_cplan *p, size_t k)
{
    uint32_t lo = p->lo_rank[k], hi = p->hi_rank[k];
    for (uint32_t w = lo / 64; w <= (hi - 1) / 64; w++) {
        uint64_t bits = p->live_bits[w];
        if (w == lo / 64) bits &= ~0ull << (lo % 64);
        if (w == (hi - 1) / 64 && (hi % 64)) bits &= ~(~0ull << (hi % 64));
        if (bits) return 1;
    }
    for (uint32_t w = lo / 64 + 1; w-- > 0;) {
        uint64_t bits = p->live_bits[w];
        if (w == lo / 64) bits &= (lo % 64) ? ~(~0ull << (lo % 64)) : 0;
        if (!bits) continue;
        uint32_t x = p->by_off[w * 64 + 63 - (uint32_t)__builtin_clzll(bits)];
        return p->off[x] + p->size[x] > p->off[k];
    }
    return 0;
}

int vl_plan_serve(vl_caching *c, size_t size, vl_stream s, void **out)
{
    vl_cplan *p = c->plan;
    if (p->state != ARMED && p->state != ACTIVE) return 0;
    vl_cstream *st = vl_caching_stream(c, s);
    if (!st || st != p->stream) return 0;
    uint64_t rounded = size <= VL_CACHING_MAX_REQUEST ? vl_caching_round_size(size, c->cfg.roundup_div) : size;
    if (p->state == ARMED) {
        if ((p->nev - p->cut) % p->q != 0) return 0; /* not at a cut yet: the allocator serves, the log checks */
        if (rounded != p->size[0]) {
            vl_plan_refuse(p, "the request at the cut differs");
            return 0;
        }
        if (open_arena(c) != 0) return 0;
    }
    if (p->trim_due) { /* the blocks from before the plan are gone: so is their cache */
        p->trim_due = 0;
        vl_caching_release_cached(c);
    }
    size_t k = p->k;
    if (rounded != p->size[k]) {
        char why[160];
        snprintf(why, sizeof why, "request %zu of the period asked for %llu bytes, planned %llu", k,
                 (unsigned long long)rounded, (unsigned long long)p->size[k]);
        end_plan(c, why);
        return 0;
    }
    if (place_taken(p, k)) {
        char why[160];
        snprintf(why, sizeof why, "request %zu of the period found its place still taken", k);
        end_plan(c, why);
        return 0;
    }
    if (map_slot(c, k) != 0) return 0;
    set_live(p, k, 1);
    p->requested[k] = size;
    p->live_count++;
    p->live_bytes += (int64_t)p->size[k];
    p->live_requested += (int64_t)size;
    c->st.allocs++;
    vl_caching_count_alloc(c, st, size, p->size[k]);
    p->info.served++;
    p->served_since_open++;
    p->k = k + 1 == p->m ? 0 : k + 1;
    *out = (void *)(p->base + p->off[k]);
    return 1;
}

int vl_plan_owns(const vl_cplan *p, const void *ptr)
{
    return p->base && (uintptr_t)ptr >= p->base && (uintptr_t)ptr < p->base + p->arena_size;
}

/* The live slot at ptr (a slot that starts there), or -1. */
static long live_slot(const vl_cplan *p, const void *ptr)
{
    uint64_t o = (uintptr_t)ptr - p->base;
    for (size_t r = first_rank_at(p, o); r < p->m && p->off[p->by_off[r]] == o; r++)
        if (is_live(p, p->by_off[r])) return (long)p->by_off[r];
    return -1;
}

void vl_plan_free(vl_caching *c, void *ptr)
{
    vl_cplan *p = c->plan;
    long k = live_slot(p, ptr);
    if (k < 0) {
        fprintf(stderr, "caching: free of %p, which is not allocated here (double free?); ignored\n", ptr);
        return;
    }
    set_live(p, k, 0);
    p->live_count--;
    p->live_bytes -= (int64_t)p->size[k];
    p->live_requested -= (int64_t)p->requested[k];
    vl_caching_count_free(c, p->stream, p->requested[k], p->size[k]);
    c->st.active_bytes -= (int64_t)p->size[k]; /* never reused after another stream's use: none waits */
    if (p->state == DRAINING && p->live_count == 0) release_arena(c);
    vl_caching_stats_touch(c);
}

size_t vl_plan_block_size(const vl_cplan *p, const void *ptr)
{
    long k = live_slot(p, ptr);
    return k < 0 ? 0 : (size_t)p->size[k];
}

int vl_plan_record_use(vl_caching *c, void *ptr, vl_stream s)
{
    vl_cplan *p = c->plan;
    if (live_slot(p, ptr) < 0) {
        fprintf(stderr, "caching: record_use of %p, which is not allocated here; ignored\n", ptr);
        return VL_UNSUPPORTED;
    }
    vl_cstream *st = vl_caching_stream(c, s);
    if (!st) return VL_FAILED;
    if (st == p->stream) return VL_OK; /* its own stream orders reuse already */
    /* Another stream works on a planned block: the plan can no longer reuse its place in
     * stream order. It ends (no place is handed out again), and the arena is unmapped
     * only after a synchronize (release_arena). */
    if (p->state == ACTIVE) end_plan(c, "record_use of a planned block by another stream");
    return VL_OK;
}

void vl_plan_close(vl_caching *c)
{
    vl_cplan *p = c->plan;
    if (!p->base) return;
    if (p->live_count)
        fprintf(stderr, "caching: %zu planned blocks (%lld bytes) still allocated at close; the plan's arena is released\n",
                p->live_count, (long long)p->live_bytes);
    for (size_t k = 0; k < p->m; k++) /* the program's leak: its blocks go with the arena */
        if (is_live(p, k)) vl_plan_free(c, (void *)(p->base + p->off[k]));
    if (p->base) release_arena(c); /* a plan still active, with no live block */
}

void vl_plan_trim(vl_caching *c)
{
    vl_cplan *p = c->plan;
    if (p->base && p->live_count == 0) {
        snprintf(p->info.last_end, sizeof p->info.last_end, "trim gave the arena back");
        release_arena(c);
    }
}

int64_t vl_plan_mapped_bytes(const vl_cplan *p) { return p->mapped_bytes; }
const vl_cstream *vl_plan_stream(const vl_cplan *p) { return p->stream; }
int64_t vl_plan_live_bytes(const vl_cplan *p) { return p->live_bytes; }
int64_t vl_plan_live_requested(const vl_cplan *p) { return p->live_requested; }

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            snprintf(err, errlen, "plan: " __VA_ARGS__);                                                               \
            return -1;                                                                                                 \
        }                                                                                                              \
    } while (0)

int vl_plan_check(const vl_cplan *p, char *err, size_t errlen)
{
    int holds = p->state == ACTIVE || p->state == DRAINING;
    CHECK(holds == (p->base != 0), "state %s with%s an arena", state_names[p->state], p->base ? "" : "out");
    size_t n = 0;
    int64_t bytes = 0, req = 0, mapped = 0;
    for (size_t i = 0; p->base && i < nspans(p); i++) mapped += p->mapped[i] ? (int64_t)span_bytes(p, i) : 0;
    CHECK(mapped == p->mapped_bytes, "mapped spans hold %lld bytes, counted %lld", (long long)mapped,
          (long long)p->mapped_bytes);
    for (size_t k = 0; k < p->m; k++) {
        if (!is_live(p, k)) continue;
        n++;
        bytes += (int64_t)p->size[k];
        req += (int64_t)p->requested[k];
        for (size_t lo, hi, a = (spans_of(p, k, &lo, &hi), lo); a <= hi; a++)
            CHECK(p->mapped[a], "live slot %zu on an unmapped span", k);
        for (size_t r = p->rank[k] + 1; r < p->hi_rank[k]; r++)
            CHECK(!is_live(p, p->by_off[r]), "slots %zu and %u overlap, both live", k, p->by_off[r]);
    }
    CHECK(n == p->live_count && bytes == p->live_bytes && req == p->live_requested,
          "live slots %zu / %lld B, counted %zu / %lld B", n, (long long)bytes, p->live_count, (long long)p->live_bytes);
    CHECK(holds || n == 0, "live slots without an arena");
    CHECK(p->nev <= VL_PLAN_LOG_EVENTS, "the log holds %llu events", (unsigned long long)p->nev);
    for (size_t i = 0; i < p->nallocs; i++) {
        CHECK(i == 0 || p->allocs[i].ev > p->allocs[i - 1].ev, "log allocations out of order at %zu", i);
        CHECK(p->allocs[i].free_ev == VL_PLAN_NOT_FREED || p->allocs[i].free_ev > p->allocs[i].ev,
              "log entry %zu freed before its allocation", i);
    }
    return 0;
}

void vl_plan_get_info(const vl_cplan *p, vl_plan_info *out)
{
    *out = p->info;
    out->state = state_names[p->state];
}
