/* free_stall: does freeing memory wait for the GPU?
 *
 * Folklore: cudaFree synchronises the whole device, so a free in the middle of a
 * step stalls the host until every running kernel has finished, even kernels that
 * never touch the freed buffer; cudaFreeAsync and caching allocators do not.
 *
 * Two experiments, run against the allocator given with --alloc:
 *   stall  A kernel of known length spins on another stream; the host frees (or
 *          allocates) an unrelated buffer at once. Host time of that call against
 *          the kernel's device time (stall_ratio ~1: the call waited for the kernel).
 *          variants: free_during_kernel (the pattern under test), alloc_during_kernel.
 *   loop   A step that allocates a few buffers, launches a kernel that uses them and
 *          frees them, on 1 or 4 streams: steps per second.
 *          variants: alloc_free_per_iter (bad: allocation inside the loop),
 *                    hoisted (fixed: buffers allocated once, outside the loop).
 * The remedy under test is the allocator: compare raw with async and caching. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "kernels/spin.h"
#include "program.h"
#include "rng.h"
#include "scenario/size_ladder.h"
#include "scenario/stall_probe.h"
#include "stats.h"

#define MiB (UINT64_C(1) << 20)
#define KiB (UINT64_C(1) << 10)
#define BUFFERS_PER_STEP 4
#define SIZE_TABLE 64 /* steps cycle through this many pre-drawn size sets */

static int64_t opt_reps = 10, opt_loop_iters = 2000, opt_loop_kernel_us = 50;
static uint64_t opt_buffer = 64 * MiB;

static const vl_cli_opt options[] = {
    {"reps", VL_CLI_INT, &opt_reps, "stall measurements per kernel length and call", 1, 10000, VL_QUICK_AT_MOST, "3"},
    {"buffer", VL_CLI_SIZE, &opt_buffer, "size of the buffer freed/allocated in the stall test", 1, 1e12},
    {"loop-iters", VL_CLI_INT, &opt_loop_iters, "steps of the allocate-launch-free loop", 1, 1e7, VL_QUICK_AT_MOST, "300"},
    {"loop-kernel-us", VL_CLI_INT, &opt_loop_kernel_us, "length of each step's kernel (microseconds)", 1, 1e6},
    {NULL},
};

static const vl_program_def def = {
    .summary = "Does freeing wait for the GPU? cudaFree's implicit device sync vs cudaFreeAsync vs a cache, "
               "and steps/s of a loop that allocates and frees around kernels.",
    .default_alloc = "raw",
    .needs_cuda = 1,
    .options = options,
};

#define COLUMNS_HEAD "test,variant,role,status,streams,kernel_us,buffer_bytes,iterations"
#define COLUMNS_TAIL "kernel_median_ms,stall_ratio_median,wall_ms,steps_per_s,host_in_alloc_ms,host_in_free_ms,ooms"

typedef struct scenario {
    vl_program *p;
    cudaStream_t own; /* the stream the allocations are ordered on */
} scenario;

/* --- stall ---------------------------------------------------------------------------- */

typedef struct call_ctx {
    scenario *sc;
    size_t size;
    void *ptr;
} call_ctx;

static void free_call(void *arg)
{
    call_ctx *c = arg;
    vl_deallocate(c->sc->p->alloc, c->ptr, c->size, (vl_stream)c->sc->own);
    c->ptr = NULL;
}

static void alloc_call(void *arg)
{
    call_ctx *c = arg;
    c->ptr = vl_allocate(c->sc->p->alloc, c->size, (vl_stream)c->sc->own);
}

/* The measurements of one (variant, kernel length). */
typedef struct stall_series {
    double *call_ns, *kernel_ms, *ratio;
    size_t n;
    int64_t ooms;
} stall_series;

static void series_add(stall_series *ss, vl_stall s)
{
    ss->call_ns[ss->n] = s.call_ns;
    ss->kernel_ms[ss->n] = s.kernel_ms;
    ss->ratio[ss->n++] = s.ratio;
}

