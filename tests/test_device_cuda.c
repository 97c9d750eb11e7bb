/* The `cuda` vl_device on a real GPU: open fills the description, plain and VMM
 * memory can be written and read back, out-of-memory is a result (VL_DEV_OOM) that
 * leaves the runtime usable, events report completion of the work before them.
 * Every test is skipped (not passed) on a machine without a CUDA device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuda/gpu.h"
#include "device.h"
#include "exitcodes.h"
#include "kernels/pattern.h"
#include "kernels/spin.h"
#include "support/test_main.h"

/* Opens through the cuda implementation itself (the unit under test); NULL with
 * *status set when status is given, else a failure. */
static vl_device *open_cuda(const char *spec, int *status)
{
    vl_spec parsed;
    char err[256] = "";
    int st = -1;
    if (vl_spec_parse(spec, vl_device_cuda_options, &parsed, err, sizeof err) != 0)
        fail_msg("vl_spec_parse(%s): %s", spec, err);
    vl_device *d = vl_device_cuda_open(&parsed, &st, err, sizeof err);
    if (status != NULL) {
        *status = st;
        if (d == NULL) print_message("%s\n", err);
        if (d == NULL && st == VL_EXIT_SKIP)
            assert_true(strncmp(err, "no GPU found (no CUDA driver / device): ", 40) == 0 ||
                        strncmp(err, "no CUDA device: device=", 23) == 0);
        return d;
    }
    if (d == NULL) fail_msg("vl_device_cuda_open(%s): status %d: %s", spec, st, err);
    return d;
}

static vl_device *open_or_skip(const char *spec)
{
    char why[256];
    if (!vl_cuda_available(why, sizeof why)) {
        print_message("%s\n", why);
        skip();
    }
    return open_cuda(spec, NULL);
}

/* The VMM tests: a GPU without the driver's virtual-memory API skips them. */
static vl_device *open_vmm_or_skip(void)
{
    vl_device *d = open_or_skip("cuda");
    if (!d->vmm_supported) {
        vl_device_close(d);
        print_message("this GPU has no VMM support\n");
        skip();
    }
    return d;
}

/* lib/device/cuda.c: the driver version string (runs without a GPU). */
void vl_cuda_driver_version_format(const char *module_text, int cuda_version, char *out, size_t len);

static void test_driver_version_format(void **state)
{
    (void)state;
    char v[32];
    vl_cuda_driver_version_format("580.159.04\n", 13000, v, sizeof v);
    assert_string_equal(v, "580.159.04 (CUDA 13.0)");
    vl_cuda_driver_version_format("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct 7 2025\n"
                                  "GCC version:  gcc version 13.3.0\n", 12080, v, sizeof v);
    assert_string_equal(v, "580.159.04 (CUDA 12.8)");
    vl_cuda_driver_version_format("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build",
                                  12080, v, sizeof v);
    assert_string_equal(v, "570.86.15 (CUDA 12.8)");
    vl_cuda_driver_version_format("", 13000, v, sizeof v); /* no kernel module text: the CUDA version alone */
    assert_string_equal(v, "13.0");
    vl_cuda_driver_version_format("1234567890.1234567890\n", 13000, v, sizeof v); /* too long: left out */
    assert_string_equal(v, "13.0");
}

static int is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

static void test_open_describes_the_device(void **state)
{
    (void)state;
    vl_device *d = open_or_skip("cuda");
    assert_string_equal(d->kind, "cuda");
    assert_int_equal(d->simulated, 0);
    assert_int_equal(d->ordinal, 0);
    assert_true(strlen(d->name) > 0);
    assert_true(d->total_bytes > ((size_t)1 << 30));
    assert_non_null(strchr(d->driver_version, '.'));
    /* With the kernel module's version: "580.159.04 (CUDA 13.0)". */
    if (access("/proc/driver/nvidia/version", R_OK) == 0 || access("/sys/module/nvidia/version", R_OK) == 0)
        assert_non_null(strstr(d->driver_version, " (CUDA "));
    assert_non_null(strchr(d->runtime_version, '.'));
    assert_true(is_power_of_two(d->granularity));
    assert_true(d->granularity >= 4096);
    size_t free_bytes = 0, total_bytes = 0;
    assert_int_equal(d->ops->mem_info(d, &free_bytes, &total_bytes), VL_DEV_OK);
    assert_true(free_bytes > 0 && free_bytes <= total_bytes);
    vl_device_close(d);
}

/* Without a GPU the reason says so plainly, not in the runtime's words about an
 * insufficient driver version. Nothing to check where a GPU is present. */
static void test_no_gpu_is_said_plainly(void **state)
{
    (void)state;
    char why[256] = "";
    if (vl_cuda_available(why, sizeof why)) skip();
    assert_true(strncmp(why, "no GPU found (no CUDA driver / device): ", 40) == 0);
    assert_null(strstr(why, "insufficient"));
}

static void test_missing_ordinal_is_a_skip(void **state)
{
    (void)state;
    char why[256];
    if (!vl_cuda_available(why, sizeof why)) skip();
    int status = -1;
    assert_null(open_cuda("cuda:device=4096", &status));
    assert_int_equal(status, VL_EXIT_SKIP);
}

