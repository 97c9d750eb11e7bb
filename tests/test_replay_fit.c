/* replay --fit (lib/trace/fit.h): the smallest simulated capacity at which a trace
 * replays without an OOM. Exact figures on small traces whose answer follows from the
 * caching allocator's size rules, then the PyTorch fixtures (tests/fixtures/traces/)
 * against bounds from their own replays: at least the peak live bytes, at most the
 * peak reserved of an unconstrained replay, an OOM-free replay at the answer and an
 * OOM one resolution below it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device.h"
#include "exitcodes.h"
#include "support/test_main.h"
#include "trace/fit.h"
#include "trace/load.h"
#include "trace/replay.h"
#include "trace/trace.h"

#define MiB ((uint64_t)1 << 20)
#define RES (2 * MiB)
#define PASSES 2

static vl_stream streams[64];

static void stream_tokens(void)
{
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) streams[i] = (vl_stream)(uintptr_t)(i + 1);
}

static vl_spec device_spec(const char *text)
{
    vl_spec d;
    char err[256] = "";
    if (vl_device_spec_parse(text, &d, err, sizeof err) != 0) fail_msg("%s: %s", text, err);
    return d;
}

static uint64_t fit_of(const vl_trace *t, const char *device, const char *alloc, uint64_t resolution)
{
    vl_spec d = device_spec(device);
    vl_trace_fit fit;
    int status = 0;
    char err[512] = "";
    if (vl_trace_fit_capacity(t, streams, &d, alloc, resolution, PASSES, &fit, &status, err, sizeof err) != 0)
        fail_msg("fit %s: %s", alloc, err);
    assert_true(fit.found);
    assert_true(fit.tries >= 1);
    return fit.smallest_capacity;
}

static uint64_t fit_text(const char *text, const char *device, const char *alloc, uint64_t resolution)
{
    vl_trace t;
    char err[256] = "";
    if (vl_trace_parse_buffer(text, strlen(text), VL_TRACE_VRAMLAB, &t, err, sizeof err) != 0) fail_msg("%s", err);
    uint64_t c = fit_of(&t, device, alloc, resolution);
    vl_trace_free(&t);
    return c;
}

#define ONE "vramlab-trace 1\na 1 3MiB\n"
#define EXPANDABLE "caching:segments=expandable"

/* Answers that follow from the size rules (lib/caching/sizes.h): a classic request of
 * 1-10 MiB takes a 20 MiB segment, a larger one its size rounded to 2 MiB; expandable
 * segments map whole 2 MiB granules; streams do not share cached blocks. */
static const struct exact_case {
    const char *why, *trace, *device, *alloc;
    uint64_t resolution, expect;
} exact_cases[] = {
    {"a 3 MiB request: a 20 MiB segment", ONE, "sim", "caching", RES, 20 * MiB},
    {"a 3 MiB request: two granules", ONE, "sim", EXPANDABLE, RES, 4 * MiB},
    {"100 MiB + 1: 100 MiB + 512 rounded, a 102 MiB segment", "vramlab-trace 1\na 1 104857601\n", "sim", "caching",
     RES, 102 * MiB},
    {"100 MiB + 1: a 102 MiB mapping", "vramlab-trace 1\na 1 104857601\n", "sim", EXPANDABLE, RES, 102 * MiB},
    {"two streams: a segment each", "vramlab-trace 1\na 1 3MiB 1\na 2 3MiB 2\n", "sim", "caching", RES, 40 * MiB},
    {"two streams: a range each", "vramlab-trace 1\na 1 3MiB 1\na 2 3MiB 2\n", "sim", EXPANDABLE, RES, 8 * MiB},
    {"the 8 MiB request's 20 MiB segment serves the later 12 MiB from the cache",
     "vramlab-trace 1\na 1 8MiB\nf 1\na 2 12MiB\n", "sim", "caching", RES, 20 * MiB},
    {"the freed 8 MiB block grows to 12 MiB", "vramlab-trace 1\na 1 8MiB\nf 1\na 2 12MiB\n", "sim", EXPANDABLE, RES,
     12 * MiB},
    {"8 MiB + 1: five granules", "vramlab-trace 1\na 1 8388609\n", "sim", EXPANDABLE, RES, 10 * MiB},
    {"roundup_div=2: 8 MiB + 1 rounds to 12 MiB (halves between 8 and 16 MiB)", "vramlab-trace 1\na 1 8388609\n",
     "sim", EXPANDABLE ",roundup_div=2", RES, 12 * MiB},
    {"the device's other options stay: a 6 MiB context overhead", ONE, "sim:overhead=6MiB", "caching", RES, 26 * MiB},
    {"a coarser resolution: the first multiple of 3 MiB that fits", ONE, "sim", "caching", 3 * MiB, 21 * MiB},
};

