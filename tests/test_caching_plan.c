/* plan=1 (lib/caching/plan.h) on the simulated device: a training loop that repeats
 * exactly is planned and then served without a map call, within 2% of its peak; every
 * way a program can stop repeating (a size, a late free, another stream's use) ends the
 * plan without two live blocks ever sharing a byte; a program that never repeats is never
 * planned. Every step runs the invariant check, and every live block is checked against
 * every other for overlap. */
#include "test_caching_helpers.h"

#include "caching/plan.h"
#include "caching/hostmem.h"
#include "rng.h"
#include "support/test_main.h"

#define PLAN_SPEC "caching:segments=expandable,span=0,reclaim_max=0.008,plan=1"
#define MAX_LIVE 256
#define WARM 160 /* steps of 20 events: the first look for a period comes after 2,048 events */

/* The blocks a program holds, to check that no two of them overlap and that the device
 * maps them. */
typedef struct program {
    vl_device *d;
    vl_allocator *a;
    char *ptr[MAX_LIVE];
    size_t size[MAX_LIVE];
    /* the loop's own blocks */
    char *persistent[4];
    char *loss, *grads[4];
    vl_stream s; /* the stream the loop runs on */
} program;

static char *take(program *p, size_t size, vl_stream s)
{
    char *x = vl_allocate(p->a, size, s);
    assert_non_null(x);
    assert_true(vl_sim_is_mapped(p->d, x) && vl_sim_is_mapped(p->d, x + size - 1));
    assert_true(vl_caching_block_size(p->a, x) >= size);
    int slot = -1;
    for (int i = 0; i < MAX_LIVE; i++) {
        if (!p->ptr[i]) {
            if (slot < 0) slot = i;
            continue;
        }
        if (x < p->ptr[i] + p->size[i] && p->ptr[i] < x + size)
            fail_msg("%zu bytes at %p overlap %zu live bytes at %p", size, (void *)x, p->size[i], (void *)p->ptr[i]);
    }
    assert_true(slot >= 0);
    p->ptr[slot] = x;
    p->size[slot] = size;
    return x;
}

static void give(program *p, char *x)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (p->ptr[i] == x) {
            vl_deallocate(p->a, x, p->size[i], S(1));
            p->ptr[i] = NULL;
            return;
        }
    fail_msg("freeing %p, which the program does not hold", (void *)x);
}

static program start(const char *spec)
{
    program p = {.d = sim_open("sim:capacity=4GiB"), .s = S(1)};
    p.a = caching_open(p.d, spec);
    for (int i = 0; i < 4; i++) p.persistent[i] = take(&p, 8 * MiB, S(1)); /* parameters, optimizer state */
    return p;
}

/* One training step, as PyTorch makes it: zero_grad(set_to_none=True) frees the last
 * step's gradients, the new loss is made before the last one is dropped (a block that
 * outlives the period), then activations, a large temporary and the gradients. `act2`
 * is the second activation's size (a shape change when it differs). */
static void step(program *p, size_t act2)
{
    for (int g = 0; g < 4; g++)
        if (p->grads[g]) give(p, p->grads[g]);
    char *a1 = take(p, 16 * MiB, p->s);
    char *a2 = take(p, act2, p->s);
    char *loss = take(p, 64 * KiB, p->s);
    if (p->loss) give(p, p->loss);
    p->loss = loss;
    char *a3 = take(p, 6 * MiB + 512, p->s);
    char *big = take(p, 40 * MiB, p->s);
    give(p, a3);
    for (int g = 0; g < 4; g++) p->grads[g] = take(p, 2 * MiB + 4096 * (size_t)g, p->s);
    give(p, big);
    give(p, a2);
    give(p, a1);
    assert_consistent(p->a);
}

static void finish(program *p)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (p->ptr[i]) give(p, p->ptr[i]);
    close_all_returned(p->d, p->a);
}

