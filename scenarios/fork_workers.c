/* fork_workers: CUDA and fork(): what the child's first CUDA calls return, and what
 * each extra process costs in device memory.
 *
 * Folklore: a process that initialised CUDA and then forks (Python multiprocessing's
 * default start method, DataLoader workers) gets a child whose CUDA calls fail
 * ("initialization error"); forking before CUDA is initialised, or exec'ing a fresh
 * program (spawn), works; and every process that uses the GPU pays for its own context
 * (~500 MiB on recent GPUs).
 *
 * Variants (this process has initialised CUDA before any of them):
 *   fork_after_init   (bad)   fork() this process; the child calls CUDA.
 *   fork_before_init  (fixed) a fork server exec'd before any CUDA call forks the
 *                             workers (Python's forkserver start method).
 *   fork_exec         (fixed) fork() + exec of this program as a worker (spawn).
 * Experiments:
 *   first_calls   one worker: the result of each of its first CUDA calls, by name.
 *   context_cost  N workers alive at once, each with a context and a 1 MiB buffer:
 *                 device memory they take (cudaMemGetInfo in this process), per
 *                 worker, time until each was ready, and how long the driver takes to
 *                 give the memory back after they exit.
 * Children report through a socket (lib/scenario/subprocess.h) and are killed if they
 * hang; a hang is recorded as such. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "program.h"
#include "scenario/subprocess.h"
#include "stats.h"

#define MiB (UINT64_C(1) << 20)
#define CHANNEL_ENV "VL_FORK_WORKERS_CHANNEL"
#define MAX_WORKERS 64
#define EXIT_TIMEOUT_MS 20000

static int64_t opt_max_workers = 8;
/* How long workers may take to report; a worker whose CUDA calls hang is killed then. */
static int ready_timeout_ms = 30000;

static const vl_cli_opt options[] = {
    {"max-workers", VL_CLI_INT, &opt_max_workers, "largest worker count (1, 2, 4, ... up to this)", 1, MAX_WORKERS, VL_QUICK_AT_MOST, "2"},
    {NULL},
};

static const vl_program_def def = {
    .summary = "CUDA after fork(): the child's first CUDA calls, fork before init and fork+exec, and the device "
               "memory each extra process (context) costs.",
    .needs_cuda = 1,
    .options = options,
};

#define COLUMNS                                                                                          \
    "test,variant,role,status,workers,call,error_code,error_name,ok_workers,device_used_bytes,"            \
    "per_worker_bytes,startup_median_ms,startup_max_ms,release_ms,child_end"

/* --- the worker (runs in a child) ------------------------------------------------------ */

enum { CALL_GET_DEVICE_COUNT, CALL_SET_DEVICE, CALL_FREE_0, CALL_MALLOC, NCALLS };
static const char *const call_name[NCALLS] = {"cudaGetDeviceCount", "cudaSetDevice", "cudaFree(0)",
                                              "cudaMalloc(1MiB)"};

/* What a worker sends when it is ready (or has given up). Plain data, one write. */
typedef struct worker_report {
    int32_t error[NCALLS];        /* cudaError_t of each call; -1: not made */
    char error_name[NCALLS][48];
    uint64_t ready_ns;            /* CLOCK_MONOTONIC (system-wide) when it reported */
} worker_report;

/* The first CUDA calls of a fresh worker; keeps a context and 1 MiB until released. */
static int worker(int fd, int ordinal)
{
    worker_report rep;
    memset(&rep, 0, sizeof rep);
    for (int i = 0; i < NCALLS; i++) rep.error[i] = -1;
    void *buf = NULL;
    int count = 0;
    for (int i = 0; i < NCALLS; i++) {
        cudaError_t e = cudaSuccess;
        switch (i) {
        case CALL_GET_DEVICE_COUNT: e = cudaGetDeviceCount(&count); break;
        case CALL_SET_DEVICE: e = cudaSetDevice(ordinal); break;
        case CALL_FREE_0: e = cudaFree(0); break;
        default: e = cudaMalloc(&buf, 1 * MiB); break;
        }
        rep.error[i] = (int32_t)e;
        snprintf(rep.error_name[i], sizeof rep.error_name[i], "%s", cudaGetErrorName(e));
    }
    rep.ready_ns = vl_now_ns();
    if (vl_fd_write_full(fd, &rep, sizeof rep) != 0) return 3;
    char byte;
    vl_fd_read_full(fd, &byte, 1); /* blocks until the parent releases us (EOF) */
    if (buf) cudaFree(buf);
    return 0;
}

