/* stream_pools: how much more a stream-ordered allocator reserves when several streams
 * allocate, and whether that runs out of a fixed budget.
 *
 * Report: pools fragment when two or more streams allocate, because memory freed on
 * one stream goes back to that stream's free list (PyTorch's caching allocator keeps a
 * cache per stream; a cudaMallocAsync pool reuses memory freed on another stream only
 * once the free is known complete or ordered by an event), so the same live set
 * reserves more the more streams allocate.
 *
 * The workload (fixed seed): --ops operations round-robin over S streams (1, 2, 4 ..
 * --max-streams); stream k allocates log-uniform sizes (256 KiB .. budget/16) while its
 * live bytes stay under its share (--fill x budget / S), otherwise frees one of its
 * blocks at random. The live set is the same for every S; on a GPU each allocation is
 * used by a kernel of --kernel-us on stream k, so frees are still pending when the
 * other streams allocate. --memory is the budget: the device is made that small
 * (lib/scenario/ballast.h), and an allocation that fails is an OOM counted in the row
 * (the stream then frees its oldest block and goes on).
 * Variants:
 *   per_stream    (bad)   stream k allocates and frees on stream k.
 *   alloc_stream  (fixed) every block is allocated and freed on one stream (the
 *                         allocation stream, stream 0): stream k waits on an event
 *                         recorded after the allocation, and the free waits on an
 *                         event recorded after stream k's use, the ordering CUDA's
 *                         stream-ordered allocator and PyTorch's record_stream ask
 *                         for. One free list serves every stream.
 * Per row: peak reserved over peak requested (the allocator's statistics), OOMs and
 * the first operation that hit one. Runs against any --alloc (raw, async, caching,
 * the peers torch and rmm where built), and on --device sim (no kernels there: the
 * per-stream caches alone). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/streams.h"
#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "kernels/spin.h"
#include "program.h"
#include "rng.h"
#include "scenario/ballast.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define MAX_STREAMS 64
#define MAX_LIVE 4096 /* blocks alive per stream at most */
#define MIN_BUDGET (64 * MiB)

static uint64_t opt_memory = 2 * GiB;
static int64_t opt_max_streams = 8, opt_ops = 4000, opt_kernel_us = 20;
static double opt_fill = 0.75;

static const vl_cli_opt options[] = {
    VL_WORKING_SET_OPTION(&opt_memory),
    {"max-streams", VL_CLI_INT, &opt_max_streams, "most allocating streams (1, 2, 4 .. this)", 1, MAX_STREAMS},
    /* Quick: 500. On the simulated device caching at 8 streams reserves 1.30x requested
     * allocating per stream against 1.08x from one allocation stream at 500 ops (1.35x and
     * 1.09x at 1000, as the H200's 1.34x and 1.10x at 717dd2d): the report's rule asks
     * for 5% more. The GPU cost is the ops (raw: ~73 ms a run, 8 runs). */
    {"ops", VL_CLI_INT, &opt_ops, "allocations and frees per run", 10, 1e8, VL_QUICK_AT_MOST, "500"},
    {"fill", VL_CLI_DOUBLE, &opt_fill, "live bytes as a share of the budget (--memory)", 0.01, 0.95},
    {"kernel-us", VL_CLI_INT, &opt_kernel_us, "device time of each block's use on its stream (GPU only)", 0, 1e6,
     VL_QUICK_AT_MOST, "10"},
    {NULL},
};

static const vl_program_def def = {
    .summary = "Allocation from 1..8 streams: peak reserved over peak requested and OOMs at a fixed budget, each "
               "stream allocating for itself vs one allocation stream.",
    .default_alloc = "caching",
    .options = options,
};

#define COLUMNS                                                                                               \
    "variant,role,streams,status,ops,allocs,frees,ooms,first_oom_op,budget_bytes,live_target_bytes,"           \
    "peak_requested_bytes,peak_reserved_bytes,reserved_over_requested,end_reserved_bytes,elapsed_ms"

