/* Benchmark programs run as programs, on the simulated device:
 *   - bench/random_churn: its counts and latency columns describe the timed steps only
 *     (each step allocates or frees at most once);
 *   - bench/alloc_latency --beyond-device: the request larger than the device is refused
 *     every time, in a row of its own;
 *   - the device-call columns (lib/bench/calls.h) of random_churn and replay count the
 *     measured stretch only.
 * Under SAN=1 the programs of the same build run under ASan, so a write past one of their
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

/* The programs of the same build as this test: BUILD/tests/../bin/. */
static char bin_dir[512] = "build/bin";

typedef struct csv_row {
    char header[4096];
    char values[4096];
} csv_row;

/* Runs bin_dir/program with args, its CSV into a scratch file; returns the exit status
 * and the CSV's header and last data row. */
static int run_program(const char *program, const char *args, csv_row *row)
{
    char path[] = "/tmp/test_bench_sim_XXXXXX", cmd[1024];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd, "%s/%s %s -o %s", bin_dir, program, args, path);
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
/* The named column of a row as text ("" for an empty field: unknown). */
static const char *field(const csv_row *row, const char *name, char *out, size_t outlen)
{
    char header[4096], values[4096];
    snprintf(header, sizeof header, "%s", row->header);
    snprintf(values, sizeof values, "%s", row->values);
    char *hp = header, *vp = values, *h, *v;
    while ((h = strsep(&hp, ",")) != NULL && (v = strsep(&vp, ",")) != NULL) /* strsep keeps empty fields */
        if (strcmp(h, name) == 0) {
            snprintf(out, outlen, "%s", v);
            return out;
        }
    fail_msg("column %s missing (header %s)", name, row->header);
    return "";
}

static double column(const csv_row *row, const char *name)
{
    char text[64];
    field(row, name, text, sizeof text);
    if (!text[0]) fail_msg("column %s is empty", name);
    return strtod(text, NULL);
}

/* A warm-up longer than the timed part leaves more live blocks than timed steps; the
 * frees that empty the allocator at the end must not land in the timed arrays. */
static void test_counts_and_latencies_cover_timed_steps_only(void **state)
{
    (void)state;
    csv_row row;
    assert_int_equal(
        run_program("random_churn", "--device sim --alloc caching --slots 1000 --warmup-ops 5000 --ops 100", &row), 0);
    double ops = column(&row, "ops"), allocs = column(&row, "allocs"), frees = column(&row, "frees");
    assert_true(ops == 100);
    assert_true(allocs + frees <= ops);
    assert_true(column(&row, "free_n") == frees);
    assert_true(column(&row, "alloc_n") == allocs);
    /* Host-clock samples of a real call: at least one nanosecond, not leftover memory. */
    assert_true(column(&row, "free_p1_ns") >= 1.0);
    assert_true(column(&row, "free_max_ns") < 1e12);
}

/* The device-call columns count the timed stretch only: a warm cache maps nothing there,
 * a cold one does, and the rate is per 1,000 of the timed operations. */
static void test_device_calls_cover_timed_steps_only(void **state)
{
    (void)state;
    csv_row warm, cold;
    const char *common = "--device sim --alloc caching --slots 64 --min-size 1MiB --max-size 1MiB --ops 2000";
    char args[256];
    snprintf(args, sizeof args, "%s --warmup-ops 20000", common);
    assert_int_equal(run_program("random_churn", args, &warm), 0);
    snprintf(args, sizeof args, "%s --warmup-ops 0", common);
    assert_int_equal(run_program("random_churn", args, &cold), 0);
    assert_true(column(&warm, "map_calls") == 0);
    assert_true(column(&cold, "map_calls") > 0);
    assert_true(column(&cold, "maps_per_kop") == 1000.0 * column(&cold, "map_calls") / column(&cold, "ops"));
    /* replay, one pass: the pass's map calls are all the allocator made. */
    csv_row pass;
    assert_int_equal(run_program("replay", "--device sim --alloc caching:segments=expandable,span=0 --passes 1 "
                                           "--trace tests/fixtures/traces/resnet50.tiny.csv", &pass), 0);
    assert_true(column(&pass, "map_calls") > 0);
    assert_true(column(&pass, "map_calls") == column(&pass, "device_allocs"));
}

/* The last row is the request beyond the device: refused on every call, by both segment
 * policies, and the allocator kept working (the program went on and exited 0). */
static void test_request_beyond_device_refused_every_time(void **state)
{
    (void)state;
    const char *specs[] = {"caching", "caching:segments=expandable"};
    for (int k = 0; k < 2; k++) {
        char args[256];
        csv_row row;
        snprintf(args, sizeof args,
                 "--device sim:capacity=100TiB --alloc %s --beyond-device --min-size 1MiB --max-size 1MiB --reps 50",
                 specs[k]);
        assert_int_equal(run_program("alloc_latency", args, &row), 0);
        assert_true(column(&row, "size_bytes") > 100.0 * 1099511627776.0);
        assert_true(column(&row, "alloc_n") == 50);
        assert_true(column(&row, "ooms") == 50);
        char text[64];
        assert_string_equal(field(&row, "first_free_ns", text, sizeof text), ""); /* nothing to free: unknown */
        assert_true(column(&row, "pair_n") == 0);
        assert_true(column(&row, "alloc_p1_ns") >= 1.0);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash) snprintf(bin_dir, sizeof bin_dir, "%.*s/../bin", (int)(slash - argv[0]), argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_latencies_cover_timed_steps_only),
        cmocka_unit_test(test_request_beyond_device_refused_every_time),
        cmocka_unit_test(test_device_calls_cover_timed_steps_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
