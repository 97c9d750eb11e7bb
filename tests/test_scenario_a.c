/* Unit tests for the helpers of scenarios 1-4 (lib/scenario/): the line fit and leak
 * verdict, the largest-fit bisection, and the training-loop model. The last two run
 * on the simulated device with the caching allocator, so no GPU is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "alloc.h"
#include "device.h"
#include "scenario/ballast.h"
#include "scenario/largest_alloc.h"
#include "scenario/leak_fit.h"
#include "scenario/mem_sample.h"
#include "scenario/train_model.h"

/* ---- line fit and verdict ------------------------------------------------------- */

static void fit_recovers_an_exact_line(void **state)
{
    (void)state;
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = i + 3;
        y[i] = 4096.0 * (i + 3) + 1e9; /* 4 KiB per iteration on top of 1 GB */
    }
    vl_line_fit f = vl_line_fit_xy(x, y, 10);
    assert_true(fabs(f.slope - 4096.0) < 1e-6);
    assert_true(fabs(f.intercept - 1e9) < 1e-3);
    assert_true(f.r2 > 0.999999);
    assert_int_equal(vl_leak_verdict_of(&f, 1.0, VL_LEAK_MIN_R2), VL_LEAK);
    /* 1 MiB of headroom at 4 KiB per iteration: 256 iterations. */
    assert_true(fabs(vl_iterations_until(&f, 1 << 20) - 256.0) < 1e-9);
}

static void flat_memory_is_bounded(void **state)
{
    (void)state;
    double x[8], y[8];
    for (int i = 0; i < 8; i++) {
        x[i] = i;
        y[i] = 123456789.0;
    }
    vl_line_fit f = vl_line_fit_xy(x, y, 8);
    assert_true(f.slope == 0.0);
    assert_true(f.r2 == 1.0);
    assert_int_equal(vl_leak_verdict_of(&f, 1.0, VL_LEAK_MIN_R2), VL_BOUNDED);
    assert_true(vl_iterations_until(&f, 1e9) < 0);
    assert_string_equal(vl_leak_verdict_name(VL_BOUNDED), "bounded");
}

static void sawtooth_is_bounded(void **state)
{
    (void)state;
    /* Memory grows within each epoch of 10 and is given back at its end: 6 epochs. */
    double x[60], y[60];
    for (int i = 0; i < 60; i++) {
        x[i] = i;
        y[i] = 1e9 + 1e6 * (i % 10);
    }
    vl_line_fit f = vl_line_fit_xy(x, y, 60);
    assert_true(f.r2 < 0.1);
    assert_int_equal(vl_leak_verdict_of(&f, 1.0, VL_LEAK_MIN_R2), VL_BOUNDED);
}

static void slow_steady_leak_is_a_leak(void **state)
{
    (void)state;
    /* 512 B per iteration (one kept loss tensor) on top of 10 GB: still a leak. */
    double x[40], y[40];
    for (int i = 0; i < 40; i++) {
        x[i] = i;
        y[i] = 1e10 + 512.0 * i;
    }
    vl_line_fit f = vl_line_fit_xy(x, y, 40);
    assert_true(fabs(f.slope - 512.0) < 1e-3);
    assert_int_equal(vl_leak_verdict_of(&f, 1.0, VL_LEAK_MIN_R2), VL_LEAK);
}

static void too_few_points_give_no_verdict(void **state)
{
    (void)state;
    double x[2] = {0, 1}, y[2] = {0, 1e9};
    vl_line_fit f = vl_line_fit_xy(x, y, 2);
    assert_true(f.slope == 1e9);
    assert_int_equal(vl_leak_verdict_of(&f, 1.0, VL_LEAK_MIN_R2), VL_BOUNDED);
    vl_line_fit none = vl_line_fit_xy(x, y, 0);
    assert_int_equal(none.n, 0);
    assert_true(none.slope == 0.0);
    double same_x[3] = {5, 5, 5}, ys[3] = {1, 2, 3};
    vl_line_fit vertical = vl_line_fit_xy(same_x, ys, 3);
    assert_true(vertical.slope == 0.0 && vertical.r2 == 0.0);
}

