/* The device-call columns benches share: how often the allocator called the device's
 * allocator over a measured stretch (cudaMalloc / cudaFree for classic segments and raw,
 * VMM maps and unmaps for expandable segments), in all and per 1,000 operations. A count
 * the backend cannot know (VL_UNKNOWN) is an empty field, never 0. */
#ifndef VL_BENCH_CALLS_H
#define VL_BENCH_CALLS_H

#include <stddef.h>

#include "alloc.h"

#define VL_BENCH_CALL_COLUMNS "map_calls,unmap_calls,maps_per_kop,unmaps_per_kop"

/* The values for VL_BENCH_CALL_COLUMNS between two readings of the statistics, over ops
 * operations (allocs and frees; 0: the rates are empty). */
const char *vl_bench_call_values(const vl_alloc_stats *before, const vl_alloc_stats *after, double ops, char *buf,
                                 size_t buflen);

#endif
