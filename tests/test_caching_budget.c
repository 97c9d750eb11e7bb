/* The expandable reclaim budget (lib/caching/budget.c) on the simulated device: a
 * program whose free memory never fits its next request relocates every step (unmaps
 * free chunks in one place to map as many in another). The adaptive budget rises until
 * it stops doing so, paying in waste; a fixed one keeps relocating and the waste low.
 * Each relocating map call is counted hidden (the work queued before the reclaim was
 * still running after it: events=manual, the test says when work completes) or exposed.
 * The raise's trigger is pinned at its boundary: more than raise_maps, not as many. */
#include "test_caching_helpers.h"

#include "caching/allocator.h"
#include "caching/hostmem.h"

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

#define ADAPTIVE "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.25"
#define FIXED "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.008"

static void test_relocating_every_step_raises_the_budget_and_the_waste(void **state)
{
    (void)state;
    run adaptive = steps("sim:capacity=1GiB", ADAPTIVE, 0);
    run fixed = steps("sim:capacity=1GiB", FIXED, 0);
    /* The relocation is there under both; the adaptive budget rose until it stopped... */
    assert_true(adaptive.info.relocation_maps_exposed > 10);
    assert_true(fixed.info.relocation_maps_exposed > adaptive.info.relocation_maps_exposed);
    assert_true(adaptive.info.budget > 0.008);
    assert_true(adaptive.info.budget <= 0.25);
    /* ...and paid in waste, where the fixed one keeps within its budget (plus chunk
     * rounding: 2 MiB of 64). */
    assert_true(fixed.info.budget == 0.008);
    assert_true(fixed.waste <= 1.008 + 2.0 / 64);
    assert_true(fixed.waste < adaptive.waste);
}

/* raise_maps: the relocating map calls a window may hold before the budget doubles. The
 * program relocates 16 chunks a step (span=0), 112 in its 8 steps, all in one window. */
static void test_raise_maps_sets_how_much_relocation_raises_the_budget(void **state)
{
    (void)state;
    run patient = steps("sim:capacity=1GiB", ADAPTIVE ",raise_maps=200", 0);
    run eager = steps("sim:capacity=1GiB", ADAPTIVE ",raise_maps=20", 0);
    run dflt = steps("sim:capacity=1GiB", ADAPTIVE, 0); /* raise_maps=10 */
    /* Under the threshold the budget stays where it started, relocating as a fixed one does. */
    assert_true(patient.info.budget == 0.008);
    assert_true(patient.waste <= 1.008 + 2.0 / 64);
    /* Over it the budget rises, sooner and so higher the lower the threshold, and the
     * relocation stops sooner. */
    assert_true(eager.info.budget > 0.008);
    assert_true(dflt.info.budget > eager.info.budget);
    assert_true(dflt.waste > eager.waste && eager.waste > patient.waste);
    assert_true(patient.info.relocation_maps_exposed >= eager.info.relocation_maps_exposed);
    assert_true(eager.info.relocation_maps_exposed > dflt.info.relocation_maps_exposed);
}

/* The trigger's boundary (budget.c): the budget doubles once the relocating map calls
 * of one window are MORE than raise_maps; a window of exactly raise_maps leaves it. On
 * the budget's own state, so each map call counts where the test says. */
static void test_budget_doubles_past_raise_maps_not_at_it(void **state)
{
    (void)state;
    vl_caching *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->cfg.reclaim = 0.008;
    c->cfg.reclaim_max = 0.25;
    c->cfg.raise_maps = 10;
    vl_budget_init(c);
    for (int i = 0; i < 10; i++) vl_budget_relocated(c, 1);
    assert_true(c->budget == 0.008);
    vl_budget_relocated(c, 1); /* the 11th */
    assert_true(c->budget == 0.016);
    /* A raise starts a new window: N more maps, in one grow, again leave it; N + 1 double it. */
    vl_budget_relocated(c, 10);
    assert_true(c->budget == 0.016);
    vl_budget_relocated(c, 1);
    assert_true(c->budget == 0.032);
    free(c);
}

/* The same boundary through the allocator: the program's relocating maps all fall in one
 * window (its peak is reached in the first step, 8 steps are 136 allocations), so
 * raise_maps equal to their count keeps the budget and one less raises it. */
static void test_raise_maps_equal_to_the_relocation_keeps_the_budget(void **state)
{
    (void)state;
    run patient = steps("sim:capacity=1GiB", ADAPTIVE ",raise_maps=200", 0);
    int64_t maps = patient.info.relocation_maps_exposed;
    assert_true(maps > 1 && maps < 1024);
    char spec[160];
    snprintf(spec, sizeof spec, "%s,raise_maps=%lld", ADAPTIVE, (long long)maps);
    run at = steps("sim:capacity=1GiB", spec, 0);
    assert_true(at.info.budget == 0.008);
    assert_int_equal(at.info.relocation_maps_exposed, maps);
    snprintf(spec, sizeof spec, "%s,raise_maps=%lld", ADAPTIVE, (long long)maps - 1);
    run past = steps("sim:capacity=1GiB", spec, 0);
    assert_true(past.info.budget > 0.008);
}

