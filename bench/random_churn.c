/* bench/random_churn: random allocations and frees, like RMM's random_allocations.
 * Each step allocates with probability --alloc-prob (sizes uniform or log-uniform in
 * [--min-size, --max-size]) or frees a random live block; an alloc becomes a free when
 * all --slots are taken or when it would push live bytes past --max-live. A warm-up of
 * --warmup-ops steps runs first, untimed. Reports ns per operation (wall time / ops),
 * per-call latency percentiles, peak allocated and reserved bytes (from the allocator;
 * empty when it cannot know). Runs on --device sim for allocators that support it:
 * its times are then the host CPU time of the policy code (a "simulated" column says so). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/calls.h"
#include "bench/peaks.h"
#include "clock.h"
#include "exitcodes.h"
#include "program.h"
#include "rng.h"
#include "stats.h"

static int64_t ops = 200000, warmup_ops = 20000, slots = 10000;
static double alloc_prob = 0.73;
static uint64_t min_size = 512, max_size = UINT64_C(4) << 20, max_live = UINT64_C(4) << 30;
static const char *dist_name = "log-uniform";

static const vl_cli_opt options[] = {
    {"ops", VL_CLI_INT, &ops, "timed operations; --quick: 20000", 1, 1e10, VL_QUICK_AT_MOST, "20000"},
    {"warmup-ops", VL_CLI_INT, &warmup_ops, "untimed operations first; --quick: 2000", 0, 1e10, VL_QUICK_AT_MOST, "2000"},
    {"alloc-prob", VL_CLI_DOUBLE, &alloc_prob, "probability that a step allocates", 0.01, 0.99},
    {"dist", VL_CLI_ENUM, &dist_name, "size distribution: uniform|log-uniform", 0, 0, .choices = "uniform|log-uniform"},
    {"min-size", VL_CLI_SIZE, &min_size, "smallest size", 1, 0x1p62},
    {"max-size", VL_CLI_SIZE, &max_size, "largest size", 1, 0x1p62},
    {"slots", VL_CLI_INT, &slots, "live blocks at most", 1, 1e8},
    {"max-live", VL_CLI_SIZE, &max_live, "live bytes at most (capped at 80% of free memory)", 1, 0x1p62},
    {NULL},
};

/* Before the device is opened: bad values are usage errors everywhere. */
static void check_options(vl_cli *cli)
{
    if (min_size > max_size) vl_cli_usage_error(cli, "--min-size is larger than --max-size");
}

static const vl_program_def def = {
    .summary = "random allocations and frees (RMM random_allocations): ns per op, percentiles, peak reserved",
    .default_alloc = "caching",
    .options = options,
    .check_options = check_options,
};

typedef struct block {
    void *ptr;
    size_t size;
} block;

typedef struct churn {
    vl_allocator *a;
    vl_rng rng;
    int log_uniform;
    block *live;
    size_t nlive;
    uint64_t live_bytes, cap_bytes;
    size_t allocs, frees, ooms;
    double *alloc_ns, *free_ns; /* NULL while warming up */
} churn;

static size_t draw_size(churn *c)
{
    if (c->log_uniform) return (size_t)vl_rng_log_uniform(&c->rng, min_size, max_size);
    return (size_t)(min_size + vl_rng_below(&c->rng, max_size - min_size + 1));
}

static void free_one(churn *c)
{
    size_t i = (size_t)vl_rng_below(&c->rng, c->nlive);
    block b = c->live[i];
    c->live[i] = c->live[--c->nlive];
    uint64_t t0 = vl_now_ns();
    vl_deallocate(c->a, b.ptr, b.size, NULL);
    uint64_t t1 = vl_now_ns();
    if (c->free_ns) c->free_ns[c->frees] = (double)(t1 - t0);
    c->frees++;
    c->live_bytes -= b.size;
}

