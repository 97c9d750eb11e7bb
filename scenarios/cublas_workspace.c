/* cublas_workspace: the device memory cuBLAS takes for its workspaces as handles,
 * streams and graph captures grow.
 *
 * Report: cuBLAS keeps a workspace per handle and stream (32 MiB on Hopper, 4 MiB on
 * earlier GPUs) and a new one for each graph capture; they add up unseen, outside any
 * framework's allocator statistics.
 *
 * Each variant runs in a fresh process (this program exec'd as a child, so cuBLAS
 * starts from nothing and reads its environment anew), which measures device-wide used
 * memory (cudaMemGetInfo) against a baseline taken after its context and matrices exist:
 *   handles   1..--max-handles handles, each cublasCreate + one 256x256 SGEMM.
 *   streams   one handle moved over 1..--max-streams streams (cublasSetStream), an SGEMM
 *             on each.
 *   captures  one handle, 1..--max-captures CUDA graphs, each capturing an SGEMM
 *             (kept instantiated, launched once).
 * Variants:
 *   default        (bad)   cuBLAS's own workspaces.
 *   set_workspace  (fixed) one buffer of --workspace bytes owned by the caller, given to
 *                          every handle with cublasSetWorkspace after each
 *                          cublasSetStream (which resets it). Sharing one buffer is safe
 *                          here because every GEMM completes before the next starts;
 *                          GEMMs that run at once need one buffer each.
 *   env_config     (fixed) CUBLAS_WORKSPACE_CONFIG=--env-config in the child's
 *                          environment (":4096:8": eight 4 MiB buffers).
 * Rows give the used bytes at each count and per unit (used / count). Other processes
 * on the GPU add noise: repeat the run. Without a GPU: exit 77. */
#include <cublas_v2.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gpu.h"
#include "exitcodes.h"
#include "program.h"
#include "scenario/subprocess.h"

#define MiB (UINT64_C(1) << 20)
#define CHANNEL_ENV "VL_CUBLAS_WORKSPACE_CHANNEL"
#define MAX_COUNT 64
#define GEMM_N 256
#define CHILD_TIMEOUT_MS 120000

static int64_t opt_max_handles = 8, opt_max_streams = 8, opt_max_captures = 8;
static uint64_t opt_workspace = 32 * MiB;
static const char *opt_env_config = ":4096:8";

static const vl_cli_opt options[] = {
    {"max-handles", VL_CLI_INT, &opt_max_handles, "most cuBLAS handles", 1, MAX_COUNT, VL_QUICK_AT_MOST, "4"},
    {"max-streams", VL_CLI_INT, &opt_max_streams, "most streams one handle is moved over", 1, MAX_COUNT,
     VL_QUICK_AT_MOST, "4"},
    {"max-captures", VL_CLI_INT, &opt_max_captures, "most graph captures of a GEMM", 1, MAX_COUNT, VL_QUICK_AT_MOST,
     "4"},
    {"workspace", VL_CLI_SIZE, &opt_workspace, "the buffer set_workspace gives cuBLAS", 4096, 0x1p34},
    {"env-config", VL_CLI_STRING, &opt_env_config, "CUBLAS_WORKSPACE_CONFIG of env_config (:KiB:COUNT[...])"},
    {NULL},
};

/* CUBLAS_WORKSPACE_CONFIG is one or more ":SIZE_KIB:COUNT" pairs of positive integers. */
static void check_options(vl_cli *cli)
{
    const char *s = opt_env_config;
    int pairs = 0;
    while (*s) {
        for (int part = 0; part < 2; part++) {
            if (*s != ':' || !isdigit((unsigned char)s[1]) || s[1] == '0')
                vl_cli_usage_error(cli, "--env-config '%s' is not :KiB:COUNT[:KiB:COUNT...] (e.g. :4096:8)",
                                   opt_env_config);
            s++;
            while (isdigit((unsigned char)*s)) s++;
        }
        pairs++;
    }
    if (!pairs) vl_cli_usage_error(cli, "--env-config is empty (e.g. :4096:8)");
}

static const vl_program_def def = {
    .summary = "Device memory of cuBLAS workspaces as handles, streams and graph captures grow; against a "
               "caller-owned workspace (cublasSetWorkspace) and CUBLAS_WORKSPACE_CONFIG.",
    .needs_cuda = 1,
    .options = options,
    .check_options = check_options,
};

