/* The device the caching allocator's policy core runs against, and every program's
 * --device choice. Two implementations:
 *   cuda  (lib/device/cuda.c): CUDA runtime + the driver's virtual-memory API;
 *   sim   (lib/device/sim.c): touches no memory; capacity, allocation granularity and
 *         event behaviour are configurable, so policy can be tested and traces replayed
 *         on a machine without a GPU. Results on sim are simulated: its "times" are the
 *         host CPU time of the policy code, never GPU times.
 *
 * Addresses are opaque to callers on sim (never dereference them there). */
#ifndef VL_DEVICE_H
#define VL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "spec.h"

typedef struct vl_stream_s *vl_stream; /* cudaStream_t on cuda; any token on sim; NULL = default stream */
typedef struct vl_event_s *vl_event;   /* cudaEvent_t on cuda; a sim event on sim */
typedef struct vl_phys_s *vl_phys;     /* physical memory kept unmapped: a CUmemGenericAllocationHandle on cuda */

enum {
    VL_DEV_OK = 0,
    VL_DEV_OOM = 1,         /* the device is out of memory: a result, not a failure */
    VL_DEV_ERROR = 2,       /* anything else (the implementation printed one line why) */
    VL_DEV_UNSUPPORTED = 3  /* e.g. no VMM support on this GPU */
};

typedef struct vl_device vl_device;

typedef struct vl_device_ops {
    /* Plain device allocation (cudaMalloc / cudaFree). */
    int (*mem_alloc)(vl_device *d, size_t size, void **out);
    int (*mem_free)(vl_device *d, void *ptr, size_t size);

    /* Virtual memory. va_reserve reserves address space (no memory). map backs
     * [addr, addr+size) with ONE new physical allocation and makes it accessible;
     * size is a multiple of d->granularity. unmap unmaps and releases exactly a range
     * that one map (or map_phys) call created (not a part of it, not two at once).
     * unmap does NOT wait for queued work (neither does cuMemUnmap): the caller unmaps
     * only what no queued work can still use, which it knows from events recorded on
     * the streams that used the range, or from a synchronize.
     * unmap_keep unmaps likewise but keeps the physical memory as *out, which
     * map_phys maps again at any address of a reservation (same size; on success the
     * mapping owns it again, on failure it stays the caller's), saving the creation of
     * new memory; phys_release gives kept memory back to the device.
     * phys_share hands out the memory of the one mapped range at [addr, addr+size)
     * while it stays mapped there: map_phys maps it at a second address too (the same
     * bytes under two addresses), and unmap_shared later unmaps one of the two without
     * releasing the memory, which the other mapping keeps (phys_release of a shared
     * handle that was never mapped only drops the handle). The caching allocator
     * moves a chunk retiring on a stream to a new address of the same stream this way,
     * before the work queued on the old address has completed (lib/caching/release.c). */
    int (*va_reserve)(vl_device *d, size_t size, void **out);
    int (*va_release)(vl_device *d, void *addr, size_t size);
    int (*map)(vl_device *d, void *addr, size_t size);
    int (*unmap)(vl_device *d, void *addr, size_t size);
    int (*unmap_keep)(vl_device *d, void *addr, size_t size, vl_phys *out);
    int (*map_phys)(vl_device *d, void *addr, size_t size, vl_phys phys);
    int (*phys_release)(vl_device *d, vl_phys phys, size_t size);
    int (*phys_share)(vl_device *d, void *addr, size_t size, vl_phys *out);
    int (*unmap_shared)(vl_device *d, void *addr, size_t size);

    /* Events: record an event on a stream now (the device may hand out pooled events),
     * ask whether it completed (1 yes, 0 not yet, <0 error), give it back. */
    int (*event_record)(vl_device *d, vl_stream s, vl_event *out);
    int (*event_query)(vl_device *d, vl_event e);
    void (*event_release)(vl_device *d, vl_event e);

    int (*synchronize)(vl_device *d); /* wait for all work on the device */
    int (*mem_info)(vl_device *d, size_t *free_bytes, size_t *total_bytes);
    void (*close)(vl_device *d);
} vl_device_ops;

