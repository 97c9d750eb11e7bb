/* The caching allocator under injected faults: every device call of the simulated
 * device (sim's fail_* options, vl_sim_fail_nth) and every host allocation of the
 * allocator (vl_host_fail_nth) is made to fail in turn, the Nth one for every N up to
 * the number of such calls the workload makes (counted in a run without faults).
 * VL_FAULT_SWEEP_STRIDE=K (default 1: every call) fails every Kth call and the last
 * only: valgrind's run (memcheck is ~50x slower) takes a sample; make test and the
 * sanitizer run take every call. After each fault the allocator must
 * have said why (vl_caching_last_error), keep every invariant (checked after every
 * step), stay usable (a fresh allocation succeeds), give all device memory back on trim
 * and leak no host memory (the tests run under ASan/LSan and valgrind). */
#include "test_caching_helpers.h"

#include "caching/hostmem.h"
#include "support/env.h"
#include "support/test_main.h"

/* Faults per kind at most: the workload makes fewer calls of any kind than this. */
#define MAX_NTH 400

typedef struct live {
    void *p[24];
    vl_stream s[24];
} live;

static void check(vl_allocator *a)
{
    assert_consistent(a);
}

static void put(live *l, int i, void *p, vl_stream s)
{
    l->p[i] = p;
    l->s[i] = s;
}

static void drop(vl_allocator *a, live *l, int i)
{
    vl_deallocate(a, l->p[i], 0, l->s[i]);
    l->p[i] = NULL;
    check(a);
}

/* A fixed mix of what reaches the device or allocates on the host: small and large
 * blocks on three streams, splits and coalescing, cross-stream use with events
 * (manual events: some stay pending until completed), frees, reset_peaks, trims. */
static void workload(vl_allocator *a, vl_device *d)
{
    static const size_t sizes[] = {512, 3000, 700 * KiB, 1536 * KiB, 5 * MiB, 12 * MiB, 30 * MiB, 2 * MiB};
    live l = {0};
    for (int i = 0; i < 24; i++) {
        vl_stream s = S(1 + i % 3);
        put(&l, i, vl_allocate(a, sizes[i % 8] + (size_t)i * 512, s), s);
        check(a);
    }
    for (int i = 0; i < 24; i += 3) drop(a, &l, i);
    for (int i = 1; i < 24; i += 3) {
        if (l.p[i]) (void)vl_record_use(a, l.p[i], S(1 + (i + 1) % 3));
        check(a);
    }
    for (int i = 1; i < 24; i += 3) drop(a, &l, i); /* deferred behind events */
    for (int i = 0; i < 24; i += 3) {
        put(&l, i, vl_allocate(a, sizes[(i + 3) % 8], S(4)), S(4)); /* a new stream */
        check(a);
    }
    vl_alloc_reset_peaks(a);
    vl_trim(a);
    check(a);
    vl_sim_complete_stream(d, S(2));
    for (int i = 0; i < 24; i++)
        if (l.p[i]) drop(a, &l, i);
    vl_sim_complete_all(d);
    vl_trim(a);
    check(a);
}

typedef void (*arm_fn)(vl_device *d, uint64_t nth, int op);
typedef uint64_t (*count_fn)(vl_device *d, int op);

static void arm_device(vl_device *d, uint64_t nth, int op) { vl_sim_fail_nth(d, (vl_sim_op)op, nth); }
static uint64_t count_device(vl_device *d, int op) { return vl_sim_calls(d, (vl_sim_op)op); }

static void arm_host(vl_device *d, uint64_t nth, int op)
{
    (void)d;
    (void)op;
    vl_host_fail_nth(nth);
}

static uint64_t count_host(vl_device *d, int op)
{
    (void)d;
    (void)op;
    return vl_host_allocations();
}

/* How many calls of the kind the workload makes when nothing fails. */
static uint64_t calls_without_fault(const char *alloc_spec, count_fn count, int op)
{
    vl_device *d = sim_open("sim:capacity=1GiB,events=manual");
    vl_allocator *a = caching_open(d, alloc_spec);
    uint64_t before = count(d, op);
    workload(a, d);
    uint64_t calls = count(d, op) - before;
    vl_alloc_close(a);
    vl_device_close(d);
    return calls;
}