static vl_plan_info plan_of(vl_allocator *a)
{
    vl_plan_info info;
    assert_int_equal(vl_caching_plan_info(a, &info), 0);
    return info;
}

/* The loop under PLAN_SPEC, run until its plan serves it. */
static program planned(void)
{
    program p = start(PLAN_SPEC);
    for (int i = 0; i < WARM; i++) step(&p, 24 * MiB);
    assert_string_equal(plan_of(p.a).state, "active");
    return p;
}

static void test_repeating_loop_is_served_without_map_calls(void **state)
{
    (void)state;
    program p = start(PLAN_SPEC);
    for (int i = 0; i < WARM; i++) step(&p, 24 * MiB);
    vl_plan_info info = plan_of(p.a);
    assert_string_equal(info.state, "active");
    assert_int_equal(info.activations, 1);
    assert_true(info.served > 0);
    int64_t maps = stats_of(p.a).device_allocs, unmaps = stats_of(p.a).device_frees;
    vl_alloc_reset_peaks(p.a); /* the steady state: the warm-up's peak is the SPEC's (1.049 here, 2 MiB chunks at 120 MiB) */
    for (int i = 0; i < 40; i++) step(&p, 24 * MiB);
    vl_alloc_stats st = stats_of(p.a);
    assert_int_equal(st.device_allocs, maps); /* planned: no map call ... */
    assert_int_equal(st.device_frees, unmaps); /* ... and no unmap */
    assert_int_equal(plan_of(p.a).served, info.served + 40 * 9); /* 9 requests a step */
    /* reserved: the parameters and the arena, which the layout makes as large as the
     * step's peak (its blocks' sizes allow it here), in 2 MiB chunks */
    assert_true((double)st.peak_reserved_bytes <= 1.02 * (double)st.peak_allocated_bytes);
    assert_true(info.arena_bytes <= info.peak_bytes + 64 * KiB);
    finish(&p);
}

static void test_a_size_that_differs_ends_the_plan(void **state)
{
    (void)state;
    program p = planned();
    step(&p, 30 * MiB); /* a new shape */
    vl_plan_info info = plan_of(p.a);
    assert_int_equal(info.ends, 1);
    assert_non_null(strstr(info.last_end, "asked for"));
    for (int i = 0; i < 2 * WARM; i++) step(&p, 30 * MiB); /* the new shape repeats: planned again */
    info = plan_of(p.a);
    assert_string_equal(info.state, "active");
    assert_int_equal(info.activations, 2);
    finish(&p);
}

static void test_a_late_free_ends_the_plan_without_overlap(void **state)
{
    (void)state;
    program p = planned();
    /* One step as step() makes it, but a1 is kept past its planned free: the next step's
     * a1 is planned on those bytes and must not get them (take() fails the test on any
     * overlap). */
    for (int g = 0; g < 4; g++) give(&p, p.grads[g]);
    char *held = take(&p, 16 * MiB, S(1));
    char *a2 = take(&p, 24 * MiB, S(1));
    char *loss = take(&p, 64 * KiB, S(1));
    give(&p, p.loss);
    p.loss = loss;
    char *a3 = take(&p, 6 * MiB + 512, S(1));
    char *big = take(&p, 40 * MiB, S(1));
    give(&p, a3);
    for (int g = 0; g < 4; g++) p.grads[g] = take(&p, 2 * MiB + 4096 * (size_t)g, S(1));
    give(&p, big);
    give(&p, a2);
    step(&p, 24 * MiB); /* its a1 is planned where `held` lives */
    vl_plan_info info = plan_of(p.a);
    assert_int_equal(info.ends, 1);
    assert_non_null(strstr(info.last_end, "still taken"));
    give(&p, held);
    for (int i = 0; i < 5; i++) step(&p, 24 * MiB);
    finish(&p);
}

