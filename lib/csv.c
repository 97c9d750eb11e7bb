/* CSV writer (see csv.h). */
#include "csv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct vl_csv {
    FILE *out;
    int owned;       /* we opened it (not stdout) */
    char *final;     /* the name it gets when complete; out is written at tmp until then */
    char *tmp;       /* NULL when written in place (a character device, a FIFO) */
    int header_done;
    int fields;      /* the header's column count: every row must have as many */
    long rows;       /* data rows written, for the error message */
    int failed;
    char error[160]; /* the first failure, for vl_csv_error */
};

/* Fields of one CSV line: commas outside double quotes, plus one. */
static int count_fields(const char *line)
{
    int fields = 1, quoted = 0;
    for (const char *p = line; *p; p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == ',' && !quoted)
            fields++;
    }
    return fields;
}

static void fail(vl_csv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(vl_csv *c, const char *fmt, ...)
{
    if (!c->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->error, sizeof c->error, fmt, ap);
        va_end(ap);
    }
    c->failed = 1;
}

/* Temporary names of CSVs being written, removed by a SIGTERM/SIGINT/SIGHUP that ends
 * the program (a kill -9 leaves one: a hidden name that does not end in .csv, so no
 * reader takes it for a result). Slots are claimed and released by this process's
 * main thread; the handler only reads them. */
#define MAX_OPEN_CSVS 8
static char *volatile open_tmp[MAX_OPEN_CSVS];
static volatile sig_atomic_t handlers_set;

static void remove_temps_and_die(int sig)
{
    for (int i = 0; i < MAX_OPEN_CSVS; i++)
        if (open_tmp[i]) unlink(open_tmp[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A program that exits without closing its CSV (an error path) made no result. */
static void remove_temps_at_exit(void)
{
    for (int i = 0; i < MAX_OPEN_CSVS; i++)
        if (open_tmp[i]) unlink(open_tmp[i]);
}

static const int cleanup_signals[] = {SIGTERM, SIGINT, SIGHUP};

static void set_handlers(void)
{
    if (handlers_set) return;
    atexit(remove_temps_at_exit);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
        struct sigaction old, sa = {.sa_handler = remove_temps_and_die};
        sigemptyset(&sa.sa_mask);
        /* A program (or its parent: nohup, a shell's background job) that chose
         * another disposition keeps it. */
        if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(cleanup_signals[i], &sa, NULL);
    }
    handlers_set = 1;
}

/* Holds the cleanup signals back (on = 1) or lets the held ones in (on = 0, restoring
 * *saved): between creating a temporary file and tracking it, a signal would leave it. */
static void hold_signals(int on, sigset_t *saved)
{
    if (!on) {
        pthread_sigmask(SIG_SETMASK, saved, NULL);
        return;
    }
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) sigaddset(&set, cleanup_signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, saved);
}

static void track_temp(char *tmp, int on)
{
    for (int i = 0; i < MAX_OPEN_CSVS; i++) {
        if (on && !open_tmp[i]) {
            open_tmp[i] = tmp;
            return;
        }
        if (!on && open_tmp[i] == tmp) {
            open_tmp[i] = NULL;
            return;
        }
    }
}

int vl_csv_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return 0;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The same file, where that matters: a character device (a terminal, /dev/null) read
 * and written, or written twice, loses nothing, so it never counts as the same. */
static int same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && !S_ISCHR(a->st_mode);
}

int vl_csv_onto_fd(const char *out, int fd)
{
    struct stat so, si;
    if (!out || strcmp(out, "-") == 0) return 0;
    if (stat(out, &so) != 0 || fstat(fd, &si) != 0) return 0;
    return same_stat(&so, &si);
}

int vl_csv_onto_input(const char *out, const char *in)
{
    struct stat so, si;
    if (!out || !in || strcmp(out, "-") == 0) return 0;
    if (strcmp(in, "-") == 0) return vl_csv_onto_fd(out, STDIN_FILENO);
    if (stat(out, &so) != 0 || stat(in, &si) != 0) return 0;
    return same_stat(&so, &si);
}

