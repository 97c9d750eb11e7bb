/* The expandable reclaim budget (lib/caching/budget.c) on the simulated device: a
 * program whose free memory never fits its next request relocates every step (unmaps
 * free chunks in one place to map as many in another). The adaptive budget rises until
 * it stops doing so, paying in waste; a fixed one keeps relocating and the waste low.
 * Each relocating map call is counted hidden (the work queued before the reclaim was
 * still running after it: events=manual, the test says when work completes) or exposed.
 * The raise's trigger is pinned at its boundary: more than raise_maps, not as many. The
 * fall back is pinned too: after 32 quiet windows, one doubling at a time, down to
 * reclaim; never while relocation bursts go on; after a fall, only sustained relocation
 * raises it again, and each fall that this undoes doubles the wait for the next. */
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

#define ADAPTIVE "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.25,lend=1,top=fit"
#define FIXED "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.008,lend=1,top=fit"

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

/* Through the allocator: the relocating program raises the budget; then a quiet one
 * (cache hits only) for 40 windows brings it back one doubling (after 32 windows); and
 * the same relocating step relocates again: the lower cap binds. With decay=0 the
 * budget stays raised. */
static void test_budget_falls_back_once_the_relocation_stops(void **state)
{
    (void)state;
    for (int decay = 1; decay >= 0; decay--) {
        vl_device *d = sim_open("sim:capacity=1GiB");
        vl_allocator *a = caching_open(d, decay ? ADAPTIVE ",decay=1" : ADAPTIVE);
        for (int i = 0; i < 8; i++) relocating_step(d, a, 0);
        vl_budget_info raised, fell;
        assert_int_equal(vl_caching_budget_info(a, &raised), 0);
        assert_true(raised.budget > 0.008);
        for (int i = 0; i < 40 * 1024; i++) {
            void *p = vl_allocate(a, BLOCK, S(1));
            assert_non_null(p);
            vl_deallocate(a, p, BLOCK, S(1));
        }
        assert_int_equal(vl_caching_budget_info(a, &fell), 0);
        assert_consistent(a);
        if (!decay) {
            assert_true(fell.budget == raised.budget);
            assert_int_equal(fell.decays, 0);
        } else {
            assert_true(fell.budget < raised.budget && fell.budget >= raised.budget / 2);
            assert_int_equal(fell.decays, 1);
            relocating_step(d, a, 0);
            vl_budget_info again;
            assert_int_equal(vl_caching_budget_info(a, &again), 0);
            assert_true(again.relocation_maps_exposed > fell.relocation_maps_exposed);
        }
        close_all_returned(d, a);
    }
}


/* The budget's own state, driven as the allocator drives it (budget.h): the default
 * configuration (decay as given), the allocation count, a steady peak. */
typedef struct budget_run {
    vl_cbudget b;
    vl_caching_config cfg;
    int64_t allocs;
} budget_run;

static void budget_start(budget_run *r, int decay)
{
    *r = (budget_run){.cfg = {.reclaim = 0.008, .reclaim_max = 0.25, .raise_maps = 10, .decay = decay}};
    vl_budget_init(&r->b, &r->cfg, r->allocs, 0);
}

/* A relocating grow made `maps` map calls. */
static void relocated(budget_run *r, int64_t maps) { vl_budget_relocated(&r->b, &r->cfg, r->allocs, 0, maps); }

/* n allocations that relocate nothing, each told to the budget as core.c does. */
static void quiet_allocations(budget_run *r, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        r->allocs++;
        if (vl_budget_decay_due(&r->b, r->allocs)) vl_budget_decay(&r->b, &r->cfg, r->allocs, 0);
    }
}

/* One window of 1,024 allocations whose relocating grows make `maps` map calls, in
 * one burst at the window's start. */
static void window_relocating(budget_run *r, int64_t maps)
{
    quiet_allocations(r, 1);
    relocated(r, maps);
    quiet_allocations(r, 1023);
}

#define WINDOW 1024
#define QUIET 32 /* windows */

static void assert_budget_ok(const budget_run *r)
{
    char err[256] = "";
    if (vl_budget_check(&r->b, &r->cfg, r->allocs, err, sizeof err) != 0) fail_msg("%s", err);
}

/* The trigger's boundary (budget.c): the budget doubles once the relocating map calls
 * of one window are MORE than raise_maps; a window of exactly raise_maps leaves it. On
 * the budget's own state, so each map call counts where the test says. */
static void test_budget_doubles_past_raise_maps_not_at_it(void **state)
{
    (void)state;
    budget_run r;
    budget_start(&r, 0);
    for (int i = 0; i < 10; i++) relocated(&r, 1);
    assert_true(r.b.value == 0.008);
    relocated(&r, 1); /* the 11th */
    assert_true(r.b.value == 0.016);
    /* A raise starts a new window: N more maps, in one grow, again leave it; N + 1 double it. */
    relocated(&r, 10);
    assert_true(r.b.value == 0.016);
    relocated(&r, 1);
    assert_true(r.b.value == 0.032);
}

/* Fails if the budget never comes down: raised twice, it falls one doubling after each
 * 32 quiet windows (not one allocation sooner), to reclaim and no further. */
