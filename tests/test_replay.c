/* Tests of trace replay on the simulated device (no GPU): the replay engine
 * (lib/trace/replay.h) with the caching allocator, OOMs on a small device, and the
 * bench/replay program's command line (files, stdin, malformed lines, unknown frees),
 * and its row for a trace without frees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc.h"
#include "bench/streams.h"
#include "device.h"
#include "trace/replay.h"
#include "trace/trace.h"

/* The replay program of the same build as this test: BUILD/tests/../bin/replay. */
static char replay_bin[512] = "build/bin/replay";
#define FIXTURES "tests/fixtures/parse/"

static char err[512];

typedef struct rig {
    vl_device *dev;
    vl_allocator *alloc;
    vl_trace trace;
    vl_bench_streams streams;
    vl_replay replay;
} rig;

static void rig_open(rig *r, const char *device_spec, const char *trace_text)
{
    int status;
    memset(r, 0, sizeof *r);
    r->dev = vl_device_open(device_spec, &status, err, sizeof err);
    if (!r->dev) fail_msg("device: %s", err);
    r->alloc = vl_alloc_open("caching", r->dev, &status, err, sizeof err);
    if (!r->alloc) fail_msg("caching allocator: %s", err);
    if (vl_trace_parse_buffer(trace_text, strlen(trace_text), VL_TRACE_AUTO, &r->trace, err, sizeof err) != 0)
        fail_msg("trace: %s", err);
    assert_int_equal(vl_bench_streams_create(&r->streams, r->dev, r->trace.nstreams, NULL), 0);
    assert_int_equal(vl_replay_init(&r->replay, &r->trace, r->alloc, r->streams.s), 0);
}

static void rig_close(rig *r)
{
    vl_replay_destroy(&r->replay);
    vl_alloc_close(r->alloc);
    vl_bench_streams_destroy(&r->streams);
    vl_trace_free(&r->trace);
    vl_device_close(r->dev);
}

/* The whole file as a string (fixtures are well below 1 MiB). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s (tests run from the repository root)", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static char *read_fixture(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, FIXTURES "%s", name);
    return read_text(path);
}

static void test_replay_small_trace(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "sim", read_fixture("small.vramlab"));
    for (int pass = 0; pass < 2; pass++) {
        vl_replay_pass p;
        vl_replay_pass_run(&r.replay, &p);
        assert_int_equal(p.allocs, 4);
        assert_int_equal(p.frees, 3);
        assert_int_equal(p.ooms, 0);
        assert_int_equal(p.alloc_ns.n, 4);
        assert_true(p.wall_ns > 0);
        /* Peaks: at least what the trace kept live at once, and reserved >= allocated. */
        assert_true(p.stats.peak_allocated_bytes >= (int64_t)r.trace.peak_live_bytes);
        assert_true(p.stats.peak_reserved_bytes >= p.stats.peak_allocated_bytes);
        /* The block the trace never freed was given back after the pass. */
        vl_alloc_stats now;
        vl_alloc_stats_get(r.alloc, &now);
        assert_int_equal(now.allocated_bytes, 0);
    }
    rig_close(&r);
}

static void test_replay_training_trace(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "sim", read_fixture("training.torch.csv"));
    assert_int_equal(r.trace.unknown_frees, 0);
    vl_replay_pass p;
    vl_replay_pass_run(&r.replay, &p);
    assert_int_equal(p.allocs, r.trace.nallocs);
    assert_int_equal(p.frees, r.trace.nfrees);
    assert_int_equal(p.ooms, 0);
    assert_true(p.stats.peak_allocated_bytes >= (int64_t)r.trace.peak_live_bytes);
    rig_close(&r);
}

/* Every real PyTorch trace recorded for the project (tests/fixtures/traces/, by the
 * PyTorch side) parses without unknown frees and replays without OOMs on the sim device. */
static void test_replay_recorded_torch_traces(void **state)
{
    (void)state;
    DIR *dir = opendir("tests/fixtures/traces");
    if (!dir) fail_msg("tests/fixtures/traces is missing (tests run from the repository root)");
    int replayed = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".csv") != 0) continue;
        char path[512];
        snprintf(path, sizeof path, "tests/fixtures/traces/%s", e->d_name);
        rig r;
        rig_open(&r, "sim", read_text(path));
        assert_int_equal(r.trace.format, VL_TRACE_TORCH_CSV);
        assert_int_equal(r.trace.unknown_frees, 0);
        assert_true(r.trace.nallocs > 100);
        vl_replay_pass p;
        vl_replay_pass_run(&r.replay, &p);
        assert_int_equal(p.ooms, 0);
        assert_int_equal(p.allocs, r.trace.nallocs);
        assert_true(p.stats.peak_allocated_bytes >= (int64_t)r.trace.peak_live_bytes);
        rig_close(&r);
        replayed++;
    }
    closedir(dir);
    assert_true(replayed >= 1);
}

/* A device too small for one block: the alloc is an OOM, its free is left out, and the
 * replay goes on. */
