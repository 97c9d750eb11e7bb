/* Stream-ordered release of expandable chunks (lib/caching/release.c), on the simulated
 * device with events=manual (and span=0 throughout: one map call per chunk, so counts of
 * calls are chunks), so "the work before the free is still running" is a state
 * the test controls:
 *   - a chunk that reclaim gives up stays mapped while the event covering its last use
 *     is incomplete, and is unmapped at the first allocation after it completed;
 *   - a block used on another stream (record_use) is not even a candidate until that
 *     stream's event completed;
 *   - none of this waits for the device (no synchronize on the alloc/free path);
 *   - a request that cannot fit in what the device could still give fails at once,
 *     mapping nothing;
 *   - the mapping a reclaim made room for takes the retiring chunks' memory at once
 *     (lending), and failures of lending are recorded and survived;
 *   - kept memory is mapped again by the next mapping, not created anew;
 *   - a refused release of kept memory is reported and retried on the next trim.
 * Every test ends with the invariant check and with the device holding nothing. */
#include "test_caching_helpers.h"
#include "support/test_main.h"

/* Every 2 MiB chunk of [p, p+bytes) mapped (1) / none of them (0) / a mix (-1). */
static int chunks_mapped(vl_device *d, void *p, size_t bytes)
{
    size_t mapped = 0, n = 0;
    for (size_t off = 0; off < bytes; off += 2 * MiB, n++) mapped += (size_t)vl_sim_is_mapped(d, (char *)p + off);
    return mapped == n ? 1 : mapped == 0 ? 0 : -1;
}

/* An allocation and free on s: the allocator asks its retire batches at each alloc. */
static void poke(vl_allocator *a, vl_stream s)
{
    void *p = vl_allocate(a, 4096, s);
    assert_non_null(p);
    vl_deallocate(a, p, 4096, s);
}

static void test_retired_chunks_stay_mapped_until_their_event_completes(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB,events=manual");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,reclaim=0.01,span=0,lend=1,top=fit");
    /* A synchronize anywhere below would be recorded as an error. */
    vl_sim_fail_nth(d, VL_SIM_SYNCHRONIZE, 1);
    void *x = vl_allocate(a, 8 * MiB, S(1)), *y = vl_allocate(a, 8 * MiB, S(1));
    assert_non_null(x);
    assert_non_null(y);
    vl_deallocate(a, x, 0, S(1));
    /* 12 MiB more would pass 1.01 x the stream's peak: x's chunks are given up, but
     * kernels queued on S(1) before the free may still use them. */
    void *z = vl_allocate(a, 12 * MiB, S(1));
    assert_non_null(z);
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 1);
    assert_int_equal(stats_of(a).device_frees, 0);
    assert_consistent(a);
    vl_sim_complete_stream(d, S(2)); /* another stream's progress says nothing about S(1) */
    poke(a, S(1));
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 1);
    vl_sim_complete_stream(d, S(1));
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 1); /* nothing asked yet */
    poke(a, S(1));
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 0);
    assert_int_equal(stats_of(a).device_frees, 4);
    void *w = vl_allocate(a, 8 * MiB, S(1));
    assert_non_null(w);
    assert_int_equal(vl_caching_last_error(a, NULL, 0), 0);
    assert_consistent(a);
    vl_deallocate(a, w, 0, S(1));
    vl_sim_fail_nth(d, VL_SIM_SYNCHRONIZE, 0);
    vl_deallocate(a, y, 0, S(1));
    vl_deallocate(a, z, 0, S(1));
    close_all_returned(d, a);
}

/* The mapping that a reclaim made room for takes the retiring chunks' memory at once
 * (same stream: its later work runs after the earlier), so reserved does not hold both
 * the retiring and fresh memory while the event is outstanding (on a GPU it nearly
 * always is). The old addresses stay mapped until the event completes. */
