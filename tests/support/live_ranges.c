/* See live_ranges.h. */
#include "live_ranges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First index whose range starts at or after lo. */
static size_t lower_bound(const live_ranges *s, uintptr_t lo)
{
    size_t a = 0, b = s->n;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (s->v[m].lo < lo) a = m + 1;
        else b = m;
    }
    return a;
}

const live_range *live_ranges_add(live_ranges *s, live_range r)
{
    if (r.hi <= r.lo) r.hi = r.lo + 1; /* an empty block still occupies its address */
    size_t i = lower_bound(s, r.lo);
    if (i < s->n && s->v[i].lo < r.hi) return &s->v[i];
    if (i > 0 && s->v[i - 1].hi > r.lo) return &s->v[i - 1];
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        live_range *grown = realloc(s->v, cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "live_ranges: out of host memory\n");
            abort();
        }
        s->v = grown;
        s->cap = cap;
    }
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
    s->v[i] = r;
    s->n++;
    return NULL;
}

live_range live_ranges_take(live_ranges *s, size_t i)
{
    live_range r = s->v[i];
    memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
    s->n--;
    return r;
}

ptrdiff_t live_ranges_find(const live_ranges *s, uintptr_t lo)
{
    size_t i = lower_bound(s, lo);
    return i < s->n && s->v[i].lo == lo ? (ptrdiff_t)i : -1;
}

void live_ranges_free(live_ranges *s)
{
    free(s->v);
    *s = (live_ranges){0};
}
