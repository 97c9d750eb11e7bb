/* fragmentation_churn: does churn leave free memory that one large request cannot use?
 *
 * Three allocation patterns, each from a clean allocator:
 *   random_churn     slots filled and emptied at random with log-uniform sizes, live
 *                    bytes held near a budget (default 90% of free memory);
 *   kv_cache_concat  generation with a KV cache grown by concatenation (torch.cat:
 *                    allocate old+new, copy, free old) for a batch of sequences that
 *                    end at random lengths and are replaced by new requests;
 *   varying_batch    a training loop (lib/scenario/train_model.h) whose batch size
 *                    changes every iteration.
 * Over time: allocated, reserved and device-used bytes, and "OOM despite free": an
 * allocation that failed although device free + the allocator's cached free bytes
 * exceeded the request. At the end of each pattern: the largest single allocation
 * that still succeeds vs the total free (device + cached), with the live blocks kept,
 * and again after every other live block is freed; peak reserved over peak allocated.
 * Bad vs fixed is the allocator: caching (classic segments) vs
 * caching:segments=expandable, with raw and async for comparison.
 * Runs on --device sim too (no kernels there; the KV copy runs only on cuda).
 * --memory limits the device to a working set (lib/scenario/ballast.h; default 16 GiB,
 * the same on every GPU; --quick: 4 GiB; 0: the whole device) and the patterns scale
 * to it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gpu.h"
#include "exitcodes.h"
#include "program.h"
#include "rng.h"
#include "scenario/ballast.h"
#include "scenario/largest_alloc.h"
#include "scenario/mem_sample.h"
#include "scenario/train_model.h"

#define CSV_COLUMNS                                                                                   \
    "record,pattern,step,live_bytes," VL_MEM_SAMPLE_COLUMNS ",ooms,ooms_despite_free,"                \
    "largest_alloc_bytes,total_free_bytes,largest_over_total_free,peak_reserved_over_peak_allocated," \
    "status"

/* A pattern's live blocks and what went wrong so far. Invariant: live_bytes is the sum
 * of sizes[i] over non-NULL ptrs[i]. */
typedef struct arena {
    vl_program *p;
    vl_rng rng;
    void **ptrs;
    size_t *sizes;
    size_t nslots;
    size_t live_bytes;
    long ooms, ooms_despite_free;
    double peak_ratio; /* the pattern's peak reserved / peak allocated, once measured; NAN unknown */
    const char *pattern;
} arena;

static void arena_open(arena *ar, vl_program *p, const char *pattern, size_t nslots, uint64_t seed)
{
    memset(ar, 0, sizeof *ar);
    ar->p = p;
    ar->pattern = pattern;
    ar->nslots = nslots;
    ar->ptrs = calloc(nslots, sizeof *ar->ptrs);
    ar->sizes = calloc(nslots, sizeof *ar->sizes);
    if (!ar->ptrs || !ar->sizes) abort();
    vl_rng_seed(&ar->rng, seed);
    vl_trim(p->alloc);
    vl_alloc_reset_peaks(p->alloc);
}

/* Free bytes a request could have used: device free + the allocator's cached free. */
static int64_t total_free(const vl_mem_sample *m)
{
    int64_t f = m->device_free_bytes == VL_UNKNOWN ? 0 : m->device_free_bytes;
    if (m->reserved_bytes != VL_UNKNOWN && m->allocated_bytes != VL_UNKNOWN && m->reserved_bytes > m->allocated_bytes)
        f += m->reserved_bytes - m->allocated_bytes;
    return f;
}

/* Allocates into an empty slot; NULL on OOM (counted, with its cause). */
static void *arena_alloc(arena *ar, size_t slot, size_t bytes)
{
    void *ptr = vl_allocate(ar->p->alloc, bytes, NULL);
    if (!ptr) {
        vl_mem_sample m;
        vl_mem_sample_take(ar->p->alloc, &m);
        ar->ooms++;
        ar->ooms_despite_free += total_free(&m) >= (int64_t)bytes;
        return NULL;
    }
    ar->ptrs[slot] = ptr;
    ar->sizes[slot] = bytes;
    ar->live_bytes += bytes;
    return ptr;
}