/* A path that does not exist yet, as the absolute name it would get: the real path of
 * its folder and its last component. Returns 0, or -1 when the folder cannot be resolved. */
static int future_name(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char *real = realpath(dir, NULL);
    if (!real) return -1;
    int n = snprintf(buf, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real, slash ? slash + 1 : path);
    free(real);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int vl_csv_same_output(const char *a, const char *b)
{
    if (!a || !b) return 0;
    int a_std = strcmp(a, "-") == 0, b_std = strcmp(b, "-") == 0;
    if (a_std && b_std) return 1;
    if (a_std || b_std) return vl_csv_onto_fd(a_std ? b : a, STDOUT_FILENO);
    struct stat sa, sb;
    int a_is = stat(a, &sa) == 0, b_is = stat(b, &sb) == 0;
    if (a_is && b_is) return same_stat(&sa, &sb);
    if (a_is || b_is) return 0;
    char na[PATH_MAX + NAME_MAX + 2], nb[sizeof na];
    if (future_name(a, na, sizeof na) != 0 || future_name(b, nb, sizeof nb) != 0) return strcmp(a, b) == 0;
    return strcmp(na, nb) == 0;
}

/* A temporary file in path's folder: ".NAME.XXXXXX" (hidden, not ending in .csv). */
static FILE *open_temp(vl_csv *c, const char *path, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    size_t len = strlen(path) + 16;
    c->tmp = malloc(len);
    c->final = strdup(path);
    if (!c->tmp || !c->final) {
        snprintf(err, errlen, "out of host memory");
        return NULL;
    }
    snprintf(c->tmp, len, "%.*s.%s.XXXXXX", dirlen, path, path + dirlen);
    set_handlers();
    sigset_t saved;
    hold_signals(1, &saved); /* a SIGTERM between mkstemp and track_temp left the file */
    int fd = mkstemp(c->tmp);
    if (fd >= 0) track_temp(c->tmp, 1);
    int made_errno = errno;
    hold_signals(0, &saved);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(made_errno));
        return NULL;
    }
    /* mkstemp makes 0600; a result gets what the umask gives a new file. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(c->tmp);
        track_temp(c->tmp, 0);
    }
    return f;
}

static void free_csv(vl_csv *c)
{
    free(c->tmp);
    free(c->final);
    free(c);
}

/* A character device or a FIFO is written where it is, with no temporary file: a
 * rename would put a regular file in its place (/dev/null replaced, a FIFO's reader
 * left waiting). Opening a FIFO waits for its reader. */
static FILE *open_in_place(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    /* stat and open are two steps: what was opened is what gets written */
    if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        snprintf(err, errlen, "cannot write %s: it was replaced while being opened", path);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

/* Opens an output file by what path is (see vl_csv_open); NULL with the reason in err. */
static FILE *open_file(vl_csv *c, const char *path, char *err, size_t errlen)
{
    struct stat st, lst;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            snprintf(err, errlen, "cannot write %s: it is a symbolic link to a file that does not exist", path);
            return NULL;
        }
        return open_temp(c, path, err, errlen); /* a new file, or mkstemp says why not */
    }
    const char *refused = S_ISDIR(st.st_mode)    ? "a folder"
                          : S_ISSOCK(st.st_mode) ? "a socket"
                          : S_ISBLK(st.st_mode)  ? "a block device"
                          : S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)
                              ? NULL
                              : "neither a file, a character device nor a FIFO";
    if (refused) {
        snprintf(err, errlen, "cannot write %s: it is %s", path, refused);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) return open_in_place(path, err, errlen);
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        /* A link to a result: the result is replaced, the link kept. */
        char *target = realpath(path, NULL);
        if (!target) {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
            return NULL;
        }
        FILE *f = open_temp(c, target, err, errlen);
        free(target);
        return f;
    }
    return open_temp(c, path, err, errlen);
}

