/* lib/stats.h and lib/rng.h: order statistics and reproducible random numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "rng.h"
#include "stats.h"
#include "support/test_main.h"

static void test_summary(void **state)
{
    (void)state;
    double x[101];
    for (int i = 0; i <= 100; i++) x[i] = 100 - i; /* 100..0, unsorted on purpose */
    vl_summary s = vl_summarize(x, 101);
    assert_int_equal(s.n, 101);
    assert_true(s.min == 0 && s.max == 100);
    assert_true(s.median == 50);
    assert_true(s.p1 == 1 && s.p99 == 99);
    assert_true(s.p25 == 25 && s.p75 == 75 && s.iqr == 50);
    assert_true(s.mean == 50);
}

static void test_summary_interpolates(void **state)
{
    (void)state;
    double x[] = {4, 1, 3, 2};
    vl_summary s = vl_summarize(x, 4);
    assert_true(fabs(s.median - 2.5) < 1e-12);
    assert_true(fabs(s.p25 - 1.75) < 1e-12);
}

static void test_summary_empty(void **state)
{
    (void)state;
    vl_summary s = vl_summarize(NULL, 0);
    assert_int_equal(s.n, 0);
    assert_true(isnan(s.median));
}

/* A span the clock could not measure gives an unknown rate, never 0 (or infinity). */
static void test_rate_unknown_without_time(void **state)
{
    (void)state;
    assert_true(isnan(vl_rate(12, 0)));
    assert_true(isnan(vl_rate(0, 0)));
    assert_true(isnan(vl_rate(12, -1e-9)));
    assert_true(isnan(vl_rate(12, NAN)));
    assert_float_equal(vl_rate(12, 0.5), 24, 1e-12);
    assert_float_equal(vl_rate(0, 2), 0, 0);
}

static void test_columns_match_values(void **state)
{
    (void)state;
    char cols[512], vals[512];
    double x[] = {1, 2, 3};
    vl_summary s = vl_summarize(x, 3);
    vl_summary_columns("alloc", "ns", cols, sizeof cols);
    vl_summary_values(&s, vals, sizeof vals);
    int ncols = 1, nvals = 1;
    for (char *c = cols; *c; c++) ncols += *c == ',';
    for (char *c = vals; *c; c++) nvals += *c == ',';
    assert_int_equal(ncols, nvals);
    assert_non_null(strstr(cols, "alloc_median_ns"));
}

/* Nothing measured (a trace with no frees: replay's free_* columns): n is 0 and every
 * statistic an empty field, as lib/csv.h promises for unknown values, never "nan". */
static void test_values_of_no_samples_are_empty(void **state)
{
    (void)state;
    char vals[512];
    vl_summary s = vl_summarize(NULL, 0);
    assert_string_equal(vl_summary_values(&s, vals, sizeof vals), "0,,,,,,,,");
    double x[] = {5};
    s = vl_summarize(x, 1);
    assert_string_equal(vl_summary_values(&s, vals, sizeof vals), "1,5,5,5,5,5,5,5,0");
}

static void test_rng_reproducible(void **state)
{
    (void)state;
    vl_rng a, b;
    vl_rng_seed(&a, 7);
    vl_rng_seed(&b, 7);
    for (int i = 0; i < 1000; i++) assert_true(vl_rng_next(&a) == vl_rng_next(&b));
    vl_rng_seed(&b, 8);
    assert_true(vl_rng_next(&a) != vl_rng_next(&b));
}

static void test_rng_ranges(void **state)
{
    (void)state;
    vl_rng r;
    vl_rng_seed(&r, 1);
    int seen[10] = {0};
    for (int i = 0; i < 100000; i++) {
        uint64_t v = vl_rng_below(&r, 10);
        assert_true(v < 10);
        seen[v]++;
        double u = vl_rng_unit(&r);
        assert_true(u >= 0 && u < 1);
        uint64_t l = vl_rng_log_uniform(&r, 512, 4u << 20);
        assert_true(l >= 512 && l <= (4u << 20));
    }
    for (int i = 0; i < 10; i++) assert_true(seen[i] > 9000 && seen[i] < 11000);
}

VL_TEST_MAIN(cmocka_unit_test(test_summary), cmocka_unit_test(test_summary_interpolates),
             cmocka_unit_test(test_summary_empty),
             cmocka_unit_test(test_rate_unknown_without_time), cmocka_unit_test(test_columns_match_values),
             cmocka_unit_test(test_values_of_no_samples_are_empty),
             cmocka_unit_test(test_rng_reproducible), cmocka_unit_test(test_rng_ranges))
