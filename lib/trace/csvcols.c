/* Header-first CSV reading shared by the torch-csv and rmm parsers (see csvcols.h). */
#include "csvcols.h"

static int read_header(vl_trace_builder *b, vl_span line, uint32_t lineno, const vl_csvcols_want *want,
                       size_t nwant, int *index, size_t *nfields)
{
    vl_span cols[VL_CSVCOLS_MAX_FIELDS];
    size_t n = vl_split(line, ',', cols, VL_CSVCOLS_MAX_FIELDS);
    if (n > VL_CSVCOLS_MAX_FIELDS) return vl_tb_error(b, lineno, "header has more than %d columns", VL_CSVCOLS_MAX_FIELDS);
    for (size_t w = 0; w < nwant; w++) {
        index[w] = -1;
        for (size_t c = 0; c < n; c++)
            if (vl_span_ieq(cols[c], want[w].name)) {
                if (index[w] >= 0) return vl_tb_error(b, lineno, "column '%s' appears twice", want[w].name);
                index[w] = (int)c;
            }
        if (index[w] < 0 && want[w].required)
            return vl_tb_error(b, lineno, "header lacks column '%s'", want[w].name);
    }
    *nfields = n;
    return 0;
}

int vl_csvcols_parse(vl_trace_builder *b, const char *data, size_t len, const vl_csvcols_want *want,
                     size_t nwant, vl_csvcols_row_fn row, void *ctx)
{
    int index[VL_CSVCOLS_MAX_FIELDS];
    size_t nfields = 0;
    int have_header = 0, rc;
    vl_line_reader r;
    vl_span line;
    if (nwant > VL_CSVCOLS_MAX_FIELDS) return vl_tb_error(b, 0, "too many wanted columns");
    vl_lines_init(&r, data, len);
    while ((rc = vl_lines_next(&r, &line)) > 0) {
        if (vl_span_is_comment(line)) continue;
        if (!have_header) {
            if (read_header(b, line, r.line, want, nwant, index, &nfields) != 0) return -1;
            have_header = 1;
            continue;
        }
        vl_span cols[VL_CSVCOLS_MAX_FIELDS], fields[VL_CSVCOLS_MAX_FIELDS];
        size_t n = vl_split(line, ',', cols, VL_CSVCOLS_MAX_FIELDS);
        if (n != nfields) return vl_tb_error(b, r.line, "%zu fields where the header has %zu", n, nfields);
        for (size_t w = 0; w < nwant; w++)
            fields[w] = index[w] >= 0 ? cols[index[w]] : (vl_span){"", 0};
        if (row(b, fields, r.line, ctx) != 0) return -1;
    }
    if (rc < 0) return vl_tb_error(b, 0, "too many lines");
    if (!have_header) return vl_tb_error(b, 0, "no header line");
    return 0;
}
