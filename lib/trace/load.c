/* Reading traces from files and streams (see load.h and trace.h). */
#include "load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pickle.h"

/* The most bytes a trace may have (VL_TRACE_MAX_BYTES, or $VRAMLAB_TRACE_MAX_BYTES):
 * a trace is read whole into memory, so a runaway input (/dev/zero, an endless pipe)
 * is refused instead of exhausting it. */
static size_t max_trace_bytes(void)
{
    const char *env = getenv("VRAMLAB_TRACE_MAX_BYTES");
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 10);
        if (errno == 0 && *end == '\0' && env[0] != '-') return (size_t)v;
    }
    return VL_TRACE_MAX_BYTES;
}

typedef struct blob {
    char *data;
    size_t len, cap;
} blob;

/* Reads from in until b holds at least upto bytes or the stream ends; more than the
 * trace size limit is an error. */
static int blob_read(blob *b, FILE *in, size_t upto, char *err, size_t errlen)
{
    size_t limit = max_trace_bytes();
    if (upto > limit) upto = limit + 1; /* one byte past the limit tells a longer input */
    while (b->len < upto) {
        if (b->len == b->cap) {
            size_t cap = b->cap ? b->cap * 2 : 1 << 16;
            char *grown = b->cap < SIZE_MAX / 2 ? realloc(b->data, cap) : NULL;
            if (!grown) {
                snprintf(err, errlen, "out of memory reading the trace");
                return -1;
            }
            b->data = grown;
            b->cap = cap;
        }
        size_t want = b->cap - b->len;
        if (want > upto - b->len) want = upto - b->len;
        size_t got = fread(b->data + b->len, 1, want, in);
        b->len += got;
        if (got == 0) break;
    }
    if (ferror(in)) {
        snprintf(err, errlen, "read error");
        return -1;
    }
    if (b->len > limit) {
        snprintf(err, errlen, "larger than %zu bytes, the trace size limit (VRAMLAB_TRACE_MAX_BYTES)", limit);
        return -1;
    }
    return 0;
}

int vl_trace_parse_file(FILE *in, const vl_trace_options *opt, vl_trace *out, char *err, size_t errlen)
{
    blob b = {0};
    memset(out, 0, sizeof *out);
    int rc = blob_read(&b, in, SIZE_MAX, err, errlen);
    if (rc == 0) rc = vl_trace_parse_buffer_opts(b.data ? b.data : "", b.len, opt, out, err, errlen);
    free(b.data);
    return rc;
}

/* A pickle on standard input: the bytes read so far and the rest, handed to the
 * converter from memory. */
static int parse_pickle_stdin(blob *b, vl_trace_options opt, vl_trace *t, char *err, size_t errlen)
{
    if (blob_read(b, stdin, SIZE_MAX, err, errlen) != 0) return -1;
    return vl_trace_parse_pickle_bytes(b->data, b->len, opt, t, err, errlen);
}

/* Pickle or text, by the one sniff rule on the first bytes (a pickle header is two
 * bytes), so a pickle file goes to the converter without being read here. */
static int load_stream(FILE *in, int from_stdin, const char *path, const vl_trace_options *opt, vl_trace *t,
                       char *err, size_t errlen)
{
    blob b = {0};
    int rc = blob_read(&b, in, 2, err, errlen);
    if (rc != 0) goto out;
    vl_trace_format fmt = opt->format != VL_TRACE_AUTO ? opt->format : vl_trace_guess(b.data ? b.data : "", b.len);
    if (fmt == VL_TRACE_TORCH_PICKLE) {
        rc = from_stdin ? parse_pickle_stdin(&b, *opt, t, err, errlen)
                        : vl_trace_parse_pickle(path, *opt, t, err, errlen);
        goto out;
    }
    rc = blob_read(&b, in, SIZE_MAX, err, errlen);
    if (rc == 0) rc = vl_trace_parse_buffer_opts(b.data ? b.data : "", b.len, opt, t, err, errlen);
out:
    free(b.data);
    return rc;
}

int vl_trace_load(const char *path, const vl_trace_options *opt, vl_trace *t, char *err, size_t errlen)
{
    vl_trace_options o = opt ? *opt : (vl_trace_options){0};
    int from_stdin = strcmp(path, "-") == 0;
    const char *name = from_stdin ? "<stdin>" : path;
    char why[512];
    memset(t, 0, sizeof *t);
    FILE *in = from_stdin ? stdin : fopen(path, "rb");
    if (!in) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = load_stream(in, from_stdin, path, &o, t, why, sizeof why);
    if (!from_stdin) fclose(in);
    if (rc == -2) {
        err[0] = '\0';
        return -2;
    }
    if (rc == 0 && t->nops == 0) {
        vl_trace_free(t);
        snprintf(why, sizeof why, "the trace has no operations");
        rc = -1;
    }
    /* Parser errors start with the line number: "12: reason" -> "FILE:12: reason". */
    if (rc != 0) snprintf(err, errlen, "%s:%s%s", name, why[0] >= '0' && why[0] <= '9' ? "" : " ", why);
    return rc;
}

const char *vl_trace_unknown_frees_note(const vl_trace *t, const char *path, char *buf, size_t buflen)
{
    size_t n = t->unknown_frees, used;
    buf[0] = '\0';
    if (!n) return buf;
    used = (size_t)snprintf(buf, buflen, "%s: %zu free%s of addresses not allocated at that point (line%s", path, n,
                            n == 1 ? "" : "s", n == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < VL_TRACE_FIRST_UNKNOWN && used < buflen; i++)
        used += (size_t)snprintf(buf + used, buflen - used, "%s%u", i ? ", " : " ", t->unknown_free_lines[i]);
    if (used < buflen)
        snprintf(buf + used, buflen - used, "%s); they are left out of the replay",
                 n > VL_TRACE_FIRST_UNKNOWN ? ", ..." : "");
    return buf;
}
