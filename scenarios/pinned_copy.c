/* pinned_copy: pageable vs pinned host memory for host->device copies.
 *
 * Folklore: copies from pageable memory are slow and cudaMemcpyAsync from pageable
 * memory is not asynchronous (the call returns only after the copy); pinned memory
 * fixes both, but pinning is expensive, so pin once and reuse, never per copy.
 *
 * Three experiments (device buffers: plain cudaMalloc; no --alloc):
 *   copy      H2D cudaMemcpyAsync by size; host time until the call returns (call_*)
 *             and until the copy is done (time_*), bandwidth, and whether the call
 *             returned early (before half of the copy's time had passed).
 *             variants: pageable (bad), pinned (fixed: cudaMallocHost once),
 *                       pin_per_copy (bad: cudaHostRegister + copy + unregister each time).
 *   overlap   The largest copy issued while a kernel of the copy's own length runs
 *             on another stream: overlap_fraction 1 = fully hidden, 0 = serialised;
 *             call_* says how long the host was blocked issuing the copy.
 *   pin_cost  What pinning costs by size: cudaMallocHost/cudaFreeHost, cudaHostRegister
 *             of fresh pages and of already touched pages, and fresh pages + first
 *             touch (memset) as the pageable baseline. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "kernels/spin.h"
#include "program.h"
#include "scenario/size_ladder.h"
#include "stats.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define MAX_SIZES 32

static uint64_t opt_max_copy = 256 * MiB, opt_max_pin = 1 * GiB;

static const vl_cli_opt options[] = {
    {"max-copy", VL_CLI_SIZE, &opt_max_copy, "largest copy (also capped at 1/4 of free device memory)", 64 * 1024,
     1e12, VL_QUICK_AT_MOST, "64MiB"},
    {"max-pin", VL_CLI_SIZE, &opt_max_pin, "largest host buffer pinned in pin_cost", 1 << 20, 1e12, VL_QUICK_AT_MOST, "64MiB"},
    {NULL},
};

static const vl_program_def def = {
    .summary = "Pageable vs pinned host->device copies: bandwidth by size, whether the async call returns "
               "early, overlap with a kernel, and the cost of pinning.",
    .needs_cuda = 1,
    .options = options,
};

#define COLUMNS                                                                                              \
    "test,variant,role,status,size_bytes,time_n,time_median_ns,time_p1_ns,time_p25_ns,time_p75_ns,"           \
    "time_p99_ns,time_min_ns,time_max_ns,time_iqr_ns,call_median_ns,gpu_copy_median_ms,bandwidth_gbps,"       \
    "returned_early,kernel_ms,alone_ms,overlap_fraction,unpin_median_ns"

enum { PAGEABLE, PINNED, PIN_PER_COPY, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {"pageable", "pinned", "pin_per_copy"};
static const char *const variant_role[NVARIANTS] = {"bad", "fixed", "bad"};

typedef struct scenario {
    vl_program *p;
    cudaStream_t copy, compute;
    cudaEvent_t e0, e1;
    void *dev;
    char *pageable; /* malloc'd, touched */
    char *pinned;   /* cudaMallocHost */
    size_t max;
    double *t_call, *t_done, *t_gpu;
} scenario;

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "pinned_copy: out of host memory (%zu bytes)\n", n);
        exit(VL_EXIT_FAIL);
    }
    return p;
}

/* --- copy ----------------------------------------------------------------------------- */

typedef struct copy_result {
    vl_summary done;
    double call_median_ns, gpu_median_ms;
} copy_result;

