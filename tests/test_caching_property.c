/* Property tests of the caching allocator on the simulated device.
 *
 * Random alloc / free / record_use / event completion / trim / stream switches, checking
 * after EVERY step: pointers 512-aligned, no two live blocks overlap, the statistics
 * equal the sums over the live blocks, reserved >= active >= allocated, the device holds
 * exactly what the allocator says it reserved (nothing lost), and (every
 * VL_PROPTEST_CHECK_EVERY steps, default 1) every internal invariant. At the end
 * everything is freed and trimmed: reserved and the device's usage return to 0.
 * A shadow allocator of the same SPEC with park=0, on a device of its own, runs the
 * same operations in lockstep (for every config that leaves park= at its default):
 * parking (lib/caching/park.h) must change no decision, so every address, OOM,
 * record_use result, trim and reserved byte count must match.
 *
 *   VL_PROPTEST_OPS          total operations over all configurations (default 200000;
 *                            `make proptest` runs 10 million per seed)
 *   VL_PROPTEST_SEED         first seed (default 1)
 *   VL_PROPTEST_CHECK_EVERY  steps between full invariant checks (default 1)
 *
 * Then a multi-threaded test: threads allocate and free concurrently on their own and
 * on shared streams; no address is ever handed out twice while live, nothing is lost. */
#include "test_caching_helpers.h"

#include <pthread.h>

#include "addrmap.h"
#include "rng.h"
#include "support/env.h"
#include "support/live_ranges.h"
#include "support/test_main.h"

typedef struct config {
    const char *device;
    const char *alloc;
    int drains; /* now and then every event completes and every block is freed: idle streams */
} config;

