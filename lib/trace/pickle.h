/* Internal to lib/trace: torch pickle snapshots, which C does not parse; the
 * repository's converter (scripts/torch-snapshot-to-csv) turns them into torch-csv. */
#ifndef VL_TRACE_PICKLE_H
#define VL_TRACE_PICKLE_H

#include "trace.h"

/* Runs the converter on the pickle at path and parses its torch-csv output from a
 * pipe. argv0 (may be NULL) helps find the converter next to the program. Returns 0;
 * -1 with a reason in err; -2 when the converter already said what is wrong (on
 * stderr, one line) and err is empty. */
int vl_trace_parse_pickle(const char *argv0, const char *path, vl_trace_options opt, vl_trace *out, char *err,
                          size_t errlen);

#endif