static void test_retiring_chunks_are_lent_to_the_new_mapping(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB,events=manual");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit");
    vl_sim_fail_nth(d, VL_SIM_SYNCHRONIZE, 1);
    void *x = vl_allocate(a, 8 * MiB, S(1)), *y = vl_allocate(a, 8 * MiB, S(1));
    vl_deallocate(a, x, 0, S(1));
    void *z = vl_allocate(a, 12 * MiB, S(1)); /* x's 8 MiB lent, 4 MiB fresh */
    assert_non_null(z);
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 1);
    assert_int_equal(chunks_mapped(d, z, 12 * MiB), 1);
    assert_int_equal(vl_sim_used_bytes(d), 20 * MiB);
    vl_alloc_stats st = stats_of(a);
    assert_int_equal(st.reserved_bytes, 20 * MiB);
    assert_int_equal(st.peak_reserved_bytes, 20 * MiB);
    assert_consistent(a);
    vl_sim_complete_stream(d, S(1));
    poke(a, S(1));
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 0);
    assert_int_equal(chunks_mapped(d, z, 12 * MiB), 1); /* the memory is z's now */
    assert_int_equal(vl_sim_used_bytes(d), 22 * MiB);       /* + poke's small-pool chunk */
    assert_int_equal(stats_of(a).reserved_bytes, 22 * MiB);
    assert_int_equal(vl_caching_last_error(a, NULL, 0), 0);
    assert_consistent(a);
    vl_sim_fail_nth(d, VL_SIM_SYNCHRONIZE, 0);
    vl_deallocate(a, y, 0, S(1));
    vl_deallocate(a, z, 0, S(1));
    close_all_returned(d, a);
}

/* A refused phys_share stops lending: the mapping takes fresh memory (recorded). A
 * refused unmap of a lent chunk leaves it RETIRING, queued again, and the next
 * allocation unmaps it (recorded). The allocator stays consistent and usable. */
static void test_lending_failures_are_recorded_and_survived(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB,events=manual");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit");
    void *x = vl_allocate(a, 8 * MiB, S(1)), *y = vl_allocate(a, 8 * MiB, S(1));
    vl_deallocate(a, x, 0, S(1));
    vl_sim_fail_nth(d, VL_SIM_PHYS_RELEASE, 2); /* the second phys_share */
    void *z = vl_allocate(a, 12 * MiB, S(1));    /* one chunk lent, the rest fresh */
    assert_non_null(z);
    char why[256];
    assert_int_equal(vl_caching_last_error(a, why, sizeof why), VL_CACHING_ERR_DEVICE);
    assert_non_null(strstr(why, "lent span"));
    assert_int_equal(vl_sim_used_bytes(d), 26 * MiB);
    assert_consistent(a);
    vl_sim_complete_stream(d, S(1));
    vl_sim_fail_nth(d, VL_SIM_UNMAP, 1); /* the lent chunk's unmap */
    poke(a, S(1));
    assert_non_null(strstr(vl_caching_last_error(a, why, sizeof why) ? why : "", "unmap of a lent span"));
    assert_consistent(a);
    void *w = vl_allocate(a, 8 * MiB, S(1));
    assert_non_null(w);
    assert_int_equal(vl_sim_is_mapped(d, x) && x != w, 0); /* unmapped by the retry (or reused by w) */
    assert_consistent(a);
    vl_deallocate(a, w, 0, S(1));
    vl_deallocate(a, y, 0, S(1));
    vl_deallocate(a, z, 0, S(1));
    close_all_returned(d, a);
}

static void test_record_use_streams_hold_chunks_back_too(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB,events=manual");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit");
    vl_sim_fail_nth(d, VL_SIM_SYNCHRONIZE, 1);
    void *x = vl_allocate(a, 8 * MiB, S(1)), *y = vl_allocate(a, 8 * MiB, S(1));
    assert_int_equal(vl_record_use(a, x, S(2)), VL_OK);
    vl_deallocate(a, x, 0, S(1)); /* PENDING behind an event on S(2) */
    void *z = vl_allocate(a, 12 * MiB, S(1));
    assert_non_null(z);
    vl_sim_complete_stream(d, S(1));
    poke(a, S(1));
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 1); /* S(2) may still use it */
    vl_sim_complete_stream(d, S(2));
    poke(a, S(1)); /* x is FREE now, still mapped: the stream is within its cap */
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 1);
    void *w = vl_allocate(a, 12 * MiB, S(1)); /* over the cap: x retires behind S(1) */
    assert_non_null(w);
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 1);
    poke(a, S(1));
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 1);
    vl_sim_complete_stream(d, S(1));
    poke(a, S(1));
    assert_int_equal(chunks_mapped(d, x, 8 * MiB), 0);
    assert_int_equal(vl_caching_last_error(a, NULL, 0), 0);
    vl_sim_fail_nth(d, VL_SIM_SYNCHRONIZE, 0);
    vl_deallocate(a, y, 0, S(1));
    vl_deallocate(a, z, 0, S(1));
    vl_deallocate(a, w, 0, S(1));
    close_all_returned(d, a);
}

