/* --alloc async: cudaMallocAsync / cudaFreeAsync on the device's default memory pool
 * or on a private one, with the pool's release threshold and its three reuse
 * policies settable. record_use(p, s) records an event on s; the free of p then makes
 * its stream wait for that event, which is the documented remedy for freeing memory
 * that another stream still uses (cudaFreeAsync orders the free on its own stream only). */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cuda/gpu.h"

static const vl_opt async_options[] = {
    {.name = "pool", .kind = VL_OPT_ENUM, .default_value = "default", .choices = "default|private",
     .help = "the device's default pool, or a pool of our own"},
    {.name = "release_threshold", .kind = VL_OPT_SIZE, .help = "bytes the pool keeps at a sync (driver default: 0)"},
    {.name = "follow_events", .kind = VL_OPT_BOOL,
     .help = "cudaMemPoolReuseFollowEventDependencies (driver default: 1)"},
    {.name = "opportunistic", .kind = VL_OPT_BOOL, .help = "cudaMemPoolReuseAllowOpportunistic (driver default: 1)"},
    {.name = "internal_deps", .kind = VL_OPT_BOOL,
     .help = "cudaMemPoolReuseAllowInternalDependencies (driver default: 1)"},
    {NULL},
};

/* Pool attributes this backend may set; the default pool's are restored at close. */
static const struct {
    const char *key;
    enum cudaMemPoolAttr attr;
    int is_size; /* uint64 attribute (threshold) vs int */
} settable[] = {
    {"release_threshold", cudaMemPoolAttrReleaseThreshold, 1},
    {"follow_events", cudaMemPoolReuseFollowEventDependencies, 0},
    {"opportunistic", cudaMemPoolReuseAllowOpportunistic, 0},
    {"internal_deps", cudaMemPoolReuseAllowInternalDependencies, 0},
};
#define NSETTABLE (sizeof settable / sizeof settable[0])

typedef struct pending_use {
    void *ptr;
    cudaEvent_t event;
} pending_use;

typedef struct async_state {
    cudaMemPool_t pool;
    int private_pool;
    uint64_t saved[NSETTABLE];
    int changed[NSETTABLE];
    pthread_mutex_t uses_lock; /* guards uses: rare path (record_use), never taken when empty */
    pending_use *uses;
    size_t nuses, cap_uses;
} async_state;

static int async_open(vl_allocator *a, const vl_spec *spec, char *err, size_t errlen)
{
    async_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    pthread_mutex_init(&st->uses_lock, NULL);
    int dev = a->dev->ordinal;
    int supported = 0;
    VL_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev));
    if (!supported) {
        snprintf(err, errlen, "this device does not support cudaMallocAsync pools");
        free(st);
        return -1;
    }
    st->private_pool = vl_spec_choice(spec, "pool") == 1;
    if (st->private_pool) {
        struct cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        VL_CUDA_CHECK(cudaMemPoolCreate(&st->pool, &props));
    } else {
        VL_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&st->pool, dev));
    }
    for (size_t i = 0; i < NSETTABLE; i++) {
        if (!vl_spec_given(spec, settable[i].key)) continue;
        if (settable[i].is_size) {
            uint64_t old, v = vl_spec_size(spec, settable[i].key);
            VL_CUDA_CHECK(cudaMemPoolGetAttribute(st->pool, settable[i].attr, &old));
            VL_CUDA_CHECK(cudaMemPoolSetAttribute(st->pool, settable[i].attr, &v));
            st->saved[i] = old;
        } else {
            int old, v = vl_spec_bool(spec, settable[i].key);
            VL_CUDA_CHECK(cudaMemPoolGetAttribute(st->pool, settable[i].attr, &old));
            VL_CUDA_CHECK(cudaMemPoolSetAttribute(st->pool, settable[i].attr, &v));
            st->saved[i] = (uint64_t)old;
        }
        st->changed[i] = 1;
    }
    a->impl = st;
    return 0;
}

