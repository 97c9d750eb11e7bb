/* The one allocator interface every vramlab program uses, chosen at run time with
 * --alloc SPEC (NAME[:key=value,...]):
 *   raw      cudaMalloc / cudaFree                         (lib/cuda/backend_raw.c)
 *   async    cudaMallocAsync / cudaFreeAsync pools         (lib/cuda/backend_async.c)
 *   caching  vramlab's caching allocator                   (lib/caching/backend.c)
 *   plugin   a .so with PyTorch's pluggable-allocator ABI  (lib/cuda/backend_plugin.c)
 *   torch    PyTorch's CUDA caching allocator, a peer      (lib/cuda/backend_torch.c)
 *   rmm      a RAPIDS RMM memory resource, a peer          (lib/cuda/backend_rmm.c)
 * Peers are loaded from a shim library when first named (lib/cuda/peer_backend.h).
 * `--alloc help` lists them with their options and defaults.
 *
 * Contract for every backend:
 *   - alloc(0) returns NULL and is not an OOM; free(NULL) does nothing.
 *   - alloc returns NULL when out of memory, after counting it in stats.ooms; it never
 *     aborts on OOM. The caching allocator also returns NULL on other device errors and
 *     out of host memory (one line on stderr, vl_caching_last_error): a library in
 *     someone else's process never exits; the cuda backends' checked calls still do.
 *   - free takes the size that was asked for (PyTorch's ABI passes it too).
 *   - record_use(p, s): p is also used on stream s; a backend that can, defers reuse of
 *     p after its free until s has finished the work queued so far. VL_UNSUPPORTED if not;
 *     VL_FAILED when it could not record it (then the caller orders the reuse itself).
 *   - trim releases cached memory to the device (empty_cache); returns bytes released.
 *   - oom_report fills the out-of-memory report (oom_report.h) for a request as things
 *     stand; a program turns reports on with vl_alloc_oom_reports, and vl_allocate then
 *     takes one at an OOM.
 *   - statistics a backend cannot know are VL_UNKNOWN, never 0. */
#ifndef VL_ALLOC_H
#define VL_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "oom_report.h"
#include "spec.h"

#define VL_UNKNOWN INT64_C(-1)

enum { VL_OK = 0, VL_UNSUPPORTED = -2, VL_FAILED = -3 };
enum {
    VL_OPEN_USAGE = -2, /* a backend's open: options that cannot work on this device */
    VL_OPEN_SKIP = -4   /* a backend's open: what it needs is not on this machine (a peer) */
};

typedef struct vl_alloc_stats {
    int64_t requested_bytes, peak_requested_bytes;           /* sum of sizes callers asked for */
    int64_t allocated_bytes, peak_allocated_bytes;           /* blocks handed out, incl. rounding */
    int64_t reserved_bytes, peak_reserved_bytes;             /* device memory the allocator holds */
    int64_t active_bytes, peak_active_bytes;                 /* allocated + freed blocks awaiting events */
    int64_t inactive_split_bytes, peak_inactive_split_bytes; /* free parts of split segments */
    int64_t segments;                                        /* device allocations / mappings held now */
    int64_t device_allocs, device_frees;                     /* calls to the device's allocator */
    int64_t alloc_retries;                                   /* allocs that freed cache and retried */
    int64_t ooms;                                            /* allocs that returned NULL */
    int64_t largest_free_block_bytes;                        /* largest cached free block */
    int64_t allocs, frees;                                   /* calls through this interface */
} vl_alloc_stats;

/* Sets every field to VL_UNKNOWN. */
void vl_alloc_stats_unknown(vl_alloc_stats *st);

/* vl_alloc_stats's fields by name ("peak_reserved_bytes"), for statistics passed by name
 * (the PyTorch plugin's vl_torch_stat). */
typedef struct vl_alloc_stats_field {
    const char *name;
    size_t offset;
} vl_alloc_stats_field;
extern const vl_alloc_stats_field vl_alloc_stats_fields[];
extern const size_t vl_alloc_stats_nfields;

typedef struct vl_allocator vl_allocator;

/* The statistics adaptor's counter: requested bytes and their peak, calls and OOMs.
 * Callers pass sizes, so no table is needed. Atomic, so a backend stays thread-safe
 * without a lock on its hot path. */
