/* lib/scenario/stall_probe on a real GPU (skipped without one): the call runs exactly
 * once, the busy kernel's device time is at least what was asked, and a call that
 * waits for the busy stream is seen waiting (its host time covers the kernel). No
 * speed targets: only "at least the requested time", which the spin kernel guarantees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cuda/gpu.h"
#include "scenario/stall_probe.h"
#include "support/test_main.h"

static int have_gpu(void)
{
    char why[256];
    return vl_cuda_available(why, sizeof why);
}

static void count_call(void *arg) { (*(int *)arg)++; }

static void test_call_runs_once_and_kernel_time_is_measured(void **state)
{
    (void)state;
    if (!have_gpu()) skip();
    vl_stall_probe p;
    vl_stall_probe_init(&p);
    int calls = 0;
    vl_stall s = vl_stall_measure(&p, 2000000, count_call, &calls); /* 2 ms */
    assert_int_equal(calls, 1);
    assert_true(s.kernel_ms >= 2.0 * 0.999); /* event resolution ~0.5 us */
    assert_true(s.call_ns >= 0);
    assert_true(s.ratio >= 0);
    vl_stall_probe_destroy(&p);
}

typedef struct { cudaStream_t busy; } wait_arg;

static void wait_for_busy(void *arg) { VL_CUDA_CHECK(cudaStreamSynchronize(((wait_arg *)arg)->busy)); }

static void test_a_waiting_call_covers_the_kernel(void **state)
{
    (void)state;
    if (!have_gpu()) skip();
    vl_stall_probe p;
    vl_stall_probe_init(&p);
    wait_arg a = {p.busy};
    vl_stall s = vl_stall_measure(&p, 5000000, wait_for_busy, &a); /* 5 ms */
    /* The host waited for the whole kernel, so its time is at least most of it (the
     * kernel may have started a little before the call). */
    assert_true(s.call_ns >= 0.9 * s.kernel_ms * 1e6);
    assert_true(s.ratio >= 0.9);
    vl_stall_probe_destroy(&p);
}

VL_TEST_MAIN(cmocka_unit_test(test_call_runs_once_and_kernel_time_is_measured),
             cmocka_unit_test(test_a_waiting_call_covers_the_kernel))
