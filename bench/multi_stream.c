/* bench/multi_stream: allocations on N streams with a short kernel between them, like
 * RMM's multi_stream_allocations: kernels per second per allocator and stream count.
 *
 * Patterns (--pattern):
 *   own    on each stream in turn: alloc on stream i, a --kernel-us spin kernel on i,
 *          free on i (RMM's benchmark). An allocator whose free synchronises the
 *          device (cudaFree) serialises the streams; a stream-ordered one lets the
 *          kernels overlap.
 *   cross  the block belongs to stream 0 (alloc and free there), the kernel runs on
 *          stream i, and record_use(p, i) tells the allocator so: reuse of that block
 *          must then wait for stream i (PyTorch's record_stream), which is where
 *          cross-stream reuse serialises.
 * ideal_kernels_per_s is the bound with every stream's kernels back to back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/calls.h"
#include "bench/streams.h"
#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "kernels/spin.h"
#include "program.h"
#include "stats.h"

#define MAX_STREAM_COUNTS 16

static const char *stream_list = "1,2,4,8";
static const char *pattern_list = "own,cross";
static int64_t iters = 100, reps = 7;
static double kernel_us = 50;
static uint64_t block_size = UINT64_C(1) << 20;

static const vl_cli_opt options[] = {
    {"streams", VL_CLI_STRING, &stream_list, "stream counts, comma-separated; --quick: 1,4", 0, 0, VL_QUICK_DEFAULT, "1,4"},
    {"pattern", VL_CLI_STRING, &pattern_list, "own, cross or own,cross (see the program's header)", 0, 0},
    {"iters", VL_CLI_INT, &iters, "alloc/kernel/free rounds per stream per repetition; --quick: 20", 1, 1e7, VL_QUICK_AT_MOST, "20"},
    {"reps", VL_CLI_INT, &reps, "timed repetitions (one more untimed first); --quick: 3", 1, 1e5, VL_QUICK_AT_MOST, "3"},
    {"kernel-us", VL_CLI_DOUBLE, &kernel_us, "spin kernel duration in microseconds", 0, 1e6},
    {"size", VL_CLI_SIZE, &block_size, "bytes per allocation", 1, 0x1p40},
    {NULL},
};

static int counts[MAX_STREAM_COUNTS];
static size_t ncounts;
static int do_own, do_cross;

static size_t parse_counts(vl_cli *cli)
{
    size_t n = 0;
    const char *s = stream_list;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 128 || (*end && *end != ',') || n == MAX_STREAM_COUNTS)
            vl_cli_usage_error(cli, "--streams: expected up to %d counts 1..128 separated by commas", MAX_STREAM_COUNTS);
        counts[n++] = (int)v;
        s = *end ? end + 1 : end;
    }
    if (n == 0) vl_cli_usage_error(cli, "--streams: no stream count given");
    return n;
}

/* Before the device is opened: bad values are usage errors everywhere. */
static void check_options(vl_cli *cli)
{
    ncounts = parse_counts(cli);
    do_own = strstr(pattern_list, "own") != NULL;
    do_cross = strstr(pattern_list, "cross") != NULL;
    if (!do_own && !do_cross) vl_cli_usage_error(cli, "--pattern: expected own, cross or own,cross");
}

static const vl_program_def def = {
    .summary = "allocations on N streams with a spin kernel between them: kernels/s (RMM multi_stream_allocations)",
    .default_alloc = "raw",
    .needs_cuda = 1,
    .options = options,
    .check_options = check_options,
};

/* One repetition; returns wall ns. alloc_ns receives one sample per alloc. Counts OOMs. */
static double run_once(vl_program *p, vl_stream *streams, int n, int cross, double *alloc_ns, size_t *ooms)
{
    vl_allocator *a = p->alloc;
    uint64_t spin_ns = (uint64_t)(kernel_us * 1e3);
    size_t k = 0;
    uint64_t start = vl_now_ns();
    for (int64_t it = 0; it < iters; it++) {
        for (int i = 0; i < n; i++) {
            vl_stream owner = cross ? streams[0] : streams[i];
            uint64_t t0 = vl_now_ns();
            void *ptr = vl_allocate(a, (size_t)block_size, owner);
            alloc_ns[k++] = (double)(vl_now_ns() - t0);
            if (!ptr) {
                (*ooms)++;
                continue;
            }
            vl_spin((cudaStream_t)streams[i], spin_ns);
            if (cross && streams[i] != owner) vl_record_use(a, ptr, streams[i]);
            vl_deallocate(a, ptr, (size_t)block_size, owner);
        }
    }
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    return (double)(vl_now_ns() - start);
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    int max_streams = 0;
    for (size_t i = 0; i < ncounts; i++)
        if (counts[i] > max_streams) max_streams = counts[i];

    vl_bench_streams streams;
    double *kps = malloc((size_t)reps * sizeof *kps);
    double *alloc_ns = malloc((size_t)(iters * max_streams) * sizeof *alloc_ns);
    if (!kps || !alloc_ns || vl_bench_streams_create(&streams, p.dev, (size_t)max_streams, NULL) != 0) {
        fprintf(stderr, "%s: out of host memory\n", p.cli.prog);
        return VL_EXIT_FAIL;
    }
    vl_csv_meta(p.csv, "timing", "kernels_per_s: kernels / host wall time of a repetition incl. a final "
                                 "cudaDeviceSynchronize; alloc_ns: host time of each alloc call (last repetition)");
    char c1[256], c2[256], header[1024];
    snprintf(header, sizeof header,
             "pattern,streams,size_bytes,kernel_us,kernels,%s,ideal_kernels_per_s,%s,ooms," VL_BENCH_CALL_COLUMNS,
             vl_summary_columns("kernels", "per_s", c1, sizeof c1), vl_summary_columns("alloc", "ns", c2, sizeof c2));
    vl_csv_header(p.csv, header);

    for (int cross = 0; cross <= 1; cross++) {
        if (cross ? !do_cross : !do_own) continue;
        for (size_t c = 0; c < ncounts; c++) {
            int n = counts[c];
            size_t ooms = 0;
            run_once(&p, streams.s, n, cross, alloc_ns, &ooms); /* warm-up: pools grow, caches fill */
            ooms = 0;
            vl_alloc_stats before, after; /* the timed repetitions' device calls */
            vl_alloc_stats_get(p.alloc, &before);
            for (int64_t r = 0; r < reps; r++)
                kps[r] = (double)(iters * n) / (run_once(&p, streams.s, n, cross, alloc_ns, &ooms) / 1e9);
            vl_alloc_stats_get(p.alloc, &after);
            char calls[160];
            vl_summary ks = vl_summarize(kps, (size_t)reps);
            vl_summary as = vl_summarize(alloc_ns, (size_t)(iters * n));
            double ideal = kernel_us > 0 ? n * 1e6 / kernel_us : 0;
            vl_csv_row(p.csv, "%s,%d,%llu,%.1f,%lld,%s,%.1f,%s,%zu,%s", cross ? "cross" : "own", n,
                       (unsigned long long)block_size, kernel_us, (long long)(iters * n),
                       vl_summary_values(&ks, c1, sizeof c1), ideal, vl_summary_values(&as, c2, sizeof c2), ooms,
                       vl_bench_call_values(&before, &after, 2.0 * (double)(reps * iters * n), calls, sizeof calls));
        }
    }
    /* The allocator may hold blocks tied to these streams: close it before them. */
    vl_alloc_close(p.alloc);
    p.alloc = NULL;
    vl_bench_streams_destroy(&streams);
    free(kps);
    free(alloc_ns);
    return vl_program_finish(&p);
}
