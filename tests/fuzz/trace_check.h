/* The body shared by the trace-parser fuzz targets (fuzz_trace_FORMAT.c): parse the
 * input bytes, exactly as long as given and without a terminating NUL, through the
 * public memory-buffer entry point of lib/trace/trace.h, then check the documented
 * invariants of the result. Each format is its own target so that each keeps its own
 * corpus (tests/corpus/trace_FORMAT/). */
#ifndef VL_FUZZ_TRACE_CHECK_H
#define VL_FUZZ_TRACE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* Parses data with opt and checks the result; aborts (a libFuzzer crash) on a violation. */
void vl_fuzz_trace_one(const uint8_t *data, size_t size, const vl_trace_options *opt);

#endif
