/* context_cost: the device memory each process pays before it allocates anything.
 *
 * Report: a CUDA context costs about 300 MB with lazy module loading and far more
 * with eager loading (PyTorch measured 287 MB lazy against 667 MB eager), and a
 * multi-process or multi-GPU job pays it again in every process.
 *
 * Every sample is a fresh process (this program exec'd as a child, so nothing of this
 * process's context is shared) that creates its context, then, by configuration:
 *   fatbin  loads a large fat binary (scenarios/fatbin/fat_kernels.cu, embedded here:
 *           cudaLibraryLoadData) and launches one of its kernels, as a program that
 *           links many kernels and uses a few;
 *   cublas  cublasCreate (cuBLAS from the CUDA toolkit);
 * with CUDA_MODULE_LOADING=EAGER (bad: every kernel is loaded at once) or LAZY (fixed:
 * only what is launched). This process reads the device's used memory (cudaMemGetInfo,
 * device-wide) before the child starts and once it reports ready: the difference is
 * the child's cost. Other processes on the GPU add noise, so each configuration runs
 * --samples times, interleaved with the others.
 * Experiments:
 *   context    one child per sample and configuration (2 x 2 x 2 configurations).
 *   processes  N children alive at once on one GPU (1, 2, 4 .. --max-procs), lazy and
 *              eager: the used memory grows N times the per-process cost.
 *   per_gpu    one child on each GPU (where two or more are visible; a row
 *              `skipped` with the reason otherwise): the cost is paid on every GPU.
 * Without a GPU: exit 77. */
#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "program.h"
#include "scenario/gpus.h"
#include "scenario/subprocess.h"
#include "stats.h"

#define MiB (UINT64_C(1) << 20)
#define CHANNEL_ENV "VL_CONTEXT_COST_CHANNEL"
#define MAX_PROCS 64
#define READY_TIMEOUT_MS 60000
#define EXIT_TIMEOUT_MS 20000
#define RELEASE_TIMEOUT_MS 10000

/* The fat binary, linked in as data (mk/failmodes.mk). */
extern const unsigned char vl_fat_image[], vl_fat_image_end[];

static int64_t opt_samples = 1, opt_max_procs = 4;

static const vl_cli_opt options[] = {
    {"samples", VL_CLI_INT, &opt_samples, "fresh processes per configuration (more: repeat the run, make bench REPEAT=N)", 1, 1000},
    {"max-procs", VL_CLI_INT, &opt_max_procs, "most processes alive at once on one GPU (1, 2, 4 .. this)", 1,
     MAX_PROCS, VL_QUICK_AT_MOST, "2"},
    {NULL},
};

static const vl_program_def def = {
    .summary = "Device memory per process: CUDA context with lazy vs eager module loading, with and without a "
               "large fat binary and cuBLAS; several processes on one GPU, one per GPU.",
    .needs_cuda = 1,
    .options = options,
};

#define COLUMNS                                                                                              \
    "test,variant,role,status,loading,fatbin,cublas,sample,workers,gpu,device_used_bytes,per_process_bytes," \
    "child_free_bytes,startup_median_ms,startup_max_ms,release_ms,error,reason"

typedef struct config {
    int eager, fatbin, cublas;
} config;

/* --- the child ----------------------------------------------------------------------------- */

typedef struct child_report {
    int32_t ok;
    char error[96];     /* the first failed call and its error, when !ok */
    uint64_t ready_ns;  /* CLOCK_MONOTONIC (system-wide) */
    uint64_t free_bytes; /* cudaMemGetInfo as the child saw it once ready */
} child_report;

static int fail_cuda(child_report *r, const char *call, cudaError_t e)
{
    if (e == cudaSuccess) return 0;
    snprintf(r->error, sizeof r->error, "%s: %s", call, cudaGetErrorName(e));
    return -1;
}

/* Creates the context and what the configuration adds; reports; holds it all until
 * released (EOF on fd). */
