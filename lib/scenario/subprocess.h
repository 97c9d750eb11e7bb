/* Child processes for experiments about process behaviour (CUDA after fork(), the
 * device memory each extra process costs): fork a function or exec a program, talk
 * to it over one socket, and never hang on it. Every read and wait has a deadline;
 * a child that misses it is killed and the outcome says so.
 *
 * Channel: a SOCK_STREAM socketpair per child, so both directions share one fd and
 * writes to a dead peer fail with EPIPE instead of raising SIGPIPE (MSG_NOSIGNAL).
 * Release protocol used by the worker pools: the child reports, then blocks reading;
 * the parent's vl_child_release() shuts its side down, the child reads EOF and exits.
 *
 * Invariant: a forked child closes the channel fds of every other live vl_child
 * (they are tracked in a small registry), so a sibling never holds a channel open
 * and a release always reaches its child. All channel fds are close-on-exec. */
#ifndef VL_SCENARIO_SUBPROCESS_H
#define VL_SCENARIO_SUBPROCESS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct vl_child {
    pid_t pid; /* -1 once reaped */
    int fd;    /* the parent's end of the channel; -1 once closed */
} vl_child;

typedef enum vl_child_end_kind {
    VL_CHILD_EXITED,    /* code = exit status */
    VL_CHILD_SIGNALED,  /* code = signal number */
    VL_CHILD_KILLED,    /* missed its deadline; we sent SIGKILL */
    VL_CHILD_WAIT_FAILED
} vl_child_end_kind;

typedef struct vl_child_end {
    vl_child_end_kind kind;
    int code;
} vl_child_end;

/* Runs in the child with its end of the channel; the return value becomes the exit
 * status through _exit(), so no atexit handler or inherited stdio buffer runs twice. */
typedef int (*vl_child_fn)(void *arg, int fd);

/* fork() and run fn(arg, fd) in the child. Returns 0, or -1 with errno set. */
int vl_child_fork(vl_child *c, vl_child_fn fn, void *arg);

/* fork() and execv(path, argv) with fd_env="<fd>" added to the environment, naming the
 * child's end of the channel. Returns 0, or -1 with errno set (an exec that fails shows
 * up as exit status 127). */
int vl_child_exec(vl_child *c, const char *path, char *const argv[], const char *fd_env);

/* vl_child_exec of this very program (/proc/self/exe) with argv[0] set to its path and
 * args (NULL-terminated, at most 14) after it: how a program runs one of its own
 * helper roles in a fresh process that has not initialised CUDA. */
int vl_child_exec_self(vl_child *c, const char *const args[], const char *fd_env);

/* vl_child_exec_self with env_name set to env_value in the child's environment
 * (NULL: removed from it), this process's own environment as it was afterwards: how a
 * program runs a variant under CUDA_MODULE_LOADING=EAGER or CUBLAS_WORKSPACE_CONFIG,
 * which the libraries read when they start. Returns 0, or -1 with errno set. */
int vl_child_exec_self_env(vl_child *c, const char *const args[], const char *fd_env, const char *env_name,
                           const char *env_value);

/* In an exec'd child: the channel fd named by fd_env, or -1 when the variable is absent
 * or malformed. */
int vl_child_fd_from_env(const char *fd_env);

/* Parent side. read: exactly len bytes within timeout_ms; 1 on success, 0 when the
 * child closed the channel before sending anything, -1 on a timeout, a short message
 * or an error. write: the whole buffer; 0 or -1. */
int vl_child_read(vl_child *c, void *buf, size_t len, int timeout_ms);
int vl_child_write(vl_child *c, const void *buf, size_t len);

/* Tells the child to finish: shuts down our sending side (the child reads EOF). */
void vl_child_release(vl_child *c);

/* Waits up to timeout_ms for the child to end, SIGKILLs it after that, reaps it and
 * closes the channel. Safe to call twice. */
vl_child_end vl_child_wait(vl_child *c, int timeout_ms);

/* "exit 0", "signal 6", "killed after timeout", "wait failed". */
const char *vl_child_end_text(vl_child_end e, char *buf, size_t len);

/* Either side: the whole buffer, retrying on EINTR, without SIGPIPE. 0 or -1. */
int vl_fd_write_full(int fd, const void *buf, size_t len);
/* Either side, blocking: 1 read len bytes, 0 EOF before the first byte, -1 error or
 * EOF mid-message. */
int vl_fd_read_full(int fd, void *buf, size_t len);

#endif