#define COLUMNS "test,variant,role,status,count,device_used_bytes,per_unit_bytes,workspace_bytes,error"

enum { DEFAULT, SET_WORKSPACE, ENV_CONFIG, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {"default", "set_workspace", "env_config"};
static const char *const variant_role[NVARIANTS] = {"bad", "fixed", "fixed"};
enum { T_HANDLES, T_STREAMS, T_CAPTURES, NTESTS };
static const char *const test_name[NTESTS] = {"handles", "streams", "captures"};

/* --- the child ----------------------------------------------------------------------------- */

typedef struct step {
    int32_t test, count, ok;
    int64_t used_bytes; /* device used minus the test's baseline */
    char error[96];
} step;

typedef struct child_report {
    int32_t nsteps;
    step steps[NTESTS * MAX_COUNT];
} child_report;

typedef struct child_state {
    int set_workspace;
    void *ws;
    size_t ws_bytes;
    float *a, *b, *c;
    char error[96];
} child_state;

static int cuda_failed(child_state *cs, const char *call, cudaError_t e)
{
    if (e == cudaSuccess) return 0;
    snprintf(cs->error, sizeof cs->error, "%s: %s", call, cudaGetErrorName(e));
    return 1;
}

static int cublas_failed(child_state *cs, const char *call, cublasStatus_t st)
{
    if (st == CUBLAS_STATUS_SUCCESS) return 0;
    snprintf(cs->error, sizeof cs->error, "%s: %s", call, cublasGetStatusName(st));
    return 1;
}

/* The stream for h's next GEMM, and the owned workspace again (cublasSetStream resets it). */
static int bind(child_state *cs, cublasHandle_t h, cudaStream_t s)
{
    return cublas_failed(cs, "cublasSetStream", cublasSetStream(h, s)) ||
           (cs->set_workspace && cublas_failed(cs, "cublasSetWorkspace", cublasSetWorkspace(h, cs->ws, cs->ws_bytes)));
}

static int gemm(child_state *cs, cublasHandle_t h)
{
    const float alpha = 1.0f, beta = 0.0f;
    return cublas_failed(cs, "cublasSgemm", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &alpha,
                                                        cs->a, GEMM_N, cs->b, GEMM_N, &beta, cs->c, GEMM_N));
}

static int64_t used_now(child_state *cs, int *bad)
{
    size_t free_b = 0, total_b = 0;
    *bad = *bad || cuda_failed(cs, "cudaDeviceSynchronize", cudaDeviceSynchronize()) ||
           cuda_failed(cs, "cudaMemGetInfo", cudaMemGetInfo(&free_b, &total_b));
    return (int64_t)total_b - (int64_t)free_b;
}

/* The test's baseline, then (set_workspace) the owned buffer, so that it counts. */
static int64_t begin_test(child_state *cs, int *bad)
{
    int64_t base = used_now(cs, bad);
    if (!*bad && cs->set_workspace) *bad = cuda_failed(cs, "cudaMalloc(workspace)", cudaMalloc(&cs->ws, cs->ws_bytes));
    return base;
}

static void end_test(child_state *cs)
{
    if (cs->ws) cudaFree(cs->ws);
    cs->ws = NULL;
}

static void record(child_report *r, child_state *cs, int test, int count, int bad, int64_t used)
{
    step *s = &r->steps[r->nsteps++];
    s->test = test;
    s->count = count;
    s->ok = !bad;
    s->used_bytes = used;
    snprintf(s->error, sizeof s->error, "%s", bad ? cs->error : "");
}

static void test_handles(child_report *r, child_state *cs, int n)
{
    cublasHandle_t h[MAX_COUNT];
    int made = 0, bad = 0;
    int64_t base = begin_test(cs, &bad);
    for (int i = 0; i < n && !bad; i++) {
        if ((bad = cublas_failed(cs, "cublasCreate", cublasCreate(&h[i])))) {
            record(r, cs, T_HANDLES, i + 1, 1, 0);
            break;
        }
        made++;
        bad = bind(cs, h[i], NULL) || gemm(cs, h[i]);
        int64_t used = used_now(cs, &bad);
        record(r, cs, T_HANDLES, i + 1, bad, used - base);
    }
    for (int i = 0; i < made; i++) cublasDestroy(h[i]);
    end_test(cs);
}

