/* Internal to lib/trace: the shared reading of header-first CSV traces (torch-csv,
 * rmm): the first non-comment line names the columns, in any order; each later line
 * must have as many fields, and a parser's row function gets the fields it asked for
 * by name (an optional column that is absent arrives as an empty field). */
#ifndef VL_TRACE_CSVCOLS_H
#define VL_TRACE_CSVCOLS_H

#include "builder.h"
#include "lines.h"

#define VL_CSVCOLS_MAX_FIELDS 32

typedef struct vl_csvcols_want {
    const char *name; /* matched case-insensitively */
    int required;
} vl_csvcols_want;

/* fields[i] is the row's field for want[i]. Returns 0 or -1 (error set). */
typedef int (*vl_csvcols_row_fn)(vl_trace_builder *b, const vl_span *fields, uint32_t line, void *ctx);

int vl_csvcols_parse(vl_trace_builder *b, const char *data, size_t len, const vl_csvcols_want *want,
                     size_t nwant, vl_csvcols_row_fn row, void *ctx);

#endif