struct vl_device {
    const vl_device_ops *ops;
    const char *kind;          /* "cuda" or "sim" */
    int simulated;             /* 1: no real memory; timings are host CPU time of policy code */
    int ordinal;               /* CUDA device ordinal (0 on sim) */
    int vmm_supported;         /* map/unmap/va_* work */
    size_t granularity;        /* VMM allocation granularity in bytes */
    size_t total_bytes;        /* device memory capacity */
    char spec[VL_SPEC_MAX_TEXT];
    char name[128];            /* "NVIDIA H200" or "simulated" */
    char driver_version[32];   /* "580.159.04 (CUDA 13.0)"; "13.0" without the kernel module's version; "n/a" on sim */
    char runtime_version[32];
    /* Calls that failed with VL_DEV_ERROR (on sim: injected faults and misuse), and the
     * first one's reason: a run that had any is not a valid result (vl_program_finish). */
    uint64_t failed_calls;
    char first_failure[160];
    void *impl;
};

/* Opens "cuda" / "cuda:device=N" (or "cuda:N": the ordinal is positional) / "sim[:capacity=80GiB,granularity=2MiB,...]".
 * Returns NULL with a reason in err and *status set to VL_EXIT_USAGE (bad SPEC)
 * or VL_EXIT_SKIP (no CUDA device or driver). */
vl_device *vl_device_open(const char *spec, int *status, char *err, size_t errlen);
/* The same from a SPEC parsed once by vl_device_spec_parse. */
vl_device *vl_device_open_spec(const vl_spec *spec, int *status, char *err, size_t errlen);
void vl_device_close(vl_device *d);
/* Parses a SPEC without opening anything (for early usage errors); the parsed form
 * goes on to vl_device_open_spec. Returns 0 or -1 with one line in err. */
int vl_device_spec_parse(const char *spec, vl_spec *out, char *err, size_t errlen);
/* vl_device_spec_parse, keeping only the verdict. */
int vl_device_spec_check(const char *spec, char *err, size_t errlen);
void vl_device_help(FILE *out);

/* Implementations (called by vl_device_open). */
vl_device *vl_device_sim_open(const vl_spec *spec, int *status, char *err, size_t errlen);
extern const vl_opt vl_device_sim_options[];
vl_device *vl_device_cuda_open(const vl_spec *spec, int *status, char *err, size_t errlen);
extern const vl_opt vl_device_cuda_options[];

/* Simulated device control (sim only; no effect on cuda). With events=manual an
 * event completes only when the test says so: this makes cross-stream reuse
 * testable on the CPU. With events=immediate (the default) every event is complete
 * when first queried. */
void vl_sim_complete_stream(vl_device *d, vl_stream s); /* all events recorded so far on s */
void vl_sim_complete_all(vl_device *d);
size_t vl_sim_pending_events(vl_device *d);
/* Device-side counters of the simulation: bytes in plain allocations + mapped chunks +
 * physical memory kept by unmap_keep; mapped bytes alone; whether addr lies in a live
 * mapping. */
size_t vl_sim_used_bytes(vl_device *d);
size_t vl_sim_mapped_bytes(vl_device *d);
int vl_sim_is_mapped(vl_device *d, void *addr);

/* Fault injection on sim (also the SPEC options fail_alloc=N, fail_map=N, ...): the nth
 * call of kind op from now on (1 = the next) fails with VL_DEV_ERROR, once; 0 disarms.
 * map_phys counts as a map, unmap_keep and unmap_shared as an unmap, phys_share as a
 * phys_release.
 * An injected event_query failure returns -1. */
typedef enum vl_sim_op {
    VL_SIM_MEM_ALLOC, VL_SIM_MEM_FREE, VL_SIM_VA_RESERVE, VL_SIM_VA_RELEASE, VL_SIM_MAP,
    VL_SIM_UNMAP, VL_SIM_EVENT_RECORD, VL_SIM_EVENT_QUERY, VL_SIM_SYNCHRONIZE, VL_SIM_PHYS_RELEASE, VL_SIM_OPS
} vl_sim_op;
void vl_sim_fail_nth(vl_device *d, vl_sim_op op, uint64_t n);
/* How many calls of kind op the simulator has had (counted as vl_sim_fail_nth counts
 * them); 0 for a real device. Lets a fault sweep know the Nth call exists. */
uint64_t vl_sim_calls(vl_device *d, vl_sim_op op);

#endif
