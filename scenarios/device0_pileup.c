/* device0_pileup: one worker process per GPU, as data-parallel training launches them,
 * and the contexts that pile up on GPU 0.
 *
 * Folklore: every rank of a torchrun job shows up on GPU 0 in nvidia-smi with ~500 MiB,
 * because each worker touched the CUDA runtime (an allocation, cudaFree(0), a library
 * that initialises) before selecting its own device, which creates a context on the
 * current device, GPU 0. Select the device first, or give each worker only its own GPU
 * (CUDA_VISIBLE_DEVICES), and GPU 0 carries only its own worker.
 *
 * Variants (each worker is a fresh exec of this program, one per GPU round-robin):
 *   touch_before_set  (bad)   cudaFree(0), then cudaSetDevice(N), then its buffer
 *   set_device_first  (fixed) cudaSetDevice(N) before any other CUDA call
 *   visible_devices   (fixed) CUDA_VISIBLE_DEVICES=N set before the first CUDA call,
 *                             then the same sloppy order as the bad variant
 * For 1..--max-workers workers alive at once: the device memory used on every GPU
 * (cudaMemGetInfo, total - free) minus the same reading just before the workers
 * started. This process holds a context on every GPU from the start (it must, to read
 * their memory), so its own contexts are in both readings and cancel out. The bytes on
 * a GPU beyond what its own workers cost (own_context_bytes: the per-worker cost
 * measured on GPUs 1.., which only ever see their own workers) are charged to the
 * workers of other GPUs (foreign_*). Needs 2 GPUs or more. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gpu.h"
#include "exitcodes.h"
#include "program.h"
#include "scenario/gpus.h"
#include "scenario/subprocess.h"

#define MiB (INT64_C(1) << 20)
#define CHANNEL_ENV "VL_DEVICE0_PILEUP_CHANNEL"
#define MAX_WORKERS 64
#define MAX_GPUS 64
#define READY_TIMEOUT_MS 60000
#define EXIT_TIMEOUT_MS 20000

enum variant { TOUCH_BEFORE_SET, SET_DEVICE_FIRST, VISIBLE_DEVICES, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {"touch_before_set", "set_device_first", "visible_devices"};
static const char *const variant_role[NVARIANTS] = {"bad", "fixed", "fixed"};

static int64_t opt_max_workers = 0; /* 0: one per GPU */
static uint64_t opt_worker_bytes = 64u << 20;

#define COLUMNS                                                                                              \
    "test,variant,role,status,workers,gpu,workers_on_gpu,foreign_workers,used_delta_bytes,own_context_bytes," \
    "foreign_bytes,foreign_bytes_per_worker,error,child_end"

/* --- the worker (a fresh exec of this program) ------------------------------------------ */

typedef struct worker_report {
    int32_t error;     /* cudaError_t of the first failing call, 0 when all succeeded */
    char call[32];     /* that call */
    char name[48];     /* its error name */
} worker_report;

static int worker(int fd, int variant, int gpu, uint64_t bytes)
{
    worker_report rep;
    memset(&rep, 0, sizeof rep);
    int device = gpu;
    if (variant == VISIBLE_DEVICES) {
        /* Ordinal gpu of what this process may see: the gpu-th entry of an inherited
         * CUDA_VISIBLE_DEVICES, or the plain ordinal. Read by the runtime at its first call. */
        char v[256];
        const char *inherited = getenv("CUDA_VISIBLE_DEVICES");
        snprintf(v, sizeof v, "%d", gpu);
        if (inherited && *inherited) {
            char list[256], *save = NULL;
            snprintf(list, sizeof list, "%s", inherited);
            int i = 0;
            for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++)
                if (i == gpu) snprintf(v, sizeof v, "%s", tok);
        }
        setenv("CUDA_VISIBLE_DEVICES", v, 1);
        device = 0;
    }
    void *buf = NULL;
    int count = 0;
    struct {
        const char *name;
        int step;
    } order_bad[] = {{"cudaGetDeviceCount", 0}, {"cudaFree(0)", 1}, {"cudaSetDevice", 2}, {"cudaMalloc", 3}},
      order_fixed[] = {{"cudaSetDevice", 2}, {"cudaGetDeviceCount", 0}, {"cudaFree(0)", 1}, {"cudaMalloc", 3}};
    for (int i = 0; i < 4; i++) {
        int step = variant == SET_DEVICE_FIRST ? order_fixed[i].step : order_bad[i].step;
        const char *name = variant == SET_DEVICE_FIRST ? order_fixed[i].name : order_bad[i].name;
        cudaError_t e = cudaSuccess;
        switch (step) {
        case 0: e = cudaGetDeviceCount(&count); break;
        case 1: e = cudaFree(0); break;
        case 2: e = cudaSetDevice(device); break;
        default:
            e = cudaMalloc(&buf, bytes);
            if (e == cudaSuccess) e = cudaMemset(buf, 0, bytes);
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            break;
        }
        if (e != cudaSuccess) {
            rep.error = (int32_t)e;
            snprintf(rep.call, sizeof rep.call, "%s", name);
            snprintf(rep.name, sizeof rep.name, "%s", cudaGetErrorName(e));
            break;
        }
    }
    if (vl_fd_write_full(fd, &rep, sizeof rep) != 0) return 3;
    char byte;
    vl_fd_read_full(fd, &byte, 1); /* until the parent releases us (EOF) */
    if (buf && cudaFree(buf) != cudaSuccess) return 1;
    return rep.error ? 1 : 0;
}

