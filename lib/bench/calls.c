/* Device-call CSV fields shared by the benches (see calls.h). */
#include "calls.h"

#include <stdio.h>

#include "csv.h"

/* One count and its rate per 1,000 ops, or two empty fields. */
static void delta(int64_t before, int64_t after, double ops, char *count, char *rate, size_t len)
{
    count[0] = rate[0] = '\0';
    if (before == VL_UNKNOWN || after == VL_UNKNOWN) return;
    vl_csv_i64(after - before, count, len);
    if (ops > 0) snprintf(rate, len, "%.3f", 1000.0 * (double)(after - before) / ops);
}

const char *vl_bench_call_values(const vl_alloc_stats *before, const vl_alloc_stats *after, double ops, char *buf,
                                 size_t buflen)
{
    char maps[32], unmaps[32], map_rate[32], unmap_rate[32];
    delta(before->device_allocs, after->device_allocs, ops, maps, map_rate, sizeof maps);
    delta(before->device_frees, after->device_frees, ops, unmaps, unmap_rate, sizeof unmaps);
    snprintf(buf, buflen, "%s,%s,%s,%s", maps, unmaps, map_rate, unmap_rate);
    return buf;
}
