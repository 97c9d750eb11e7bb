/* Helpers of the multi-GPU / multi-process scenarios (see gpus.h). */
#include "scenario/gpus.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "clock.h"
#include "cuda/gpu.h"
#include "exitcodes.h"
#include "scenario/subprocess.h"

int vl_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return n;
}

int vl_gpu_used_on(int ordinal, int64_t *used, int64_t *total)
{
    int current = 0;
    cudaError_t e = cudaGetDevice(&current);
    if (e != cudaSuccess) return (int)e;
    if (current != ordinal && (e = cudaSetDevice(ordinal)) != cudaSuccess) return (int)e;
    size_t f = 0, t = 0;
    e = cudaMemGetInfo(&f, &t);
    if (current != ordinal) {
        cudaError_t back = cudaSetDevice(current);
        if (e == cudaSuccess) e = back;
    }
    if (e != cudaSuccess) return (int)e;
    *used = (int64_t)(t - f);
    if (total) *total = (int64_t)t;
    return 0;
}

int64_t vl_gpu_used_when_idle(int ordinal)
{
    int64_t used = 0;
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    VL_CUDA_CHECK((cudaError_t)vl_gpu_used_on(ordinal, &used, NULL));
    return used;
}

double vl_gpu_wait_used_at_most(int ordinal, int64_t target, int timeout_ms)
{
    uint64_t t0 = vl_now_ns();
    for (;;) {
        int64_t used = 0;
        if (vl_gpu_used_on(ordinal, &used, NULL) != 0 || used <= target) break;
        if (vl_now_ns() - t0 > (uint64_t)timeout_ms * 1000000u) break;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return (double)(vl_now_ns() - t0) / 1e6;
}

int vl_gpu_alloc_range(const void *p, void **base, size_t *size)
{
    static PFN_cuMemGetAddressRange_v3020 fn;
    if (!fn) {
        void *sym = NULL;
        enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &sym, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess || !sym) {
            (void)cudaGetLastError();
            return -1;
        }
        fn = (PFN_cuMemGetAddressRange_v3020)sym;
    }
    CUdeviceptr b = 0;
    size_t s = 0;
    if (fn(&b, &s, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS) return -1;
    *base = (void *)(uintptr_t)b;
    *size = s;
    return 0;
}

int vl_fd_send_with_fd(int sock, const void *buf, size_t len, int fd)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.bytes, .msg_controllen = sizeof ctl.bytes};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0) return -1;
    /* The descriptor went with the first byte; the rest is ordinary data. */
    return (size_t)n == len ? 0 : vl_fd_write_full(sock, (const char *)buf + n, len - (size_t)n);
}

int vl_fd_recv_with_fd(int sock, void *buf, size_t len, int *fd)
{
    *fd = -1;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.bytes, .msg_controllen = sizeof ctl.bytes};
    ssize_t n;
    do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n == 0) return 0;
    if (n < 0) return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(fd, CMSG_DATA(c), sizeof *fd);
    if ((size_t)n < len && vl_fd_read_full(sock, (char *)buf + n, len - (size_t)n) != 1) return -1;
    return 1;
}

int vl_program_skip(vl_program *p, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: skipped: %s\n", p->cli.prog, why);
    vl_program_finish(p);
    return VL_EXIT_SKIP;
}
