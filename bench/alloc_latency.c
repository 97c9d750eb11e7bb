/* bench/alloc_latency: host latency of one alloc and one free by size, 512 B to 8 GiB
 * (sizes above a fraction of the free device memory are left out), for any allocator.
 *
 * What is timed, per size, on the host monotonic clock, after a warm-up:
 *   alloc_ns       the alloc call alone (cudaMalloc, cudaMallocAsync's enqueue, a cache hit)
 *   free_ns        the free call alone (for async backends only the enqueue)
 *   pair_ns        one alloc + free pair, the mean over a batch of PAIR_BATCH pairs (one
 *                  clock read per batch, so the clock's own ~20-40 ns do not count): the
 *                  cache-hit fast path of a caching allocator; single pairs where one pair
 *                  takes PAIR_SLOW_NS or more (cudaMalloc: no clock to hide, and a batch of
 *                  large ones would take seconds)
 *   cycle_sync_ns  alloc + free + device synchronize: what an async free really costs
 *                  once the pool has to give memory back (release threshold 0)
 *   first_*_ns     the very first alloc/free of that size (before warm-up): the cold path
 *                  (empty when it was refused)
 * Repetitions stop early once a size has used its time budget (large cudaMalloc/cudaFree
 * take milliseconds), but never below --min-reps.
 * --beyond-device adds one last row: a request 1% larger than the device, which can never
 * succeed; alloc_ns is then the time until it is refused (ooms counts the refusals). A
 * caching allocator must refuse it at once rather than map the device first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "exitcodes.h"
#include "program.h"
#include "size.h"
#include "stats.h"

static uint64_t min_size = 512, max_size = UINT64_C(8) << 30;
static int64_t step = 4, reps = 300, min_reps = 15, warmup = 10;
static double budget_ms = 600, mem_fraction = 0.8;
static int beyond_device;

static const vl_cli_opt options[] = {
    {"min-size", VL_CLI_SIZE, &min_size, "smallest size", 1, 0x1p62},
    {"max-size", VL_CLI_SIZE, &max_size, "largest size (capped by --mem-fraction of free memory)", 1, 0x1p62},
    {"step", VL_CLI_INT, &step, "size factor between rows; --quick: 16", 2, 1024, VL_QUICK_AT_LEAST, "16"},
    {"reps", VL_CLI_INT, &reps, "repetitions per size at most; --quick: 40", 1, 1e7, VL_QUICK_AT_MOST, "40"},
    {"min-reps", VL_CLI_INT, &min_reps, "repetitions per size at least (time budget notwithstanding)", 1, 1e6, VL_QUICK_AT_MOST, "5"},
    {"warmup", VL_CLI_INT, &warmup, "untimed alloc/free pairs per size first; --quick: 3", 0, 1e6, VL_QUICK_AT_MOST, "3"},
    {"budget-ms", VL_CLI_DOUBLE, &budget_ms, "time per size and loop before stopping early; --quick: 80", 1, 1e6, VL_QUICK_AT_MOST, "80"},
    {"mem-fraction", VL_CLI_DOUBLE, &mem_fraction, "largest size as a fraction of free device memory", 0.01, 0.99},
    {"beyond-device", VL_CLI_FLAG, &beyond_device, "add a row for a request 1% larger than the device (time to refusal)", 0, 0},
    {NULL},
};

/* Before the device opens: a size range that selects nothing is a usage error. */
static void check_sizes(vl_cli *cli)
{
    if (min_size > max_size)
        vl_cli_usage_error(cli, "--min-size (%llu bytes) is larger than --max-size (%llu bytes): no size to measure",
                           (unsigned long long)min_size, (unsigned long long)max_size);
}

static const vl_program_def def = {
    .summary = "alloc and free latency by size (median, p99, IQR) for one allocator",
    .default_alloc = "raw",
    .options = options,
    .check_options = check_sizes,
};

typedef struct size_result {
    vl_summary alloc_ns, free_ns, pair_ns, cycle_ns;
    double first_alloc_ns, first_free_ns;
    size_t ooms;
} size_result;

#define PAIR_BATCH 64
#define PAIR_SLOW_NS 2000

static void device_sync(vl_device *d) { d->ops->synchronize(d); }

/* Whether a timing loop begun at `start` with n samples takes another: at most --reps,
 * and past --min-reps only while its --budget-ms lasts. */
static int more_reps(size_t n, uint64_t start)
{
    return n < (size_t)reps && (n < (size_t)min_reps || vl_now_ns() - start < (uint64_t)(budget_ms * 1e6));
}

