/* The PyTorch pluggable-allocator entry points (lib/torch/vramlab_caching.h) called
 * the way PyTorch calls them: argument checks (no GPU needed), concurrent first use
 * of a device from many threads (one allocator opened), memory that round-trips data,
 * statistics by name, record_stream and trim, and paired mode (two allocators in one
 * process, each free routed to the block's maker). Built by mk/torch.mk into
 * build/tests/test_torch_plugin; the GPU tests are skipped without a CUDA device. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuda/gpu.h"
#include "torch/vramlab_caching.h"

#define SPEC "caching:segments=expandable"
#define THREADS 8

static void skip_without_gpu(void)
{
    char why[256];
    if (!vl_cuda_available(why, sizeof why)) {
        print_message("%s\n", why);
        skip();
    }
}

/* Runs first: nothing is open yet. */
static void test_arguments_checked_before_any_device_work(void **state)
{
    (void)state;
    assert_string_equal(vl_torch_spec(), "");
    assert_null(vl_alloc(0, 0, NULL));
    assert_null(vl_alloc(-4096, 0, NULL));
    assert_null(vl_alloc(4096, -1, NULL));
    assert_null(vl_alloc(4096, 64, NULL));
    vl_free(NULL, 4096, 0, NULL);
    assert_int_equal(vl_torch_stat(0, "allocs"), -1);
    assert_int_equal(vl_torch_stat(-1, "allocs"), -1);
    assert_int_equal(vl_torch_stat(0, "alloc_ns"), -1);
    assert_int_equal(vl_torch_trim(-1), 0);
    assert_int_equal(vl_torch_record_stream((void *)4096, 0, NULL), -1);
    char report[64] = "x";
    assert_int_equal(vl_torch_last_oom_report(0, 0, report, sizeof report), -1); /* no allocator yet */
    assert_string_equal(report, "");
    assert_int_equal(vl_torch_last_oom_report(0, 2, report, sizeof report), -1);
    assert_int_equal(vl_torch_last_oom_report(-1, 0, report, sizeof report), -1);
    assert_int_equal(vl_torch_last_oom_report(0, 0, NULL, 0), -1);
    assert_string_equal(vl_torch_spec(), ""); /* still nothing opened */
}

/* A SPEC of another backend is refused, and the host process lives on: only the caching
 * allocator and the rmm peer report every failure through return values. In a child,
 * so that this process's allocator is still unopened for the tests after it. An rmm
 * SPEC whose shim is missing fails the same way (here, VL_PEER_DIR names no shim). */
