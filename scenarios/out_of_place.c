/* out_of_place: what an expression's temporaries cost in memory and in bandwidth.
 *
 * Forms on a float32 tensor x (each written as PyTorch users write it):
 *   add_out_of_place      y = x + 1; x = y        (bad: peak 2 tensors)
 *   add_in_place          x += 1                  (fixed: peak 1)
 *   chain_temporaries     x = ((x * 2) + 1) * 3   (bad: two temporaries, peak 3)
 *   chain_in_place        x.mul_(2).add_(1).mul_(3) (fixed: peak 1, three passes)
 *   chain_fused           x = fused(x)            (fixed: one pass, peak 2)
 *   chain_fused_in_place  fused in place          (fixed: one pass, peak 1)
 * Per form and size: peak allocated/reserved over the input's size, device time
 * (CUDA events, median of many), achieved bandwidth of the bytes the form moves, and
 * the host wall time including the allocator's calls. Per form: the largest input
 * that still fits before an OOM (bisection, allocation pattern only, no kernels), for
 * each distinct pattern (1, 2 or 3 tensors alive at the peak).
 * --memory limits the device to a working set (lib/scenario/ballast.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "kernels/affine.h"
#include "kernels/pattern.h"
#include "program.h"
#include "scenario/ballast.h"
#include "scenario/largest_alloc.h"
#include "scenario/mem_sample.h"
#include "scenario/size_ladder.h"
#include "stats.h"

typedef struct form_ctx {
    vl_allocator *a;
    cudaStream_t stream;
    size_t n;    /* elements per tensor */
    int kernels; /* 0: allocation pattern only (the fit probe) */
} form_ctx;

static float *tensor(form_ctx *c)
{
    return vl_allocate(c->a, c->n * sizeof(float), (vl_stream)c->stream);
}
static void drop(form_ctx *c, float *t)
{
    vl_deallocate(c->a, t, c->n * sizeof(float), (vl_stream)c->stream);
}
static void affine(form_ctx *c, float *out, const float *in, float mul, float add)
{
    if (c->kernels) vl_affine_f32(out, in, c->n, mul, add, c->stream);
}

/* Each form replaces *x by its result. On OOM it frees its temporaries, leaves *x
 * as it was, and returns -1. */
typedef int (*form_fn)(form_ctx *c, float **x);

/* x = x * mul + add into a new tensor, the input freed after: the one out-of-place step
 * of add_out_of_place and chain_fused (peak: input and result). */
static int affine_into_new(form_ctx *c, float **x, float mul, float add)
{
    float *y = tensor(c);
    if (!y) return -1;
    affine(c, y, *x, mul, add);
    drop(c, *x);
    *x = y;
    return 0;
}

static int add_out_of_place(form_ctx *c, float **x) { return affine_into_new(c, x, 1, 1); }

static int add_in_place(form_ctx *c, float **x)
{
    affine(c, *x, *x, 1, 1);
    return 0;
}

static int chain_temporaries(form_ctx *c, float **x)
{
    float *t1 = tensor(c);
    if (!t1) return -1;
    affine(c, t1, *x, 2, 0);
    float *t2 = tensor(c);
    if (!t2) {
        drop(c, t1);
        return -1;
    }
    affine(c, t2, t1, 1, 1);
    drop(c, t1); /* the temporary's last reference goes away */
    float *y = tensor(c);
    if (!y) {
        drop(c, t2);
        return -1;
    }
    affine(c, y, t2, 3, 0);
    drop(c, t2);
    drop(c, *x);
    *x = y;
    return 0;
}

static int chain_in_place(form_ctx *c, float **x)
{
    affine(c, *x, *x, 2, 0);
    affine(c, *x, *x, 1, 1);
    affine(c, *x, *x, 3, 0);
    return 0;
}

/* ((v * 2) + 1) * 3 == 6v + 3 */
static int chain_fused(form_ctx *c, float **x) { return affine_into_new(c, x, 6, 3); }

static int chain_fused_in_place(form_ctx *c, float **x)
{
    affine(c, *x, *x, 6, 3);
    return 0;
}

