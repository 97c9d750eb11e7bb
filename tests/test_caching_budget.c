/* The expandable reclaim budget (lib/caching/budget.c) on the simulated device: a
 * program whose free memory never fits its next request relocates every step (unmaps
 * free chunks in one place to map as many in another). With raise=any the budget rises
 * until it stops doing so; with raise=idle it rises only where the relocation ran with
 * the stream idle (the batch the reclaim queued already complete), and stays tight where
 * queued work hid it (events=manual: the test says when the work completes). */
#include "test_caching_helpers.h"

#include "support/test_main.h"

#define BLOCKS 16
#define BLOCK (4 * MiB)

/* One step: 16 x 4 MiB, every other one freed (32 MiB free, in 4 MiB pieces), then a
 * 32 MiB request that fits none of them; everything freed. The peak allocated is 64 MiB
 * every step, so from the second step on the request grows past the budget and reclaims.
 * complete_after: the GPU finishes the step's work only after the step (hidden), else at
 * once (events=immediate: exposed). */
static void relocating_step(vl_device *d, vl_allocator *a, int complete_after)
{
    void *p[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        p[i] = vl_allocate(a, BLOCK, S(1));
        assert_non_null(p[i]);
    }
    for (int i = 0; i < BLOCKS; i += 2) vl_deallocate(a, p[i], BLOCK, S(1));
    void *big = vl_allocate(a, BLOCKS / 2 * BLOCK, S(1));
    assert_non_null(big);
    vl_deallocate(a, big, BLOCKS / 2 * BLOCK, S(1));
    for (int i = 1; i < BLOCKS; i += 2) vl_deallocate(a, p[i], BLOCK, S(1));
    if (complete_after) vl_sim_complete_all(d);
    assert_consistent(a);
}

typedef struct run {
    vl_budget_info info;
    double waste; /* peak reserved / peak allocated */
} run;

static run steps(const char *device, const char *alloc, int complete_after)
{
    vl_device *d = sim_open(device);
    vl_allocator *a = caching_open(d, alloc);
    for (int i = 0; i < 8; i++) relocating_step(d, a, complete_after);
    run r;
    assert_int_equal(vl_caching_budget_info(a, &r.info), 0);
    vl_alloc_stats st = stats_of(a);
    r.waste = (double)st.peak_reserved_bytes / (double)st.peak_allocated_bytes;
    close_all_returned(d, a);
    return r;
}

#define TIGHT "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.25"

static void test_exposed_relocation_raises_the_budget_either_way(void **state)
{
    (void)state;
    for (int idle = 0; idle < 2; idle++) {
        run r = steps("sim:capacity=1GiB", idle ? TIGHT ",raise=idle" : TIGHT, 0);
        assert_true(r.info.relocation_maps_exposed > 10);
        assert_int_equal(r.info.relocation_maps_hidden, 0);
        assert_true(r.info.budget > 0.008);
    }
}

static void test_hidden_relocation_keeps_the_budget_only_with_raise_idle(void **state)
{
    (void)state;
    run any = steps("sim:capacity=1GiB,events=manual", TIGHT, 1);
    run idle = steps("sim:capacity=1GiB,events=manual", TIGHT ",raise=idle", 1);
    /* The same relocation, seen as hidden by both... */
    assert_true(any.info.relocation_maps_hidden > 10);
    assert_true(idle.info.relocation_maps_hidden > 10);
    assert_int_equal(idle.info.relocation_maps_exposed, 0);
    /* ...raises the budget only with raise=any, */
    assert_true(any.info.budget > 0.008);
    assert_true(idle.info.budget == 0.008);
    /* and the tight budget keeps the waste within it (plus chunk rounding: 2 MiB of 64). */
    assert_true(idle.waste <= 1.008 + 2.0 / 64);
    assert_true(idle.waste < any.waste);
}

static void test_raise_takes_only_its_two_words(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB");
    int status = 0;
    char err[256] = "";
    vl_allocator *a = vl_alloc_open("caching:segments=expandable,raise=sometimes", d, &status, err, sizeof err);
    assert_null(a);
    assert_non_null(strstr(err, "raise"));
    vl_device_close(d);
}

VL_TEST_MAIN(cmocka_unit_test(test_exposed_relocation_raises_the_budget_either_way),
             cmocka_unit_test(test_hidden_relocation_keeps_the_budget_only_with_raise_idle),
             cmocka_unit_test(test_raise_takes_only_its_two_words))
