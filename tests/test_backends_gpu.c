/* The raw and async backends on a real GPU (skipped without one): allocation,
 * statistics, OOM as NULL, trim, record_use, and the OOM report's bounded probe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "support/test_main.h"

static vl_device *open_gpu(void)
{
    char why[256];
    int status;
    if (!vl_cuda_available(why, sizeof why)) {
        print_message("%s\n", why);
        skip();
    }
    vl_device *d = vl_device_open("cuda", &status, why, sizeof why);
    if (!d) fail_msg("cuda device: %s", why);
    return d;
}

static vl_allocator *open_alloc(vl_device *d, const char *spec)
{
    char err[256];
    int status;
    vl_allocator *a = vl_alloc_open(spec, d, &status, err, sizeof err);
    if (!a) fail_msg("%s: %s", spec, err);
    return a;
}

static void roundtrip(const char *spec)
{
    vl_device *d = open_gpu();
    vl_allocator *a = open_alloc(d, spec);
    void *p = vl_allocate(a, 3u << 20, NULL);
    assert_non_null(p);
    assert_int_equal(cudaMemset(p, 0xab, 3u << 20), cudaSuccess);
    vl_alloc_stats st;
    vl_alloc_stats_get(a, &st);
    assert_int_equal(st.requested_bytes, 3u << 20);
    assert_int_equal(st.allocs, 1);
    vl_deallocate(a, p, 3u << 20, NULL);
    /* 1 PiB cannot exist: NULL, counted, and the next call still works. */
    assert_null(vl_allocate(a, 1ull << 50, NULL));
    vl_alloc_stats_get(a, &st);
    assert_int_equal(st.ooms, 1);
    assert_int_equal(st.requested_bytes, 0);
    assert_int_equal(st.peak_requested_bytes, 3u << 20);
    p = vl_allocate(a, 512, NULL);
    assert_non_null(p);
    vl_deallocate(a, p, 512, NULL);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    vl_alloc_close(a);
    vl_device_close(d);
}

static void test_raw(void **state)
{
    (void)state;
    roundtrip("raw");
}

static void test_async_default_pool(void **state)
{
    (void)state;
    roundtrip("async");
}

static void test_async_private_trim_and_record_use(void **state)
{
    (void)state;
    vl_device *d = open_gpu();
    vl_allocator *a = open_alloc(d, "async:pool=private,release_threshold=1GiB");
    cudaStream_t other;
    assert_int_equal(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
    void *p = vl_allocate(a, 64u << 20, NULL);
    assert_non_null(p);
    assert_int_equal(vl_record_use(a, p, (vl_stream)other), VL_OK);
    vl_deallocate(a, p, 64u << 20, NULL);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    vl_alloc_stats st;
    vl_alloc_stats_get(a, &st);
    /* The threshold keeps the freed 64 MiB in the pool after the sync... */
    assert_true(st.reserved_bytes >= (64 << 20));
    assert_true(st.peak_reserved_bytes >= st.reserved_bytes);
    /* ...and trim gives it back. */
    assert_true(vl_trim(a) >= (64u << 20));
    vl_alloc_stats_get(a, &st);
    assert_int_equal(st.reserved_bytes, 0);
    assert_int_equal(cudaStreamDestroy(other), cudaSuccess);
    vl_alloc_close(a);
    vl_device_close(d);
}

/* The OOM report of raw and async: with all but about 1 GiB of the device held by a
 * ballast, an impossible request's report finds the largest block by a bounded probe
 * (a multiple of 2 MiB, no more than what is free, at most 1 + ceil(log2(free / 2 MiB))
 * attempts), says it would not fit after a release, and gives back what it probed:
 * device free memory and the pool's reserved bytes are as before. */
static void oom_report_probe(const char *spec)
{
    vl_device *d = open_gpu();
    vl_allocator *a = open_alloc(d, spec);
    size_t free0 = 0, total = 0;
    assert_int_equal(cudaMemGetInfo(&free0, &total), cudaSuccess);
    void *ballast = NULL;
    size_t ballast_bytes = free0 - (free0 % (2u << 20)) - (1u << 30);
    assert_int_equal(cudaMalloc(&ballast, ballast_bytes), cudaSuccess);
    size_t free1 = 0;
    assert_int_equal(cudaMemGetInfo(&free1, &total), cudaSuccess);
    vl_alloc_stats before;
    vl_alloc_stats_get(a, &before);

    assert_null(vl_allocate(a, 1ull << 50, NULL));
    vl_oom_report r;
    vl_alloc_oom_report(a, 1ull << 50, NULL, &r);
    char text[4096];
    vl_oom_report_format(&r, text, sizeof text);
    print_message("%s", text);
    assert_string_equal(r.largest_block_method, "probe");
    assert_int_equal(r.device_free_bytes, (int64_t)free1);
    assert_int_equal(r.device_total_bytes, (int64_t)total);
    assert_int_equal(r.largest_block_bytes % (2 << 20), 0);
    assert_true(r.largest_block_bytes > 0 && r.largest_block_bytes <= r.device_free_bytes + r.cached_free_bytes);
    assert_true(r.probe_attempts >= 1 &&
                r.probe_attempts <= 1 + (int64_t)ceil(log2((double)(free1 + (size_t)r.cached_free_bytes) / (2 << 20))));
    assert_false(isnan(r.fragmentation));
    assert_int_equal(r.fits_after_release, 0);
    assert_int_equal(r.ooms, 1);
    /* The probe kept nothing. */
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    size_t free2 = 0;
    assert_int_equal(cudaMemGetInfo(&free2, &total), cudaSuccess);
    assert_true(free2 + (2u << 20) >= free1);
    vl_alloc_stats after;
    vl_alloc_stats_get(a, &after);
    if (before.reserved_bytes >= 0) assert_true(after.reserved_bytes <= before.reserved_bytes);
    /* And the allocator carries on. */
    void *p = vl_allocate(a, 64u << 20, NULL);
    assert_non_null(p);
    vl_deallocate(a, p, 64u << 20, NULL);
    assert_int_equal(cudaFree(ballast), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    vl_alloc_close(a);
    vl_device_close(d);
}

static void test_raw_oom_report(void **state)
{
    (void)state;
    oom_report_probe("raw");
}

static void test_async_oom_report(void **state)
{
    (void)state;
    oom_report_probe("async");
}

VL_TEST_MAIN(cmocka_unit_test(test_raw), cmocka_unit_test(test_async_default_pool),
             cmocka_unit_test(test_async_private_trim_and_record_use), cmocka_unit_test(test_raw_oom_report),
             cmocka_unit_test(test_async_oom_report))