static void test_other_backends_refused_without_ending_the_process(void **state)
{
    (void)state;
    const char *others[] = {"async", "raw", "plugin:x.so", "torch", "rmm:pool"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            setenv("VRAMLAB_ALLOC", others[i], 1);
            setenv("VL_PEER_DIR", "/nonexistent/vramlab-peers", 1);
            _exit(vl_alloc(4096, 0, NULL) == NULL && vl_alloc(4096, 0, NULL) == NULL ? 0 : 1);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

#define CHILD_NO_GPU 77

/* Runs a check in a child, whose allocators are still unopened (the parent's are
 * opened later, and the parent must not touch CUDA before it forks), and expects it
 * to exit 0; CHILD_NO_GPU skips the test. */
static void in_child(int (*check)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(check());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == CHILD_NO_GPU) {
        print_message("no CUDA device (checked in the child)\n");
        skip();
    }
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Exit status: the number of the first failed step, 0 when all held. */
static int serve_b_needs_the_setting(void)
{
    if (vl_torch_serve(2) != -1 || vl_torch_serve(-1) != -1) return 1;
    if (vl_torch_serve(1) != -1) return 2; /* VRAMLAB_ALLOC_B unset */
    if (vl_torch_serve(0) != 0) return 3;
    if (strcmp(vl_torch_spec_b(), "") != 0) return 4;
    return 0;
}

static int paired_mode_routes_each_block_to_its_maker(void)
{
    char why[256];
    if (!vl_cuda_available(why, sizeof why)) return CHILD_NO_GPU;
    setenv("VRAMLAB_ALLOC_B", "caching", 1);
    if (vl_torch_serve(1) != 0) return 1;
    if (strcmp(vl_torch_spec_b(), "caching") != 0) return 2;
    void *b1 = vl_alloc(4096, 0, NULL), *b2 = vl_alloc(3 << 20, 0, NULL);
    if (vl_torch_serve(0) != 0) return 3;
    void *a1 = vl_alloc(4096, 0, NULL);
    if (!b1 || !b2 || !a1) return 4;
    if (vl_torch_stat(0, "allocs") != 1 || vl_torch_stat(0, "b.allocs") != 2) return 5;
    if (vl_torch_stat(0, "b.alloc_ns") <= 0 || vl_torch_stat(0, "alloc_ns") <= 0) return 6;
    cudaStream_t other;
    if (cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking) != cudaSuccess) return 7;
    if (vl_torch_record_stream(b2, 0, other) != 0) return 8; /* B's block, served by A now */
    /* Frees go to the maker, whichever serves now. */
    vl_free(b1, 4096, 0, NULL);
    vl_free(b2, 3 << 20, 0, NULL);
    if (vl_torch_stat(0, "b.frees") != 2 || vl_torch_stat(0, "frees") != 0) return 9;
    vl_free(a1, 4096, 0, NULL);
    if (vl_torch_stat(0, "frees") != 1 || vl_torch_stat(0, "allocated_bytes") != 0 ||
        vl_torch_stat(0, "b.allocated_bytes") != 0)
        return 10;
    int x;
    vl_free(&x, 4, 0, NULL); /* made by neither: a message, nothing else */
    if (cudaDeviceSynchronize() != cudaSuccess || cudaStreamDestroy(other) != cudaSuccess) return 11;
    return 0;
}

static int serve_b_with_the_setting(void)
{
    setenv("VRAMLAB_ALLOC_B", "caching:segments=expandable", 1);
    if (vl_torch_serve(1) != 0) return 1;
    if (strcmp(vl_torch_spec_b(), "caching:segments=expandable") != 0) return 2;
    if (vl_torch_stat(0, "b.allocs") != -1) return 3; /* nothing opened yet */
    return 0;
}

static void test_paired_mode_settings(void **state)
{
    (void)state;
    in_child(serve_b_needs_the_setting);
    in_child(serve_b_with_the_setting);
}

static void test_paired_mode_routes_frees(void **state)
{
    (void)state;
    in_child(paired_mode_routes_each_block_to_its_maker);
}

static pthread_barrier_t start_together;

static void *first_use(void *arg)
{
    pthread_barrier_wait(&start_together);
    void **slot = arg;
    *slot = vl_alloc(4096, 0, NULL);
    return NULL;
}

static void test_concurrent_first_use_opens_one_allocator(void **state)
{
    (void)state;
    skip_without_gpu();
    pthread_t threads[THREADS];
    void *ptrs[THREADS] = {0};
    pthread_barrier_init(&start_together, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&threads[i], NULL, first_use, &ptrs[i]), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start_together);

    assert_string_equal(vl_torch_spec(), SPEC);
    for (int i = 0; i < THREADS; i++) {
        assert_non_null(ptrs[i]);
        for (int j = 0; j < i; j++) assert_ptr_not_equal(ptrs[i], ptrs[j]);
    }
    /* All eight went through one allocator: it counted every one. */
    assert_int_equal(vl_torch_stat(0, "allocs"), THREADS);
    for (int i = 0; i < THREADS; i++) vl_free(ptrs[i], 4096, 0, NULL);
    assert_int_equal(vl_torch_stat(0, "frees"), THREADS);
    assert_int_equal(vl_torch_stat(0, "allocated_bytes"), 0);
    /* The reclaim budget's figures are known for a caching SPEC, every name of them. */
    const char *budget_stats[] = {"budget_ppm", "relocation_maps_hidden", "relocation_maps_exposed",
                                  "relocation_map_ns", "relocation_exposed_ns", "relocation_unmap_ns"};
    for (size_t i = 0; i < sizeof budget_stats / sizeof *budget_stats; i++)
        assert_true(vl_torch_stat(0, budget_stats[i]) >= 0);
    assert_int_equal(vl_torch_stat(0, "relocation_nonsense"), -1);
}