static void test_replay_oom_on_small_device(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "sim:capacity=64MiB", "vramlab-trace 1\na 1 8MiB\na 2 1GiB\nf 2\na 3 4MiB\nf 3\nf 1\n");
    vl_replay_pass p;
    vl_replay_pass_run(&r.replay, &p);
    assert_int_equal(p.allocs, 3);
    assert_int_equal(p.ooms, 1);
    assert_int_equal(p.frees_after_oom, 1);
    assert_int_equal(p.frees, 2);
    rig_close(&r);
}

/* Runs the replay program through the shell, with input (if not NULL) on its standard
 * input; returns its exit status, its output (stdout and stderr) in out. */
static int run_replay(const char *args, const char *input, char *out, size_t outlen)
{
    char cmd[1024], in_path[] = "/tmp/test_replay_in_XXXXXX";
    if (input) {
        int fd = mkstemp(in_path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        fputs(input, f);
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "%s --device sim --passes 1 -o /dev/null %s < %s 2>&1", replay_bin, args,
             input ? in_path : "/dev/null");
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    if (input) unlink(in_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_replay_program(void **state)
{
    (void)state;
    char out[4096];
    FILE *bin = fopen(replay_bin, "rb");
    if (!bin) fail_msg("%s is not built (make tests builds the programs)", replay_bin);
    fclose(bin);

    assert_int_equal(run_replay("--trace " FIXTURES "small.rmm.csv", NULL, out, sizeof out), 0);
    assert_int_equal(run_replay("--format vramlab --trace -", read_fixture("small.vramlab"), out, sizeof out), 0);

    /* Malformed input: exit 2 with FILE:LINE: reason. */
    assert_int_equal(run_replay("--trace - --format torch-csv", "", out, sizeof out), 2);
    if (!strstr(out, "<stdin>: no header line")) fail_msg("output: %s", out);
    assert_int_equal(run_replay("--trace " FIXTURES "small.rmm.csv --format torch-csv", NULL, out, sizeof out), 2);
    if (!strstr(out, FIXTURES "small.rmm.csv:1: header lacks column 'addr'")) fail_msg("output: %s", out);
    assert_int_equal(run_replay("--trace -", "vramlab-trace 1\na 1 10\nbogus\n", out, sizeof out), 2);
    if (!strstr(out, "<stdin>:3: unknown operation")) fail_msg("output: %s", out);

    /* Unknown frees are reported with their line numbers, and the replay still runs. */
    assert_int_equal(run_replay("--trace -", "vramlab-trace 1\nf 7\na 1 10\nf 1\nf 1\n", out, sizeof out), 0);
    if (!strstr(out, "2 frees of addresses not allocated at that point (lines 2, 5)")) fail_msg("output: %s", out);

    assert_int_equal(run_replay("", NULL, out, sizeof out), 2);
    assert_non_null(strstr(out, "--trace FILE is required"));
    assert_int_equal(run_replay("--trace /nonexistent/trace", NULL, out, sizeof out), 2);
    assert_int_equal(run_replay("--trace - --format nope", "", out, sizeof out), 2);
}

/* A trace without frees: the pass row's free_* statistics are unknown, so empty fields
 * (lib/csv.h), free_n 0; never "nan", which readers would take for a number. */
static void test_replay_without_frees_leaves_free_statistics_empty(void **state)
{
    (void)state;
    char in_path[] = "/tmp/test_replay_nofree_XXXXXX", cmd[1024], line[4096], header[4096] = "", row[4096] = "";
    int fd = mkstemp(in_path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("vramlab-trace 1\n# allocations only: nothing is freed\na 1 4096\na 2 8192\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s --device sim --alloc caching --passes 1 --trace %s -o - 2>/dev/null", replay_bin,
             in_path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    while (fgets(line, sizeof line, p)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(header[0] ? row : header, sizeof row, "%s", line);
    }
    int status = pclose(p);
    unlink(in_path);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (strstr(row, "nan")) fail_msg("row with nan: %s", row);
    /* free_n and free_median_ns, by position in the header (strsep keeps empty fields). */
    char *hp = header, *rp = row, *h, *v;
    int seen = 0;
    while ((h = strsep(&hp, ",")) != NULL && (v = strsep(&rp, ",")) != NULL) {
        const char *want = NULL;
        if (strcmp(h, "frees") == 0 || strcmp(h, "free_n") == 0) want = "0";
        else if (strncmp(h, "free_", 5) == 0) want = ""; /* free_median_ns ... free_iqr_ns */
        else if (strcmp(h, "alloc_median_ns") == 0) assert_true(v[0] != '\0'); /* the allocs were timed */
        if (want) {
            if (strcmp(v, want) != 0) fail_msg("%s is '%s', expected '%s'", h, v, want);
            seen++;
        }
    }
    assert_int_equal(seen, 2 + 8);
}

int main(int argc, char **argv)
{
    const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    if (slash) snprintf(replay_bin, sizeof replay_bin, "%.*s/../bin/replay", (int)(slash - argv[0]), argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_small_trace),
        cmocka_unit_test(test_replay_training_trace),
        cmocka_unit_test(test_replay_recorded_torch_traces),
        cmocka_unit_test(test_replay_oom_on_small_device),
        cmocka_unit_test(test_replay_program),
        cmocka_unit_test(test_replay_without_frees_leaves_free_statistics_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
