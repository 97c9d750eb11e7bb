/* async_free_race: memory freed while another stream still uses it.
 *
 * Device side. A buffer allocated on stream A is handed to stream B, where a kernel
 * will read and write it after B's backlog (`lag`: a spin kernel ahead of it). The
 * host then frees it on A and at once allocates the same size on A and writes a
 * pattern into the new buffer. If the allocator gave the old memory back, B's kernel
 * writes into the new owner's data: we count the corrupted elements per trial.
 *   no_dependency  (bad)    free on A with nothing ordering it after B's work
 *   record_use     (fixed)  tell the allocator p is used on B (PyTorch's record_stream)
 *   event_wait     (fixed)  A waits on an event recorded on B, then frees
 *   stream_sync    (fixed)  the host waits for B, then frees
 * raw cudaFree synchronises the whole device, so it cannot race: it stalls instead,
 * and the free's host latency is reported against B's backlog (side_work_ms).
 *
 * Host side. A pinned buffer is the source of a cudaMemcpyAsync queued behind B's
 * backlog; the host then refills it for the next batch:
 *   host_reuse_no_wait (bad) / host_reuse_event_sync (fixed: wait for the copy's event).
 * Corrupted elements are those of the device copy that hold the refill. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "kernels/pattern.h"
#include "kernels/spin.h"
#include "program.h"
#include "scenario/size_ladder.h"
#include "stats.h"

enum variant { NO_DEPENDENCY, RECORD_USE, EVENT_WAIT, STREAM_SYNC, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {"no_dependency", "record_use", "event_wait", "stream_sync"};

typedef struct experiment {
    vl_program *p;
    cudaStream_t a, b;
    cudaEvent_t b_done;
    unsigned long long *d_count; /* mismatch counter, outside the allocator under test */
    int trials;
    uint32_t seed;
} experiment;

/* One cell of the table: one variant, size and lag, over many trials. */
typedef struct cell {
    int trials, corrupted_trials, reused_trials, oom_trials;
    unsigned long long corrupted_elements, worst_elements;
    double free_ns[1024];
    int nfree;
} cell;

#define CSV_COLUMNS                                                                                          \
    "section,variant,role,size_bytes,lag_ns,side_work_ms,trials,corrupted_trials,corrupted_elements,"        \
    "worst_trial_corrupted_fraction,reused_address_trials,oom_trials,free_call_median_ns,free_call_p99_ns," \
    "status"

static unsigned long long count_mismatches(experiment *x, const uint32_t *buf, size_t n, uint32_t seed)
{
    unsigned long long count = 0;
    VL_CUDA_CHECK(cudaMemsetAsync(x->d_count, 0, sizeof *x->d_count, x->a));
    vl_count_mismatch_u32(buf, n, seed, 1, x->d_count, x->a);
    VL_CUDA_CHECK(cudaMemcpyAsync(&count, x->d_count, sizeof count, cudaMemcpyDeviceToHost, x->a));
    VL_CUDA_CHECK(cudaStreamSynchronize(x->a));
    return count;
}

/* B's backlog: lag_ns of spinning, then a kernel that reads and writes the buffer. */
static void queue_side_work(experiment *x, uint32_t *buf, size_t n, uint64_t lag_ns)
{
    if (lag_ns) vl_spin(x->b, lag_ns);
    vl_touch_u32(buf, n, 1, x->b);
}

/* Device time of B's backlog for this size and lag (median of a few); NAN (an empty
 * field) when its buffer could not be had. */
static double side_work_ms(experiment *x, size_t bytes, uint64_t lag_ns)
{
    vl_allocator *al = x->p->alloc;
    uint32_t *buf = vl_allocate(al, bytes, (vl_stream)x->b);
    if (!buf) return NAN;
    vl_gpu_timer t;
    vl_gpu_timer_init(&t);
    double ms[5];
    for (int i = 0; i < 5; i++) {
        vl_gpu_timer_start(&t, x->b);
        queue_side_work(x, buf, bytes / 4, lag_ns);
        ms[i] = vl_gpu_timer_stop_ms(&t, x->b);
    }
    vl_gpu_timer_destroy(&t);
    vl_deallocate(al, buf, bytes, (vl_stream)x->b);
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    return vl_summarize(ms, 5).median;
}