typedef struct vl_byte_counter {
    int64_t current, peak, allocs, frees, ooms;
} vl_byte_counter;
static inline void vl_byte_counter_add(vl_byte_counter *c, size_t n)
{
    int64_t now = __atomic_add_fetch(&c->current, (int64_t)n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->allocs, 1, __ATOMIC_RELAXED);
    int64_t peak = __atomic_load_n(&c->peak, __ATOMIC_RELAXED);
    while (now > peak && !__atomic_compare_exchange_n(&c->peak, &peak, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}
static inline void vl_byte_counter_sub(vl_byte_counter *c, size_t n)
{
    __atomic_sub_fetch(&c->current, (int64_t)n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->frees, 1, __ATOMIC_RELAXED);
}
static inline void vl_byte_counter_oom(vl_byte_counter *c) { __atomic_add_fetch(&c->ooms, 1, __ATOMIC_RELAXED); }
/* Fills requested_*, allocs, frees and ooms of st. */
static inline void vl_byte_counter_stats(vl_byte_counter *c, vl_alloc_stats *st)
{
    st->requested_bytes = __atomic_load_n(&c->current, __ATOMIC_RELAXED);
    st->peak_requested_bytes = __atomic_load_n(&c->peak, __ATOMIC_RELAXED);
    st->allocs = __atomic_load_n(&c->allocs, __ATOMIC_RELAXED);
    st->frees = __atomic_load_n(&c->frees, __ATOMIC_RELAXED);
    st->ooms = __atomic_load_n(&c->ooms, __ATOMIC_RELAXED);
}
static inline void vl_byte_counter_reset_peak(vl_byte_counter *c)
{
    __atomic_store_n(&c->peak, __atomic_load_n(&c->current, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}


typedef struct vl_alloc_backend {
    const char *name;
    const char *summary;               /* one line for --alloc help */
    const vl_opt *options;      /* terminated by {NULL} */
    int needs_cuda;                    /* 0: also runs on a simulated device */
    /* 1: get_stats fills requested_*, allocs, frees and ooms itself (it knows each
     * block's size); 0: the statistics adaptor counts them around alloc and free. */
    int counts_requests;
    /* 0, or -1 with one line in err; VL_OPEN_USAGE when the options cannot work on
     * this device (a usage error, exit 2, found when the allocator opens). */
    int (*open)(vl_allocator *a, const vl_spec *spec, char *err, size_t errlen);
    /* May be NULL: rules across options that the table cannot state, checked with the
     * parse, before any device opens. 0, or -1 with one line in err. */
    int (*check_spec)(const vl_spec *spec, char *err, size_t errlen);
    /* May be NULL: lines after the options in `--alloc help` (is a peer here?). */
    void (*print_status)(FILE *out);
    void *(*alloc)(vl_allocator *a, size_t size, vl_stream s);
    void (*free)(vl_allocator *a, void *ptr, size_t size, vl_stream s);
    int (*record_use)(vl_allocator *a, void *ptr, vl_stream s);
    size_t (*trim)(vl_allocator *a);
    /* The adaptor's fields are filled first; NULL: nothing beyond them is known. */
    void (*get_stats)(vl_allocator *a, vl_alloc_stats *st);
    void (*reset_peaks)(vl_allocator *a);     /* peaks := current values */
    void (*print_summary)(vl_allocator *a, FILE *out); /* may be NULL */
    /* May be NULL: what this backend knows for the OOM report of a request of `size` on
     * s, now: r already holds the SPEC, the request, the device's free and total memory
     * and the statistics' allocated, reserved and OOMs; everything else is unknown. The
     * largest block comes from the allocator's state or a bounded probe
     * (vl_oom_report_probe); nothing is released to find out. Fragmentation is derived
     * afterwards. */
    void (*oom_report)(vl_allocator *a, size_t size, vl_stream s, vl_oom_report *r);
    /* May be NULL: the allocator's own version and build ("rmm 26.10.0"), for the
     * CSV's "# alloc_version" line (a peer's; vramlab's own is "# vramlab"). */
    const char *(*version)(vl_allocator *a);
    /* May be NULL: the settings the open allocator runs with, as "key=value,..." after
     * its own rounding and clamping (a chunk=1 typed is the granule used), for the CSV's
     * "# alloc_effective" line: the "# alloc" line is the SPEC as typed. */
    void (*effective)(vl_allocator *a, char *buf, size_t len);
    /* May be NULL (it can): why an allocator of this SPEC cannot allocate and free
     * inside a stream capture, where trying fails or ends the process. */
    const char *(*capture_refusal)(const vl_spec *spec);
    void (*close)(vl_allocator *a);           /* frees everything it holds */
} vl_alloc_backend;

struct vl_allocator {
    /* What every vl_allocate and vl_deallocate reads, in one cache line. */
    const vl_alloc_backend *backend;
    vl_device *dev;
    void *impl;
    /* The backend's counts_requests, unless its open found the allocator counts them
     * itself (a plugin library with statistics of its own). */
    int counts_requests;
    /* OOM reports taken by vl_allocate (vl_alloc_oom_reports; not thread-safe: a program
     * that allocates from several threads leaves them off). last_oom: the last report
     * taken (NULL before one), freed at close. */
    int oom_report_mode;
    vl_byte_counter requests; /* the statistics adaptor's, unless counts_requests */
    char spec[VL_SPEC_MAX_TEXT];
    vl_oom_report *last_oom;
    int64_t oom_reports_taken, oom_reports_skipped;
};

/* The backends vl_alloc_open knows (lib/alloc.c keeps the list). */
extern const vl_alloc_backend vl_backend_raw, vl_backend_async, vl_backend_caching, vl_backend_plugin, vl_backend_torch,
    vl_backend_rmm;

/* Parses a SPEC once (backend name, option names, types, values; defaults filled in)
 * without a device; the parsed form goes on to vl_alloc_open_spec. Returns 0 or -1
 * with one line in err. */
int vl_alloc_spec_parse(const char *spec, vl_spec *out, char *err, size_t errlen);
/* SPEC as its backend reads it: a named SPEC (lowwaste[:key=value,...]) becomes the SPEC
 * it stands for, the options given replacing its own of the same key; any other SPEC is
 * copied. 0, or -1 with one line in err (a bad name, a result longer than outlen). */
int vl_alloc_spec_expand(const char *spec, char *out, size_t outlen, char *err, size_t errlen);
/* 1 when the backend NAME needs a CUDA device (does not run on --device sim). */
int vl_alloc_needs_cuda(const char *name);
/* vl_alloc_spec_parse, keeping only the verdict. */
int vl_alloc_spec_check(const char *spec, char *err, size_t errlen);
/* Opens an allocator on dev from a parsed SPEC. NULL with one line in err; *status is
 * VL_EXIT_USAGE for options that cannot work, VL_EXIT_SKIP when the backend needs
 * CUDA and dev is simulated or a peer is not available, VL_EXIT_FAIL otherwise. */
vl_allocator *vl_alloc_open_spec(const vl_spec *spec, vl_device *dev, int *status, char *err, size_t errlen);
/* vl_alloc_spec_parse, then vl_alloc_open_spec (VL_EXIT_USAGE for a bad SPEC). */
vl_allocator *vl_alloc_open(const char *spec, vl_device *dev, int *status, char *err, size_t errlen);
void vl_alloc_close(vl_allocator *a);
/* NULL when a's backend can allocate and free inside a stream capture; else why not. */
const char *vl_alloc_capture_refusal(const vl_allocator *a, const vl_spec *spec);
void vl_alloc_help(FILE *out);

/* The OOM report for a request of `size` on s as things stand now (oom_report.h): the
 * figures every backend has, then the backend's hook. For raw and async it probes the
 * device with real allocations (bounded, given back at once); nothing is released. */
void vl_alloc_oom_report(vl_allocator *a, size_t size, vl_stream s, vl_oom_report *r);
/* What vl_allocate does at an OOM (mode != OFF): OFF takes no report (the default: a
 * probe of the largest block is itself an OOM); FIRST takes the first OOM's report into
 * a->last_oom and prints it on stderr, and only counts later ones (a report of raw or
 * async probes the device: taking one per OOM would change a run that keeps hitting
 * them); EACH keeps every OOM's report in a->last_oom, printing nothing. Returns the
 * previous mode, so a deliberate probe can pause reports and restore them. */
enum { VL_OOM_REPORT_OFF = 0, VL_OOM_REPORT_FIRST = 1, VL_OOM_REPORT_EACH = 2 };
int vl_alloc_oom_reports(vl_allocator *a, int mode);
void vl_alloc_note_oom(vl_allocator *a, size_t size, vl_stream s);

/* The statistics adaptor wraps every backend here, as RMM's statistics_resource_adaptor
 * wraps any resource: requested bytes, their peak, calls and OOMs (alloc returning
 * NULL for a size > 0) are counted once for all backends that do not count them. */
static inline void *vl_allocate(vl_allocator *a, size_t size, vl_stream s)
{
    void *p = a->backend->alloc(a, size, s);
    if (!a->counts_requests && size) {
        if (p)
            vl_byte_counter_add(&a->requests, size);
        else
            vl_byte_counter_oom(&a->requests);
    }
    if (!p && size && a->oom_report_mode) vl_alloc_note_oom(a, size, s);
    return p;
}
static inline void vl_deallocate(vl_allocator *a, void *ptr, size_t size, vl_stream s)
{
    a->backend->free(a, ptr, size, s);
    if (!a->counts_requests && ptr) vl_byte_counter_sub(&a->requests, size);
}
static inline int vl_record_use(vl_allocator *a, void *ptr, vl_stream s)
{
    return a->backend->record_use ? a->backend->record_use(a, ptr, s) : VL_UNSUPPORTED;
}
static inline size_t vl_trim(vl_allocator *a) { return a->backend->trim ? a->backend->trim(a) : 0; }
static inline void vl_alloc_stats_get(vl_allocator *a, vl_alloc_stats *st)
{
    vl_alloc_stats_unknown(st);
    if (!a->counts_requests) vl_byte_counter_stats(&a->requests, st);
    if (a->backend->get_stats) a->backend->get_stats(a, st);
}
static inline void vl_alloc_reset_peaks(vl_allocator *a)
{
    if (!a->counts_requests) vl_byte_counter_reset_peak(&a->requests);
    if (a->backend->reset_peaks) a->backend->reset_peaks(a);
}

#endif
