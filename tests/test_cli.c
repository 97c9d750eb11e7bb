/* lib/cli.h: --quick applies each option's own rule from the table (no program clamps
 * by hand), and an enum option keeps the chosen name. Usage errors exit, so they are
 * covered by the bad-input table, not here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cli.h"

static int64_t reps, step;
static uint64_t max_size;
static const char *list, *dist;

static const vl_cli_opt options[] = {
    {"reps", VL_CLI_INT, &reps, "", 1, 1e7, VL_QUICK_AT_MOST, "40"},
    {"step", VL_CLI_INT, &step, "", 2, 1024, VL_QUICK_AT_LEAST, "16"},
    {"max-size", VL_CLI_SIZE, &max_size, "", 1, 0x1p62, VL_QUICK_AT_MOST, "64MiB"},
    {"list", VL_CLI_STRING, &list, "", 0, 0, VL_QUICK_DEFAULT, "1,4"},
    {"dist", VL_CLI_ENUM, &dist, "", 0, 0, .choices = "uniform|log-uniform"},
    {NULL},
};

static void parse(int argc, char **argv)
{
    reps = 300, step = 4, max_size = UINT64_C(1) << 30, list = "1,2,4,8", dist = "log-uniform";
    vl_cli cli = {.summary = "test", .alloc_spec = "caching", .device_spec = "sim", .seed = 1};
    vl_cli_parse(&cli, argc, argv, options, NULL, 0, NULL);
}

static void test_quick_rules(void **state)
{
    (void)state;
    char *plain[] = {"prog"};
    parse(1, plain);
    assert_int_equal(reps, 300);
    assert_string_equal(list, "1,2,4,8");

    char *quick[] = {"prog", "--quick"};
    parse(2, quick);
    assert_int_equal(reps, 40);
    assert_int_equal(step, 16);
    assert_int_equal(max_size, 64u << 20);
    assert_string_equal(list, "1,4");

    /* Given values: already short enough stays, too long is capped, a list stays. */
    char *given[] = {"prog", "--quick", "--reps", "7", "--step", "64", "--max-size", "2GiB", "--list", "2"};
    parse(10, given);
    assert_int_equal(reps, 7);
    assert_int_equal(step, 64);
    assert_int_equal(max_size, 64u << 20);
    assert_string_equal(list, "2");
}

static void test_enum(void **state)
{
    (void)state;
    char *argv[] = {"prog", "--dist", "uniform"};
    parse(3, argv);
    assert_string_equal(dist, "uniform");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quick_rules),
        cmocka_unit_test(test_enum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
