/* plan=1: learn a repeating program's allocations, lay one period out offline, serve
 * later periods from that layout (plan.h says what and why; this file is how).
 *
 * Invariants (vl_plan_check):
 *   - in LEARNING and ARMED no arena exists and no slot is live; in ACTIVE and DRAINING
 *     the arena is address space of the plan's own, and mapped_bytes (counted in the
 *     allocator's reserved and its stream's) are its mapped chunks;
 *   - live_count / live_bytes / live_requested are the live slots' count and sums;
 *   - two live slots never share an address (every serve checks the slots that do);
 *   - the log's allocations are in event order (their ev increases), each free_ev is
 *     after its ev, and nev <= VL_PLAN_LOG_EVENTS. */
#include "caching/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caching/allocator.h"
#include "caching/hostmem.h"
#include "caching/sizes.h"
#include "trace/layout.h"

#define VL_PLAN_LOG_EVENTS (1u << 17) /* the log: a period must repeat inside it */
#define VL_PLAN_FIRST_CHECK 2048      /* events between looks for a period, at first (then half the log) */
#define VL_PLAN_MIN_REPEATS 3         /* periods seen before a plan is made, doubled after each plan */
                                      /* that ended within two periods (a program that repeats a while) */
#define VL_PLAN_ATTEMPTS 8            /* short plans in a row before plan gives up */
#define VL_PLAN_MAX_FOLD 4            /* a plan spans at most this many periods */
#define VL_PLAN_SWITCH 256            /* requests on another stream before the plan may follow it */
#define VL_PLAN_CHUNK (2u << 20)      /* the layout's footprint unit (one granule) */
/* The arena maps this much per call (one granule): larger spans save calls once, but in
 * the first period a span also maps the idle places of blocks still live from before
 * the plan, which costs more memory than the calls are worth. */
#define VL_PLAN_SPAN (2u << 20)
#define VL_PLAN_NOT_FREED UINT64_MAX

enum { LEARNING, ARMED, ACTIVE, DRAINING, OFF };
static const char *const state_names[] = {"learning", "armed", "active", "draining", "off"};

typedef struct logged {
    uintptr_t addr;
    uint64_t size;    /* the request rounded as the allocator rounds it */
    uint64_t ev;      /* its allocation's event */
    uint64_t free_ev; /* VL_PLAN_NOT_FREED while live */
} logged;

struct vl_cplan {
    int state;
    vl_cstream *stream; /* the stream planned for: the first that allocated, or one that */
                        /* allocated 4x as much since the log began (while learning) */
    uint64_t elsewhere; /* allocations on other streams since the log began */

    /* The log (LEARNING, ARMED): one signature per event, the allocations among them. */
    uint64_t *sig;
    uint32_t *work; /* detection's prefix function, then its live counts */
    logged *allocs;
    size_t nallocs;
    uint64_t nev, next_check;

    /* ARMED: the period (events) and the cut (the allocation event where it starts). */
    uint64_t q, cut;

    /* The plan: slot k is the k-th request after a cut. */
    size_t m;
    uint64_t *off, *size;   /* per slot */
    uint64_t *requested;    /* per live slot: the caller's size */
    uint32_t *by_off;       /* slots sorted by offset (frees find theirs by binary search) */
    /* Whether a slot's place is free: live slots as bits over their ranks in by_off; the
     * slots that start inside slot k's bytes are ranks [lo_rank[k], hi_rank[k]). */
    uint32_t *rank, *lo_rank, *hi_rank;
    uint64_t *live_bits;
    size_t k;
    /* The arena: address space of its own, mapped span by span (VL_PLAN_SPAN, one map
     * call each) the first time a slot touches a span (so the first period holds only
     * about what it uses, beside the blocks still live from before the plan) and kept
     * mapped while the plan lasts. */
    uintptr_t base;          /* 0: no arena */
    uint64_t arena_size;     /* the layout's extent */
    uint64_t va_size;        /* reserved: arena_size rounded up to the device's granularity */
    size_t span;             /* VL_PLAN_SPAN in whole granules; the last span may be shorter */
    uint8_t *mapped;         /* per span */
    int64_t mapped_bytes;
    size_t live_count;
    int64_t live_bytes, live_requested;
    /* ACTIVE: blocks of the repeating kind made before the plan and still live (the
     * allocator's): once all are freed, their cached memory is given back (trim). */
    uint64_t regime;
    size_t old_live;
    int trim_due;

