/* lib/scenario/size_ladder: ladders stop at the top without wrapping, repetition
 * counts stay inside their bounds, shares of free memory respect cap and granule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scenario/size_ladder.h"
#include "support/test_main.h"

static void test_ladder_is_geometric_and_inclusive(void **state)
{
    (void)state;
    uint64_t s[16];
    size_t n = vl_size_ladder(4096, 1 << 20, 4, s, 16);
    assert_int_equal(n, 5); /* 4K 16K 64K 256K 1M */
    assert_int_equal(s[0], 4096);
    assert_int_equal(s[4], 1 << 20);
    n = vl_size_ladder(1000, 7999, 2, s, 16);
    assert_int_equal(n, 3); /* 1000 2000 4000 */
    assert_int_equal(s[2], 4000);
}

static void test_ladder_rejects_bad_input_and_respects_max(void **state)
{
    (void)state;
    uint64_t s[4];
    assert_int_equal(vl_size_ladder(0, 100, 2, s, 4), 0);
    assert_int_equal(vl_size_ladder(200, 100, 2, s, 4), 0);
    assert_int_equal(vl_size_ladder(1, 100, 1, s, 4), 0);
    assert_int_equal(vl_size_ladder(1, 1 << 20, 2, s, 4), 4);
    assert_int_equal(s[3], 8);
}

static void test_ladder_does_not_wrap_at_the_top(void **state)
{
    (void)state;
    uint64_t s[80];
    size_t n = vl_size_ladder(UINT64_C(1) << 60, UINT64_MAX, 4, s, 80);
    assert_int_equal(n, 2); /* 2^60, 2^62; 2^64 would wrap to 0 */
    assert_true(s[1] == UINT64_C(1) << 62);
}

static void test_reps_bounded(void **state)
{
    (void)state;
    assert_int_equal(vl_reps_for_size(1 << 20, 64 << 20, 3, 50), 50);
    assert_int_equal(vl_reps_for_size(1 << 20, 16 << 20, 3, 50), 16);
    assert_int_equal(vl_reps_for_size(UINT64_C(1) << 30, 16 << 20, 3, 50), 3);
    assert_int_equal(vl_reps_for_size(0, 16 << 20, 3, 50), 50);
    assert_int_equal(vl_reps_for_size(1, 10, 0, 0), 1); /* min clamps to 1, max to min */
}

static void test_share_of_free(void **state)
{
    (void)state;
    const uint64_t MiB = 1 << 20;
    assert_true(vl_share_of_free(1000 * MiB, 0.5, 0, 2 * MiB) == 500 * MiB);
    assert_true(vl_share_of_free(1001 * MiB, 0.5, 0, 2 * MiB) == 500 * MiB); /* rounded down */
    assert_true(vl_share_of_free(1000 * MiB, 0.5, 256 * MiB, 2 * MiB) == 256 * MiB);
    assert_true(vl_share_of_free(1000 * MiB, 2.0, 0, 1) == 1000 * MiB);
    assert_true(vl_share_of_free(1 * MiB, 0.5, 0, 2 * MiB) == 0);
    assert_true(vl_share_of_free(1000 * MiB, 0, 0, 1) == 0);
    assert_true(vl_share_of_free(1000, 0.5, 0, 0) == 500);
}

VL_TEST_MAIN(cmocka_unit_test(test_ladder_is_geometric_and_inclusive),
             cmocka_unit_test(test_ladder_rejects_bad_input_and_respects_max),
             cmocka_unit_test(test_ladder_does_not_wrap_at_the_top), cmocka_unit_test(test_reps_bounded),
             cmocka_unit_test(test_share_of_free))