static const config configs[] = {
    {"sim:capacity=1GiB,events=manual", "caching"},
    /* the default: PyTorch's policy (no unmapping in steady state, pools apart, best fit
     * passing over a block that borders unmapped space) */
    {"sim:capacity=1GiB,events=manual", "caching:segments=expandable"},
    /* the budget that rises when reclaim churns (budget.c), pools lending each other */
    {"sim:capacity=1GiB,events=manual", "caching:segments=expandable,reclaim=0.008,lend=1,top=fit"},
    /* top=last under reclaim: holes open next to parked blocks between requests */
    {"sim:capacity=1GiB,events=manual", "caching:segments=expandable,reclaim=0.008"},
    /* a fixed reclaim budget: reclaim churns at every step of a tight loop */
    {"sim:capacity=1GiB,events=manual", "caching:segments=expandable,reclaim=0.008,reclaim_max=0.008,lend=1,top=fit"},
    {"sim:capacity=512MiB,granularity=64KiB,events=manual", "caching:segments=expandable,chunk=1MiB,roundup_div=4,reclaim=0.008"},
    {"sim:capacity=1GiB,events=manual,overhead=100MiB", "caching:max_split=8MiB,gc=0.6,roundup_div=2"},
    {"sim:capacity=2GiB,granularity=4MiB,events=manual", "caching:segments=expandable,reclaim=-1,chunk=20MiB"},
    /* a device smaller than the largest requests: further ranges, reclaim under pressure */
    {"sim:capacity=192MiB,events=manual", "caching:segments=expandable,chunk=8MiB,reclaim=0.008,lend=1"},
    /* remainders always after the request (split=low, as PyTorch; the default is hole) */
    {"sim:capacity=1GiB,events=manual", "caching:segments=expandable,split=low,reclaim=0.008,top=fit"},
    /* growth mapped in spans of several chunks, unmapped only whole (spans.h) */
    {"sim:capacity=1GiB,events=manual", "caching:segments=expandable,span=16MiB,reclaim=0.008,lend=1,top=fit"},
    {"sim:capacity=512MiB,granularity=64KiB,events=manual", "caching:segments=expandable,chunk=1MiB,span=1GiB,reclaim=0.008"},
    /* most of the device held by others: spans measured against the reach, not the total */
    {"sim:capacity=4GiB,events=manual,overhead=3GiB", "caching:segments=expandable"},
    /* pack=1 with idle streams: their ranges packed again (holes filled, lent) */
    {"sim:capacity=1GiB,events=manual", "caching:segments=expandable,pack=1,reclaim=0.008,lend=1,top=fit", 1},
    /* park=0: the invariants without parking (no shadow: it would be the same) */
    {"sim:capacity=1GiB,events=manual", "caching:park=0"},
    /* plan=1 learning under random operations (a random program never repeats: no plan;
     * tests/test_caching_plan.c plans repeating ones) */
    {"sim:capacity=1GiB,events=manual", "caching:segments=expandable,reclaim=0.008,reclaim_max=0.008,plan=1"},
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

/* The test's own record of what is live (tests/support/live_ranges.h), with the sums
 * the allocator's statistics must equal. */
typedef struct live_set {
    live_ranges ranges;
    int64_t requested, allocated;
} live_set;

static void live_add(live_set *ls, uintptr_t addr, size_t size, size_t requested)
{
    const live_range *clash = live_ranges_add(&ls->ranges, (live_range){addr, addr + size, requested, 0});
    if (clash)
        fail_msg("block %#lx+%zu overlaps live block %#lx+%zu", (unsigned long)addr, size, (unsigned long)clash->lo,
                 (size_t)(clash->hi - clash->lo));
    ls->requested += (int64_t)requested;
    ls->allocated += (int64_t)size;
}

static live_range live_take(live_set *ls, size_t i)
{
    live_range r = live_ranges_take(&ls->ranges, i);
    ls->requested -= (int64_t)r.requested;
    ls->allocated -= (int64_t)(r.hi - r.lo);
    return r;
}

/* Mostly small, some large, a few huge enough to run a 1 GiB device out of memory. */
static size_t random_size(vl_rng *r)
{
    uint64_t k = vl_rng_below(r, 100);
    if (k < 70) return (size_t)vl_rng_log_uniform(r, 1, MiB);
    if (k < 95) return (size_t)vl_rng_log_uniform(r, MiB, 32 * MiB);
    return (size_t)vl_rng_log_uniform(r, 32 * MiB, 256 * MiB);
}

static void check_step(vl_allocator *a, vl_device *d, const live_set *ls, int full, uint64_t step)
{
    vl_alloc_stats st = stats_of(a);
    if (st.requested_bytes != ls->requested || st.allocated_bytes != ls->allocated)
        fail_msg("step %lu: stats say requested %lld allocated %lld, live blocks %lld / %lld", (unsigned long)step,
                 (long long)st.requested_bytes, (long long)st.allocated_bytes, (long long)ls->requested,
                 (long long)ls->allocated);
    if (!(st.reserved_bytes >= st.active_bytes && st.active_bytes >= st.allocated_bytes))
        fail_msg("step %lu: reserved >= active >= allocated violated", (unsigned long)step);
    if ((size_t)st.reserved_bytes != vl_sim_used_bytes(d))
        fail_msg("step %lu: reserved %lld but the device holds %zu", (unsigned long)step, (long long)st.reserved_bytes,
                 vl_sim_used_bytes(d));
    if (full) assert_consistent(a);
}

/* The park=0 twin of the allocator under test (see the top of this file): {NULL, NULL}
 * for a config that sets park= itself. The helpers below do each operation to both. */
typedef struct shadow {
    vl_device *d;
    vl_allocator *a;
} shadow;

static shadow shadow_open(const config *cfg)
{
    if (strstr(cfg->alloc, "park=")) return (shadow){NULL, NULL};
    char spec[256];
    snprintf(spec, sizeof spec, "%s%cpark=0", cfg->alloc, strchr(cfg->alloc, ':') ? ',' : ':');
    vl_device *d = sim_open(cfg->device);
    return (shadow){d, caching_open(d, spec)};
}

static void free_both(vl_allocator *a, const shadow *sh, const live_range *b, vl_stream s)
{
    vl_deallocate(a, (void *)b->lo, b->requested, s);
    if (sh->a) vl_deallocate(sh->a, (void *)b->lo, b->requested, s);
}

/* Completes the events of stream s on both devices (all = 1: of every stream). */
static void complete_both(vl_device *d, const shadow *sh, vl_stream s, int all)
{
    vl_device *devs[2] = {d, sh->d};
    for (int i = 0; i < 2 && devs[i]; i++) {
        if (all) vl_sim_complete_all(devs[i]);
        else vl_sim_complete_stream(devs[i], s);
    }
}

static void shadow_check(const shadow *sh, vl_allocator *a, uint64_t step)
{
    if (!sh->a) return;
    vl_alloc_stats st = stats_of(a), sst = stats_of(sh->a);
    if (st.reserved_bytes != sst.reserved_bytes || st.peak_reserved_bytes != sst.peak_reserved_bytes ||
        st.ooms != sst.ooms || st.device_allocs != sst.device_allocs)
        fail_msg("step %lu: reserved %lld (peak %lld), %lld OOMs, %lld device allocs; with park=0 %lld (%lld), "
                 "%lld, %lld", (unsigned long)step, (long long)st.reserved_bytes, (long long)st.peak_reserved_bytes,
                 (long long)st.ooms, (long long)st.device_allocs, (long long)sst.reserved_bytes,
                 (long long)sst.peak_reserved_bytes, (long long)sst.ooms, (long long)sst.device_allocs);
}

static void run_random_ops(const config *cfg, uint64_t ops, uint64_t seed, uint64_t check_every)
{
    vl_device *d = sim_open(cfg->device);
    vl_allocator *a = caching_open(d, cfg->alloc);
    shadow sh = shadow_open(cfg);
    vl_rng r;
    vl_rng_seed(&r, seed);
    live_set ls = {0};
    int64_t ooms = 0;
    vl_stream stream = NULL;
    size_t last_free = 0;
    for (uint64_t step = 0; step < ops; step++) {
        uint64_t k = vl_rng_below(&r, 1000);
        int want_alloc = ls.ranges.n < 200 ? k < 520 : k < 300;
        if (k >= 990) {
            size_t released = vl_trim(a);
            if (sh.a) assert_int_equal(released, vl_trim(sh.a));
        } else if (k >= 987 && cfg->drains) {
            complete_both(d, &sh, NULL, 1);
            while (ls.ranges.n) {
                live_range b = live_take(&ls, ls.ranges.n - 1);
                free_both(a, &sh, &b, NULL);
            }
        } else if (k >= 950) {
            complete_both(d, &sh, (k & 1) ? NULL : S(vl_rng_below(&r, 4)), k & 1);
        } else if (k >= 900) {
            stream = S(vl_rng_below(&r, 4)); /* S(0) is the default stream */
        } else if (k >= 850 && ls.ranges.n) {
            size_t i = (size_t)vl_rng_below(&r, ls.ranges.n);
            vl_stream s = S(vl_rng_below(&r, 4));
            assert_int_equal(vl_record_use(a, (void *)ls.ranges.v[i].lo, s), VL_OK);
            if (sh.a) assert_int_equal(vl_record_use(sh.a, (void *)ls.ranges.v[i].lo, s), VL_OK);
        } else if (want_alloc || !ls.ranges.n) {
            /* A quarter ask again for the size freed last, as training steps do: the
             * requests that parking serves without the bins. */
            size_t size = last_free && vl_rng_below(&r, 4) == 0 ? last_free : random_size(&r);
            void *p = vl_allocate(a, size, stream);
            void *q = sh.a ? vl_allocate(sh.a, size, stream) : p;
            if (p != q) fail_msg("step %lu: %zu bytes at %p, with park=0 at %p", (unsigned long)step, size, p, q);
            if (!p) {
                ooms++;
                assert_int_equal(stats_of(a).ooms, ooms);
            } else {
                if ((uintptr_t)p % 512) fail_msg("pointer %p not 512-aligned", p);
                size_t block = vl_caching_block_size(a, p);
                assert_true(block >= size);
                live_add(&ls, (uintptr_t)p, block, size);
            }
        } else {
            live_range b = live_take(&ls, (size_t)vl_rng_below(&r, ls.ranges.n));
            last_free = b.requested;
            free_both(a, &sh, &b, vl_rng_below(&r, 8) ? stream : S(3));
        }
        check_step(a, d, &ls, check_every && step % check_every == 0, step);
        shadow_check(&sh, a, step);
    }
    while (ls.ranges.n) {
        live_range b = live_take(&ls, ls.ranges.n - 1);
        free_both(a, &sh, &b, NULL);
    }
    if (sh.a) {
        vl_trim(sh.a);
        vl_alloc_close(sh.a);
        vl_device_close(sh.d);
    }
    vl_trim(a); /* waits for every deferred free */
    check_step(a, d, &ls, 1, ops);
    vl_alloc_stats st = stats_of(a);
    assert_int_equal(st.reserved_bytes, 0);
    assert_int_equal(st.active_bytes, 0);
    assert_int_equal(st.segments, 0);
    assert_int_equal(vl_sim_used_bytes(d), 0);
    assert_int_equal(vl_sim_pending_events(d), 0);
    assert_int_equal(st.device_allocs, st.device_frees);
    print_message("%s on %s: %lu ops, %lld OOMs, %lld device allocs, peak reserved/allocated %.3f\n", cfg->alloc,
                  cfg->device, (unsigned long)ops, (long long)ooms, (long long)st.device_allocs,
                  st.peak_allocated_bytes ? (double)st.peak_reserved_bytes / (double)st.peak_allocated_bytes : 0.0);
    live_ranges_free(&ls.ranges);
    vl_alloc_close(a);
    vl_device_close(d);
}

static void test_random_ops(void **state)
{
    const config *cfg = *state;
    uint64_t ops = vl_test_env_u64("VL_PROPTEST_OPS", 200000) / NCONFIGS;
    uint64_t seed = vl_test_env_u64("VL_PROPTEST_SEED", 1);
    uint64_t every = vl_test_env_u64("VL_PROPTEST_CHECK_EVERY", 1);
    run_random_ops(cfg, ops, seed * 1000003u + (uint64_t)(cfg - configs), every);
}

/* --- threads ------------------------------------------------------------------------ */

#define THREADS 4

typedef struct shared {
    vl_allocator *a;
    pthread_mutex_t lock;
    vl_addrmap live; /* every live address, across threads */
    uint64_t ops;
    int duplicates;
} shared;

typedef struct worker {
    shared *sh;
    int id;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    enum { SLOTS = 64 };
    void *ptr[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    vl_rng r;
    vl_rng_seed(&r, 77 + (uint64_t)w->id);
    vl_stream own = S(10 + w->id), common = S(1);
    for (uint64_t i = 0; i < sh->ops; i++) {
        size_t k = (size_t)vl_rng_below(&r, SLOTS);
        vl_stream s = vl_rng_below(&r, 4) ? own : common;
        if (ptr[k]) {
            /* Out of the shared record before the free: once freed, another thread may
             * legitimately receive the same address. */
            pthread_mutex_lock(&sh->lock);
            vl_addrmap_remove(&sh->live, (uintptr_t)ptr[k], NULL);
            pthread_mutex_unlock(&sh->lock);
            vl_deallocate(sh->a, ptr[k], size[k], s);
            ptr[k] = NULL;
        } else {
            size[k] = (size_t)vl_rng_log_uniform(&r, 1, 4 * MiB);
            ptr[k] = vl_allocate(sh->a, size[k], s);
            if (!ptr[k]) continue;
            if (vl_rng_below(&r, 8) == 0) vl_record_use(sh->a, ptr[k], S(10 + (w->id + 1) % THREADS));
            pthread_mutex_lock(&sh->lock);
            if (vl_addrmap_find(&sh->live, (uintptr_t)ptr[k])) sh->duplicates++;
            else vl_addrmap_insert(&sh->live, (uintptr_t)ptr[k], (uint64_t)w->id);
            pthread_mutex_unlock(&sh->lock);
        }
    }
    for (size_t k = 0; k < SLOTS; k++) {
        if (!ptr[k]) continue;
        pthread_mutex_lock(&sh->lock);
        vl_addrmap_remove(&sh->live, (uintptr_t)ptr[k], NULL);
        pthread_mutex_unlock(&sh->lock);
        vl_deallocate(sh->a, ptr[k], size[k], own);
    }
    return NULL;
}

static void run_threads(const char *alloc_spec)
{
    vl_device *d = sim_open("sim:capacity=8GiB");
    shared sh = {.a = caching_open(d, alloc_spec), .ops = vl_test_env_u64("VL_PROPTEST_OPS", 200000) / 4 / THREADS};
    pthread_mutex_init(&sh.lock, NULL);
    assert_int_equal(vl_addrmap_init(&sh.live, 1024), 0);
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){&sh, i};
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    /* Checks race with the workers; a broken one fails the test only after the join (a
     * failure leaves the test at once, and workers still running on its allocator made
     * the process die at random, exit 255, against a faulty allocator). */
    char broken[512] = "";
    int bad = 0;
    for (int i = 0; i < 20 && !bad; i++) bad = vl_caching_check(sh.a, broken, sizeof broken) != 0;
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    if (bad) fail_msg("invariant broken while the workers ran: %s", broken);
    assert_int_equal(sh.duplicates, 0);
    assert_int_equal(sh.live.count, 0);
    assert_consistent(sh.a);
    vl_alloc_stats st = stats_of(sh.a);
    assert_int_equal(st.allocated_bytes, 0);
    assert_int_equal(st.requested_bytes, 0);
    assert_int_equal(st.allocs, st.frees + st.ooms);
    vl_trim(sh.a);
    assert_int_equal(vl_sim_used_bytes(d), 0);
    vl_addrmap_destroy(&sh.live);
    pthread_mutex_destroy(&sh.lock);
    vl_alloc_close(sh.a);
    vl_device_close(d);
}

/* state: the allocator SPEC, as configs[] are for test_random_ops. */
static void test_threads(void **state) { run_threads(*state); }

/* Every configs[] entry needs its line below. */
_Static_assert(NCONFIGS == 16, "list every configs[] entry in VL_TEST_MAIN");

VL_TEST_MAIN(cmocka_unit_test_prestate(test_random_ops, (void *)&configs[0]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[1]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[2]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[3]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[4]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[5]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[6]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[7]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[8]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[9]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[10]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[11]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[12]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[13]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[14]),
             cmocka_unit_test_prestate(test_random_ops, (void *)&configs[15]),
             cmocka_unit_test_prestate(test_threads, (void *)"caching"),
             cmocka_unit_test_prestate(test_threads, (void *)"caching:segments=expandable"),
             cmocka_unit_test_prestate(test_threads, (void *)"caching:segments=expandable,span=64MiB,reclaim=0.008"),
             cmocka_unit_test_prestate(test_threads, (void *)"caching:segments=expandable,pack=1"),
             cmocka_unit_test_prestate(test_threads, (void *)"caching:segments=expandable,plan=1"))