static copy_result copy_at(scenario *sc, int variant, size_t size, int reps)
{
    char *src = variant == PINNED ? sc->pinned : sc->pageable;
    for (int r = -1; r < reps; r++) { /* r == -1: warm-up */
        uint64_t t0 = vl_now_ns();
        if (variant == PIN_PER_COPY) VL_CUDA_CHECK(cudaHostRegister(src, size, cudaHostRegisterDefault));
        VL_CUDA_CHECK(cudaEventRecord(sc->e0, sc->copy));
        VL_CUDA_CHECK(cudaMemcpyAsync(sc->dev, src, size, cudaMemcpyHostToDevice, sc->copy));
        VL_CUDA_CHECK(cudaEventRecord(sc->e1, sc->copy));
        uint64_t t1 = vl_now_ns();
        VL_CUDA_CHECK(cudaStreamSynchronize(sc->copy));
        if (variant == PIN_PER_COPY) VL_CUDA_CHECK(cudaHostUnregister(src));
        uint64_t t2 = vl_now_ns();
        float ms = 0;
        VL_CUDA_CHECK(cudaEventElapsedTime(&ms, sc->e0, sc->e1));
        if (r >= 0) {
            sc->t_call[r] = (double)(t1 - t0);
            sc->t_done[r] = (double)(t2 - t0);
            sc->t_gpu[r] = ms;
        }
    }
    copy_result res;
    res.done = vl_summarize(sc->t_done, (size_t)reps);
    res.call_median_ns = vl_summarize(sc->t_call, (size_t)reps).median;
    res.gpu_median_ms = vl_summarize(sc->t_gpu, (size_t)reps).median;
    return res;
}

static void row_copy(scenario *sc, int variant, size_t size, const copy_result *r)
{
    char sbuf[256];
    double gbps = r->done.median > 0 ? (double)size / r->done.median : 0; /* bytes/ns = GB/s */
    int early = r->call_median_ns < 0.5 * r->done.median;
    vl_csv_row(sc->p->csv, "copy,%s,%s,ok,%zu,%s,%.1f,%.4f,%.3f,%d,,,,", variant_name[variant],
               variant_role[variant], size, vl_summary_values(&r->done, sbuf, sizeof sbuf), r->call_median_ns,
               r->gpu_median_ms, gbps, early);
}

/* --- overlap -------------------------------------------------------------------------- */

/* The copy of `size` alone, then issued right after a kernel of the same length was
 * launched on the compute stream (so full overlap halves the time, none doubles it);
 * both are host times until everything is done, measured here back to back. */
static void overlap_at(scenario *sc, int variant, size_t size, int reps)
{
    char *src = variant == PINNED ? sc->pinned : sc->pageable;
    for (int r = -1; r < reps; r++) {
        VL_CUDA_CHECK(cudaDeviceSynchronize());
        uint64_t t0 = vl_now_ns();
        VL_CUDA_CHECK(cudaMemcpyAsync(sc->dev, src, size, cudaMemcpyHostToDevice, sc->copy));
        VL_CUDA_CHECK(cudaStreamSynchronize(sc->copy));
        if (r >= 0) sc->t_gpu[r] = (double)(vl_now_ns() - t0);
    }
    double alone_ms = vl_summarize(sc->t_gpu, (size_t)reps).median / 1e6;
    double kernel_ms = alone_ms;
    for (int r = -1; r < reps; r++) {
        VL_CUDA_CHECK(cudaDeviceSynchronize());
        uint64_t t0 = vl_now_ns();
        vl_spin(sc->compute, (uint64_t)(kernel_ms * 1e6));
        uint64_t t1 = vl_now_ns();
        VL_CUDA_CHECK(cudaMemcpyAsync(sc->dev, src, size, cudaMemcpyHostToDevice, sc->copy));
        uint64_t t2 = vl_now_ns();
        VL_CUDA_CHECK(cudaStreamSynchronize(sc->copy));
        VL_CUDA_CHECK(cudaStreamSynchronize(sc->compute));
        uint64_t t3 = vl_now_ns();
        if (r >= 0) {
            sc->t_done[r] = (double)(t3 - t0);
            sc->t_call[r] = (double)(t2 - t1);
        }
    }
    vl_summary both = vl_summarize(sc->t_done, (size_t)reps);
    double call = vl_summarize(sc->t_call, (size_t)reps).median;
    double both_ms = both.median / 1e6;
    /* Time saved against running one after the other, as a share of the shorter one. */
    double shorter = alone_ms < kernel_ms ? alone_ms : kernel_ms;
    double overlap = shorter > 0 ? (alone_ms + kernel_ms - both_ms) / shorter : NAN; /* NAN: nothing to overlap */
    if (overlap < 0) overlap = 0;
    if (overlap > 1) overlap = 1;
    char sbuf[256], overlap_text[32];
    vl_csv_row(sc->p->csv, "overlap,%s,%s,ok,%zu,%s,%.1f,,,,%.4f,%.4f,%s,", variant_name[variant],
               variant_role[variant], size, vl_summary_values(&both, sbuf, sizeof sbuf), call, kernel_ms, alone_ms,
               vl_csv_f64(overlap, 3, overlap_text, sizeof overlap_text));
}

