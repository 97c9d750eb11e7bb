/* Trace parsing entry points: format guessing (the one sniff rule) and dispatch to a
 * format's parser (see trace.h for the formats; load.c reads files and streams). */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "parsers.h"

static const char *const format_names[] = {
    [VL_TRACE_AUTO] = "auto",       [VL_TRACE_VRAMLAB] = "vramlab", [VL_TRACE_TORCH_CSV] = "torch-csv",
    [VL_TRACE_TORCH_PICKLE] = "torch-pickle", [VL_TRACE_RMM] = "rmm"};

const char *vl_trace_format_name(vl_trace_format f)
{
    return (unsigned)f < sizeof format_names / sizeof *format_names ? format_names[f] : "?";
}

int vl_trace_format_parse(const char *name, vl_trace_format *out)
{
    for (size_t i = 0; i < sizeof format_names / sizeof *format_names; i++)
        if (strcmp(name, format_names[i]) == 0) {
            *out = (vl_trace_format)i;
            return 0;
        }
    return -1;
}

vl_trace_format vl_trace_guess(const char *data, size_t len)
{
    /* Pickle protocol 2+ starts with 0x80 and the protocol number. */
    if (len >= 2 && (unsigned char)data[0] == 0x80 && data[1] >= 2 && data[1] <= 5) return VL_TRACE_TORCH_PICKLE;
    vl_line_reader r;
    vl_span line;
    vl_lines_init(&r, data, len);
    while (vl_lines_next(&r, &line) > 0) {
        if (vl_span_is_comment(line)) continue;
        vl_span f[VL_CSVCOLS_MAX_FIELDS];
        size_t n = vl_split_blanks(line, f, 2);
        if (n >= 1 && vl_span_eq(f[0], "vramlab-trace")) return VL_TRACE_VRAMLAB;
        n = vl_split(line, ',', f, VL_CSVCOLS_MAX_FIELDS);
        int action = 0, addr = 0, pointer = 0;
        for (size_t i = 0; i < n && i < VL_CSVCOLS_MAX_FIELDS; i++) {
            action |= vl_span_ieq(f[i], "action");
            addr |= vl_span_ieq(f[i], "addr");
            pointer |= vl_span_ieq(f[i], "pointer");
        }
        if (action && addr) return VL_TRACE_TORCH_CSV;
        if (action && pointer) return VL_TRACE_RMM;
        return VL_TRACE_AUTO;
    }
    return VL_TRACE_AUTO;
}

int vl_trace_parse_buffer_opts(const char *data, size_t len, const vl_trace_options *opt, vl_trace *out,
                               char *err, size_t errlen)
{
    vl_trace_options o = opt ? *opt : (vl_trace_options){0};
    vl_trace_builder b;
    if (o.format == VL_TRACE_AUTO) o.format = vl_trace_guess(data, len);
    vl_tb_init(&b, out, o.format, err, errlen);
    int rc;
    switch (o.format) {
    case VL_TRACE_VRAMLAB: rc = vl_trace_parse_vramlab(&b, data, len, &o); break;
    case VL_TRACE_TORCH_CSV: rc = vl_trace_parse_torch_csv(&b, data, len, &o); break;
    case VL_TRACE_RMM: rc = vl_trace_parse_rmm(&b, data, len, &o); break;
    case VL_TRACE_TORCH_PICKLE:
        rc = vl_tb_error(&b, 0, "a torch pickle snapshot: convert it with scripts/torch-snapshot-to-csv "
                                "(bench/replay does that itself for a file)");
        break;
    default:
        rc = vl_tb_error(&b, 0, "unknown trace format (first line is none of: 'vramlab-trace 1', a torch-csv "
                                "header with action,addr, an RMM header with Action,Pointer); use --format");
        break;
    }
    return vl_tb_finish(&b, rc);
}

int vl_trace_parse_buffer(const char *data, size_t len, vl_trace_format fmt, vl_trace *out, char *err, size_t errlen)
{
    vl_trace_options o = {.format = fmt};
    return vl_trace_parse_buffer_opts(data, len, &o, out, err, errlen);
}

void vl_trace_free(vl_trace *t)
{
    free(t->ops);
    free(t->stream_ids);
    memset(t, 0, sizeof *t);
}

int vl_trace_stream_is_default(const vl_trace *t, uint32_t i)
{
    return i < t->nstreams && t->stream_ids[i] == 0;
}
