/* graph_pool: device memory held by CUDA graphs, and a caching allocator used inside
 * a stream capture.
 *
 * Folklore: a captured graph that allocates (cudaMallocAsync in the capture) keeps its
 * memory in the device's graph memory pool for as long as it lives, so one graph per
 * input shape (CUDA-graphed inference with dynamic shapes) grows memory with every new
 * shape; cudaDeviceGraphMemTrim and destroying graphs give it back; an allocation the
 * graph does not free blocks a relaunch unless cudaGraphInstantiateFlagAutoFreeOnLaunch.
 * And a caching allocator must not hand a block out during capture that it reuses
 * outside: the graph's kernels keep writing the address on every replay (PyTorch
 * gives each graph a private pool for this).
 *
 * Sections:
 *   graph_mem   per shape k = 1..--shapes (--shape-bytes * k), a graph that
 *               cudaMallocAsync's, fills and cudaFreeAsync's a buffer of that size:
 *               cudaGraphMemAttrReservedMemCurrent / UsedMemCurrent and device used
 *               bytes after each is instantiated and launched.
 *                 graph_per_shape   (bad)   every graph kept
 *                 trim_graphs_alive (probe) then cudaDeviceGraphMemTrim with them alive,
 *                                           and the time of the next launch
 *                 destroy_and_trim  (fixed) each graph destroyed after use, then trim
 *                 one_graph_max     (fixed) one graph of the largest shape for all
 *   auto_free   a graph whose allocation outlives it (an output):
 *                 unfreed_relaunch    (bad)   launched twice without freeing the output
 *                 auto_free_on_launch (fixed) instantiated with the flag
 *   capture     --alloc inside a capture (cudaStreamCaptureModeRelaxed): the graph's
 *               buffer from the allocator, then an allocation outside the graph, and a
 *               replay; corrupted elements of the outside buffer.
 *                 free_in_capture  (bad)   the buffer freed during the capture
 *                 private_block    (fixed) the buffer taken before the capture and kept
 *                                          until the graph is destroyed:
 *                                          held_bytes is what the graph keeps
 *               raw cannot run here (cudaMalloc / cudaFree are not capturable). */
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

#define MiB (UINT64_C(1) << 20)
#define MAX_SHAPES 32

#define COLUMNS                                                                                                 \
    "section,variant,role,status,graphs,shape_bytes,alive_shape_bytes,graph_reserved_bytes,graph_used_bytes,"    \
    "device_used_bytes,launch_ms,reused,corrupted_elements,held_bytes,error"

typedef struct gx {
    vl_program *p;
    cudaStream_t s;
    int ordinal;
    int64_t used0; /* device used bytes at the start of a section */
} gx;

static uint64_t graph_attr(gx *x, enum cudaGraphMemAttributeType a)
{
    uint64_t v = 0;
    VL_CUDA_CHECK(cudaDeviceGetGraphMemAttribute(x->ordinal, a, &v));
    return v;
}

static int64_t used_delta(gx *x) { return vl_gpu_used_when_idle(x->ordinal) - x->used0; }

static void section_start(gx *x)
{
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    VL_CUDA_CHECK(cudaDeviceGraphMemTrim(x->ordinal));
    x->used0 = 0;
    x->used0 = used_delta(x);
}

/* Captures: cudaMallocAsync(bytes), fill, and (free_inside) cudaFreeAsync. */
static cudaGraphExec_t capture_alloc_graph(gx *x, size_t bytes, int free_inside, unsigned long long flags, void **out)
{
    cudaGraph_t g;
    cudaGraphExec_t e;
    void *buf = NULL;
    VL_CUDA_CHECK(cudaStreamBeginCapture(x->s, cudaStreamCaptureModeThreadLocal));
    VL_CUDA_CHECK(cudaMallocAsync(&buf, bytes, x->s));
    vl_fill_u32(buf, bytes / 4, 7, x->s);
    if (free_inside) VL_CUDA_CHECK(cudaFreeAsync(buf, x->s));
    VL_CUDA_CHECK(cudaStreamEndCapture(x->s, &g));
    VL_CUDA_CHECK(cudaGraphInstantiate(&e, g, flags));
    VL_CUDA_CHECK(cudaGraphDestroy(g));
    if (out) *out = buf;
    return e;
}

