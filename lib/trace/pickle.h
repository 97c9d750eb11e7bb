/* Internal to lib/trace: torch pickle snapshots, which C does not parse; the
 * repository's converter (scripts/torch-snapshot-to-csv, which loads only plain data
 * through scripts/torch/snapshot_load.py) turns them into torch-csv. The converter is
 * $VRAMLAB_TORCH_CONVERTER, or the one beside the program's binary or in the
 * repository it was built in; never one found through the working directory. */
#ifndef VL_TRACE_PICKLE_H
#define VL_TRACE_PICKLE_H

#include <stddef.h>

#include "trace.h"

/* Runs the converter on the pickle at path and parses its torch-csv output from a
 * pipe. Returns 0; -1 with a reason in err; -2 when the converter already said what is
 * wrong (on stderr, one line) and err is empty. The converter dies with this process. */
int vl_trace_parse_pickle(const char *path, vl_trace_options opt, vl_trace *out, char *err, size_t errlen);

/* The same for a pickle held in memory (standard input), handed to the converter
 * through an anonymous file. */
int vl_trace_parse_pickle_bytes(const char *data, size_t len, vl_trace_options opt, vl_trace *out, char *err,
                                size_t errlen);

#endif