static void test_relocation_is_counted_hidden_only_behind_queued_work(void **state)
{
    (void)state;
    /* events=immediate: the reclaim's batch is complete before the maps (exposed). */
    run idle = steps("sim:capacity=1GiB", FIXED, 0);
    assert_int_equal(idle.info.relocation_maps_hidden, 0);
    /* events=manual, the step's work completing only after the step: every map of the
     * relocation ran while the work queued before the reclaim was still running. */
    run busy = steps("sim:capacity=1GiB,events=manual", FIXED, 1);
    assert_true(busy.info.relocation_maps_hidden > 10);
    assert_int_equal(busy.info.relocation_maps_exposed, 0);
    /* The same relocation either way: only its classification differs. */
    assert_int_equal(busy.info.relocation_maps_hidden, idle.info.relocation_maps_exposed);
    /* Its host time: all exposed where the batch was complete, none where it ran on. */
    assert_true(idle.info.relocation_map_ns > 0);
    assert_true(idle.info.relocation_exposed_ns == idle.info.relocation_map_ns);
    assert_true(busy.info.relocation_map_ns > 0);
    assert_int_equal(busy.info.relocation_exposed_ns, 0);
    /* The retired chunks were unmapped once their batches completed, in both. */
    assert_true(idle.info.relocation_unmap_ns > 0);
    assert_true(busy.info.relocation_unmap_ns > 0);
}

/* A relocating grow that runs into device memory pressure: stream 2 caches 16 MiB, stream
 * 1 fills the rest of an 80 MiB device and frees every other block; then a 40 MiB request
 * on stream 1: its reclaim retires and lends its own 32 MiB, the other 8 MiB the device
 * does not have, so the pressure path takes stream 2's chunks (after waiting for the
 * device) and places the request again. */
static void fill_for_pressure(vl_allocator *a, void *p[BLOCKS])
{
    void *cached = vl_allocate(a, 16 * MiB, S(2));
    assert_non_null(cached);
    vl_deallocate(a, cached, 16 * MiB, S(2));
    for (int i = 0; i < BLOCKS; i++) {
        p[i] = vl_allocate(a, BLOCK, S(1));
        assert_non_null(p[i]);
    }
    for (int i = 0; i < BLOCKS; i += 2) vl_deallocate(a, p[i], BLOCK, S(1));
}

static void empty_after_pressure(vl_device *d, vl_allocator *a, void *big, void *p[BLOCKS])
{
    if (big) vl_deallocate(a, big, 40 * MiB, S(1));
    for (int i = 1; i < BLOCKS; i += 2) vl_deallocate(a, p[i], BLOCK, S(1));
    close_all_returned(d, a);
}

/* The request above with the nth host allocation failing, for every n it makes: whatever
 * fails, the allocator keeps its invariants (among them: no watch of a batch outlives
 * the grow's maps; the pressure path drains and frees that batch), and gives everything
 * back. */
static void test_relocation_under_pressure_survives_host_failures(void **state)
{
    (void)state;
    const char *spec = "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.008";
    void *p[BLOCKS];
    /* Without faults: the request is served, through the pressure path. */
    vl_device *d = sim_open("sim:capacity=80MiB,events=manual");
    vl_allocator *a = caching_open(d, spec);
    fill_for_pressure(a, p);
    uint64_t before = vl_host_allocations(), syncs = vl_sim_calls(d, VL_SIM_SYNCHRONIZE);
    void *big = vl_allocate(a, 40 * MiB, S(1));
    uint64_t calls = vl_host_allocations() - before;
    assert_non_null(big);
    assert_true(vl_sim_calls(d, VL_SIM_SYNCHRONIZE) > syncs); /* it waited: the pressure path */
    assert_true(calls > 0);
    assert_consistent(a);
    empty_after_pressure(d, a, big, p);
    for (uint64_t n = 1; n <= calls; n++) {
        d = sim_open("sim:capacity=80MiB,events=manual");
        a = caching_open(d, spec);
        fill_for_pressure(a, p);
        vl_host_fail_nth(n);
        big = vl_allocate(a, 40 * MiB, S(1));
        vl_host_fail_nth(0);
        assert_consistent(a);
        empty_after_pressure(d, a, big, p);
    }
}

VL_TEST_MAIN(cmocka_unit_test(test_relocating_every_step_raises_the_budget_and_the_waste),
             cmocka_unit_test(test_raise_maps_sets_how_much_relocation_raises_the_budget),
             cmocka_unit_test(test_budget_doubles_past_raise_maps_not_at_it),
             cmocka_unit_test(test_raise_maps_equal_to_the_relocation_keeps_the_budget),
             cmocka_unit_test(test_relocation_is_counted_hidden_only_behind_queued_work),
             cmocka_unit_test(test_relocation_under_pressure_survives_host_failures))
