/* Parser of PyTorch's snapshot device trace as CSV (torch-csv, described in trace.h).
 * Which free record takes effect is the caller's choice (vl_trace_free_at); the other
 * one is only checked for syntax. */
#include "parsers.h"

enum { COL_ACTION, COL_ADDR, COL_SIZE, COL_STREAM, NCOLS };

static const vl_csvcols_want torch_cols[NCOLS] = {
    [COL_ACTION] = {"action", 1}, [COL_ADDR] = {"addr", 1}, [COL_SIZE] = {"size", 1}, [COL_STREAM] = {"stream", 0}};

static int number(vl_trace_builder *b, vl_span f, uint32_t line, const char *what, uint64_t *out)
{
    if (vl_span_u64(f, out) != 0) return vl_tb_error(b, line, "bad %s (an unsigned integer)", what);
    return 0;
}

static int torch_row(vl_trace_builder *b, const vl_span *f, uint32_t line, void *ctx)
{
    const vl_trace_options *opt = ctx;
    uint64_t addr, size, stream = 0;
    vl_span action = f[COL_ACTION];
    if (f[COL_STREAM].n && number(b, f[COL_STREAM], line, "stream", &stream) != 0) return -1;

    int is_alloc = vl_span_eq(action, "alloc");
    int frees_now = vl_span_eq(action, "free") ||
                    (vl_span_eq(action, "free_completed") && opt->free_at == VL_TRACE_FREE_AT_COMPLETED) ||
                    (vl_span_eq(action, "free_requested") && opt->free_at == VL_TRACE_FREE_AT_REQUESTED);
    int other_free = vl_span_eq(action, "free_completed") || vl_span_eq(action, "free_requested");
    if (is_alloc || frees_now || other_free) {
        if (number(b, f[COL_ADDR], line, "addr", &addr) != 0) return -1;
        if (number(b, f[COL_SIZE], line, "size", &size) != 0) return -1;
        if (is_alloc) return vl_tb_alloc(b, addr, size, stream, line);
        if (frees_now) return vl_tb_free(b, addr, stream, line);
        return 0;
    }
    if (vl_span_eq(action, "oom")) {
        b->t->recorded_ooms++;
        return 0;
    }
    if (vl_span_eq(action, "snapshot") || vl_span_eq(action, "segment_alloc") ||
        vl_span_eq(action, "segment_free") || vl_span_eq(action, "segment_map") ||
        vl_span_eq(action, "segment_unmap")) {
        b->t->skipped_records++;
        return 0;
    }
    return vl_tb_error(b, line, "unknown action (alloc, free_requested, free_completed, segment_*, snapshot, oom)");
}

int vl_trace_parse_torch_csv(vl_trace_builder *b, const char *data, size_t len, const vl_trace_options *opt)
{
    return vl_csvcols_parse(b, data, len, torch_cols, NCOLS, torch_row, (void *)opt);
}