/* ---- largest fit -------------------------------------------------------------- */

typedef struct threshold {
    size_t limit;
    size_t calls;
} threshold;

static int below_limit(void *ctx, size_t bytes)
{
    threshold *t = ctx;
    t->calls++;
    return bytes <= t->limit;
}

static void bisection_finds_the_threshold(void **state)
{
    (void)state;
    threshold t = {.limit = 1000 * 4096 + 17, .calls = 0};
    vl_largest_alloc r = vl_largest_fit(1 << 30, 4096, below_limit, &t);
    assert_int_equal(r.largest_bytes, 1000 * 4096);
    assert_int_equal(r.probes, t.calls);
    assert_true(r.failures >= 1 && r.failures < r.probes);
    assert_true(r.probes <= 20); /* log2(2^18) + the first try at the top */

    threshold all = {.limit = SIZE_MAX, .calls = 0};
    r = vl_largest_fit(10 * 4096, 4096, below_limit, &all);
    assert_int_equal(r.largest_bytes, 10 * 4096);
    assert_int_equal(r.probes, 1);

    threshold nothing = {.limit = 100, .calls = 0};
    r = vl_largest_fit(10 * 4096, 4096, below_limit, &nothing);
    assert_int_equal(r.largest_bytes, 0);
    assert_int_equal(r.failures, r.probes);
}

static void a_good_guess_costs_two_probes(void **state)
{
    (void)state;
    size_t res = 4096, limit = 1000 * 4096 + 17;
    threshold t = {.limit = limit, .calls = 0};
    vl_largest_alloc r = vl_largest_fit_near(1 << 30, res, 1000 * 4096, below_limit, &t);
    assert_int_equal(r.largest_bytes, 1000 * 4096);
    assert_int_equal(r.probes, 2);

    /* Guesses too high, too low, at the ends: the answer is the same. */
    size_t guesses[] = {0, 1, 999 * 4096, 1001 * 4096, 5000 * 4096, (size_t)1 << 30, (size_t)1 << 40};
    for (size_t i = 0; i < sizeof guesses / sizeof guesses[0]; i++) {
        threshold u = {.limit = limit, .calls = 0};
        r = vl_largest_fit_near(1 << 30, res, guesses[i], below_limit, &u);
        assert_int_equal(r.largest_bytes, 1000 * 4096);
        assert_true(r.probes <= 40);
    }
    threshold nothing = {.limit = 100, .calls = 0};
    r = vl_largest_fit_near(1 << 20, res, 64 * 4096, below_limit, &nothing);
    assert_int_equal(r.largest_bytes, 0);
    threshold all = {.limit = SIZE_MAX, .calls = 0};
    r = vl_largest_fit_near(1 << 20, res, 64 * 4096, below_limit, &all);
    assert_int_equal(r.largest_bytes, 1 << 20);
}

typedef struct sim_fixture {
    vl_device *dev;
    vl_allocator *alloc;
} sim_fixture;

static int sim_setup(void **state)
{
    static sim_fixture fx;
    char err[256];
    int status;
    fx.dev = vl_device_open("sim:capacity=1GiB", &status, err, sizeof err);
    if (!fx.dev) return -1;
    fx.alloc = vl_alloc_open("caching", fx.dev, &status, err, sizeof err);
    if (!fx.alloc) return -1;
    *state = &fx;
    return 0;
}

static int sim_teardown(void **state)
{
    sim_fixture *fx = *state;
    vl_alloc_close(fx->alloc);
    vl_device_close(fx->dev);
    return 0;
}

static void probe_sees_what_live_blocks_leave(void **state)
{
    sim_fixture *fx = *state;
    size_t res = 2u << 20;
    vl_largest_alloc empty = vl_largest_alloc_probe(fx->alloc, NULL, 1u << 30, res);
    assert_true(empty.largest_bytes > (900u << 20)); /* nearly all of the 1 GiB */
    void *hold = vl_allocate(fx->alloc, 512u << 20, NULL);
    assert_non_null(hold);
    vl_largest_alloc busy = vl_largest_alloc_probe(fx->alloc, NULL, 1u << 30, res);
    assert_true(busy.largest_bytes <= (512u << 20));
    assert_true(busy.largest_bytes > (400u << 20));
    vl_deallocate(fx->alloc, hold, 512u << 20, NULL);
    vl_trim(fx->alloc);
}