vl_csv *vl_csv_open(const char *path, const vl_run_info *ri, char *err, size_t errlen)
{
    vl_csv *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of host memory");
        return NULL;
    }
    if (!path || strcmp(path, "-") == 0) {
        c->out = stdout;
    } else {
        c->out = open_file(c, path, err, errlen);
        if (!c->out) {
            free_csv(c);
            return NULL;
        }
        c->owned = 1;
    }
    if (ri) vl_run_info_write(c->out, ri);
    return c;
}

void vl_csv_meta(vl_csv *c, const char *key, const char *fmt, ...)
{
    va_list ap;
    if (c->header_done) {
        fprintf(stderr, "vramlab: internal error: metadata '%s' after the CSV header\n", key);
        abort();
    }
    fprintf(c->out, "# %s: ", key);
    va_start(ap, fmt);
    vfprintf(c->out, fmt, ap);
    va_end(ap);
    fputc('\n', c->out);
}

int vl_csv_header(vl_csv *c, const char *columns)
{
    c->fields = count_fields(columns);
    c->header_done = 1;
    if (fprintf(c->out, "%s\n", columns) < 0 || fflush(c->out) != 0) fail(c, "write error: %s", strerror(errno));
    return c->failed ? -1 : 0;
}

int vl_csv_row(vl_csv *c, const char *fmt, ...)
{
    char stack[1024], *line = stack;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(stack, sizeof stack, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof stack) {
        line = malloc((size_t)n + 1);
        if (!line) {
            fail(c, "out of host memory for a row");
            return -1;
        }
        va_start(ap, fmt);
        vsnprintf(line, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    int rc = 0;
    if (n < 0) {
        fail(c, "row %ld: cannot format it", c->rows + 1);
        rc = -1;
    } else if (!c->header_done || count_fields(line) != c->fields) {
        /* A short or long row would shift every later column under the wrong name. */
        fail(c, "row %ld has %d fields, the header %d: %.40s", c->rows + 1, count_fields(line), c->fields, line);
        rc = -1;
    } else {
        c->rows++;
        if (fputs(line, c->out) == EOF || fputc('\n', c->out) == EOF || fflush(c->out) != 0) {
            fail(c, "write error: %s", strerror(errno));
            rc = -1;
        }
    }
    if (line != stack) free(line);
    return rc;
}

const char *vl_csv_error(const vl_csv *c)
{
    return c->failed ? c->error : NULL;
}

const char *vl_csv_i64(long long v, char *buf, size_t buflen)
{
    if (v < 0)
        buf[0] = '\0'; /* VL_UNKNOWN: an empty field, never a fake 0 */
    else
        snprintf(buf, buflen, "%lld", v);
    return buf;
}

const char *vl_csv_f64(double v, int decimals, char *buf, size_t buflen)
{
    if (!isfinite(v))
        buf[0] = '\0'; /* unknown: an empty field, never a fake 0 or -1 */
    else
        snprintf(buf, buflen, "%.*f", decimals, v);
    return buf;
}

int vl_csv_close(vl_csv *c)
{
    if (!c) return 0;
    int failed = c->failed || ferror(c->out);
    if (c->owned) {
        if (fclose(c->out) != 0) failed = 1;
        /* Complete: the final name. Failed: the rows written so far still go there
         * (a failed program's partial result is evidence), and the exit status says
         * it failed. */
        if (c->tmp && rename(c->tmp, c->final) != 0) {
            unlink(c->tmp);
            failed = 1;
        }
        if (c->tmp) track_temp(c->tmp, 0);
    } else if (fflush(c->out) != 0) {
        failed = 1;
    }
    free_csv(c);
    return failed ? -1 : 0;
}

void vl_csv_discard(vl_csv *c)
{
    if (!c) return;
    if (c->owned) {
        fclose(c->out);
        if (c->tmp) {
            unlink(c->tmp);
            track_temp(c->tmp, 0);
        }
    } else {
        fflush(c->out);
    }
    free_csv(c);
}
