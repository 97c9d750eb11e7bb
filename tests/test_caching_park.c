/* Parking (lib/caching/park.h) on the simulated device: a stream's last free comes back
 * for its next request when best fit would hand out that same block; any other request,
 * growth, a trim or a report first releases it into the free lists, coalesced; a parked
 * pointer is free memory to every entry point; a stream whose parked blocks are not
 * taken back parks only now and then. That no decision changes at all is checked in
 * test_caching_property, which runs every configuration beside a park=0 twin. */
#include "test_caching_helpers.h"

#include "caching/park.h"
#include "support/test_main.h"

static vl_device *d;
static vl_allocator *a;

static void open_sim(const char *device, const char *spec)
{
    d = sim_open(device);
    a = caching_open(d, spec);
}

static void test_same_size_comes_back(void **state)
{
    (void)state;
    open_sim("sim", "caching");
    void *keep = vl_allocate(a, 4 * KiB, S(1));
    void *p = vl_allocate(a, 1000, S(1));
    vl_deallocate(a, p, 0, S(1));
    assert_consistent(a);
    assert_int_equal(vl_caching_block_size(a, p), 0); /* parked is free */
    /* 1000 and 700 both round to 1 KiB: the parked block serves either. */
    assert_ptr_equal(vl_allocate(a, 700, S(1)), p);
    assert_int_equal(vl_caching_block_size(a, p), 1024);
    vl_alloc_stats st = stats_of(a);
    assert_int_equal(st.allocated_bytes, 4 * KiB + 1024);
    assert_int_equal(st.requested_bytes, 4 * KiB + 700);
    assert_int_equal(st.active_bytes, st.allocated_bytes);
    vl_deallocate(a, p, 0, S(1));
    vl_deallocate(a, keep, 0, S(1));
    close_all_returned(d, a);
}

static void test_not_taken_back_where_best_fit_differs(void **state)
{
    (void)state;
    open_sim("sim", "caching");
    /* A free 8 KiB hole at a lower address than p (8 KiB): best fit picks the hole,
     * the lowest address among equal sizes, so the parked p is released, not reused. */
    void *hole = vl_allocate(a, 8 * KiB, S(1));
    void *keep1 = vl_allocate(a, 512, S(1));
    void *p = vl_allocate(a, 8 * KiB, S(1));
    void *keep2 = vl_allocate(a, 512, S(1));
    vl_deallocate(a, hole, 0, S(1)); /* parked, then released by the next free */
    vl_deallocate(a, p, 0, S(1));
    assert_ptr_equal(vl_allocate(a, 8 * KiB, S(1)), hole);
    assert_consistent(a);
    vl_deallocate(a, hole, 0, S(1));
    vl_deallocate(a, keep1, 0, S(1));
    vl_deallocate(a, keep2, 0, S(1));
    close_all_returned(d, a);
}

static void test_other_request_sees_coalesced_blocks(void **state)
{
    (void)state;
    open_sim("sim", "caching");
    /* Eight 256 KiB blocks tile one 2 MiB small segment; three neighbours freed (the
     * last parked), a 768 KiB request must find them as one free block, as it would
     * without parking: no new segment. */
    void *p[8];
    for (int i = 0; i < 8; i++) p[i] = vl_allocate(a, 256 * KiB, S(1));
    assert_int_equal(stats_of(a).segments, 1);
    for (int i = 0; i < 3; i++) vl_deallocate(a, p[i], 0, S(1));
    assert_consistent(a);
    void *q = vl_allocate(a, 3 * 256 * KiB, S(1));
    assert_ptr_equal(q, p[0]);
    assert_int_equal(stats_of(a).segments, 1);
    assert_consistent(a);
    vl_deallocate(a, q, 0, S(1));
    for (int i = 3; i < 8; i++) vl_deallocate(a, p[i], 0, S(1));
    close_all_returned(d, a);
}

static void test_streams_keep_their_own(void **state)
{
    (void)state;
    open_sim("sim", "caching");
    void *p = vl_allocate(a, 8 * KiB, S(1));
    vl_deallocate(a, p, 0, S(1));
    /* Another stream never gets a block its stream freed (stream-ordered reuse). */
    void *q = vl_allocate(a, 8 * KiB, S(2));
    assert_ptr_not_equal(q, p);
    assert_ptr_equal(vl_allocate(a, 8 * KiB, S(1)), p);
    vl_deallocate(a, p, 0, S(1));
    vl_deallocate(a, q, 0, S(2));
    close_all_returned(d, a);
}

