/* The out-of-memory report (lib/oom_report.h) on the simulated device: a controlled
 * fragmentation pattern (blocks allocated, every other one freed, then a request larger
 * than any hole) and every figure of the report checked against values worked out here
 * by hand; the prediction "fits after releasing the cache" checked against what the
 * allocator then does; the report's text; the program-level capture (first OOM printed,
 * later ones counted); and the bounded probe raw and async use, on a fake device. */
#include "test_caching_helpers.h"

#include <math.h>
#include <unistd.h>

#include "caching/sizes.h"
#include "support/test_main.h"

#define BLOCK (4 * MiB)

/* Allocates n blocks of BLOCK on stream 1, then frees those with an even index. */
static void allocate_then_free_every_other(vl_allocator *a, void **blocks, int n)
{
    for (int i = 0; i < n; i++) {
        blocks[i] = vl_allocate(a, BLOCK, S(1));
        assert_non_null(blocks[i]);
    }
    for (int i = 0; i < n; i += 2) {
        vl_deallocate(a, blocks[i], BLOCK, S(1));
        blocks[i] = NULL;
    }
}

static void free_rest(vl_allocator *a, void **blocks, int n)
{
    for (int i = 0; i < n; i++)
        if (blocks[i]) vl_deallocate(a, blocks[i], BLOCK, S(1));
}

/* Classic segments: 25 blocks of 4 MiB fill five 20 MiB segments (a 4 MiB request gets
 * a 20 MiB segment, the next four are split from its remainder), 100 MiB of a 110 MiB
 * device. Freeing blocks 0, 2, ..., 24 leaves 13 holes of 4 MiB, none next to another
 * (positions 0, 2, 4 of even segments, 1, 3 of odd ones). A 12 MiB request fits no hole
 * and needs a 12 MiB segment; 10 MiB are free and no segment is entirely free: OOM. */
static void test_classic_fragmentation_figures(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=110MiB");
    vl_allocator *a = caching_open(d, "caching");
    void *blocks[25];
    allocate_then_free_every_other(a, blocks, 25);
    assert_int_equal(stats_of(a).reserved_bytes, 100 * MiB);

    assert_null(vl_allocate(a, 12 * MiB, S(1)));
    vl_oom_report r;
    assert_int_equal(vl_caching_last_oom_report(a, &r), 1);
    assert_string_equal(r.alloc, "caching");
    assert_int_equal(r.request_bytes, 12 * MiB);
    assert_int_equal(r.rounded_bytes, 12 * MiB);
    assert_int_equal(r.device_free_bytes, 10 * MiB);
    assert_int_equal(r.device_total_bytes, 110 * MiB);
    assert_int_equal(r.allocated_bytes, 12 * BLOCK);                /* blocks 1, 3, ..., 23 */
    assert_int_equal(r.reserved_bytes, 100 * MiB);
    assert_int_equal(r.reserved_unused_bytes, 100 * MiB - 12 * BLOCK); /* 52 MiB */
    assert_int_equal(r.cached_free_bytes, 13 * BLOCK);
    /* A 10 MiB request gets a segment of exactly 10 MiB: more than any 4 MiB hole. */
    assert_int_equal(r.largest_block_bytes, 10 * MiB);
    assert_string_equal(r.largest_block_method, "allocator state");
    assert_int_equal(r.largest_free_bytes, 10 * MiB); /* the device's free memory, in one piece */
    assert_true(fabs(r.fragmentation - (1.0 - 10.0 / (10.0 + 52.0))) < 1e-12);
    assert_int_equal(r.releasable_bytes, 0);
    assert_int_equal(r.largest_after_release_bytes, 10 * MiB);
    assert_int_equal(r.fits_after_release, 0);
    assert_int_equal(r.ooms, 1);

    /* Segment 0 (blocks 0-4) becomes one free block: 20 MiB the cache can give back.
     * Asked now, a 24 MiB request fits no cached block (20 MiB at most) nor the device
     * (10 MiB), but would after the release (30 MiB free). */
    vl_deallocate(a, blocks[1], BLOCK, S(1));
    vl_deallocate(a, blocks[3], BLOCK, S(1));
    blocks[1] = blocks[3] = NULL;
    vl_alloc_oom_report(a, 24 * MiB, S(1), &r);
    assert_int_equal(r.allocated_bytes, 10 * BLOCK);
    assert_int_equal(r.cached_free_bytes, 15 * BLOCK);
    assert_int_equal(r.largest_block_bytes, 20 * MiB);
    assert_int_equal(r.largest_free_bytes, 20 * MiB);
    assert_true(fabs(r.fragmentation - (1.0 - 20.0 / (10.0 + 60.0))) < 1e-12);
    assert_int_equal(r.releasable_bytes, 20 * MiB);
    assert_int_equal(r.largest_after_release_bytes, 30 * MiB);
    assert_int_equal(r.fits_after_release, 1);
    assert_int_equal(r.ooms, 1); /* a question, not an OOM */
    /* The allocator agrees: it releases segment 0 and serves the request. */
    void *big = vl_allocate(a, 24 * MiB, S(1));
    assert_non_null(big);
    assert_int_equal(stats_of(a).ooms, 1);
    /* 6 MiB are free now: a 1-10 MiB request needs a 20 MiB segment, a small one a
     * 2 MiB segment, so 1 MiB is the largest a new segment serves; a cached hole is larger. */
    vl_alloc_oom_report(a, 12 * MiB, S(1), &r);
    assert_int_equal(r.device_free_bytes, 6 * MiB);
    assert_int_equal(r.largest_block_bytes, BLOCK);
    /* Ten 4 MiB holes stay (segments 1-4); the largest free piece is the device's 6 MiB. */
    assert_int_equal(r.cached_free_bytes, 10 * BLOCK);
    assert_int_equal(r.largest_free_bytes, 6 * MiB);
    assert_true(fabs(r.fragmentation - (1.0 - 6.0 / (6.0 + 40.0))) < 1e-12);
    assert_int_equal(r.fits_after_release, 0);
    /* On a stream the allocator has never seen, no cached block serves it. */
    vl_alloc_oom_report(a, 12 * MiB, S(7), &r);
    assert_int_equal(r.largest_block_bytes, MiB);
    vl_deallocate(a, big, 24 * MiB, S(1));
    free_rest(a, blocks, 25);
    close_all_returned(d, a);
}