static double launch_ms(gx *x, cudaGraphExec_t e)
{
    uint64_t t0 = vl_now_ns();
    VL_CUDA_CHECK(cudaGraphLaunch(e, x->s));
    VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
    return (double)(vl_now_ns() - t0) / 1e6;
}

/* alive: the sum of the shapes of the graphs alive now (what they would hold without
 * sharing physical memory; the driver may share it between graphs that never run at
 * the same time). */
static void mem_row(gx *x, const char *variant, const char *role, int graphs, size_t bytes, size_t alive, double ms)
{
    vl_csv_row(x->p->csv, "graph_mem,%s,%s,ok,%d,%zu,%zu,%llu,%llu,%lld,%.3f,,,,", variant, role, graphs, bytes, alive,
               (unsigned long long)graph_attr(x, cudaGraphMemAttrReservedMemCurrent),
               (unsigned long long)graph_attr(x, cudaGraphMemAttrUsedMemCurrent), (long long)used_delta(x), ms);
}

static void graph_mem_section(gx *x, int shapes, size_t base)
{
    cudaGraphExec_t e[MAX_SHAPES] = {0};
    section_start(x);
    size_t alive = 0;
    for (int k = 0; k < shapes; k++) {
        e[k] = capture_alloc_graph(x, base * (size_t)(k + 1), 1, 0, NULL);
        alive += base * (size_t)(k + 1);
        double ms = launch_ms(x, e[k]);
        mem_row(x, "graph_per_shape", "bad", k + 1, base * (size_t)(k + 1), alive, ms);
    }
    VL_CUDA_CHECK(cudaDeviceGraphMemTrim(x->ordinal));
    mem_row(x, "trim_graphs_alive", "probe", shapes, base * (size_t)shapes, alive, 0);
    double ms = launch_ms(x, e[shapes - 1]);
    mem_row(x, "trim_graphs_alive", "probe", shapes, base * (size_t)shapes, alive, ms);
    for (int k = 0; k < shapes; k++) VL_CUDA_CHECK(cudaGraphExecDestroy(e[k]));

    section_start(x);
    for (int k = 0; k < shapes; k++) {
        cudaGraphExec_t one = capture_alloc_graph(x, base * (size_t)(k + 1), 1, 0, NULL);
        double t = launch_ms(x, one);
        VL_CUDA_CHECK(cudaGraphExecDestroy(one));
        VL_CUDA_CHECK(cudaDeviceGraphMemTrim(x->ordinal));
        mem_row(x, "destroy_and_trim", "fixed", k + 1, base * (size_t)(k + 1), 0, t);
    }

    section_start(x);
    cudaGraphExec_t big = capture_alloc_graph(x, base * (size_t)shapes, 1, 0, NULL);
    for (int k = 0; k < shapes; k++)
        mem_row(x, "one_graph_max", "fixed", k + 1, base * (size_t)shapes, base * (size_t)shapes, launch_ms(x, big));
    VL_CUDA_CHECK(cudaGraphExecDestroy(big));
    VL_CUDA_CHECK(cudaDeviceGraphMemTrim(x->ordinal));
}

