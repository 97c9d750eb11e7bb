/* ipc_hold: device memory shared with another process through CUDA IPC, and what the
 * sharing costs the producer's cache.
 *
 * Folklore (PyTorch's torch.multiprocessing notes): a CUDA IPC handle names the whole
 * cudaMalloc allocation, so a consumer holding a tensor carved from a cached segment
 * pins the whole segment, and the producer's empty_cache cannot give it back; and the
 * producer must keep the block alive until the consumer is done, or its cache hands
 * the memory to someone else while the consumer still reads it.
 *
 * The consumer is a fresh exec of this program on the same GPU (IPC handles cannot be
 * opened in the process that made them). Sections:
 *   hold    one block of --block bytes from --alloc, shared with cudaIpcGetMemHandle on
 *           its allocation's base (+ offset): the bytes that stay used on the device
 *           after the producer freed it and trimmed its cache (empty_cache).
 *             consumer_holds (bad)   free + trim while the consumer has it open
 *             consumer_closed (fixed) the consumer closes first, then free + trim
 *           Memory that is not a plain cudaMalloc allocation (an async pool's, the
 *           caching allocator's expandable segments: driver VMM) cannot be shared this
 *           way: the row says not_applicable with the error the call returned.
 *   race    the consumer queues a read of the block behind --lag of GPU work and says
 *           so; the producer then frees it, allocates the same size and writes a new
 *           pattern. Corrupted elements: those the consumer read that were not what the
 *           producer shared.
 *             no_wait    (bad)   free as soon as the consumer has queued its read
 *             ipc_event  (fixed) the consumer records an interprocess event
 *                                (cudaEventInterprocess | cudaEventDisableTiming) after
 *                                its read; the producer's stream waits on it, then frees
 *   pool    (--alloc async only) the stream-ordered way: a pool created with
 *           cudaMemHandleTypePosixFileDescriptor, exported (the fd passed over the
 *           channel with SCM_RIGHTS), one allocation exported with
 *           cudaMemPoolExportPointer; also the device's default pool, whose export fails.
 *             exporter_frees_first (bad)  the producer frees + trims the pool while the
 *                                         consumer still has the pointer imported (the
 *                                         documentation forbids it; measured)
 *             importer_frees_first (fixed) the consumer frees its import first */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/gpu.h"
#include "exitcodes.h"
#include "kernels/pattern.h"
#include "kernels/spin.h"
#include "program.h"
#include "scenario/gpus.h"
#include "scenario/subprocess.h"

#define MiB (UINT64_C(1) << 20)
#define CHANNEL_ENV "VL_IPC_HOLD_CHANNEL"
#define TIMEOUT_MS 60000

#define COLUMNS                                                                                                \
    "section,variant,role,status,block_bytes,allocation_bytes,lag_ns,trials,reused_trials,corrupted_trials,"   \
    "corrupted_elements,consumer_mismatches,held_while_shared_bytes,held_after_release_bytes,error"

enum op { OP_READY, OP_IMPORT_POOL, OP_READ, OP_QUEUE, OP_CLOSE, OP_QUIT };

typedef struct request {
    int32_t op, pool, use_event, pad;
    uint64_t offset, n, lag_ns;
    uint32_t seed, pad2;
    cudaIpcMemHandle_t mem;
    cudaIpcEventHandle_t event;
    struct cudaMemPoolPtrExportData ptr_data;
} request;

typedef struct reply {
    int32_t error; /* cudaError_t of the first failing call; 0 */
    char call[40];
    char name[48];
    uint64_t mismatches;
} reply;

/* --- the consumer (a fresh exec of this program) ----------------------------------------- */

typedef struct consumer {
    int fd;
    cudaStream_t s;
    unsigned long long *d_count;
    cudaMemPool_t pool;
    int have_pool, have_event, opened_pool;
    cudaEvent_t event;
    void *base; /* the opened mapping (legacy) or the imported pointer (pool) */
} consumer;

static int failed(reply *r, const char *call, cudaError_t e)
{
    if (e == cudaSuccess) return 0;
    if (!r->error) {
        r->error = (int32_t)e;
        snprintf(r->call, sizeof r->call, "%s", call);
        snprintf(r->name, sizeof r->name, "%s", cudaGetErrorName(e));
    }
    (void)cudaGetLastError();
    return 1;
}

