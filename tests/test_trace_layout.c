/* Tests of the offline static layouts (lib/trace/layout.h): every heuristic's layout is
 * valid by an independent check, never below the peak of live bytes, and never below
 * the exact optimum, which a brute-force reference finds on small random traces; the
 * check itself rejects overlaps and accepts reuse after a free. Periodic layouts (plan=1's)
 * hold in every period, checked unrolled over three by the same checker. No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rng.h"
#include "trace/layout.h"
#include "trace/trace.h"
#include "support/test_main.h"

#define ALIGN 512
#define CHUNK ((uint64_t)2 << 20)

static char err[512];

static void parse(const char *text, vl_trace *t)
{
    if (vl_trace_parse_buffer(text, strlen(text), VL_TRACE_VRAMLAB, t, err, sizeof err) != 0) fail_msg("%s", err);
}

/* A random trace of n allocations (sizes in units of ALIGN, 1..max_units), each freed
 * at a random later point, some never. */
static char *random_trace(vl_rng *r, int n, uint64_t max_units)
{
    size_t cap = 64 + (size_t)n * 64, len = 0;
    char *text = malloc(cap);
    int *live = malloc((size_t)n * sizeof *live), nlive = 0, next = 0;
    assert_non_null(text);
    assert_non_null(live);
    len += (size_t)snprintf(text, cap, "vramlab-trace 1\n");
    while (next < n || nlive) {
        if (next < n && (nlive == 0 || vl_rng_below(r, 2))) {
            uint64_t size = (1 + vl_rng_below(r, max_units)) * ALIGN - vl_rng_below(r, ALIGN);
            len += (size_t)snprintf(text + len, cap - len, "a %d %llu\n", next, (unsigned long long)size);
            live[nlive++] = next++;
        } else {
            int k = (int)vl_rng_below(r, (uint64_t)nlive);
            if (next == n && vl_rng_below(r, 8) == 0) { /* left live to the end */
                live[k] = live[--nlive];
                continue;
            }
            len += (size_t)snprintf(text + len, cap - len, "f %d\n", live[k]);
            live[k] = live[--nlive];
        }
    }
    free(live);
    return text;
}

/* The reference: the exact smallest extent of a static layout, by brute force. Placing
 * blocks in the order of an optimal layout's offsets, each at the lowest offset free of
 * the blocks placed before it, moves none above its optimal offset; so the minimum of
 * that lowest placement over all orders is the optimum. Independent of layout.c: its
 * own lifetimes from the operations, its own overlap test. */
typedef struct ref_block {
    uint64_t size, t0, t1;
} ref_block;

static uint64_t ref_lowest(const ref_block *b, const int *order, int n)
{
    uint64_t off[16], extent = 0;
    for (int k = 0; k < n; k++) {
        const ref_block *x = &b[order[k]];
        uint64_t at = 0;
        for (int moved = 1; moved;) { /* raise `at` above every conflicting block it overlaps */
            moved = 0;
            for (int j = 0; j < k; j++) {
                const ref_block *y = &b[order[j]];
                int same_time = x->t0 < y->t1 && y->t0 < x->t1;
                if (same_time && at < off[j] + y->size && off[j] < at + x->size) {
                    at = off[j] + y->size;
                    moved = 1;
                }
            }
        }
        off[k] = at;
        if (at + x->size > extent) extent = at + x->size;
    }
    return extent;
}

static uint64_t ref_best(const ref_block *b, int *order, int k, int n)
{
    if (k == n) return ref_lowest(b, order, n);
    uint64_t best = UINT64_MAX;
    for (int i = k; i < n; i++) {
        int t = order[k];
        order[k] = order[i];
        order[i] = t;
        uint64_t e = ref_best(b, order, k + 1, n);
        if (e < best) best = e;
        order[i] = order[k];
        order[k] = t;
    }
    return best;
}

static int ref_blocks(const vl_trace *t, ref_block *b)
{
    for (size_t i = 0; i < t->nops; i++) {
        const vl_trace_op *op = &t->ops[i];
        if (op->kind == VL_TRACE_ALLOC) b[op->slot] = (ref_block){(op->size + ALIGN - 1) / ALIGN * ALIGN, i, t->nops};
        else b[op->slot].t1 = i;
    }
    return (int)t->nallocs;
}

