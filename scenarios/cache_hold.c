/* cache_hold: why is VRAM not given back after everything was freed?
 *
 * Folklore: "nvidia-smi shows my memory still in use after del/free": the allocator
 * keeps freed memory cached (reserved > allocated), the device sees it as used, and
 * only empty_cache (trim) gives it back; but emptying the cache every iteration makes
 * every allocation fall through to cudaMalloc (~47 us) instead of a cache hit.
 *
 * Two experiments, run against the allocator given with --alloc:
 *   hold   Fill most of free device memory with mixed-size buffers, free them all,
 *          and read allocated, reserved and device free memory after each step. Then
 *          two neighbours ask for half of what was free at start with a plain
 *          cudaMalloc: another process (this program run again), then code in this
 *          process outside the allocator (another library).
 *          variants: no_trim (bad: the cache keeps the memory), trim (fixed: trim
 *          after the frees, then the neighbours ask).
 *   loop   A training-like step allocates the same set of buffers, frees them and
 *          synchronises; per-call allocation time and per-step time.
 *          variants: keep_cache (fixed), trim_every_iter (bad: empty_cache in the loop).
 * If an allocator does not hold memory (raw; async with release threshold 0), the
 * rows say so with numbers: that is the finding for that allocator.
 * --memory makes the device look smaller (lib/scenario/ballast.h; default 0: the whole
 * device; --quick: a 4 GiB working set): fill, neighbour requests and held bytes are
 * then shares of that working set (the neighbours see only it: the rest is taken), so
 * the cache holds the same share of what others can get; the quick fill of 0.6 of a
 * whole 140 GB device would be ~90 GB to allocate, map and give back. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "csv.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "program.h"
#include "rng.h"
#include "scenario/ballast.h"
#include "scenario/mem_sample.h"
#include "scenario/size_ladder.h"
#include "scenario/subprocess.h"
#include "stats.h"

#define MiB (UINT64_C(1) << 20)
#define KiB (UINT64_C(1) << 10)
#define MAX_FILL_BUFFERS 8192
#define STEP_BUFFERS 24
#define CHANNEL_ENV "VL_CACHE_HOLD_CHANNEL"
#define NEIGHBOUR_TIMEOUT_MS 30000

static double opt_fill = 0.8;
static int64_t opt_iters = 200;
static uint64_t opt_memory = 0;

static const vl_cli_opt options[] = {
    /* Quick: 0.6, still more than the half of free memory the neighbours then ask for. */
    {"fill", VL_CLI_DOUBLE, &opt_fill, "share of free device memory the hold experiment allocates", 0.05, 0.95,
     VL_QUICK_AT_MOST, "0.6"},
    {"iters", VL_CLI_INT, &opt_iters, "steps of the loop experiment per variant", 2, 1e6, VL_QUICK_AT_MOST, "40"},
    VL_WORKING_SET_OPTION(&opt_memory),
    {NULL},
};

static const vl_program_def def = {
    .summary = "Why VRAM is not returned: reserved vs allocated vs device free after frees, what trim gives "
               "back, and the cost of trimming every iteration.",
    .default_alloc = "caching",
    .needs_cuda = 1,
    .options = options,
};

#define COLUMNS                                                                                                \
    "phase,variant,role,step,status," VL_MEM_SAMPLE_COLUMNS ",held_bytes,trim_released_bytes,"                 \
    "neighbour_request_bytes,neighbour_ok,iterations,alloc_n,alloc_median_ns,alloc_p1_ns,alloc_p25_ns,"         \
    "alloc_p75_ns,alloc_p99_ns,alloc_min_ns,alloc_max_ns,alloc_iqr_ns,step_median_ns,step_p99_ns,"             \
    "trim_median_ns,device_allocs_per_step,ooms"

typedef struct scenario {
    vl_program *p;
    cudaStream_t s;
    size_t free_ref; /* device free bytes the shares are taken of: at start, or the working set */
} scenario;

/* The memory columns of a row: the allocator's and the device's view, and what this
 * process holds beyond what was free when it started (held_bytes). */
static const char *mem_columns(scenario *sc, char *buf, size_t len)
{
    vl_mem_sample m;
    char mbuf[256], hbuf[24];
    vl_mem_sample_take(sc->p->alloc, &m);
    int64_t held = m.device_free_bytes == VL_UNKNOWN ? VL_UNKNOWN
                                                     : (int64_t)sc->free_ref - m.device_free_bytes;
    snprintf(buf, len, "%s,%s", vl_mem_sample_values(&m, mbuf, sizeof mbuf),
             held < 0 ? "0" : vl_csv_i64(held, hbuf, sizeof hbuf));
    return buf;
}