/* With events=immediate the kept memory is mapped again at once: the stream's reserved
 * stays at its peak and no new memory is created for the move. */
static void test_kept_memory_is_mapped_again(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit");
    void *x = vl_allocate(a, 8 * MiB, S(1)), *y = vl_allocate(a, 8 * MiB, S(1));
    vl_deallocate(a, x, 0, S(1));
    void *z = vl_allocate(a, 12 * MiB, S(1));
    assert_non_null(z);
    vl_alloc_stats st = stats_of(a);
    assert_int_equal(st.reserved_bytes, 20 * MiB);
    assert_int_equal(st.peak_reserved_bytes, 20 * MiB);
    assert_int_equal(vl_sim_used_bytes(d), 20 * MiB);
    vl_deallocate(a, y, 0, S(1));
    vl_deallocate(a, z, 0, S(1));
    close_all_returned(d, a);
}

static void test_request_that_cannot_fit_maps_nothing(void **state)
{
    (void)state;
    /* 600 MiB held outside the allocator (another process, a context): 500 MiB is below
     * the capacity but above what is free. */
    vl_device *d = sim_open("sim:capacity=1GiB,overhead=600MiB");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit");
    assert_null(vl_allocate(a, 500 * MiB, S(1)));
    assert_int_equal(stats_of(a).device_allocs, 0);
    assert_int_equal(stats_of(a).alloc_retries, 0); /* no flush: it would not help */
    assert_int_equal(stats_of(a).ooms, 1);
    vl_alloc_close(a);
    vl_device_close(d);

    /* Live blocks leave 424 MiB: 500 MiB can never fit, whatever is reclaimed. */
    d = sim_open("sim:capacity=1GiB");
    a = caching_open(d, "caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit");
    void *live = vl_allocate(a, 600 * MiB, S(1));
    assert_non_null(live);
    int64_t maps = stats_of(a).device_allocs;
    assert_null(vl_allocate(a, 500 * MiB, S(2)));
    assert_int_equal(stats_of(a).device_allocs, maps);
    assert_int_equal(stats_of(a).alloc_retries, 0);
    vl_deallocate(a, live, 0, S(1));
    close_all_returned(d, a);
}

static void test_kept_memory_release_may_fail(void **state)
{
    (void)state;
    /* fail_phys=1: the first phys_share is refused, so nothing is lent and x's memory
     * is kept once its event completed. */
    vl_device *d = sim_open("sim:capacity=1GiB,events=manual,fail_phys=1");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit");
    void *x = vl_allocate(a, 8 * MiB, S(1)), *y = vl_allocate(a, 8 * MiB, S(1));
    vl_deallocate(a, x, 0, S(1));
    void *z = vl_allocate(a, 12 * MiB, S(1));
    vl_sim_complete_stream(d, S(1));
    poke(a, S(1)); /* unmapped, the memory kept */
    vl_sim_fail_nth(d, VL_SIM_PHYS_RELEASE, 1);
    vl_trim(a);    /* gives kept memory back: refused once */
    char why[256];
    assert_int_equal(vl_caching_last_error(a, why, sizeof why), VL_CACHING_ERR_DEVICE);
    assert_non_null(strstr(why, "kept memory"));
    assert_consistent(a);
    vl_deallocate(a, y, 0, S(1));
    vl_deallocate(a, z, 0, S(1));
    close_all_returned(d, a); /* the next trim gives it back */
}

/* A failed growth, then the flush after it frees a PENDING block that serves the retry
 * from the cache: that block must come out of its bins (only a fresh mapping is handed
 * out without ever being in them). The property test found this. */
