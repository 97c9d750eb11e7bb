/* peer_access: two GPUs of one host talking to each other: what enabling peer access
 * costs, what it buys for copies, and what a stream-ordered pool does not give a peer.
 *
 * Folklore: cudaDeviceEnablePeerAccess is cheap and free; P2P copies are much faster
 * than staging through host memory; and once peer access is on, any memory of GPU 0
 * is usable from GPU 1 (it is not for cudaMallocAsync pools: each pool needs
 * cudaMemPoolSetAccess for the peer).
 * Sections (GPU a = --device, GPU b = --peer):
 *   enable     host time of cudaDeviceEnablePeerAccess each way (CLOCK_MONOTONIC) and
 *              device used bytes (cudaMemGetInfo) on both GPUs before and after.
 *   copy       a->b bandwidth by size: cudaMemcpyPeerAsync before peer access is
 *              enabled (peer_disabled, bad) and after (peer_enabled, fixed), against a
 *              copy staged through pinned host memory (D2H on a, then H2D on b).
 *              Wall time of enqueue + sync (all methods), and device time from CUDA
 *              events for the P2P copies; median over repetitions.
 *   pool       GPU a's default pool, one cudaMallocAsync block, read by a kernel on
 *              GPU b (peer access enabled both ways): without cudaMemPoolSetAccess
 *              (bad) and with it (fixed). Each runs in a fresh process (an exec of this
 *              program): a faulting kernel poisons the context that ran it. The row
 *              records the access flags the pool reports for b, the result of a P2P
 *              copy out of the block and the kernel's error, measured, not crashed.
 * Needs 2 GPUs that can access each other (cudaDeviceCanAccessPeer). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "kernels/pattern.h"
#include "program.h"
#include "scenario/gpus.h"
#include "scenario/size_ladder.h"
#include "scenario/subprocess.h"
#include "stats.h"

#define MiB (UINT64_C(1) << 20)
#define CHANNEL_ENV "VL_PEER_ACCESS_CHANNEL"
#define PROBE_BYTES (4 * MiB)

#define COLUMNS                                                                                              \
    "section,variant,role,status,bytes,reps,wall_median_ms,device_median_ms,gbps,enable_ms,used_delta_a_bytes," \
    "used_delta_b_bytes,access_flags,copy_error,kernel_error,mismatches,error"

/* --- the pool probe (a fresh exec of this program) ------------------------------------------ */

typedef struct probe_report {
    int32_t flags;          /* cudaMemAccessFlags the pool reports for GPU b */
    char error[96];         /* the first setup call that failed, "" */
    char copy_error[48];    /* cudaMemcpyPeerAsync out of the pool block */
    char kernel_error[48];  /* the read kernel on b, at its sync */
    uint64_t mismatches;
} probe_report;

static int setup_failed(probe_report *r, const char *call, cudaError_t e)
{
    if (e == cudaSuccess) return 0;
    if (!r->error[0]) snprintf(r->error, sizeof r->error, "%s: %s", call, cudaGetErrorName(e));
    (void)cudaGetLastError();
    return 1;
}

/* mode 0: a P2P copy out of the pool block; 1: a kernel on b reading it. One per
 * process: a fault in one would decide the other. */
