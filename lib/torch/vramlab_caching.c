/* PyTorch's pluggable-allocator entry points over lib/alloc.h (see vramlab_caching.h).
 *
 * The hot path is one acquire load of the device's allocator, one test of `extras` and
 * one indirect call: the allocator itself is thread-safe, so nothing here takes a lock
 * after the first allocation on a device. Timing, tracing and paired mode
 * (VRAMLAB_ALLOC_B, an owner table under a mutex, the same for both allocators) take the
 * slow path. */
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

#include "addrmap.h"
#include "alloc.h"
#include "caching/caching.h"
#include "caching/plan.h"
#include "cuda/peer_backend.h"
#include "device.h"
#include "trace/record.h"

#define VL_TORCH_MAX_DEVICES 64
#define VL_TORCH_DEFAULT_SPEC "caching"
#define VL_TORCH_ENV "VRAMLAB_ALLOC"
#define VL_TORCH_TIME_ENV "VRAMLAB_TIME"
#define VL_TORCH_B_ENV "VRAMLAB_ALLOC_B"
#define VL_TORCH_TRACE_ENV "VRAMLAB_TRACE"

/* A device's slot: NULL until its first allocation opens it, then the allocator, or
 * OPEN_FAILED for ever (the reason was printed once). Written only under open_lock;
 * read without it. slots[0] is allocator A (VRAMLAB_ALLOC), slots[1] B (paired mode). */
static _Atomic(vl_allocator *) slots[2][VL_TORCH_MAX_DEVICES];
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static char spec_in_use[VL_SPEC_MAX_TEXT];
static char spec_b[VL_SPEC_MAX_TEXT]; /* "" unless paired mode */
static vl_allocator open_failed_marker;
#define OPEN_FAILED (&open_failed_marker)

/* Time inside vl_alloc / vl_free per device (VRAMLAB_TIME=1): the allocator's own share
 * of a training step, measured in the process, where step times vary between processes
 * far more than the allocator costs. Off by default: two clock reads per call. Set once,
 * before the first allocator opens, never changed after. */
static bool timing;
static _Atomic uint64_t alloc_ns[2][VL_TORCH_MAX_DEVICES], free_ns[2][VL_TORCH_MAX_DEVICES];

/* Paired mode: which allocator serves new allocations (vl_torch_serve), and which one
 * made each live block (pointer -> 1 + which), so that its free goes back to it. Both
 * allocators pay the same table work, so the comparison stays fair. `paired` is set
 * once, under open_lock, before the first allocator is published. */
static bool paired;
static _Atomic int serving;

/* VRAMLAB_TRACE=FILE: every vl_alloc / vl_free the plugin serves, as a vramlab trace
 * (lib/trace/record.h), to replay the program's own allocations later, on the simulated
 * device too. Opened once, with the settings; closed by the C library at exit. */
static vl_trace_recorder *recorder;

/* timing || recorder || paired: the one flag the hot path tests. Set with them, before
 * the first allocator is published (its slot's release store orders it). */
static bool extras;
static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;
static vl_addrmap owners;

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
    const char *path = getenv(VL_TORCH_TRACE_ENV);
    char err[512];
    if (path && *path && (recorder = vl_trace_record_open(path, err, sizeof err)) == NULL)
        fprintf(stderr, "vramlab: %s=%s: %s; not recording\n", VL_TORCH_TRACE_ENV, path, err);
    const char *b = getenv(VL_TORCH_B_ENV);
    if (b && *b && vl_addrmap_init(&owners, 1u << 12) == 0) {
        snprintf(spec_b, sizeof spec_b, "%s", b);
        paired = true;
    } else if (b && *b) {
        fprintf(stderr, "vramlab: %s=%s: out of host memory for the owner table; not paired\n", VL_TORCH_B_ENV, b);
    }
    extras = timing || recorder != NULL || paired;
}

