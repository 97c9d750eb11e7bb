/* CSV output: '#' metadata lines (lib/runinfo.h, then the program's own), one header
 * row, data rows. Units belong in column names (_bytes, _ns, _ms, _gbps).
 * An unknown or unmeasured value is an empty field, never 0 or -1: readers
 * (scripts/compare, plots, scripts/matrix, scripts/findings) take it as missing. */
#ifndef VL_CSV_H
#define VL_CSV_H

#include <stdio.h>

#include "runinfo.h"

typedef struct vl_csv vl_csv;

/* path NULL or "-": stdout. What path is decides how it is written:
 *  - a regular file, or a path that does not exist: written to a temporary name in its
 *    folder (".NAME.XXXXXX") and renamed to path by vl_csv_close, so path never holds a
 *    half written CSV; SIGTERM, SIGINT and SIGHUP remove the temporary file (a program
 *    whose parent left them at their defaults), and so does an exit before the close;
 *  - a symbolic link to a regular file: its target is written that way (the temporary
 *    file in the target's folder), the link kept; a link to nothing is refused;
 *  - a character device (/dev/null) or a FIFO: written in place, no temporary file, no
 *    rename (the node stays what it is; a FIFO's open waits for its reader). A link to
 *    one is written in place too;
 *  - a folder, a socket, a block device, anything else: refused, "cannot write PATH: it
 *    is a folder" (a socket, a block device).
 * Returns NULL with a reason (one line) in err. */
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
/* Closes without a result: the temporary file is removed, the final name untouched
 * (written in place, the rows already written stay written). */
void vl_csv_discard(vl_csv *c);
/* 1 when a and b name the same existing file (any path, hard or symbolic link: the
 * same device and inode), 0 otherwise; "-" is no file. */
int vl_csv_same_file(const char *a, const char *b);
/* The checks a program makes before it writes: 1 when they clash, 0 otherwise. Files
 * are compared by device and inode, through links; a character device (a terminal,
 * /dev/null) never clashes, as writing it changes nothing that is read or kept.
 * vl_csv_onto_input: the output path out is the input in, which "-" makes standard
 * input (fd 0). vl_csv_onto_fd: out is the file open at fd. out NULL or "-" (standard
 * output) is no file for either. */
int vl_csv_onto_input(const char *out, const char *in);
int vl_csv_onto_fd(const char *out, int fd);
/* 1 when two outputs of one run are one file: both "-", or "-" and the file standard
 * output is; existing files by device and inode; paths that do not exist yet by the name
 * they would get (the real path of their folder and their last component), so that
 * "x.csv", "./x.csv" and "dir/../x.csv" clash. NULL is no output. */
int vl_csv_same_output(const char *a, const char *b);

#endif