static int pool_probe(int fd, int a, int b, int set_access, int mode)
{
    probe_report r;
    memset(&r, 0, sizeof r);
    r.flags = -1;
    cudaStream_t sa = NULL, sb = NULL;
    cudaMemPool_t pool;
    void *block = NULL, *dst = NULL;
    unsigned long long *d_count = NULL;
    struct cudaMemLocation loc_b = {.type = cudaMemLocationTypeDevice, .id = b};
    size_t n = PROBE_BYTES / 4;
    if (setup_failed(&r, "cudaSetDevice(b)", cudaSetDevice(b)) ||
        setup_failed(&r, "cudaDeviceEnablePeerAccess(a)", cudaDeviceEnablePeerAccess(a, 0)) ||
        setup_failed(&r, "cudaStreamCreate(b)", cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking)) ||
        setup_failed(&r, "cudaMalloc(b)", cudaMalloc(&dst, PROBE_BYTES)) ||
        setup_failed(&r, "cudaMalloc(b)", cudaMalloc((void **)&d_count, sizeof *d_count)) ||
        setup_failed(&r, "cudaSetDevice(a)", cudaSetDevice(a)) ||
        setup_failed(&r, "cudaDeviceEnablePeerAccess(b)", cudaDeviceEnablePeerAccess(b, 0)) ||
        setup_failed(&r, "cudaStreamCreate(a)", cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking)) ||
        setup_failed(&r, "cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, a)))
        goto report;
    if (set_access) {
        struct cudaMemAccessDesc desc = {.location = loc_b, .flags = cudaMemAccessFlagsProtReadWrite};
        if (setup_failed(&r, "cudaMemPoolSetAccess", cudaMemPoolSetAccess(pool, &desc, 1))) goto report;
    }
    enum cudaMemAccessFlags flags;
    if (setup_failed(&r, "cudaMemPoolGetAccess", cudaMemPoolGetAccess(&flags, pool, &loc_b))) goto report;
    r.flags = (int32_t)flags;
    if (setup_failed(&r, "cudaMallocAsync", cudaMallocAsync(&block, PROBE_BYTES, sa))) goto report;
    vl_fill_iota_u32(block, n, 77, sa);
    if (setup_failed(&r, "cudaStreamSynchronize(a)", cudaStreamSynchronize(sa))) goto report;

    if (setup_failed(&r, "cudaSetDevice(b)", cudaSetDevice(b))) goto report;
    if (mode == 0) {
        cudaError_t e = cudaMemcpyPeerAsync(dst, b, block, a, PROBE_BYTES, sb);
        if (e == cudaSuccess) e = cudaStreamSynchronize(sb);
        snprintf(r.copy_error, sizeof r.copy_error, "%s", cudaGetErrorName(e));
        (void)cudaGetLastError();
    } else if (cudaMemsetAsync(d_count, 0, sizeof *d_count, sb) == cudaSuccess) {
        cudaError_t e;
        vl_count_mismatch_u32(block, n, 77, 1, d_count, sb); /* GPU b reads a's pool block */
        e = cudaStreamSynchronize(sb);
        if (e == cudaSuccess) e = cudaMemcpy(&r.mismatches, d_count, sizeof r.mismatches, cudaMemcpyDeviceToHost);
        snprintf(r.kernel_error, sizeof r.kernel_error, "%s", cudaGetErrorName(e));
    }
report:
    /* After a fault the context is gone; the process exits, the driver cleans up. */
    return vl_fd_write_full(fd, &r, sizeof r) == 0 ? 0 : 3;
}

/* --- this program -------------------------------------------------------------------------- */

typedef struct pair {
    vl_program *p;
    int a, b;
    cudaStream_t sa, sb;
} pair;

static void used_both(const pair *x, int64_t *ua, int64_t *ub)
{
    VL_CUDA_CHECK(cudaSetDevice(x->b));
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    VL_CUDA_CHECK(cudaSetDevice(x->a));
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    if (vl_gpu_used_on(x->a, ua, NULL) != 0 || vl_gpu_used_on(x->b, ub, NULL) != 0) {
        fprintf(stderr, "peer_access: cudaMemGetInfo failed\n");
        exit(VL_EXIT_FAIL);
    }
}

static void enable_section(pair *x)
{
    const int from[2] = {x->a, x->b}, to[2] = {x->b, x->a};
    for (int d = 0; d < 2; d++) {
        int64_t a0, b0, a1, b1;
        used_both(x, &a0, &b0);
        VL_CUDA_CHECK(cudaSetDevice(from[d]));
        uint64_t t0 = vl_now_ns();
        cudaError_t e = cudaDeviceEnablePeerAccess(to[d], 0);
        uint64_t t1 = vl_now_ns();
        (void)cudaGetLastError();
        VL_CUDA_CHECK(cudaSetDevice(x->a));
        used_both(x, &a1, &b1);
        vl_csv_row(x->p->csv, "enable,%d_to_%d,probe,%s,,,,,,%.3f,%lld,%lld,,,,,%s", from[d], to[d],
                   e == cudaSuccess ? "ok" : "error", (double)(t1 - t0) / 1e6, (long long)(a1 - a0),
                   (long long)(b1 - b0), e == cudaSuccess ? "" : cudaGetErrorName(e));
    }
}

enum method { P2P, STAGED };