static void test_streams(child_report *r, child_state *cs, int n)
{
    cublasHandle_t h;
    cudaStream_t s[MAX_COUNT];
    int made = 0, bad = 0;
    int64_t base = begin_test(cs, &bad);
    if (bad || cublas_failed(cs, "cublasCreate", cublasCreate(&h))) {
        record(r, cs, T_STREAMS, 1, 1, 0);
        end_test(cs);
        return;
    }
    for (int i = 0; i < n && !bad; i++) {
        if ((bad = cuda_failed(cs, "cudaStreamCreate", cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking)))) {
            record(r, cs, T_STREAMS, i + 1, 1, 0);
            break;
        }
        made++;
        bad = bind(cs, h, s[i]) || gemm(cs, h);
        int64_t used = used_now(cs, &bad);
        record(r, cs, T_STREAMS, i + 1, bad, used - base);
    }
    cublasDestroy(h);
    for (int i = 0; i < made; i++) cudaStreamDestroy(s[i]);
    end_test(cs);
}

static void test_captures(child_report *r, child_state *cs, int n)
{
    cublasHandle_t h;
    cudaStream_t s;
    cudaGraph_t g[MAX_COUNT];
    cudaGraphExec_t x[MAX_COUNT];
    int made = 0, bad = 0;
    int64_t base = begin_test(cs, &bad);
    if (bad || cublas_failed(cs, "cublasCreate", cublasCreate(&h)) ||
        cuda_failed(cs, "cudaStreamCreate", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))) {
        record(r, cs, T_CAPTURES, 1, 1, 0);
        end_test(cs);
        return;
    }
    for (int i = 0; i < n && !bad; i++) {
        bad = bind(cs, h, s) ||
              cuda_failed(cs, "cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        if (!bad) {
            int gemm_bad = gemm(cs, h); /* the capture is ended either way */
            cudaError_t end = cudaStreamEndCapture(s, &g[i]);
            bad = gemm_bad || cuda_failed(cs, "cudaStreamEndCapture", end);
            if (!bad && (bad = cuda_failed(cs, "cudaGraphInstantiate", cudaGraphInstantiate(&x[i], g[i], 0))))
                cudaGraphDestroy(g[i]);
        }
        if (bad) {
            record(r, cs, T_CAPTURES, i + 1, 1, 0);
            break;
        }
        made++;
        bad = cuda_failed(cs, "cudaGraphLaunch", cudaGraphLaunch(x[i], s));
        int64_t used = used_now(cs, &bad);
        record(r, cs, T_CAPTURES, i + 1, bad, used - base);
    }
    for (int i = 0; i < made; i++) {
        cudaGraphExecDestroy(x[i]);
        cudaGraphDestroy(g[i]);
    }
    cublasDestroy(h);
    cudaStreamDestroy(s);
    end_test(cs);
}

/* args: ordinal set_workspace workspace_bytes handles streams captures */
static int child(int fd, char **argv)
{
    child_report *r = calloc(1, sizeof *r);
    if (!r) return 3;
    child_state cs = {.set_workspace = atoi(argv[3])};
    cs.ws_bytes = (size_t)strtoull(argv[4], NULL, 10);
    int counts[NTESTS] = {atoi(argv[5]), atoi(argv[6]), atoi(argv[7])};
    size_t mat = (size_t)GEMM_N * GEMM_N * sizeof(float);
    int bad = cuda_failed(&cs, "cudaSetDevice", cudaSetDevice(atoi(argv[2]))) ||
              cuda_failed(&cs, "cudaMalloc", cudaMalloc((void **)&cs.a, mat)) ||
              cuda_failed(&cs, "cudaMalloc", cudaMalloc((void **)&cs.b, mat)) ||
              cuda_failed(&cs, "cudaMalloc", cudaMalloc((void **)&cs.c, mat)) ||
              cuda_failed(&cs, "cudaMemset", cudaMemset(cs.a, 0, mat)) ||
              cuda_failed(&cs, "cudaMemset", cudaMemset(cs.b, 0, mat));
    void (*tests[NTESTS])(child_report *, child_state *, int) = {test_handles, test_streams, test_captures};
    for (int t = 0; t < NTESTS; t++) {
        if (bad) {
            record(r, &cs, t, 1, 1, 0);
            continue;
        }
        tests[t](r, &cs, counts[t]);
    }
    int status = vl_fd_write_full(fd, r, sizeof *r) == 0 ? 0 : 3;
    free(r);
    return status;
}