static void auto_free_section(gx *x, size_t bytes)
{
    for (int v = 0; v < 2; v++) {
        const char *variant = v ? "auto_free_on_launch" : "unfreed_relaunch", *role = v ? "fixed" : "bad";
        section_start(x);
        void *out = NULL;
        cudaGraphExec_t e = capture_alloc_graph(x, bytes, 0, v ? cudaGraphInstantiateFlagAutoFreeOnLaunch : 0, &out);
        launch_ms(x, e);
        uint64_t t0 = vl_now_ns();
        cudaError_t err = cudaGraphLaunch(e, x->s); /* the first launch's output was never freed */
        if (err == cudaSuccess) err = cudaStreamSynchronize(x->s);
        double ms = (double)(vl_now_ns() - t0) / 1e6;
        (void)cudaGetLastError();
        vl_csv_row(x->p->csv, "auto_free,%s,%s,%s,1,%zu,%zu,%llu,%llu,%lld,%.3f,,,,%s", variant, role,
                   err == cudaSuccess ? "ok" : "error", bytes, bytes,
                   (unsigned long long)graph_attr(x, cudaGraphMemAttrReservedMemCurrent),
                   (unsigned long long)graph_attr(x, cudaGraphMemAttrUsedMemCurrent), (long long)used_delta(x), ms,
                   err == cudaSuccess ? "" : cudaGetErrorName(err));
        VL_CUDA_CHECK(cudaFreeAsync(out, x->s)); /* the output of the last successful launch */
        VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
        VL_CUDA_CHECK(cudaGraphExecDestroy(e));
        VL_CUDA_CHECK(cudaDeviceGraphMemTrim(x->ordinal));
    }
}

static void capture_section(gx *x, size_t bytes)
{
    vl_allocator *al = x->p->alloc;
    vl_stream s = (vl_stream)x->s;
    const char *refusal = vl_alloc_capture_refusal(al, &x->p->cli.alloc);
    if (refusal) {
        vl_csv_row(x->p->csv, "capture,free_in_capture,bad,not_applicable,1,%zu,,,,,,,,,%s", bytes, refusal);
        return;
    }
    size_t n = bytes / 4;
    unsigned long long *d_count;
    VL_CUDA_CHECK(cudaMalloc((void **)&d_count, sizeof *d_count));
    for (int v = 0; v < 2; v++) {
        const char *variant = v ? "private_block" : "free_in_capture", *role = v ? "fixed" : "bad";
        /* Warm the cache: a block of this size is free in it before the capture. */
        void *warm = vl_allocate(al, bytes, s);
        if (warm) vl_deallocate(al, warm, bytes, s);
        VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
        cudaGraph_t g;
        cudaGraphExec_t e;
        /* fixed: the graph's block is taken before the capture and kept for its life. */
        uint32_t *buf = v ? vl_allocate(al, bytes, s) : NULL;
        VL_CUDA_CHECK(cudaStreamBeginCapture(x->s, cudaStreamCaptureModeRelaxed));
        if (!v) buf = vl_allocate(al, bytes, s);
        if (buf) {
            vl_fill_u32(buf, n, 0xdeadu, x->s);
            if (!v) vl_deallocate(al, buf, bytes, s);
        }
        cudaError_t err = cudaStreamEndCapture(x->s, &g);
        if (!buf || err != cudaSuccess) {
            (void)cudaGetLastError();
            if (err == cudaSuccess) VL_CUDA_CHECK(cudaGraphDestroy(g));
            vl_csv_row(x->p->csv, "capture,%s,%s,error,1,%zu,,,,,,,,,%s", variant, role, bytes,
                       !buf ? "allocation in capture failed" : cudaGetErrorName(err));
            if (buf && v) vl_deallocate(al, buf, bytes, s);
            continue;
        }
        VL_CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
        VL_CUDA_CHECK(cudaGraphDestroy(g));
        VL_CUDA_CHECK(cudaGraphLaunch(e, x->s));
        VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
        vl_alloc_stats st;
        vl_alloc_stats_get(al, &st);
        int64_t held = v ? st.allocated_bytes : 0;
        /* Outside the graph: someone else's buffer, then a replay. */
        uint32_t *other = vl_allocate(al, bytes, s);
        unsigned long long bad = 0;
        int reused = 0;
        if (other) {
            reused = (uintptr_t)other == (uintptr_t)buf;
            vl_fill_iota_u32(other, n, 4242u, x->s);
            VL_CUDA_CHECK(cudaGraphLaunch(e, x->s));
            VL_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof *d_count, x->s));
            vl_count_mismatch_u32(other, n, 4242u, 1, d_count, x->s);
            VL_CUDA_CHECK(cudaMemcpyAsync(&bad, d_count, sizeof bad, cudaMemcpyDeviceToHost, x->s));
            VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
            vl_deallocate(al, other, bytes, s);
        }
        VL_CUDA_CHECK(cudaGraphExecDestroy(e));
        if (v) vl_deallocate(al, buf, bytes, s);
        VL_CUDA_CHECK(cudaStreamSynchronize(x->s));
        vl_csv_row(x->p->csv, "capture,%s,%s,%s,1,%zu,,%llu,%llu,,,%d,%llu,%lld,", variant, role, other ? "ok" : "oom",
                   bytes, (unsigned long long)graph_attr(x, cudaGraphMemAttrReservedMemCurrent),
                   (unsigned long long)graph_attr(x, cudaGraphMemAttrUsedMemCurrent), reused, bad, (long long)held);
        vl_trim(al);
    }
    VL_CUDA_CHECK(cudaFree(d_count));
    VL_CUDA_CHECK(cudaDeviceGraphMemTrim(x->ordinal));
}