/* size-best over the blocks `sizes` covers, no offsets kept. */
static int layout(const vl_trace *t, vl_layout_sizes sizes, uint64_t chunk, vl_layout_result *r)
{
    return vl_trace_layout(t, VL_LAYOUT_SIZE_BEST, sizes, ALIGN, chunk, NULL, r, err, sizeof err);
}

/* The independent check of offsets for the blocks `sizes` covers. */
static int check(const vl_trace *t, vl_layout_sizes sizes, const uint64_t *offsets)
{
    return vl_trace_layout_check(t, sizes, offsets, ALIGN, err, sizeof err);
}

static void expect_valid(const vl_trace *t, vl_layout_heuristic h, vl_layout_result *r)
{
    uint64_t *off = malloc((t->nallocs ? t->nallocs : 1) * sizeof *off);
    assert_non_null(off);
    assert_int_equal(vl_trace_layout(t, h, VL_LAYOUT_ALL_SIZES, ALIGN, CHUNK, off, r, err, sizeof err), 0);
    if (check(t, VL_LAYOUT_ALL_SIZES, off) != 0)
        fail_msg("%s: %s", vl_layout_heuristic_name(h), err);
    assert_true(r->extent_bytes >= r->peak_bytes);
    assert_true(r->footprint_bytes >= r->peak_bytes);
    assert_true(r->footprint_bytes % CHUNK == 0);
    free(off);
}

static void test_layouts_are_valid_and_above_the_peak(void **state)
{
    (void)state;
    vl_rng r;
    vl_rng_seed(&r, 7);
    for (int round = 0; round < 40; round++) {
        char *text = random_trace(&r, 200 + round * 50, 1 + vl_rng_below(&r, 20000));
        vl_trace t;
        parse(text, &t);
        for (int h = 0; h < VL_LAYOUT_NHEURISTICS; h++) {
            vl_layout_result res;
            expect_valid(&t, (vl_layout_heuristic)h, &res);
        }
        vl_trace_free(&t);
        free(text);
    }
}

static void test_no_heuristic_beats_the_exact_optimum(void **state)
{
    (void)state;
    vl_rng r;
    vl_rng_seed(&r, 11);
    int hit[VL_LAYOUT_NHEURISTICS] = {0}, misses = 0;
    for (int round = 0; round < 300; round++) {
        char *text = random_trace(&r, 5 + (int)vl_rng_below(&r, 3), 4);
        vl_trace t;
        parse(text, &t);
        ref_block b[16];
        int order[16], n = ref_blocks(&t, b);
        for (int i = 0; i < n; i++) order[i] = i;
        uint64_t opt = ref_best(b, order, 0, n);
        for (int h = 0; h < VL_LAYOUT_NHEURISTICS; h++) {
            vl_layout_result res;
            expect_valid(&t, (vl_layout_heuristic)h, &res);
            assert_true(res.peak_bytes <= opt);
            if (res.extent_bytes < opt) fail_msg("%s: extent %llu below the optimum %llu", vl_layout_heuristic_name(h),
                                                 (unsigned long long)res.extent_bytes, (unsigned long long)opt);
            hit[h] += res.extent_bytes == opt;
            misses += res.extent_bytes > opt;
        }
        vl_trace_free(&t);
        free(text);
    }
    /* the reference beats the heuristics where they miss (it is not one of them), and
     * they find the optimum most of the time (they are not useless) */
    assert_true(misses > 0);
    for (int h = 0; h < VL_LAYOUT_NHEURISTICS; h++) assert_true(hit[h] > 250);
}

/* Three 1 KiB blocks, a and b live together, c after a's free: c can take a's place, so
 * every heuristic needs 2 KiB; the check accepts reuse after a free and rejects c over b. */
static void test_check_accepts_reuse_and_rejects_overlap(void **state)
{
    (void)state;
    vl_trace t;
    parse("vramlab-trace 1\na 1 1024\na 2 1024\nf 1\na 3 1024\nf 2\nf 3\n", &t);
    for (int h = 0; h < VL_LAYOUT_NHEURISTICS; h++) {
        vl_layout_result res;
        expect_valid(&t, (vl_layout_heuristic)h, &res);
        assert_int_equal(res.extent_bytes, 2048);
        assert_int_equal(res.peak_bytes, 2048);
        assert_int_equal(res.footprint_bytes, CHUNK);
    }
    uint64_t reuse[3] = {0, 1024, 0}, overlap[3] = {0, 1024, 512}, unaligned[3] = {0, 1024, 2100};
    assert_int_equal(check(&t, VL_LAYOUT_ALL_SIZES, reuse), 0);
    assert_int_equal(check(&t, VL_LAYOUT_ALL_SIZES, overlap), -1);
    assert_non_null(strstr(err, "overlaps slot 1"));
    assert_int_equal(check(&t, VL_LAYOUT_ALL_SIZES, unaligned), -1);
    vl_trace_free(&t);
}

