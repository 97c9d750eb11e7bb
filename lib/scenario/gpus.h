/* What the multi-GPU and multi-process scenarios share (device0_pileup, ipc_hold,
 * peer_access, graph_pool): the device count, device-wide used bytes of any device
 * (cudaMemGetInfo with that device current, the caller's device restored), waiting for
 * a dead process's memory to come back, the base of the allocation around a pointer
 * (what a CUDA IPC handle covers), passing a file descriptor over a unix socket
 * (SCM_RIGHTS), and the one-line skip. Library code: nothing here exits but
 * vl_gpu_used_when_idle, the checked measurement for programs. */
#ifndef VL_SCENARIO_GPUS_H
#define VL_SCENARIO_GPUS_H

#include <stddef.h>
#include <stdint.h>

#include "program.h"

/* cudaGetDeviceCount (no context is created); -1 when the runtime refuses. */
int vl_gpu_count(void);

/* total - free of device `ordinal`; 0, or the cudaError_t. Creates that device's
 * primary context in this process when it has none. */
int vl_gpu_used_on(int ordinal, int64_t *used, int64_t *total);

/* Device-wide used bytes of device `ordinal` once the current device is idle
 * (cudaDeviceSynchronize first, so that memory freed by queued work counts as freed).
 * Checked with VL_CUDA_CHECK: a failed read ends the program, since the measurement it
 * was for is lost. */
int64_t vl_gpu_used_when_idle(int ordinal);

/* Polls device `ordinal` until its used bytes are at most `target` or timeout_ms
 * passed (the driver tears a dead process's context down asynchronously). Returns the
 * wait in ms. */
double vl_gpu_wait_used_at_most(int ordinal, int64_t target, int timeout_ms);

/* The base and size of the device allocation containing p (cuMemGetAddressRange,
 * resolved through the runtime: programs do not link libcuda). 0, or -1. */
int vl_gpu_alloc_range(const void *p, void **base, size_t *size);

/* Sends len bytes plus one file descriptor (SCM_RIGHTS). 0 or -1. */
int vl_fd_send_with_fd(int sock, const void *buf, size_t len, int fd);
/* Receives len bytes and the descriptor sent with them (*fd = -1 if none); blocking.
 * 1 ok, 0 EOF, -1 error. */
int vl_fd_recv_with_fd(int sock, void *buf, size_t len, int *fd);

/* Prints "PROG: skipped: WHY" (one line), closes the program frame and returns
 * VL_EXIT_SKIP for main() to return. */
int vl_program_skip(vl_program *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