static const struct form {
    const char *name, *role;
    form_fn run;
    int passes;     /* kernels, each reading and writing n floats */
    float expected; /* result when every element starts at 1.0 */
    int tensors;    /* alive at the peak, input included: forms with equal counts share a pattern */
} forms[] = {
    {"add_out_of_place", "bad", add_out_of_place, 1, 2.0f, 2},
    {"add_in_place", "fixed", add_in_place, 1, 2.0f, 1},
    {"chain_temporaries", "bad", chain_temporaries, 3, 9.0f, 3},
    {"chain_in_place", "fixed", chain_in_place, 3, 9.0f, 1},
    {"chain_fused", "fixed", chain_fused, 1, 9.0f, 2},
    {"chain_fused_in_place", "fixed", chain_fused_in_place, 1, 9.0f, 1},
};
#define NFORMS (sizeof forms / sizeof forms[0])

#define CSV_COLUMNS                                                                                       \
    "record,form,role,size_bytes,peak_allocated_bytes,peak_reserved_bytes,peak_allocated_over_input,reps," \
    "device_median_ms,device_p99_ms,device_iqr_ms,wall_median_ms,traffic_bytes,achieved_gbps,"            \
    "largest_fit_bytes,largest_fit_fraction_of_free,probes,wrong_elements,status"

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Elements of x that differ from `expected`. */
static unsigned long long wrong_elements(form_ctx *c, const float *x, float expected, unsigned long long *d_count)
{
    unsigned long long count = 0;
    VL_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof *d_count, c->stream));
    vl_count_mismatch_u32((const uint32_t *)x, c->n, float_bits(expected), 0, d_count, c->stream);
    VL_CUDA_CHECK(cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, c->stream));
    VL_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    return count;
}

static void timing_row(vl_program *p, const struct form *f, size_t bytes, cudaStream_t stream,
                       unsigned long long *d_count)
{
    vl_allocator *a = p->alloc;
    form_ctx c = {.a = a, .stream = stream, .n = bytes / sizeof(float), .kernels = 1};
    vl_trim(a);
    float *x = tensor(&c);
    if (!x) {
        vl_csv_row(p->csv, "timing,%s,%s,%zu,,,,0,,,,,,,,,,,oom", f->name, f->role, bytes);
        return;
    }
    vl_fill_u32((uint32_t *)x, c.n, float_bits(1.0f), stream);
    VL_CUDA_CHECK(cudaStreamSynchronize(stream));
    vl_alloc_reset_peaks(a);
    if (f->run(&c, &x) < 0) {
        drop(&c, x);
        vl_csv_row(p->csv, "timing,%s,%s,%zu,,,,0,,,,,,,,,,,oom", f->name, f->role, bytes);
        return;
    }
    unsigned long long wrong = wrong_elements(&c, x, f->expected, d_count);
    vl_mem_sample ms;
    vl_mem_sample_take(a, &ms);

    int reps = vl_reps_for_size(bytes, 16ull << 30, 5, p->cli.quick ? 10 : 50);
    double *dev_ms = calloc((size_t)reps, sizeof *dev_ms), *wall_ms = calloc((size_t)reps, sizeof *wall_ms);
    if (!dev_ms || !wall_ms) abort();
    vl_gpu_timer t;
    vl_gpu_timer_init(&t);
    const char *status = "ok";
    int done = 0;
    f->run(&c, &x); /* warm-up: the cache (if any) now holds this form's blocks */
    VL_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = vl_now_ns();
        vl_gpu_timer_start(&t, stream);
        if (f->run(&c, &x) < 0) {
            status = "oom";
            break;
        }
        dev_ms[done] = vl_gpu_timer_stop_ms(&t, stream);
        wall_ms[done++] = (double)(vl_now_ns() - t0) / 1e6;
    }
    vl_gpu_timer_destroy(&t);
    drop(&c, x);
    VL_CUDA_CHECK(cudaStreamSynchronize(stream));
    vl_summary ds = vl_summarize(dev_ms, (size_t)done), ws = vl_summarize(wall_ms, (size_t)done);
    double traffic = 2.0 * (double)bytes * f->passes;
    char b1[24], b2[24], over[32];
    vl_csv_row(p->csv, "timing,%s,%s,%zu,%s,%s,%s,%d,%.4f,%.4f,%.4f,%.4f,%.0f,%.1f,,,,%llu,%s", f->name, f->role,
               bytes, vl_csv_i64(ms.peak_allocated_bytes, b1, sizeof b1),
               vl_csv_i64(ms.peak_reserved_bytes, b2, sizeof b2),
               vl_csv_f64(ms.peak_allocated_bytes == VL_UNKNOWN ? NAN : (double)ms.peak_allocated_bytes / (double)bytes,
                          3, over, sizeof over),
               done,
               ds.median, ds.p99, ds.iqr, ws.median, traffic, traffic / (ds.median * 1e-3) / 1e9, wrong, status);
    free(dev_ms);
    free(wall_ms);
}