/* cudaMallocFromPoolAsync; NULL when out of memory. */
static void *pool_malloc(cudaMemPool_t pool, size_t size, cudaStream_t s)
{
    void *p = NULL;
    cudaError_t err = cudaMallocFromPoolAsync(&p, size, pool, s);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return NULL;
    }
    VL_CUDA_CHECK(err);
    return p;
}

static void *async_alloc(vl_allocator *a, size_t size, vl_stream s)
{
    async_state *st = a->impl;
    return size ? pool_malloc(st->pool, size, (cudaStream_t)s) : NULL;
}

/* Makes stream s wait for every use recorded for p, and forgets those uses. */
static void wait_for_uses(async_state *st, void *p, cudaStream_t s)
{
    pthread_mutex_lock(&st->uses_lock);
    for (size_t i = 0; i < st->nuses;) {
        if (st->uses[i].ptr == p) {
            VL_CUDA_CHECK(cudaStreamWaitEvent(s, st->uses[i].event, 0));
            VL_CUDA_CHECK(cudaEventDestroy(st->uses[i].event));
            st->uses[i] = st->uses[st->nuses - 1];
            __atomic_store_n(&st->nuses, st->nuses - 1, __ATOMIC_RELEASE);
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&st->uses_lock);
}

static void async_free(vl_allocator *a, void *p, size_t size, vl_stream s)
{
    (void)size;
    async_state *st = a->impl;
    if (!p) return;
    if (__atomic_load_n(&st->nuses, __ATOMIC_ACQUIRE)) wait_for_uses(st, p, (cudaStream_t)s);
    VL_CUDA_CHECK(cudaFreeAsync(p, (cudaStream_t)s));
}

static int async_record_use(vl_allocator *a, void *p, vl_stream s)
{
    async_state *st = a->impl;
    cudaEvent_t ev;
    VL_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    VL_CUDA_CHECK(cudaEventRecord(ev, (cudaStream_t)s));
    pthread_mutex_lock(&st->uses_lock);
    if (st->nuses == st->cap_uses) {
        size_t cap = st->cap_uses ? st->cap_uses * 2 : 16;
        pending_use *grown = realloc(st->uses, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&st->uses_lock);
            VL_CUDA_CHECK(cudaEventSynchronize(ev)); /* no room to defer: wait now instead */
            VL_CUDA_CHECK(cudaEventDestroy(ev));
            return VL_OK;
        }
        st->uses = grown;
        st->cap_uses = cap;
    }
    st->uses[st->nuses] = (pending_use){p, ev};
    __atomic_store_n(&st->nuses, st->nuses + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&st->uses_lock);
    return VL_OK;
}

static uint64_t pool_attr(cudaMemPool_t pool, enum cudaMemPoolAttr attr)
{
    uint64_t v = 0;
    VL_CUDA_CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
    return v;
}

/* empty_cache for a pool: wait for pending frees, then give back all unused memory. */
static size_t async_trim(vl_allocator *a)
{
    async_state *st = a->impl;
    uint64_t before = pool_attr(st->pool, cudaMemPoolAttrReservedMemCurrent);
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    VL_CUDA_CHECK(cudaMemPoolTrimTo(st->pool, 0));
    uint64_t after = pool_attr(st->pool, cudaMemPoolAttrReservedMemCurrent);
    return before > after ? (size_t)(before - after) : 0;
}

static void async_stats(vl_allocator *a, vl_alloc_stats *out)
{
    async_state *st = a->impl;
    /* The pool's own counters: memory handed out (with the pool's rounding) and held. */
    out->allocated_bytes = (int64_t)pool_attr(st->pool, cudaMemPoolAttrUsedMemCurrent);
    out->peak_allocated_bytes = (int64_t)pool_attr(st->pool, cudaMemPoolAttrUsedMemHigh);
    out->reserved_bytes = (int64_t)pool_attr(st->pool, cudaMemPoolAttrReservedMemCurrent);
    out->peak_reserved_bytes = (int64_t)pool_attr(st->pool, cudaMemPoolAttrReservedMemHigh);
}

