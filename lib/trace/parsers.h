/* Internal to lib/trace: one entry point per text format; trace.c dispatches to them.
 * Each reads the whole buffer through the builder and returns 0 or -1 (error set). */
#ifndef VL_TRACE_PARSERS_H
#define VL_TRACE_PARSERS_H

#include "builder.h"
#include "csvcols.h"
#include "lines.h"

int vl_trace_parse_vramlab(vl_trace_builder *b, const char *data, size_t len, const vl_trace_options *opt);
int vl_trace_parse_torch_csv(vl_trace_builder *b, const char *data, size_t len, const vl_trace_options *opt);
int vl_trace_parse_rmm(vl_trace_builder *b, const char *data, size_t len, const vl_trace_options *opt);

#endif