/* Expandable segments under a reclaim budget on a 40 MiB device: ten 4 MiB blocks map
 * 40 MiB of one range in 2 MiB chunks (offsets below 128 granules); freeing every other
 * one leaves five holes, each two whole chunks. An 8 MiB request fits no hole and the
 * device is full, but the release unmaps the holes' 20 MiB and an 8 MiB mapping then
 * fits: unlike classic segments, the cache's free memory is not stranded. */
#define RECLAIMING "caching:segments=expandable,reclaim=0.008,lend=1,top=fit"
static void test_expandable_fits_after_release(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=40MiB");
    vl_allocator *a = caching_open(d, RECLAIMING);
    void *blocks[10];
    allocate_then_free_every_other(a, blocks, 10);
    assert_int_equal(stats_of(a).reserved_bytes, 40 * MiB);

    vl_oom_report r;
    assert_int_equal(vl_caching_last_oom_report(a, &r), 0); /* no OOM yet */
    vl_alloc_oom_report(a, 8 * MiB, S(1), &r);
    assert_string_equal(r.alloc, RECLAIMING);
    assert_int_equal(r.device_free_bytes, 0);
    assert_int_equal(r.allocated_bytes, 5 * BLOCK);
    assert_int_equal(r.reserved_unused_bytes, 5 * BLOCK);
    assert_int_equal(r.cached_free_bytes, 5 * BLOCK);
    assert_int_equal(r.largest_block_bytes, BLOCK);
    assert_int_equal(r.largest_free_bytes, BLOCK);
    assert_true(fabs(r.fragmentation - (1.0 - 4.0 / 20.0)) < 1e-12);
    assert_int_equal(r.releasable_bytes, 5 * BLOCK);
    assert_int_equal(r.largest_after_release_bytes, 5 * BLOCK);
    assert_int_equal(r.fits_after_release, 1);
    void *p = vl_allocate(a, 8 * MiB, S(1));
    assert_non_null(p);
    assert_int_equal(stats_of(a).ooms, 0);
    /* To map the 8 MiB the allocator unmapped only the chunks it needed, two holes'
     * worth: three 4 MiB holes stay cached, 28 MiB are live, the device is full. 20 MiB
     * cannot fit even after a release (12 MiB), so the allocator does not flush: the
     * report shows the cache as it is, 12 MiB in three pieces. */
    assert_null(vl_allocate(a, 20 * MiB, S(1)));
    assert_int_equal(vl_caching_last_oom_report(a, &r), 1);
    assert_int_equal(r.request_bytes, 20 * MiB);
    assert_int_equal(r.device_free_bytes, 0);
    assert_int_equal(r.allocated_bytes, 28 * MiB);
    assert_int_equal(r.reserved_bytes, 40 * MiB);
    assert_int_equal(r.reserved_unused_bytes, 3 * BLOCK);
    assert_int_equal(r.cached_free_bytes, 3 * BLOCK);
    assert_int_equal(r.largest_block_bytes, BLOCK);
    assert_int_equal(r.largest_free_bytes, BLOCK);
    assert_true(fabs(r.fragmentation - (1.0 - 4.0 / 12.0)) < 1e-12);
    assert_int_equal(r.releasable_bytes, 3 * BLOCK);
    assert_int_equal(r.largest_after_release_bytes, 3 * BLOCK);
    assert_int_equal(r.fits_after_release, 0);
    assert_int_equal(r.ooms, 1);
    vl_deallocate(a, p, 8 * MiB, S(1));
    free_rest(a, blocks, 10);
    close_all_returned(d, a);
}

