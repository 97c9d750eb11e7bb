/* Parser of vramlab's own trace format (described in trace.h):
 *   vramlab-trace 1 / a ID SIZE [STREAM] / f ID [STREAM] / # comment */
#include "parsers.h"

#include <string.h>

#include "size.h"

/* SIZE: plain bytes, or lib/size.h syntax ("4KiB"). */
static int parse_size(vl_span s, uint64_t *out)
{
    if (vl_span_u64(s, out) == 0) return 0;
    char text[64], why[128];
    if (s.n == 0 || s.n >= sizeof text || memchr(s.p, '\0', s.n)) return -1;
    memcpy(text, s.p, s.n);
    text[s.n] = '\0';
    return vl_parse_size(text, out, why, sizeof why);
}

static int is_header(vl_span line)
{
    vl_span f[3];
    return vl_split_blanks(line, f, 2) == 2 && vl_span_eq(f[0], "vramlab-trace");
}

int vl_trace_parse_vramlab(vl_trace_builder *b, const char *data, size_t len, const vl_trace_options *opt)
{
    (void)opt;
    vl_line_reader r;
    vl_span line;
    int rc, first = 1;
    vl_lines_init(&r, data, len);
    while ((rc = vl_lines_next(&r, &line)) > 0) {
        if (vl_span_is_comment(line)) continue;
        if (first && is_header(line)) {
            vl_span f[3];
            vl_split_blanks(line, f, 2);
            if (!vl_span_eq(f[1], "1")) return vl_tb_error(b, r.line, "unsupported vramlab-trace version (this reads 1)");
            first = 0;
            continue;
        }
        first = 0;
        vl_span f[5];
        size_t n = vl_split_blanks(line, f, 4);
        uint64_t id, size, stream = 0;
        if (vl_span_eq(f[0], "a")) {
            if (n < 3 || n > 4) return vl_tb_error(b, r.line, "expected 'a ID SIZE [STREAM]'");
            if (vl_span_u64(f[1], &id) != 0) return vl_tb_error(b, r.line, "bad ID (an unsigned integer)");
            if (parse_size(f[2], &size) != 0) return vl_tb_error(b, r.line, "bad SIZE");
            if (n == 4 && vl_span_u64(f[3], &stream) != 0) return vl_tb_error(b, r.line, "bad STREAM");
            if (vl_tb_alloc(b, id, size, stream, r.line) != 0) return -1;
        } else if (vl_span_eq(f[0], "f")) {
            if (n < 2 || n > 3) return vl_tb_error(b, r.line, "expected 'f ID [STREAM]'");
            if (vl_span_u64(f[1], &id) != 0) return vl_tb_error(b, r.line, "bad ID (an unsigned integer)");
            if (n == 3 && vl_span_u64(f[2], &stream) != 0) return vl_tb_error(b, r.line, "bad STREAM");
            if (vl_tb_free(b, id, stream, r.line) != 0) return -1;
        } else {
            return vl_tb_error(b, r.line, "unknown operation (expected 'a' or 'f')");
        }
    }
    return rc < 0 ? vl_tb_error(b, 0, "too many lines") : 0;
}
