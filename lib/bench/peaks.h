/* The peak-memory columns that benches share: what the allocator says it needed at its
 * peak, and reserved/allocated (the overhead of its caching and rounding). A statistic
 * the backend cannot know (VL_UNKNOWN) is an empty field, never 0. */
#ifndef VL_BENCH_PEAKS_H
#define VL_BENCH_PEAKS_H

#include <stddef.h>

#include "alloc.h"

#define VL_BENCH_PEAK_COLUMNS "peak_requested_bytes,peak_allocated_bytes,peak_reserved_bytes,reserved_over_allocated"

/* The values for VL_BENCH_PEAK_COLUMNS, comma-separated. */
const char *vl_bench_peak_values(const vl_alloc_stats *st, char *buf, size_t buflen);

#endif
