/* Static layouts of a trace found offline (see layout.h).
 *
 * The greedy places blocks one by one in the heuristic's order; for each it needs the
 * blocks already placed that live at the same time. Scanning all of them made the
 * largest traces (165k blocks) take 20 s, so placed blocks are indexed by time: the
 * operations are cut into buckets of `width` operations, and a block is listed in every
 * bucket its life touches. A query visits the buckets of its own life and keeps each
 * block once (a stamp per block). */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct life {
    uint64_t size;   /* rounded to align */
    uint64_t t0, t1; /* live over operations [t0, t1); periodic: t1 past the period wraps to [0, t1 - period) */
    int covered;     /* its requested size is in the layout's range */
} life;

/* A life as at most two pieces of [0, period). */
static int pieces(const life *l, uint64_t period, uint64_t lo[2], uint64_t hi[2])
{
    lo[0] = l->t0;
    hi[0] = l->t1 < period ? l->t1 : period;
    if (l->t1 <= period) return 1;
    lo[1] = 0;
    hi[1] = l->t1 - period;
    return 2;
}

static int lives_overlap(const life *a, const life *b, uint64_t period)
{
    uint64_t alo[2], ahi[2], blo[2], bhi[2];
    int na = pieces(a, period, alo, ahi), nb = pieces(b, period, blo, bhi);
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (alo[i] < bhi[j] && blo[j] < ahi[i]) return 1;
    return 0;
}

typedef struct bucket {
    uint32_t *ids;
    size_t n, cap;
} bucket;

typedef struct interval {
    uint64_t lo, hi;
} interval;

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

static uint64_t round_up(uint64_t x, uint64_t align)
{
    uint64_t r = (x + align - 1) & ~(align - 1);
    return r ? r : align; /* a 0-byte block still takes one unit, as the allocator's do */
}

/* Each slot's rounded size and life; the peak of the covered blocks' live bytes. NULL
 * out of memory. */
static life *lives_of(const vl_trace *t, vl_layout_sizes sizes, uint64_t align, uint64_t *peak)
{
    life *L = calloc(t->nallocs ? t->nallocs : 1, sizeof *L);
    if (!L) return NULL;
    for (size_t s = 0; s < t->nallocs; s++) L[s].t1 = t->nops;
    uint64_t live = 0, high = 0;
    for (size_t i = 0; i < t->nops; i++) {
        const vl_trace_op *op = &t->ops[i];
        life *l = &L[op->slot];
        if (op->kind == VL_TRACE_ALLOC) {
            l->size = round_up(op->size, align);
            l->t0 = i;
            l->covered = op->size >= sizes.min && op->size < sizes.max;
            if (l->covered) live += l->size;
            if (live > high) high = live;
        } else {
            l->t1 = i;
            if (l->covered) live -= l->size;
        }
    }
    *peak = high;
    return L;
}

static _Thread_local const life *sort_lives; /* qsort has no context argument; allocators may lay out in several threads */

static int by_size(const void *a, const void *b)
{
    const life *x = &sort_lives[*(const uint32_t *)a], *y = &sort_lives[*(const uint32_t *)b];
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return 0;
}

static int by_size_late(const void *a, const void *b)
{
    const life *x = &sort_lives[*(const uint32_t *)a], *y = &sort_lives[*(const uint32_t *)b];
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    if (x->t1 != y->t1) return x->t1 > y->t1 ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int by_area(const void *a, const void *b)
{
    const life *x = &sort_lives[*(const uint32_t *)a], *y = &sort_lives[*(const uint32_t *)b];
    double ax = (double)x->size * (double)(x->t1 - x->t0), ay = (double)y->size * (double)(y->t1 - y->t0);
    if (ax != ay) return ax < ay ? 1 : -1;
    return by_size(a, b);
}

/* Each heuristic (layout.h): the order blocks are placed in, and the gap each takes
 * (1: the smallest that holds it, 0: the lowest). */
static const struct heuristic {
    const char *name;
    int (*order)(const void *, const void *);
    int best_gap;
} heuristics[VL_LAYOUT_NHEURISTICS] = {
    [VL_LAYOUT_SIZE_BEST] = {"size-best", by_size, 1},
    [VL_LAYOUT_SIZE_FIRST] = {"size-first", by_size, 0},
    [VL_LAYOUT_AREA_BEST] = {"area-best", by_area, 1},
    [VL_LAYOUT_SIZE_FIRST_LATE] = {"size-first-late", by_size_late, 0},
};

const char *vl_layout_heuristic_name(vl_layout_heuristic h)
{
    return (unsigned)h < VL_LAYOUT_NHEURISTICS ? heuristics[h].name : "?";
}

static int by_low(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int bucket_add(bucket *b, uint32_t id)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        uint32_t *ids = realloc(b->ids, cap * sizeof *ids);
        if (!ids) return -1;
        b->ids = ids;
        b->cap = cap;
    }
    b->ids[b->n++] = id;
    return 0;
}

