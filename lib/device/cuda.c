/* The `cuda` vl_device: a real GPU through the CUDA runtime, plus the driver's
 * virtual-memory API (cuMemAddressReserve / cuMemCreate / cuMemMap / ...) for
 * expandable segments.
 *
 * No program links libcuda: the driver's VMM functions are looked up at run time
 * through the (statically linked) runtime's cudaGetDriverEntryPointByVersion, so a
 * program starts, and exits 77, on a machine without a driver.
 *
 * Device selection: open makes the device current on the calling thread (programs
 * then launch their kernels on it). Every op that creates something on the device
 * makes the device current for the call and restores the caller's device after:
 * an allocator serving several GPUs from one thread (the PyTorch plugin) must not
 * move the caller's current device. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gpu.h"
#include "device.h"
#include "exitcodes.h"

const vl_opt vl_device_cuda_options[] = {
    {.name = "device", .kind = VL_OPT_INT, .default_value = "0", .help = "CUDA device ordinal (cuda:N is short for cuda:device=N)", .positional = 1},
    {.name = "vmm", .kind = VL_OPT_BOOL, .default_value = "1",
     .help = "use the driver's virtual-memory API where the GPU supports it (0: report it unsupported)"},
    {.name = NULL},
};

/* --- driver entry points (resolved once per process) ------------------------------ */

/* The driver functions used, each with the version in the name of its PFN_ typedef
 * (cudaTypedefs.h): one list for the table's fields, their lookup and the check that
 * all were found, so a function is added in one place. */
#define VL_DRIVER_FUNCTIONS(X)                                                             \
    X(cuDeviceGet, 2000)                                                                   \
    X(cuDeviceGetAttribute, 2000)                                                          \
    X(cuMemGetAllocationGranularity, 10020)                                                \
    X(cuMemAddressReserve, 10020)                                                          \
    X(cuMemAddressFree, 10020)                                                             \
    X(cuMemCreate, 10020)                                                                  \
    X(cuMemRelease, 10020)                                                                 \
    X(cuMemMap, 10020)                                                                     \
    X(cuMemUnmap, 10020)                                                                   \
    X(cuMemRetainAllocationHandle, 11000)                                                  \
    X(cuMemSetAccess, 10020)                                                               \
    X(cuGetErrorName, 6000)

typedef struct vl_driver_api {
    int resolved; /* 1: every pointer below is non-NULL */
#define VL_DRIVER_FIELD(name, version) PFN_##name##_v##version name;
    VL_DRIVER_FUNCTIONS(VL_DRIVER_FIELD)
#undef VL_DRIVER_FIELD
} vl_driver_api;

static vl_driver_api driver_api;
static pthread_once_t driver_api_once = PTHREAD_ONCE_INIT;

/* The ABI version we ask for: the VMM calls have kept their 10.2 signatures. */
#define VL_DRIVER_ABI_VERSION 12000

static void *driver_symbol(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    cudaError_t err = cudaGetDriverEntryPointByVersion(name, &fn, VL_DRIVER_ABI_VERSION,
                                                       cudaEnableDefault, &found);
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return fn;
}