typedef struct fork_arg {
    int ordinal;
} fork_arg;

static int forked_worker(void *arg, int fd)
{
    return worker(fd, ((fork_arg *)arg)->ordinal);
}

/* The fork server: a fresh exec of this program that never initialises CUDA. Reads {workers, ordinal}, forks the workers, forwards their reports
 * in order (a worker that fails to report is sent as all -1 with ready_ns 0), waits
 * for the release, releases the workers and exits 0 when all of them exited 0. */
static int fork_server(int fd)
{
    int32_t req[3]; /* workers, device ordinal, ready timeout in ms */
    if (vl_fd_read_full(fd, req, sizeof req) != 1 || req[0] < 1 || req[0] > MAX_WORKERS) return 2;
    vl_child kids[MAX_WORKERS];
    fork_arg arg = {.ordinal = req[1]};
    int n = 0;
    for (; n < req[0]; n++)
        if (vl_child_fork(&kids[n], forked_worker, &arg) != 0) break;
    for (int i = 0; i < req[0]; i++) {
        worker_report rep;
        memset(&rep, 0, sizeof rep);
        for (int c = 0; c < NCALLS; c++) rep.error[c] = -1;
        if (i < n && vl_child_read(&kids[i], &rep, sizeof rep, req[2]) != 1) rep.ready_ns = 0;
        if (vl_fd_write_full(fd, &rep, sizeof rep) != 0) break;
    }
    char byte;
    vl_fd_read_full(fd, &byte, 1);
    int bad = n < req[0];
    for (int i = 0; i < n; i++) {
        vl_child_release(&kids[i]);
        vl_child_end e = vl_child_wait(&kids[i], EXIT_TIMEOUT_MS);
        bad |= !(e.kind == VL_CHILD_EXITED && e.code == 0);
    }
    return bad ? 1 : 0;
}

/* --- the parent ----------------------------------------------------------------------- */