/* --- the parent ----------------------------------------------------------------------- */

typedef struct run {
    int variant, n, ngpus;
    int64_t before[MAX_GPUS], during[MAX_GPUS];
    int on_gpu[MAX_GPUS];
} run;

static int read_all(const run *r, int64_t *out)
{
    for (int g = 0; g < r->ngpus; g++)
        if (vl_gpu_used_on(g, &out[g], NULL) != 0) return -1;
    return 0;
}

static void run_pool(vl_program *p, int variant, int n, int ngpus)
{
    run r = {.variant = variant, .n = n, .ngpus = ngpus};
    vl_child kids[MAX_WORKERS];
    worker_report rep[MAX_WORKERS];
    int reported[MAX_WORKERS] = {0};
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    if (read_all(&r, r.before) != 0) {
        fprintf(stderr, "device0_pileup: cudaMemGetInfo failed\n");
        exit(VL_EXIT_FAIL);
    }
    char v[8], g[8], b[32];
    snprintf(v, sizeof v, "%d", variant);
    snprintf(b, sizeof b, "%llu", (unsigned long long)opt_worker_bytes);
    for (int i = 0; i < n; i++) {
        r.on_gpu[i % ngpus]++;
        snprintf(g, sizeof g, "%d", i % ngpus);
        const char *args[] = {"worker", v, g, b, NULL};
        if (vl_child_exec_self(&kids[i], args, CHANNEL_ENV) != 0) kids[i].pid = -1, kids[i].fd = -1;
    }
    int ok = 0;
    char error[96] = "";
    for (int i = 0; i < n; i++) {
        memset(&rep[i], 0, sizeof rep[i]);
        reported[i] = kids[i].fd >= 0 && vl_child_read(&kids[i], &rep[i], sizeof rep[i], READY_TIMEOUT_MS) == 1;
        if (reported[i] && rep[i].error == 0) ok++;
        else if (!error[0] && reported[i]) snprintf(error, sizeof error, "%s: %s", rep[i].call, rep[i].name);
        else if (!error[0]) snprintf(error, sizeof error, "no report");
    }
    int measured = read_all(&r, r.during) == 0;
    char end_text[64] = "exit 0";
    for (int i = 0; i < n; i++) vl_child_release(&kids[i]);
    for (int i = 0; i < n; i++) {
        vl_child_end e = vl_child_wait(&kids[i], EXIT_TIMEOUT_MS);
        if (!(e.kind == VL_CHILD_EXITED && e.code == 0) && strcmp(end_text, "exit 0") == 0)
            vl_child_end_text(e, end_text, sizeof end_text);
    }
    for (int gi = 0; gi < ngpus; gi++) vl_gpu_wait_used_at_most(gi, r.before[gi] + 4 * MiB, 10000);

    /* The cost of one worker on its own GPU: GPUs 1.. only ever host their own workers. */
    int64_t own_sum = 0;
    int own_workers = 0;
    for (int gi = 1; gi < ngpus; gi++) {
        own_sum += r.during[gi] - r.before[gi];
        own_workers += r.on_gpu[gi];
    }
    const char *status = !measured ? "error" : ok == n ? "ok" : "worker_failed";
    for (int gi = 0; gi < ngpus; gi++) {
        int64_t delta = r.during[gi] - r.before[gi];
        int foreign = n - r.on_gpu[gi];
        char own[32] = "", fb[32] = "", fpw[32] = "";
        if (own_workers > 0 && measured) {
            int64_t own_cost = own_sum / own_workers;
            int64_t foreign_bytes = delta - (int64_t)r.on_gpu[gi] * own_cost;
            snprintf(own, sizeof own, "%lld", (long long)own_cost);
            snprintf(fb, sizeof fb, "%lld", (long long)foreign_bytes);
            if (foreign > 0) snprintf(fpw, sizeof fpw, "%lld", (long long)(foreign_bytes / foreign));
        }
        vl_csv_row(p->csv, "pileup,%s,%s,%s,%d,%d,%d,%d,%lld,%s,%s,%s,%s,%s", variant_name[variant],
                   variant_role[variant], status, n, gi, r.on_gpu[gi], foreign, measured ? (long long)delta : 0LL, own,
                   fb, fpw, error, end_text);
    }
}

