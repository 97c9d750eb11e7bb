/* Peak-memory CSV fields shared by the benches (see peaks.h). */
#include "peaks.h"

#include <stdio.h>

#include "csv.h"

const char *vl_bench_peak_values(const vl_alloc_stats *st, char *buf, size_t buflen)
{
    char req[32], alc[32], res[32], ratio[32] = "";
    if (st->peak_allocated_bytes > 0 && st->peak_reserved_bytes != VL_UNKNOWN)
        snprintf(ratio, sizeof ratio, "%.4f", (double)st->peak_reserved_bytes / (double)st->peak_allocated_bytes);
    snprintf(buf, buflen, "%s,%s,%s,%s", vl_csv_i64(st->peak_requested_bytes, req, sizeof req),
             vl_csv_i64(st->peak_allocated_bytes, alc, sizeof alc), vl_csv_i64(st->peak_reserved_bytes, res, sizeof res),
             ratio);
    return buf;
}
