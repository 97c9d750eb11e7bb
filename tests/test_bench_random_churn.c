/* bench/random_churn as a program, on the simulated device: its counts and latency
 * columns describe the timed steps only (each step allocates or frees at most once).
 * Under SAN=1 the program of the same build runs under ASan, so a write past one of its
 * per-step arrays fails the run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The program of the same build as this test: BUILD/tests/../bin/random_churn. */
static char churn_bin[512] = "build/bin/random_churn";

typedef struct csv_row {
    char header[4096];
    char values[4096];
} csv_row;

/* Runs random_churn with args, its CSV into a scratch file; returns the exit status
 * and the CSV's header and (single) data row. */
static int run_churn(const char *args, csv_row *row)
{
    char path[] = "/tmp/test_bench_churn_XXXXXX", cmd[1024];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd, "%s %s -o %s", churn_bin, args, path);
    int status = system(cmd);
    memset(row, 0, sizeof *row);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int got_header = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\n")] = '\0';
        if (!got_header) {
            snprintf(row->header, sizeof row->header, "%s", line);
            got_header = 1;
        } else {
            snprintf(row->values, sizeof row->values, "%s", line);
        }
    }
    fclose(f);
    unlink(path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The value of column `name` in row (fails the test when absent). */
static double column(const csv_row *row, const char *name)
{
    char header[4096], values[4096];
    snprintf(header, sizeof header, "%s", row->header);
    snprintf(values, sizeof values, "%s", row->values);
    char *hs = NULL, *vs = NULL;
    char *h = strtok_r(header, ",", &hs), *v = strtok_r(values, ",", &vs);
    for (; h && v; h = strtok_r(NULL, ",", &hs), v = strtok_r(NULL, ",", &vs))
        if (strcmp(h, name) == 0) return strtod(v, NULL);
    fail_msg("column %s missing (header %s)", name, row->header);
    return 0;
}

/* A warm-up longer than the timed part leaves more live blocks than timed steps; the
 * frees that empty the allocator at the end must not land in the timed arrays. */
static void test_counts_and_latencies_cover_timed_steps_only(void **state)
{
    (void)state;
    csv_row row;
    assert_int_equal(run_churn("--device sim --alloc caching --slots 1000 --warmup-ops 5000 --ops 100", &row), 0);
    double ops = column(&row, "ops"), allocs = column(&row, "allocs"), frees = column(&row, "frees");
    assert_true(ops == 100);
    assert_true(allocs + frees <= ops);
    assert_true(column(&row, "free_n") == frees);
    assert_true(column(&row, "alloc_n") == allocs);
    /* Host-clock samples of a real call: at least one nanosecond, not leftover memory. */
    assert_true(column(&row, "free_p1_ns") >= 1.0);
    assert_true(column(&row, "free_max_ns") < 1e12);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash) snprintf(churn_bin, sizeof churn_bin, "%.*s/../bin/random_churn", (int)(slash - argv[0]), argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_latencies_cover_timed_steps_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