/* Opens the shared block; its elements start at the returned pointer. */
static uint32_t *consumer_open(consumer *c, const request *q, reply *r)
{
    c->base = NULL;
    c->opened_pool = q->pool;
    if (q->pool) {
        struct cudaMemPoolPtrExportData d = q->ptr_data;
        if (failed(r, "cudaMemPoolImportPointer", cudaMemPoolImportPointer(&c->base, c->pool, &d))) return NULL;
    } else if (failed(r, "cudaIpcOpenMemHandle", cudaIpcOpenMemHandle(&c->base, q->mem, cudaIpcMemLazyEnablePeerAccess))) {
        return NULL;
    }
    return (uint32_t *)((char *)c->base + q->offset);
}

static void consumer_close(consumer *c, reply *r)
{
    if (!c->base) return;
    if (c->opened_pool) failed(r, "cudaFree(imported)", cudaFree(c->base));
    else failed(r, "cudaIpcCloseMemHandle", cudaIpcCloseMemHandle(c->base));
    c->base = NULL;
}

static void consumer_count(consumer *c, const request *q, uint32_t *p, reply *r)
{
    if (failed(r, "cudaMemsetAsync", cudaMemsetAsync(c->d_count, 0, sizeof *c->d_count, c->s))) return;
    if (q->lag_ns) vl_spin(c->s, q->lag_ns);
    vl_count_mismatch_u32(p, q->n, q->seed, 1, c->d_count, c->s);
}

static int consumer_main(int fd, int ordinal)
{
    consumer c = {.fd = fd};
    reply r;
    memset(&r, 0, sizeof r);
    if (!failed(&r, "cudaSetDevice", cudaSetDevice(ordinal)) &&
        !failed(&r, "cudaStreamCreate", cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking)))
        failed(&r, "cudaMalloc", cudaMalloc((void **)&c.d_count, sizeof *c.d_count));
    if (vl_fd_write_full(fd, &r, sizeof r) != 0 || r.error) return 1;
    for (;;) {
        request q;
        int pool_fd = -1;
        if (vl_fd_recv_with_fd(fd, &q, sizeof q, &pool_fd) != 1 || q.op == OP_QUIT) break;
        memset(&r, 0, sizeof r);
        if (q.op == OP_IMPORT_POOL) {
            if (pool_fd < 0) failed(&r, "SCM_RIGHTS", cudaErrorInvalidValue);
            else if (!failed(&r, "cudaMemPoolImportFromShareableHandle",
                             cudaMemPoolImportFromShareableHandle(&c.pool, (void *)(uintptr_t)pool_fd,
                                                                  cudaMemHandleTypePosixFileDescriptor, 0))) {
                /* As NVIDIA's streamOrderedAllocationIPC sample does: access for this
                 * process's device to the imported pool. */
                struct cudaMemAccessDesc desc = {.location = {.type = cudaMemLocationTypeDevice, .id = ordinal},
                                                 .flags = cudaMemAccessFlagsProtReadWrite};
                c.have_pool = !failed(&r, "cudaMemPoolSetAccess(imported)", cudaMemPoolSetAccess(c.pool, &desc, 1));
            }
            if (pool_fd >= 0) close(pool_fd);
        } else if (q.op == OP_READ || q.op == OP_QUEUE) {
            uint32_t *p = consumer_open(&c, &q, &r);
            if (p) consumer_count(&c, &q, p, &r);
            if (p && q.use_event && !c.have_event &&
                !failed(&r, "cudaIpcOpenEventHandle", cudaIpcOpenEventHandle(&c.event, q.event)))
                c.have_event = 1;
            if (p && q.use_event && c.have_event) failed(&r, "cudaEventRecord", cudaEventRecord(c.event, c.s));
            if (q.op == OP_READ && !failed(&r, "cudaStreamSynchronize", cudaStreamSynchronize(c.s)))
                failed(&r, "cudaMemcpy", cudaMemcpy(&r.mismatches, c.d_count, sizeof r.mismatches, cudaMemcpyDeviceToHost));
        } else if (q.op == OP_CLOSE) {
            if (!failed(&r, "cudaStreamSynchronize", cudaStreamSynchronize(c.s)))
                failed(&r, "cudaMemcpy", cudaMemcpy(&r.mismatches, c.d_count, sizeof r.mismatches, cudaMemcpyDeviceToHost));
            consumer_close(&c, &r);
            failed(&r, "cudaStreamSynchronize", cudaStreamSynchronize(c.s));
        }
        if (vl_fd_write_full(fd, &r, sizeof r) != 0) break;
    }
    if (c.have_event) cudaEventDestroy(c.event);
    if (c.d_count) cudaFree(c.d_count);
    return 0;
}