/* One trial: returns 0, or -1 when the variant is not supported by the allocator. */
static int device_trial(experiment *x, enum variant v, size_t bytes, uint64_t lag_ns, cell *c, uint32_t trial_seed)
{
    vl_allocator *al = x->p->alloc;
    vl_stream sa = (vl_stream)x->a;
    size_t n = bytes / 4;
    uint32_t *old = vl_allocate(al, bytes, sa);
    if (!old) {
        c->oom_trials++;
        return 0;
    }
    vl_fill_u32(old, n, 0, x->a);
    VL_CUDA_CHECK(cudaStreamSynchronize(x->a));
    queue_side_work(x, old, n, lag_ns);

    switch (v) {
    case NO_DEPENDENCY: break;
    case RECORD_USE:
        if (vl_record_use(al, old, (vl_stream)x->b) == VL_UNSUPPORTED) {
            VL_CUDA_CHECK(cudaStreamSynchronize(x->b));
            vl_deallocate(al, old, bytes, sa);
            return -1;
        }
        break;
    case EVENT_WAIT:
        VL_CUDA_CHECK(cudaEventRecord(x->b_done, x->b));
        VL_CUDA_CHECK(cudaStreamWaitEvent(x->a, x->b_done, 0));
        break;
    case STREAM_SYNC: VL_CUDA_CHECK(cudaStreamSynchronize(x->b)); break;
    default: abort();
    }
    uint64_t t0 = vl_now_ns();
    vl_deallocate(al, old, bytes, sa);
    uint64_t t1 = vl_now_ns();
    c->free_ns[c->nfree++] = (double)(t1 - t0); /* trials <= 1000 */

    uint32_t *fresh = vl_allocate(al, bytes, sa);
    if (!fresh) {
        c->oom_trials++;
        VL_CUDA_CHECK(cudaDeviceSynchronize());
        return 0;
    }
    c->reused_trials += fresh == old;
    vl_fill_iota_u32(fresh, n, trial_seed, x->a);
    VL_CUDA_CHECK(cudaDeviceSynchronize()); /* B's late kernel has done its damage, if any */
    unsigned long long bad = count_mismatches(x, fresh, n, trial_seed);
    c->trials++;
    c->corrupted_trials += bad > 0;
    c->corrupted_elements += bad;
    if (bad > c->worst_elements) c->worst_elements = bad;
    vl_deallocate(al, fresh, bytes, sa);
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    return 0;
}

static void write_row(experiment *x, const char *section, const char *variant, const char *role, size_t bytes,
                      uint64_t lag_ns, double side_ms, cell *c, const char *status)
{
    /* What was not measured (no trial ran, no free timed, no backlog: host rows) is an
     * empty field. */
    vl_summary fs = vl_summarize(c->free_ns, (size_t)c->nfree);
    double worst = bytes && c->trials ? (double)c->worst_elements / (double)(bytes / 4) : NAN;
    char side[32], worst_text[32], free_median[32], free_p99[32];
    vl_csv_row(x->p->csv, "%s,%s,%s,%zu,%llu,%s,%d,%d,%llu,%s,%d,%d,%s,%s,%s", section, variant, role, bytes,
               (unsigned long long)lag_ns, vl_csv_f64(side_ms, 4, side, sizeof side), c->trials, c->corrupted_trials,
               c->corrupted_elements, vl_csv_f64(worst, 6, worst_text, sizeof worst_text), c->reused_trials,
               c->oom_trials, vl_csv_f64(c->nfree ? fs.median : NAN, 0, free_median, sizeof free_median),
               vl_csv_f64(c->nfree ? fs.p99 : NAN, 0, free_p99, sizeof free_p99), status);
}

static void run_device_side(experiment *x, const uint64_t *sizes, size_t nsizes, const uint64_t *lags, size_t nlags)
{
    for (size_t si = 0; si < nsizes; si++) {
        for (size_t li = 0; li < nlags; li++) {
            double side_ms = side_work_ms(x, sizes[si], lags[li]);
            for (int v = 0; v < NVARIANTS; v++) {
                cell *c = calloc(1, sizeof *c);
                if (!c) abort();
                const char *status = "ok";
                for (int t = 0; t < x->trials; t++) {
                    uint32_t trial_seed = x->seed * 2654435761u + (uint32_t)(si * 7919 + li * 104729 + t);
                    if (device_trial(x, (enum variant)v, sizes[si], lags[li], c, trial_seed) < 0) {
                        status = "unsupported";
                        break;
                    }
                }
                if (c->oom_trials && !c->trials) status = "oom";
                write_row(x, "device", variant_name[v], v == NO_DEPENDENCY ? "bad" : "fixed", sizes[si], lags[li],
                          side_ms, c, status);
                free(c);
            }
        }
    }
}

static void host_fill(uint32_t *h, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) h[i] = seed ^ (uint32_t)i;
}