/* An empty device has no fragmentation, but classic segments still limit the largest
 * request: with 8 MiB free, a 1-10 MiB request needs a 20 MiB segment, so 1 MiB (a
 * 2 MiB small segment) is the largest that succeeds. */
static void test_empty_device(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=8MiB");
    vl_allocator *a = caching_open(d, "caching");
    vl_oom_report r;
    vl_alloc_oom_report(a, 4 * MiB, NULL, &r);
    assert_int_equal(r.device_free_bytes, 8 * MiB);
    assert_int_equal(r.reserved_bytes, 0);
    assert_int_equal(r.cached_free_bytes, 0);
    assert_int_equal(r.largest_block_bytes, MiB);
    assert_int_equal(r.largest_free_bytes, 8 * MiB);
    assert_true(r.fragmentation == 0.0);
    assert_int_equal(r.fits_after_release, 0);
    vl_alloc_close(a);
    vl_device_close(d);
    /* Expandable maps what the request needs: all 8 MiB. */
    d = sim_open("sim:capacity=8MiB");
    a = caching_open(d, "caching:segments=expandable");
    vl_alloc_oom_report(a, 4 * MiB, NULL, &r);
    assert_int_equal(r.largest_block_bytes, 8 * MiB);
    assert_int_equal(r.fits_after_release, 1);
    vl_alloc_close(a);
    vl_device_close(d);
}

/* The text: one "key: value" line per figure, unknown ones as "unknown", never 0. */
static void test_format(void **state)
{
    (void)state;
    vl_oom_report r;
    vl_oom_report_unknown(&r);
    char text[4096];
    vl_oom_report_format(&r, text, sizeof text);
    assert_non_null(strstr(text, "oom_report: unknown\n"));
    assert_non_null(strstr(text, "\nlargest_block_bytes: unknown\n"));
    assert_non_null(strstr(text, "\nfragmentation: unknown\n"));
    assert_non_null(strstr(text, "\nfits_after_release: unknown (unknown)\n"));
    assert_null(strstr(text, ": 0"));

    vl_device *d = sim_open("sim:capacity=110MiB");
    vl_allocator *a = caching_open(d, "caching");
    void *blocks[25];
    allocate_then_free_every_other(a, blocks, 25);
    vl_alloc_oom_report(a, 12 * MiB, S(1), &r);
    vl_oom_report_format(&r, text, sizeof text);
    assert_non_null(strstr(text, "oom_report: caching\nrequest_bytes: 12582912 (12"));
    assert_non_null(strstr(text, "\nlargest_block_bytes: 10485760 ("));
    assert_non_null(strstr(text, "\nlargest_block_method: allocator state\n"));
    assert_non_null(strstr(text, "\nfragmentation: 0.8387 (1 - largest_free / (device_free + cached_free))\n"));
    assert_non_null(strstr(text, "\nfits_after_release: no ("));
    /* Truncation keeps a terminated string. */
    char small[40];
    assert_int_equal(vl_oom_report_format(&r, small, sizeof small), sizeof small - 1);
    assert_int_equal(strlen(small), sizeof small - 1);
    free_rest(a, blocks, 25);
    close_all_returned(d, a);
}

