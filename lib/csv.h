/* CSV output: '#' metadata lines (lib/runinfo.h, then the program's own), one header
 * row, data rows. Units belong in column names (_bytes, _ns, _ms, _gbps).
 * An unknown or unmeasured value is an empty field, never 0 or -1: readers
 * (scripts/compare, plots, scripts/matrix, scripts/findings) take it as missing. */
#ifndef VL_CSV_H
#define VL_CSV_H

#include <stdio.h>

#include "runinfo.h"

typedef struct vl_csv vl_csv;

/* path NULL or "-": stdout. A file is written to a temporary name in its folder
 * (".NAME.XXXXXX") and renamed to path by vl_csv_close, so path never holds a half
 * written CSV; SIGTERM, SIGINT and SIGHUP remove the temporary file (a program whose
 * parent left them at their defaults). Returns NULL with a reason in err. */
vl_csv *vl_csv_open(const char *path, const vl_run_info *ri, char *err, size_t errlen);
/* A '# key: value' line; only before the header. */
void vl_csv_meta(vl_csv *c, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The header row: the table's columns, declared once as one comma-separated list.
 * Every row is checked against it. Returns 0, or -1 when the write failed. */
int vl_csv_header(vl_csv *c, const char *columns);
/* One data row, printf-style, without the newline. Flushed at once so a crash or a
 * kill keeps every finished row. A row with more or fewer fields than the header has
 * columns (commas inside double quotes do not separate) is not written: returns -1,
 * the CSV counts as failed (vl_csv_close returns -1) and vl_csv_error says which row.
 * Returns 0 when written. */
int vl_csv_row(vl_csv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The first failure of a row or a write, one line; NULL while none. */
const char *vl_csv_error(const vl_csv *c);
/* A statistic that may be VL_UNKNOWN: writes "" for unknown, the number otherwise. */
const char *vl_csv_i64(long long v, char *buf, size_t buflen);
/* A measured ratio or time that may be unknown (NaN or infinite): "" for unknown,
 * the number with DECIMALS decimals otherwise. */
const char *vl_csv_f64(double v, int decimals, char *buf, size_t buflen);
/* Closes and gives the file its final name; returns 0, or -1 if any row or write
 * failed (the rows written are still kept under the final name). */
int vl_csv_close(vl_csv *c);
/* Closes without a result: the temporary file is removed, the final name untouched. */
void vl_csv_discard(vl_csv *c);
/* 1 when a and b name the same existing file (any path, hard or symbolic link: the
 * same device and inode), 0 otherwise; "-" is no file. */
int vl_csv_same_file(const char *a, const char *b);

#endif