typedef struct fit_probe {
    vl_allocator *a;
    form_fn run;
} fit_probe;

/* The form's allocation pattern with an input of `bytes`: does it fit? */
static int form_fits(void *ctx, size_t bytes)
{
    fit_probe *fp = ctx;
    form_ctx c = {.a = fp->a, .stream = NULL, .n = bytes / sizeof(float), .kernels = 0};
    float *x = tensor(&c);
    if (!x) return 0;
    int ok = fp->run(&c, &x) == 0;
    drop(&c, x);
    return ok;
}

static void largest_row(vl_program *p, const struct form *f, size_t resolution)
{
    vl_trim(p->alloc);
    size_t free_now = 0, total = 0;
    if (p->dev->ops->mem_info(p->dev, &free_now, &total) != VL_DEV_OK) free_now = p->free_at_start;
    fit_probe fp = {p->alloc, f->run};
    /* Guess: the free memory split among the tensors alive at the peak. */
    size_t guess = free_now / (size_t)f->tensors;
    guess = guess > resolution ? guess - resolution : resolution;
    int reports = vl_alloc_oom_reports(p->alloc, VL_OOM_REPORT_OFF); /* its failures are the measurement */
    vl_largest_alloc r = vl_largest_fit_near(free_now, resolution, guess, form_fits, &fp);
    vl_alloc_oom_reports(p->alloc, reports);
    vl_trim(p->alloc);
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    char fraction[32]; /* no free memory to compare with: unknown, an empty field */
    vl_csv_row(p->csv, "largest,%s,%s,,,,,,,,,,,,%zu,%s,%zu,,ok", f->name, f->role, r.largest_bytes,
               vl_csv_f64(free_now ? (double)r.largest_bytes / (double)free_now : NAN, 4, fraction, sizeof fraction),
               r.probes);
}

int main(int argc, char **argv)
{
    uint64_t max_size = 16ull << 30, resolution = 64ull << 20, memory = 0;
    const vl_cli_opt opts[] = {
        VL_WORKING_SET_OPTION(&memory),
        {"max-size", VL_CLI_SIZE, &max_size, "largest tensor timed (capped at 1/4 of free memory)", 1 << 20, 0x1p42, VL_QUICK_AT_MOST, "1GiB"},
        {"fit-resolution", VL_CLI_SIZE, &resolution, "resolution of the largest-fit bisection", 1 << 20, 0x1p40},
        {NULL},
    };
    const vl_program_def def = {
        .summary = "y = x + 1 vs x += 1 and chains with temporaries: peak memory, largest fit, bandwidth",
        .default_alloc = "caching",
        .needs_cuda = 1,
        .options = opts,
    };
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    vl_ballast ballast;
    size_t work = vl_ballast_take_working_set(&ballast, &p, memory);

    /* Timed sizes up to a quarter of free memory: chain_temporaries needs three tensors. */
    uint64_t top = vl_share_of_free(work, 0.25, max_size, 1 << 20);
    uint64_t sizes[12];
    size_t nsizes = vl_size_ladder(64ull << 20, top, p.cli.quick ? 16 : 4, sizes, 12);

    cudaStream_t stream;
    unsigned long long *d_count;
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    VL_CUDA_CHECK(cudaMalloc((void **)&d_count, sizeof *d_count));

    vl_csv_meta(p.csv, "traffic_bytes", "bytes the form's kernels read and write (2 x size per pass)");
    vl_csv_meta(p.csv, "largest_fit", "bisection to %llu bytes over the allocation pattern only (no kernels)",
                (unsigned long long)resolution);
    vl_csv_header(p.csv, CSV_COLUMNS);
    for (size_t s = 0; s < nsizes; s++)
        for (size_t f = 0; f < NFORMS; f++) timing_row(&p, &forms[f], sizes[s], stream, d_count);
    for (size_t f = 0; f < NFORMS; f++) {
        int seen = 0; /* the same pattern as an earlier form: same answer */
        for (size_t g = 0; g < f; g++) seen |= forms[g].tensors == forms[f].tensors;
        if (!seen) largest_row(&p, &forms[f], resolution);
    }
    vl_ballast_release(&ballast);

    VL_CUDA_CHECK(cudaFree(d_count));
    vl_program_close_alloc(&p); /* before the stream its blocks were used on */
    VL_CUDA_CHECK(cudaStreamDestroy(stream));
    return vl_program_finish(&p);
}
