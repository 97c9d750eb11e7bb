/* The one value checker behind command-line and SPEC options (see opt.h). */
#include "opt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "size.h"

/* Choice index of word in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *word)
{
    int idx = 0;
    size_t wl = strlen(word);
    for (const char *p = choices; p && *p; idx++) {
        size_t len = strcspn(p, "|");
        if (len == wl && strncmp(p, word, len) == 0) return idx;
        p += len;
        if (*p == '|') p++;
    }
    return -1;
}

static int parse_bool(const char *t, int64_t *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(t, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(t, no[i]) == 0) return *out = 0, 0;
    }
    return -1;
}

static int check_range(const vl_opt *o, double v, const char *text, char *why, size_t whylen)
{
    if (o->min == 0 && o->max == 0) {
        if (v >= 0) return 0;
        snprintf(why, whylen, "'%s' must not be negative", text);
        return -1;
    }
    if (v >= o->min && v <= o->max) return 0;
    snprintf(why, whylen, "'%s' is out of range [%g, %g]", text, o->min, o->max);
    return -1;
}

int vl_opt_parse_value(const vl_opt *o, const char *text, vl_opt_value *out, char *why, size_t whylen)
{
    char *end;
    memset(out, 0, sizeof *out);
    switch (o->kind) {
    case VL_OPT_FLAG:
    case VL_OPT_BOOL:
        if (parse_bool(text, &out->integer) == 0) return 0;
        snprintf(why, whylen, "'%s' is not a boolean (use 0 or 1)", text);
        return -1;
    case VL_OPT_INT:
        errno = 0;
        out->integer = strtoll(text, &end, 10);
        if (!*text || *end || errno) {
            snprintf(why, whylen, "'%s' is not an integer", text);
            return -1;
        }
        return check_range(o, (double)out->integer, text, why, whylen);
    case VL_OPT_SIZE:
        if (vl_parse_size(text, &out->size, why, whylen) != 0) return -1;
        return check_range(o, (double)out->size, text, why, whylen);
    case VL_OPT_DOUBLE:
        errno = 0;
        out->number = strtod(text, &end);
        if (!*text || *end || errno || !isfinite(out->number)) {
            snprintf(why, whylen, "'%s' is not a number", text);
            return -1;
        }
        return check_range(o, out->number, text, why, whylen);
    case VL_OPT_ENUM:
        out->choice = choice_index(o->choices, text);
        if (out->choice >= 0) return 0;
        snprintf(why, whylen, "'%s' must be one of %s", text, o->choices ? o->choices : "(none)");
        return -1;
    case VL_OPT_STRING:
        return 0;
    }
    snprintf(why, whylen, "option of unknown kind %d", (int)o->kind);
    return -1;
}

void vl_opt_store(const vl_opt *o, const char *text, const vl_opt_value *v)
{
    if (!o->target) return;
    switch (o->kind) {
    case VL_OPT_FLAG:
    case VL_OPT_BOOL: *(int *)o->target = v->integer != 0; return;
    case VL_OPT_INT: *(int64_t *)o->target = v->integer; return;
    case VL_OPT_SIZE: *(uint64_t *)o->target = v->size; return;
    case VL_OPT_DOUBLE: *(double *)o->target = v->number; return;
    case VL_OPT_STRING:
    case VL_OPT_ENUM: *(const char **)o->target = text; return;
    }
}

const char *vl_opt_type_name(const vl_opt *o)
{
    switch (o->kind) {
    case VL_OPT_FLAG: return "flag";
    case VL_OPT_BOOL: return "0|1";
    case VL_OPT_INT: return "integer";
    case VL_OPT_SIZE: return "size";
    case VL_OPT_DOUBLE: return "number";
    case VL_OPT_ENUM: return o->choices ? o->choices : "choice";
    case VL_OPT_STRING: return "text";
    }
    return "?";
}

void vl_opt_default_text(const vl_opt *o, char *buf, size_t len)
{
    if (!o->target) {
        snprintf(buf, len, "%s", o->default_value ? o->default_value : "(none)");
        return;
    }
    switch (o->kind) {
    case VL_OPT_FLAG: snprintf(buf, len, "%s", *(const int *)o->target ? "on" : "off"); return;
    case VL_OPT_BOOL: snprintf(buf, len, "%d", *(const int *)o->target); return;
    case VL_OPT_INT: snprintf(buf, len, "%lld", (long long)*(const int64_t *)o->target); return;
    case VL_OPT_SIZE: vl_format_size(*(const uint64_t *)o->target, buf, len); return;
    case VL_OPT_DOUBLE: snprintf(buf, len, "%g", *(const double *)o->target); return;
    case VL_OPT_STRING:
    case VL_OPT_ENUM: {
        const char *s = *(const char *const *)o->target;
        snprintf(buf, len, "%s", s ? s : "(none)");
        return;
    }
    }
}