    /* Plans in a row that ended within two of their periods (a program that repeated only
     * a while, as an inference server's run of same-shape requests): each doubles the
     * repeats the next plan waits for; VL_PLAN_ATTEMPTS of them turn plan off. */
    uint64_t short_ends;
    uint64_t served_since_open;
    vl_plan_info info;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    return x ^ (x >> 33);
}
static uint64_t sig_alloc(uint64_t size) { return mix(size << 1); }
static uint64_t sig_free(uint64_t distance) { return mix((distance << 1) | 1); }

vl_cplan *vl_plan_new(void)
{
    vl_cplan *p = vl_host_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->sig = vl_host_malloc(VL_PLAN_LOG_EVENTS * sizeof *p->sig);
    p->work = vl_host_malloc((VL_PLAN_LOG_EVENTS + 2) * sizeof *p->work);
    p->allocs = vl_host_malloc(VL_PLAN_LOG_EVENTS * sizeof *p->allocs);
    if (!p->sig || !p->work || !p->allocs) {
        vl_plan_delete(p);
        return NULL;
    }
    p->next_check = VL_PLAN_FIRST_CHECK;
    return p;
}

static void drop_plan(vl_cplan *p)
{
    free(p->off);
    free(p->size);
    free(p->requested);
    free(p->by_off);
    free(p->rank);
    free(p->lo_rank);
    free(p->hi_rank);
    free(p->live_bits);
    p->off = p->size = p->requested = NULL;
    p->by_off = p->rank = p->lo_rank = p->hi_rank = NULL;
    p->live_bits = NULL;
    p->m = 0;
}

void vl_plan_delete(vl_cplan *p)
{
    if (!p) return;
    drop_plan(p);
    free(p->sig);
    free(p->work);
    free(p->allocs);
    free(p);
}

static void restart_log(vl_cplan *p)
{
    p->nev = 0;
    p->nallocs = 0;
    p->elsewhere = 0;
    p->next_check = VL_PLAN_FIRST_CHECK;
}

static void refuse(vl_cplan *p, const char *why)
{
    snprintf(p->info.last_end, sizeof p->info.last_end, "%s", why);
    drop_plan(p);
    p->state = LEARNING;
}

/* ---- Detection: the smallest period of the latest events -------------------------- */

/* The longest run of latest events that repeats at least `repeats` times, and
 * its period: the prefix function of the events read backwards gives, for each length
 * m of that reading, its smallest period m - pi[m-1]. 0 when none. */
static uint64_t find_period(vl_cplan *p, uint64_t repeats, uint64_t *run)
{
    uint64_t n = p->nev;
    const uint64_t *s = p->sig;
    uint32_t *pi = p->work;
#define R(i) s[n - 1 - (i)]
    pi[0] = 0;
    for (uint64_t i = 1; i < n; i++) {
        uint32_t j = pi[i - 1];
        while (j > 0 && R(i) != R(j)) j = pi[j - 1];
        if (R(i) == R(j)) j++;
        pi[i] = j;
    }
#undef R
    for (uint64_t m = n; m >= 2; m--) {
        uint64_t q = m - pi[m - 1];
        if (q >= 2 && repeats * q <= m) {
            *run = m;
            return q;
        }
    }
    return 0;
}

/* First logged allocation with ev >= e (allocations are in event order). */
static size_t first_alloc_at(const vl_cplan *p, uint64_t e)
{
    size_t lo = 0, hi = p->nallocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->allocs[mid].ev < e) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* qsort with a context, portably: the plan's offsets through a thread-local pointer
 * (allocators in several threads may plan at once). */