static void copy_rows(pair *x, const char *variant, const char *role, enum method m, const uint64_t *sizes,
                      size_t nsizes, void *src, void *dst, void *host)
{
    cudaEvent_t e0, e1;
    VL_CUDA_CHECK(cudaSetDevice(x->a));
    VL_CUDA_CHECK(cudaEventCreate(&e0));
    VL_CUDA_CHECK(cudaEventCreate(&e1));
    for (size_t si = 0; si < nsizes; si++) {
        size_t bytes = sizes[si];
        int reps = vl_reps_for_size(bytes, 256 * MiB, 3, 20);
        double wall[32], dev[32];
        for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
            uint64_t t0 = vl_now_ns();
            if (m == P2P) {
                VL_CUDA_CHECK(cudaEventRecord(e0, x->sa));
                VL_CUDA_CHECK(cudaMemcpyPeerAsync(dst, x->b, src, x->a, bytes, x->sa));
                VL_CUDA_CHECK(cudaEventRecord(e1, x->sa));
                VL_CUDA_CHECK(cudaEventSynchronize(e1));
            } else {
                VL_CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, x->sa));
                VL_CUDA_CHECK(cudaStreamSynchronize(x->sa));
                VL_CUDA_CHECK(cudaSetDevice(x->b));
                VL_CUDA_CHECK(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, x->sb));
                VL_CUDA_CHECK(cudaStreamSynchronize(x->sb));
                VL_CUDA_CHECK(cudaSetDevice(x->a));
            }
            uint64_t t1 = vl_now_ns();
            if (r < 0) continue;
            wall[r] = (double)(t1 - t0) / 1e6;
            float ms = 0;
            if (m == P2P) VL_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            dev[r] = ms;
        }
        double w = vl_summarize(wall, (size_t)reps).median;
        char devtext[32] = "";
        if (m == P2P) snprintf(devtext, sizeof devtext, "%.4f", vl_summarize(dev, (size_t)reps).median);
        char gbps[32]; /* a copy too fast for the clock has no bandwidth: an empty field */
        vl_csv_row(x->p->csv, "copy,%s,%s,ok,%zu,%d,%.4f,%s,%s,,,,,,,,", variant, role, bytes, reps, w, devtext,
                   vl_csv_f64(w > 0 ? (double)bytes / (w * 1e6) : NAN, 3, gbps, sizeof gbps));
    }
    VL_CUDA_CHECK(cudaEventDestroy(e0));
    VL_CUDA_CHECK(cudaEventDestroy(e1));
}

/* One probe process; 1 when it reported. */
static int run_probe(const pair *x, int set, int mode, probe_report *r, char *end_text, size_t len)
{
    char a[16], b[16], s[16], m[16]; /* any int fits (the sanitizer build checks) */
    snprintf(a, sizeof a, "%d", x->a);
    snprintf(b, sizeof b, "%d", x->b);
    snprintf(s, sizeof s, "%d", set);
    snprintf(m, sizeof m, "%d", mode);
    const char *args[] = {"pool-probe", a, b, s, m, NULL};
    vl_child kid;
    memset(r, 0, sizeof *r);
    int got = vl_child_exec_self(&kid, args, CHANNEL_ENV) == 0 && vl_child_read(&kid, r, sizeof *r, 60000) == 1;
    vl_child_end e = vl_child_wait(&kid, 20000);
    if (!got) {
        char t[48];
        snprintf(end_text, len, " %s probe: %s", mode ? "kernel" : "copy", vl_child_end_text(e, t, sizeof t));
    }
    return got;
}

static void pool_section(pair *x)
{
    for (int set = 0; set < 2; set++) {
        probe_report rc, rk;
        char why_c[64] = "", why_k[64] = "";
        int got_c = run_probe(x, set, 0, &rc, why_c, sizeof why_c);
        int got_k = run_probe(x, set, 1, &rk, why_k, sizeof why_k);
        const char *status = !got_c || !got_k ? "no_report" : rc.error[0] || rk.error[0] ? "error" : "ok";
        char flags[16] = ""; /* empty: the probe did not get as far as asking */
        if (rk.flags >= 0) snprintf(flags, sizeof flags, "%d", (int)rk.flags);
        vl_csv_row(x->p->csv, "pool,%s,%s,%s,%llu,,,,,,,,%s,%s,%s,%llu,%s%s%s", set ? "pool_set_access" : "no_pool_access",
                   set ? "fixed" : "bad", status, (unsigned long long)PROBE_BYTES, flags, rc.copy_error,
                   rk.kernel_error, (unsigned long long)rk.mismatches, rc.error[0] ? rc.error : rk.error, why_c, why_k);
    }
}