static void test_budget_falls_back_one_doubling_per_quiet_stretch(void **state)
{
    (void)state;
    budget_run r;
    budget_start(&r, 1);
    relocated(&r, 11);
    relocated(&r, 11); /* a second burst in the raise's fresh window */
    assert_true(r.b.value == 0.032);
    quiet_allocations(&r, QUIET * WINDOW - 1);
    assert_true(r.b.value == 0.032);
    quiet_allocations(&r, 1);
    assert_true(r.b.value == 0.016);
    quiet_allocations(&r, QUIET * WINDOW - 1);
    assert_true(r.b.value == 0.016);
    quiet_allocations(&r, 1);
    assert_true(r.b.value == 0.008);
    quiet_allocations(&r, 10 * QUIET * WINDOW);
    assert_true(r.b.value == 0.008);
    assert_int_equal(r.b.decays, 2);
    assert_budget_ok(&r);
    /* decay=0: the old rule, the budget stays where the raises left it. */
    budget_start(&r, 0);
    relocated(&r, 11);
    quiet_allocations(&r, 10 * QUIET * WINDOW);
    assert_true(r.b.value == 0.016);
    assert_int_equal(r.b.decays, 0);
    assert_budget_ok(&r);
}

/* Fails if it comes down while the need persists: a burst every few windows (as a
 * workload that relocates once a step) keeps the raised level however long it lasts. */
static void test_budget_holds_while_bursts_go_on(void **state)
{
    (void)state;
    budget_run r;
    budget_start(&r, 1);
    relocated(&r, 11);
    relocated(&r, 11);
    assert_true(r.b.value == 0.032);
    for (int w = 0; w < 20 * QUIET; w++) {
        window_relocating(&r, w % (QUIET / 2) == 0 ? 11 : 0); /* a burst every 16 windows */
        assert_true(r.b.value >= 0.032);
    }
    assert_int_equal(r.b.decays, 0);
    assert_budget_ok(&r);
}

/* After a fall, the burst that the lower budget's first reclaims make is expected (it
 * relocates what the higher one kept): it holds the level, it does not raise it. Only
 * relocation sustained above raise_maps per window does, and then the next fall waits
 * twice as long (no oscillation each window: the falls a persisting need undoes are
 * ever rarer). */
static void test_after_a_fall_only_sustained_relocation_raises(void **state)
{
    (void)state;
    budget_run r;
    budget_start(&r, 1);
    relocated(&r, 11);
    quiet_allocations(&r, QUIET * WINDOW);
    assert_true(r.b.value == 0.008 && r.b.probation);
    /* Bursts well above raise_maps, but not sustained: the level holds, and no further
     * fall while they go on (it is at reclaim here anyway). */
    for (int w = 0; w < 4 * QUIET; w++) window_relocating(&r, w % 4 == 0 ? 30 : 0);
    assert_true(r.b.value == 0.008);
    /* 20 a window: 10 above the drain, the bucket overflows QUIET x raise_maps after
     * 32 windows. */
    int w = 0;
    while (r.b.value == 0.008 && w < 4 * QUIET) {
        window_relocating(&r, 20);
        w++;
    }
    assert_true(r.b.value == 0.016);
    assert_true(w >= QUIET - 1 && w <= QUIET + 1);
    assert_int_equal(r.b.quiet_windows, 2 * QUIET);
    /* The next fall waits 64 quiet windows. */
    quiet_allocations(&r, 2 * QUIET * WINDOW - 2 * WINDOW);
    assert_true(r.b.value == 0.016);
    quiet_allocations(&r, 2 * WINDOW);
    assert_true(r.b.value == 0.008);
    assert_budget_ok(&r);
}

/* The same need, persisting for a long time (relocation at 20 maps a window whenever
 * the budget is at its lowest, none once raised): the falls it undoes are logarithmic
 * in its length, and the budget spends most windows at the level the need asks for. */
static void test_a_persisting_need_costs_logarithmically_many_falls(void **state)
{
    (void)state;
    budget_run r;
    budget_start(&r, 1);
    relocated(&r, 11);
    int windows = 4096, low = 0;
    for (int w = 0; w < windows; w++) {
        int at_reclaim = r.b.value == 0.008;
        low += at_reclaim;
        window_relocating(&r, at_reclaim ? 20 : 0);
    }
    /* Falls after 32, 64, ..., 1024, 1024 quiet windows, each undone about 33 windows
     * later: 7 in 4096 windows, where one after every 32 quiet windows would be 63. */
    assert_true(r.b.decays >= 5 && r.b.decays <= 7);
    assert_true(r.b.raises == r.b.decays + 1 || r.b.raises == r.b.decays);
    assert_true(low <= (QUIET + 1) * (int)r.b.decays); /* each fall lasts until the bucket overflows */
    assert_budget_ok(&r);
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
    const char *spec = "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.008,lend=1,top=fit";
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
             cmocka_unit_test(test_budget_falls_back_once_the_relocation_stops),
             cmocka_unit_test(test_budget_falls_back_one_doubling_per_quiet_stretch),
             cmocka_unit_test(test_budget_holds_while_bursts_go_on),
             cmocka_unit_test(test_after_a_fall_only_sustained_relocation_raises),
             cmocka_unit_test(test_a_persisting_need_costs_logarithmically_many_falls),
             cmocka_unit_test(test_relocation_is_counted_hidden_only_behind_queued_work),
             cmocka_unit_test(test_relocation_under_pressure_survives_host_failures))
