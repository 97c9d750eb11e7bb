/* PyTorch's pluggable-allocator entry points over lib/alloc.h (see vramlab_caching.h).
 *
 * The hot path is one acquire load of the device's allocator and one indirect call:
 * the allocator itself is thread-safe, so nothing here takes a lock after the first
 * allocation on a device. */
#include "torch/vramlab_caching.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "cuda/peer_backend.h"
#include "device.h"

#define VL_TORCH_MAX_DEVICES 64
#define VL_TORCH_DEFAULT_SPEC "caching"
#define VL_TORCH_ENV "VRAMLAB_ALLOC"
#define VL_TORCH_TIME_ENV "VRAMLAB_TIME"

/* A device's slot: NULL until its first allocation opens it, then the allocator, or
 * OPEN_FAILED for ever (the reason was printed once). Written only under open_lock;
 * read without it. */
static _Atomic(vl_allocator *) slots[VL_TORCH_MAX_DEVICES];
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static char spec_in_use[VL_SPEC_MAX_TEXT];
static vl_allocator open_failed_marker;
#define OPEN_FAILED (&open_failed_marker)

/* Time inside vl_alloc / vl_free per device (VRAMLAB_TIME=1): the allocator's own share
 * of a training step, measured in the process, where step times vary between processes
 * far more than the allocator costs. Off by default: two clock reads per call. Set once,
 * before the first allocator opens, never changed after. */
static bool timing;
static _Atomic uint64_t alloc_ns[VL_TORCH_MAX_DEVICES], free_ns[VL_TORCH_MAX_DEVICES];

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void read_spec(void)
{
    const char *env = getenv(VL_TORCH_ENV);
    snprintf(spec_in_use, sizeof spec_in_use, "%s", env && *env ? env : VL_TORCH_DEFAULT_SPEC);
    const char *t = getenv(VL_TORCH_TIME_ENV);
    timing = t != NULL && strcmp(t, "1") == 0;
}

static vl_allocator *open_device(int device)
{
    char err[512] = "", name[64] = "", dev_spec[64];
    int status = 0;
    if (spec_in_use[0] == '\0') read_spec();
    /* Only backends that report every failure through return values, since the library
     * is loaded into someone else's process: the caching allocator, and the rmm peer
     * (its shim catches RMM's exceptions and returns NULL). raw and async end the
     * process on a CUDA error, the plugin backend would load itself, and the torch
     * peer would put a second c10 allocator into PyTorch's own process. */
    if (vl_spec_name(spec_in_use, name, sizeof name, err, sizeof err) == 0 && strcmp(name, "caching") != 0 &&
        strcmp(name, "rmm") != 0) {
        fprintf(stderr, "vramlab: %s=%s: the PyTorch plugin serves the caching allocator and rmm only\n",
                VL_TORCH_ENV, spec_in_use);
        return OPEN_FAILED;
    }
    /* The rmm shim is looked for next to this library (build/lib/), not next to the
     * program (python), unless VL_PEER_DIR says otherwise. */
    if (strcmp(name, "rmm") == 0) {
        Dl_info self;
        char dir[4096];
        if (dladdr((void *)vl_alloc, &self) != 0 && self.dli_fname != NULL) {
            snprintf(dir, sizeof dir, "%s", self.dli_fname);
            char *slash = strrchr(dir, '/');
            if (slash != NULL) {
                *slash = '\0';
                vl_peer_set_default_dir(dir);
            }
        }
    }
    if (vl_alloc_spec_check(spec_in_use, err, sizeof err) != 0) {
        fprintf(stderr, "vramlab: %s=%s: %s\n", VL_TORCH_ENV, spec_in_use, err);
        return OPEN_FAILED;
    }
    snprintf(dev_spec, sizeof dev_spec, "cuda:device=%d", device);
    /* Opening makes the device current: give the caller its own current device back. */
    int callers_device = -1;
    if (cudaGetDevice(&callers_device) != cudaSuccess) {
        (void)cudaGetLastError();
        callers_device = -1;
    }
    vl_device *d = vl_device_open(dev_spec, &status, err, sizeof err);
    if (d != NULL && callers_device >= 0 && callers_device != device) (void)cudaSetDevice(callers_device);
    if (d == NULL) {
        fprintf(stderr, "vramlab: %s: %s\n", dev_spec, err);
        return OPEN_FAILED;
    }
    vl_allocator *a = vl_alloc_open(spec_in_use, d, &status, err, sizeof err);
    if (a == NULL) {
        fprintf(stderr, "vramlab: %s=%s on %s: %s\n", VL_TORCH_ENV, spec_in_use, dev_spec, err);
        vl_device_close(d);
        return OPEN_FAILED;
    }
    return a;
}

static vl_allocator *allocator_slow(int device)
{
    pthread_mutex_lock(&open_lock);
    vl_allocator *a = atomic_load_explicit(&slots[device], memory_order_acquire);
    if (a == NULL) {
        a = open_device(device);
        atomic_store_explicit(&slots[device], a, memory_order_release);
    }
    pthread_mutex_unlock(&open_lock);
    return a == OPEN_FAILED ? NULL : a;
}

static inline vl_allocator *allocator_for(int device)
{
    if (device < 0 || device >= VL_TORCH_MAX_DEVICES) return NULL;
    vl_allocator *a = atomic_load_explicit(&slots[device], memory_order_acquire);
    if (__builtin_expect(a != NULL, 1)) return a == OPEN_FAILED ? NULL : a;
    return allocator_slow(device);
}