static const vl_cli_opt options[] = {
    {"max-workers", VL_CLI_INT, &opt_max_workers,
     "largest worker count (1..this, round-robin over the GPUs; 0: one per GPU)", 0, MAX_WORKERS, VL_QUICK_KEEP},
    {"worker-bytes", VL_CLI_SIZE, &opt_worker_bytes, "device buffer each worker allocates on its GPU", 1, 0x1p36,
     VL_QUICK_AT_MOST, "16MiB"},
    {NULL, 0, NULL, NULL, 0, 0},
};

static const vl_program_def def = {
    .summary = "one worker process per GPU: the contexts that pile up on GPU 0 when a worker touches CUDA before "
               "selecting its device, against set-device-first and CUDA_VISIBLE_DEVICES (needs 2 GPUs)",
    .default_alloc = NULL,
    .needs_cuda = 1,
    .options = options,
};

int main(int argc, char **argv)
{
    if (getenv(CHANNEL_ENV)) { /* a worker: only its channel and its arguments */
        int fd = vl_child_fd_from_env(CHANNEL_ENV);
        if (fd < 0 || argc < 5 || strcmp(argv[1], "worker") != 0) return VL_EXIT_USAGE;
        unsetenv(CHANNEL_ENV);
        return worker(fd, atoi(argv[2]), atoi(argv[3]), strtoull(argv[4], NULL, 10));
    }
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    int ngpus = vl_gpu_count();
    if (ngpus < 2) return vl_program_skip(&p, "needs 2 CUDA devices, found %d", ngpus < 0 ? 0 : ngpus);
    if (ngpus > MAX_GPUS) ngpus = MAX_GPUS;
    int max_workers = opt_max_workers ? (int)opt_max_workers : ngpus;
    if (p.cli.quick && max_workers > ngpus) max_workers = ngpus;

    /* A context of ours on every GPU now, so that it is in every reading. */
    for (int g = 0; g < ngpus; g++) {
        int64_t used;
        if (vl_gpu_used_on(g, &used, NULL) != 0) return vl_program_skip(&p, "cannot open CUDA device %d", g);
    }
    vl_csv_meta(p.csv, "scenario", "device0_pileup: contexts on GPU 0 from workers of other GPUs");
    vl_csv_meta(p.csv, "gpus", "%d", ngpus);
    vl_csv_meta(p.csv, "worker_bytes", "%llu", (unsigned long long)opt_worker_bytes);
    vl_csv_meta(p.csv, "used_delta_bytes", "device used (total - free) with the workers ready minus just before");
    vl_csv_meta(p.csv, "own_context_bytes", "per-worker cost measured on GPUs 1.. (their own workers only)");
    vl_csv_meta(p.csv, "foreign_bytes", "used_delta_bytes - workers_on_gpu * own_context_bytes");
    vl_csv_header(p.csv, COLUMNS);
    for (int v = 0; v < NVARIANTS; v++)
        for (int n = 1; n <= max_workers; n++) run_pool(&p, v, n, ngpus);
    VL_CUDA_CHECK(cudaSetDevice(p.dev->ordinal));
    return vl_program_finish(&p);
}