static void resolve_driver_api(void)
{
    vl_driver_api *a = &driver_api;
    int all = 1; /* every one is looked up, found or not */
#define VL_DRIVER_LOOKUP(name, version)                    \
    a->name = (PFN_##name##_v##version)driver_symbol(#name); \
    all = all && a->name;
    VL_DRIVER_FUNCTIONS(VL_DRIVER_LOOKUP)
#undef VL_DRIVER_LOOKUP
    a->resolved = all;
}

static const char *driver_error_name(CUresult r)
{
    const char *name = NULL;
    if (driver_api.cuGetErrorName == NULL || driver_api.cuGetErrorName(r, &name) != CUDA_SUCCESS ||
        name == NULL)
        return "CUDA_ERROR_UNKNOWN";
    return name;
}

/* --- the device's private state ------------------------------------------------------- */

/* Events are recorded on every cross-stream free; creating one each time costs a
 * driver call, so released events go back to a pool. Invariant: every event in
 * pool[0..npool) was created on this device with cudaEventDisableTiming and is not
 * in use by any caller. */
typedef struct cuda_impl {
    int ordinal;
    CUdevice cu_device;
    int vmm;                      /* VMM usable: supported by the GPU, entry points found, enabled */
    CUmemAllocationProp prop;     /* pinned device memory on this device */
    CUmemAccessDesc access;       /* read-write from this device */
    pthread_mutex_t pool_lock;
    cudaEvent_t *pool;
    size_t npool, pool_cap;
} cuda_impl;

static cuda_impl *impl_of(vl_device *d) { return (cuda_impl *)d->impl; }

static int runtime_failure(const char *call, cudaError_t err);

/* Makes the device current for one op. Returns the caller's device to restore, -1 when
 * it did not change (the common case: one GPU), or -2 when the runtime refused (one
 * line printed; the op then fails with VL_DEV_ERROR: the library never exits, it runs
 * inside other programs such as PyTorch). */
#define VL_DEVICE_ENTER_FAILED (-2)
static int device_enter(const cuda_impl *c)
{
    int current = -1;
    cudaError_t err = cudaGetDevice(&current);
    if (err != cudaSuccess) {
        runtime_failure("cudaGetDevice", err);
        (void)cudaGetLastError();
        return VL_DEVICE_ENTER_FAILED;
    }
    if (current == c->ordinal) return -1;
    err = cudaSetDevice(c->ordinal);
    if (err != cudaSuccess) {
        runtime_failure("cudaSetDevice", err);
        (void)cudaGetLastError();
        return VL_DEVICE_ENTER_FAILED;
    }
    return current;
}

/* Gives the caller its device back. A refusal is reported (one line), not returned: the
 * op itself is done (memory allocated or freed, an event recorded), and reporting it as
 * failed would make the caller undo or repeat it. */
static void device_leave(int previous)
{
    if (previous < 0) return;
    cudaError_t err = cudaSetDevice(previous);
    if (err == cudaSuccess) return;
    runtime_failure("cudaSetDevice (restoring the caller's device)", err);
    (void)cudaGetLastError();
}

static int runtime_failure(const char *call, cudaError_t err)
{
    fprintf(stderr, "device cuda: %s: %s: %s\n", call, cudaGetErrorName(err), cudaGetErrorString(err));
    return VL_DEV_ERROR;
}

static int driver_failure(const char *call, CUresult r)
{
    fprintf(stderr, "device cuda: %s: %s\n", call, driver_error_name(r));
    return VL_DEV_ERROR;
}

/* --- plain allocation ----------------------------------------------------------------- */

static int cuda_mem_alloc(vl_device *d, size_t size, void **out)
{
    *out = NULL;
    int prev = device_enter(impl_of(d));
    if (prev == VL_DEVICE_ENTER_FAILED) return VL_DEV_ERROR;
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, size);
    device_leave(prev);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); /* an OOM is a result: do not leave it as the sticky last error */
        *out = NULL;
        return VL_DEV_OOM;
    }
    if (err != cudaSuccess) return runtime_failure("cudaMalloc", err);
    *out = p;
    return VL_DEV_OK;
}

static int cuda_mem_free(vl_device *d, void *ptr, size_t size)
{
    (void)size;
    if (ptr == NULL) return VL_DEV_OK;
    int prev = device_enter(impl_of(d));
    if (prev == VL_DEVICE_ENTER_FAILED) return VL_DEV_ERROR;
    cudaError_t err = cudaFree(ptr);
    device_leave(prev);
    return err == cudaSuccess ? VL_DEV_OK : runtime_failure("cudaFree", err);
}

/* --- virtual memory ---------------------------------------------------------------------- */