static void test_parked_pointer_is_free_memory(void **state)
{
    (void)state;
    open_sim("sim", "caching");
    void *p = vl_allocate(a, 64 * KiB, S(1));
    vl_deallocate(a, p, 0, S(1));
    vl_deallocate(a, p, 0, S(1)); /* a double free: refused with a line, nothing changes */
    assert_int_equal(stats_of(a).frees, 1);
    assert_int_equal(vl_record_use(a, p, S(2)), VL_UNSUPPORTED);
    assert_consistent(a);
    /* Trim releases it and gives back the whole segment. */
    assert_int_equal(vl_trim(a), 2 * MiB);
    assert_int_equal(stats_of(a).reserved_bytes, 0);
    close_all_returned(d, a);
}

static void test_used_elsewhere_is_not_parked(void **state)
{
    (void)state;
    open_sim("sim:events=manual", "caching");
    void *p = vl_allocate(a, 64 * KiB, S(1));
    assert_int_equal(vl_record_use(a, p, S(2)), VL_OK);
    vl_deallocate(a, p, 0, S(1));
    /* Pending on S(2)'s event: the same request must not get it back yet. */
    void *q = vl_allocate(a, 64 * KiB, S(1));
    assert_ptr_not_equal(q, p);
    vl_sim_complete_all(d);
    vl_deallocate(a, q, 0, S(1));
    close_all_returned(d, a);
}

static void test_off(void **state)
{
    (void)state;
    /* A 1 MiB block beside a live 512 B one in a 2 MiB small segment: under park=0 and
     * pack=1 its free coalesces at once (the rest of the segment is one free block); by
     * default it is parked (the largest free block is then the parked one). */
    const char *specs[] = {"caching:park=0", "caching:segments=expandable,pack=1", "caching"};
    const size_t largest[] = {2 * MiB - 512, 0, 1 * MiB};
    for (int k = 0; k < 3; k++) {
        open_sim("sim", specs[k]);
        void *keep = vl_allocate(a, 512, S(1));
        void *p = vl_allocate(a, 1 * MiB, S(1));
        vl_deallocate(a, p, 0, S(1));
        assert_consistent(a);
        if (largest[k]) assert_int_equal(stats_of(a).largest_free_block_bytes, largest[k]);
        else assert_true((size_t)stats_of(a).largest_free_block_bytes > 1 * MiB); /* merged with the rest */
        vl_deallocate(a, keep, 0, S(1));
        close_all_returned(d, a);
    }
}

/* Three parked-then-released 16 MiB blocks and a 40 MiB request on a 64 MiB device:
 * growth sees every free byte (a parked block never makes the allocator grow or OOM). */
static void test_growth_releases_parked_blocks(void **state)
{
    (void)state;
    open_sim("sim:capacity=64MiB", "caching:segments=expandable");
    void *p[3];
    for (int i = 0; i < 3; i++) p[i] = vl_allocate(a, 16 * MiB, S(1));
    for (int i = 0; i < 3; i++) vl_deallocate(a, p[i], 0, S(1));
    void *big = vl_allocate(a, 40 * MiB, S(1));
    assert_non_null(big);
    assert_int_equal(stats_of(a).ooms, 0);
    vl_deallocate(a, big, 0, S(1));
    close_all_returned(d, a);
}

/* Frees whose next request never takes the block back: soon the stream parks only one
 * free in VL_PARK_PROBE (32); pairs that take it back make it park every free again.
 * Seen from outside through the largest free block right after a free: a 4 MiB block
 * freed from a 20 MiB segment leaves 16 MiB free beside it when parked, 20 MiB when not. */
static int free_parks(void *p)
{
    vl_deallocate(a, p, 0, S(1));
    size_t largest = (size_t)stats_of(a).largest_free_block_bytes;
    assert_true(largest == 16 * MiB || largest == 20 * MiB);
    return largest == 16 * MiB;
}

