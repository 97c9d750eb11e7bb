/* The caching allocator under many host threads: no block handed out twice, no block
 * lost. Complements the caching engineer's thread test (tests/test_caching_property.c,
 * exact-address duplicates on sim) with what only a stress harness sees:
 *   - overlap: a live block must not share a single byte with another live block
 *     (a bad split hands out [x, x+n) and [x+n/2, ...): different addresses, same memory);
 *   - trim and statistics racing with allocations (empty_cache from a monitor thread);
 *   - on a real GPU (test_threads_cuda, skipped without one): every block is filled on
 *     its thread's stream with a pattern of its own and checked on the device before
 *     its free, so two owners of the same memory show up as corrupted elements; and the
 *     device gets all its memory back after trim (cudaMemGetInfo).
 * Knobs: VL_THREADS_OPS (operations per thread), VL_THREADS_N (threads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "caching/caching.h"
#include "cuda/gpu.h"
#include "device.h"
#include "exitcodes.h"
#include "kernels/pattern.h"
#include "rng.h"
#include "support/env.h"
#include "support/live_ranges.h"
#include "support/test_main.h"

#define MAX_THREADS 64
#define SLOTS 48
#define FILL_CAP_BYTES ((size_t)256 << 10) /* pattern-check at most this much of a block */

/* --- the live set: every block handed out and not yet freed, as address ranges ----- */

typedef struct live_set {
    pthread_mutex_t lock;
    live_ranges ranges; /* tests/support/live_ranges.h */
    uint64_t overlaps;  /* blocks handed out while overlapping a live one */
    char first_overlap[160];
} live_set;

/* Records [p, p+size) unless it overlaps a live range: that is a duplicated block. */
static void live_add(live_set *ls, void *p, size_t size, int owner)
{
    uintptr_t lo = (uintptr_t)p;
    pthread_mutex_lock(&ls->lock);
    const live_range *clash = live_ranges_add(&ls->ranges, (live_range){lo, lo + size, size, owner});
    if (clash && ls->overlaps++ == 0)
        snprintf(ls->first_overlap, sizeof ls->first_overlap,
                 "thread %d got [%#lx, %#lx) while thread %d holds [%#lx, %#lx)", owner, (unsigned long)lo,
                 (unsigned long)(lo + size), clash->owner, (unsigned long)clash->lo, (unsigned long)clash->hi);
    pthread_mutex_unlock(&ls->lock);
}

/* Forgets p before its free: once freed, another thread may receive it at once. */
static void live_remove(live_set *ls, void *p)
{
    pthread_mutex_lock(&ls->lock);
    ptrdiff_t i = live_ranges_find(&ls->ranges, (uintptr_t)p);
    if (i >= 0) live_ranges_take(&ls->ranges, (size_t)i);
    pthread_mutex_unlock(&ls->lock);
}

/* --- workers ------------------------------------------------------------------------- */

typedef struct shared {
    vl_allocator *a;
    vl_device *dev;
    live_set live;
    uint64_t ops_per_thread;
    atomic_int stop_monitor;
} shared;

typedef struct worker {
    shared *sh;
    int id;
    vl_stream stream;
    unsigned long long *mismatches; /* cuda: device counter of corrupted elements */
    uint64_t allocs, frees, ooms;
} worker;

static void fill_block(worker *w, void *p, size_t size, uint32_t tag)
{
    if (w->sh->dev->simulated || size < 4) return;
    size_t n = (size < FILL_CAP_BYTES ? size : FILL_CAP_BYTES) / 4;
    vl_fill_iota_u32(p, n, tag, (cudaStream_t)w->stream);
}