/* Where a block of `size` goes among the intervals taken while it lives (sorted by lo):
 * the smallest gap that holds it (best) or the lowest (first), else above them all. */
static uint64_t place(const interval *taken, size_t n, uint64_t size, int best)
{
    uint64_t pos = 0, at = UINT64_MAX, gap_of_at = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (taken[i].lo > pos) {
            uint64_t gap = taken[i].lo - pos;
            if (gap >= size && gap < gap_of_at) {
                at = pos;
                gap_of_at = gap;
                if (!best) return at;
            }
        }
        if (taken[i].hi > pos) pos = taken[i].hi;
    }
    return at != UINT64_MAX ? at : pos;
}

typedef struct chunk_run {
    uint64_t first, last; /* chunk indices, inclusive */
} chunk_run;

static int by_first(const void *a, const void *b)
{
    const chunk_run *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Chunks touched by any block, times chunk: each block's run of chunks, sorted and
 * merged (no array over the chunks: a block may be far larger than host memory). */
static int footprint(const life *L, const uint64_t *off, size_t nslots, uint64_t chunk, uint64_t *out)
{
    chunk_run *runs = malloc((nslots ? nslots : 1) * sizeof *runs);
    size_t n = 0;
    if (!runs) return -1;
    for (size_t s = 0; s < nslots; s++)
        if (L[s].covered) runs[n++] = (chunk_run){off[s] / chunk, (off[s] + L[s].size - 1) / chunk};
    qsort(runs, n, sizeof *runs, by_first);
    uint64_t touched = 0;
    for (size_t i = 0; i < n;) {
        uint64_t first = runs[i].first, last = runs[i].last;
        for (i++; i < n && runs[i].first <= last; i++)
            if (runs[i].last > last) last = runs[i].last;
        touched += last - first + 1;
    }
    free(runs);
    *out = touched * chunk;
    return 0;
}

/* The greedy over lives L[0..n) in time [0, period) (lives past it wrap), for both entry
 * points; takes L (freed here; NULL: out of host memory, said in err). out->peak_bytes is
 * the caller's. */
static int lay_out(life *L, size_t n, uint64_t period, vl_layout_heuristic h, uint64_t chunk, uint64_t *offsets,
                   vl_layout_result *out, char *err, size_t errlen)
{
    uint64_t width = period / 4096 > 64 ? period / 4096 : 64;
    size_t nbuckets = (size_t)(period / width) + 1;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    uint64_t *off = offsets ? offsets : malloc((n ? n : 1) * sizeof *off);
    uint32_t *stamp = calloc(n ? n : 1, sizeof *stamp);
    interval *taken = malloc((n ? n : 1) * sizeof *taken);
    bucket *B = calloc(nbuckets, sizeof *B);
    const char *why = "out of host memory";
    int rc = -1;
    if (!L || !order || !off || !stamp || !taken || !B) goto out;

    size_t ncovered = 0;
    for (size_t s = 0; s < n; s++)
        if (L[s].covered) order[ncovered++] = (uint32_t)s;
    sort_lives = L;
    qsort(order, ncovered, sizeof *order, heuristics[h].order);

    uint64_t extent = 0;
    for (size_t k = 0; k < ncovered; k++) {
        uint32_t s = order[k];
        const life *l = &L[s];
        uint64_t lo[2], hi[2];
        int np = pieces(l, period, lo, hi);
        size_t nt = 0;
        for (int i = 0; i < np; i++)
            for (size_t b = (size_t)(lo[i] / width); b <= (size_t)((hi[i] - 1) / width); b++)
                for (size_t j = 0; j < B[b].n; j++) {
                    uint32_t o = B[b].ids[j];
                    if (stamp[o] == k + 1) continue;
                    stamp[o] = (uint32_t)(k + 1);
                    if (lives_overlap(&L[o], l, period)) taken[nt++] = (interval){off[o], off[o] + L[o].size};
                }
        qsort(taken, nt, sizeof *taken, by_low);
        off[s] = place(taken, nt, l->size, heuristics[h].best_gap);
        if (off[s] > UINT64_MAX - l->size) {
            why = "offsets beyond 2^64 bytes";
            goto out;
        }
        if (off[s] + l->size > extent) extent = off[s] + l->size;
        for (int i = 0; i < np; i++)
            for (size_t b = (size_t)(lo[i] / width); b <= (size_t)((hi[i] - 1) / width); b++)
                if (bucket_add(&B[b], s) != 0) goto out;
    }
    out->extent_bytes = extent;
    if (footprint(L, off, n, chunk, &out->footprint_bytes) != 0) goto out;
    rc = 0;
out:
    if (rc != 0) snprintf(err, errlen, "layout: %s", why);
    for (size_t b = 0; B && b < nbuckets; b++) free(B[b].ids);
    free(B);
    free(taken);
    free(stamp);
    if (off != offsets) free(off);
    free(order);
    free(L);
    return rc;
}

static int bad_arguments(vl_layout_heuristic h, uint64_t align, uint64_t chunk, vl_layout_sizes sizes, char *err,
                         size_t errlen)
{
    if ((unsigned)h < VL_LAYOUT_NHEURISTICS && is_pow2(align) && is_pow2(chunk) && chunk >= align &&
        sizes.min <= sizes.max)
        return 0;
    snprintf(err, errlen, "layout: bad heuristic, alignment, chunk size or size range");
    return 1;
}

int vl_trace_layout(const vl_trace *t, vl_layout_heuristic h, vl_layout_sizes sizes, uint64_t align, uint64_t chunk,
                    uint64_t *offsets, vl_layout_result *out, char *err, size_t errlen)
{
    if (bad_arguments(h, align, chunk, sizes, err, errlen)) return -1;
    memset(out, 0, sizeof *out);
    return lay_out(lives_of(t, sizes, align, &out->peak_bytes), t->nallocs, t->nops, h, chunk, offsets, out, err,
                   errlen);
}

static int by_time(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* (time, +-size) pairs: frees before allocations at one time */
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The peak of live bytes over [0, period), pieces of wrapping lives included. */
static int periodic_peak(const life *L, size_t n, uint64_t period, uint64_t *peak)
{
    int64_t(*ev)[2] = malloc((4 * n + 1) * sizeof *ev);
    if (!ev) return -1;
    size_t ne = 0;
    for (size_t s = 0; s < n; s++) {
        uint64_t lo[2], hi[2];
        int np = pieces(&L[s], period, lo, hi);
        for (int i = 0; i < np; i++) {
            ev[ne][0] = (int64_t)lo[i], ev[ne++][1] = (int64_t)L[s].size;
            ev[ne][0] = (int64_t)hi[i], ev[ne++][1] = -(int64_t)L[s].size;
        }
    }
    qsort(ev, ne, sizeof *ev, by_time);
    int64_t live = 0, high = 0;
    for (size_t i = 0; i < ne; i++)
        if ((live += ev[i][1]) > high) high = live;
    free(ev);
    *peak = (uint64_t)high;
    return 0;
}

int vl_layout_periodic(const vl_layout_block *blocks, size_t n, uint64_t period, vl_layout_heuristic h,
                       uint64_t align, uint64_t chunk, uint64_t *offsets, vl_layout_result *out, char *err,
                       size_t errlen)
{
    if (bad_arguments(h, align, chunk, VL_LAYOUT_ALL_SIZES, err, errlen)) return -1;
    memset(out, 0, sizeof *out);
    for (size_t s = 0; s < n; s++)
        if (!(blocks[s].t0 < period && blocks[s].t1 > blocks[s].t0 && blocks[s].t1 - blocks[s].t0 <= period)) {
            snprintf(err, errlen, "layout: block %zu lives over [%llu, %llu), not within one period of %llu", s,
                     (unsigned long long)blocks[s].t0, (unsigned long long)blocks[s].t1, (unsigned long long)period);
            return -1;
        }
    life *L = calloc(n ? n : 1, sizeof *L);
    for (size_t s = 0; L && s < n; s++)
        L[s] = (life){.size = round_up(blocks[s].size, align), .t0 = blocks[s].t0, .t1 = blocks[s].t1, .covered = 1};
    if (L && periodic_peak(L, n, period, &out->peak_bytes) != 0) {
        free(L);
        L = NULL;
    }
    return lay_out(L, n, period, h, chunk, offsets, out, err, errlen); /* reports a NULL L */
}

int vl_layout_periodic_conflict(const vl_layout_block *a, const vl_layout_block *b, uint64_t period)
{
    life x = {.t0 = a->t0, .t1 = a->t1}, y = {.t0 = b->t0, .t1 = b->t1};
    return lives_overlap(&x, &y, period);
}

/* The live blocks, ordered by offset: slot ids in a sorted array. */
static size_t first_above(const uint32_t *ids, size_t n, const uint64_t *off, uint64_t at)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (off[ids[mid]] < at) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int vl_trace_layout_check(const vl_trace *t, vl_layout_sizes sizes, const uint64_t *offsets, uint64_t align,
                          char *err, size_t errlen)
{
    if (!is_pow2(align)) {
        snprintf(err, errlen, "layout check: bad alignment");
        return -1;
    }
    uint64_t peak;
    life *L = lives_of(t, sizes, align, &peak);
    uint32_t *live = malloc((t->nallocs ? t->nallocs : 1) * sizeof *live);
    size_t nlive = 0;
    int rc = -1;
    if (!L || !live) {
        snprintf(err, errlen, "layout check: out of host memory");
        goto out;
    }
    for (size_t i = 0; i < t->nops; i++) {
        uint32_t s = t->ops[i].slot;
        if (!L[s].covered) continue;
        size_t at = first_above(live, nlive, offsets, offsets[s]);
        if (t->ops[i].kind == VL_TRACE_ALLOC) {
            if (offsets[s] % align) {
                snprintf(err, errlen, "slot %u at %llu: not a multiple of %llu", s, (unsigned long long)offsets[s],
                         (unsigned long long)align);
                goto out;
            }
            uint32_t clash = UINT32_MAX; /* the live neighbour below or above that it overlaps */
            if (at && offsets[live[at - 1]] + L[live[at - 1]].size > offsets[s]) clash = live[at - 1];
            else if (at < nlive && offsets[s] + L[s].size > offsets[live[at]]) clash = live[at];
            if (clash != UINT32_MAX) {
                snprintf(err, errlen, "operation %zu: slot %u [%llu, +%llu) overlaps slot %u, live at the same time", i, s,
                         (unsigned long long)offsets[s], (unsigned long long)L[s].size, clash);
                goto out;
            }
            memmove(live + at + 1, live + at, (nlive - at) * sizeof *live);
            live[at] = s;
            nlive++;
        } else {
            while (at < nlive && live[at] != s) at++; /* distinct offsets: sizes >= align */
            if (at == nlive) {
                snprintf(err, errlen, "operation %zu: slot %u freed but not live", i, s);
                goto out;
            }
            memmove(live + at, live + at + 1, (nlive - at - 1) * sizeof *live);
            nlive--;
        }
    }
    rc = 0;
out:
    free(live);
    free(L);
    return rc;
}