int main(int argc, char **argv)
{
    if (getenv(CHANNEL_ENV)) { /* the pool probe */
        int fd = vl_child_fd_from_env(CHANNEL_ENV);
        if (fd < 0 || argc < 6 || strcmp(argv[1], "pool-probe") != 0) return VL_EXIT_USAGE;
        unsetenv(CHANNEL_ENV);
        return pool_probe(fd, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    }
    int64_t peer = 1;
    uint64_t max_size = 1ull << 30;
    const vl_cli_opt opts[] = {
        {"peer", VL_CLI_INT, &peer, "the other GPU (when it is --device's: the next ordinal after it)", 0, 1024},
        {"max-size", VL_CLI_SIZE, &max_size, "largest copy (capped at 1/4 of free memory)", 1 << 20, 0x1p40,
         VL_QUICK_AT_MOST, "64MiB"},
        {NULL, 0, NULL, NULL, 0, 0},
    };
    const vl_program_def def = {
        .summary = "peer access between two GPUs: time and memory of enabling it, P2P vs host-staged copy "
                   "bandwidth, and an async pool used by the peer without/with cudaMemPoolSetAccess (needs 2 GPUs)",
        .default_alloc = NULL,
        .needs_cuda = 1,
        .options = opts,
    };
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    int n = vl_gpu_count();
    if (n < 2) return vl_program_skip(&p, "needs 2 CUDA devices, found %d", n < 0 ? 0 : n);
    pair x = {.p = &p, .a = p.dev->ordinal, .b = peer != p.dev->ordinal ? (int)peer : (p.dev->ordinal + 1) % n};
    if (x.b >= n) return vl_program_skip(&p, "--peer %d: needs another of the %d CUDA devices", x.b, n);
    int ab = 0, ba = 0;
    VL_CUDA_CHECK(cudaDeviceCanAccessPeer(&ab, x.a, x.b));
    VL_CUDA_CHECK(cudaDeviceCanAccessPeer(&ba, x.b, x.a));
    if (!ab || !ba) return vl_program_skip(&p, "CUDA devices %d and %d cannot access each other (cudaDeviceCanAccessPeer)", x.a, x.b);

    int64_t used_b_start = 0, total_b = 0;
    VL_CUDA_CHECK(cudaSetDevice(x.b));
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&x.sb, cudaStreamNonBlocking));
    size_t free_b, tb;
    VL_CUDA_CHECK(cudaMemGetInfo(&free_b, &tb));
    VL_CUDA_CHECK(cudaSetDevice(x.a));
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&x.sa, cudaStreamNonBlocking));
    (void)vl_gpu_used_on(x.b, &used_b_start, &total_b);

    uint64_t fmin = p.free_at_start < free_b ? p.free_at_start : free_b;
    uint64_t top = vl_share_of_free(fmin, 0.25, max_size, 1 << 20);
    uint64_t sizes[8];
    size_t nsizes = vl_size_ladder(1 << 20, top, p.cli.quick ? 64 : 4, sizes, 8);
    void *src = NULL, *dst = NULL, *host = NULL;
    if (nsizes) {
        VL_CUDA_CHECK(cudaMalloc(&src, sizes[nsizes - 1]));
        VL_CUDA_CHECK(cudaMemset(src, 1, sizes[nsizes - 1]));
        VL_CUDA_CHECK(cudaSetDevice(x.b));
        VL_CUDA_CHECK(cudaMalloc(&dst, sizes[nsizes - 1]));
        VL_CUDA_CHECK(cudaSetDevice(x.a));
        VL_CUDA_CHECK(cudaMallocHost(&host, sizes[nsizes - 1]));
    }

    vl_csv_meta(p.csv, "scenario", "peer_access: enabling peer access, P2P vs staged copies, async pool access");
    vl_csv_meta(p.csv, "gpus", "a=%d b=%d of %d", x.a, x.b, n);
    vl_csv_meta(p.csv, "access_flags", "cudaMemPoolGetAccess for GPU b: 0 none, 1 read, 3 read-write");
    vl_csv_meta(p.csv, "gbps", "bytes / wall_median_ms (GB/s, 1e9)");
    vl_csv_header(p.csv, COLUMNS);
    copy_rows(&x, "p2p_peer_disabled", "bad", P2P, sizes, nsizes, src, dst, host);
    copy_rows(&x, "staged_pinned", "probe", STAGED, sizes, nsizes, src, dst, host);
    enable_section(&x);
    copy_rows(&x, "p2p_peer_enabled", "fixed", P2P, sizes, nsizes, src, dst, host);
    pool_section(&x);

    VL_CUDA_CHECK(cudaSetDevice(x.a));
    if (host) VL_CUDA_CHECK(cudaFreeHost(host));
    if (src) VL_CUDA_CHECK(cudaFree(src));
    (void)cudaDeviceDisablePeerAccess(x.b);
    (void)cudaGetLastError();
    VL_CUDA_CHECK(cudaStreamDestroy(x.sa));
    VL_CUDA_CHECK(cudaSetDevice(x.b));
    if (dst) VL_CUDA_CHECK(cudaFree(dst));
    (void)cudaDeviceDisablePeerAccess(x.a);
    (void)cudaGetLastError();
    VL_CUDA_CHECK(cudaStreamDestroy(x.sb));
    VL_CUDA_CHECK(cudaSetDevice(x.a));
    return vl_program_finish(&p);
}