enum { PER_STREAM, ALLOC_STREAM, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {"per_stream", "alloc_stream"};
static const char *const variant_role[NVARIANTS] = {"bad", "fixed"};

typedef struct block {
    void *ptr;
    size_t size;
} block;

typedef struct lane {
    vl_stream s;
    cudaEvent_t ev; /* cuda only: orders this stream against the allocation stream */
    block live[MAX_LIVE];
    size_t n, bytes;
} lane;

typedef struct run {
    vl_program *p;
    int variant, nstreams, cuda;
    lane *lanes;
    size_t budget, lane_target;
    uint64_t min_size, max_size;
    long allocs, frees, ooms, first_oom;
} run;

/* The stream a block of lane L is allocated and freed on. */
static vl_stream home(const run *r, const lane *L)
{
    return r->variant == ALLOC_STREAM ? r->lanes[0].s : L->s;
}

/* `from` happened-before everything queued on `to` from now on. */
static void order(lane *from_lane, vl_stream to)
{
    VL_CUDA_CHECK(cudaEventRecord(from_lane->ev, (cudaStream_t)from_lane->s));
    VL_CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)to, from_lane->ev, 0));
}

/* 0, or -1 on an OOM (counted). */
static int take(run *r, lane *L, size_t size, long op)
{
    vl_stream h = home(r, L);
    void *ptr = vl_allocate(r->p->alloc, size, h);
    if (!ptr) {
        r->ooms++;
        if (r->first_oom < 0) r->first_oom = op;
        return -1;
    }
    r->allocs++;
    if (r->cuda) {
        if (h != L->s) order(&r->lanes[0], L->s); /* the allocation before the use */
        if (opt_kernel_us) vl_spin((cudaStream_t)L->s, (uint64_t)opt_kernel_us * 1000u);
    }
    L->live[L->n++] = (block){ptr, size};
    L->bytes += size;
    return 0;
}

static void give_back(run *r, lane *L, size_t i)
{
    block b = L->live[i];
    L->live[i] = L->live[--L->n];
    L->bytes -= b.size;
    vl_stream h = home(r, L);
    if (r->cuda && h != L->s) order(L, h); /* the use before the free */
    vl_deallocate(r->p->alloc, b.ptr, b.size, h);
    r->frees++;
}

