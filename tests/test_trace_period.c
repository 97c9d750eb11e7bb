/* Tests of a trace's exact period (lib/trace/period.h): a loop of three allocations is
 * found with period 3 whatever its warm-up and its last, cut short step; sizes that
 * repeat with lives that do not, a size that changes once, and random sizes have none.
 * No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rng.h"
#include "trace/period.h"
#include "trace/trace.h"
#include "support/test_main.h"

static char err[512];

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void reserve(text *t)
{
    if (t->len + 64 > t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
}

static void alloc_line(text *t, unsigned id, unsigned long long size)
{
    reserve(t);
    t->len += (size_t)snprintf(t->s + t->len, t->cap - t->len, "a %u %llu\n", id, size);
}

static void free_line(text *t, unsigned id)
{
    reserve(t);
    t->len += (size_t)snprintf(t->s + t->len, t->cap - t->len, "f %u\n", id);
}

static text header(void)
{
    text t = {0};
    reserve(&t);
    t.len = (size_t)snprintf(t.s, t.cap, "vramlab-trace 1\n");
    return t;
}

static vl_trace_period period_of(text *t)
{
    vl_trace tr;
    if (vl_trace_parse_buffer(t->s, t->len, VL_TRACE_VRAMLAB, &tr, err, sizeof err) != 0) fail_msg("%s", err);
    vl_trace_period p;
    assert_int_equal(vl_trace_find_period(&tr, &p), 0);
    vl_trace_free(&tr);
    free(t->s);
    return p;
}

/* A warm-up (weights that stay), then `steps` steps: an activation a (kept until the
 * step's end), a temporary b freed at once, a gradient c freed with a; the last step is
 * cut short: its blocks are never freed. size_of_b(step) may vary b's size. */
static text training(int steps, int vary_b, int b_lives_longer_in_step)
{
    text t = header();
    for (unsigned w = 0; w < 5; w++) alloc_line(&t, 1000 + w, 4096ull << w);
    for (int s = 0; s < steps; s++) {
        unsigned base = 10 * (unsigned)s;
        unsigned long long bsize = vary_b && s == steps - 8 ? 12288 : 8192;
        alloc_line(&t, base + 1, 65536);
        alloc_line(&t, base + 2, bsize);
        int late = b_lives_longer_in_step && s == steps - 8;
        if (!late) free_line(&t, base + 2);
        alloc_line(&t, base + 3, 32768);
        if (late) free_line(&t, base + 2);
        if (s == steps - 1) break; /* the recording ends in the last step */
        free_line(&t, base + 3);
        free_line(&t, base + 1);
    }
    return t;
}

static void test_a_training_loop_repeats(void **state)
{
    (void)state;
    text t = training(40, 0, 0);
    vl_trace_period p = period_of(&t);
    assert_int_equal(p.allocs, 3);
    assert_true(p.compared >= 6);
}

static void test_a_size_that_changes_once_breaks_it(void **state)
{
    (void)state;
    text t = training(40, 1, 0);
    assert_int_equal(period_of(&t).allocs, 0);
}

static void test_sizes_alone_do_not_make_a_period(void **state)
{
    (void)state;
    text t = training(40, 0, 1); /* same sizes, one block freed later in one step */
    assert_int_equal(period_of(&t).allocs, 0);
}

static void test_random_sizes_have_none(void **state)
{
    (void)state;
    vl_rng r;
    vl_rng_seed(&r, 3);
    text t = header();
    for (unsigned i = 0; i < 2000; i++) {
        alloc_line(&t, i, 512 * (1 + vl_rng_below(&r, 64)));
        free_line(&t, i);
    }
    assert_int_equal(period_of(&t).allocs, 0);
}

static void test_too_short_to_tell(void **state)
{
    (void)state;
    text t = training(3, 0, 0); /* three steps: not two periods to compare beside the last */
    assert_int_equal(period_of(&t).allocs, 0);
}

VL_TEST_MAIN(cmocka_unit_test(test_a_training_loop_repeats), cmocka_unit_test(test_a_size_that_changes_once_breaks_it),
             cmocka_unit_test(test_sizes_alone_do_not_make_a_period), cmocka_unit_test(test_random_sizes_have_none),
             cmocka_unit_test(test_too_short_to_tell))