static vl_allocator *open_device(int which, int device)
{
    char err[512] = "", name[64] = "", dev_spec[64];
    int status = 0;
    if (spec_in_use[0] == '\0') read_spec();
    const char *spec = which ? spec_b : spec_in_use, *env = which ? VL_TORCH_B_ENV : VL_TORCH_ENV;
    if (which && !paired) return OPEN_FAILED; /* vl_torch_serve refuses this */
    /* Only backends that report every failure through return values, since the library
     * is loaded into someone else's process: the caching allocator, and the rmm peer
     * (its shim catches RMM's exceptions and returns NULL). raw and async end the
     * process on a CUDA error, the plugin backend would load itself, and the torch
     * peer would put a second c10 allocator into PyTorch's own process. */
    char expanded[VL_SPEC_MAX_TEXT];
    if (vl_alloc_spec_expand(spec, expanded, sizeof expanded, err, sizeof err) == 0 &&
        vl_spec_name(expanded, name, sizeof name, err, sizeof err) == 0 && strcmp(name, "caching") != 0 &&
        strcmp(name, "rmm") != 0) {
        fprintf(stderr, "vramlab: %s=%s: the PyTorch plugin serves the caching allocator and rmm only\n", env,
                spec);
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
    if (vl_alloc_spec_check(spec, err, sizeof err) != 0) {
        fprintf(stderr, "vramlab: %s=%s: %s\n", env, spec, err);
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
    vl_allocator *a = vl_alloc_open(spec, d, &status, err, sizeof err);
    if (a == NULL) {
        fprintf(stderr, "vramlab: %s=%s on %s: %s\n", env, spec, dev_spec, err);
        vl_device_close(d);
        return OPEN_FAILED;
    }
    return a;
}

static vl_allocator *allocator_slow(int which, int device)
{
    pthread_mutex_lock(&open_lock);
    vl_allocator *a = atomic_load_explicit(&slots[which][device], memory_order_acquire);
    if (a == NULL) {
        a = open_device(which, device);
        atomic_store_explicit(&slots[which][device], a, memory_order_release);
    }
    pthread_mutex_unlock(&open_lock);
    return a == OPEN_FAILED ? NULL : a;
}

static inline vl_allocator *allocator_for(int which, int device)
{
    if (device < 0 || device >= VL_TORCH_MAX_DEVICES) return NULL;
    vl_allocator *a = atomic_load_explicit(&slots[which][device], memory_order_acquire);
    if (__builtin_expect(a != NULL, 1)) return a == OPEN_FAILED ? NULL : a;
    return allocator_slow(which, device);
}

/* An allocator already open (helpers never open one). */
static vl_allocator *allocator_if_open(int which, int device)
{
    if (device < 0 || device >= VL_TORCH_MAX_DEVICES) return NULL;
    vl_allocator *a = atomic_load_explicit(&slots[which][device], memory_order_acquire);
    return a == OPEN_FAILED ? NULL : a;
}

static void *allocate_timed(vl_allocator *a, int which, size_t size, int device, cudaStream_t stream)
{
    if (!timing) return vl_allocate(a, size, (vl_stream)stream);
    uint64_t t0 = now_ns();
    void *p = vl_allocate(a, size, (vl_stream)stream);
    atomic_fetch_add_explicit(&alloc_ns[which][device], now_ns() - t0, memory_order_relaxed);
    return p;
}

static void deallocate_timed(vl_allocator *a, int which, void *ptr, size_t size, int device, cudaStream_t stream)
{
    if (!timing) {
        vl_deallocate(a, ptr, size, (vl_stream)stream);
        return;
    }
    uint64_t t0 = now_ns();
    vl_deallocate(a, ptr, size, (vl_stream)stream);
    atomic_fetch_add_explicit(&free_ns[which][device], now_ns() - t0, memory_order_relaxed);
}

/* Paired mode: the serving allocator makes the block, and the table remembers which
 * one did (a block the table cannot hold goes back at once: NULL, out of memory). */
static void *alloc_paired(size_t size, int device, cudaStream_t stream)
{
    int which = atomic_load_explicit(&serving, memory_order_relaxed);
    vl_allocator *a = allocator_for(which, device);
    if (a == NULL) return NULL;
    void *p = allocate_timed(a, which, size, device, stream);
    if (p == NULL) return NULL;
    pthread_mutex_lock(&owner_lock);
    int rc = vl_addrmap_insert(&owners, (uintptr_t)p, (uint64_t)which + 1);
    pthread_mutex_unlock(&owner_lock);
    if (rc != 0) {
        deallocate_timed(a, which, p, size, device, stream);
        return NULL;
    }
    return p;
}

/* Paired mode: which allocator made ptr (0 or 1), or -1 when neither did; `take`
 * forgets it (its free). */
static int owner_of(const void *ptr, bool take)
{
    uint64_t owner = 0;
    pthread_mutex_lock(&owner_lock);
    vl_addrmap_slot *slot = vl_addrmap_find(&owners, (uintptr_t)ptr);
    if (slot != NULL && take) vl_addrmap_remove_at(&owners, (size_t)(slot - owners.slots), &owner);
    else if (slot != NULL) owner = slot->value;
    pthread_mutex_unlock(&owner_lock);
    return (int)owner - 1;
}

static void free_paired(void *ptr, size_t size, int device, cudaStream_t stream)
{
    int which = owner_of(ptr, true);
    vl_allocator *a = which >= 0 ? allocator_if_open(which, device) : NULL;
    if (a == NULL) {
        fprintf(stderr, "vramlab: vl_free(%p) on device %d: no allocator of this library made it\n", ptr, device);
        return;
    }
    deallocate_timed(a, which, ptr, size, device, stream);
}

/* PyTorch's pluggable path (CUDAPluggableAllocator::allocate) takes NULL as a pointer,
 * raising nothing: the first kernel on the tensor then faults with an illegal address,
 * far from here. This line names the cause. */
static void *out_of_memory(ssize_t size, int device)
{
    fprintf(stderr, "vramlab: out of memory: %zd bytes on device %d (PyTorch does not check a pluggable "
            "allocator's NULL: an illegal memory access may follow)\n", size, device);
    return NULL;
}

static void *alloc_with_extras(vl_allocator *a, size_t size, int device, cudaStream_t stream)
{
    void *p = paired ? alloc_paired(size, device, stream) : allocate_timed(a, 0, size, device, stream);
    if (p == NULL) return out_of_memory((ssize_t)size, device);
    if (recorder != NULL) vl_trace_record_alloc(recorder, p, size, (uintptr_t)stream);
    return p;
}

void *vl_alloc(ssize_t size, int device, cudaStream_t stream)
{
    if (size <= 0) return NULL;
    vl_allocator *a = allocator_for(0, device);
    if (a == NULL) return NULL;
    if (__builtin_expect(extras, 0)) return alloc_with_extras(a, (size_t)size, device, stream);
    void *p = vl_allocate(a, (size_t)size, (vl_stream)stream);
    return __builtin_expect(p != NULL, 1) ? p : out_of_memory(size, device);
}

static void free_with_extras(vl_allocator *a, void *ptr, size_t size, int device, cudaStream_t stream)
{
    if (recorder != NULL) vl_trace_record_free(recorder, ptr, (uintptr_t)stream);
    if (paired) free_paired(ptr, size, device, stream);
    else deallocate_timed(a, 0, ptr, size, device, stream);
}

void vl_free(void *ptr, ssize_t size, int device, cudaStream_t stream)
{
    if (ptr == NULL) return;
    vl_allocator *a = allocator_if_open(0, device);
    if (a == NULL) {
        fprintf(stderr, "vramlab: vl_free(%p) on device %d, which has no allocator\n", ptr, device);
        return;
    }
    if (__builtin_expect(extras, 0)) free_with_extras(a, ptr, (size_t)size, device, stream);
    else vl_deallocate(a, ptr, (size_t)size, (vl_stream)stream);
}

int vl_torch_serve(int which)
{
    if (which != 0 && which != 1) return -1;
    /* paired is settled when the first allocator opens; before that, read the settings here */
    pthread_mutex_lock(&open_lock);
    if (spec_in_use[0] == '\0') read_spec();
    bool ok = which == 0 || paired;
    pthread_mutex_unlock(&open_lock);
    if (!ok) return -1;
    atomic_store_explicit(&serving, which, memory_order_relaxed);
    return 0;
}

int vl_torch_record_stream(void *ptr, int device, cudaStream_t stream)
{
    if (ptr == NULL || allocator_if_open(0, device) == NULL) return -1; /* settles `paired` */
    int which = paired ? owner_of(ptr, false) : 0;
    vl_allocator *a = allocator_if_open(which < 0 ? 0 : which, device);
    if (a == NULL) return -1;
    return vl_record_use(a, ptr, (vl_stream)stream) == VL_OK ? 0 : -1;
}

size_t vl_torch_trim(int device)
{
    size_t released = 0;
    for (int which = 0; which < 2; which++) {
        for (int i = 0; i < VL_TORCH_MAX_DEVICES; i++) {
            if (device >= 0 && i != device) continue;
            vl_allocator *a = allocator_if_open(which, i);
            if (a != NULL) released += vl_trim(a);
        }
    }
    return released;
}

/* A statistic's name and where its int64_t lies in the struct that holds it (the stats'
 * own table, vl_alloc_stats_fields, is lib/alloc.c's). */
typedef vl_alloc_stats_field stat_field;

/* The reclaim budget's counts (caching.h: vl_budget_info); budget_ppm is read apart. */
#define BUDGET_FIELD(f) {#f, offsetof(vl_budget_info, f)}
static const stat_field budget_fields[] = {
    BUDGET_FIELD(relocation_maps_hidden), BUDGET_FIELD(relocation_maps_exposed), BUDGET_FIELD(relocation_map_ns),
    BUDGET_FIELD(relocation_exposed_ns),  BUDGET_FIELD(relocation_unmap_ns),
};

/* The entry of table[0..n) named name, or NULL. */
static const stat_field *field_named(const stat_field *table, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

static int64_t field_value(const void *from, const stat_field *f)
{
    int64_t v;
    memcpy(&v, (const char *)from + f->offset, sizeof v);
    return v;
}

int64_t vl_torch_stat(int device, const char *name)
{
    if (name == NULL) return VL_UNKNOWN;
    int which = strncmp(name, "b.", 2) == 0;
    if (which) name += 2;
    vl_allocator *a = allocator_if_open(which, device);
    if (a == NULL) return VL_UNKNOWN;
    if (strncmp(name, "plan_", 5) == 0) { /* plan=1 (caching/plan.h): what the plan did */
        vl_plan_info info;
        if (vl_caching_plan_info(a, &info) != 0) return VL_UNKNOWN;
        if (strcmp(name, "plan_served") == 0) return (int64_t)info.served;
        if (strcmp(name, "plan_activations") == 0) return (int64_t)info.activations;
        if (strcmp(name, "plan_ends") == 0) return (int64_t)info.ends;
        return VL_UNKNOWN;
    }
    if (strncmp(name, "budget_", 7) == 0 || strncmp(name, "relocation_", 11) == 0) { /* caching/budget.c */
        vl_budget_info info;
        if (vl_caching_budget_info(a, &info) != 0) return VL_UNKNOWN;
        if (strcmp(name, "budget_ppm") == 0) return (int64_t)(info.budget * 1e6 + 0.5);
        const stat_field *f = field_named(budget_fields, sizeof budget_fields / sizeof *budget_fields, name);
        return f ? field_value(&info, f) : VL_UNKNOWN;
    }
    if (strcmp(name, "alloc_ns") == 0 || strcmp(name, "free_ns") == 0) {
        if (!timing) return VL_UNKNOWN;
        return (int64_t)atomic_load_explicit(name[0] == 'a' ? &alloc_ns[which][device] : &free_ns[which][device],
                                             memory_order_relaxed);
    }
    const stat_field *f = field_named(vl_alloc_stats_fields, vl_alloc_stats_nfields, name);
    if (f == NULL) return VL_UNKNOWN;
    vl_alloc_stats st;
    vl_alloc_stats_get(a, &st);
    return field_value(&st, f);
}

void vl_torch_reset_peaks(int device)
{
    for (int which = 0; which < 2; which++) {
        for (int i = 0; i < VL_TORCH_MAX_DEVICES; i++) {
            if (device >= 0 && i != device) continue;
            vl_allocator *a = allocator_if_open(which, i);
            if (a != NULL) vl_alloc_reset_peaks(a);
        }
    }
}

void vl_torch_print_summary(int device)
{
    for (int slot = 0; slot < 2 * VL_TORCH_MAX_DEVICES; slot++) {
        int which = slot / VL_TORCH_MAX_DEVICES, i = slot % VL_TORCH_MAX_DEVICES;
        if (device >= 0 && i != device) continue;
        vl_allocator *a = allocator_if_open(which, i);
        if (a == NULL) continue;
        fprintf(stderr, "vramlab allocator on cuda:device=%d (%s)\n", i, a->spec);
        vl_alloc_stats st;
        vl_alloc_stats_get(a, &st);
        for (size_t k = 0; k < vl_alloc_stats_nfields; k++) {
            int64_t v;
            memcpy(&v, (const char *)&st + vl_alloc_stats_fields[k].offset, sizeof v);
            fprintf(stderr, "  %-26s %lld\n", vl_alloc_stats_fields[k].name, (long long)v);
        }
        if (a->backend->print_summary) a->backend->print_summary(a, stderr);
    }
}

int vl_torch_last_oom_report(int device, int which, char *buf, size_t len)
{
    if ((which != 0 && which != 1) || buf == NULL || len == 0) return -1;
    buf[0] = '\0';
    vl_allocator *a = allocator_if_open(which, device);
    if (a == NULL || strcmp(a->backend->name, "caching") != 0) return -1;
    vl_oom_report r;
    if (!vl_caching_last_oom_report(a, &r)) return 0;
    vl_oom_report_format(&r, buf, len);
    return 1;
}

const char *vl_torch_spec(void)
{
    return spec_in_use;
}

const char *vl_torch_spec_b(void)
{
    return spec_b;
}
