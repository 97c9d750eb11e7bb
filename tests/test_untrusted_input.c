/* Untrusted input and interrupted runs, as programs (tests/untrusted/run.sh, one
 * section per test): -o onto an input, CSVs renamed only when complete and temporary
 * files removed on SIGTERM/SIGINT, injected device faults as failures, the trace size
 * limit, plot file names that carry gnuplot or shell code, and sizes that leave a
 * scenario nothing to measure. No GPU needed; the plot
 * section skips when gnuplot is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The programs of the same build as this test: BUILD/tests/../bin/; the script from
 * the repository (the working directory of `make test`). */
static char bin_dir[512] = "build/bin";

static void run_section(const char *section)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "tests/untrusted/run.sh '%s' %s", bin_dir, section);
    int status = system(cmd);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (rc == 77) skip();
    assert_int_equal(rc, 0);
}

static void test_output_onto_input_refused(void **state) { (void)state; run_section("outputs"); }
static void test_killed_run_leaves_no_result(void **state) { (void)state; run_section("killed"); }
static void test_injected_faults_fail(void **state) { (void)state; run_section("faults"); }
static void test_trace_size_limit(void **state) { (void)state; run_section("limits"); }
static void test_plot_names_are_data(void **state) { (void)state; run_section("plots"); }
static void test_sizes_that_leave_nothing(void **state) { (void)state; run_section("defects"); }

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash) snprintf(bin_dir, sizeof bin_dir, "%.*s/../bin", (int)(slash - argv[0]), argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_onto_input_refused), cmocka_unit_test(test_killed_run_leaves_no_result),
        cmocka_unit_test(test_injected_faults_fail),      cmocka_unit_test(test_trace_size_limit),
        cmocka_unit_test(test_plot_names_are_data),       cmocka_unit_test(test_sizes_that_leave_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
