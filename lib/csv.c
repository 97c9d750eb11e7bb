/* CSV writer (see csv.h). */
#include "csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct vl_csv {
    FILE *out;
    int owned;       /* we opened it (not stdout) */
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
        c->out = fopen(path, "w");
        if (!c->out) {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
            free(c);
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

int vl_csv_close(vl_csv *c)
{
    if (!c) return 0;
    int failed = c->failed || ferror(c->out);
    if (c->owned) {
        if (fclose(c->out) != 0) failed = 1;
    } else if (fflush(c->out) != 0) {
        failed = 1;
    }
    free(c);
    return failed ? -1 : 0;
}