static void arena_free(arena *ar, size_t slot)
{
    if (!ar->ptrs[slot]) return;
    vl_deallocate(ar->p->alloc, ar->ptrs[slot], ar->sizes[slot], NULL);
    ar->live_bytes -= ar->sizes[slot];
    ar->ptrs[slot] = NULL;
    ar->sizes[slot] = 0;
}

static void arena_sample(arena *ar, long step)
{
    vl_mem_sample m;
    char vals[256];
    vl_mem_sample_take(ar->p->alloc, &m);
    vl_csv_row(ar->p->csv, "sample,%s,%ld,%zu,%s,%ld,%ld,,,,,ok", ar->pattern, step, ar->live_bytes,
               vl_mem_sample_values(&m, vals, sizeof vals), ar->ooms, ar->ooms_despite_free);
}

/* One large request now: largest single allocation vs total free. */
static void arena_final(arena *ar, const char *record, long step)
{
    vl_allocator *a = ar->p->alloc;
    vl_mem_sample before, after;
    char vals[256];
    if (!ar->p->dev->simulated) VL_CUDA_CHECK(cudaDeviceSynchronize());
    vl_mem_sample_take(a, &before);
    int64_t free_total = total_free(&before);
    size_t resolution = (size_t)free_total / 1024;
    if (resolution < (2u << 20)) resolution = 2u << 20;
    vl_largest_alloc r = vl_largest_alloc_probe(a, NULL, (size_t)free_total, resolution);
    vl_mem_sample_take(a, &after);
    /* The pattern's own peaks: taken before the first probe, whose allocations would count. */
    if (ar->peak_ratio == 0)
        ar->peak_ratio = before.peak_allocated_bytes > 0 && before.peak_reserved_bytes != VL_UNKNOWN
                             ? (double)before.peak_reserved_bytes / (double)before.peak_allocated_bytes
                             : NAN;
    char largest_ratio[32], peak_ratio[32];
    vl_csv_row(ar->p->csv, "%s,%s,%ld,%zu,%s,%ld,%ld,%zu,%lld,%s,%s,ok", record, ar->pattern, step,
               ar->live_bytes, vl_mem_sample_values(&before, vals, sizeof vals), ar->ooms, ar->ooms_despite_free,
               r.largest_bytes, (long long)free_total,
               vl_csv_f64(free_total > 0 ? (double)r.largest_bytes / (double)free_total : NAN, 4, largest_ratio,
                          sizeof largest_ratio),
               vl_csv_f64(ar->peak_ratio, 4, peak_ratio, sizeof peak_ratio));
}

/* The end measurements (with every other live block freed too, when asked), then
 * everything freed. */
static void arena_close(arena *ar, long step, int measure)
{
    if (measure) {
        arena_final(ar, "final_live", step);
        for (size_t i = 0; i < ar->nslots; i += 2) arena_free(ar, i);
        arena_final(ar, "final_half_freed", step);
    }
    for (size_t i = 0; i < ar->nslots; i++) arena_free(ar, i);
    free(ar->ptrs);
    free(ar->sizes);
    vl_trim(ar->p->alloc);
}

/* Every pattern's parameters, derived from free memory before anything runs so that
 * they can be written as metadata above the CSV header. */
typedef struct sizing {
    uint64_t seed;
    size_t churn_slots, churn_budget;
    uint64_t churn_lo, churn_hi;
    long churn_ops;
    size_t kv_batch, kv_max_tokens, kv_token_bytes;
    long kv_steps;
    size_t vb_max_batch;
    long vb_iterations;
    vl_train_shape vb_shape;
} sizing;

