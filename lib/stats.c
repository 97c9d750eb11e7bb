/* Order statistics over samples (see stats.h). */
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q in [0,1] of sorted samples, linear interpolation (type 7, as R and numpy). */
static double quantile(const double *sorted, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double frac = pos - (double)i;
    if (i + 1 >= n) return sorted[n - 1];
    return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

vl_summary vl_summarize(double *samples, size_t n)
{
    vl_summary s = {.n = n};
    if (n == 0) {
        s.min = s.p1 = s.p25 = s.median = s.p75 = s.p99 = s.max = s.mean = s.iqr = NAN;
        return s;
    }
    qsort(samples, n, sizeof *samples, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += samples[i];
    s.min = samples[0];
    s.max = samples[n - 1];
    s.p1 = quantile(samples, n, 0.01);
    s.p25 = quantile(samples, n, 0.25);
    s.median = quantile(samples, n, 0.50);
    s.p75 = quantile(samples, n, 0.75);
    s.p99 = quantile(samples, n, 0.99);
    s.mean = sum / (double)n;
    s.iqr = s.p75 - s.p25;
    return s;
}

const char *vl_summary_columns(const char *prefix, const char *unit, char *buf, size_t buflen)
{
    snprintf(buf, buflen,
             "%s_n,%s_median_%s,%s_p1_%s,%s_p25_%s,%s_p75_%s,%s_p99_%s,%s_min_%s,%s_max_%s,%s_iqr_%s",
             prefix, prefix, unit, prefix, unit, prefix, unit, prefix, unit, prefix, unit, prefix, unit,
             prefix, unit, prefix, unit);
    return buf;
}

/* An unknown statistic (NaN: no samples) is an empty field, never "nan" (lib/csv.h). */
static const char *g6(double v, char *buf, size_t buflen)
{
    if (isfinite(v)) snprintf(buf, buflen, "%.6g", v);
    else buf[0] = '\0';
    return buf;
}

const char *vl_summary_values(const vl_summary *s, char *buf, size_t buflen)
{
    char f[8][32];
    snprintf(buf, buflen, "%zu,%s,%s,%s,%s,%s,%s,%s,%s", s->n, g6(s->median, f[0], sizeof f[0]),
             g6(s->p1, f[1], sizeof f[1]), g6(s->p25, f[2], sizeof f[2]), g6(s->p75, f[3], sizeof f[3]),
             g6(s->p99, f[4], sizeof f[4]), g6(s->min, f[5], sizeof f[5]), g6(s->max, f[6], sizeof f[6]),
             g6(s->iqr, f[7], sizeof f[7]));
    return buf;
}

double vl_rate(double count, double seconds)
{
    return seconds > 0 ? count / seconds : NAN;
}
