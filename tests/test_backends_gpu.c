/* The raw and async backends on a real GPU (skipped without one): allocation,
 * statistics, OOM as NULL, trim, record_use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cuda_runtime.h>
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

VL_TEST_MAIN(cmocka_unit_test(test_raw), cmocka_unit_test(test_async_default_pool),
             cmocka_unit_test(test_async_private_trim_and_record_use))