static sizing size_patterns(size_t free_bytes, int quick, uint64_t seed, double budget)
{
    sizing sz = {.seed = seed};
    sz.churn_slots = quick ? 1024 : 4096;
    sz.churn_ops = quick ? 4000 : 20000;
    sz.churn_budget = (size_t)((double)free_bytes * budget);
    /* The mean of a log-uniform size is about hi / ln(hi/lo); at equilibrium about half
     * the slots are live. With this hi they would hold well over the budget, so the
     * budget is what binds and the heap runs nearly full. */
    sz.churn_lo = 4096;
    sz.churn_hi = free_bytes / (sz.churn_slots / 32);

    sz.kv_batch = 8;
    sz.kv_max_tokens = quick ? 128 : 256;
    sz.kv_steps = quick ? 300 : 1500;
    /* At most 15% of free memory in KV caches at full length. */
    sz.kv_token_bytes = ((size_t)((double)free_bytes * 0.15) / (sz.kv_batch * sz.kv_max_tokens)) & ~(size_t)511;
    if (sz.kv_token_bytes == 0) sz.kv_token_bytes = 512;

    sz.vb_max_batch = 64;
    sz.vb_iterations = quick ? 40 : 200;
    sz.vb_shape.layers = 8;
    sz.vb_shape.loss_bytes = 4;
    /* The largest batch's activations take 40% of free memory. */
    sz.vb_shape.activation_bytes_per_sample =
        ((size_t)((double)free_bytes * 0.4) / (sz.vb_shape.layers * sz.vb_max_batch)) & ~(size_t)511;
    sz.vb_shape.param_bytes = (free_bytes / 100 / sz.vb_shape.layers) & ~(size_t)511;
    return sz;
}

static void random_churn(vl_program *p, const sizing *sz)
{
    size_t nslots = sz->churn_slots, budget = sz->churn_budget;
    long ops = sz->churn_ops, every = ops / 50;
    arena ar;
    arena_open(&ar, p, "random_churn", nslots, sz->seed);
    for (long op = 0; op < ops; op++) {
        size_t slot = (size_t)vl_rng_below(&ar.rng, nslots);
        if (ar.ptrs[slot]) {
            arena_free(&ar, slot);
        } else {
            size_t bytes = (size_t)vl_rng_log_uniform(&ar.rng, sz->churn_lo, sz->churn_hi);
            if (ar.live_bytes + bytes <= budget) arena_alloc(&ar, slot, bytes);
        }
        if (op % every == 0) arena_sample(&ar, op);
    }
    arena_close(&ar, ops, 1);
}

/* KV cache for `batch` sequences, each grown one token per step by concatenation. */
static void kv_cache_concat(vl_program *p, const sizing *sz)
{
    size_t batch = sz->kv_batch, max_tokens = sz->kv_max_tokens, token_bytes = sz->kv_token_bytes;
    long steps = sz->kv_steps, every = steps / 50;
    size_t target[64], len[64];
    /* slots 0..batch-1: each sequence's cache; slot batch: the step's scratch. */
    arena ar;
    arena_open(&ar, p, "kv_cache_concat", batch + 1, sz->seed + 1);
    for (size_t b = 0; b < batch; b++) len[b] = target[b] = 0;
    for (long step = 0; step < steps; step++) {
        size_t total_tokens = 0;
        for (size_t b = 0; b < batch; b++) {
            if (len[b] >= target[b]) { /* a request ends, a new one starts with its prompt */
                arena_free(&ar, b);
                len[b] = 0;
                target[b] = max_tokens / 8 + (size_t)vl_rng_below(&ar.rng, max_tokens - max_tokens / 8);
            }
            size_t grow = len[b] == 0 ? 1 + (size_t)vl_rng_below(&ar.rng, max_tokens / 4) : 1;
            void *old = ar.ptrs[b];
            size_t old_bytes = ar.sizes[b];
            ar.ptrs[b] = NULL; /* the concatenation's result takes the slot; old is freed after the copy */
            ar.live_bytes -= old_bytes;
            void *fresh = arena_alloc(&ar, b, (len[b] + grow) * token_bytes);
            if (!fresh) { /* this request fails; its cache is dropped */
                vl_deallocate(p->alloc, old, old_bytes, NULL);
                len[b] = target[b];
                continue;
            }
            if (old && !p->dev->simulated)
                VL_CUDA_CHECK(cudaMemcpyAsync(fresh, old, old_bytes, cudaMemcpyDeviceToDevice, 0));
            vl_deallocate(p->alloc, old, old_bytes, NULL);
            len[b] += grow;
            total_tokens += len[b];
        }
        /* Attention scratch for this step, proportional to the tokens attended. */
        if (arena_alloc(&ar, batch, total_tokens * token_bytes / 8 + 512)) arena_free(&ar, batch);
        if (step % every == 0) arena_sample(&ar, step);
    }
    arena_close(&ar, steps, 1);
}

