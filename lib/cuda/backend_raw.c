/* --alloc raw: cudaMalloc / cudaFree, no caching. cudaFree synchronises the device
 * (measured: it blocks for as long as a kernel on another stream runs), so a block
 * freed while another stream still uses it is safe here, at the cost of a stall. */
#include <cuda_runtime.h>
#include <stdlib.h>

#include "alloc.h"
#include "cuda/gpu.h"

static const vl_opt raw_options[] = {{NULL}};

/* No state: requested bytes, calls and OOMs are the statistics adaptor's (alloc.h). */
static int raw_open(vl_allocator *a, const vl_spec *spec, char *err, size_t errlen)
{
    (void)a, (void)spec, (void)err, (void)errlen;
    return 0;
}

/* cudaMalloc; NULL when out of memory. */
static void *device_malloc(size_t size)
{
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky: clear it so later calls do not see it */
        return NULL;
    }
    VL_CUDA_CHECK(err);
    return p;
}

static void *raw_alloc(vl_allocator *a, size_t size, vl_stream s)
{
    (void)a, (void)s;
    return size ? device_malloc(size) : NULL;
}

static void raw_free(vl_allocator *a, void *p, size_t size, vl_stream s)
{
    (void)a, (void)size, (void)s;
    if (!p) return;
    VL_CUDA_CHECK(cudaFree(p));
}

/* Nothing to record: cudaFree waits for all work on the device before it frees. */
static int raw_record_use(vl_allocator *a, void *p, vl_stream s)
{
    (void)a, (void)p, (void)s;
    return VL_OK;
}

/* out already holds the adaptor's calls (allocs, frees). */
static void raw_stats(vl_allocator *a, vl_alloc_stats *out)
{
    (void)a;
    /* What the driver rounds each cudaMalloc up to is not visible: allocated and
     * reserved stay unknown; programs read device-wide usage with cudaMemGetInfo. */
    out->segments = out->allocs - out->frees;
    out->device_allocs = out->allocs;
    out->device_frees = out->frees;
    out->alloc_retries = 0;
}

/* One attempt of the OOM report's probe: cudaMalloc, freed at once. */
static int raw_probe_fits(void *ctx, size_t bytes)
{
    (void)ctx;
    void *p = device_malloc(bytes);
    if (p) VL_CUDA_CHECK(cudaFree(p));
    return p != NULL;
}

/* Nothing is cached: the largest block is what cudaMalloc gives, found by the bounded
 * probe, and releasing a cache changes nothing. */
static void raw_oom_report(vl_allocator *a, size_t size, vl_stream s, vl_oom_report *r)
{
    (void)a, (void)s;
    r->cached_free_bytes = 0;
    r->releasable_bytes = 0;
    if (r->device_free_bytes < 0) return;
    vl_oom_report_probe(r, (size_t)r->device_free_bytes, raw_probe_fits, NULL);
    r->largest_after_release_bytes = r->largest_block_bytes;
    if ((int64_t)size <= r->largest_block_bytes) r->fits_after_release = 1;
    else if ((int64_t)size >= r->largest_block_bytes + r->probe_resolution_bytes) r->fits_after_release = 0;
    r->fits_after_release_basis = "no cache to release: the probe's answer";
}

static void raw_close(vl_allocator *a) { (void)a; }

static const char *raw_capture_refusal(const vl_spec *spec)
{
    (void)spec;
    return "cudaMalloc/cudaFree are not capturable";
}

const vl_alloc_backend vl_backend_raw = {
    .name = "raw",
    .summary = "cudaMalloc / cudaFree for every request, no caching",
    .options = raw_options,
    .needs_cuda = 1,
    .open = raw_open,
    .alloc = raw_alloc,
    .free = raw_free,
    .record_use = raw_record_use,
    .get_stats = raw_stats,
    .oom_report = raw_oom_report,
    .close = raw_close,
    .capture_refusal = raw_capture_refusal,
};
