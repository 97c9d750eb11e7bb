/* pinned_rounding: how much host memory a pinned-memory cache pins for what it was
 * asked, and whether the remedy costs copy bandwidth.
 *
 * Report: a caching host allocator that rounds every request up to the next power of
 * two (PyTorch's CachingHostAllocator: pin_memory(), DataLoader's pin_memory=True)
 * pins about 1.4-2x the requested host memory (a 20.4 GiB request pinned 32 GiB).
 *
 * A mix of request sizes (log-uniform from 1 MiB to --max-request, fixed seed, --total
 * in all) is allocated and kept, as a pinned batch pool holds them, by three
 * allocators (lib/host_cache.h, one policy, three ways to pin):
 *   pow2_cache     (bad)   next power of two, cudaHostAlloc
 *   exact_cache    (fixed) the exact size, cudaHostAlloc
 *   host_register  (fixed) the exact size in mmap'd pages, cudaHostRegister
 * Experiments, per variant:
 *   hold     requested vs pinned: the allocator's own sum (held_bytes), and what the
 *            OS says: the deltas of VmLck, VmPin, VmRSS (/proc/self/status), of Locked
 *            summed over /proc/self/smaps, and the drop of the machine's MemFree.
 *            os_pinned_bytes is the largest of the VmLck, VmPin and Locked deltas and
 *            os_source names it; "none" when no per-process counter moved (the
 *            driver does not account the pages there): then mem_free_drop_bytes, which
 *            other processes make noisy, is the OS's figure.
 *   freed    everything freed: a cache keeps it pinned (held_bytes, OS deltas).
 *   emptied  the cache emptied: what stays pinned.
 *   copy     H2D and D2H bandwidth from a --copy-size block of each allocator (CUDA
 *            events, --reps repetitions: median, p1..p99, IQR).
 * Without a GPU: exit 77. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "host_cache.h"
#include "program.h"
#include "rng.h"
#include "scenario/proc_memory.h"
#include "stats.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define MAX_REQUESTS 100000
/* A counter that moved by less than this did not move: the process's own small
 * allocations shift VmRSS and friends by a few pages. */
#define MOVED_BYTES (1 * MiB)

static uint64_t opt_total = 2 * GiB, opt_max_request = 256 * MiB, opt_copy_size = 64 * MiB;
static int64_t opt_reps = 20;

static const vl_cli_opt options[] = {
    {"total", VL_CLI_SIZE, &opt_total, "requested pinned bytes in all (pow2 pins up to twice this)", 1 << 20, 0x1p40,
     VL_QUICK_AT_MOST, "256MiB"},
    {"max-request", VL_CLI_SIZE, &opt_max_request, "largest request of the mix (smallest: 1 MiB)", 1 << 20, 0x1p40,
     VL_QUICK_AT_MOST, "64MiB"},
    {"copy-size", VL_CLI_SIZE, &opt_copy_size, "block copied in the bandwidth experiment", 4096, 0x1p36,
     VL_QUICK_AT_MOST, "16MiB"},
    {"reps", VL_CLI_INT, &opt_reps, "copies per direction and variant", 3, 10000, VL_QUICK_AT_MOST, "5"},
    {NULL},
};

static void check_options(vl_cli *cli)
{
    if (opt_max_request > opt_total)
        vl_cli_usage_error(cli, "--max-request %llu is larger than --total %llu", (unsigned long long)opt_max_request,
                           (unsigned long long)opt_total);
}

static const vl_program_def def = {
    .summary = "Pinned host memory pinned vs requested: a power-of-two caching host allocator vs exact sizes vs "
               "cudaHostRegister, by the OS's counters, and H2D/D2H bandwidth of each.",
    .needs_cuda = 1,
    .options = options,
    .check_options = check_options,
};

#define COLUMNS                                                                                                 \
    "test,variant,role,status,requests,requested_bytes,held_bytes,held_over_requested,vm_lck_delta_bytes,"       \
    "vm_pin_delta_bytes,smaps_locked_delta_bytes,vm_rss_delta_bytes,mem_free_drop_bytes,os_pinned_bytes,"       \
    "os_source,os_over_requested,pin_ms,direction,size_bytes,time_n,time_median_ms,time_p1_ms,time_p25_ms,"     \
    "time_p75_ms,time_p99_ms,time_min_ms,time_max_ms,time_iqr_ms,bandwidth_gbps"
/* The copy columns of a hold row, and the hold columns of a copy row: empty. */
#define NO_COPY ",,,,,,,,,,,,"
#define NO_HOLD ",,,,,,,,,,,,,"

enum { POW2_CACHE, EXACT_CACHE, HOST_REGISTER, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {"pow2_cache", "exact_cache", "host_register"};
static const char *const variant_role[NVARIANTS] = {"bad", "fixed", "fixed"};

/* --- the pinners ------------------------------------------------------------------------ */

/* An out-of-memory is a result (-1, the row says oom); any other CUDA error ends the run. */
static int pin_host_alloc(void *ctx, size_t size, void **out)
{
    (void)ctx;
    cudaError_t e = cudaHostAlloc(out, size, cudaHostAllocDefault);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return -1;
    }
    VL_CUDA_CHECK(e);
    return 0;
}