static void row_hold(scenario *sc, const char *variant, const char *role, const char *step, const char *status,
                     long long trim_released, long long neighbour_bytes, int neighbour_ok, long long ooms)
{
    char mem[512], tr[24], nb[24], nok[8];
    snprintf(nok, sizeof nok, "%d", neighbour_ok);
    vl_csv_row(sc->p->csv, "hold,%s,%s,%s,%s,%s,%s,%s,%s,,,,,,,,,,,,,,,%lld", variant, role, step, status,
               mem_columns(sc, mem, sizeof mem), vl_csv_i64(trim_released, tr, sizeof tr),
               vl_csv_i64(neighbour_bytes, nb, sizeof nb), neighbour_ok < 0 ? "" : nok, ooms);
}

/* --- hold ----------------------------------------------------------------------------- */

typedef struct fill {
    void *ptr[MAX_FILL_BUFFERS];
    size_t size[MAX_FILL_BUFFERS];
    size_t n;
    long long ooms;
} fill;

/* Allocates mixed sizes (log-uniform fill_lo..fill_hi, fixed seed) until target bytes
 * are held or the allocator says OOM: a workload's worth of live tensors. */
static uint64_t fill_lo = 2 * MiB, fill_hi = 256 * MiB;

static void fill_up(scenario *sc, fill *f, uint64_t target, uint64_t seed)
{
    vl_rng rng;
    vl_rng_seed(&rng, seed);
    uint64_t total = 0;
    f->n = 0;
    f->ooms = 0;
    while (total < target && f->n < MAX_FILL_BUFFERS) {
        size_t size = (size_t)vl_rng_log_uniform(&rng, fill_lo, fill_hi);
        if (size > target - total) size = (size_t)(target - total);
        void *ptr = vl_allocate(sc->p->alloc, size, (vl_stream)sc->s);
        if (!ptr) {
            f->ooms++;
            break; /* full: the rows record how far it got */
        }
        f->ptr[f->n] = ptr;
        f->size[f->n++] = size;
        total += size;
    }
}

static void free_all(scenario *sc, fill *f)
{
    for (size_t i = 0; i < f->n; i++) vl_deallocate(sc->p->alloc, f->ptr[i], f->size[i], (vl_stream)sc->s);
    f->n = 0;
    VL_CUDA_CHECK(cudaStreamSynchronize(sc->s)); /* the step is over, as after an optimizer step */
}

/* The neighbour process (this program run again, see main): cudaMalloc(bytes) on the
 * device, report the cudaError_t as an int32, give the memory back. */
static int neighbour_process_main(int fd, size_t bytes, int ordinal)
{
    void *p = NULL;
    cudaError_t e = cudaSetDevice(ordinal);
    if (e == cudaSuccess) e = cudaMalloc(&p, bytes);
    int32_t result = (int32_t)e;
    int rc = vl_fd_write_full(fd, &result, sizeof result) == 0 ? 0 : 1;
    if (p) cudaFree(p);
    return rc;
}

/* Another process asks for memory with a plain cudaMalloc. 1 granted, 0 OOM, -1 the
 * process failed otherwise (its error is printed). */
static int neighbour_process_asks(size_t bytes, int ordinal)
{
    char size_text[32], ordinal_text[16];
    snprintf(size_text, sizeof size_text, "%zu", bytes);
    snprintf(ordinal_text, sizeof ordinal_text, "%d", ordinal);
    const char *args[] = {"neighbour", size_text, ordinal_text, NULL};
    vl_child c;
    if (vl_child_exec_self(&c, args, CHANNEL_ENV) != 0) {
        perror("cache_hold: starting the neighbour process");
        return -1;
    }
    int32_t result = -1;
    int got = vl_child_read(&c, &result, sizeof result, NEIGHBOUR_TIMEOUT_MS);
    vl_child_end end = vl_child_wait(&c, NEIGHBOUR_TIMEOUT_MS);
    if (got == 1 && result == cudaErrorMemoryAllocation) return 0;
    if (got == 1 && result == cudaSuccess) return 1;
    char how[64];
    fprintf(stderr, "cache_hold: neighbour process: %s (%s)\n",
            got == 1 ? cudaGetErrorName((cudaError_t)result) : "no report", vl_child_end_text(end, how, sizeof how));
    return -1;
}