/* ---- working set ------------------------------------------------------------------ */

static void quick_runs_cap_the_working_set(void **state)
{
    (void)state;
    assert_int_equal(vl_working_set(0, 0), 0);
    assert_int_equal(vl_working_set(16ull << 30, 0), 16ull << 30);
    assert_int_equal(vl_working_set(0, 1), VL_QUICK_WORKING_SET);
    assert_int_equal(vl_working_set(16ull << 30, 1), VL_QUICK_WORKING_SET);
    assert_int_equal(vl_working_set(1ull << 30, 1), 1ull << 30);
}

static size_t sim_free(vl_device *d)
{
    size_t free_b = 0, total = 0;
    assert_int_equal(d->ops->mem_info(d, &free_b, &total), VL_DEV_OK);
    return free_b;
}

static void ballast_leaves_the_working_set_free(void **state)
{
    sim_fixture *fx = *state;
    size_t before = sim_free(fx->dev);
    vl_ballast b;
    size_t left = vl_ballast_take(&b, fx->dev, 256u << 20);
    assert_int_equal(left, sim_free(fx->dev));
    assert_true(left >= (256u << 20) && left < (256u << 20) + (64u << 20));
    /* The allocator now sees a device of about 256 MiB. */
    assert_null(vl_allocate(fx->alloc, 512u << 20, NULL));
    vl_ballast_release(&b);
    assert_int_equal(sim_free(fx->dev), before);
    vl_ballast_release(&b); /* twice is harmless */

    vl_ballast none;
    assert_int_equal(vl_ballast_take(&none, fx->dev, 0), before);
    assert_null(none.ptr);
    assert_int_equal(vl_ballast_take(&none, fx->dev, before * 2), before);
    assert_null(none.ptr);
    vl_trim(fx->alloc);
}

static void memory_sample_reads_allocator_and_device(void **state)
{
    sim_fixture *fx = *state;
    vl_mem_sample before, during;
    vl_mem_sample_take(fx->alloc, &before);
    void *p = vl_allocate(fx->alloc, 64u << 20, NULL);
    assert_non_null(p);
    vl_mem_sample_take(fx->alloc, &during);
    assert_int_equal(during.allocated_bytes - before.allocated_bytes, 64u << 20);
    assert_true(during.reserved_bytes >= during.allocated_bytes);
    assert_true(during.device_used_bytes - before.device_used_bytes >= (int64_t)(64u << 20));
    assert_int_equal(during.device_used_bytes + during.device_free_bytes, (int64_t)fx->dev->total_bytes);
    assert_int_equal(vl_mem_sample_held(&during), during.reserved_bytes);
    vl_deallocate(fx->alloc, p, 64u << 20, NULL);
    vl_trim(fx->alloc);

    /* Unknown statistics print as empty fields; held falls back to the device's view. */
    vl_mem_sample unknown = {VL_UNKNOWN, VL_UNKNOWN, VL_UNKNOWN, VL_UNKNOWN, VL_UNKNOWN, 5, 7, 0};
    char buf[256];
    assert_string_equal(vl_mem_sample_values(&unknown, buf, sizeof buf), ",,,,,5,7");
    assert_int_equal(vl_mem_sample_held(&unknown), 5);
}

/* ---- training-loop model ---------------------------------------------------------- */

static int64_t allocated(vl_allocator *a)
{
    vl_mem_sample m;
    vl_mem_sample_take(a, &m);
    return m.allocated_bytes;
}