static void test_another_streams_use_ends_the_plan(void **state)
{
    (void)state;
    program p = planned();
    assert_int_equal(vl_record_use(p.a, p.loss, S(1)), VL_OK); /* its own stream: nothing to do */
    assert_string_equal(plan_of(p.a).state, "active");
    assert_int_equal(vl_record_use(p.a, p.loss, S(2)), VL_OK);
    vl_plan_info info = plan_of(p.a);
    assert_string_equal(info.state, "draining");
    assert_non_null(strstr(info.last_end, "another stream"));
    for (int i = 0; i < 5; i++) step(&p, 24 * MiB);
    finish(&p);
}

static void test_trim_keeps_an_arena_in_use(void **state)
{
    (void)state;
    program p = planned();
    vl_trim(p.a); /* the loss and the gradients are planned blocks, live */
    assert_string_equal(plan_of(p.a).state, "active");
    assert_consistent(p.a);
    for (int i = 0; i < 5; i++) step(&p, 24 * MiB);
    assert_string_equal(plan_of(p.a).state, "active");
    finish(&p); /* everything freed: trim gives the arena back too (close_all_returned) */
}

static void test_unknown_pointer_in_the_arena_is_ignored(void **state)
{
    (void)state;
    program p = planned();
    vl_alloc_stats before = stats_of(p.a);
    vl_deallocate(p.a, p.loss + 512, 512, S(1)); /* inside a planned block, not its start */
    assert_int_equal(vl_caching_block_size(p.a, p.loss + 512), 0);
    vl_alloc_stats after = stats_of(p.a);
    assert_int_equal(after.frees, before.frees);
    assert_int_equal(after.allocated_bytes, before.allocated_bytes);
    assert_consistent(p.a);
    finish(&p);
}

static void test_random_program_is_never_planned(void **state)
{
    (void)state;
    program p = start(PLAN_SPEC);
    vl_rng rng;
    vl_rng_seed(&rng, 7);
    char *live[16] = {0};
    for (int i = 0; i < 20000; i++) {
        int k = (int)vl_rng_below(&rng, 16);
        if (live[k]) {
            give(&p, live[k]);
            live[k] = NULL;
        } else {
            live[k] = take(&p, 512 * (1 + vl_rng_below(&rng, 8192)), S(1));
        }
    }
    for (int k = 0; k < 16; k++)
        if (live[k]) give(&p, live[k]);
    assert_int_equal(plan_of(p.a).activations, 0);
    finish(&p);
}

/* Random programs that repeat: a period of k requests (512 B to 8 MiB), each block freed a
 * fixed number of requests after its own (1 to 2k: some outlive the period), repeated.
 * The plan must start (within a few hundred periods), serve without a map call, and
 * after a changed size end, let the allocator serve, and start again; take() checks every
 * request against every live block, and the invariants hold at every period. */
static void test_random_repeating_programs(void **state)
{
    (void)state;
    vl_rng rng;
    vl_rng_seed(&rng, 2024);
    for (int seed = 0; seed < 12; seed++) {
        enum { K_MAX = 40, PERIODS = 400 };
        size_t k = 4 + vl_rng_below(&rng, K_MAX - 3), size[K_MAX], life[K_MAX];
        for (size_t j = 0; j < k; j++) {
            size[j] = 512 * (1 + vl_rng_log_uniform(&rng, 1, 16384));
            life[j] = 1 + vl_rng_below(&rng, 2 * k);
        }
        program p = start(PLAN_SPEC);
        char *block[PERIODS * K_MAX / 8] = {0}; /* a ring of the latest requests */
        const size_t ring = sizeof block / sizeof block[0];
        int64_t maps_planned = -1;
        for (size_t t = 0; t < PERIODS * k; t++) {
            size_t j = t % k, changed = t >= (PERIODS / 2) * k && t < (PERIODS / 2 + 1) * k && j == 0;
            block[t % ring] = take(&p, changed ? size[j] + 4096 : size[j], S(1));
            for (size_t back = 1; back <= 2 * k && back <= t; back++) /* blocks whose life ends now */
                if (life[(t - back) % k] == back) {
                    give(&p, block[(t - back) % ring]);
                    block[(t - back) % ring] = NULL;
                }
            if (j != k - 1) continue;
            assert_consistent(p.a);
            vl_plan_info info = plan_of(p.a);
            if (t / k == PERIODS / 2 - 2) { /* just before the change: planned, quiet */
                if (strcmp(info.state, "active") != 0) fail_msg("seed %d (k %zu): no plan after %zu periods: %s",
                                                                seed, k, t / k, info.last_end);
                maps_planned = stats_of(p.a).device_allocs;
            }
            if (t / k == PERIODS / 2 - 1) assert_int_equal(stats_of(p.a).device_allocs, maps_planned);
            if (t / k == PERIODS / 2) assert_true(info.ends >= 1);
        }
        vl_plan_info info = plan_of(p.a);
        if (strcmp(info.state, "active") != 0 || info.activations < 2)
            fail_msg("seed %d (k %zu): no second plan after the change: %s", seed, k, info.last_end);
        for (size_t i = 0; i < ring; i++)
            if (block[i]) give(&p, block[i]);
        p.loss = NULL;
        finish(&p);
    }
}