/* --- the parent ---------------------------------------------------------------------------- */

static void run_variant(vl_program *p, int variant)
{
    char a[6][32];
    snprintf(a[0], 32, "%d", p->dev->ordinal);
    snprintf(a[1], 32, "%d", variant == SET_WORKSPACE);
    snprintf(a[2], 32, "%llu", (unsigned long long)opt_workspace);
    snprintf(a[3], 32, "%lld", (long long)opt_max_handles);
    snprintf(a[4], 32, "%lld", (long long)opt_max_streams);
    snprintf(a[5], 32, "%lld", (long long)opt_max_captures);
    const char *args[] = {"child", a[0], a[1], a[2], a[3], a[4], a[5], NULL};
    vl_child kid = {.pid = -1, .fd = -1};
    child_report *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "cublas_workspace: out of host memory\n");
        exit(VL_EXIT_FAIL);
    }
    /* Other variants: cuBLAS's own default, whatever the caller's shell set. */
    int got = vl_child_exec_self_env(&kid, args, CHANNEL_ENV, "CUBLAS_WORKSPACE_CONFIG",
                                     variant == ENV_CONFIG ? opt_env_config : NULL) == 0 &&
              vl_child_read(&kid, r, sizeof *r, CHILD_TIMEOUT_MS) == 1;
    char end[64] = "not started";
    if (kid.pid > 0) vl_child_end_text(vl_child_wait(&kid, 20000), end, sizeof end);
    char ws[32] = "";
    if (variant == SET_WORKSPACE) snprintf(ws, sizeof ws, "%llu", (unsigned long long)opt_workspace);
    if (!got || r->nsteps < 0 || r->nsteps > NTESTS * MAX_COUNT) {
        vl_csv_row(p->csv, ",%s,%s,error,,,,%s,\"no report from the child (%s)\"", variant_name[variant],
                   variant_role[variant], ws, end);
        free(r);
        return;
    }
    for (int i = 0; i < r->nsteps; i++) {
        const step *s = &r->steps[i];
        if (s->test < 0 || s->test >= NTESTS) continue;
        char err[sizeof s->error + 1];
        snprintf(err, sizeof err, "%s", s->error);
        vl_one_line(err);
        if (s->ok)
            vl_csv_row(p->csv, "%s,%s,%s,ok,%d,%lld,%lld,%s,", test_name[s->test], variant_name[variant],
                       variant_role[variant], s->count, (long long)s->used_bytes, (long long)(s->used_bytes / s->count),
                       ws);
        else
            vl_csv_row(p->csv, "%s,%s,%s,error,%d,,,%s,\"%s\"", test_name[s->test], variant_name[variant],
                       variant_role[variant], s->count, ws, err);
    }
    free(r);
}

int main(int argc, char **argv)
{
    /* A child started by this program: only its channel, no command line, no frame. */
    if (getenv(CHANNEL_ENV)) {
        int fd = vl_child_fd_from_env(CHANNEL_ENV);
        if (fd < 0 || argc < 8 || strcmp(argv[1], "child") != 0) return VL_EXIT_USAGE;
        unsetenv(CHANNEL_ENV);
        return child(fd, argv);
    }

    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    int major = -1, minor = -1, patch = -1; /* no handle, no device work */
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    vl_csv_meta(p.csv, "scenario", "cublas_workspace: device memory of cuBLAS workspaces per handle, stream and graph "
                                   "capture; cublasSetWorkspace and CUBLAS_WORKSPACE_CONFIG");
    vl_csv_meta(p.csv, "cublas_version", "%d.%d.%d", major, minor, patch);
    vl_csv_meta(p.csv, "workspace_bytes", "set_workspace's owned buffer, counted in the first step of each test");
    vl_csv_meta(p.csv, "env_config", "%s", opt_env_config);
    vl_csv_meta(p.csv, "device_used_bytes", "device-wide used memory in the child after the step minus before the "
                                            "test's first step (context and matrices excluded)");
    vl_csv_meta(p.csv, "per_unit_bytes", "device_used_bytes / count");
    vl_csv_header(p.csv, COLUMNS);
    for (int v = 0; v < NVARIANTS; v++) run_variant(&p, v);
    return vl_program_finish(&p);
}
