/* lib/cli.h: --quick applies each option's own rule from the table (no program clamps
 * by hand), and an enum option keeps the chosen name. Usage errors exit, so most are
 * covered by the bad-input table; here one child process per error shows that the
 * command line and a SPEC reject a bad value with the same reason (lib/opt.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "exitcodes.h"
#include "spec.h"
#include "support/test_main.h"

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

/* Runs vl_cli_parse on argv in a child and returns the one line it printed on stderr
 * (it must exit with the usage status). */
static void cli_error(char **argv, int argc, char *line, size_t len)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        parse(argc, argv);
        _exit(0); /* accepted: the parent fails on the status */
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t n;
    while (used + 1 < len && (n = read(fds[0], line + used, len - 1 - used)) > 0) used += (size_t)n;
    line[used] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), VL_EXIT_USAGE);
}

/* The same table parses a SPEC (targets are not used there); the reason after the
 * option's name must be the same text on both paths. */
static void same_reason(const char *name, const char *value)
{
    char flag[64], arg[64], spec[128], line[512], err[512];
    snprintf(flag, sizeof flag, "--%s", name);
    snprintf(arg, sizeof arg, "%s", value);
    char *argv[] = {"prog", flag, arg};
    cli_error(argv, 3, line, sizeof line);

    snprintf(spec, sizeof spec, "thing:%s=%s", name, value);
    vl_spec s;
    assert_int_equal(vl_spec_parse(spec, options, &s, err, sizeof err), -1);

    char cli_prefix[80], spec_prefix[80];
    snprintf(cli_prefix, sizeof cli_prefix, "prog: --%s: ", name);
    snprintf(spec_prefix, sizeof spec_prefix, "thing: option %s: ", name);
    assert_true(strncmp(line, cli_prefix, strlen(cli_prefix)) == 0);
    assert_true(strncmp(err, spec_prefix, strlen(spec_prefix)) == 0);
    const char *cli_why = line + strlen(cli_prefix), *spec_why = err + strlen(spec_prefix);
    const char *tail = " (try --help)\n";
    assert_true(strlen(cli_why) > strlen(tail));
    assert_int_equal(strlen(cli_why) - strlen(tail), strlen(spec_why));
    assert_true(strncmp(cli_why, spec_why, strlen(spec_why)) == 0);
    assert_non_null(strstr(spec_why, value));
}

static void test_same_rejection(void **state)
{
    (void)state;
    same_reason("reps", "0");           /* below the range [1, 1e7] */
    same_reason("step", "4096");        /* above the range [2, 1024] */
    same_reason("reps", "many");        /* not an integer */
    same_reason("max-size", "-1");      /* not a size */
    same_reason("dist", "gaussian");    /* not one of the choices */
    char err[512];
    vl_spec s;
    assert_int_equal(vl_spec_parse("thing:step=4096", options, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "out of range [2, 1024]"));
    assert_int_equal(vl_spec_parse("thing:dist=gaussian", options, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "must be one of uniform|log-uniform"));
}

VL_TEST_MAIN(cmocka_unit_test(test_quick_rules), cmocka_unit_test(test_enum), cmocka_unit_test(test_same_rejection))