static void row_stall(scenario *sc, const char *variant, const char *role, uint64_t kernel_us, size_t size,
                      stall_series *ss)
{
    char sbuf[256];
    vl_summary call = vl_summarize(ss->call_ns, ss->n), kern = vl_summarize(ss->kernel_ms, ss->n),
               rat = vl_summarize(ss->ratio, ss->n);
    vl_csv_row(sc->p->csv, "stall,%s,%s,%s,1,%llu,%zu,%zu,%s,%.4f,%.4f,,,,,%lld", variant, role,
               ss->n ? "ok" : "oom", (unsigned long long)kernel_us, size, ss->n,
               vl_summary_values(&call, sbuf, sizeof sbuf), kern.median, rat.median, (long long)ss->ooms);
}

/* One kernel length: reps measurements of free and of alloc while the kernel runs,
 * after one warm-up each (first-touch costs of the allocator are not the question). */
static void stall_at(scenario *sc, vl_stall_probe *probe, uint64_t kernel_us, size_t size, int reps)
{
    stall_series ss = {.call_ns = calloc((size_t)reps, sizeof(double)),
                       .kernel_ms = calloc((size_t)reps, sizeof(double)),
                       .ratio = calloc((size_t)reps, sizeof(double))};
    if (!ss.call_ns || !ss.kernel_ms || !ss.ratio) {
        fprintf(stderr, "free_stall: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    vl_allocator *a = sc->p->alloc;
    call_ctx c = {.sc = sc, .size = size};

    /* free while the kernel runs */
    for (int r = -1; r < reps; r++) {
        c.ptr = vl_allocate(a, size, (vl_stream)sc->own);
        if (!c.ptr) {
            ss.ooms++;
            continue;
        }
        VL_CUDA_CHECK(cudaDeviceSynchronize()); /* the free is the only thing in flight */
        vl_stall s = vl_stall_measure(probe, kernel_us * 1000u, free_call, &c);
        if (r >= 0) series_add(&ss, s);
    }
    row_stall(sc, "free_during_kernel", "bad", kernel_us, size, &ss);

    /* allocate while the kernel runs */
    ss.n = 0;
    ss.ooms = 0;
    for (int r = -1; r < reps; r++) {
        VL_CUDA_CHECK(cudaDeviceSynchronize());
        vl_stall s = vl_stall_measure(probe, kernel_us * 1000u, alloc_call, &c);
        if (!c.ptr) {
            ss.ooms++;
            continue;
        }
        vl_deallocate(a, c.ptr, size, (vl_stream)sc->own);
        if (r >= 0) series_add(&ss, s);
    }
    row_stall(sc, "alloc_during_kernel", "probe", kernel_us, size, &ss);
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    free(ss.call_ns);
    free(ss.kernel_ms);
    free(ss.ratio);
}

/* --- loop ----------------------------------------------------------------------------- */

typedef struct loop_cfg {
    int streams;
    uint64_t kernel_us;
    int64_t iters;
    uint64_t sizes[SIZE_TABLE][BUFFERS_PER_STEP]; /* drawn once, same for both variants */
    uint64_t max_size;
} loop_cfg;

static void row_loop(scenario *sc, const char *variant, const char *role, const loop_cfg *cfg, double *step_ns,
                     size_t n, double wall_ms, double alloc_ms, double free_ms, int64_t ooms)
{
    char sbuf[256];
    vl_summary st = vl_summarize(step_ns, n);
    vl_csv_row(sc->p->csv, "loop,%s,%s,%s,%d,%llu,%llu,%lld,%s,,,%.3f,%.1f,%.3f,%.3f,%lld", variant, role,
               ooms ? "oom" : "ok", cfg->streams, (unsigned long long)cfg->kernel_us,
               (unsigned long long)cfg->max_size, (long long)cfg->iters, vl_summary_values(&st, sbuf, sizeof sbuf),
               wall_ms, wall_ms > 0 ? (double)cfg->iters / (wall_ms / 1e3) : 0, alloc_ms, free_ms, (long long)ooms);
}

/* Each step: allocate BUFFERS_PER_STEP buffers on its stream, launch the kernel there,
 * free them on the same stream, the way a framework's step does. step_ns is the host
 * time of each step's enqueueing (a stall shows up there). report 0: a warm-up. */
static void loop_per_iter(scenario *sc, const loop_cfg *cfg, cudaStream_t *streams, double *step_ns, int report)
{
    vl_allocator *a = sc->p->alloc;
    void *bufs[BUFFERS_PER_STEP];
    uint64_t in_alloc = 0, in_free = 0;
    int64_t ooms = 0;
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    uint64_t t_start = vl_now_ns();
    for (int64_t i = 0; i < cfg->iters; i++) {
        cudaStream_t s = streams[i % cfg->streams];
        const uint64_t *sz = cfg->sizes[i % SIZE_TABLE];
        uint64_t t0 = vl_now_ns();
        for (int b = 0; b < BUFFERS_PER_STEP; b++) {
            bufs[b] = vl_allocate(a, sz[b], (vl_stream)s);
            if (!bufs[b]) ooms++;
        }
        uint64_t t1 = vl_now_ns();
        vl_spin(s, cfg->kernel_us * 1000u);
        uint64_t t2 = vl_now_ns();
        for (int b = 0; b < BUFFERS_PER_STEP; b++) vl_deallocate(a, bufs[b], sz[b], (vl_stream)s);
        uint64_t t3 = vl_now_ns();
        in_alloc += t1 - t0;
        in_free += t3 - t2;
        step_ns[i] = (double)(t3 - t0);
    }
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    double wall_ms = (double)(vl_now_ns() - t_start) / 1e6;
    if (report)
        row_loop(sc, "alloc_free_per_iter", "bad", cfg, step_ns, (size_t)cfg->iters, wall_ms, (double)in_alloc / 1e6,
                 (double)in_free / 1e6, ooms);
}

/* The same steps with each stream's buffers allocated once before the loop. */
static void loop_hoisted(scenario *sc, const loop_cfg *cfg, cudaStream_t *streams, double *step_ns)
{
    vl_allocator *a = sc->p->alloc;
    void *bufs[4][BUFFERS_PER_STEP];
    int64_t ooms = 0;
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    uint64_t t_alloc = vl_now_ns();
    for (int s = 0; s < cfg->streams; s++)
        for (int b = 0; b < BUFFERS_PER_STEP; b++) {
            bufs[s][b] = vl_allocate(a, cfg->max_size, (vl_stream)streams[s]);
            if (!bufs[s][b]) ooms++;
        }
    /* The one-time allocations are host_in_alloc_ms, not part of the steps' wall time:
     * in a short loop they would outweigh the steps (an allocator that maps fresh memory
     * there looked 35% slower per step with 300 steps). */
    uint64_t t_start = vl_now_ns(), in_alloc = t_start - t_alloc;
    for (int64_t i = 0; i < cfg->iters; i++) {
        cudaStream_t s = streams[i % cfg->streams];
        uint64_t t0 = vl_now_ns();
        vl_spin(s, cfg->kernel_us * 1000u);
        step_ns[i] = (double)(vl_now_ns() - t0);
    }
    uint64_t t_free = vl_now_ns();
    for (int s = 0; s < cfg->streams; s++)
        for (int b = 0; b < BUFFERS_PER_STEP; b++) vl_deallocate(a, bufs[s][b], cfg->max_size, (vl_stream)streams[s]);
    uint64_t in_free = vl_now_ns() - t_free;
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    double wall_ms = (double)(vl_now_ns() - t_start) / 1e6;
    row_loop(sc, "hoisted", "fixed", cfg, step_ns, (size_t)cfg->iters, wall_ms, (double)in_alloc / 1e6,
             (double)in_free / 1e6, ooms);
}

static void run_loop(scenario *sc, vl_rng *rng, int nstreams, uint64_t kernel_us, int64_t iters, uint64_t max_size)
{
    loop_cfg cfg = {.streams = nstreams, .kernel_us = kernel_us, .iters = iters, .max_size = max_size};
    for (int i = 0; i < SIZE_TABLE; i++)
        for (int b = 0; b < BUFFERS_PER_STEP; b++) cfg.sizes[i][b] = vl_rng_log_uniform(rng, 64 * KiB, max_size);
    cudaStream_t streams[4];
    for (int s = 0; s < nstreams; s++) VL_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
    double *step_ns = calloc((size_t)iters, sizeof *step_ns);
    if (!step_ns) {
        fprintf(stderr, "free_stall: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    /* warm-up: the allocator's first segments and the kernel's first launch */
    loop_cfg warm = cfg;
    warm.iters = iters < 50 ? iters : 50;
    loop_per_iter(sc, &warm, streams, step_ns, 0);
    loop_per_iter(sc, &cfg, streams, step_ns, 1);
    loop_hoisted(sc, &cfg, streams, step_ns);
    /* The allocator's cache must not keep segments of streams about to go: giving such a
     * segment back later may synchronize its (destroyed) stream. */
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    vl_trim(sc->p->alloc);
    for (int s = 0; s < nstreams; s++) VL_CUDA_CHECK(cudaStreamDestroy(streams[s]));
    free(step_ns);
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    scenario sc = {.p = &p};
    /* Buffers: at most 1/8 of free memory each, so every allocator fits them twice over. */
    size_t size = (size_t)vl_share_of_free(p.free_at_start, 1.0 / 8, opt_buffer, 2 * MiB);
    uint64_t loop_max = vl_share_of_free(p.free_at_start, 1.0 / 64, 16 * MiB, 64 * KiB);
    static const uint64_t kernel_us_full[] = {100, 1000, 10000, 50000};
    static const uint64_t kernel_us_quick[] = {1000, 10000};
    const uint64_t *kernel_us = p.cli.quick ? kernel_us_quick : kernel_us_full;
    size_t nkernel = p.cli.quick ? 2 : 4;

    vl_csv_meta(p.csv, "scenario", "free_stall: host time of free/alloc while another stream runs a kernel; "
                                   "steps/s of an allocate-launch-free loop");
    vl_csv_meta(p.csv, "stall_buffer_bytes", "%zu", size);
    vl_csv_meta(p.csv, "stall_ratio", "host time of the call / device time of the kernel; ~1: the call waited");
    vl_csv_meta(p.csv, "host_in_free_ms", "host time inside free calls; for hoisted, the final frees, which under "
                                          "raw wait for every queued kernel");
    vl_csv_meta(p.csv, "wall_ms", "loop: from the first step to the end of the final frees and sync; hoisted's "
                                  "one-time allocations before it are host_in_alloc_ms");
    vl_csv_meta(p.csv, "loop_buffers_per_step", "%d (sizes log-uniform 64 KiB..%llu bytes)", BUFFERS_PER_STEP,
                (unsigned long long)loop_max);
    vl_csv_header(p.csv, COLUMNS_HEAD "," "time_n,time_median_ns,time_p1_ns,time_p25_ns,time_p75_ns,time_p99_ns,"
                                      "time_min_ns,time_max_ns,time_iqr_ns," COLUMNS_TAIL);

    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&sc.own, cudaStreamNonBlocking));
    if (size == 0) {
        vl_csv_row(p.csv, "stall,free_during_kernel,bad,oom,1,,0,0,,,,,,,,,,,,,,,,1");
    } else {
        vl_stall_probe probe;
        vl_stall_probe_init(&probe);
        for (size_t k = 0; k < nkernel; k++) stall_at(&sc, &probe, kernel_us[k], size, (int)opt_reps);
        vl_stall_probe_destroy(&probe);
    }

    vl_rng rng;
    vl_rng_seed(&rng, p.cli.seed);
    static const int stream_counts[] = {1, 4};
    for (size_t i = 0; i < 2; i++)
        run_loop(&sc, &rng, stream_counts[i], (uint64_t)opt_loop_kernel_us, opt_loop_iters, loop_max);

    VL_CUDA_CHECK(cudaStreamSynchronize(sc.own));
    vl_program_close_alloc(&p); /* before the stream its blocks were used on */
    VL_CUDA_CHECK(cudaStreamDestroy(sc.own));
    return vl_program_finish(&p);
}