static int child(int fd, int ordinal, int fatbin, int cublas)
{
    child_report r;
    memset(&r, 0, sizeof r);
    cudaLibrary_t lib = NULL;
    cublasHandle_t handle = NULL;
    int bad = fail_cuda(&r, "cudaSetDevice", cudaSetDevice(ordinal)) || fail_cuda(&r, "cudaFree(0)", cudaFree(0));
    if (!bad && fatbin) {
        cudaKernel_t k;
        dim3 one = {1, 1, 1};
        float *x = NULL;
        int n = 0;
        void *args[] = {&x, &n};
        bad = fail_cuda(&r, "cudaLibraryLoadData",
                        cudaLibraryLoadData(&lib, vl_fat_image, NULL, NULL, 0, NULL, NULL, 0)) ||
              fail_cuda(&r, "cudaLibraryGetKernel", cudaLibraryGetKernel(&k, lib, "vl_fat_touch")) ||
              fail_cuda(&r, "cudaLaunchKernel", cudaLaunchKernel((const void *)k, one, one, args, 0, 0)) ||
              fail_cuda(&r, "kernel launch", cudaGetLastError()) ||
              fail_cuda(&r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
    }
    if (!bad && cublas) {
        cublasStatus_t st = cublasCreate(&handle);
        if (st != CUBLAS_STATUS_SUCCESS) {
            snprintf(r.error, sizeof r.error, "cublasCreate: %s", cublasGetStatusName(st));
            bad = 1;
        }
    }
    size_t free_b = 0, total_b = 0;
    if (!bad) bad = fail_cuda(&r, "cudaMemGetInfo", cudaMemGetInfo(&free_b, &total_b));
    r.ok = !bad;
    r.free_bytes = free_b;
    r.ready_ns = vl_now_ns();
    if (vl_fd_write_full(fd, &r, sizeof r) != 0) return 3;
    char byte;
    vl_fd_read_full(fd, &byte, 1); /* until the parent releases us */
    if (handle) cublasDestroy(handle);
    if (lib) cudaLibraryUnload(lib);
    return bad ? 1 : 0;
}

/* --- the parent ---------------------------------------------------------------------------- */

static void variant_name(const config *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", c->eager ? "eager" : "lazy", c->fatbin ? "+fatbin" : "", c->cublas ? "+cublas" : "");
}

/* Starts one child per entry of gpus[] with the configuration's module loading. */
static void start_children(const config *c, const int *gpus, int n, vl_child *kids)
{
    for (int i = 0; i < n; i++) {
        char ordinal[16];
        snprintf(ordinal, sizeof ordinal, "%d", gpus[i]);
        const char *args[] = {"child", ordinal, c->fatbin ? "1" : "0", c->cublas ? "1" : "0", NULL};
        if (vl_child_exec_self_env(&kids[i], args, CHANNEL_ENV, "CUDA_MODULE_LOADING", c->eager ? "EAGER" : "LAZY") !=
            0) {
            kids[i].pid = -1;
            kids[i].fd = -1;
        }
    }
}

/* Runs n children at once, one on each gpus[i], and writes one row per GPU involved:
 * the used memory the children added there. */
static void run_group(vl_program *p, const char *test, const config *c, int sample, const int *gpus, int n)
{
    int distinct[MAX_PROCS], ndistinct = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int k = 0; k < ndistinct; k++) seen |= distinct[k] == gpus[i];
        if (!seen) distinct[ndistinct++] = gpus[i];
    }
    int64_t before[MAX_PROCS], after[MAX_PROCS];
    for (int k = 0; k < ndistinct; k++) before[k] = vl_gpu_used_when_idle(distinct[k]);
    VL_CUDA_CHECK(cudaSetDevice(p->dev->ordinal));

    vl_child kids[MAX_PROCS];
    child_report rep[MAX_PROCS];
    memset(rep, 0, sizeof rep); /* a child that never reports stays !ok */
    uint64_t t0 = vl_now_ns();
    start_children(c, gpus, n, kids);
    int ok = 0;
    char error[128] = "";
    double startup[MAX_PROCS];
    uint64_t deadline = t0 + (uint64_t)READY_TIMEOUT_MS * 1000000u;
    for (int i = 0; i < n; i++) {
        uint64_t now = vl_now_ns();
        int left_ms = now < deadline ? (int)((deadline - now) / 1000000u) + 1 : 1;
        int got = kids[i].pid > 0 && vl_child_read(&kids[i], &rep[i], sizeof rep[i], left_ms) == 1;
        if (got && rep[i].ok) {
            startup[ok++] = (double)(rep[i].ready_ns - t0) / 1e6;
        } else if (!error[0]) {
            snprintf(error, sizeof error, "%s", got ? rep[i].error : "no report (failed to start or timed out)");
            vl_one_line(error);
        }
    }
    for (int k = 0; k < ndistinct; k++) {
        int64_t used = 0, total = 0;
        VL_CUDA_CHECK((cudaError_t)vl_gpu_used_on(distinct[k], &used, &total));
        after[k] = used;
    }
    VL_CUDA_CHECK(cudaSetDevice(p->dev->ordinal));
    for (int i = 0; i < n; i++)
        if (kids[i].pid > 0) vl_child_release(&kids[i]);
    char end[64] = "";
    for (int i = 0; i < n; i++) {
        if (kids[i].pid <= 0) continue; /* never started: the error says so */
        vl_child_end e = vl_child_wait(&kids[i], EXIT_TIMEOUT_MS);
        if (!(e.kind == VL_CHILD_EXITED && e.code == 0) && !end[0]) vl_child_end_text(e, end, sizeof end);
    }
    if (!error[0] && end[0]) snprintf(error, sizeof error, "child ended: %s", end);

    vl_summary st = vl_summarize(startup, (size_t)ok);
    char name[64], med[32] = "", mx[32] = "";
    variant_name(c, name, sizeof name);
    if (ok) {
        snprintf(med, sizeof med, "%.2f", st.median);
        snprintf(mx, sizeof mx, "%.2f", st.max);
    }
    for (int k = 0; k < ndistinct; k++) {
        int here = 0;
        uint64_t child_free = 0;
        for (int i = 0; i < n; i++)
            if (gpus[i] == distinct[k]) {
                here++;
                if (rep[i].ok) child_free = rep[i].free_bytes;
            }
        double release_ms = vl_gpu_wait_used_at_most(distinct[k], before[k] + (int64_t)(4 * MiB), RELEASE_TIMEOUT_MS);
        int64_t used = after[k] - before[k];
        char per[32] = "", cf[32] = "";
        if (ok == n) snprintf(per, sizeof per, "%lld", (long long)(used / here));
        if (child_free) snprintf(cf, sizeof cf, "%llu", (unsigned long long)child_free);
        vl_csv_row(p->csv, "%s,%s,%s,%s,%s,%d,%d,%d,%d,%d,%lld,%s,%s,%s,%s,%.1f,\"%s\",", test, name,
                   c->eager ? "bad" : "fixed", ok == n ? "ok" : "error", c->eager ? "eager" : "lazy", c->fatbin,
                   c->cublas, sample, here, distinct[k], (long long)used, per, cf, med, mx, release_ms, error);
    }
    VL_CUDA_CHECK(cudaSetDevice(p->dev->ordinal));
}