/* --- the producer (this program) ---------------------------------------------------------- */

typedef struct producer {
    vl_program *p;
    vl_child kid;
    cudaStream_t s;
    int ordinal;
    int alive;
    int release_wait_ms; /* how long "after release" waits for the device to give memory back */
} producer;

/* Sends a request (with a descriptor when fd >= 0) and waits for the reply. 0, or -1
 * when the consumer is gone (then every later exchange fails too). */
static int exchange(producer *x, const request *q, int fd, reply *r)
{
    memset(r, 0, sizeof *r);
    if (!x->alive) return -1;
    int sent = fd >= 0 ? vl_fd_send_with_fd(x->kid.fd, q, sizeof *q, fd) : vl_child_write(&x->kid, q, sizeof *q);
    if (sent != 0 || vl_child_read(&x->kid, r, sizeof *r, TIMEOUT_MS) != 1) {
        x->alive = 0;
        snprintf(r->name, sizeof r->name, "consumer gone");
        r->error = -1;
        return -1;
    }
    return 0;
}

static int64_t used_now(producer *x) { return vl_gpu_used_when_idle(x->ordinal); }

/* The legacy IPC handle of the allocation around block; 0, or -1 with the error name. */
static int legacy_handle(void *block, request *q, size_t *alloc_bytes, char *err, size_t errlen)
{
    void *base = NULL;
    *alloc_bytes = 0;
    if (vl_gpu_alloc_range(block, &base, alloc_bytes) != 0) {
        snprintf(err, errlen, "cuMemGetAddressRange failed");
        return -1;
    }
    cudaError_t e = cudaIpcGetMemHandle(&q->mem, base);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaIpcGetMemHandle: %s", cudaGetErrorName(e));
        (void)cudaGetLastError();
        return -1;
    }
    q->offset = (uint64_t)((char *)block - (char *)base);
    return 0;
}

static const char *reply_error(const reply *r, char *buf, size_t len)
{
    if (!r->error) return "";
    snprintf(buf, len, "%s: %s", r->call[0] ? r->call : "consumer", r->name);
    return buf;
}

static void hold_section(producer *x, uint64_t bytes)
{
    vl_allocator *al = x->p->alloc;
    for (int v = 0; v < 2; v++) {
        const char *variant = v == 0 ? "consumer_holds" : "consumer_closed", *role = v == 0 ? "bad" : "fixed";
        vl_trim(al);
        int64_t before = used_now(x);
        uint32_t *block = vl_allocate(al, bytes, (vl_stream)x->s);
        if (!block) {
            vl_csv_row(x->p->csv, "hold,%s,%s,oom,%llu,,,,,,,,,,", variant, role, (unsigned long long)bytes);
            continue;
        }
        uint32_t seed = 0x1234u + (uint32_t)v;
        vl_fill_iota_u32(block, bytes / 4, seed, x->s);
        VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
        request q = {.op = OP_READ, .n = bytes / 4, .seed = seed};
        size_t alloc_bytes = 0;
        char err[128] = "";
        if (legacy_handle(block, &q, &alloc_bytes, err, sizeof err) != 0) {
            vl_deallocate(al, block, bytes, (vl_stream)x->s);
            vl_csv_row(x->p->csv, "hold,%s,%s,not_applicable,%llu,%zu,,,,,,,,,%s", variant, role,
                       (unsigned long long)bytes, alloc_bytes, err);
            continue;
        }
        reply r, rc;
        char e1[128], e2[128];
        exchange(x, &q, -1, &r);
        request close_q = {.op = OP_CLOSE};
        if (v == 1) exchange(x, &close_q, -1, &rc);
        vl_deallocate(al, block, bytes, (vl_stream)x->s);
        vl_trim(al);
        int64_t shared = used_now(x) - before;
        if (v == 0) exchange(x, &close_q, -1, &rc);
        vl_trim(al);
        vl_gpu_wait_used_at_most(x->ordinal, before + (int64_t)(2 * MiB), x->release_wait_ms);
        int64_t after = used_now(x) - before;
        const char *why = r.error ? reply_error(&r, e1, sizeof e1) : reply_error(&rc, e2, sizeof e2);
        vl_csv_row(x->p->csv, "hold,%s,%s,%s,%llu,%zu,,,,,,%llu,%lld,%lld,%s", variant, role, why[0] ? "error" : "ok",
                   (unsigned long long)bytes, alloc_bytes, (unsigned long long)r.mismatches, (long long)shared,
                   (long long)after, why);
    }
}