/* Code in this process outside the allocator asks with a plain cudaMalloc. 1 granted, 0 OOM. */
static int neighbour_asks(size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky; clear it */
        return 0;
    }
    VL_CUDA_CHECK(e);
    VL_CUDA_CHECK(cudaFree(p));
    return 1;
}

static void hold_variant(scenario *sc, fill *f, int trim, uint64_t target, size_t neighbour_bytes)
{
    const char *variant = trim ? "trim" : "no_trim", *role = trim ? "fixed" : "bad";
    fill_up(sc, f, target, sc->p->cli.seed);
    row_hold(sc, variant, role, "after_alloc", f->ooms ? "oom" : "ok", VL_UNKNOWN, VL_UNKNOWN, -1, f->ooms);
    free_all(sc, f);
    row_hold(sc, variant, role, "after_free", "ok", VL_UNKNOWN, VL_UNKNOWN, -1, 0);
    long long released = VL_UNKNOWN;
    if (trim) {
        released = (long long)vl_trim(sc->p->alloc);
        row_hold(sc, variant, role, "after_trim", "ok", released, VL_UNKNOWN, -1, 0);
    }
    /* The other process first: a same-process cudaMalloc may make the driver trim
     * pools, which would hide what another process sees. */
    int other = neighbour_process_asks(neighbour_bytes, sc->p->dev->ordinal);
    row_hold(sc, variant, role, "neighbour_process", other == 1 ? "ok" : other == 0 ? "oom" : "error", released,
             (long long)neighbour_bytes, other, other == 0 ? 1 : 0);
    int ok = neighbour_asks(neighbour_bytes);
    row_hold(sc, variant, role, "neighbour_cudaMalloc", ok ? "ok" : "oom", released, (long long)neighbour_bytes, ok,
             ok ? 0 : 1);
}

/* --- loop ----------------------------------------------------------------------------- */

static void loop_variant(scenario *sc, int trim, const size_t *sizes, int64_t iters, double *alloc_ns,
                         double *step_ns, double *trim_ns)
{
    vl_allocator *a = sc->p->alloc;
    void *bufs[STEP_BUFFERS];
    vl_alloc_stats before, after;
    long long ooms = 0;
    int warmup = 3;
    size_t nalloc = 0;
    for (int64_t i = -warmup; i < iters; i++) {
        if (i == 0) vl_alloc_stats_get(a, &before);
        uint64_t t0 = vl_now_ns();
        for (int b = 0; b < STEP_BUFFERS; b++) {
            uint64_t c0 = vl_now_ns();
            bufs[b] = vl_allocate(a, sizes[b], (vl_stream)sc->s);
            uint64_t c1 = vl_now_ns();
            if (!bufs[b]) ooms++;
            if (i >= 0) alloc_ns[nalloc++] = (double)(c1 - c0);
        }
        for (int b = 0; b < STEP_BUFFERS; b++) vl_deallocate(a, bufs[b], sizes[b], (vl_stream)sc->s);
        VL_CUDA_CHECK(cudaStreamSynchronize(sc->s));
        uint64_t t1 = vl_now_ns();
        if (trim) vl_trim(a);
        uint64_t t2 = vl_now_ns();
        if (i >= 0) {
            step_ns[i] = (double)(t2 - t0);
            trim_ns[i] = (double)(t2 - t1);
        }
    }
    vl_alloc_stats_get(a, &after);

    vl_summary al = vl_summarize(alloc_ns, nalloc), st = vl_summarize(step_ns, (size_t)iters),
               tr = vl_summarize(trim_ns, (size_t)iters);
    char mem[512], sbuf[256], dapi[32] = "";
    if (before.device_allocs != VL_UNKNOWN && after.device_allocs != VL_UNKNOWN)
        snprintf(dapi, sizeof dapi, "%.3f", (double)(after.device_allocs - before.device_allocs) / (double)iters);
    char trim_text[32]; /* keep_cache never trims: no trim time, an empty field */
    vl_csv_row(sc->p->csv, "loop,%s,%s,end,%s,%s,,,,%lld,%s,%.1f,%.1f,%s,%s,%lld", trim ? "trim_every_iter" : "keep_cache",
               trim ? "bad" : "fixed", ooms ? "oom" : "ok", mem_columns(sc, mem, sizeof mem), (long long)iters,
               vl_summary_values(&al, sbuf, sizeof sbuf), st.median, st.p99,
               vl_csv_f64(trim ? tr.median : NAN, 1, trim_text, sizeof trim_text), dapi, ooms);
}

