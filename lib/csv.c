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
    int failed;
};

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

void vl_csv_header(vl_csv *c, const char *columns)
{
    fprintf(c->out, "%s\n", columns);
    c->header_done = 1;
    if (fflush(c->out) != 0) c->failed = 1;
}

void vl_csv_row(vl_csv *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(c->out, fmt, ap) < 0) c->failed = 1;
    va_end(ap);
    if (fputc('\n', c->out) == EOF || fflush(c->out) != 0) c->failed = 1;
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
