/* Internal to lib/trace: splitting a byte buffer into lines and fields without ever
 * reading past its end or relying on a terminating NUL (parsers get arbitrary bytes). */
#ifndef VL_TRACE_LINES_H
#define VL_TRACE_LINES_H

#include <stddef.h>
#include <stdint.h>

typedef struct vl_span {
    const char *p;
    size_t n;
} vl_span;

typedef struct vl_line_reader {
    const char *data;
    size_t len, pos;
    uint32_t line; /* number of the line last returned, from 1 */
} vl_line_reader;

void vl_lines_init(vl_line_reader *r, const char *data, size_t len);
/* The next line without its "\n" or "\r\n"; 0 at the end of the buffer, -1 when the
 * line number would overflow. */
int vl_lines_next(vl_line_reader *r, vl_span *line);

vl_span vl_span_trim(vl_span s);
int vl_span_eq(vl_span s, const char *word);      /* exact, case-sensitive */
int vl_span_ieq(vl_span s, const char *word);     /* ASCII case-insensitive */
/* Blank or starting with '#' (after leading blanks). */
int vl_span_is_comment(vl_span s);

/* Splits on sep into at most max trimmed fields; a field in double quotes loses them.
 * Returns the number of fields, or max + 1 when there are more. */
size_t vl_split(vl_span s, char sep, vl_span *fields, size_t max);
/* Splits on runs of blanks (space, tab). Same return convention. */
size_t vl_split_blanks(vl_span s, vl_span *fields, size_t max);

/* Unsigned integer: decimal, or hex with a 0x/0X prefix. 0 or -1 (empty, junk, overflow). */
int vl_span_u64(vl_span s, uint64_t *out);

#endif