static _Thread_local const uint64_t *sort_off;
static int by_offset(const void *a, const void *b)
{
    uint64_t x = sort_off[*(const uint32_t *)a], y = sort_off[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

/* The first rank (position in by_off) whose slot starts at o or above. */
static size_t first_rank_at(const vl_cplan *p, uint64_t o)
{
    size_t lo = 0, hi = p->m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->off[p->by_off[mid]] < o) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Lays out the template (blocks[0..mm), one plan period of `period` events), and builds the
 * slots and their index by offset (ranks), checking every pair of slots that share bytes
 * against their lives (the layout's own check). 0, or -1 (refused, why in info). */
static int make_plan(vl_cplan *p, const vl_layout_block *blocks, size_t mm, uint64_t period)
{
    uint64_t *best = malloc((mm ? mm : 1) * sizeof *best), *offs = malloc((mm ? mm : 1) * sizeof *offs);
    int rc = -1;
    if (!best || !offs) {
        refuse(p, "out of host memory for the plan");
        goto out;
    }
    vl_layout_result r, best_r = {0};
    char err[160];
    int found = 0;
    for (int h = 0; h < VL_LAYOUT_NHEURISTICS; h++) {
        if (vl_layout_periodic(blocks, mm, period, (vl_layout_heuristic)h, VL_CACHING_MIN_BLOCK, VL_PLAN_CHUNK, offs,
                               &r, err, sizeof err) != 0)
            continue;
        if (!found || r.extent_bytes < best_r.extent_bytes) {
            memcpy(best, offs, mm * sizeof *best);
            best_r = r;
            found = 1;
        }
    }
    if (!found || mm == 0) {
        refuse(p, "no layout of the period");
        goto out;
    }
    drop_plan(p);
    p->m = mm;
    p->off = best;
    best = NULL;
    p->size = malloc(mm * sizeof *p->size);
    p->requested = calloc(mm, sizeof *p->requested);
    p->by_off = malloc(mm * sizeof *p->by_off);
    p->rank = malloc(mm * sizeof *p->rank);
    p->lo_rank = malloc(mm * sizeof *p->lo_rank);
    p->hi_rank = malloc(mm * sizeof *p->hi_rank);
    p->live_bits = calloc((mm + 63) / 64, sizeof *p->live_bits);
    if (!p->size || !p->requested || !p->by_off || !p->rank || !p->lo_rank || !p->hi_rank || !p->live_bits) {
        refuse(p, "out of host memory for the plan");
        goto out;
    }
    for (size_t j = 0; j < mm; j++) {
        p->size[j] = (blocks[j].size + VL_CACHING_MIN_BLOCK - 1) / VL_CACHING_MIN_BLOCK * VL_CACHING_MIN_BLOCK;
        p->by_off[j] = (uint32_t)j;
    }
    sort_off = p->off;
    qsort(p->by_off, mm, sizeof *p->by_off, by_offset);
    /* The layout's own check: slots that share bytes never live at the same time. */
    for (size_t i = 0, lo = 0; i < mm; i++) {
        uint32_t a = p->by_off[i];
        while (p->off[p->by_off[lo]] < p->off[a]) lo++;
        size_t hi = first_rank_at(p, p->off[a] + p->size[a]);
        p->rank[a] = (uint32_t)i;
        p->lo_rank[a] = (uint32_t)lo;
        p->hi_rank[a] = (uint32_t)hi;
        for (size_t j = i + 1; j < hi; j++)
            if (vl_layout_periodic_conflict(&blocks[a], &blocks[p->by_off[j]], period)) {
                refuse(p, "the layout put two blocks live at once in one place");
                goto out;
            }
    }
    p->arena_size = best_r.extent_bytes;
    p->info.plans++;
    p->info.period_events = period;
    p->info.period_allocs = mm;
    p->info.arena_bytes = best_r.extent_bytes;
    p->info.peak_bytes = best_r.peak_bytes;
    rc = 0;
out:
    free(best);
    free(offs);
    return rc;
}

/* At a checkpoint: a period repeated at least three times, where it starts, the plan.
 * The period starts at the allocation where the fewest bytes of repeating blocks are
 * live: those, made before the plan, stay where they are while the plan places their
 * next instances, so the arena's first period holds them twice. */
static void detect(vl_cplan *p)
{
    uint64_t n = p->nev, run = 0;
    uint64_t q = find_period(p, (uint64_t)VL_PLAN_MIN_REPEATS << p->short_ends, &run);
    /* The repetition must cover half of what the log saw: a loop inside a step (the
     * layers of a forward pass) repeats too, but only for a short stretch. */
    if (!q || 2 * run < n) return;
    uint64_t regime = n - run;
    /* Live bytes of repeating blocks before each event from regime on (work, reused as
     * int64 pairs would not fit: counted in units of VL_CACHING_MIN_BLOCK, 32 bits each). */
    uint32_t *live = p->work;
    memset(live, 0, (run + 2) * sizeof *live);
    size_t first = first_alloc_at(p, regime);
    for (size_t i = first; i < p->nallocs; i++) {
        const logged *l = &p->allocs[i];
        uint32_t units = (uint32_t)((l->size + VL_CACHING_MIN_BLOCK - 1) / VL_CACHING_MIN_BLOCK);
        live[l->ev - regime + 1] += units;
        if (l->free_ev != VL_PLAN_NOT_FREED) live[l->free_ev - regime + 1] -= units;
    }
    for (uint64_t i = 1; i <= run; i++) live[i] += live[i - 1];
    uint64_t cut = UINT64_MAX; /* the allocation in [n - 2q, n - q) with the fewest live */
    for (size_t a = first_alloc_at(p, n - 2 * q); a < p->nallocs && p->allocs[a].ev < n - q; a++)
        if (cut == UINT64_MAX || live[p->allocs[a].ev - regime] < live[cut - regime]) cut = p->allocs[a].ev;
    size_t a0 = first_alloc_at(p, cut), a1 = first_alloc_at(p, cut + q), mm = a1 - a0;
    uint64_t *life = malloc((mm ? mm : 1) * sizeof *life);
    if (!life) {
        refuse(p, "out of host memory for the plan");
        return;
    }
    /* Each block's life: its latest instance's that was freed. A block may outlive the
     * period (a training loop's `loss = ...` makes the next loss before freeing the last):
     * the plan then spans `fold` periods, so an instance and the next one get places of
     * their own. */
    uint64_t fold = 1;
    for (size_t j = 0; j < mm; j++) {
        const logged *l = NULL;
        for (size_t i = a0 + j;; i -= mm) {
            if (p->allocs[i].ev < regime) break;
            if (p->allocs[i].free_ev != VL_PLAN_NOT_FREED) {
                l = &p->allocs[i];
                break;
            }
            if (i < mm) break;
        }
        if (!l || l->free_ev - l->ev > VL_PLAN_MAX_FOLD * q) {
            snprintf(p->info.last_end, sizeof p->info.last_end,
                     "a period of %llu events repeats, but some of its blocks live longer than %d periods",
                     (unsigned long long)q, VL_PLAN_MAX_FOLD);
            free(life);
            return;
        }
        life[j] = l->free_ev - l->ev;
        while (life[j] > fold * q) fold++;
    }
    vl_layout_block *blocks = malloc((mm ? fold * mm : 1) * sizeof *blocks);
    if (!blocks) {
        free(life);
        refuse(p, "out of host memory for the plan");
        return;
    }
    for (uint64_t f = 0; f < fold; f++)
        for (size_t j = 0; j < mm; j++) {
            uint64_t t0 = p->allocs[a0 + j].ev - cut + f * q;
            blocks[f * mm + j] = (vl_layout_block){.size = p->allocs[a0 + j].size, .t0 = t0, .t1 = t0 + life[j]};
        }
    free(life);
    int rc = make_plan(p, blocks, fold * mm, fold * q);
    free(blocks);
    if (rc != 0) return;
    p->q = q; /* the log repeats with q; the plan spans fold periods */
    p->cut = cut;
    p->regime = regime;
    p->state = ARMED;
}

/* ---- Learning: the log ------------------------------------------------------------ */

/* A full log starts again (for an allocation, before its entry is made, so that it survives). */
static void make_room(vl_cplan *p)
{
    if (p->nev < VL_PLAN_LOG_EVENTS) return;
    restart_log(p);
    if (p->state == ARMED) refuse(p, "the log filled before the plan started");
}

static void log_event(vl_cplan *p, uint64_t sig)
{
    p->sig[p->nev++] = sig;
    if (p->state == ARMED) {
        if (p->sig[p->nev - 1] != p->sig[p->nev - 1 - p->q]) refuse(p, "the program stopped repeating before the plan started");
    } else if (p->nev >= p->next_check) {
        p->next_check = p->nev + (p->nev / 2 > VL_PLAN_FIRST_CHECK ? p->nev / 2 : VL_PLAN_FIRST_CHECK);
        detect(p);
    }
}

void vl_plan_note_alloc(vl_caching *c, vl_cstream *st, vl_cblock *b)
{
    vl_cplan *p = c->plan;
    b->plan_tag = 0;
    if (p->state != LEARNING && p->state != ARMED) return;
    if (!p->stream) p->stream = st;
    if (st != p->stream) {
        /* A program that works on another stream than the one that allocated first (a
         * side stream for training, the default one for set-up): follow the one that
         * allocates most, while learning. */
        if (++p->elsewhere > VL_PLAN_SWITCH && p->elsewhere > 4 * (p->nallocs + 1) && p->state == LEARNING) {
            p->stream = st;
            restart_log(p);
        }
        return;
    }
    make_room(p);
    uint64_t size = b->requested <= VL_CACHING_MAX_REQUEST ? vl_caching_round_size(b->requested, c->cfg.roundup_div)
                                                           : b->requested;
    b->plan_tag = (uint32_t)(p->nallocs + 1);
    p->allocs[p->nallocs++] = (logged){.addr = b->addr, .size = size, .ev = p->nev, .free_ev = VL_PLAN_NOT_FREED};
    log_event(p, sig_alloc(size));
}

/* The logged allocation of block b, still live, or NULL (made before the log began,
 * or on another stream): its tag (block.h) names it, checked against the log, where a
 * tag left from before a restart of the log names another block or one freed. */
static logged *find_logged(vl_cplan *p, const vl_cblock *b)
{
    size_t i = (size_t)b->plan_tag - 1;
    if (!b->plan_tag || i >= p->nallocs) return NULL;
    logged *l = &p->allocs[i];
    return l->addr == b->addr && l->free_ev == VL_PLAN_NOT_FREED ? l : NULL;
}

void vl_plan_note_free(vl_caching *c, const vl_cblock *b)
{
    vl_cplan *p = c->plan;
    if (p->state == ACTIVE && p->old_live) {
        logged *l = find_logged(p, b);
        if (l && l->ev >= p->regime) {
            l->free_ev = p->nev; /* any value: freed */
            p->trim_due = --p->old_live == 0;
        }
        return;
    }
    if (p->state != LEARNING && p->state != ARMED) return;
    if (b->seg->pool->stream != p->stream) return;
    logged *l = find_logged(p, b);
    uint64_t distance = l ? p->nev - l->ev : 0;
    if (l) l->free_ev = p->nev;
    make_room(p);
    log_event(p, sig_free(distance));
}

/* ---- Serving ---------------------------------------------------------------------- */

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
    drop_plan(p);
    restart_log(p);
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
        refuse(p, "no address space for the arena");
        restart_log(p);
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
            refuse(p, "the request at the cut differs");
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