static void test_exact_figures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof exact_cases / sizeof exact_cases[0]; i++) {
        const struct exact_case *c = &exact_cases[i];
        uint64_t got = fit_text(c->trace, c->device, c->alloc, c->resolution);
        if (got != c->expect)
            fail_msg("%s (%s): %llu, expected %llu", c->why, c->alloc, (unsigned long long)got,
                     (unsigned long long)c->expect);
    }
}

/* OOMs over `passes` passes of t at this capacity, through the ordinary replay. */
static size_t ooms_at(const vl_trace *t, uint64_t capacity, const char *alloc, int64_t *peak_reserved)
{
    char spec[64], err[256] = "";
    int status = 0;
    snprintf(spec, sizeof spec, "sim:capacity=%llu", (unsigned long long)capacity);
    vl_device *d = vl_device_open(spec, &status, err, sizeof err);
    if (!d) fail_msg("%s: %s", spec, err);
    vl_allocator *a = vl_alloc_open(alloc, d, &status, err, sizeof err);
    if (!a) fail_msg("%s: %s", alloc, err);
    vl_replay r;
    assert_int_equal(vl_replay_init(&r, t, a, streams), 0);
    size_t ooms = 0;
    *peak_reserved = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        vl_replay_pass rp;
        vl_replay_pass_run(&r, &rp);
        ooms += rp.ooms;
        if (rp.stats.peak_reserved_bytes > *peak_reserved) *peak_reserved = rp.stats.peak_reserved_bytes;
    }
    vl_replay_destroy(&r);
    vl_alloc_close(a);
    vl_device_close(d);
    return ooms;
}

static void test_fixtures_within_bounds(void **state)
{
    (void)state;
    const char *fixtures[] = {"tests/fixtures/traces/gpt2.tiny.csv", "tests/fixtures/traces/resnet50.tiny.csv",
                              "tests/fixtures/traces/transformer.tiny.csv"};
    /* span=0: expandable's default maps spans only within a quarter of the device, so its
     * layout depends on the capacity and the unconstrained run's peak is no bound for it
     * (resnet50.tiny: fits at 406.8 MB, unconstrained peak 404.8 MB). */
    const char *allocs[] = {"caching", "caching:segments=expandable,span=0"};
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
        vl_trace t;
        vl_trace_options opt = {0};
        char err[512] = "";
        if (vl_trace_load(fixtures[i], &opt, &t, err, sizeof err) != 0) fail_msg("%s", err);
        assert_true(t.nstreams <= sizeof streams / sizeof streams[0]);
        for (size_t k = 0; k < sizeof allocs / sizeof allocs[0]; k++) {
            uint64_t c = fit_of(&t, "sim", allocs[k], RES);
            int64_t unconstrained = 0, ignored = 0;
            assert_int_equal(ooms_at(&t, (uint64_t)1 << 40, allocs[k], &unconstrained), 0);
            uint64_t upper = ((uint64_t)unconstrained + RES - 1) / RES * RES;
            if (c < t.peak_live_bytes || c > upper || c % RES != 0)
                fail_msg("%s %s: fit %llu outside [peak live %llu, unconstrained peak reserved %llu]", fixtures[i],
                         allocs[k], (unsigned long long)c, (unsigned long long)t.peak_live_bytes,
                         (unsigned long long)upper);
            assert_int_equal(ooms_at(&t, c, allocs[k], &ignored), 0);
            assert_true(ooms_at(&t, c - RES, allocs[k], &ignored) > 0);
        }
        vl_trace_free(&t);
    }
}

/* A SPEC that cannot open is an error with a usage status, not "never fits". */
static void test_bad_spec(void **state)
{
    (void)state;
    vl_trace t;
    char err[512] = "";
    assert_int_equal(vl_trace_parse_buffer(ONE, strlen(ONE), VL_TRACE_VRAMLAB, &t, err, sizeof err), 0);
    vl_spec d = device_spec("sim");
    vl_trace_fit fit;
    int status = 0;
    assert_int_equal(vl_trace_fit_capacity(&t, streams, &d, "caching:roundup_div=3", RES, 1, &fit, &status, err,
                                           sizeof err),
                     -1);
    assert_int_equal(status, VL_EXIT_USAGE);
    assert_non_null(strstr(err, "roundup_div"));
    vl_trace_free(&t);
}

static int setup(void **state)
{
    (void)state;
    stream_tokens();
    return 0;
}

VL_TEST_MAIN(cmocka_unit_test_setup(test_exact_figures, setup), cmocka_unit_test_setup(test_fixtures_within_bounds, setup),
             cmocka_unit_test_setup(test_bad_spec, setup))