int main(int argc, char **argv)
{
    /* A child started by this program: only its channel, no command line, no frame. */
    if (getenv(CHANNEL_ENV)) {
        int fd = vl_child_fd_from_env(CHANNEL_ENV);
        if (fd < 0 || argc < 5 || strcmp(argv[1], "child") != 0) return VL_EXIT_USAGE;
        unsetenv(CHANNEL_ENV);
        return child(fd, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    }

    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    int ordinal = p.dev->ordinal;
    int ngpus = vl_gpu_count();
    /* Contexts of about 0.5-1 GiB each: at most half of free memory in children at once. */
    int64_t fit = (int64_t)(p.free_at_start / 2 / (1024 * MiB));
    if (fit < 1) fit = 1;
    if (opt_max_procs > fit) opt_max_procs = fit;

    vl_csv_meta(p.csv, "scenario", "context_cost: device memory per process, lazy vs eager module loading, a large "
                                   "fat binary, cuBLAS; N processes on one GPU; one per GPU");
    vl_csv_meta(p.csv, "fat_image_bytes", "%zu", (size_t)(vl_fat_image_end - vl_fat_image));
    vl_csv_meta(p.csv, "device_used_bytes", "device-wide used memory (cudaMemGetInfo in this process) with the "
                                            "children ready minus before they started, on that GPU");
    vl_csv_meta(p.csv, "workers", "child processes alive at once on that GPU");
    vl_csv_meta(p.csv, "child_free_bytes", "free device memory as a child saw it once ready (cudaMemGetInfo)");
    vl_csv_meta(p.csv, "gpus_visible", "%d", ngpus);
    vl_csv_header(p.csv, COLUMNS);

    int on_one[MAX_PROCS];
    for (int i = 0; i < MAX_PROCS; i++) on_one[i] = ordinal;

    /* context: every configuration once per sample, in a rotated order. Quick (each
     * child is a context, 0.6 s on an H100): without cuBLAS, whose memory
     * cublas_workspace measures, and the processes experiment lazy only. */
    config configs[8];
    int nconfigs = 0;
    for (int k = 0; k < 8; k++)
        if (!p.cli.quick || !(k & 1)) /* k & 1: cuBLAS */
            configs[nconfigs++] = (config){.eager = k >> 2 & 1, .fatbin = k >> 1 & 1, .cublas = k & 1};
    for (int s = 0; s < opt_samples; s++)
        for (int k = 0; k < nconfigs; k++) run_group(&p, "context", &configs[(k + s) % nconfigs], s, on_one, 1);

    /* processes: N contexts at once on this GPU. */
    for (int e = 0; e < (p.cli.quick ? 1 : 2); e++) {
        config c = {.eager = e};
        for (int n = 1; n <= opt_max_procs; n *= 2) run_group(&p, "processes", &c, 0, on_one, n);
    }

    /* per_gpu: one process on each GPU. */
    if (ngpus >= 2) {
        int each[MAX_PROCS];
        int n = ngpus < MAX_PROCS ? ngpus : MAX_PROCS;
        for (int i = 0; i < n; i++) each[i] = i;
        for (int e = 0; e < 2; e++) {
            config c = {.eager = e};
            run_group(&p, "per_gpu", &c, 0, each, n);
        }
    } else {
        fprintf(stderr, "context_cost: per_gpu skipped: %d GPU visible, it needs 2\n", ngpus);
        vl_csv_row(p.csv, "per_gpu,,,skipped,,,,,,,,,,,,,,\"%d GPU visible, needs 2\"", ngpus);
    }
    return vl_program_finish(&p);
}