static void test_cached_block_after_a_failed_growth(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=64MiB,events=manual");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit");
    void *x = vl_allocate(a, 1280 * KiB, S(1)), *y = vl_allocate(a, 1280 * KiB, S(1));
    assert_int_equal(vl_record_use(a, x, S(2)), VL_OK);
    vl_deallocate(a, x, 0, S(1)); /* PENDING: S(2) may still use it */
    void *fill = vl_allocate(a, 64 * MiB - 2560 * KiB, S(1)); /* the device is full */
    assert_non_null(fill);
    void *again = vl_allocate(a, 1280 * KiB, S(1)); /* no memory: flush, x completes, reused */
    assert_ptr_equal(again, x);
    assert_consistent(a);
    vl_deallocate(a, again, 0, S(1));
    vl_deallocate(a, y, 0, S(1));
    vl_deallocate(a, fill, 0, S(1));
    close_all_returned(d, a);
}

/* Reclaim takes the chunks of free blocks next to a hole before any others: that grows
 * the hole rather than opening a new one inside a free block between live ones (which,
 * where sizes do not fall on chunks, leaves a partly used chunk either side that only
 * small requests can use). Layout in MiB: A [0,4) F1 [4,12) B [12,16) F2 [16,20)
 * X [20,22) C [22,26). X is freed and trimmed (a hole next to F2), then F1 and F2 are
 * freed. A 10 MiB request fits no free block, nor F2 joined with the hole, so it maps
 * 10 MiB after C, and 7.74 MiB must go to stay under 1.01 x the peak of 26 MiB: all of
 * F2 first (the hole grows to [16,22)), then the top 4 MiB of F1. Largest first, as
 * before, took all of F1 and none of F2. */
static void test_reclaim_grows_holes_before_opening_new_ones(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB,events=manual");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,reclaim=0.01,span=0,lend=1,top=fit");
    const size_t mib[6] = {4, 8, 4, 4, 2, 4}; /* A F1 B F2 X C */
    char *p[6];
    for (int i = 0; i < 6; i++) {
        p[i] = vl_allocate(a, mib[i] * MiB, S(1));
        assert_non_null(p[i]);
    }
    char *A = p[0], *F1 = p[1], *B = p[2], *F2 = p[3], *X = p[4], *C = p[5];
    assert_ptr_equal(C, A + 22 * MiB);
    vl_deallocate(a, X, 0, S(1));
    vl_trim(a);
    assert_int_equal(chunks_mapped(d, X, 2 * MiB), 0);
    vl_deallocate(a, F1, 0, S(1));
    vl_deallocate(a, F2, 0, S(1));
    char *R = vl_allocate(a, 10 * MiB, S(1));
    assert_ptr_equal(R, A + 26 * MiB);
    vl_sim_complete_stream(d, S(1));
    poke(a, S(1));
    assert_int_equal(chunks_mapped(d, F2, 6 * MiB), 0); /* [16, 22): one hole, grown */
    assert_int_equal(chunks_mapped(d, F1, 4 * MiB), 1);
    assert_int_equal(chunks_mapped(d, F1 + 4 * MiB, 4 * MiB), 0);
    assert_int_equal(vl_caching_last_error(a, NULL, 0), 0);
    assert_consistent(a);
    vl_deallocate(a, A, 0, S(1));
    vl_deallocate(a, B, 0, S(1));
    vl_deallocate(a, C, 0, S(1));
    vl_deallocate(a, R, 0, S(1));
    close_all_returned(d, a);
}

VL_TEST_MAIN(cmocka_unit_test(test_retired_chunks_stay_mapped_until_their_event_completes),
             cmocka_unit_test(test_reclaim_grows_holes_before_opening_new_ones),
             cmocka_unit_test(test_retiring_chunks_are_lent_to_the_new_mapping),
             cmocka_unit_test(test_lending_failures_are_recorded_and_survived),
             cmocka_unit_test(test_record_use_streams_hold_chunks_back_too),
             cmocka_unit_test(test_kept_memory_is_mapped_again),
             cmocka_unit_test(test_request_that_cannot_fit_maps_nothing),
             cmocka_unit_test(test_kept_memory_release_may_fail),
             cmocka_unit_test(test_cached_block_after_a_failed_growth))
