/* Torch pickle snapshots through the converter (see pickle.h). */
#include "pickle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONVERTER "torch-snapshot-to-csv"

/* The converter that belongs to this program, never one of the working directory
 * (a folder holding a fake scripts/torch-snapshot-to-csv must not run it):
 * $VRAMLAB_TORCH_CONVERTER (an explicit choice), else next to the program's own
 * binary (/proc/self/exe: an installed copy), else in the repository the binary was
 * built in (build/bin/../../scripts/). */
static const char *torch_converter(char *buf, size_t buflen)
{
    const char *env = getenv("VRAMLAB_TORCH_CONVERTER");
    if (env && *env) return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = '\0';
    static const char *const beside[] = {"/" CONVERTER, "/../../scripts/" CONVERTER};
    for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
        snprintf(buf, buflen, "%s%s", exe, beside[i]);
        if (access(buf, X_OK) == 0) return buf;
    }
    return NULL;
}

/* The child: stdin from in_fd (or inherited when < 0), stdout to out_fd; it dies with
 * this process, so a killed replay leaves no converter behind. Never returns. */
static void exec_converter(const char *conv, const char *arg, int in_fd, int out_fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the parent died before prctl */
    if (in_fd >= 0 && (dup2(in_fd, STDIN_FILENO) < 0 || lseek(STDIN_FILENO, 0, SEEK_SET) != 0)) _exit(127);
    if (dup2(out_fd, STDOUT_FILENO) < 0) _exit(127);
    /* "--": a trace named like an option ("-o", "--help") stays a file name. */
    char *args[] = {(char *)conv, "--", (char *)arg, NULL};
    execv(conv, args);
    _exit(127);
}

/* Runs the converter on arg (a path, or "-" with stdin from in_fd) and parses its output. */
static int convert(const char *arg, int in_fd, vl_trace_options opt, vl_trace *t, char *err, size_t errlen)
{
    char buf[PATH_MAX + 64];
    const char *conv = torch_converter(buf, sizeof buf);
    if (!conv) {
        snprintf(err, errlen, "a torch pickle snapshot; convert it with scripts/" CONVERTER
                              " (not found beside this program or in its repository; set VRAMLAB_TORCH_CONVERTER)");
        return -1;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) exec_converter(conv, arg, in_fd, fds[1], parent);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        snprintf(err, errlen, "cannot run %.200s: %s", conv, strerror(errno));
        return -1;
    }
    FILE *in = fdopen(fds[0], "rb");
    opt.format = VL_TRACE_TORCH_CSV;
    int prc = in ? vl_trace_parse_file(in, &opt, t, err, errlen) : -1;
    if (in) fclose(in);
    else close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    /* 127: the child could not exec the converter; the empty output must not be blamed
     * on the trace. */
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        if (prc == 0) vl_trace_free(t);
        snprintf(err, errlen, "cannot run %.200s (exit status 127)", conv);
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
        /* The converter said what is wrong with the pickle, in one line: add none. */
        if (prc == 0) vl_trace_free(t);
        err[0] = '\0';
        return -2;
    }
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        /* Whatever was parsed, a converter that failed did not give the whole trace. */
        if (prc == 0) vl_trace_free(t);
        if (WIFSIGNALED(status))
            snprintf(err, errlen, "%.200s killed by signal %d", conv, WTERMSIG(status));
        else
            snprintf(err, errlen, "%.200s failed (exit status %d)", conv, WEXITSTATUS(status));
        return -1;
    }
    if (prc != 0 && !in) snprintf(err, errlen, "fdopen failed");
    return prc;
}

int vl_trace_parse_pickle(const char *path, vl_trace_options opt, vl_trace *t, char *err, size_t errlen)
{
    return convert(path, -1, opt, t, err, errlen);
}

int vl_trace_parse_pickle_bytes(const char *data, size_t len, vl_trace_options opt, vl_trace *t, char *err,
                                size_t errlen)
{
    /* An anonymous in-memory file: no name on disk that a kill could leave behind. */
    int fd = memfd_create("vramlab-snapshot", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "memfd_create: %s", strerror(errno));
        return -1;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            snprintf(err, errlen, "copying standard input for the converter: %s", strerror(errno));
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    int rc = convert("-", fd, opt, t, err, errlen);
    close(fd);
    return rc;
}