static void race_section(producer *x, uint64_t bytes, const uint64_t *lags, int nlags, int trials)
{
    vl_allocator *al = x->p->alloc;
    cudaEvent_t ev;
    VL_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming));
    cudaIpcEventHandle_t evh;
    VL_CUDA_CHECK(cudaIpcGetEventHandle(&evh, ev));
    for (int li = 0; li < nlags; li++)
        for (int v = 0; v < 2; v++) {
            const char *variant = v == 0 ? "no_wait" : "ipc_event", *role = v == 0 ? "bad" : "fixed";
            int done = 0, reused = 0, corrupted = 0;
            unsigned long long elements = 0;
            size_t alloc_bytes = 0;
            char err[128] = "";
            const char *status = "ok";
            for (int t = 0; t < trials && !err[0]; t++) {
                uint32_t seed = 0xabc00000u + (uint32_t)(li * 1000 + v * 100 + t);
                uint32_t *block = vl_allocate(al, bytes, (vl_stream)x->s);
                if (!block) {
                    status = "oom";
                    break;
                }
                vl_fill_iota_u32(block, bytes / 4, seed, x->s);
                VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
                request q = {.op = OP_QUEUE, .n = bytes / 4, .seed = seed, .lag_ns = lags[li], .use_event = v == 1,
                             .event = evh};
                if (legacy_handle(block, &q, &alloc_bytes, err, sizeof err) != 0) {
                    vl_deallocate(al, block, bytes, (vl_stream)x->s);
                    status = "not_applicable";
                    break;
                }
                reply r;
                if (exchange(x, &q, -1, &r) != 0 || r.error) {
                    reply_error(&r, err, sizeof err);
                    status = "error";
                    vl_deallocate(al, block, bytes, (vl_stream)x->s);
                    break;
                }
                /* The consumer's read is queued (and, fixed, its event recorded). */
                if (v == 1) VL_CUDA_CHECK(cudaStreamWaitEvent(x->s, ev, 0));
                vl_deallocate(al, block, bytes, (vl_stream)x->s);
                uint32_t *fresh = vl_allocate(al, bytes, (vl_stream)x->s);
                if (fresh) {
                    reused += fresh == block;
                    vl_fill_iota_u32(fresh, bytes / 4, ~seed, x->s);
                }
                VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
                request cq = {.op = OP_CLOSE};
                exchange(x, &cq, -1, &r);
                if (r.error) {
                    reply_error(&r, err, sizeof err);
                    status = "error";
                }
                if (fresh) vl_deallocate(al, fresh, bytes, (vl_stream)x->s);
                VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
                done++;
                corrupted += r.mismatches > 0;
                elements += r.mismatches;
            }
            /* No trial done (not applicable, an error, an OOM): the counts of what a trial
             * finds are unknown, empty fields, not 0. */
            char reused_s[24] = "", corrupted_s[24] = "", elements_s[24] = "";
            if (done) {
                snprintf(reused_s, sizeof reused_s, "%d", reused);
                snprintf(corrupted_s, sizeof corrupted_s, "%d", corrupted);
                snprintf(elements_s, sizeof elements_s, "%llu", elements);
            }
            vl_csv_row(x->p->csv, "race,%s,%s,%s,%llu,%zu,%llu,%d,%s,%s,%s,,,,%s", variant, role, status,
                       (unsigned long long)bytes, alloc_bytes, (unsigned long long)lags[li], done, reused_s,
                       corrupted_s, elements_s, err);
        }
    VL_CUDA_CHECK(cudaEventDestroy(ev));
}

/* Stream-ordered pools: the export of the default pool (refused), then a pool made
 * for IPC, its fd passed with SCM_RIGHTS, one pointer exported per variant. */