static void a_full_step_returns_to_the_parameters_and_gradients(void **state)
{
    sim_fixture *fx = *state;
    vl_train_shape shape = {.layers = 4, .activation_bytes_per_sample = 1 << 20, .param_bytes = 2 << 20,
                            .loss_bytes = 4};
    vl_train_model m;
    int64_t base = allocated(fx->alloc);
    assert_int_equal(vl_train_open(&m, fx->alloc, NULL, &shape), 0);
    int64_t with_params = allocated(fx->alloc);
    assert_true(with_params - base >= 4 * (2 << 20));

    vl_train_graph g;
    assert_int_equal(vl_train_forward(&m, 8, &g), 0);
    assert_int_equal(vl_train_graph_bytes(&g, &m), 4 * 8 * (1 << 20) + 4);
    assert_int_equal(vl_train_backward(&m, &g), 0);
    /* backward freed the saved activations; the loss is still held */
    assert_int_equal(vl_train_graph_bytes(&g, &m), 4);
    vl_train_release(&m, &g);
    assert_int_equal(vl_train_graph_bytes(&g, &m), 0);
    int64_t with_grads = allocated(fx->alloc);
    assert_true(with_grads - with_params >= 4 * (2 << 20));

    /* A second step without zero_grad accumulates in place: nothing new stays. */
    assert_int_equal(vl_train_forward(&m, 8, &g), 0);
    assert_int_equal(vl_train_backward(&m, &g), 0);
    vl_train_release(&m, &g);
    assert_int_equal(allocated(fx->alloc), with_grads);

    vl_train_zero_grad(&m);
    assert_int_equal(allocated(fx->alloc), with_params);
    vl_train_close(&m);
    assert_int_equal(allocated(fx->alloc), base);
    vl_trim(fx->alloc);
}

static void an_oom_in_forward_leaves_nothing_behind(void **state)
{
    sim_fixture *fx = *state;
    /* 4 layers x 100 samples x 1 MiB = 400 MiB of activations per forward: the third
     * forward kept alive cannot fit in 1 GiB. */
    vl_train_shape shape = {.layers = 4, .activation_bytes_per_sample = 1 << 20, .param_bytes = 0, .loss_bytes = 4};
    vl_train_model m;
    assert_int_equal(vl_train_open(&m, fx->alloc, NULL, &shape), 0);
    int64_t base = allocated(fx->alloc);
    vl_train_graph kept[3];
    assert_int_equal(vl_train_forward(&m, 100, &kept[0]), 0);
    assert_int_equal(vl_train_forward(&m, 100, &kept[1]), 0);
    int64_t two = allocated(fx->alloc);
    assert_int_equal(vl_train_forward(&m, 100, &kept[2]), -1);
    assert_int_equal(allocated(fx->alloc), two);
    assert_int_equal(vl_train_graph_bytes(&kept[2], &m), 0);
    vl_train_release(&m, &kept[0]);
    vl_train_release(&m, &kept[1]);
    vl_train_release(&m, &kept[2]); /* an empty graph: releasing it is harmless */
    assert_int_equal(allocated(fx->alloc), base);
    vl_train_close(&m);
    vl_trim(fx->alloc);
}

int main(void)
{
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(fit_recovers_an_exact_line),
        cmocka_unit_test(flat_memory_is_bounded),
        cmocka_unit_test(sawtooth_is_bounded),
        cmocka_unit_test(slow_steady_leak_is_a_leak),
        cmocka_unit_test(too_few_points_give_no_verdict),
        cmocka_unit_test(bisection_finds_the_threshold),
        cmocka_unit_test(a_good_guess_costs_two_probes),
        cmocka_unit_test(quick_runs_cap_the_working_set),
    };
    const struct CMUnitTest on_sim[] = {
        cmocka_unit_test(probe_sees_what_live_blocks_leave),
        cmocka_unit_test(ballast_leaves_the_working_set_free),
        cmocka_unit_test(memory_sample_reads_allocator_and_device),
        cmocka_unit_test(a_full_step_returns_to_the_parameters_and_gradients),
        cmocka_unit_test(an_oom_in_forward_leaves_nothing_behind),
    };
    int failed = cmocka_run_group_tests_name("scenario_a helpers", pure, NULL, NULL);
    failed += cmocka_run_group_tests_name("scenario_a helpers on sim", on_sim, sim_setup, sim_teardown);
    return failed;
}
