/* Line and field splitting for the trace parsers (see lines.h). */
#include "lines.h"

#include <string.h>

void vl_lines_init(vl_line_reader *r, const char *data, size_t len)
{
    r->data = data;
    r->len = data ? len : 0;
    r->pos = 0;
    r->line = 0;
}

int vl_lines_next(vl_line_reader *r, vl_span *line)
{
    if (r->pos >= r->len) return 0;
    if (r->line == UINT32_MAX) return -1;
    const char *start = r->data + r->pos;
    size_t rest = r->len - r->pos;
    const char *nl = memchr(start, '\n', rest);
    size_t n = nl ? (size_t)(nl - start) : rest;
    r->pos += nl ? n + 1 : n;
    if (n > 0 && start[n - 1] == '\r') n--;
    r->line++;
    line->p = start;
    line->n = n;
    return 1;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

vl_span vl_span_trim(vl_span s)
{
    while (s.n > 0 && is_blank(s.p[0])) s.p++, s.n--;
    while (s.n > 0 && is_blank(s.p[s.n - 1])) s.n--;
    return s;
}

int vl_span_eq(vl_span s, const char *word)
{
    size_t n = strlen(word);
    return s.n == n && memcmp(s.p, word, n) == 0;
}

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

int vl_span_ieq(vl_span s, const char *word)
{
    size_t n = strlen(word);
    if (s.n != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (lower(s.p[i]) != lower(word[i])) return 0;
    return 1;
}

int vl_span_is_comment(vl_span s)
{
    s = vl_span_trim(s);
    return s.n == 0 || s.p[0] == '#';
}

static vl_span unquote(vl_span f)
{
    f = vl_span_trim(f);
    if (f.n >= 2 && f.p[0] == '"' && f.p[f.n - 1] == '"') {
        f.p++;
        f.n -= 2;
        f = vl_span_trim(f);
    }
    return f;
}

size_t vl_split(vl_span s, char sep, vl_span *fields, size_t max)
{
    size_t count = 0, start = 0;
    for (size_t i = 0; i <= s.n; i++) {
        if (i < s.n && s.p[i] != sep) continue;
        if (count == max) return max + 1;
        fields[count++] = unquote((vl_span){s.p + start, i - start});
        start = i + 1;
    }
    return count;
}

size_t vl_split_blanks(vl_span s, vl_span *fields, size_t max)
{
    size_t count = 0, i = 0;
    while (i < s.n) {
        while (i < s.n && is_blank(s.p[i])) i++;
        if (i == s.n) break;
        size_t start = i;
        while (i < s.n && !is_blank(s.p[i])) i++;
        if (count == max) return max + 1;
        fields[count++] = (vl_span){s.p + start, i - start};
    }
    return count;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = lower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

int vl_span_u64(vl_span s, uint64_t *out)
{
    s = vl_span_trim(s);
    unsigned base = 10;
    if (s.n > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X')) {
        base = 16;
        s.p += 2;
        s.n -= 2;
    }
    if (s.n == 0) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < s.n; i++) {
        int d = hex_digit(s.p[i]);
        if (d < 0 || (unsigned)d >= base) return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / base) return -1;
        v = v * base + (uint64_t)d;
    }
    *out = v;
    return 0;
}