/* The footprint counts chunks touched, not bytes: 5 MiB live at once touch three 2 MiB
 * chunks; with a 64 KiB grain the footprint is the bytes. */
static void test_footprint_counts_chunks(void **state)
{
    (void)state;
    vl_trace t;
    parse("vramlab-trace 1\na 1 1MiB\na 2 1MiB\na 3 3MiB\nf 1\nf 2\nf 3\n", &t);
    vl_layout_result res;
    assert_int_equal(layout(&t, VL_LAYOUT_ALL_SIZES, CHUNK, &res), 0);
    assert_int_equal(res.peak_bytes, 5u << 20);
    assert_int_equal(res.extent_bytes, 5u << 20);
    assert_int_equal(res.footprint_bytes, 6u << 20);
    assert_int_equal(layout(&t, VL_LAYOUT_ALL_SIZES, 64 << 10, &res), 0);
    assert_int_equal(res.footprint_bytes, 5u << 20);
    vl_trace_free(&t);
}

/* Where an online allocator must fragment and the offline one need not: a and b live
 * together, b is freed, c is made, a is freed, d (two units) is made while c lives. With a
 * below b, c goes above a and d finds one unit free below: 4 units. Knowing that a
 * outlives b, a goes above b, c takes b's place and d goes above it: 3, the peak. */
static void test_knowing_lifetimes_avoids_fragmentation(void **state)
{
    (void)state;
    vl_trace t;
    parse("vramlab-trace 1\na 1 512\na 2 512\nf 2\na 3 512\nf 1\na 4 1024\nf 3\nf 4\n", &t);
    for (int h = 0; h < VL_LAYOUT_NHEURISTICS; h++) {
        vl_layout_result res;
        expect_valid(&t, (vl_layout_heuristic)h, &res);
        assert_int_equal(res.peak_bytes, 1536);
        assert_int_equal(res.extent_bytes, 1536);
    }
    uint64_t online[4] = {0, 512, 512, 1024}; /* a low, b above, c in b's place, d above c */
    assert_int_equal(check(&t, VL_LAYOUT_ALL_SIZES, online), 0);
    vl_trace_free(&t);
}

/* Laid out together, a 1 MiB block and a 3 MiB one made after its free share memory: 3
 * MiB. Apart (pools of their own, as --layout-split lays them out), 1 + 3 MiB. A layout
 * of some sizes ignores the other blocks, in its peak and in the check. */
static void test_sizes_laid_out_apart(void **state)
{
    (void)state;
    vl_trace t;
    parse("vramlab-trace 1\na 1 1MiB\nf 1\na 2 3MiB\nf 2\n", &t);
    const uint64_t grain = 64 << 10;
    vl_layout_result joint, below, above;
    assert_int_equal(layout(&t, VL_LAYOUT_ALL_SIZES, grain, &joint), 0);
    assert_int_equal(layout(&t, (vl_layout_sizes){0, 2u << 20}, grain, &below), 0);
    assert_int_equal(layout(&t, (vl_layout_sizes){2u << 20, UINT64_MAX}, grain, &above), 0);
    assert_int_equal(joint.peak_bytes, 3u << 20);
    assert_int_equal(joint.footprint_bytes, 3u << 20);
    assert_int_equal(below.peak_bytes, 1u << 20);
    assert_int_equal(below.footprint_bytes, 1u << 20);
    assert_int_equal(above.footprint_bytes, 3u << 20);
    vl_trace_free(&t);
    uint64_t clash[2] = {0, 0}; /* fine when laid out apart: each range sees one block */
    parse("vramlab-trace 1\na 1 1MiB\na 2 3MiB\nf 1\nf 2\n", &t);
    assert_int_equal(check(&t, (vl_layout_sizes){0, 2u << 20}, clash), 0);
    assert_int_equal(check(&t, VL_LAYOUT_ALL_SIZES, clash), -1);
    vl_trace_free(&t);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    vl_trace t;
    parse("vramlab-trace 1\na 1 1024\n", &t);
    vl_layout_result res;
    const vl_layout_sizes all = VL_LAYOUT_ALL_SIZES, backwards = {2048, 1024};
    assert_int_equal(vl_trace_layout(&t, VL_LAYOUT_NHEURISTICS, all, ALIGN, CHUNK, NULL, &res, err, sizeof err), -1);
    assert_int_equal(vl_trace_layout(&t, VL_LAYOUT_SIZE_BEST, all, 500, CHUNK, NULL, &res, err, sizeof err), -1);
    assert_int_equal(vl_trace_layout(&t, VL_LAYOUT_SIZE_BEST, all, ALIGN, 256, NULL, &res, err, sizeof err), -1);
    assert_int_equal(vl_trace_layout(&t, VL_LAYOUT_SIZE_BEST, backwards, ALIGN, CHUNK, NULL, &res, err, sizeof err), -1);
    assert_int_equal(layout(&t, all, CHUNK, &res), 0);
    assert_int_equal(res.extent_bytes, 1024);
    vl_trace_free(&t);
}

