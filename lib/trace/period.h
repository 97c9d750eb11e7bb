/* Whether a trace repeats exactly: the smallest period, in allocations, with which its
 * allocations repeat in the second half of the trace, sizes and lifetimes alike. A
 * fixed-shape training loop repeats so from its second step on; a workload whose shapes
 * change every step does not. An allocator could lay such a trace out once and serve
 * every later period from that plan (lib/caching/README.md). */
#ifndef VL_TRACE_PERIOD_H
#define VL_TRACE_PERIOD_H

#include <stddef.h>

#include "trace.h"

/* The period found (0: none), the allocations compared to find it. */
typedef struct vl_trace_period {
    size_t allocs;   /* the period in allocations, 0 when the trace does not repeat */
    size_t compared; /* allocations of the second half checked against the one a period earlier */
} vl_trace_period;

/* Allocation k of the second half repeats allocation k - P when both asked for the same
 * size and lived as long (in allocations made until their free; one never freed matches
 * any). The period is the smallest P, from 1 to a quarter of the allocations, for which
 * every allocation of the second half repeats, but for the last period: how a recording
 * ends (a last step, a teardown) changes when its last blocks are freed. At least two
 * periods are compared. Returns 0, or -1 out of host memory. */
int vl_trace_find_period(const vl_trace *t, vl_trace_period *out);

#endif