/* Pinned staging buffer reused while its copy may still be in flight. */
static void run_host_side(experiment *x, const uint64_t *sizes, size_t nsizes, const uint64_t *lags, size_t nlags)
{
    vl_allocator *al = x->p->alloc;
    for (size_t si = 0; si < nsizes; si++) {
        size_t bytes = sizes[si], n = bytes / 4;
        uint32_t *host = NULL;
        VL_CUDA_CHECK(cudaMallocHost((void **)&host, bytes));
        for (size_t li = 0; li < nlags; li++) {
            for (int wait = 0; wait < 2; wait++) {
                cell c;
                memset(&c, 0, sizeof c);
                for (int t = 0; t < x->trials; t++) {
                    uint32_t *dst = vl_allocate(al, bytes, (vl_stream)x->b);
                    if (!dst) {
                        c.oom_trials++;
                        continue;
                    }
                    uint32_t batch_seed = x->seed + (uint32_t)t * 2u + 1u;
                    host_fill(host, n, batch_seed);
                    if (lags[li]) vl_spin(x->b, lags[li]);
                    VL_CUDA_CHECK(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, x->b));
                    VL_CUDA_CHECK(cudaEventRecord(x->b_done, x->b));
                    uint64_t t0 = vl_now_ns();
                    if (wait) VL_CUDA_CHECK(cudaEventSynchronize(x->b_done));
                    uint64_t t1 = vl_now_ns();
                    c.free_ns[c.nfree++] = (double)(t1 - t0);
                    host_fill(host, n, batch_seed + 0x9e3779b9u); /* the next batch */
                    VL_CUDA_CHECK(cudaStreamSynchronize(x->b));
                    unsigned long long bad = count_mismatches(x, dst, n, batch_seed);
                    c.trials++;
                    c.corrupted_trials += bad > 0;
                    c.corrupted_elements += bad;
                    if (bad > c.worst_elements) c.worst_elements = bad;
                    vl_deallocate(al, dst, bytes, (vl_stream)x->b);
                    VL_CUDA_CHECK(cudaDeviceSynchronize());
                }
                write_row(x, "host", wait ? "host_reuse_event_sync" : "host_reuse_no_wait", wait ? "fixed" : "bad",
                          bytes, lags[li], NAN, &c, c.trials ? "ok" : "oom");
            }
        }
        VL_CUDA_CHECK(cudaFreeHost(host));
    }
}

int main(int argc, char **argv)
{
    int64_t trials = 30;
    uint64_t max_size = 512ull << 20;
    const vl_cli_opt opts[] = {
        {"trials", VL_CLI_INT, &trials, "trials per variant, size and lag", 1, 1000, VL_QUICK_AT_MOST, "6"},
        {"max-size", VL_CLI_SIZE, &max_size, "largest buffer (capped at 1/8 of free memory)", 4096, 0x1p40},
        {NULL},
    };
    const vl_program_def def = {
        .summary = "memory freed on one stream while another stream still uses it: corrupted elements per trial",
        .default_alloc = "async",
        .needs_cuda = 1,
        .options = opts,
    };
    vl_program p;
    vl_program_start(&p, &def, argc, argv);

    experiment x = {.p = &p, .trials = (int)trials, .seed = (uint32_t)p.cli.seed};
    uint64_t top = vl_share_of_free(p.free_at_start, 0.125, max_size, 1 << 20);
    uint64_t sizes[8];
    size_t nsizes = vl_size_ladder(1 << 20, top, p.cli.quick ? 64 : 16, sizes, 8);
    const uint64_t lags_full[] = {0, 20000, 200000, 2000000};
    const uint64_t lags_quick[] = {0, 200000};
    const uint64_t *lags = p.cli.quick ? lags_quick : lags_full;
    size_t nlags = p.cli.quick ? 2 : 4;
    /* The host side copies through PCIe and refills on the CPU: keep it to 64 MiB.
     * Quick: 1 MiB only (the ladder's 1 and 64 MiB). A refill races its copy there at
     * both lags (every trial corrupted at 717dd2d, H200); at 64 MiB each of its 24
     * trials fills 64 MiB twice on the CPU (estimated 0.3-0.5 s of a 1.2 s job). */
    uint64_t host_max = p.cli.quick ? (1u << 20) : (64u << 20);
    size_t nhost = 0;
    while (nhost < nsizes && sizes[nhost] <= host_max) nhost++;

    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&x.a, cudaStreamNonBlocking));
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&x.b, cudaStreamNonBlocking));
    VL_CUDA_CHECK(cudaEventCreateWithFlags(&x.b_done, cudaEventDisableTiming));
    VL_CUDA_CHECK(cudaMalloc((void **)&x.d_count, sizeof *x.d_count));

    vl_csv_meta(p.csv, "trials", "%d", x.trials);
    vl_csv_meta(p.csv, "corruption",
                "elements of the new owner's buffer that differ from what it wrote, after every stream finished");
    vl_csv_meta(p.csv, "side_work_ms", "device time of stream B's backlog (spin lag + read-write kernel)");
    vl_csv_meta(p.csv, "free_call_ns",
                "device rows: host time of the free call; host rows: time the host waited before refilling");
    vl_csv_header(p.csv, CSV_COLUMNS);
    if (nsizes == 0) {
        vl_csv_row(p.csv, "device,all,bad,0,0,,0,0,0,,0,1,,,oom");
    } else {
        run_device_side(&x, sizes, nsizes, lags, nlags);
        run_host_side(&x, sizes, nhost, lags, nlags);
    }

    VL_CUDA_CHECK(cudaFree(x.d_count));
    VL_CUDA_CHECK(cudaEventDestroy(x.b_done));
    vl_program_close_alloc(&p); /* before the streams its blocks were used on */
    VL_CUDA_CHECK(cudaStreamDestroy(x.a));
    VL_CUDA_CHECK(cudaStreamDestroy(x.b));
    return vl_program_finish(&p);
}