/* A periodic layout, unrolled: three periods of the blocks as a trace, each instance at
 * its block's offset, checked by the trace layout's own checker (which knows nothing of
 * periods). A block that wraps is freed in the next period; instances of the last
 * period are freed at the end. */
static int periodic_unrolled_check(const vl_layout_block *b, size_t n, uint64_t period, const uint64_t *off)
{
    enum { PERIODS = 3 };
    vl_trace t = {0};
    t.ops = calloc(2 * n * PERIODS, sizeof *t.ops);
    uint64_t *offs = calloc(n * PERIODS, sizeof *offs);
    assert_non_null(t.ops);
    assert_non_null(offs);
    /* ops in time order: walk time, emit frees before allocations at one time */
    uint64_t end = PERIODS * period + period;
    uint32_t slot = 0;
    uint32_t *slot_of = calloc(n * PERIODS, sizeof *slot_of);
    assert_non_null(slot_of);
    for (uint64_t time = 0; time <= end; time++) {
        for (int k = 0; k < PERIODS; k++)
            for (size_t i = 0; i < n; i++) {
                uint64_t t1 = b[i].t1 + (uint64_t)k * period;
                if (t1 == time || (time == end && t1 > end))
                    t.ops[t.nops++] = (vl_trace_op){.kind = VL_TRACE_FREE, .slot = slot_of[k * n + i], .size = b[i].size};
            }
        for (int k = 0; k < PERIODS; k++)
            for (size_t i = 0; i < n; i++)
                if (b[i].t0 + (uint64_t)k * period == time) {
                    slot_of[k * n + i] = slot;
                    offs[slot] = off[i];
                    t.ops[t.nops++] = (vl_trace_op){.kind = VL_TRACE_ALLOC, .slot = slot++, .size = b[i].size};
                }
    }
    t.nallocs = t.nfrees = slot;
    int rc = vl_trace_layout_check(&t, VL_LAYOUT_ALL_SIZES, offs, ALIGN, err, sizeof err);
    free(t.ops);
    free(offs);
    free(slot_of);
    return rc;
}

static void test_periodic_layouts_hold_in_every_period(void **state)
{
    (void)state;
    vl_rng r;
    vl_rng_seed(&r, 11);
    for (int trial = 0; trial < 400; trial++) {
        size_t n = 1 + vl_rng_below(&r, 14);
        uint64_t period = 2 + vl_rng_below(&r, 40);
        vl_layout_block b[16];
        for (size_t i = 0; i < n; i++) {
            uint64_t t0 = vl_rng_below(&r, period);
            b[i] = (vl_layout_block){.size = (1 + vl_rng_below(&r, 8)) * ALIGN, .t0 = t0,
                                     .t1 = t0 + 1 + vl_rng_below(&r, period)};
        }
        /* the peak by brute force: live bytes at each time of the period, wraps included */
        uint64_t peak = 0;
        for (uint64_t time = 0; time < period; time++) {
            uint64_t live = 0;
            for (size_t i = 0; i < n; i++)
                if ((time >= b[i].t0 && time < b[i].t1) || time + period < b[i].t1) live += b[i].size;
            if (live > peak) peak = live;
        }
        for (int h = 0; h < VL_LAYOUT_NHEURISTICS; h++) {
            uint64_t off[16];
            vl_layout_result res;
            if (vl_layout_periodic(b, n, period, (vl_layout_heuristic)h, ALIGN, CHUNK, off, &res, err, sizeof err) != 0)
                fail_msg("trial %d: %s", trial, err);
            if (periodic_unrolled_check(b, n, period, off) != 0) fail_msg("trial %d, %s: %s", trial,
                                                                          vl_layout_heuristic_name(h), err);
            assert_int_equal(res.peak_bytes, peak);
            assert_true(res.extent_bytes >= peak);
            for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++)
                    if (off[i] < off[j] + b[j].size && off[j] < off[i] + b[i].size)
                        assert_false(vl_layout_periodic_conflict(&b[i], &b[j], period));
        }
    }
}