int main(int argc, char **argv)
{
    int64_t shapes = 8;
    uint64_t shape_bytes = 64 * MiB;
    const vl_cli_opt opts[] = {
        {"shapes", VL_CLI_INT, &shapes, "graphs captured, one per shape", 1, MAX_SHAPES, VL_QUICK_AT_MOST, "4"},
        {"shape-bytes", VL_CLI_SIZE, &shape_bytes, "buffer of shape k is k times this (capped by free memory)", 1 << 20,
         0x1p36, VL_QUICK_AT_MOST, "16MiB"},
        {NULL, 0, NULL, NULL, 0, 0},
    };
    const vl_program_def def = {
        .summary = "memory held by CUDA graphs: one graph per shape, trim, destroy, auto-free-on-launch, and a "
                   "caching allocator used inside a stream capture",
        .default_alloc = "caching",
        .needs_cuda = 1,
        .options = opts,
    };
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    gx x = {.p = &p, .ordinal = p.dev->ordinal};
    /* The kept graphs of all shapes together hold about shapes^2/2 * shape_bytes: keep
     * that under a quarter of free memory. */
    while (shapes > 1 && (uint64_t)(shapes * (shapes + 1) / 2) * shape_bytes > p.free_at_start / 4) shape_bytes /= 2;
    shape_bytes &= ~(uint64_t)(MiB - 1);
    if (shape_bytes < MiB) shape_bytes = MiB;
    VL_CUDA_CHECK(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking));

    vl_csv_meta(p.csv, "scenario", "graph_pool: graph memory per shape, trim, auto-free, allocator in capture");
    vl_csv_meta(p.csv, "graph_reserved_bytes", "cudaGraphMemAttrReservedMemCurrent (graph_used: UsedMemCurrent)");
    vl_csv_meta(p.csv, "device_used_bytes", "device used (total - free) minus at the start of the section");
    vl_csv_meta(p.csv, "held_bytes", "capture rows: allocator's allocated bytes while the graph lives");
    vl_csv_header(p.csv, COLUMNS);
    graph_mem_section(&x, (int)shapes, shape_bytes);
    auto_free_section(&x, shape_bytes);
    capture_section(&x, shape_bytes);

    vl_program_close_alloc(&p); /* before the stream its blocks were used on */
    VL_CUDA_CHECK(cudaStreamDestroy(x.s));
    return vl_program_finish(&p);
}
