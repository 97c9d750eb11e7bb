/* Child processes with a deadline on every read and wait (see subprocess.h). */
#include "scenario/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

extern char **environ;

/* Parent ends of the channels of live children: a forked child closes them all so
 * that it holds no sibling's channel open (see the invariant in subprocess.h). */
#define MAX_TRACKED 256
static int tracked_fds[MAX_TRACKED];
static int ntracked;

static void track(int fd)
{
    if (ntracked < MAX_TRACKED) tracked_fds[ntracked++] = fd;
}

static void untrack(int fd)
{
    for (int i = 0; i < ntracked; i++)
        if (tracked_fds[i] == fd) {
            tracked_fds[i] = tracked_fds[--ntracked];
            return;
        }
}

static void close_tracked_in_child(void)
{
    for (int i = 0; i < ntracked; i++) close(tracked_fds[i]);
    ntracked = 0;
}

int vl_fd_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK) n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int vl_fd_read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) return got == 0 ? 0 : -1;
        got += (size_t)n;
    }
    return 1;
}

static int open_channel(int sv[2])
{
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
}

int vl_child_fork(vl_child *c, vl_child_fn fn, void *arg)
{
    int sv[2];
    c->pid = -1;
    c->fd = -1;
    if (open_channel(sv) != 0) return -1;
    fflush(NULL); /* nothing buffered gets written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        close_tracked_in_child();
        _exit(fn(arg, sv[1]));
    }
    close(sv[1]);
    c->pid = pid;
    c->fd = sv[0];
    track(c->fd);
    return 0;
}

int vl_child_exec(vl_child *c, const char *path, char *const argv[], const char *fd_env)
{
    int sv[2];
    c->pid = -1;
    c->fd = -1;
    if (open_channel(sv) != 0) return -1;

    /* The environment is built before fork(): the child of a threaded parent may only
     * make async-signal-safe calls, and fcntl + execve are. */
    size_t nenv = 0;
    while (environ[nenv]) nenv++;
    char **envp = malloc((nenv + 2) * sizeof *envp);
    char fdvar[128];
    if (!envp) {
        close(sv[0]);
        close(sv[1]);
        errno = ENOMEM;
        return -1;
    }
    snprintf(fdvar, sizeof fdvar, "%s=%d", fd_env, sv[1]);
    size_t k = 0;
    size_t namelen = strlen(fd_env);
    for (size_t i = 0; i < nenv; i++)
        if (!(strncmp(environ[i], fd_env, namelen) == 0 && environ[i][namelen] == '='))
            envp[k++] = environ[i];
    envp[k++] = fdvar;
    envp[k] = NULL;

    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        free(envp);
        close(sv[0]);
        close(sv[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        fcntl(sv[1], F_SETFD, 0); /* this end survives exec; every other channel does not */
        execve(path, argv, envp);
        _exit(127);
    }
    free(envp);
    close(sv[1]);
    c->pid = pid;
    c->fd = sv[0];
    track(c->fd);
    return 0;
}

int vl_child_exec_self(vl_child *c, const char *const args[], const char *fd_env)
{
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(self, sizeof self, "/proc/self/exe");
    } else {
        self[n] = '\0';
    }
    char *argv[16];
    size_t k = 0;
    argv[k++] = self;
    for (size_t i = 0; args[i] && k < 15; i++) argv[k++] = (char *)args[i];
    argv[k] = NULL;
    return vl_child_exec(c, self, argv, fd_env);
}

int vl_child_exec_self_env(vl_child *c, const char *const args[], const char *fd_env, const char *env_name,
                           const char *env_value)
{
    const char *old = getenv(env_name);
    char *saved = NULL;
    if (old && !(saved = strdup(old))) return -1;
    int rc = env_value ? setenv(env_name, env_value, 1) : unsetenv(env_name);
    if (rc == 0) rc = vl_child_exec_self(c, args, fd_env);
    int err = errno;
    if (saved) {
        setenv(env_name, saved, 1);
        free(saved);
    } else {
        unsetenv(env_name);
    }
    errno = err;
    return rc;
}

int vl_child_fd_from_env(const char *fd_env)
{
    const char *v = getenv(fd_env);
    if (!v || !*v) return -1;
    char *end;
    errno = 0;
    long fd = strtol(v, &end, 10);
    if (errno || *end || fd < 0 || fd > 1 << 20) return -1;
    if (fcntl((int)fd, F_GETFD) < 0) return -1;
    fcntl((int)fd, F_SETFD, FD_CLOEXEC); /* not inherited by what this child starts */
    return (int)fd;
}

int vl_child_read(vl_child *c, void *buf, size_t len, int timeout_ms)
{
    if (c->fd < 0) return -1;
    uint64_t deadline = vl_now_ns() + (uint64_t)timeout_ms * 1000000u;
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        uint64_t now = vl_now_ns();
        if (now >= deadline) return -1;
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        int left_ms = (int)((deadline - now + 999999u) / 1000000u);
        int r = poll(&pfd, 1, left_ms);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) continue; /* deadline check above ends the loop */
        ssize_t n = read(c->fd, p + got, len - got);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -1;
        }
        if (n == 0) return got == 0 ? 0 : -1;
        got += (size_t)n;
    }
    return 1;
}

int vl_child_write(vl_child *c, const void *buf, size_t len)
{
    if (c->fd < 0) return -1;
    return vl_fd_write_full(c->fd, buf, len);
}

void vl_child_release(vl_child *c)
{
    if (c->fd >= 0) shutdown(c->fd, SHUT_WR);
}

static vl_child_end end_of(int status)
{
    vl_child_end e = {VL_CHILD_WAIT_FAILED, 0};
    if (WIFEXITED(status)) {
        e.kind = VL_CHILD_EXITED;
        e.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        e.kind = VL_CHILD_SIGNALED;
        e.code = WTERMSIG(status);
    }
    return e;
}

vl_child_end vl_child_wait(vl_child *c, int timeout_ms)
{
    vl_child_end e = {VL_CHILD_WAIT_FAILED, 0};
    if (c->pid > 0) {
        uint64_t deadline = vl_now_ns() + (uint64_t)timeout_ms * 1000000u;
        int status = 0;
        for (;;) {
            pid_t r = waitpid(c->pid, &status, WNOHANG);
            if (r == c->pid) {
                e = end_of(status);
                break;
            }
            if (r < 0 && errno != EINTR) break;
            if (vl_now_ns() >= deadline) {
                kill(c->pid, SIGKILL);
                while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {}
                e.kind = VL_CHILD_KILLED;
                e.code = SIGKILL;
                break;
            }
            struct timespec ts = {0, 1000000}; /* 1 ms between polls */
            nanosleep(&ts, NULL);
        }
        c->pid = -1;
    }
    if (c->fd >= 0) {
        untrack(c->fd);
        close(c->fd);
        c->fd = -1;
    }
    return e;
}

const char *vl_child_end_text(vl_child_end e, char *buf, size_t len)
{
    switch (e.kind) {
    case VL_CHILD_EXITED: snprintf(buf, len, "exit %d", e.code); break;
    case VL_CHILD_SIGNALED: snprintf(buf, len, "signal %d", e.code); break;
    case VL_CHILD_KILLED: snprintf(buf, len, "killed after timeout"); break;
    default: snprintf(buf, len, "wait failed"); break;
    }
    return buf;
}