static void check_block(worker *w, void *p, size_t size, uint32_t tag)
{
    if (w->sh->dev->simulated || size < 4) return;
    size_t n = (size < FILL_CAP_BYTES ? size : FILL_CAP_BYTES) / 4;
    vl_count_mismatch_u32(p, n, tag, 1, w->mismatches, (cudaStream_t)w->stream);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    void *ptr[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    uint32_t tag[SLOTS] = {0};
    vl_rng r;
    vl_rng_seed(&r, 1000 + (uint64_t)w->id);
    if (!sh->dev->simulated) VL_CUDA_CHECK(cudaSetDevice(sh->dev->ordinal));
    for (uint64_t i = 0; i < sh->ops_per_thread; i++) {
        size_t k = (size_t)vl_rng_below(&r, SLOTS);
        if (ptr[k]) {
            check_block(w, ptr[k], size[k], tag[k]);
            live_remove(&sh->live, ptr[k]);
            vl_deallocate(sh->a, ptr[k], size[k], w->stream);
            ptr[k] = NULL;
            w->frees++;
        } else {
            /* Mostly small blocks (the small pool and splitting), now and then a large one. */
            size[k] = vl_rng_below(&r, 16) ? (size_t)vl_rng_log_uniform(&r, 1, 1 << 20)
                                           : (size_t)vl_rng_log_uniform(&r, 1 << 20, 24 << 20);
            ptr[k] = vl_allocate(sh->a, size[k], w->stream);
            w->allocs++;
            if (!ptr[k]) {
                w->ooms++;
                continue;
            }
            tag[k] = (uint32_t)vl_rng_next(&r);
            live_add(&sh->live, ptr[k], size[k], w->id);
            fill_block(w, ptr[k], size[k], tag[k]);
        }
    }
    for (size_t k = 0; k < SLOTS; k++) {
        if (!ptr[k]) continue;
        check_block(w, ptr[k], size[k], tag[k]);
        live_remove(&sh->live, ptr[k]);
        vl_deallocate(sh->a, ptr[k], size[k], w->stream);
        w->frees++;
    }
    return NULL;
}

/* Trims the cache and reads statistics while the workers run: the allocator's lock
 * must keep a trim from releasing a block that a worker is being handed.
 *
 * It yields the CPU after each round. The allocator's lock is a spinlock, not a fair
 * one, and this loop is inside it most of the time and takes it again at once. Where
 * threads run one at a time (valgrind runs them so), a waiting worker only runs while
 * the loop holds the lock, and never gets it: seen as test_threads_sim_expandable_with_trim
 * running into the 1,200 s valgrind timeout, with the workers in sched_yield inside
 * vl_lock_acquire and this thread looping. A program that trimmed in a tight loop
 * would starve its allocating threads the same way; none does. */
static void *monitor_main(void *arg)
{
    shared *sh = arg;
    if (!sh->dev->simulated) VL_CUDA_CHECK(cudaSetDevice(sh->dev->ordinal));
    while (!atomic_load(&sh->stop_monitor)) {
        vl_alloc_stats st;
        vl_alloc_stats_get(sh->a, &st);
        vl_trim(sh->a);
        sched_yield();
    }
    return NULL;
}

/* --- the test body, on whichever device ------------------------------------------- */

static vl_device *open_device_or_skip(const char *spec)
{
    int status = 0;
    char err[256] = "";
    vl_device *d = vl_device_open(spec, &status, err, sizeof err);
    if (!d && status == VL_EXIT_SKIP) {
        print_message("skipped: %s\n", err);
        skip();
    }
    if (!d) fail_msg("opening %s: %s", spec, err);
    return d;
}

static void run_threads(const char *device_spec, const char *alloc_spec, int with_monitor)
{
    vl_device *dev = open_device_or_skip(device_spec);
    int nthreads = (int)vl_test_env_u64("VL_THREADS_N", 8);
    if (nthreads < 1 || nthreads > MAX_THREADS) fail_msg("VL_THREADS_N must be 1..%d", MAX_THREADS);
    shared sh = {.dev = dev, .ops_per_thread = vl_test_env_u64("VL_THREADS_OPS", dev->simulated ? 20000 : 4000)};
    pthread_mutex_init(&sh.live.lock, NULL);

    worker w[MAX_THREADS];
    memset(w, 0, sizeof w);
    unsigned long long *mismatches = NULL;
    size_t free_before = 0, total = 0;
    if (!dev->simulated) {
        VL_CUDA_CHECK(cudaMalloc((void **)&mismatches, sizeof *mismatches * (size_t)nthreads));
        VL_CUDA_CHECK(cudaMemset(mismatches, 0, sizeof *mismatches * (size_t)nthreads));
        VL_CUDA_CHECK(cudaDeviceSynchronize());
    }
    for (int i = 0; i < nthreads; i++) {
        w[i] = (worker){.sh = &sh, .id = i, .stream = (vl_stream)(uintptr_t)(100 + i)};
        if (!dev->simulated) {
            cudaStream_t s;
            VL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            w[i].stream = (vl_stream)s;
            w[i].mismatches = mismatches + i;
        }
    }
    if (!dev->simulated) {
        /* Load the pattern kernels now: with lazy module loading their first launch takes
         * device memory, which would otherwise read as a leak of the allocator. */
        vl_fill_iota_u32((uint32_t *)mismatches, 2, 0, 0);
        vl_count_mismatch_u32((const uint32_t *)mismatches, 2, 0, 1, mismatches + nthreads - 1, 0);
        VL_CUDA_CHECK(cudaDeviceSynchronize());
        VL_CUDA_CHECK(cudaMemset(mismatches, 0, sizeof *mismatches * (size_t)nthreads));
        VL_CUDA_CHECK(cudaDeviceSynchronize());
        VL_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    }

    int status = 0;
    char err[512] = "";
    sh.a = vl_alloc_open(alloc_spec, dev, &status, err, sizeof err);
    if (!sh.a && status == VL_EXIT_SKIP) {
        print_message("skipped: %s\n", err);
        vl_device_close(dev);
        skip();
    }
    if (!sh.a) fail_msg("opening %s: %s", alloc_spec, err);

    pthread_t t[MAX_THREADS], mon;
    for (int i = 0; i < nthreads; i++) assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    if (with_monitor) assert_int_equal(pthread_create(&mon, NULL, monitor_main, &sh), 0);
    for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
    atomic_store(&sh.stop_monitor, 1);
    if (with_monitor) pthread_join(mon, NULL);

    uint64_t allocs = 0, frees = 0, ooms = 0;
    for (int i = 0; i < nthreads; i++) allocs += w[i].allocs, frees += w[i].frees, ooms += w[i].ooms;
    unsigned long long corrupted = 0;
    if (!dev->simulated) {
        unsigned long long per_thread[MAX_THREADS];
        VL_CUDA_CHECK(cudaDeviceSynchronize());
        VL_CUDA_CHECK(cudaMemcpy(per_thread, mismatches, sizeof *mismatches * (size_t)nthreads, cudaMemcpyDeviceToHost));
        for (int i = 0; i < nthreads; i++) corrupted += per_thread[i];
    }
    print_message("%s on %s: %d threads%s, %llu allocs (%llu OOM), %llu frees, %llu overlapping blocks, "
                  "%llu corrupted elements\n",
                  alloc_spec, device_spec, nthreads, with_monitor ? " + trim/stats thread" : "",
                  (unsigned long long)allocs, (unsigned long long)ooms, (unsigned long long)frees,
                  (unsigned long long)sh.live.overlaps, corrupted);

    if (sh.live.overlaps) fail_msg("%llu blocks handed out twice; first: %s", (unsigned long long)sh.live.overlaps,
                                   sh.live.first_overlap);
    assert_int_equal(corrupted, 0);
    assert_int_equal(sh.live.ranges.n, 0);
    assert_true(allocs > ooms); /* the test exercised the allocator, not only its OOM path */
    if (vl_caching_check(sh.a, err, sizeof err) != 0) fail_msg("invariant broken after the run: %s", err);

    /* Nothing lost: every block came back, and the cache gives the device everything. */
    vl_alloc_stats st;
    vl_alloc_stats_get(sh.a, &st);
    assert_int_equal(st.allocated_bytes, 0);
    assert_int_equal(st.requested_bytes, 0);
    assert_int_equal(st.allocs, (int64_t)allocs);
    assert_int_equal(st.frees, (int64_t)(allocs - ooms));
    vl_trim(sh.a);
    vl_alloc_stats_get(sh.a, &st);
    assert_int_equal(st.reserved_bytes, 0);
    assert_int_equal(st.segments, 0);
    if (dev->simulated) assert_int_equal(vl_sim_used_bytes(dev), 0);
    vl_alloc_close(sh.a);

    if (!dev->simulated) {
        size_t free_after = 0;
        VL_CUDA_CHECK(cudaDeviceSynchronize());
        VL_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
        /* The driver may keep a little bookkeeping; a lost 2 MiB segment would show. */
        if (free_after + (1u << 20) < free_before)
            fail_msg("device memory not returned: %zu bytes free before, %zu after", free_before, free_after);
        for (int i = 0; i < nthreads; i++) VL_CUDA_CHECK(cudaStreamDestroy((cudaStream_t)w[i].stream));
        VL_CUDA_CHECK(cudaFree(mismatches));
    }
    live_ranges_free(&sh.live.ranges);
    pthread_mutex_destroy(&sh.live.lock);
    vl_device_close(dev);
}

/* The harness itself: the live set must see a partial overlap, not only equal addresses. */
static void test_live_set_sees_overlaps(void **state)
{
    (void)state;
    live_set ls = {.lock = PTHREAD_MUTEX_INITIALIZER};
    live_add(&ls, (void *)(uintptr_t)0x1000, 0x100, 1);
    live_add(&ls, (void *)(uintptr_t)0x1100, 0x100, 2); /* adjacent: fine */
    live_add(&ls, (void *)(uintptr_t)0x0f00, 0x100, 3); /* adjacent below: fine */
    assert_int_equal(ls.overlaps, 0);
    live_add(&ls, (void *)(uintptr_t)0x1080, 0x10, 4); /* inside the first */
    live_add(&ls, (void *)(uintptr_t)0x0ff0, 0x20, 5); /* straddles two */
    live_add(&ls, (void *)(uintptr_t)0x1000, 0x100, 6); /* the same block again */
    assert_int_equal(ls.overlaps, 3);
    assert_int_equal(ls.ranges.n, 3);
    live_remove(&ls, (void *)(uintptr_t)0x1000);
    live_add(&ls, (void *)(uintptr_t)0x1080, 0x10, 7); /* free now */
    assert_int_equal(ls.overlaps, 3);
    assert_int_equal(ls.ranges.n, 3);
    live_ranges_free(&ls.ranges);
}

static void test_threads_sim_classic(void **state)
{
    (void)state;
    run_threads("sim:capacity=4GiB", "caching", 0);
}

static void test_threads_sim_expandable(void **state)
{
    (void)state;
    run_threads("sim:capacity=4GiB", "caching:segments=expandable", 0);
}

/* A small device: allocations fail and the allocator frees its cache and retries
 * while other threads hold and return blocks. */
static void test_threads_sim_tight_with_trim(void **state)
{
    (void)state;
    run_threads("sim:capacity=64MiB", "caching", 1);
}

static void test_threads_sim_expandable_with_trim(void **state)
{
    (void)state;
    run_threads("sim:capacity=64MiB", "caching:segments=expandable", 1);
}

static void test_threads_cuda_classic(void **state)
{
    (void)state;
    run_threads("cuda", "caching", 1);
}

static void test_threads_cuda_expandable(void **state)
{
    (void)state;
    run_threads("cuda", "caching:segments=expandable", 1);
}

VL_TEST_MAIN(cmocka_unit_test(test_live_set_sees_overlaps), cmocka_unit_test(test_threads_sim_classic),
             cmocka_unit_test(test_threads_sim_expandable), cmocka_unit_test(test_threads_sim_tight_with_trim),
             cmocka_unit_test(test_threads_sim_expandable_with_trim), cmocka_unit_test(test_threads_cuda_classic),
             cmocka_unit_test(test_threads_cuda_expandable))