int main(int argc, char **argv)
{
    /* Run again as the neighbour process: only its channel, no command line or CSV. */
    if (getenv(CHANNEL_ENV)) {
        int fd = vl_child_fd_from_env(CHANNEL_ENV);
        if (fd < 0 || argc < 4 || strcmp(argv[1], "neighbour") != 0) return VL_EXIT_USAGE;
        return neighbour_process_main(fd, (size_t)strtoull(argv[2], NULL, 10), atoi(argv[3]));
    }

    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    scenario sc = {.p = &p};
    /* Without --memory (and without --quick) nothing is taken: the whole device, as
     * found at start. */
    vl_ballast ballast;
    size_t work = vl_ballast_take_working_set(&ballast, &p, opt_memory);
    sc.free_ref = ballast.ptr ? work : p.free_at_start;
    if (p.cli.quick) {
        fill_lo = 16 * MiB; /* fewer, larger buffers: the fill takes a fifth of the calls */
        fill_hi = 1024 * MiB;
    }

    uint64_t target = vl_share_of_free(sc.free_ref, opt_fill, 0, 2 * MiB);
    size_t neighbour = (size_t)vl_share_of_free(sc.free_ref, 0.5, 0, 2 * MiB);

    /* The step's buffers: fixed sizes (log-uniform 256 KiB..64 MiB), together at most
     * 1/8 of free memory. */
    size_t sizes[STEP_BUFFERS];
    uint64_t step_cap = vl_share_of_free(sc.free_ref, 1.0 / 8, 0, 1), step_total = 0;
    vl_rng rng;
    vl_rng_seed(&rng, p.cli.seed ^ 0x5eed);
    for (int b = 0; b < STEP_BUFFERS; b++) {
        sizes[b] = (size_t)vl_rng_log_uniform(&rng, 256 * KiB, 64 * MiB);
        if (step_total + sizes[b] > step_cap) sizes[b] = 256 * KiB;
        step_total += sizes[b];
    }

    vl_csv_meta(p.csv, "scenario", "cache_hold: memory held after frees, what trim releases, cost of trimming per step");
    vl_csv_meta(p.csv, "fill_target_bytes", "%llu", (unsigned long long)target);
    vl_csv_meta(p.csv, "fill_sizes", "log-uniform %llu..%llu bytes", (unsigned long long)fill_lo,
                (unsigned long long)fill_hi);
    vl_csv_meta(p.csv, "free_at_start_bytes", "%zu", p.free_at_start);
    vl_csv_meta(p.csv, "step_bytes", "%llu in %d buffers", (unsigned long long)step_total, STEP_BUFFERS);
    vl_csv_meta(p.csv, "held_bytes", "device memory this process holds beyond what it found free at start (with a "
                                     "working set: beyond the working set's free memory)");
    vl_csv_header(p.csv, COLUMNS);

    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&sc.s, cudaStreamNonBlocking));
    fill *f = calloc(1, sizeof *f);
    double *alloc_ns = calloc((size_t)opt_iters * STEP_BUFFERS, sizeof *alloc_ns);
    double *step_ns = calloc((size_t)opt_iters, sizeof *step_ns);
    double *trim_ns = calloc((size_t)opt_iters, sizeof *trim_ns);
    if (!f || !alloc_ns || !step_ns || !trim_ns) {
        fprintf(stderr, "cache_hold: out of host memory\n");
        return VL_EXIT_FAIL;
    }

    row_hold(&sc, "baseline", "probe", "start", "ok", VL_UNKNOWN, VL_UNKNOWN, -1, 0);
    hold_variant(&sc, f, 0, target, neighbour);
    hold_variant(&sc, f, 1, target, neighbour);

    loop_variant(&sc, 0, sizes, opt_iters, alloc_ns, step_ns, trim_ns);
    loop_variant(&sc, 1, sizes, opt_iters, alloc_ns, step_ns, trim_ns);

    vl_trim(p.alloc);
    free(f);
    free(alloc_ns);
    free(step_ns);
    free(trim_ns);
    vl_program_close_alloc(&p); /* before the stream its blocks were used on */
    VL_CUDA_CHECK(cudaStreamDestroy(sc.s));
    vl_ballast_release(&ballast);
    return vl_program_finish(&p);
}