static void varying_batch(vl_program *p, const sizing *sz)
{
    long iterations = sz->vb_iterations, every = iterations / 50 > 0 ? iterations / 50 : 1;
    size_t max_batch = sz->vb_max_batch;
    arena ar;
    arena_open(&ar, p, "varying_batch", 1, sz->seed + 2);
    vl_train_model m;
    if (vl_train_open(&m, p->alloc, NULL, &sz->vb_shape) < 0) {
        ar.ooms++;
        arena_final(&ar, "final_live", 0);
        arena_close(&ar, 0, 0);
        return;
    }
    for (long it = 0; it < iterations; it++) {
        size_t batch = 1 + (size_t)vl_rng_below(&ar.rng, max_batch);
        vl_train_graph g;
        vl_train_zero_grad(&m);
        if (vl_train_forward(&m, batch, &g) < 0 || vl_train_backward(&m, &g) < 0) ar.ooms++;
        vl_train_release(&m, &g);
        if (it % every == 0) arena_sample(&ar, it);
    }
    /* The model's parameters and gradients stay live for the large request. */
    arena_final(&ar, "final_live", iterations);
    vl_train_close(&m);
    arena_close(&ar, iterations, 0);
}

int main(int argc, char **argv)
{
    double budget = 0.9;
    uint64_t memory = 16ull << 30;
    const vl_cli_opt opts[] = {
        VL_WORKING_SET_OPTION(&memory),
        {"budget", VL_CLI_DOUBLE, &budget, "share of free memory random_churn keeps live", 0.05, 0.99},
        {NULL},
    };
    const vl_program_def def = {
        .summary = "random churn, KV-cache concatenation and varying batches: largest allocation vs free memory",
        .default_alloc = "caching",
        .options = opts,
    };
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    vl_ballast ballast;
    size_t free_bytes = vl_ballast_take_working_set(&ballast, &p, memory);
    sizing sz = size_patterns(free_bytes, p.cli.quick, p.cli.seed, budget);
    /* Each pattern's sizes are shares of the working set: below this the largest churn
     * size falls under the smallest, or a sample's activations round to nothing. */
    if (sz.churn_hi < sz.churn_lo || sz.vb_shape.activation_bytes_per_sample == 0) {
        fprintf(stderr, "%s: a working set of %zu bytes is too small for the patterns (--memory; at least %llu)\n",
                p.cli.prog, free_bytes,
                (unsigned long long)(sz.churn_lo * (sz.churn_slots / 32) > 512 * 8 * 64 * 10 / 4
                                         ? sz.churn_lo * (sz.churn_slots / 32)
                                         : 512 * 8 * 64 * 10 / 4));
        vl_ballast_release(&ballast);
        vl_csv_discard(p.csv); /* no result: nothing under the CSV's name */
        p.csv = NULL;
        vl_program_finish(&p);
        return VL_EXIT_USAGE;
    }
    vl_csv_meta(p.csv, "random_churn", "%zu slots, sizes log-uniform %llu..%llu bytes, budget %zu bytes, %ld ops",
                sz.churn_slots, (unsigned long long)sz.churn_lo, (unsigned long long)sz.churn_hi, sz.churn_budget,
                sz.churn_ops);
    vl_csv_meta(p.csv, "kv_cache_concat", "%zu sequences, %zu bytes per token, up to %zu tokens, %ld steps",
                sz.kv_batch, sz.kv_token_bytes, sz.kv_max_tokens, sz.kv_steps);
    vl_csv_meta(p.csv, "varying_batch", "%zu layers, batch 1..%zu, %zu activation bytes per sample, %ld iterations",
                sz.vb_shape.layers, sz.vb_max_batch, sz.vb_shape.activation_bytes_per_sample, sz.vb_iterations);
    vl_csv_meta(p.csv, "ooms_despite_free", "allocations that failed while device free + cached free >= request");
    vl_csv_meta(p.csv, "largest_alloc", "bisection over single allocations, live blocks kept (final_live) or every "
                                        "other one freed (final_half_freed)");
    vl_csv_header(p.csv, CSV_COLUMNS);
    random_churn(&p, &sz);
    kv_cache_concat(&p, &sz);
    varying_batch(&p, &sz);
    vl_ballast_release(&ballast);
    return vl_program_finish(&p);
}