static void test_memory_round_trips_and_stats_add_up(void **state)
{
    (void)state;
    skip_without_gpu();
    const size_t n = (size_t)3 << 20;
    cudaStream_t s;
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    vl_torch_reset_peaks(0);
    unsigned char *p = vl_alloc((ssize_t)n, 0, s);
    assert_non_null(p);
    VL_CUDA_CHECK(cudaMemsetAsync(p, 0xab, n, s));
    unsigned char *host = malloc(n);
    assert_non_null(host);
    VL_CUDA_CHECK(cudaMemcpyAsync(host, p, n, cudaMemcpyDeviceToHost, s));
    VL_CUDA_CHECK(cudaStreamSynchronize(s));
    for (size_t i = 0; i < n; i += 4093) assert_int_equal(host[i], 0xab);
    free(host);

    assert_true(vl_torch_stat(0, "allocated_bytes") >= (int64_t)n);
    assert_true(vl_torch_stat(0, "reserved_bytes") >= vl_torch_stat(0, "allocated_bytes"));
    assert_int_equal(vl_torch_stat(0, "no_such_statistic"), -1);
    assert_int_equal(vl_torch_stat(0, NULL), -1);
    /* VRAMLAB_TIME=1 (main): the time spent in the entry points is counted. */
    int64_t alloc_ns = vl_torch_stat(0, "alloc_ns"), free_ns = vl_torch_stat(0, "free_ns");
    assert_true(alloc_ns > 0);
    assert_true(free_ns >= 0);

    /* PyTorch's record_stream: reuse after the free waits for the other stream. */
    cudaStream_t other;
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    assert_int_equal(vl_torch_record_stream(p, 0, other), 0);
    vl_free(p, (ssize_t)n, 0, s);
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    assert_true(vl_torch_stat(0, "peak_allocated_bytes") >= (int64_t)n);
    assert_true(vl_torch_stat(0, "free_ns") > free_ns);

    /* An OOM: NULL, and its report is there to read. */
    char report[4096];
    assert_int_equal(vl_torch_last_oom_report(0, 0, report, sizeof report), 0);
    assert_null(vl_alloc((ssize_t)1 << 50, 0, s));
    assert_int_equal(vl_torch_last_oom_report(0, 0, report, sizeof report), 1);
    assert_non_null(strstr(report, "oom_report: " SPEC "\nrequest_bytes: 1125899906842624 ("));
    assert_non_null(strstr(report, "\nfits_after_release: no ("));
    assert_null(strstr(report, "device_total_bytes: unknown"));

    /* Nothing is live: trim gives every cached byte back. */
    unsigned char *again = vl_alloc(512, 0, s); /* lets the allocator collect completed events */
    vl_free(again, 512, 0, s);
    assert_int_equal(vl_torch_stat(0, "allocated_bytes"), 0);
    assert_true(vl_torch_trim(0) > 0);
    assert_int_equal(vl_torch_stat(0, "reserved_bytes"), 0);
    VL_CUDA_CHECK(cudaStreamDestroy(other));
    VL_CUDA_CHECK(cudaStreamDestroy(s));
}

int main(void)
{
    setenv("VRAMLAB_ALLOC", SPEC, 1);
    setenv("VRAMLAB_TIME", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arguments_checked_before_any_device_work),
        cmocka_unit_test(test_other_backends_refused_without_ending_the_process),
        cmocka_unit_test(test_paired_mode_settings),
        cmocka_unit_test(test_paired_mode_routes_frees),
        cmocka_unit_test(test_concurrent_first_use_opens_one_allocator),
        cmocka_unit_test(test_memory_round_trips_and_stats_add_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
