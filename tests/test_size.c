/* lib/size.h: sizes as people write them, and everything else rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "size.h"
#include "support/test_main.h"

static uint64_t parse_ok(const char *text)
{
    uint64_t v = 0;
    char err[160] = "";
    assert_int_equal(vl_parse_size(text, &v, err, sizeof err), 0);
    return v;
}

static void parse_bad(const char *text, const char *why)
{
    uint64_t v = 12345;
    char err[160] = "";
    assert_int_equal(vl_parse_size(text, &v, err, sizeof err), -1);
    assert_int_equal(v, 12345); /* untouched on error */
    assert_non_null(strstr(err, why));
}

static void test_units(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("512"), 512);
    assert_int_equal(parse_ok("512B"), 512);
    assert_int_equal(parse_ok("4KiB"), 4096);
    assert_int_equal(parse_ok("4k"), 4096);
    assert_int_equal(parse_ok("2MiB"), 2u << 20);
    assert_int_equal(parse_ok("2MB"), 2u << 20);
    assert_int_equal(parse_ok("1.5GiB"), 3ull << 29);
    assert_int_equal(parse_ok("8GiB"), 8ull << 30);
    assert_int_equal(parse_ok("1TiB"), 1ull << 40);
    assert_int_equal(parse_ok("0"), 0);
    assert_int_equal(parse_ok(".5KiB"), 512);
}

static void test_rejects(void **state)
{
    (void)state;
    parse_bad("", "empty");
    parse_bad("-1", "not a number");
    parse_bad("abc", "not a number");
    parse_bad("4XB", "unknown unit");
    parse_bad("4 KiB", "unknown unit");
    parse_bad("1e3", "unknown unit");
    parse_bad("0.1KiB", "whole number");
    parse_bad("99999999999999999999", "too large");
    parse_bad("5000000TiB", "too large");
}

static void test_format(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(vl_format_size(512, buf, sizeof buf), "512 B");
    assert_string_equal(vl_format_size(3ull << 29, buf, sizeof buf), "1.50 GiB");
    assert_string_equal(vl_format_size(20u << 20, buf, sizeof buf), "20.0 MiB");
    assert_string_equal(vl_format_size(143771ull << 20, buf, sizeof buf), "140 GiB");
}

VL_TEST_MAIN(cmocka_unit_test(test_units), cmocka_unit_test(test_rejects), cmocka_unit_test(test_format))