static void unpin_host_alloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    VL_CUDA_CHECK(cudaFreeHost(ptr));
}

static size_t page_round(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (size + page - 1) / page * page;
}

static int pin_register(void *ctx, size_t size, void **out)
{
    (void)ctx;
    size_t len = page_round(size);
    void *h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED) return -1;
    cudaError_t e = cudaHostRegister(h, len, cudaHostRegisterDefault);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        munmap(h, len);
        return -1;
    }
    VL_CUDA_CHECK(e);
    *out = h;
    return 0;
}

static void unpin_register(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    VL_CUDA_CHECK(cudaHostUnregister(ptr));
    munmap(ptr, page_round(size));
}

static vl_host_cache *open_variant(int variant)
{
    static const vl_host_pinner host_alloc = {pin_host_alloc, unpin_host_alloc, NULL};
    static const vl_host_pinner reg = {pin_register, unpin_register, NULL};
    vl_host_cache *c = vl_host_cache_create(variant == POW2_CACHE ? VL_HOST_ROUND_POW2 : VL_HOST_ROUND_EXACT,
                                            variant == HOST_REGISTER ? &reg : &host_alloc);
    if (!c) {
        fprintf(stderr, "pinned_rounding: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    return c;
}

/* --- hold, freed, emptied ----------------------------------------------------------------- */

static const char *bytes_or_empty(int64_t v, char *buf, size_t len)
{
    if (v == VL_UNKNOWN)
        buf[0] = '\0';
    else
        snprintf(buf, len, "%lld", (long long)v);
    return buf;
}

/* after - before where both are known, else VL_UNKNOWN. */
static int64_t delta(int64_t before, int64_t after)
{
    return before < 0 || after < 0 ? VL_UNKNOWN : after - before;
}

/* One row of the allocator's and the OS's figures against the state before the variant. */
static void row_hold(vl_program *p, const char *test, int variant, const char *status, size_t requests,
                     const vl_host_cache *c, const vl_proc_memory *before, double pin_ms)
{
    vl_host_cache_stats st;
    vl_host_cache_stats_get(c, &st);
    vl_proc_memory now;
    vl_proc_memory_read(&now);
    int64_t d_lck = delta(before->vm_lck_bytes, now.vm_lck_bytes);
    int64_t d_pin = delta(before->vm_pin_bytes, now.vm_pin_bytes);
    int64_t d_locked = delta(before->smaps_locked_bytes, now.smaps_locked_bytes);
    int64_t d_rss = delta(before->vm_rss_bytes, now.vm_rss_bytes);
    int64_t free_drop = delta(now.mem_free_bytes, before->mem_free_bytes);
    /* The per-process counter that moved most, if any did. */
    static const char *const source_name[] = {"VmLck", "VmPin", "smaps_Locked"};
    int64_t moved[] = {d_lck, d_pin, d_locked};
    int64_t os = VL_UNKNOWN;
    const char *source = "none";
    for (int i = 0; i < 3; i++)
        if (moved[i] >= (int64_t)MOVED_BYTES && moved[i] > os) {
            os = moved[i];
            source = source_name[i];
        }
    char b[6][24], held_ratio[32] = "", os_ratio[32] = "", pin[32] = "";
    if (st.requested_bytes) {
        snprintf(held_ratio, sizeof held_ratio, "%.4f", (double)st.held_bytes / (double)st.requested_bytes);
        if (os != VL_UNKNOWN) snprintf(os_ratio, sizeof os_ratio, "%.4f", (double)os / (double)st.requested_bytes);
    }
    if (pin_ms >= 0) snprintf(pin, sizeof pin, "%.3f", pin_ms);
    vl_csv_row(p->csv, "%s,%s,%s,%s,%zu,%llu,%llu,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s" NO_COPY, test,
               variant_name[variant], variant_role[variant], status, requests,
               (unsigned long long)st.requested_bytes, (unsigned long long)st.held_bytes, held_ratio,
               bytes_or_empty(d_lck, b[0], 24), bytes_or_empty(d_pin, b[1], 24), bytes_or_empty(d_locked, b[2], 24),
               bytes_or_empty(d_rss, b[3], 24), bytes_or_empty(free_drop, b[4], 24), bytes_or_empty(os, b[5], 24),
               source, os_ratio, pin);
}

/* Allocates every request and keeps it, then frees them all, then empties the cache. */
static void hold(vl_program *p, int variant, const uint64_t *sizes, size_t n)
{
    void **blocks = calloc(n, sizeof *blocks);
    if (!blocks) {
        fprintf(stderr, "pinned_rounding: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    vl_proc_memory before;
    vl_proc_memory_read(&before);
    vl_host_cache *c = open_variant(variant);
    uint64_t t0 = vl_now_ns();
    size_t got = 0;
    for (; got < n; got++)
        if (!(blocks[got] = vl_host_cache_alloc(c, (size_t)sizes[got]))) break;
    double pin_ms = (double)(vl_now_ns() - t0) / 1e6;
    row_hold(p, "hold", variant, got == n ? "ok" : "oom", got, c, &before, pin_ms);
    for (size_t i = 0; i < got; i++)
        if (vl_host_cache_free(c, blocks[i]) != 0) {
            fprintf(stderr, "pinned_rounding: the cache refused its own block\n");
            exit(VL_EXIT_FAIL);
        }
    row_hold(p, "freed", variant, "ok", got, c, &before, -1);
    vl_host_cache_empty(c);
    row_hold(p, "emptied", variant, "ok", got, c, &before, -1);
    vl_host_cache_destroy(c);
    free(blocks);
}

/* --- copy ----------------------------------------------------------------------------------- */

static void copy(vl_program *p, int variant, void *dev, size_t size, double *ms)
{
    vl_host_cache *c = open_variant(variant);
    void *host = vl_host_cache_alloc(c, size);
    static const char *const direction[2] = {"h2d", "d2h"};
    vl_gpu_timer t;
    vl_gpu_timer_init(&t);
    for (int d = 0; d < 2; d++) {
        if (!host) {
            vl_csv_row(p->csv, "copy,%s,%s,oom" NO_HOLD ",%s,%zu,0,,,,,,,,,", variant_name[variant],
                       variant_role[variant], direction[d], size);
            continue;
        }
        memset(host, 1, size);
        for (int64_t r = -1; r < opt_reps; r++) { /* r == -1: warm-up */
            vl_gpu_timer_start(&t, 0);
            if (d == 0)
                VL_CUDA_CHECK(cudaMemcpyAsync(dev, host, size, cudaMemcpyHostToDevice, 0));
            else
                VL_CUDA_CHECK(cudaMemcpyAsync(host, dev, size, cudaMemcpyDeviceToHost, 0));
            float elapsed = vl_gpu_timer_stop_ms(&t, 0);
            if (r >= 0) ms[r] = elapsed;
        }
        vl_summary s = vl_summarize(ms, (size_t)opt_reps);
        char sbuf[256], gbps[32];
        vl_csv_row(p->csv, "copy,%s,%s,ok" NO_HOLD ",%s,%zu,%s,%s", variant_name[variant], variant_role[variant],
                   direction[d], size, vl_summary_values(&s, sbuf, sizeof sbuf),
                   vl_csv_f64(vl_rate((double)size / 1e9, s.median / 1e3), 3, gbps, sizeof gbps));
    }
    vl_gpu_timer_destroy(&t);
    vl_host_cache_destroy(c);
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);

    /* The request mix: log-uniform sizes (shapes of batches are rarely powers of two). */
    uint64_t *sizes = malloc(MAX_REQUESTS * sizeof *sizes);
    double *ms = malloc((size_t)opt_reps * sizeof *ms);
    if (!sizes || !ms) {
        fprintf(stderr, "pinned_rounding: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    vl_rng rng;
    vl_rng_seed(&rng, p.cli.seed);
    size_t n = 0;
    uint64_t total = 0;
    while (n < MAX_REQUESTS && total < opt_total) {
        uint64_t s = vl_rng_log_uniform(&rng, 1 * MiB, opt_max_request);
        if (s > opt_total - total) s = opt_total - total;
        sizes[n++] = s;
        total += s;
    }

    vl_csv_meta(p.csv, "scenario", "pinned_rounding: pinned host bytes held vs requested, pow2 cache vs exact vs "
                                   "cudaHostRegister; H2D/D2H bandwidth");
    vl_csv_meta(p.csv, "requests", "%zu sizes log-uniform in [1 MiB, %llu] summing to %llu bytes", n,
                (unsigned long long)opt_max_request, (unsigned long long)total);
    vl_csv_meta(p.csv, "os_pinned_bytes", "the largest delta of VmLck, VmPin, smaps Locked (>= 1 MiB), named by "
                                          "os_source; none: no per-process counter moved, see mem_free_drop_bytes");
    vl_csv_meta(p.csv, "mem_free_drop_bytes", "drop of /proc/meminfo MemFree: machine-wide, other processes add noise");
    vl_csv_meta(p.csv, "bandwidth_gbps", "size / median event time of one cudaMemcpyAsync, in GB/s");
    vl_csv_header(p.csv, COLUMNS);

    for (int v = 0; v < NVARIANTS; v++) hold(&p, v, sizes, n);

    void *dev = NULL;
    cudaError_t e = cudaMalloc(&dev, (size_t)opt_copy_size);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        vl_csv_row(p.csv, "copy,,,oom" NO_HOLD ",,%llu,0,,,,,,,,,", (unsigned long long)opt_copy_size);
    } else {
        VL_CUDA_CHECK(e);
        for (int v = 0; v < NVARIANTS; v++) copy(&p, v, dev, (size_t)opt_copy_size, ms);
        VL_CUDA_CHECK(cudaFree(dev));
    }
    free(sizes);
    free(ms);
    return vl_program_finish(&p);
}
