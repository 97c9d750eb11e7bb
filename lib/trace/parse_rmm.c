/* Parser of RMM's logging_resource_adaptor CSV (Thread,Time,Action,Pointer,Size,Stream).
 * Thread and Time are not needed for replay and are not checked. */
#include "parsers.h"

enum { COL_ACTION, COL_POINTER, COL_SIZE, COL_STREAM, NCOLS };

static const vl_csvcols_want rmm_cols[NCOLS] = {
    [COL_ACTION] = {"Action", 1}, [COL_POINTER] = {"Pointer", 1}, [COL_SIZE] = {"Size", 1}, [COL_STREAM] = {"Stream", 0}};

static int rmm_row(vl_trace_builder *b, const vl_span *f, uint32_t line, void *ctx)
{
    (void)ctx;
    uint64_t ptr, size, stream = 0;
    vl_span action = f[COL_ACTION];
    if (vl_span_ieq(action, "allocate failure") || vl_span_ieq(action, "failure")) {
        b->t->recorded_ooms++;
        return 0;
    }
    int is_alloc = vl_span_ieq(action, "allocate");
    if (!is_alloc && !vl_span_ieq(action, "free") && !vl_span_ieq(action, "deallocate"))
        return vl_tb_error(b, line, "unknown action (allocate, free, deallocate, allocate failure)");
    if (vl_span_u64(f[COL_POINTER], &ptr) != 0) return vl_tb_error(b, line, "bad Pointer");
    if (vl_span_u64(f[COL_SIZE], &size) != 0) return vl_tb_error(b, line, "bad Size");
    if (f[COL_STREAM].n && vl_span_u64(f[COL_STREAM], &stream) != 0) return vl_tb_error(b, line, "bad Stream");
    return is_alloc ? vl_tb_alloc(b, ptr, size, stream, line) : vl_tb_free(b, ptr, stream, line);
}

int vl_trace_parse_rmm(vl_trace_builder *b, const char *data, size_t len, const vl_trace_options *opt)
{
    (void)opt;
    return vl_csvcols_parse(b, data, len, rmm_cols, NCOLS, rmm_row, NULL);
}