/* Times alloc and free separately; returns the number of samples (0 on a first OOM). */
static size_t time_pairs(vl_allocator *a, size_t size, double *alloc_ns, double *free_ns, size_t *ooms)
{
    uint64_t start = vl_now_ns();
    size_t n = 0;
    while (more_reps(n, start)) {
        uint64_t t0 = vl_now_ns();
        void *p = vl_allocate(a, size, NULL);
        uint64_t t1 = vl_now_ns();
        if (!p) {
            (*ooms)++;
            break;
        }
        vl_deallocate(a, p, size, NULL);
        uint64_t t2 = vl_now_ns();
        alloc_ns[n] = (double)(t1 - t0);
        free_ns[n] = (double)(t2 - t1);
        n++;
    }
    return n;
}

/* Mean ns of an alloc + free pair over batches of PAIR_BATCH (of 1 for a slow
 * allocator), one sample per batch. */
static size_t time_pair_batches(vl_allocator *a, size_t size, double *pair_ns, size_t *ooms)
{
    uint64_t start = vl_now_ns();
    void *first = vl_allocate(a, size, NULL);
    if (!first) {
        (*ooms)++;
        return 0;
    }
    vl_deallocate(a, first, size, NULL);
    int batch = vl_now_ns() - start < PAIR_SLOW_NS ? PAIR_BATCH : 1;
    size_t n = 0;
    while (more_reps(n, start)) {
        uint64_t t0 = vl_now_ns();
        for (int i = 0; i < batch; i++) {
            void *p = vl_allocate(a, size, NULL);
            if (!p) {
                (*ooms)++;
                return n;
            }
            vl_deallocate(a, p, size, NULL);
        }
        pair_ns[n++] = (double)(vl_now_ns() - t0) / batch;
    }
    return n;
}

/* alloc + free + device synchronize as one sample. */
static size_t time_cycles(vl_allocator *a, size_t size, double *cycle_ns, size_t *ooms)
{
    uint64_t start = vl_now_ns();
    size_t n = 0;
    while (more_reps(n, start)) {
        uint64_t t0 = vl_now_ns();
        void *p = vl_allocate(a, size, NULL);
        if (!p) {
            (*ooms)++;
            break;
        }
        vl_deallocate(a, p, size, NULL);
        device_sync(a->dev);
        cycle_ns[n++] = (double)(vl_now_ns() - t0);
    }
    return n;
}

static void measure_size(vl_allocator *a, size_t size, double *buf_a, double *buf_b, double *buf_c, size_result *r)
{
    memset(r, 0, sizeof *r);
    r->first_alloc_ns = r->first_free_ns = NAN; /* unknown until served */
    uint64_t t0 = vl_now_ns();
    void *p = vl_allocate(a, size, NULL);
    uint64_t t1 = vl_now_ns();
    if (p) {
        vl_deallocate(a, p, size, NULL);
        r->first_free_ns = (double)(vl_now_ns() - t1);
        r->first_alloc_ns = (double)(t1 - t0);
    } else {
        r->ooms++;
    }
    for (int64_t i = 0; p && i < warmup; i++) {
        void *q = vl_allocate(a, size, NULL);
        if (!q) {
            r->ooms++;
            break;
        }
        vl_deallocate(a, q, size, NULL);
    }
    device_sync(a->dev);
    size_t n = r->ooms ? 0 : time_pairs(a, size, buf_a, buf_b, &r->ooms);
    r->alloc_ns = vl_summarize(buf_a, n);
    r->free_ns = vl_summarize(buf_b, n);
    n = r->ooms ? 0 : time_pair_batches(a, size, buf_c, &r->ooms);
    r->pair_ns = vl_summarize(buf_c, n);
    device_sync(a->dev);
    n = r->ooms ? 0 : time_cycles(a, size, buf_c, &r->ooms);
    r->cycle_ns = vl_summarize(buf_c, n);
}

/* Times requests that must be refused (size beyond the device): every sample is one
 * refused call; a call that succeeds is freed and reported, since it should not. */
static void measure_refusal(vl_allocator *a, size_t size, double *alloc_ns, size_result *r, const char *prog)
{
    memset(r, 0, sizeof *r);
    r->first_free_ns = NAN; /* nothing to free */
    uint64_t start = vl_now_ns();
    size_t n = 0, granted = 0;
    while (more_reps(n, start)) {
        uint64_t t0 = vl_now_ns();
        void *p = vl_allocate(a, size, NULL);
        double ns = (double)(vl_now_ns() - t0);
        if (n == 0) r->first_alloc_ns = ns;
        if (p) {
            granted++;
            vl_deallocate(a, p, size, NULL);
            continue;
        }
        r->ooms++;
        alloc_ns[n++] = ns;
        if (granted > (size_t)min_reps) break;
    }
    if (granted)
        fprintf(stderr, "%s: a request of %zu bytes, beyond the device, was granted %zu time%s\n", prog, size,
                granted, granted == 1 ? "" : "s");
    r->alloc_ns = vl_summarize(alloc_ns, n);
    r->free_ns = vl_summarize(alloc_ns, 0);
    r->pair_ns = vl_summarize(alloc_ns, 0);
    r->cycle_ns = vl_summarize(alloc_ns, 0);
}