static void run_once(vl_program *p, vl_bench_streams *bs, int variant, int nstreams, size_t budget)
{
    run r = {.p = p, .variant = variant, .nstreams = nstreams, .cuda = !p->dev->simulated, .budget = budget,
             .first_oom = -1};
    r.lanes = calloc((size_t)nstreams, sizeof *r.lanes);
    if (!r.lanes) {
        fprintf(stderr, "stream_pools: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    for (int k = 0; k < nstreams; k++) {
        r.lanes[k].s = bs->s[k];
        if (r.cuda) VL_CUDA_CHECK(cudaEventCreateWithFlags(&r.lanes[k].ev, cudaEventDisableTiming));
    }
    r.lane_target = (size_t)(opt_fill * (double)budget) / (size_t)nstreams;
    r.min_size = 256 * KiB;
    r.max_size = budget / 16 > r.min_size ? budget / 16 : r.min_size;
    /* One sequence of sizes and one of choices, the same for every stream count. */
    vl_rng sizes, picks;
    vl_rng_seed(&sizes, p->cli.seed);
    vl_rng_seed(&picks, p->cli.seed + 1);

    p->dev->ops->synchronize(p->dev);
    vl_trim(p->alloc);
    vl_alloc_reset_peaks(p->alloc);
    uint64_t t0 = vl_now_ns();
    for (long op = 0; op < opt_ops; op++) {
        lane *L = &r.lanes[op % nstreams];
        size_t size = (size_t)vl_rng_log_uniform(&sizes, r.min_size, r.max_size);
        if (L->bytes + size <= r.lane_target && L->n < MAX_LIVE) {
            if (take(&r, L, size, op) != 0 && L->n) give_back(&r, L, 0); /* an OOM: the oldest block goes */
        } else if (L->n) {
            give_back(&r, L, (size_t)vl_rng_below(&picks, L->n));
        }
    }
    vl_alloc_stats st;
    vl_alloc_stats_get(p->alloc, &st);
    for (int k = 0; k < nstreams; k++)
        while (r.lanes[k].n) give_back(&r, &r.lanes[k], r.lanes[k].n - 1);
    p->dev->ops->synchronize(p->dev);
    double elapsed_ms = (double)(vl_now_ns() - t0) / 1e6;
    vl_alloc_stats end;
    vl_alloc_stats_get(p->alloc, &end);

    char ratio[32] = "", first[24] = "", peak_res[24], peak_req[24], end_res[24];
    if (st.peak_reserved_bytes != VL_UNKNOWN && st.peak_requested_bytes > 0)
        snprintf(ratio, sizeof ratio, "%.4f", (double)st.peak_reserved_bytes / (double)st.peak_requested_bytes);
    if (r.first_oom >= 0) snprintf(first, sizeof first, "%ld", r.first_oom);
    vl_csv_row(p->csv, "%s,%s,%d,%s,%lld,%ld,%ld,%ld,%s,%zu,%zu,%s,%s,%s,%s,%.2f", variant_name[variant],
               variant_role[variant], nstreams, r.ooms ? "oom" : "ok", (long long)opt_ops, r.allocs, r.frees, r.ooms,
               first, budget, r.lane_target * (size_t)nstreams,
               vl_csv_i64(st.peak_requested_bytes, peak_req, sizeof peak_req),
               vl_csv_i64(st.peak_reserved_bytes, peak_res, sizeof peak_res), ratio,
               vl_csv_i64(end.reserved_bytes, end_res, sizeof end_res), elapsed_ms);
    for (int k = 0; k < nstreams; k++)
        if (r.cuda) VL_CUDA_CHECK(cudaEventDestroy(r.lanes[k].ev));
    free(r.lanes);
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    vl_ballast ballast;
    size_t budget = vl_ballast_take_working_set(&ballast, &p, opt_memory);
    if (budget < MIN_BUDGET) { /* the smallest size would be a large share of each stream's live set */
        fprintf(stderr, "%s: a working set of %zu bytes is too small (--memory; at least %llu)\n", p.cli.prog, budget,
                (unsigned long long)MIN_BUDGET);
        vl_ballast_release(&ballast);
        vl_csv_discard(p.csv); /* no result: nothing under the CSV's name */
        p.csv = NULL;
        vl_program_finish(&p);
        return VL_EXIT_USAGE;
    }
    vl_bench_streams bs;
    if (vl_bench_streams_create(&bs, p.dev, (size_t)opt_max_streams, NULL) != 0) {
        fprintf(stderr, "stream_pools: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    vl_csv_meta(p.csv, "scenario", "stream_pools: peak reserved / peak requested and OOMs at a fixed budget, 1..%lld "
                                   "allocating streams vs one allocation stream",
                (long long)opt_max_streams);
    vl_csv_meta(p.csv, "workload", "%lld ops round-robin over the streams, sizes log-uniform 256 KiB .. budget/16, "
                                   "live bytes at most %.2f x budget, kernel %lld us per allocation (GPU)",
                (long long)opt_ops, opt_fill, (long long)opt_kernel_us);
    vl_csv_meta(p.csv, "reserved_over_requested", "the allocator's peak reserved / peak requested bytes of the run");
    vl_csv_header(p.csv, COLUMNS);
    for (int n = 1; n <= opt_max_streams; n *= 2)
        for (int v = 0; v < NVARIANTS; v++) run_once(&p, &bs, v, n, budget);
    p.dev->ops->synchronize(p.dev);
    vl_program_close_alloc(&p); /* before its streams go */
    vl_bench_streams_destroy(&bs);
    vl_ballast_release(&ballast);
    return vl_program_finish(&p);
}