enum { FORK_AFTER_INIT, FORK_BEFORE_INIT, FORK_EXEC, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {"fork_after_init", "fork_before_init", "fork_exec"};
static const char *const variant_role[NVARIANTS] = {"bad", "fixed", "fixed"};

typedef struct pool {
    int variant, n, ordinal;
    vl_child kids[MAX_WORKERS]; /* the workers, or kids[0] = the fork server */
    worker_report rep[MAX_WORKERS];
    int reported[MAX_WORKERS];
    uint64_t spawn_ns;
} pool;

/* Starts n workers the variant's way and collects their reports. */
static void pool_start(pool *pl)
{
    fork_arg arg = {.ordinal = pl->ordinal};
    pl->spawn_ns = vl_now_ns();
    memset(pl->reported, 0, sizeof pl->reported);
    if (pl->variant == FORK_BEFORE_INIT) {
        const char *args[] = {"fork-server", NULL};
        if (vl_child_exec_self(&pl->kids[0], args, CHANNEL_ENV) != 0) return;
        int32_t req[3] = {pl->n, pl->ordinal, ready_timeout_ms};
        if (vl_child_write(&pl->kids[0], req, sizeof req) != 0) return;
        for (int i = 0; i < pl->n; i++) {
            if (vl_child_read(&pl->kids[0], &pl->rep[i], sizeof pl->rep[i], ready_timeout_ms + 1000) != 1) break;
            pl->reported[i] = pl->rep[i].ready_ns != 0;
        }
        return;
    }
    for (int i = 0; i < pl->n; i++) {
        int rc;
        if (pl->variant == FORK_EXEC) {
            char ordinal[16];
            snprintf(ordinal, sizeof ordinal, "%d", pl->ordinal);
            const char *args[] = {"worker", ordinal, NULL};
            rc = vl_child_exec_self(&pl->kids[i], args, CHANNEL_ENV);
        } else {
            rc = vl_child_fork(&pl->kids[i], forked_worker, &arg);
        }
        if (rc != 0) {
            pl->kids[i].pid = -1;
            pl->kids[i].fd = -1;
        }
    }
    /* One deadline for the whole pool: hung workers cost the timeout once, not each. */
    uint64_t deadline = pl->spawn_ns + (uint64_t)ready_timeout_ms * 1000000u;
    for (int i = 0; i < pl->n; i++) {
        uint64_t now = vl_now_ns();
        int left_ms = now < deadline ? (int)((deadline - now) / 1000000u) + 1 : 1;
        pl->reported[i] = vl_child_read(&pl->kids[i], &pl->rep[i], sizeof pl->rep[i], left_ms) == 1;
    }
}

/* Releases the workers and waits for them; the text of the first bad ending, or "exit 0". */
static void pool_stop(pool *pl, char *end_text, size_t len)
{
    int nkids = pl->variant == FORK_BEFORE_INIT ? 1 : pl->n;
    snprintf(end_text, len, "exit 0");
    for (int i = 0; i < nkids; i++) vl_child_release(&pl->kids[i]);
    for (int i = 0; i < nkids; i++) {
        vl_child_end e = vl_child_wait(&pl->kids[i], EXIT_TIMEOUT_MS);
        if (!(e.kind == VL_CHILD_EXITED && e.code == 0) && strcmp(end_text, "exit 0") == 0)
            vl_child_end_text(e, end_text, len);
    }
}

static int worker_ok(const worker_report *r)
{
    for (int c = 0; c < NCALLS; c++)
        if (r->error[c] != cudaSuccess) return 0;
    return 1;
}

static void row_first_calls(vl_program *p, int variant, const pool *pl)
{
    for (int c = 0; c < NCALLS; c++) {
        const worker_report *r = &pl->rep[0];
        if (!pl->reported[0])
            vl_csv_row(p->csv, "first_calls,%s,%s,no_report,1,%s,,,,,,,,,", variant_name[variant],
                       variant_role[variant], call_name[c]);
        else if (r->error[c] < 0) /* not made: an earlier call failed */
            vl_csv_row(p->csv, "first_calls,%s,%s,not_made,1,%s,,,,,,,,,", variant_name[variant],
                       variant_role[variant], call_name[c]);
        else
            vl_csv_row(p->csv, "first_calls,%s,%s,%s,1,%s,%d,%s,,,,,,,", variant_name[variant], variant_role[variant],
                       r->error[c] == cudaSuccess ? "ok" : "error", call_name[c], (int)r->error[c],
                       r->error_name[c]);
    }
}

/* Waits (up to 10 s) until free device memory is back to at least `target`: the
 * driver tears a dead process's context down asynchronously. Returns the wait in ms. */
static double wait_for_free(size_t target)
{
    uint64_t t0 = vl_now_ns();
    for (;;) {
        size_t free_b, total_b;
        vl_gpu_mem_info(&free_b, &total_b);
        if (free_b >= target) break;
        if (vl_now_ns() - t0 > UINT64_C(10000000000)) break;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return (double)(vl_now_ns() - t0) / 1e6;
}

/* Returns how many workers came up with every call succeeding. */
static int run_pool(vl_program *p, int variant, int n, int first_calls)
{
    pool *pl = calloc(1, sizeof *pl);
    if (!pl) {
        fprintf(stderr, "fork_workers: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    pl->variant = variant;
    pl->n = n;
    pl->ordinal = p->dev->ordinal;
    size_t free_before, free_ready, total;
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    vl_gpu_mem_info(&free_before, &total);
    pool_start(pl);
    vl_gpu_mem_info(&free_ready, &total);

    int ok = 0;
    double startup_ms[MAX_WORKERS];
    for (int i = 0; i < n; i++)
        if (pl->reported[i] && worker_ok(&pl->rep[i])) {
            startup_ms[ok++] = (double)(pl->rep[i].ready_ns - pl->spawn_ns) / 1e6;
        }
    vl_summary st = vl_summarize(startup_ms, (size_t)ok);
    char end_text[64];
    pool_stop(pl, end_text, sizeof end_text);
    double release_ms = wait_for_free(free_before > 4 * MiB ? free_before - 4 * MiB : 0);
    long long used = (long long)free_before - (long long)free_ready;
    if (used < 0) used = 0;

    if (first_calls) row_first_calls(p, variant, pl);
    /* With no worker ready nothing was measured: empty fields, not 0. */
    char med[32] = "", mx[32] = "", per[32] = "", used_text[32] = "", release[32] = "";
    if (ok) {
        snprintf(med, sizeof med, "%.2f", st.median);
        snprintf(mx, sizeof mx, "%.2f", st.max);
        snprintf(per, sizeof per, "%lld", used / ok);
        snprintf(used_text, sizeof used_text, "%lld", used);
        snprintf(release, sizeof release, "%.1f", release_ms);
    }
    vl_csv_row(p->csv, "context_cost,%s,%s,%s,%d,,,,%d,%s,%s,%s,%s,%s,%s", variant_name[variant],
               variant_role[variant], ok == n ? "ok" : "error", n, ok, used_text, per, med, mx, release, end_text);
    free(pl);
    return ok;
}

int main(int argc, char **argv)
{
    /* A child started by this program (fork_exec worker or fork server): it must not
     * touch the command line or the device frame, only its channel. */
    if (getenv(CHANNEL_ENV)) {
        int fd = vl_child_fd_from_env(CHANNEL_ENV);
        if (fd < 0 || argc < 2) return VL_EXIT_USAGE;
        unsetenv(CHANNEL_ENV); /* its own children are not workers of ours */
        if (strcmp(argv[1], "fork-server") == 0) return fork_server(fd);
        if (strcmp(argv[1], "worker") == 0 && argc >= 3) return worker(fd, atoi(argv[2]));
        return VL_EXIT_USAGE;
    }

    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    if (p.cli.quick) {
        ready_timeout_ms = 10000;
    }
    /* Cap the pool so that contexts (~0.5 GiB each) take at most half of free memory. */
    int64_t fit = (int64_t)(p.free_at_start / 2 / (768 * MiB));
    if (fit < 1) fit = 1;
    if (opt_max_workers > fit) opt_max_workers = fit;

    VL_CUDA_CHECK(cudaFree(0)); /* CUDA is initialised in this process: the premise of the bad variant */
    vl_csv_meta(p.csv, "scenario", "fork_workers: CUDA calls in children after fork, fork before init, fork+exec; "
                                   "device memory per worker process");
    vl_csv_meta(p.csv, "worker_calls", "cudaGetDeviceCount, cudaSetDevice, cudaFree(0), cudaMalloc(1MiB), in order");
    vl_csv_meta(p.csv, "ready_timeout_ms", "%d", ready_timeout_ms);
    vl_csv_meta(p.csv, "device_used_bytes", "free device memory before the workers minus with all of them ready");
    vl_csv_header(p.csv, COLUMNS);

    /* A variant whose single worker cannot use CUDA is not tried with more workers:
     * they would fail the same way (and a hang costs the ready timeout each). */
    for (int v = 0; v < NVARIANTS; v++)
        for (int n = 1; n <= opt_max_workers; n *= 2)
            if (run_pool(&p, v, n, n == 1) == 0) break;

    return vl_program_finish(&p);
}
