/* bench/vmm_wait: does a virtual-memory call wait for the GPU's queued work? A spin
 * kernel of --kernel-us runs on a stream, an event is recorded behind it, then one VMM
 * call of the device layer (what the caching allocator's expandable segments make) is
 * timed on the host clock, and the event queried right after. A call that returns
 * before the kernel ends, with the event not yet complete, ran beside the GPU's work;
 * one that takes about the kernel's time, with the event complete, waited for it.
 * Why: the allocator's relocation (unmap free chunks, map as many elsewhere) costs a
 * step only where the GPU waits for it, and whether queued work can hide it depends
 * on whether these calls wait (lib/caching/budget.c, raise=idle).
 *
 * Calls: none (the event query alone: the baseline), map (cuMemCreate + cuMemMap +
 * cuMemSetAccess of one chunk), map_phys (kept memory mapped again), unmap, unmap_keep
 * (cuMemRetainAllocationHandle + cuMemUnmap), phys_release (cuMemRelease of kept memory).
 * Streams: a created non-blocking stream, and the legacy default stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/streams.h"
#include "clock.h"
#include "exitcodes.h"
#include "kernels/spin.h"
#include "program.h"
#include "stats.h"

static int64_t reps = 30;
static double kernel_us = 20000;

static const vl_cli_opt options[] = {
    {"reps", VL_CLI_INT, &reps, "timed calls per call kind and stream; --quick: 5", 1, 1e5, VL_QUICK_AT_MOST, "5"},
    /* Quick: 10 ms. Every repetition waits for its kernel (12 rows x 6 repetitions with
     * the warm-up: 1.4 s at 20 ms); the slowest call's median (180 us at 717dd2d, H200)
     * stays under a tenth of it, and a call that waited would take about the kernel's time. */
    {"kernel-us", VL_CLI_DOUBLE, &kernel_us, "spin kernel before each call, in microseconds; --quick: 10000", 100, 1e7,
     VL_QUICK_AT_MOST, "10000"},
    {0},
};

static const vl_program_def def = {
    .summary = "whether each VMM call waits for the GPU's queued work (spin kernel, event, call, query)",
    .default_alloc = NULL,
    .needs_cuda = 1,
    .options = options,
};

enum { CALL_NONE, CALL_MAP, CALL_MAP_PHYS, CALL_UNMAP, CALL_UNMAP_KEEP, CALL_PHYS_RELEASE, CALLS };
static const char *const call_names[CALLS] = {"none", "map", "map_phys", "unmap", "unmap_keep", "phys_release"};

/* One repetition: the untimed set-up the call needs, the kernel and its event, the timed
 * call, the query. Returns 0 with *us and *done, or -1 after a device failure (printed). */
static int one(vl_device *d, vl_stream s, int call, void *va, size_t chunk, double *us, int *done)
{
    vl_phys kept = NULL;
    int rc = VL_DEV_OK;
    if (call == CALL_UNMAP || call == CALL_UNMAP_KEEP) rc = d->ops->map(d, va, chunk);
    if (call == CALL_MAP_PHYS || call == CALL_PHYS_RELEASE) {
        rc = d->ops->map(d, va, chunk);
        if (rc == VL_DEV_OK) rc = d->ops->unmap_keep(d, va, chunk, &kept);
    }
    if (rc != VL_DEV_OK) return -1;
    if (d->ops->synchronize(d) != VL_DEV_OK) return -1; /* the set-up's own work is done */
    vl_spin((cudaStream_t)s, (uint64_t)(kernel_us * 1e3));
    vl_event e = NULL;
    if (d->ops->event_record(d, s, &e) != VL_DEV_OK) return -1;
    uint64_t t0 = vl_now_ns();
    switch (call) {
    case CALL_MAP: rc = d->ops->map(d, va, chunk); break;
    case CALL_MAP_PHYS: rc = d->ops->map_phys(d, va, chunk, kept); break;
    case CALL_UNMAP: rc = d->ops->unmap(d, va, chunk); break;
    case CALL_UNMAP_KEEP: rc = d->ops->unmap_keep(d, va, chunk, &kept); break;
    case CALL_PHYS_RELEASE: rc = d->ops->phys_release(d, kept, chunk); break;
    default: break;
    }
    *us = (double)(vl_now_ns() - t0) / 1e3;
    int q = d->ops->event_query(d, e);
    *done = q == 1;
    d->ops->event_release(d, e);
    if (rc != VL_DEV_OK || q < 0) return -1;
    /* Back to an unmapped chunk, nothing kept. */
    if (call == CALL_MAP || call == CALL_MAP_PHYS) rc = d->ops->unmap(d, va, chunk);
    if (call == CALL_UNMAP_KEEP) rc = d->ops->phys_release(d, kept, chunk);
    return rc == VL_DEV_OK && d->ops->synchronize(d) == VL_DEV_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    vl_device *d = p.dev;
    size_t chunk = d->granularity;
    void *va = NULL;
    vl_bench_streams streams;
    int is_default[2] = {0, 1};
    double *us = malloc((size_t)reps * sizeof *us);
    if (!us || vl_bench_streams_create(&streams, d, 2, is_default) != 0) {
        fprintf(stderr, "vmm_wait: out of host memory\n");
        return VL_EXIT_FAIL;
    }
    if (!d->vmm_supported || d->ops->va_reserve(d, chunk, &va) != VL_DEV_OK) {
        fprintf(stderr, "vmm_wait: %s has no virtual memory support\n", d->name);
        return VL_EXIT_FAIL;
    }
    char cols[256], vals[256];
    char header[512];
    snprintf(header, sizeof header, "call,stream,chunk_bytes,kernel_us,reps,%s,event_done_after",
             vl_summary_columns("call", "us", cols, sizeof cols));
    vl_csv_header(p.csv, header);
    int failed = 0;
    for (int call = 0; call < CALLS && !failed; call++) {
        for (int k = 0; k < 2 && !failed; k++) {
            int done_count = 0;
            double warm_us;
            int warm_done;
            failed = one(d, streams.s[k], call, va, chunk, &warm_us, &warm_done) != 0; /* warm-up */
            for (int64_t r = 0; r < reps && !failed; r++) {
                int done = 0;
                failed = one(d, streams.s[k], call, va, chunk, &us[r], &done) != 0;
                done_count += done;
            }
            if (failed) break;
            vl_summary sum = vl_summarize(us, (size_t)reps);
            vl_csv_row(p.csv, "%s,%s,%zu,%.0f,%lld,%s,%d", call_names[call], k ? "legacy_default" : "non_blocking", chunk,
                       kernel_us, (long long)reps, vl_summary_values(&sum, vals, sizeof vals), done_count);
        }
    }
    if (failed) fprintf(stderr, "vmm_wait: a device call failed (above); the table stops there\n");
    d->ops->va_release(d, va, chunk);
    vl_bench_streams_destroy(&streams);
    free(us);
    int rc = vl_program_finish(&p);
    return failed ? VL_EXIT_FAIL : rc;
}