static void pool_section(producer *x, uint64_t bytes)
{
    cudaMemPool_t dflt;
    VL_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&dflt, x->ordinal));
    int dfd = -1;
    cudaError_t e = cudaMemPoolExportToShareableHandle(&dfd, dflt, cudaMemHandleTypePosixFileDescriptor, 0);
    (void)cudaGetLastError();
    vl_csv_row(x->p->csv, "pool,default_pool_export,probe,%s,,,,,,,,,,,%s", e == cudaSuccess ? "ok" : "error",
               e == cudaSuccess ? "" : cudaGetErrorName(e));
    if (dfd >= 0) close(dfd);

    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = x->ordinal;
    cudaMemPool_t pool;
    e = cudaMemPoolCreate(&pool, &props);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        vl_csv_row(x->p->csv, "pool,ipc_pool,probe,not_applicable,,,,,,,,,,,cudaMemPoolCreate: %s", cudaGetErrorName(e));
        return;
    }
    int fd = -1;
    char err[128] = "";
    reply r;
    e = cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0);
    request iq = {.op = OP_IMPORT_POOL};
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(err, sizeof err, "cudaMemPoolExportToShareableHandle: %s", cudaGetErrorName(e));
    } else if (exchange(x, &iq, fd, &r) != 0 || r.error) {
        reply_error(&r, err, sizeof err);
    }
    if (fd >= 0) close(fd);
    for (int v = 0; v < 2; v++) {
        const char *variant = v == 0 ? "exporter_frees_first" : "importer_frees_first", *role = v == 0 ? "bad" : "fixed";
        if (err[0]) {
            vl_csv_row(x->p->csv, "pool,%s,%s,error,%llu,,,,,,,,,,%s", variant, role, (unsigned long long)bytes, err);
            continue;
        }
        VL_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
        int64_t before = used_now(x);
        void *ptr = NULL;
        e = cudaMallocFromPoolAsync(&ptr, bytes, pool, x->s);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            vl_csv_row(x->p->csv, "pool,%s,%s,oom,%llu,,,,,,,,,,%s", variant, role, (unsigned long long)bytes,
                       cudaGetErrorName(e));
            continue;
        }
        uint32_t seed = 0x5150u + (uint32_t)v;
        vl_fill_iota_u32(ptr, bytes / 4, seed, x->s);
        VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
        uint64_t reserved = 0;
        VL_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
        request q = {.op = OP_READ, .pool = 1, .n = bytes / 4, .seed = seed};
        VL_CUDA_CHECK(cudaMemPoolExportPointer(&q.ptr_data, ptr));
        reply rr, rc;
        char e1[128], e2[128];
        exchange(x, &q, -1, &rr);
        request cq = {.op = OP_CLOSE};
        if (v == 1) exchange(x, &cq, -1, &rc);
        VL_CUDA_CHECK(cudaFreeAsync(ptr, x->s));
        VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
        VL_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
        int64_t shared = used_now(x) - before;
        if (v == 0) exchange(x, &cq, -1, &rc);
        VL_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
        vl_gpu_wait_used_at_most(x->ordinal, before + (int64_t)(2 * MiB), x->release_wait_ms);
        int64_t after = used_now(x) - before;
        const char *why = rr.error ? reply_error(&rr, e1, sizeof e1) : reply_error(&rc, e2, sizeof e2);
        vl_csv_row(x->p->csv, "pool,%s,%s,%s,%llu,%llu,,,,,,%llu,%lld,%lld,%s", variant, role, why[0] ? "error" : "ok",
                   (unsigned long long)bytes, (unsigned long long)reserved, (unsigned long long)rr.mismatches,
                   (long long)shared, (long long)after, why);
    }
    VL_CUDA_CHECK(cudaMemPoolDestroy(pool));
}