static void step(churn *c)
{
    size_t size = draw_size(c);
    int want_alloc = vl_rng_unit(&c->rng) < alloc_prob;
    int can_alloc = c->nlive < (size_t)slots && c->live_bytes + size <= c->cap_bytes;
    if (c->nlive > 0 && (!want_alloc || !can_alloc)) {
        free_one(c);
        return;
    }
    if (!can_alloc) return; /* nothing live and the size alone exceeds the cap */
    uint64_t t0 = vl_now_ns();
    void *p = vl_allocate(c->a, size, NULL);
    uint64_t t1 = vl_now_ns();
    if (c->alloc_ns) c->alloc_ns[c->allocs] = (double)(t1 - t0);
    c->allocs++;
    if (!p) {
        c->ooms++;
        return;
    }
    c->live[c->nlive++] = (block){p, size};
    c->live_bytes += size;
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    churn c = {.a = p.alloc, .log_uniform = strcmp(dist_name, "log-uniform") == 0, .cap_bytes = max_live};
    uint64_t mem_cap = (uint64_t)((double)p.free_at_start * 0.8);
    if (mem_cap && c.cap_bytes > mem_cap) c.cap_bytes = mem_cap;
    vl_rng_seed(&c.rng, p.cli.seed);
    c.live = malloc((size_t)slots * sizeof *c.live);
    double *alloc_ns = malloc((size_t)ops * sizeof *alloc_ns), *free_ns = malloc((size_t)ops * sizeof *free_ns);
    if (!c.live || !alloc_ns || !free_ns) {
        fprintf(stderr, "%s: out of host memory\n", p.cli.prog);
        return VL_EXIT_FAIL;
    }

    for (int64_t i = 0; i < warmup_ops; i++) step(&c);
    vl_alloc_reset_peaks(p.alloc);
    size_t warm_ooms = c.ooms;
    c.allocs = c.frees = c.ooms = 0;
    vl_alloc_stats before;
    vl_alloc_stats_get(p.alloc, &before);
    c.alloc_ns = alloc_ns;
    c.free_ns = free_ns;
    /* The timed steps run in batches: the spread of ns/op across batches is what
     * scripts/compare weighs a difference against. */
    enum { NBATCH = 20 };
    double batch_ns[NBATCH];
    size_t nbatch = 0;
    uint64_t start = vl_now_ns(), batch_start = start;
    for (int64_t i = 0; i < ops; i++) {
        step(&c);
        int64_t batch_end = (int64_t)(nbatch + 1) * ops / NBATCH;
        if (i + 1 == batch_end && nbatch < NBATCH) {
            uint64_t now = vl_now_ns();
            int64_t batch_ops = batch_end - (int64_t)nbatch * ops / NBATCH;
            if (batch_ops > 0) batch_ns[nbatch] = (double)(now - batch_start) / (double)batch_ops;
            nbatch += batch_ops > 0;
            batch_start = now;
        }
    }
    p.dev->ops->synchronize(p.dev);
    double wall_ns = (double)(vl_now_ns() - start);
    vl_summary bs = vl_summarize(batch_ns, nbatch);
    vl_alloc_stats st;
    vl_alloc_stats_get(p.alloc, &st);
    /* The timed arrays hold one sample per timed step (a step allocates or frees at
     * most once); the frees that empty the allocator are neither timed nor counted. */
    size_t timed_allocs = c.allocs, timed_frees = c.frees;
    c.alloc_ns = c.free_ns = NULL;
    while (c.nlive) free_one(&c);
    p.dev->ops->synchronize(p.dev);

    vl_summary as = vl_summarize(alloc_ns, timed_allocs), fs = vl_summarize(free_ns, timed_frees);
    char c1[256], c2[256], c3[256], header[1024], peaks[256], calls[160];
    vl_csv_meta(p.csv, "timing", "host monotonic clock around each call; ns_per_op = wall time (incl. a final "
                                 "device synchronize) / ops");
    vl_csv_meta(p.csv, "live_cap_bytes", "%llu", (unsigned long long)c.cap_bytes);
    vl_csv_meta(p.csv, "warmup_ooms", "%zu", warm_ooms);
    snprintf(header, sizeof header,
             "simulated,dist,min_size_bytes,max_size_bytes,slots,alloc_prob,ops,allocs,frees,ooms,ns_per_op,%s,%s,%s,"
             VL_BENCH_PEAK_COLUMNS "," VL_BENCH_CALL_COLUMNS,
             vl_summary_columns("batch_op", "ns", c3, sizeof c3), vl_summary_columns("alloc", "ns", c1, sizeof c1),
             vl_summary_columns("free", "ns", c2, sizeof c2));
    vl_csv_header(p.csv, header);
    vl_csv_row(p.csv, "%d,%s,%llu,%llu,%lld,%.3f,%lld,%zu,%zu,%zu,%.1f,%s,%s,%s,%s,%s", p.dev->simulated,
               dist_name, (unsigned long long)min_size, (unsigned long long)max_size, (long long)slots, alloc_prob,
               (long long)ops, timed_allocs, timed_frees, c.ooms, wall_ns / (double)ops, vl_summary_values(&bs, c3, sizeof c3),
               vl_summary_values(&as, c1, sizeof c1), vl_summary_values(&fs, c2, sizeof c2),
               vl_bench_peak_values(&st, peaks, sizeof peaks),
               vl_bench_call_values(&before, &st, (double)(timed_allocs + timed_frees), calls, sizeof calls));
    free(c.live);
    free(alloc_ns);
    free(free_ns);
    return vl_program_finish(&p);
}