static void test_the_plan_follows_the_stream_that_allocates(void **state)
{
    (void)state;
    /* The parameters come from stream 1, the loop runs on stream 2 (a side stream): the
     * plan leaves stream 1 for stream 2 and plans it. */
    program p = start(PLAN_SPEC);
    p.s = S(2);
    for (int i = 0; i < 2 * WARM; i++) step(&p, 24 * MiB);
    vl_plan_info info = plan_of(p.a);
    assert_string_equal(info.state, "active");
    int64_t maps = stats_of(p.a).device_allocs;
    for (int i = 0; i < 20; i++) step(&p, 24 * MiB);
    assert_int_equal(stats_of(p.a).device_allocs, maps);
    finish(&p);
}

static void test_close_releases_the_arena_with_blocks_live(void **state)
{
    (void)state;
    /* A program that exits without freeing: close gives the arena back with everything
     * else (the arena is no segment of the allocator's). */
    program p = planned();
    assert_true(plan_of(p.a).served > 0);
    assert_true(vl_sim_used_bytes(p.d) > 0);
    vl_alloc_close(p.a);
    assert_int_equal(vl_sim_used_bytes(p.d), 0);
    vl_device_close(p.d);
}

static void test_out_of_host_memory_at_open_is_an_error(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB");
    int failed = 0;
    for (uint64_t n = 1; n <= 12; n++) {
        int status = 0;
        char err[256] = "";
        vl_host_fail_nth(n);
        vl_allocator *a = vl_alloc_open(PLAN_SPEC, d, &status, err, sizeof err);
        vl_host_fail_nth(0);
        if (a) {
            vl_alloc_close(a);
            continue;
        }
        assert_non_null(strstr(err, "host memory"));
        failed++;
    }
    assert_true(failed >= 4); /* the allocator's records, and the plan's log (3 arrays + itself) */
    vl_device_close(d);
}

VL_TEST_MAIN(cmocka_unit_test(test_repeating_loop_is_served_without_map_calls),
             cmocka_unit_test(test_a_size_that_differs_ends_the_plan),
             cmocka_unit_test(test_a_late_free_ends_the_plan_without_overlap),
             cmocka_unit_test(test_another_streams_use_ends_the_plan),
             cmocka_unit_test(test_trim_keeps_an_arena_in_use),
             cmocka_unit_test(test_unknown_pointer_in_the_arena_is_ignored),
             cmocka_unit_test(test_random_program_is_never_planned),
             cmocka_unit_test(test_random_repeating_programs),
             cmocka_unit_test(test_the_plan_follows_the_stream_that_allocates),
             cmocka_unit_test(test_close_releases_the_arena_with_blocks_live),
             cmocka_unit_test(test_out_of_host_memory_at_open_is_an_error))