int main(int argc, char **argv)
{
    if (getenv(CHANNEL_ENV)) { /* the consumer */
        int fd = vl_child_fd_from_env(CHANNEL_ENV);
        if (fd < 0 || argc < 3 || strcmp(argv[1], "consumer") != 0) return VL_EXIT_USAGE;
        unsetenv(CHANNEL_ENV);
        return consumer_main(fd, atoi(argv[2]));
    }
    uint64_t block = 4 * MiB;
    int64_t trials = 10;
    int64_t lag_ns = 20000000;
    int64_t release_wait_ms = 5000;
    const vl_cli_opt opts[] = {
        {"block", VL_CLI_SIZE, &block, "bytes shared (the caching allocator carves 1-10 MiB from 20 MiB segments)",
         4096, 0x1p36},
        {"trials", VL_CLI_INT, &trials, "race trials per variant and lag", 1, 1000, VL_QUICK_AT_MOST, "3"},
        {"lag", VL_CLI_INT, &lag_ns, "ns of GPU work ahead of the consumer's read in the race (a second row: 0)", 0,
         1e10},
        /* Quick: 250 ms. Memory given back is back within tens of ms (at 717dd2d on an
         * H200 the caching job's hold and race sections, waits included, took ~0.15 s);
         * the one row that keeps it (async pool, exporter_frees_first) still holds its
         * 32 MiB after the whole wait, 1 s quick as 5 s full, so only that wait shrinks. */
        {"release-wait", VL_CLI_INT, &release_wait_ms,
         "ms to wait for the device to give back what was released before reading it (held_after_release)", 0,
         600000, VL_QUICK_AT_MOST, "250"},
        {NULL, 0, NULL, NULL, 0, 0},
    };
    const vl_program_def def = {
        .summary = "CUDA IPC between two processes: the producer's cached segment pinned by a consumer's handle, "
                   "the free-before-read race and its fix with an interprocess event, async pool export",
        .default_alloc = "caching",
        .needs_cuda = 1,
        .options = opts,
    };
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    block &= ~(uint64_t)3;
    producer x = {.p = &p, .ordinal = p.dev->ordinal, .release_wait_ms = (int)release_wait_ms};
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking));
    char ord[16];
    snprintf(ord, sizeof ord, "%d", x.ordinal);
    const char *args[] = {"consumer", ord, NULL};
    reply ready;
    if (vl_child_exec_self(&x.kid, args, CHANNEL_ENV) != 0 ||
        vl_child_read(&x.kid, &ready, sizeof ready, TIMEOUT_MS) != 1 || ready.error) {
        vl_child_wait(&x.kid, 1000);
        VL_CUDA_CHECK(cudaStreamDestroy(x.s));
        return vl_program_skip(&p, "the consumer process could not use CUDA device %d", x.ordinal);
    }
    x.alive = 1;

    vl_csv_meta(p.csv, "scenario", "ipc_hold: CUDA IPC from a cached allocation to a consumer process");
    vl_csv_meta(p.csv, "held", "device used (total - free) minus before the block was allocated, after the producer "
                               "freed and trimmed (while shared / after the consumer released it)");
    vl_csv_meta(p.csv, "release_wait_ms", "%lld (after release: read once the device is back within 2 MiB of before, "
                "or after this wait)", (long long)release_wait_ms);
    vl_csv_meta(p.csv, "allocation_bytes", "size of the cudaMalloc allocation the handle covers (pool: pool reserved)");
    vl_csv_meta(p.csv, "corrupted_elements", "elements the consumer read that differ from what the producer shared");
    vl_csv_header(p.csv, COLUMNS);
    hold_section(&x, block);
    const uint64_t lags[2] = {(uint64_t)lag_ns, 0};
    race_section(&x, block, lags, p.cli.quick || lag_ns == 0 ? 1 : 2, (int)trials);
    if (strcmp(p.cli.alloc.name, "async") == 0) pool_section(&x, block);

    request quit = {.op = OP_QUIT};
    vl_child_write(&x.kid, &quit, sizeof quit);
    vl_child_release(&x.kid);
    vl_child_end end = vl_child_wait(&x.kid, 20000);
    char end_text[64];
    /* After the rows: a note on stderr (metadata belongs before the CSV header). */
    fprintf(stderr, "ipc_hold: the consumer process ended: %s\n", vl_child_end_text(end, end_text, sizeof end_text));
    vl_program_close_alloc(&p); /* before the stream its blocks were used on */
    VL_CUDA_CHECK(cudaStreamDestroy(x.s));
    /* The consumer's context goes away asynchronously; the frame's leak check follows.
     * After the close: an open cache would keep the device above the target, and the
     * wait would run out its whole timeout (10 s a run under caching). */
    vl_gpu_wait_used_at_most(x.ordinal, (int64_t)(p.dev->total_bytes - p.free_at_start) + (int64_t)(2 * MiB), 10000);
    return vl_program_finish(&p);
}