static int cuda_va_reserve(vl_device *d, size_t size, void **out)
{
    cuda_impl *c = impl_of(d);
    if (!c->vmm) return VL_DEV_UNSUPPORTED;
    CUdeviceptr p = 0;
    CUresult r = driver_api.cuMemAddressReserve(&p, size, d->granularity, 0, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return VL_DEV_OOM; /* address space exhausted */
    if (r != CUDA_SUCCESS) return driver_failure("cuMemAddressReserve", r);
    *out = (void *)(uintptr_t)p;
    return VL_DEV_OK;
}

static int cuda_va_release(vl_device *d, void *addr, size_t size)
{
    if (!impl_of(d)->vmm) return VL_DEV_UNSUPPORTED;
    CUresult r = driver_api.cuMemAddressFree((CUdeviceptr)(uintptr_t)addr, size);
    return r == CUDA_SUCCESS ? VL_DEV_OK : driver_failure("cuMemAddressFree", r);
}

/* Maps the physical allocation `handle` at [va, va+size) and makes it accessible. The
 * handle is released once mapped: the driver keeps the memory alive while it is mapped
 * and frees it at unmap, so no table of handles is needed. On failure the handle is
 * still the caller's. */
static int map_handle(cuda_impl *c, CUdeviceptr va, size_t size, CUmemGenericAllocationHandle handle)
{
    CUresult r = driver_api.cuMemMap(va, size, 0, handle, 0);
    if (r != CUDA_SUCCESS) return r == CUDA_ERROR_OUT_OF_MEMORY ? VL_DEV_OOM : driver_failure("cuMemMap", r);
    r = driver_api.cuMemSetAccess(va, size, &c->access, 1);
    if (r != CUDA_SUCCESS) {
        driver_api.cuMemUnmap(va, size);
        return r == CUDA_ERROR_OUT_OF_MEMORY ? VL_DEV_OOM : driver_failure("cuMemSetAccess", r);
    }
    r = driver_api.cuMemRelease(handle); /* drops our reference; the mapping holds its own */
    if (r != CUDA_SUCCESS) {
        driver_api.cuMemUnmap(va, size);
        return driver_failure("cuMemRelease", r);
    }
    return VL_DEV_OK;
}

static int cuda_map(vl_device *d, void *addr, size_t size)
{
    cuda_impl *c = impl_of(d);
    if (!c->vmm) return VL_DEV_UNSUPPORTED;
    CUmemGenericAllocationHandle handle = 0;
    CUresult r = driver_api.cuMemCreate(&handle, size, &c->prop, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return VL_DEV_OOM;
    if (r != CUDA_SUCCESS) return driver_failure("cuMemCreate", r);
    int rc = map_handle(c, (CUdeviceptr)(uintptr_t)addr, size, handle);
    if (rc != VL_DEV_OK) driver_api.cuMemRelease(handle);
    return rc;
}

/* cuMemUnmap does not wait for queued work (cudaFree does): the caller unmaps only
 * what no queued work can still use (device.h). The caching allocator knows that from
 * events recorded on the streams that used the memory, or from a synchronize under
 * memory pressure, on trim and at close (lib/caching/README.md). */
static int cuda_unmap(vl_device *d, void *addr, size_t size)
{
    if (!impl_of(d)->vmm) return VL_DEV_UNSUPPORTED;
    CUresult r = driver_api.cuMemUnmap((CUdeviceptr)(uintptr_t)addr, size);
    return r == CUDA_SUCCESS ? VL_DEV_OK : driver_failure("cuMemUnmap", r);
}

/* Unmaps but keeps the memory: cuMemRetainAllocationHandle takes a reference before
 * the mapping's goes away, so mapping it again later skips cuMemCreate (and the
 * driver's zeroing of fresh memory). */
static int cuda_unmap_keep(vl_device *d, void *addr, size_t size, vl_phys *out)
{
    if (!impl_of(d)->vmm) return VL_DEV_UNSUPPORTED;
    CUmemGenericAllocationHandle handle = 0;
    CUresult r = driver_api.cuMemRetainAllocationHandle(&handle, addr);
    if (r != CUDA_SUCCESS) return driver_failure("cuMemRetainAllocationHandle", r);
    r = driver_api.cuMemUnmap((CUdeviceptr)(uintptr_t)addr, size);
    if (r != CUDA_SUCCESS) {
        driver_api.cuMemRelease(handle);
        return driver_failure("cuMemUnmap", r);
    }
    *out = (vl_phys)(uintptr_t)handle;
    return VL_DEV_OK;
}

static int cuda_map_phys(vl_device *d, void *addr, size_t size, vl_phys phys)
{
    cuda_impl *c = impl_of(d);
    if (!c->vmm) return VL_DEV_UNSUPPORTED;
    return map_handle(c, (CUdeviceptr)(uintptr_t)addr, size, (CUmemGenericAllocationHandle)(uintptr_t)phys);
}

static int cuda_phys_release(vl_device *d, vl_phys phys, size_t size)
{
    (void)size;
    if (!impl_of(d)->vmm) return VL_DEV_UNSUPPORTED;
    CUresult r = driver_api.cuMemRelease((CUmemGenericAllocationHandle)(uintptr_t)phys);
    return r == CUDA_SUCCESS ? VL_DEV_OK : driver_failure("cuMemRelease", r);
}

/* Another reference to the memory mapped at addr, which stays mapped: mapped at a second
 * address by map_phys, it lives until both mappings are gone (the driver counts them). */
static int cuda_phys_share(vl_device *d, void *addr, size_t size, vl_phys *out)
{
    (void)size;
    if (!impl_of(d)->vmm) return VL_DEV_UNSUPPORTED;
    CUmemGenericAllocationHandle handle = 0;
    CUresult r = driver_api.cuMemRetainAllocationHandle(&handle, addr);
    if (r != CUDA_SUCCESS) return driver_failure("cuMemRetainAllocationHandle", r);
    *out = (vl_phys)(uintptr_t)handle;
    return VL_DEV_OK;
}

/* One of two mappings of shared memory: the other keeps the memory, so this is a plain
 * cuMemUnmap (the accounting differs, not the call). */
static int cuda_unmap_shared(vl_device *d, void *addr, size_t size) { return cuda_unmap(d, addr, size); }

/* --- events ------------------------------------------------------------------------------- */

static void cuda_event_release(vl_device *d, vl_event e);

static int cuda_event_record(vl_device *d, vl_stream s, vl_event *out)
{
    cuda_impl *c = impl_of(d);
    cudaEvent_t e = NULL;
    pthread_mutex_lock(&c->pool_lock);
    if (c->npool > 0) e = c->pool[--c->npool];
    pthread_mutex_unlock(&c->pool_lock);

    int prev = device_enter(c);
    if (prev == VL_DEVICE_ENTER_FAILED) {
        if (e != NULL) cuda_event_release(d, (vl_event)e);
        return VL_DEV_ERROR;
    }
    cudaError_t err = cudaSuccess;
    if (e == NULL) err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (err == cudaSuccess) {
        err = cudaEventRecord(e, (cudaStream_t)s);
        if (err != cudaSuccess) (void)cudaEventDestroy(e);
    }
    device_leave(prev);
    if (err != cudaSuccess) return runtime_failure("cudaEventRecord", err);
    *out = (vl_event)e;
    return VL_DEV_OK;
}

static int cuda_event_query(vl_device *d, vl_event e)
{
    (void)d;
    cudaError_t err = cudaEventQuery((cudaEvent_t)e);
    if (err == cudaSuccess) return 1;
    if (err == cudaErrorNotReady) return 0;
    runtime_failure("cudaEventQuery", err);
    return -1;
}

static void cuda_event_release(vl_device *d, vl_event e)
{
    cuda_impl *c = impl_of(d);
    if (e == NULL) return;
    pthread_mutex_lock(&c->pool_lock);
    if (c->npool == c->pool_cap) {
        size_t cap = c->pool_cap ? c->pool_cap * 2 : 64;
        cudaEvent_t *grown = realloc(c->pool, cap * sizeof *grown);
        if (grown != NULL) {
            c->pool = grown;
            c->pool_cap = cap;
        }
    }
    int pooled = c->npool < c->pool_cap;
    if (pooled) c->pool[c->npool++] = (cudaEvent_t)e;
    pthread_mutex_unlock(&c->pool_lock);
    if (pooled) return;
    /* Out of host memory for the pool: destroy it. A failure is only reported: the event
     * is gone either way, and releasing has no result to give. */
    cudaError_t err = cudaEventDestroy((cudaEvent_t)e);
    if (err != cudaSuccess) {
        runtime_failure("cudaEventDestroy", err);
        (void)cudaGetLastError();
    }
}

/* --- the rest -------------------------------------------------------------------------------- */

static int cuda_synchronize(vl_device *d)
{
    int prev = device_enter(impl_of(d));
    if (prev == VL_DEVICE_ENTER_FAILED) return VL_DEV_ERROR;
    cudaError_t err = cudaDeviceSynchronize();
    device_leave(prev);
    return err == cudaSuccess ? VL_DEV_OK : runtime_failure("cudaDeviceSynchronize", err);
}

static int cuda_mem_info(vl_device *d, size_t *free_bytes, size_t *total_bytes)
{
    int prev = device_enter(impl_of(d));
    if (prev == VL_DEVICE_ENTER_FAILED) return VL_DEV_ERROR;
    cudaError_t err = cudaMemGetInfo(free_bytes, total_bytes);
    device_leave(prev);
    return err == cudaSuccess ? VL_DEV_OK : runtime_failure("cudaMemGetInfo", err);
}

static void cuda_close(vl_device *d)
{
    if (d == NULL) return;
    cuda_impl *c = impl_of(d);
    if (c != NULL) {
        /* Failures are reported and the rest still destroyed: close has no result. */
        int prev = device_enter(c);
        for (size_t i = 0; i < c->npool; i++) {
            cudaError_t err = cudaEventDestroy(c->pool[i]);
            if (err != cudaSuccess) runtime_failure("cudaEventDestroy at close", err);
        }
        if (prev != VL_DEVICE_ENTER_FAILED) device_leave(prev);
        free(c->pool);
        pthread_mutex_destroy(&c->pool_lock);
        free(c);
    }
    free(d);
}

static const vl_device_ops cuda_ops = {
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .va_reserve = cuda_va_reserve,
    .va_release = cuda_va_release,
    .map = cuda_map,
    .unmap = cuda_unmap,
    .unmap_keep = cuda_unmap_keep,
    .map_phys = cuda_map_phys,
    .phys_release = cuda_phys_release,
    .phys_share = cuda_phys_share,
    .unmap_shared = cuda_unmap_shared,
    .event_record = cuda_event_record,
    .event_query = cuda_event_query,
    .event_release = cuda_event_release,
    .synchronize = cuda_synchronize,
    .mem_info = cuda_mem_info,
    .close = cuda_close,
};

/* --- open -------------------------------------------------------------------------------------- */

static void format_version(char *buf, size_t len, int v)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* The driver's version as nvidia-smi gives it, from the kernel module: the text of
 * /sys/module/nvidia/version ("580.159.04") or /proc/driver/nvidia/version ("NVRM
 * version: NVIDIA UNIX ... Kernel Module  580.159.04  Release Build ..."): the first
 * token of digits and dots with a dot in it, at most 15 characters. Writes it followed
 * by the CUDA version the driver supports, "580.159.04 (CUDA 13.0)" (22 bytes, within
 * the 32 of vl_device.driver_version), or the CUDA version alone when there is none.
 * Not static: tests/test_device_cuda.c checks the parsing without a GPU. */
void vl_cuda_driver_version_format(const char *module_text, int cuda_version, char *out, size_t len);
void vl_cuda_driver_version_format(const char *module_text, int cuda_version, char *out, size_t len)
{
    char cuda[16], module[16] = "";
    format_version(cuda, sizeof cuda, cuda_version);
    for (const char *p = module_text ? module_text : ""; *p && !module[0];) {
        size_t n = strspn(p, "0123456789.");
        if (n > 0 && n < sizeof module && p[0] != '.' && memchr(p, '.', n)) {
            memcpy(module, p, n);
            module[n] = '\0';
        }
        p += n ? n : 1;
    }
    if (module[0]) snprintf(out, len, "%s (CUDA %s)", module, cuda);
    else snprintf(out, len, "%s", cuda);
}

/* The first 511 bytes of a small text file ("" when it cannot be read). */
static void read_small_file(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void fill_driver_version(vl_device *d, int cuda_version)
{
    char text[512];
    read_small_file("/sys/module/nvidia/version", text, sizeof text);
    if (!text[0]) read_small_file("/proc/driver/nvidia/version", text, sizeof text);
    vl_cuda_driver_version_format(text, cuda_version, d->driver_version, sizeof d->driver_version);
}

/* Fills the VMM part of d: granularity and whether map/unmap work. */
static void probe_vmm(vl_device *d, cuda_impl *c, int wanted)
{
    pthread_once(&driver_api_once, resolve_driver_api);
    d->granularity = 2u << 20; /* what every GPU so far reports; used only if VMM is off */
    if (!driver_api.resolved) return;
    if (driver_api.cuDeviceGet(&c->cu_device, c->ordinal) != CUDA_SUCCESS) return;
    int supported = 0; /* the runtime has no attribute for it: ask the driver */
    if (driver_api.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                                        c->cu_device) != CUDA_SUCCESS || !supported)
        return;

    memset(&c->prop, 0, sizeof c->prop);
    c->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    c->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    c->prop.location.id = c->cu_device;
    memset(&c->access, 0, sizeof c->access);
    c->access.location = c->prop.location;
    c->access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    size_t g = 0;
    if (driver_api.cuMemGetAllocationGranularity(&g, &c->prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
            CUDA_SUCCESS || g == 0)
        return;
    d->granularity = g;
    c->vmm = wanted;
    d->vmm_supported = c->vmm;
}

/* Open failed in `call`: the reason in err, status VL_EXIT_FAIL (a CUDA error, not a
 * missing device), d closed. Returns NULL for the caller to return: open reports, the
 * program (or PyTorch, through the plugin) decides what to do. */
static vl_device *open_failed(vl_device *d, const char *call, cudaError_t e, int *status, char *err, size_t errlen)
{
    snprintf(err, errlen, "device cuda: %s: %s: %s", call, cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError();
    *status = VL_EXIT_FAIL;
    cuda_close(d);
    return NULL;
}

vl_device *vl_device_cuda_open(const vl_spec *spec, int *status, char *err, size_t errlen)
{
    char why[256];
    if (!vl_cuda_available(why, sizeof why)) {
        snprintf(err, errlen, "%s", why);
        *status = VL_EXIT_SKIP;
        return NULL;
    }
    int ordinal = (int)vl_spec_int(spec, "device");
    int count = 0;
    cudaError_t cerr = cudaGetDeviceCount(&count);
    if (cerr != cudaSuccess) return open_failed(NULL, "cudaGetDeviceCount", cerr, status, err, errlen);
    if (ordinal < 0 || ordinal >= count) {
        snprintf(err, errlen, "no CUDA device: device=%d asked for, %d present", ordinal, count);
        *status = VL_EXIT_SKIP;
        return NULL;
    }

    vl_device *d = calloc(1, sizeof *d);
    cuda_impl *c = calloc(1, sizeof *c);
    if (d == NULL || c == NULL) {
        free(d);
        free(c);
        snprintf(err, errlen, "device cuda: out of host memory");
        *status = VL_EXIT_FAIL;
        return NULL;
    }
    c->ordinal = ordinal;
    pthread_mutex_init(&c->pool_lock, NULL);

    d->ops = &cuda_ops;
    d->kind = "cuda";
    d->simulated = 0;
    d->ordinal = ordinal;
    d->impl = c;
    snprintf(d->spec, sizeof d->spec, "%s", spec->text);

    if ((cerr = cudaSetDevice(ordinal)) != cudaSuccess) return open_failed(d, "cudaSetDevice", cerr, status, err, errlen);
    /* Create the context now, not inside the first timed call. */
    if ((cerr = cudaFree(0)) != cudaSuccess) return open_failed(d, "cudaFree(0)", cerr, status, err, errlen);

    struct cudaDeviceProp props;
    if ((cerr = cudaGetDeviceProperties(&props, ordinal)) != cudaSuccess)
        return open_failed(d, "cudaGetDeviceProperties", cerr, status, err, errlen);
    /* props.name is 256 bytes; GPU names are far shorter, so cut, don't fail. */
    memcpy(d->name, props.name, sizeof d->name - 1);
    d->name[sizeof d->name - 1] = '\0';
    d->total_bytes = props.totalGlobalMem;

    int v = 0;
    if ((cerr = cudaDriverGetVersion(&v)) != cudaSuccess)
        return open_failed(d, "cudaDriverGetVersion", cerr, status, err, errlen);
    fill_driver_version(d, v);
    if ((cerr = cudaRuntimeGetVersion(&v)) != cudaSuccess)
        return open_failed(d, "cudaRuntimeGetVersion", cerr, status, err, errlen);
    format_version(d->runtime_version, sizeof d->runtime_version, v);

    probe_vmm(d, c, vl_spec_bool(spec, "vmm"));
    return d;
}