/* Runs the workload with the nth call of one kind failing; returns whether a fault
 * was injected (the allocator reported an error). */
static int run_with_fault(const char *alloc_spec, arm_fn arm, int op, uint64_t nth)
{
    vl_device *d = sim_open("sim:capacity=1GiB,events=manual");
    vl_allocator *a = caching_open(d, alloc_spec);
    arm(d, nth, op);
    workload(a, d);
    arm(d, 0, op);
    char why[256] = "";
    int code = vl_caching_last_error(a, why, sizeof why);
    if (code != 0) {
        assert_true(code == VL_CACHING_ERR_DEVICE || code == VL_CACHING_ERR_HOST_MEMORY);
        assert_non_null(strstr(why, "caching: "));
    }
    /* Still usable: a fresh allocation on a stream seen before and on a new one. */
    void *p = vl_allocate(a, 3 * MiB, S(1)), *q = vl_allocate(a, 4096, S(9));
    assert_non_null(p);
    assert_non_null(q);
    vl_deallocate(a, p, 0, S(1));
    vl_deallocate(a, q, 0, S(9));
    vl_sim_complete_all(d);
    /* A segment kept after a refused release goes on the next trim. */
    vl_trim(a);
    vl_trim(a);
    check(a);
    vl_alloc_stats st = stats_of(a);
    if (st.reserved_bytes != 0 || vl_sim_used_bytes(d) != 0)
        fail_msg("%s, fault kind %d call %llu: %lld bytes still reserved, %zu on the device after trim",
                 alloc_spec, op, (unsigned long long)nth, (long long)st.reserved_bytes, vl_sim_used_bytes(d));
    vl_alloc_close(a);
    vl_device_close(d);
    return code != 0;
}

/* Fails the 1st, 2nd, ... call of one kind, every call the workload makes (counted in a
 * run without a fault: the run is the same up to the failing call, so that call is
 * reached). Each must be reported; a fault the allocator passes over silently fails the
 * test instead of ending the sweep. */
static void sweep(const char *alloc_spec, arm_fn arm, count_fn count, int op, int must_fire)
{
    uint64_t calls = calls_without_fault(alloc_spec, count, op);
    if (calls > MAX_NTH)
        fail_msg("%s: fault kind %d: %llu calls, more than the sweep's %d", alloc_spec, op,
                 (unsigned long long)calls, MAX_NTH);
    if (must_fire && calls == 0) fail_msg("%s: fault kind %d never reached", alloc_spec, op);
    uint64_t stride = vl_test_env_u64("VL_FAULT_SWEEP_STRIDE", 1);
    if (stride == 0) stride = 1;
    for (uint64_t nth = 1; nth <= calls; nth = (nth < calls && nth + stride > calls) ? calls : nth + stride)
        if (!run_with_fault(alloc_spec, arm, op, nth))
            fail_msg("%s: fault kind %d: call %llu of %llu failed and the allocator reported no error",
                     alloc_spec, op, (unsigned long long)nth, (unsigned long long)calls);
}

static const char *const specs[] = {"caching", "caching:segments=expandable,chunk=2MiB",
                                    "caching:segments=expandable,reclaim=-1"};

static void test_every_device_call_may_fail(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        int expandable = strstr(specs[k], "expandable") != NULL;
        for (int op = 0; op < VL_SIM_OPS; op++) {
            /* Calls a configuration never makes: plain allocations in expandable mode,
             * VMM calls in classic mode. */
            int reached = expandable ? op != VL_SIM_MEM_ALLOC && op != VL_SIM_MEM_FREE
                                     : op != VL_SIM_VA_RESERVE && op != VL_SIM_VA_RELEASE && op != VL_SIM_MAP &&
                                           op != VL_SIM_UNMAP && op != VL_SIM_PHYS_RELEASE;
            /* Kept memory exists only where reclaim retires chunks behind an event. */
            if (op == VL_SIM_PHYS_RELEASE) reached = 0; /* the workload keeps none: test_kept_memory_release_may_fail */
            sweep(specs[k], arm_device, count_device, op, reached);
        }
    }
}