/* An allocator already open (helpers never open one). */
static vl_allocator *allocator_if_open(int device)
{
    if (device < 0 || device >= VL_TORCH_MAX_DEVICES) return NULL;
    vl_allocator *a = atomic_load_explicit(&slots[device], memory_order_acquire);
    return a == OPEN_FAILED ? NULL : a;
}

void *vl_alloc(ssize_t size, int device, cudaStream_t stream)
{
    if (size <= 0) return NULL;
    vl_allocator *a = allocator_for(device);
    if (a == NULL) return NULL;
    if (!timing) return vl_allocate(a, (size_t)size, (vl_stream)stream);
    uint64_t t0 = now_ns();
    void *p = vl_allocate(a, (size_t)size, (vl_stream)stream);
    atomic_fetch_add_explicit(&alloc_ns[device], now_ns() - t0, memory_order_relaxed);
    return p;
}

void vl_free(void *ptr, ssize_t size, int device, cudaStream_t stream)
{
    if (ptr == NULL) return;
    vl_allocator *a = allocator_if_open(device);
    if (a == NULL) {
        fprintf(stderr, "vramlab: vl_free(%p) on device %d, which has no allocator\n", ptr, device);
        return;
    }
    if (!timing) {
        vl_deallocate(a, ptr, (size_t)size, (vl_stream)stream);
        return;
    }
    uint64_t t0 = now_ns();
    vl_deallocate(a, ptr, (size_t)size, (vl_stream)stream);
    atomic_fetch_add_explicit(&free_ns[device], now_ns() - t0, memory_order_relaxed);
}

int vl_torch_record_stream(void *ptr, int device, cudaStream_t stream)
{
    vl_allocator *a = allocator_if_open(device);
    if (a == NULL || ptr == NULL) return -1;
    return vl_record_use(a, ptr, (vl_stream)stream) == VL_OK ? 0 : -1;
}

size_t vl_torch_trim(int device)
{
    size_t released = 0;
    for (int i = 0; i < VL_TORCH_MAX_DEVICES; i++) {
        if (device >= 0 && i != device) continue;
        vl_allocator *a = allocator_if_open(i);
        if (a != NULL) released += vl_trim(a);
    }
    return released;
}

#define STAT_FIELD(f) {#f, offsetof(vl_alloc_stats, f)}
static const struct {
    const char *name;
    size_t offset;
} stat_fields[] = {
    STAT_FIELD(requested_bytes),      STAT_FIELD(peak_requested_bytes),
    STAT_FIELD(allocated_bytes),      STAT_FIELD(peak_allocated_bytes),
    STAT_FIELD(reserved_bytes),       STAT_FIELD(peak_reserved_bytes),
    STAT_FIELD(active_bytes),         STAT_FIELD(peak_active_bytes),
    STAT_FIELD(inactive_split_bytes), STAT_FIELD(peak_inactive_split_bytes),
    STAT_FIELD(segments),             STAT_FIELD(device_allocs),
    STAT_FIELD(device_frees),         STAT_FIELD(alloc_retries),
    STAT_FIELD(ooms),                 STAT_FIELD(largest_free_block_bytes),
    STAT_FIELD(allocs),               STAT_FIELD(frees),
};

int64_t vl_torch_stat(int device, const char *name)
{
    vl_allocator *a = allocator_if_open(device);
    if (a == NULL || name == NULL) return VL_UNKNOWN;
    if (strcmp(name, "alloc_ns") == 0 || strcmp(name, "free_ns") == 0) {
        if (!timing) return VL_UNKNOWN;
        return (int64_t)atomic_load_explicit(name[0] == 'a' ? &alloc_ns[device] : &free_ns[device],
                                             memory_order_relaxed);
    }
    for (size_t i = 0; i < sizeof stat_fields / sizeof stat_fields[0]; i++) {
        if (strcmp(stat_fields[i].name, name) != 0) continue;
        vl_alloc_stats st;
        vl_alloc_stats_get(a, &st);
        int64_t v;
        memcpy(&v, (const char *)&st + stat_fields[i].offset, sizeof v);
        return v;
    }
    return VL_UNKNOWN;
}

void vl_torch_reset_peaks(int device)
{
    for (int i = 0; i < VL_TORCH_MAX_DEVICES; i++) {
        if (device >= 0 && i != device) continue;
        vl_allocator *a = allocator_if_open(i);
        if (a != NULL) vl_alloc_reset_peaks(a);
    }
}

void vl_torch_print_summary(int device)
{
    for (int i = 0; i < VL_TORCH_MAX_DEVICES; i++) {
        if (device >= 0 && i != device) continue;
        vl_allocator *a = allocator_if_open(i);
        if (a == NULL) continue;
        fprintf(stderr, "vramlab allocator on cuda:device=%d (%s)\n", i, a->spec);
        vl_alloc_stats st;
        vl_alloc_stats_get(a, &st);
        for (size_t k = 0; k < sizeof stat_fields / sizeof stat_fields[0]; k++) {
            int64_t v;
            memcpy(&v, (const char *)&st + stat_fields[k].offset, sizeof v);
            fprintf(stderr, "  %-26s %lld\n", stat_fields[k].name, (long long)v);
        }
        if (a->backend->print_summary) a->backend->print_summary(a, stderr);
    }
}

const char *vl_torch_spec(void)
{
    return spec_in_use;
}
