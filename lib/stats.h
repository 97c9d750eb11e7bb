/* Summary statistics over repeated measurements: median and spread, never a mean alone. */
#ifndef VL_STATS_H
#define VL_STATS_H

#include <stddef.h>

typedef struct vl_summary {
    size_t n;
    double min, p1, p25, median, p75, p99, max, mean;
    double iqr; /* p75 - p25 */
} vl_summary;

/* Sorts samples in place and summarises them (linear interpolation between order
 * statistics). n == 0 gives n = 0 and NaN everywhere else. */
vl_summary vl_summarize(double *samples, size_t n);

/* The CSV column names and values for a summary, with a unit suffix:
 * vl_summary_columns("alloc", "ns") -> "alloc_median_ns,alloc_p1_ns,...". The values of
 * a summary of no samples are its n (0) and empty fields: unknown, not NaN. */
const char *vl_summary_columns(const char *prefix, const char *unit, char *buf, size_t buflen);
const char *vl_summary_values(const vl_summary *s, char *buf, size_t buflen);

/* count / seconds (ops/s, bytes/s): NaN, an unknown rate (an empty CSV field through
 * vl_csv_f64), when seconds is not a positive time: a span too short for the clock
 * to measure has no rate, and 0 would read as a measured standstill. */
double vl_rate(double count, double seconds);

#endif
