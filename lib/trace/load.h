/* Loading a trace the way a program names it: a path or '-' (standard input), any
 * format of trace.h, torch pickles included (through scripts/torch-snapshot-to-csv).
 * The format is told by vl_trace_guess, the one sniff rule, unless opt names it. */
#ifndef VL_TRACE_LOAD_H
#define VL_TRACE_LOAD_H

#include "trace.h"

/* The most bytes a trace file or stream may have; more is refused (it is read whole).
 * $VRAMLAB_TRACE_MAX_BYTES sets another limit. */
#define VL_TRACE_MAX_BYTES ((size_t)16 << 30)

/* Reads, checks and parses the trace at path ('-': standard input). Returns 0 with a trace
 * of at least one operation; -1 with one line in err, "PATH:LINE: reason" or
 * "PATH: reason" (PATH "<stdin>" for '-'); -2 when the pickle converter already said
 * on stderr what is wrong (err empty). Nothing to free after an error. */
int vl_trace_load(const char *path, const vl_trace_options *opt, vl_trace *out, char *err, size_t errlen);

/* One line about frees of addresses that were not live (left out of the trace), with
 * their first line numbers; "" when there were none. */
const char *vl_trace_unknown_frees_note(const vl_trace *t, const char *path, char *buf, size_t buflen);

#endif