/* --- pin_cost ------------------------------------------------------------------------- */

enum { PIN_MALLOCHOST, PIN_REGISTER_FRESH, PIN_REGISTER_TOUCHED, PIN_NONE_TOUCH, NPIN };
static const char *const pin_name[NPIN] = {"cudaMallocHost", "cudaHostRegister_fresh", "cudaHostRegister_touched",
                                           "mmap_first_touch"};

/* Fresh anonymous pages straight from the kernel: malloc would hand back heap memory
 * that earlier repetitions already touched, hiding the page-fault cost. */
static void *fresh_pages(size_t size)
{
    void *h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED) {
        fprintf(stderr, "pinned_copy: out of host memory (%zu bytes)\n", size);
        exit(VL_EXIT_FAIL);
    }
    return h;
}

static void pin_cost_at(scenario *sc, int how, size_t size, int reps)
{
    for (int r = -1; r < reps; r++) {
        uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
        void *h = NULL;
        switch (how) {
        case PIN_MALLOCHOST:
            t0 = vl_now_ns();
            VL_CUDA_CHECK(cudaMallocHost(&h, size));
            t1 = vl_now_ns();
            t2 = vl_now_ns();
            VL_CUDA_CHECK(cudaFreeHost(h));
            t3 = vl_now_ns();
            break;
        case PIN_REGISTER_FRESH:
        case PIN_REGISTER_TOUCHED:
            h = fresh_pages(size);
            if (how == PIN_REGISTER_TOUCHED) memset(h, 1, size);
            t0 = vl_now_ns();
            VL_CUDA_CHECK(cudaHostRegister(h, size, cudaHostRegisterDefault));
            t1 = vl_now_ns();
            t2 = vl_now_ns();
            VL_CUDA_CHECK(cudaHostUnregister(h));
            t3 = vl_now_ns();
            munmap(h, size);
            break;
        default:
            t0 = vl_now_ns();
            h = fresh_pages(size);
            memset(h, 1, size); /* pageable memory costs its page faults on first touch */
            t1 = vl_now_ns();
            t2 = vl_now_ns();
            munmap(h, size);
            t3 = vl_now_ns();
            break;
        }
        if (r >= 0) {
            sc->t_done[r] = (double)(t1 - t0);
            sc->t_call[r] = (double)(t3 - t2);
        }
    }
    vl_summary pin = vl_summarize(sc->t_done, (size_t)reps);
    double unpin = vl_summarize(sc->t_call, (size_t)reps).median;
    char sbuf[256];
    vl_csv_row(sc->p->csv, "pin_cost,%s,%s,ok,%zu,%s,,,,,,,,%.1f", pin_name[how],
               how == PIN_NONE_TOUCH ? "baseline" : "probe", size, vl_summary_values(&pin, sbuf, sizeof sbuf), unpin);
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    scenario sc = {.p = &p};
    int quick = p.cli.quick;
    /* Copies: up to max-copy, at most 1/4 of free device memory. */
    sc.max = (size_t)vl_share_of_free(p.free_at_start, 0.25, opt_max_copy, 64 * KiB);
    uint64_t copy_sizes[MAX_SIZES], pin_sizes[MAX_SIZES];
    size_t ncopy = vl_size_ladder(64 * KiB, sc.max, 4, copy_sizes, MAX_SIZES);
    size_t npin = vl_size_ladder(1 * MiB, opt_max_pin, 4, pin_sizes, MAX_SIZES);
    /* Repetitions: about 1 GiB (quick: 256 MiB) moved per size, 3..100 times. */
    uint64_t bytes_per_size = quick ? 256 * MiB : 1 * GiB;

    vl_csv_meta(p.csv, "scenario", "pinned_copy: pageable vs pinned H2D copies, async-call return, overlap, pin cost");
    vl_csv_meta(p.csv, "bandwidth_gbps", "bytes per nanosecond of host time from the call to the end of the copy");
    vl_csv_meta(p.csv, "returned_early", "1 when the cudaMemcpyAsync call returned before half of the copy's time");
    vl_csv_header(p.csv, COLUMNS);

    if (ncopy == 0) {
        vl_csv_row(p.csv, "copy,pinned,fixed,oom,0,0,,,,,,,,,,,,,,,,");
        return vl_program_finish(&p);
    }
    cudaError_t e = cudaMalloc(&sc.dev, sc.max);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        vl_csv_row(p.csv, "copy,pinned,fixed,oom,%zu,0,,,,,,,,,,,,,,,,", sc.max);
        return vl_program_finish(&p);
    }
    VL_CUDA_CHECK(e);
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&sc.copy, cudaStreamNonBlocking));
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&sc.compute, cudaStreamNonBlocking));
    VL_CUDA_CHECK(cudaEventCreate(&sc.e0));
    VL_CUDA_CHECK(cudaEventCreate(&sc.e1));
    sc.pageable = xmalloc(sc.max);
    memset(sc.pageable, 1, sc.max); /* page faults are not part of the copy */
    VL_CUDA_CHECK(cudaMallocHost((void **)&sc.pinned, sc.max));
    memset(sc.pinned, 1, sc.max);
    sc.t_call = xmalloc(100 * sizeof(double));
    sc.t_done = xmalloc(100 * sizeof(double));
    sc.t_gpu = xmalloc(100 * sizeof(double));

    for (size_t i = 0; i < ncopy; i++) {
        int reps = vl_reps_for_size(copy_sizes[i], bytes_per_size, 3, quick ? 20 : 100);
        for (int v = 0; v < NVARIANTS; v++) {
            copy_result r = copy_at(&sc, v, (size_t)copy_sizes[i], reps);
            row_copy(&sc, v, (size_t)copy_sizes[i], &r);
        }
    }

    for (int v = PAGEABLE; v <= PINNED; v++) overlap_at(&sc, v, sc.max, quick ? 3 : 10);

    /* Pinning: about 1 GiB (quick: 64 MiB) pinned per size and way, 2..20 times. Quick
     * pins the most bytes of the job (4 ways x 1..64 MiB: ~1 s of 2.6 s at 256 MiB per
     * size, H200); 64 MiB gives 20, 16, 4 and 2 repetitions, the 2 at its largest size
     * as the full tier's at 1 GiB. */
    for (size_t i = 0; i < npin; i++) {
        int reps = vl_reps_for_size(pin_sizes[i], quick ? 64 * MiB : 1 * GiB, 2, 20);
        for (int how = 0; how < NPIN; how++) pin_cost_at(&sc, how, (size_t)pin_sizes[i], reps);
    }

    VL_CUDA_CHECK(cudaDeviceSynchronize());
    VL_CUDA_CHECK(cudaFreeHost(sc.pinned));
    free(sc.pageable);
    free(sc.t_call);
    free(sc.t_done);
    free(sc.t_gpu);
    VL_CUDA_CHECK(cudaEventDestroy(sc.e0));
    VL_CUDA_CHECK(cudaEventDestroy(sc.e1));
    VL_CUDA_CHECK(cudaStreamDestroy(sc.copy));
    VL_CUDA_CHECK(cudaStreamDestroy(sc.compute));
    VL_CUDA_CHECK(cudaFree(sc.dev));
    return vl_program_finish(&p);
}