static void write_row(vl_program *p, size_t size, const size_result *r)
{
    char c1[256], c2[256], c3[256], c4[256], f1[32], f2[32];
    vl_csv_row(p->csv, "%llu,%s,%s,%s,%s,%s,%s,%zu", (unsigned long long)size,
               vl_summary_values(&r->alloc_ns, c1, sizeof c1), vl_summary_values(&r->free_ns, c2, sizeof c2),
               vl_summary_values(&r->pair_ns, c3, sizeof c3), vl_summary_values(&r->cycle_ns, c4, sizeof c4),
               vl_csv_f64(r->first_alloc_ns, 0, f1, sizeof f1), vl_csv_f64(r->first_free_ns, 0, f2, sizeof f2), r->ooms);
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    if (min_reps > reps) min_reps = reps;
    uint64_t limit = (uint64_t)((double)p.free_at_start * mem_fraction);
    char sz[32];
    vl_csv_meta(p.csv, "timing", "host monotonic clock; alloc_ns/free_ns: the call alone (async: the enqueue); "
                                 "pair_ns: mean alloc+free over batches of %d (of 1 where a pair takes %d ns "
                                 "or more); cycle_sync_ns: alloc+free+device synchronize", PAIR_BATCH, PAIR_SLOW_NS);
    vl_csv_meta(p.csv, "size_limit_bytes", "%llu (%s of free memory at start)", (unsigned long long)limit,
                vl_format_size(limit, sz, sizeof sz));
    if (beyond_device)
        vl_csv_meta(p.csv, "beyond_device", "last row: a request 1%% over the device's %llu bytes; alloc_ns is the time "
                                            "to refusal, ooms the refusals", (unsigned long long)p.dev->total_bytes);

    char c1[256], c2[256], c3[256], c4[256], header[1280];
    snprintf(header, sizeof header, "size_bytes,%s,%s,%s,%s,first_alloc_ns,first_free_ns,ooms",
             vl_summary_columns("alloc", "ns", c1, sizeof c1), vl_summary_columns("free", "ns", c2, sizeof c2),
             vl_summary_columns("pair", "ns", c3, sizeof c3), vl_summary_columns("cycle_sync", "ns", c4, sizeof c4));
    vl_csv_header(p.csv, header);

    double *buf_a = malloc((size_t)reps * sizeof *buf_a), *buf_b = malloc((size_t)reps * sizeof *buf_b),
           *buf_c = malloc((size_t)reps * sizeof *buf_c);
    if (!buf_a || !buf_b || !buf_c) {
        fprintf(stderr, "%s: out of host memory\n", p.cli.prog);
        return VL_EXIT_FAIL;
    }
    size_t skipped = 0, measured = 0;
    for (uint64_t size = min_size; size <= max_size; size = size > max_size / (uint64_t)step ? max_size + 1 : size * (uint64_t)step) {
        if (limit && size > limit) {
            skipped++;
            continue;
        }
        size_result r;
        measure_size(p.alloc, (size_t)size, buf_a, buf_b, buf_c, &r);
        write_row(&p, (size_t)size, &r);
        measured++;
    }
    if (beyond_device) {
        size_t total = p.dev->total_bytes, beyond = total + total / 100 + 1;
        size_result r;
        measure_refusal(p.alloc, beyond, buf_a, &r, p.cli.prog);
        write_row(&p, beyond, &r);
    }
    if (skipped && (measured || beyond_device))
        fprintf(stderr, "%s: %zu size%s above %s left out (--mem-fraction of free memory)\n", p.cli.prog, skipped,
                skipped == 1 ? "" : "s", vl_format_size(limit, sz, sizeof sz));
    free(buf_a);
    free(buf_b);
    free(buf_c);
    if (!measured && !beyond_device) {
        /* A CSV of only a header is no result. */
        fprintf(stderr, "%s: every size from --min-size is above %s (--mem-fraction of free memory): nothing measured\n",
                p.cli.prog, vl_format_size(limit, sz, sizeof sz));
        vl_csv_discard(p.csv);
        p.csv = NULL;
        vl_program_finish(&p);
        return VL_EXIT_USAGE;
    }
    return vl_program_finish(&p);
}