static void test_periodic_wrap_shares_memory_with_what_it_misses(void **state)
{
    (void)state;
    /* Period 10: A lives [6, 13) (freed at 3 of the next period), B lives [4, 6), C [0, 3).
     * A wraps over C's time, so they cannot share; B fits where A lies. */
    const vl_layout_block b[3] = {{.size = 4096, .t0 = 6, .t1 = 13}, {.size = 4096, .t0 = 4, .t1 = 6},
                                  {.size = 4096, .t0 = 0, .t1 = 3}};
    assert_true(vl_layout_periodic_conflict(&b[0], &b[2], 10));
    assert_false(vl_layout_periodic_conflict(&b[0], &b[1], 10));
    assert_false(vl_layout_periodic_conflict(&b[1], &b[2], 10));
    uint64_t off[3];
    vl_layout_result res;
    assert_int_equal(vl_layout_periodic(b, 3, 10, VL_LAYOUT_SIZE_BEST, ALIGN, CHUNK, off, &res, err, sizeof err), 0);
    assert_int_equal(res.peak_bytes, 8192);
    assert_int_equal(res.extent_bytes, 8192);
    assert_true(off[0] != off[2]);
    assert_int_equal(periodic_unrolled_check(b, 3, 10, off), 0);
    const uint64_t stacked[3] = {0, 0, 0}; /* A on C: caught in the second period */
    assert_int_equal(periodic_unrolled_check(b, 3, 10, stacked), -1);
}

static void test_periodic_bad_blocks(void **state)
{
    (void)state;
    vl_layout_result res;
    const vl_layout_block longer = {.size = 512, .t0 = 2, .t1 = 13}, late = {.size = 512, .t0 = 10, .t1 = 11},
                          empty = {.size = 512, .t0 = 3, .t1 = 3};
    assert_int_equal(vl_layout_periodic(&longer, 1, 10, VL_LAYOUT_SIZE_BEST, ALIGN, CHUNK, NULL, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "one period"));
    assert_int_equal(vl_layout_periodic(&late, 1, 10, VL_LAYOUT_SIZE_BEST, ALIGN, CHUNK, NULL, &res, err, sizeof err), -1);
    assert_int_equal(vl_layout_periodic(&empty, 1, 10, VL_LAYOUT_SIZE_BEST, ALIGN, CHUNK, NULL, &res, err, sizeof err), -1);
    assert_int_equal(vl_layout_periodic(&late, 1, 20, VL_LAYOUT_NHEURISTICS, ALIGN, CHUNK, NULL, &res, err, sizeof err), -1);
    assert_int_equal(vl_layout_periodic(NULL, 0, 20, VL_LAYOUT_SIZE_BEST, ALIGN, CHUNK, NULL, &res, err, sizeof err), 0);
    assert_int_equal(res.extent_bytes, 0);
}

VL_TEST_MAIN(cmocka_unit_test(test_layouts_are_valid_and_above_the_peak),
             cmocka_unit_test(test_no_heuristic_beats_the_exact_optimum),
             cmocka_unit_test(test_check_accepts_reuse_and_rejects_overlap),
             cmocka_unit_test(test_footprint_counts_chunks),
             cmocka_unit_test(test_knowing_lifetimes_avoids_fragmentation),
             cmocka_unit_test(test_sizes_laid_out_apart), cmocka_unit_test(test_bad_arguments),
             cmocka_unit_test(test_periodic_layouts_hold_in_every_period),
             cmocka_unit_test(test_periodic_wrap_shares_memory_with_what_it_misses),
             cmocka_unit_test(test_periodic_bad_blocks))
