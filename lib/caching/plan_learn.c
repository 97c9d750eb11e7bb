/* plan=1, learning: one stream's events logged as signatures, the smallest period of
 * the latest ones, and one period laid out offline (plan.h says what and why;
 * plan_state.h holds the state; plan.c serves the layout).
 *
 * Invariants (vl_plan_check, plan.c): the log's allocations are in event order (their
 * ev increases), each free_ev is after its ev, and nev <= VL_PLAN_LOG_EVENTS; a layout
 * is used only once every pair of its slots that share bytes was checked never to be
 * live at once (make_plan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caching/hostmem.h"
#include "caching/plan_state.h"
#include "caching/sizes.h"
#include "trace/layout.h"

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

void vl_plan_drop_layout(vl_cplan *p)
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
    vl_plan_drop_layout(p);
    free(p->sig);
    free(p->work);
    free(p->allocs);
    free(p);
}

void vl_plan_restart_log(vl_cplan *p)
{
    p->nev = 0;
    p->nallocs = 0;
    p->elsewhere = 0;
    p->next_check = VL_PLAN_FIRST_CHECK;
}

void vl_plan_refuse(vl_cplan *p, const char *why)
{
    snprintf(p->info.last_end, sizeof p->info.last_end, "%s", why);
    vl_plan_drop_layout(p);
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

/* qsort with a context, portably: the plan's offsets through a thread-local pointer
 * (allocators in several threads may plan at once). */
static _Thread_local const uint64_t *sort_off;
static int by_offset(const void *a, const void *b)
{
    uint64_t x = sort_off[*(const uint32_t *)a], y = sort_off[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

/* Lays out the template (blocks[0..mm), one plan period of `period` events), and builds the
 * slots and their index by offset (ranks), checking every pair of slots that share bytes
 * against their lives (the layout's own check). 0, or -1 (refused, why in info). */
static int make_plan(vl_cplan *p, const vl_layout_block *blocks, size_t mm, uint64_t period)
{
    uint64_t *best = malloc((mm ? mm : 1) * sizeof *best), *offs = malloc((mm ? mm : 1) * sizeof *offs);
    int rc = -1;
    if (!best || !offs) {
        vl_plan_refuse(p, "out of host memory for the plan");
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
        vl_plan_refuse(p, "no layout of the period");
        goto out;
    }
    vl_plan_drop_layout(p);
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
        vl_plan_refuse(p, "out of host memory for the plan");
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
                vl_plan_refuse(p, "the layout put two blocks live at once in one place");
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
        vl_plan_refuse(p, "out of host memory for the plan");
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
        vl_plan_refuse(p, "out of host memory for the plan");
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
    vl_plan_restart_log(p);
    if (p->state == ARMED) vl_plan_refuse(p, "the log filled before the plan started");
}

static void log_event(vl_cplan *p, uint64_t sig)
{
    p->sig[p->nev++] = sig;
    if (p->state == ARMED) {
        if (p->sig[p->nev - 1] != p->sig[p->nev - 1 - p->q]) vl_plan_refuse(p, "the program stopped repeating before the plan started");
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
            vl_plan_restart_log(p);
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