static void async_reset_peaks(vl_allocator *a)
{
    async_state *st = a->impl;
    uint64_t zero = 0; /* setting a high-water mark to 0 resets it to the current value */
    VL_CUDA_CHECK(cudaMemPoolSetAttribute(st->pool, cudaMemPoolAttrUsedMemHigh, &zero));
    VL_CUDA_CHECK(cudaMemPoolSetAttribute(st->pool, cudaMemPoolAttrReservedMemHigh, &zero));
}

typedef struct pool_probe {
    cudaMemPool_t pool;
    cudaStream_t stream;
} pool_probe;

/* One attempt of the OOM report's probe: an allocation from the pool, freed at once on
 * the same stream (the caller synchronizes once the probe is done). */
static int async_probe_fits(void *ctx, size_t bytes)
{
    pool_probe *pp = ctx;
    void *p = pool_malloc(pp->pool, bytes, pp->stream);
    if (p) VL_CUDA_CHECK(cudaFreeAsync(p, pp->stream));
    return p != NULL;
}

/* The pool's unused memory is its cache. The probe allocates from the pool itself, so
 * it counts what the pool could serve from that cache and from the device; afterwards
 * the pool is trimmed back to what it held before (the probe's growth given back).
 * Whether a trim would make the request fit is not tried: the pool releases only
 * whole physical allocations it holds unused, which is not visible. */
static void async_oom_report(vl_allocator *a, size_t size, vl_stream s, vl_oom_report *r)
{
    async_state *st = a->impl;
    uint64_t reserved = pool_attr(st->pool, cudaMemPoolAttrReservedMemCurrent);
    uint64_t used = pool_attr(st->pool, cudaMemPoolAttrUsedMemCurrent);
    uint64_t unused = reserved > used ? reserved - used : 0;
    r->cached_free_bytes = (int64_t)unused;
    if (r->device_free_bytes < 0) return;
    pool_probe pp = {st->pool, (cudaStream_t)s};
    vl_oom_report_probe(r, (size_t)r->device_free_bytes + unused, async_probe_fits, &pp);
    VL_CUDA_CHECK(cudaStreamSynchronize(pp.stream));
    VL_CUDA_CHECK(cudaMemPoolTrimTo(st->pool, reserved));
    if ((int64_t)size <= r->largest_block_bytes) {
        r->fits_after_release = 1;
        r->fits_after_release_basis = "fits now: the probe's answer";
    } else if ((int64_t)size > r->device_free_bytes + (int64_t)unused) {
        r->fits_after_release = 0;
        r->fits_after_release_basis = "more than device free + everything the pool holds unused";
    } else {
        r->fits_after_release_basis = "what a trim would give back is not visible; not released to find out";
    }
}

static void async_close(vl_allocator *a)
{
    async_state *st = a->impl;
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    for (size_t i = 0; i < st->nuses; i++) VL_CUDA_CHECK(cudaEventDestroy(st->uses[i].event));
    free(st->uses);
    if (st->private_pool) {
        VL_CUDA_CHECK(cudaMemPoolDestroy(st->pool));
    } else {
        VL_CUDA_CHECK(cudaMemPoolTrimTo(st->pool, 0));
        for (size_t i = 0; i < NSETTABLE; i++) {
            if (!st->changed[i]) continue;
            if (settable[i].is_size) {
                VL_CUDA_CHECK(cudaMemPoolSetAttribute(st->pool, settable[i].attr, &st->saved[i]));
            } else {
                int v = (int)st->saved[i];
                VL_CUDA_CHECK(cudaMemPoolSetAttribute(st->pool, settable[i].attr, &v));
            }
        }
    }
    pthread_mutex_destroy(&st->uses_lock);
    free(st);
}

const vl_alloc_backend vl_backend_async = {
    .name = "async",
    .summary = "cudaMallocAsync / cudaFreeAsync on a stream-ordered memory pool",
    .options = async_options,
    .needs_cuda = 1,
    .open = async_open,
    .alloc = async_alloc,
    .free = async_free,
    .record_use = async_record_use,
    .trim = async_trim,
    .get_stats = async_stats,
    .reset_peaks = async_reset_peaks,
    .oom_report = async_oom_report,
    .close = async_close,
};