/* Runs fn with stderr caught; returns what it wrote (caller frees). */
static char *catch_stderr(void (*fn)(void *), void *ctx)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(fileno(stderr));
    dup2(fileno(tmp), fileno(stderr));
    fn(ctx);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    long n = ftell(tmp);
    char *text = calloc(1, (size_t)n + 1);
    rewind(tmp);
    assert_int_equal(fread(text, 1, (size_t)n, tmp), (size_t)n);
    fclose(tmp);
    return text;
}

static void three_ooms(void *ctx)
{
    vl_allocator *a = ctx;
    for (int i = 0; i < 3; i++) assert_null(vl_allocate(a, (size_t)(200 + i) * MiB, S(1)));
}

/* What programs do (lib/program.c): the first OOM's report on stderr, later ones
 * counted; off, nothing is taken. */
static void test_program_capture(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=110MiB");
    vl_allocator *a = caching_open(d, "caching");
    char *text = catch_stderr(three_ooms, a);
    assert_string_equal(text, ""); /* off by default: the library prints nothing */
    free(text);
    assert_null(a->last_oom);

    assert_int_equal(vl_alloc_oom_reports(a, VL_OOM_REPORT_FIRST), VL_OOM_REPORT_OFF);
    text = catch_stderr(three_ooms, a);
    assert_non_null(strstr(text, "oom_report: caching\nrequest_bytes: 209715200 ("));
    assert_null(strstr(text + 1, "oom_report:")); /* one report */
    free(text);
    assert_non_null(a->last_oom);
    assert_int_equal(a->last_oom->request_bytes, 200 * MiB);
    assert_int_equal(a->last_oom->ooms, 4);
    assert_int_equal(a->oom_reports_taken, 1);
    assert_int_equal(a->oom_reports_skipped, 2);

    assert_int_equal(vl_alloc_oom_reports(a, VL_OOM_REPORT_EACH), VL_OOM_REPORT_FIRST);
    text = catch_stderr(three_ooms, a);
    assert_string_equal(text, ""); /* kept, not printed */
    free(text);
    assert_int_equal(a->last_oom->request_bytes, 202 * MiB);
    assert_int_equal(a->oom_reports_taken, 4);
    vl_alloc_close(a);
    vl_device_close(d);
}

typedef struct fake_device {
    size_t limit; /* the largest allocation that succeeds */
    int attempts;
} fake_device;

static int fake_fits(void *ctx, size_t bytes)
{
    fake_device *f = ctx;
    f->attempts++;
    return bytes <= f->limit;
}

/* The bounded probe: the largest multiple of 2 MiB that fits, in at most
 * 1 + ceil(log2(upper / 2 MiB)) attempts. */
static void test_bounded_probe(void **state)
{
    (void)state;
    const size_t upper = (size_t)80 << 30; /* 40960 steps of 2 MiB: at most 17 attempts */
    const size_t limits[] = {0, MiB, 2 * MiB, 2 * MiB + 1, (size_t)37 << 30, ((size_t)37 << 30) - 1, upper,
                             upper + 1};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        fake_device f = {limits[i], 0};
        vl_oom_report r;
        vl_oom_report_unknown(&r);
        vl_oom_report_probe(&r, upper, fake_fits, &f);
        size_t expect = limits[i] > upper ? upper : limits[i] - limits[i] % VL_OOM_PROBE_RESOLUTION;
        assert_int_equal(r.largest_block_bytes, expect);
        assert_string_equal(r.largest_block_method, "probe");
        assert_int_equal(r.largest_free_bytes, r.largest_block_bytes);
        assert_int_equal(r.probe_attempts, f.attempts);
        assert_int_equal(r.probe_resolution_bytes, VL_OOM_PROBE_RESOLUTION);
        assert_true(f.attempts >= 1 && f.attempts <= 17);
    }
}

VL_TEST_MAIN(cmocka_unit_test(test_classic_fragmentation_figures), cmocka_unit_test(test_expandable_fits_after_release),
             cmocka_unit_test(test_empty_device), cmocka_unit_test(test_format), cmocka_unit_test(test_program_capture),
             cmocka_unit_test(test_bounded_probe))