static void test_every_host_allocation_may_fail(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) sweep(specs[k], arm_host, count_host, 0, 1);
}

/* One fault at a time, by hand: what the caller sees. */
static void test_failed_calls_return_null_and_say_why(void **state)
{
    (void)state;
    char why[256];
    /* A device error on mem_alloc: NULL, counted, no flush-and-retry, then usable. */
    vl_device *d = sim_open("sim:fail_alloc=1");
    vl_allocator *a = caching_open(d, "caching");
    assert_int_equal(vl_caching_last_error(a, why, sizeof why), 0);
    assert_null(vl_allocate(a, MiB, NULL));
    assert_int_equal(vl_caching_last_error(a, why, sizeof why), VL_CACHING_ERR_DEVICE);
    assert_non_null(strstr(why, "mem_alloc of a segment failed"));
    vl_alloc_stats st = stats_of(a);
    assert_int_equal(st.ooms, 1);
    assert_int_equal(st.alloc_retries, 0);
    void *p = vl_allocate(a, MiB, NULL);
    assert_non_null(p);
    vl_deallocate(a, p, 0, NULL);
    vl_alloc_close(a);
    vl_device_close(d);

    /* A failed map in the middle of a multi-chunk mapping: the chunks mapped before it
     * are unmapped again. */
    d = sim_open("sim:fail_map=3");
    a = caching_open(d, "caching:segments=expandable,chunk=2MiB,span=0");
    assert_null(vl_allocate(a, 10 * MiB, NULL));
    assert_int_equal(vl_caching_last_error(a, why, sizeof why), VL_CACHING_ERR_DEVICE);
    assert_int_equal(stats_of(a).reserved_bytes, 0);
    assert_int_equal(vl_sim_used_bytes(d), 0);
    assert_consistent(a);
    p = vl_allocate(a, 10 * MiB, NULL);
    assert_non_null(p);
    vl_deallocate(a, p, 0, NULL);
    vl_trim(a);
    assert_int_equal(vl_sim_used_bytes(d), 0);
    vl_alloc_close(a);
    vl_device_close(d);

    /* Out of host memory for a new stream's record: NULL; record_use says VL_FAILED. */
    d = sim_open("sim");
    a = caching_open(d, "caching");
    p = vl_allocate(a, 4096, S(1));
    vl_host_fail_nth(1);
    assert_null(vl_allocate(a, 4096, S(2)));
    assert_int_equal(vl_caching_last_error(a, why, sizeof why), VL_CACHING_ERR_HOST_MEMORY);
    vl_host_fail_nth(1);
    assert_int_equal(vl_record_use(a, p, S(3)), VL_FAILED);
    vl_host_fail_nth(0);
    assert_int_equal(vl_record_use(a, p, S(3)), VL_OK);
    vl_deallocate(a, p, 0, S(1));
    assert_consistent(a);

    /* The pointer table cannot grow: the block goes back to the cache. The table holds
     * 4096 slots and grows past half full, at the 2049th live block. */
    enum { N = 2048 };
    void **many = calloc(N + 1, sizeof *many);
    assert_non_null(many);
    for (int i = 0; i < N; i++) assert_non_null(many[i] = vl_allocate(a, 512, NULL));
    int64_t allocated = stats_of(a).allocated_bytes;
    vl_host_fail_nth(1);
    assert_null(vl_allocate(a, 512, NULL));
    vl_host_fail_nth(0);
    assert_int_equal(vl_caching_last_error(a, why, sizeof why), VL_CACHING_ERR_HOST_MEMORY);
    assert_non_null(strstr(why, "pointer table"));
    assert_int_equal(stats_of(a).allocated_bytes, allocated);
    assert_consistent(a);
    assert_non_null(many[N] = vl_allocate(a, 512, NULL));
    for (int i = 0; i <= N; i++) vl_deallocate(a, many[i], 0, NULL);
    free(many);
    assert_consistent(a);
    vl_alloc_close(a);
    vl_device_close(d);
}

VL_TEST_MAIN(cmocka_unit_test(test_failed_calls_return_null_and_say_why),
             cmocka_unit_test(test_every_device_call_may_fail), cmocka_unit_test(test_every_host_allocation_may_fail))
