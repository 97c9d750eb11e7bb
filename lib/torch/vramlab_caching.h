/* libvramlab_caching.so: vramlab's allocators behind PyTorch's pluggable-allocator
 * ABI (torch.cuda.memory.CUDAPluggableAllocator(path, "vl_alloc", "vl_free")).
 *
 * Configuration: the environment variable VRAMLAB_ALLOC holds an allocator SPEC
 * (default "caching"; e.g. "caching:segments=expandable"; `--alloc help` of any
 * vramlab program lists the options), or an rmm SPEC ("rmm:pool,initial=1GiB",
 * "rmm:async": RMM through libvramlab_peer_rmm.so from `make peers`, looked for in
 * this library's folder or $VL_PEER_DIR). It is read once, when a device first
 * allocates. One allocator per CUDA device, opened lazily and thread-safely on
 * that device's first allocation. VRAMLAB_TIME=1 (read then too) times every
 * vl_alloc / vl_free call (vl_torch_stat "alloc_ns", "free_ns"). VRAMLAB_TRACE=FILE
 * (read then too) records every allocation and free served as a vramlab trace
 * (lib/trace/record.h), for bench/replay, on the simulated device too. A bad SPEC or a
 * failed open prints one line on stderr and every allocation on that device returns
 * NULL.
 *
 * Out of memory: vl_alloc returns NULL and prints one line on stderr. PyTorch (2.11)
 * does not check a pluggable allocator's NULL: it raises no OutOfMemoryError, and the
 * first kernel that touches the tensor faults with an illegal memory access (with
 * deterministic algorithms on, torch.empty's fill is that kernel), which ends the CUDA
 * context (torch-bench's paired mode hits it when its ballast asks for more than is
 * free: docs/caching-measured.md). Where that matters,
 * load libvramlab_caching_raise.so with "vl_alloc_or_raise" instead of "vl_alloc"
 * (lib/torch/raise_on_oom.cpp, make plugin-raise): it raises a RuntimeError instead.
 *
 * Paired mode, for comparing two allocators inside one process (step times vary far
 * more from one process to the next than between allocators): VRAMLAB_ALLOC_B holds a
 * second SPEC, B, opened per device beside A (VRAMLAB_ALLOC). vl_torch_serve(which)
 * chooses the one that serves new allocations; every free, record_stream goes to the
 * allocator that made the block (a pointer table under a mutex, which both pay).
 *
 * The library links the CUDA runtime statically and exports only the functions
 * below, so it works in any process (PyTorch brings its own libcudart; both
 * runtimes share the driver's primary context and streams).
 *
 * Memory still cached at process exit is not returned explicitly: PyTorch may free
 * tensors after the CUDA context is gone, and the driver reclaims it all anyway. */
#ifndef VRAMLAB_CACHING_H
#define VRAMLAB_CACHING_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PyTorch's pluggable-allocator entry points. size 0 gives NULL. NULL for size > 0
 * means out of memory (after the allocator released its cache and retried; see above
 * for what PyTorch makes of it). */
void *vl_alloc(ssize_t size, int device, cudaStream_t stream);
/* size and stream are those of the vl_alloc call that returned ptr. */
void vl_free(void *ptr, ssize_t size, int device, cudaStream_t stream);

/* Helpers (for ctypes or C callers). device < 0 means every device opened so far. */

/* ptr (from vl_alloc on device) is also used on stream: its reuse after vl_free
 * waits for the work queued on stream so far (PyTorch's record_stream).
 * Returns 0, or -1 when the allocator does not support it. */
int vl_torch_record_stream(void *ptr, int device, cudaStream_t stream);
/* Releases cached memory to the device (torch.cuda.empty_cache); returns bytes released. */
size_t vl_torch_trim(int device);
/* One statistic by its vl_alloc_stats field name ("peak_reserved_bytes",
 * "allocated_bytes", "ooms", ...), or "alloc_ns" / "free_ns": the nanoseconds spent
 * in vl_alloc / vl_free on the device so far (host monotonic clock), kept only where
 * VRAMLAB_TIME=1 was set when the first allocator opened; "plan_served",
 * "plan_activations", "plan_ends" for a caching SPEC with plan=1; "budget_ppm" (the
 * reclaim budget now, in millionths) and vl_budget_info's relocation_* fields for a
 * caching SPEC (lib/caching/caching.h). A name prefixed "b." is allocator B's (paired
 * mode). -1 when unknown, the device has no such allocator yet, or the name is not a
 * field. device must be >= 0. */
int64_t vl_torch_stat(int device, const char *name);
/* Peaks := current values. */
void vl_torch_reset_peaks(int device);
/* Writes the allocator's statistics and memory summary to stderr. */
void vl_torch_print_summary(int device);
/* The report of the last OOM of the device's allocator A (which = 0) or B (1, paired
 * mode), as "key: value" lines (docs/oom-report.md) in buf (truncated to len - 1): the
 * request, device free and total, reserved but unused bytes, the largest block that
 * still fits, fragmentation, and whether the request would fit once the cache is
 * released. 1: written; 0: no OOM since the allocator opened; -1: no such allocator on
 * the device, or it keeps no report (rmm). */
int vl_torch_last_oom_report(int device, int which, char *buf, size_t len);
/* The SPEC in use ("" before the first allocation), and B's ("" unless paired). */
const char *vl_torch_spec(void);
const char *vl_torch_spec_b(void);
/* Paired mode: new allocations come from A (which = 0) or B (1) from now on.
 * Returns 0, or -1 for 1 when VRAMLAB_ALLOC_B is not set (or for another value). */
int vl_torch_serve(int which);

#ifdef __cplusplus
}
#endif

#endif
