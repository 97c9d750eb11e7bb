/* Torch pickle snapshots through the converter (see pickle.h). */
#include "pickle.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* $VRAMLAB_TORCH_CONVERTER, else the repository's script relative to the working
 * directory or to the program (build/bin/replay). */
static const char *torch_converter(const char *argv0, char *buf, size_t buflen)
{
    const char *env = getenv("VRAMLAB_TORCH_CONVERTER");
    if (env && *env) return env;
    if (access("scripts/torch-snapshot-to-csv", X_OK) == 0) return "scripts/torch-snapshot-to-csv";
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    if (slash) {
        snprintf(buf, buflen, "%.*s/../../scripts/torch-snapshot-to-csv", (int)(slash - argv0), argv0);
        if (access(buf, X_OK) == 0) return buf;
    }
    return NULL;
}

int vl_trace_parse_pickle(const char *argv0, const char *path, vl_trace_options opt, vl_trace *t, char *err,
                          size_t errlen)
{
    char buf[4096];
    const char *conv = torch_converter(argv0, buf, sizeof buf);
    if (!conv) {
        snprintf(err, errlen, "a torch pickle snapshot; convert it with scripts/torch-snapshot-to-csv "
                              "(not found here; set VRAMLAB_TORCH_CONVERTER)");
        return -1;
    }
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *args[] = {(char *)conv, (char *)path, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, conv, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        snprintf(err, errlen, "cannot run %.200s: %s", conv, strerror(rc));
        return -1;
    }
    FILE *in = fdopen(fds[0], "rb");
    opt.format = VL_TRACE_TORCH_CSV;
    int prc = in ? vl_trace_parse_file(in, &opt, t, err, errlen) : -1;
    if (in) fclose(in);
    else close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    /* 127: the child could not exec the converter. posix_spawnp usually says so itself,
     * but not everywhere (under valgrind it succeeds), and the empty output would then be
     * blamed on the trace. */
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
    if (prc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        vl_trace_free(t);
        snprintf(err, errlen, "%.200s failed (exit status %d)", conv, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    if (prc != 0 && !in) snprintf(err, errlen, "fdopen failed");
    return prc;
}