static void test_parks_less_when_not_taken_back(void **state)
{
    (void)state;
    open_sim("sim", "caching");
    int parked_late = 0;
    for (int i = 0; i < 128; i++) {
        int parked = free_parks(vl_allocate(a, 4 * MiB, S(1)));
        if (i >= 64) parked_late += parked;
        /* Two more frees, of other sizes, each the request after a free of another:
         * three frees per round, so the probes (every 32nd) fall on each in turn. */
        vl_deallocate(a, vl_allocate(a, 2 * MiB, S(1)), 0, S(1));
        vl_deallocate(a, vl_allocate(a, 6 * MiB, S(1)), 0, S(1));
    }
    print_message("4 MiB frees parked in the last 64 rounds: %d\n", parked_late);
    assert_in_range(parked_late, 1, 4); /* about 64 x 3 / 32 / 3 = 2: the probes */
    /* Pairs: within 32 frees a probe parks one, the next request takes it back, and
     * from then on every free parks. */
    for (int i = 0; i < 32; i++) free_parks(vl_allocate(a, 4 * MiB, S(1)));
    for (int i = 0; i < 8; i++) assert_true(free_parks(vl_allocate(a, 4 * MiB, S(1))));
    close_all_returned(d, a);
}

/* n pairs of freeing p (2 MiB) and asking for 2 MiB again, each given p back. */
static void pairs_give_back(void *p, int n)
{
    for (int i = 0; i < n; i++) {
        vl_deallocate(a, p, 0, S(1));
        assert_ptr_equal(vl_allocate(a, 2 * MiB, S(1)), p);
    }
}

/* Expandable pools lend each other free blocks: a 2 MiB request, its own (large) pool
 * empty, takes the small pool's free chunk, and its free parks it there. The next 2 MiB
 * request is taken back from the slot (it was released into the bins and found again
 * every time, as the small pool was not the request's: sim, 35.6 ns a pair against
 * 21.5 at 4 MiB). Not while the large pool has a fit: that is what the slow path takes. */
static void test_lent_block_comes_back(void **state)
{
    (void)state;
    open_sim("sim", "caching:segments=expandable,lend=1");
    void *small[4];
    for (int i = 0; i < 4; i++) small[i] = vl_allocate(a, 64 * KiB, S(1));
    for (int i = 0; i < 4; i++) vl_deallocate(a, small[i], 0, S(1));
    void *p = vl_allocate(a, 2 * MiB, S(1));
    assert_ptr_equal(p, small[0]); /* the small pool's chunk, lent */
    /* The request after the small frees did not take back the 64 KiB parked then, so
     * the stream parks only every VL_PARK_PROBE-th free until a probe is taken back. */
    pairs_give_back(p, VL_PARK_PROBE);
    unsigned long long hits = vl_caching_park_hits(a);
    pairs_give_back(p, 16);
    assert_int_equal(vl_caching_park_hits(a) - hits, 16);
    assert_consistent(a);
    /* a 2 MiB free block in the large pool: best fit there wins, the lent block goes back */
    void *q = vl_allocate(a, 4 * MiB, S(1));
    void *r = vl_allocate(a, 2 * MiB, S(1));
    vl_deallocate(a, q, 0, S(1));
    vl_deallocate(a, p, 0, S(1));
    hits = vl_caching_park_hits(a);
    void *back = vl_allocate(a, 2 * MiB, S(1));
    assert_ptr_not_equal(back, p);
    assert_ptr_equal(back, q);
    assert_int_equal(vl_caching_park_hits(a), hits);
    assert_consistent(a);
    vl_deallocate(a, back, 0, S(1));
    vl_deallocate(a, r, 0, S(1));
    close_all_returned(d, a);
}

VL_TEST_MAIN(cmocka_unit_test(test_lent_block_comes_back), cmocka_unit_test(test_same_size_comes_back), cmocka_unit_test(test_not_taken_back_where_best_fit_differs),
             cmocka_unit_test(test_other_request_sees_coalesced_blocks), cmocka_unit_test(test_streams_keep_their_own),
             cmocka_unit_test(test_parked_pointer_is_free_memory), cmocka_unit_test(test_used_elsewhere_is_not_parked),
             cmocka_unit_test(test_off), cmocka_unit_test(test_growth_releases_parked_blocks),
             cmocka_unit_test(test_parks_less_when_not_taken_back))