/* Writes a pattern through the runtime and reads it back: the memory is real. */
static void check_round_trip(void *dev_ptr, size_t bytes)
{
    size_t n = bytes / sizeof(uint32_t);
    uint32_t *host = malloc(bytes);
    assert_non_null(host);
    for (size_t i = 0; i < n; i++) host[i] = (uint32_t)(i * 2654435761u);
    VL_CUDA_CHECK(cudaMemcpy(dev_ptr, host, bytes, cudaMemcpyHostToDevice));
    memset(host, 0, bytes);
    VL_CUDA_CHECK(cudaMemcpy(host, dev_ptr, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        if (host[i] != (uint32_t)(i * 2654435761u)) fail_msg("word %zu read back wrong", i);
    free(host);
}

static void test_plain_alloc_round_trip_and_oom(void **state)
{
    (void)state;
    vl_device *d = open_or_skip("cuda");
    size_t free_before = 0, free_after = 0, total = 0;
    assert_int_equal(d->ops->mem_info(d, &free_before, &total), VL_DEV_OK);

    void *p = NULL;
    const size_t bytes = (size_t)64 << 20;
    assert_int_equal(d->ops->mem_alloc(d, bytes, &p), VL_DEV_OK);
    assert_non_null(p);
    check_round_trip(p, bytes);
    assert_int_equal(d->ops->mem_info(d, &free_after, &total), VL_DEV_OK);
    assert_true(free_before - free_after >= bytes);
    assert_int_equal(d->ops->mem_free(d, p, bytes), VL_DEV_OK);

    /* Twice the device: an OOM result, and the runtime carries no sticky error. */
    void *huge = (void *)1;
    assert_int_equal(d->ops->mem_alloc(d, 2 * d->total_bytes, &huge), VL_DEV_OOM);
    assert_null(huge);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(d->ops->mem_alloc(d, 4096, &p), VL_DEV_OK);
    assert_int_equal(d->ops->mem_free(d, p, 4096), VL_DEV_OK);
    vl_device_close(d);
}

static void test_vmm_map_round_trip_and_release(void **state)
{
    (void)state;
    vl_device *d = open_vmm_or_skip();
    const size_t g = d->granularity;
    const size_t range = 8 * g;
    void *va = NULL;
    assert_int_equal(d->ops->va_reserve(d, range, &va), VL_DEV_OK);
    assert_non_null(va);
    assert_int_equal((uintptr_t)va % g, 0);

    size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
    assert_int_equal(d->ops->mem_info(d, &free0, &total), VL_DEV_OK);
    /* Two separate maps side by side make one contiguous, usable range. */
    char *base = va;
    assert_int_equal(d->ops->map(d, base, 2 * g), VL_DEV_OK);
    assert_int_equal(d->ops->map(d, base + 2 * g, 2 * g), VL_DEV_OK);
    check_round_trip(base, 4 * g);
    assert_int_equal(d->ops->mem_info(d, &free1, &total), VL_DEV_OK);
    assert_true(free0 - free1 >= 4 * g);

    /* Unmap gives the physical memory back at once. */
    assert_int_equal(d->ops->unmap(d, base + 2 * g, 2 * g), VL_DEV_OK);
    assert_int_equal(d->ops->unmap(d, base, 2 * g), VL_DEV_OK);
    assert_int_equal(d->ops->mem_info(d, &free2, &total), VL_DEV_OK);
    assert_true(free2 >= free1 + 4 * g);

    /* A mapping larger than the device is an OOM result and leaves the range usable. */
    void *big = NULL;
    size_t big_size = (2 * d->total_bytes + g - 1) / g * g;
    assert_int_equal(d->ops->va_reserve(d, big_size, &big), VL_DEV_OK);
    assert_int_equal(d->ops->map(d, big, big_size), VL_DEV_OOM);
    assert_int_equal(d->ops->va_release(d, big, big_size), VL_DEV_OK);
    assert_int_equal(d->ops->map(d, base, g), VL_DEV_OK);
    check_round_trip(base, g);
    assert_int_equal(d->ops->unmap(d, base, g), VL_DEV_OK);

    assert_int_equal(d->ops->va_release(d, va, range), VL_DEV_OK);
    vl_device_close(d);
}

static void test_vmm_disabled_by_option(void **state)
{
    (void)state;
    vl_device *d = open_or_skip("cuda:vmm=0");
    assert_int_equal(d->vmm_supported, 0);
    void *va = NULL;
    assert_int_equal(d->ops->va_reserve(d, d->granularity, &va), VL_DEV_UNSUPPORTED);
    vl_device_close(d);
}

static void test_event_completes_after_the_work_before_it(void **state)
{
    (void)state;
    vl_device *d = open_or_skip("cuda");
    cudaStream_t s;
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    vl_spin(s, 200u * 1000u * 1000u); /* 200 ms: the query below comes long before its end */
    vl_event e = NULL;
    assert_int_equal(d->ops->event_record(d, (vl_stream)s, &e), VL_DEV_OK);
    assert_int_equal(d->ops->event_query(d, e), 0);
    VL_CUDA_CHECK(cudaStreamSynchronize(s));
    assert_int_equal(d->ops->event_query(d, e), 1);
    d->ops->event_release(d, e);

    /* A pooled event is reused and records afresh. */
    vl_event again = NULL;
    assert_int_equal(d->ops->event_record(d, (vl_stream)s, &again), VL_DEV_OK);
    assert_ptr_equal(again, e);
    assert_int_equal(d->ops->synchronize(d), VL_DEV_OK);
    assert_int_equal(d->ops->event_query(d, again), 1);
    d->ops->event_release(d, again);
    VL_CUDA_CHECK(cudaStreamDestroy(s));
    vl_device_close(d);
}

/* Unmap waits for the owning stream only: a kernel on another stream does not hold it
 * up (waiting for the whole device stalled multi-stream loops on expandable segments). */
/* A caching allocator unmaps chunks whose blocks were freed in stream order: kernels
 * queued before the free may still use them. Unmap must wait for them (as cudaFree
 * does); if it did not, the fill below would fault with an illegal address. Runs
 * last: a fault would poison the context for any test after it. */
/* unmap does not wait (device.h): the caller unmaps only once an event recorded after
 * the last use completed. Kept memory (unmap_keep) mapped again elsewhere holds the
 * same bytes, and is given back by phys_release. */
static void test_unmap_after_event_and_remap_kept_memory(void **state)
{
    (void)state;
    vl_device *d = open_vmm_or_skip();
    const size_t g = d->granularity;
    void *va = NULL;
    assert_int_equal(d->ops->va_reserve(d, 2 * g, &va), VL_DEV_OK);
    char *a = va, *b = a + g;
    assert_int_equal(d->ops->map(d, a, g), VL_DEV_OK);
    cudaStream_t s;
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    vl_spin(s, 50u * 1000u * 1000u);
    vl_fill_iota_u32((uint32_t *)a, g / sizeof(uint32_t), 11u, s);
    vl_event e;
    assert_int_equal(d->ops->event_record(d, (vl_stream)s, &e), VL_DEV_OK);
    int done;
    while ((done = d->ops->event_query(d, e)) == 0) usleep(1000);
    assert_int_equal(done, 1);
    d->ops->event_release(d, e);
    vl_phys kept = NULL;
    assert_int_equal(d->ops->unmap_keep(d, a, g, &kept), VL_DEV_OK);
    assert_non_null(kept);
    assert_int_equal(d->ops->map_phys(d, b, g, kept), VL_DEV_OK);
    unsigned long long *bad = NULL;
    VL_CUDA_CHECK(cudaMallocManaged((void **)&bad, sizeof *bad, cudaMemAttachGlobal));
    *bad = 0;
    vl_count_mismatch_u32((const uint32_t *)b, g / sizeof(uint32_t), 11u, 1, bad, s);
    VL_CUDA_CHECK(cudaStreamSynchronize(s));
    assert_int_equal(*bad, 0); /* the same physical memory */
    VL_CUDA_CHECK(cudaFree(bad));
    assert_int_equal(d->ops->unmap_keep(d, b, g, &kept), VL_DEV_OK);
    assert_int_equal(d->ops->phys_release(d, kept, g), VL_DEV_OK);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(d->ops->va_release(d, va, 2 * g), VL_DEV_OK);
    VL_CUDA_CHECK(cudaStreamDestroy(s));
    vl_device_close(d);
}

/* The device reports failures, it never ends the process (it runs inside PyTorch through
 * the plugin): a refused call returns VL_DEV_ERROR and the device stays usable. */
static void test_failures_are_returned_not_exits(void **state)
{
    (void)state;
    vl_device *d = open_or_skip("cuda");
    int local = 0;
    assert_int_equal(d->ops->mem_free(d, &local, sizeof local), VL_DEV_ERROR); /* a host address */
    (void)cudaGetLastError();
    void *p = NULL;
    assert_int_equal(d->ops->mem_alloc(d, 4096, &p), VL_DEV_OK);
    assert_int_equal(d->ops->mem_free(d, p, 4096), VL_DEV_OK);
    assert_int_equal(d->ops->synchronize(d), VL_DEV_OK);
    vl_device_close(d);
}

VL_TEST_MAIN(cmocka_unit_test(test_driver_version_format), cmocka_unit_test(test_open_describes_the_device),
             cmocka_unit_test(test_no_gpu_is_said_plainly), cmocka_unit_test(test_missing_ordinal_is_a_skip), cmocka_unit_test(test_plain_alloc_round_trip_and_oom),
             cmocka_unit_test(test_vmm_map_round_trip_and_release), cmocka_unit_test(test_vmm_disabled_by_option),
             cmocka_unit_test(test_event_completes_after_the_work_before_it),
             cmocka_unit_test(test_unmap_after_event_and_remap_kept_memory),
             cmocka_unit_test(test_failures_are_returned_not_exits))
