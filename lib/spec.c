/* SPEC parsing against an option table (see spec.h). */
#include "spec.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>


int vl_spec_name(const char *text, char *name, size_t namelen, char *err, size_t errlen)
{
    if (!text || !*text) {
        snprintf(err, errlen, "empty SPEC");
        return -1;
    }
    size_t n = strcspn(text, ":");
    if (n == 0) {
        snprintf(err, errlen, "SPEC '%s' has no name before ':'", text);
        return -1;
    }
    if (n >= namelen) {
        snprintf(err, errlen, "SPEC name too long in '%.40s...'", text);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)text[i]) && text[i] != '_' && text[i] != '-') {
            snprintf(err, errlen, "SPEC '%s': bad character in name", text);
            return -1;
        }
    }
    memcpy(name, text, n);
    name[n] = '\0';
    return 0;
}

/* Checks v->text with the shared checker, so a SPEC value fails as the same value of
 * a command-line option does. */
static int convert_value(const char *owner, vl_spec_value *v, char *err, size_t errlen)
{
    char why[256];
    if (vl_opt_parse_value(v->opt, v->text, &v->value, why, sizeof why) == 0) return 0;
    snprintf(err, errlen, "%s: option %s: %s", owner, v->opt->name, why);
    return -1;
}

static void list_keys(const vl_opt *opts, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const vl_opt *o = opts; o && o->name && used < len; o++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", o->name);
    if (!opts || !opts->name) snprintf(buf, len, "none");
}

/* The value of v as its option's text: a choice's name, 0/1 for a boolean. */
static const char *canonical_text(const vl_spec_value *v, char *buf, size_t len)
{
    if (v->opt->kind == VL_OPT_BOOL) {
        snprintf(buf, len, "%d", v->value.integer != 0);
        return buf;
    }
    return v->text;
}

/* Whether `text` is one of the '|'-separated alternatives. */
static int one_of(const char *text, const char *alternatives)
{
    size_t n = strlen(text);
    for (const char *a = alternatives; *a;) {
        size_t len = strcspn(a, "|");
        if (len == n && strncmp(a, text, n) == 0) return 1;
        a += len + (a[len] == '|');
    }
    return 0;
}

/* Required options are present; a given option whose applies_if does not hold is refused. */
static int check_given(const vl_spec *s, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->nvalues; i++) {
        const vl_spec_value *v = &s->values[i];
        if (v->opt->required && !v->present) {
            snprintf(err, errlen, "%s: option %s is required", s->name, v->opt->name);
            return -1;
        }
        const char *cond = v->opt->applies_if;
        if (!v->given || !cond) continue;
        size_t klen = strcspn(cond, "=");
        const vl_spec_value *k = NULL;
        for (size_t j = 0; j < s->nvalues; j++)
            if (strlen(s->values[j].opt->name) == klen && strncmp(s->values[j].opt->name, cond, klen) == 0)
                k = &s->values[j];
        if (!k) abort(); /* a condition on an undeclared option: a programming error */
        char buf[8];
        const char *have = k->present ? canonical_text(k, buf, sizeof buf) : "";
        if (!one_of(have, cond + klen + (cond[klen] == '='))) {
            snprintf(err, errlen, "%s: option %s applies only with %s (here %s=%s)", s->name, v->opt->name, cond,
                     k->opt->name, k->present ? have : "(none)");
            return -1;
        }
    }
    return 0;
}

int vl_spec_parse(const char *text, const vl_opt *opts, vl_spec *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (vl_spec_name(text, out->name, sizeof out->name, err, errlen) != 0) return -1;
    if (strlen(text) >= sizeof out->text) {
        snprintf(err, errlen, "SPEC too long (%zu characters, at most %zu)", strlen(text), sizeof out->text - 1);
        return -1;
    }
    strcpy(out->text, text);
    for (const vl_opt *o = opts; o && o->name; o++) {
        if (out->nvalues == VL_SPEC_MAX_OPTS) abort(); /* option table larger than the spec can hold */
        vl_spec_value *v = &out->values[out->nvalues++];
        v->opt = o;
        if (o->default_value) {
            snprintf(v->text, sizeof v->text, "%s", o->default_value);
            v->present = 1;
            if (convert_value(out->name, v, err, errlen) != 0) abort(); /* a bad default is a programming error */
        }
    }
    const char *rest = text + strlen(out->name);
    if (*rest == '\0') return check_given(out, err, errlen);
    rest++; /* ':' */
    if (*rest == '\0') {
        snprintf(err, errlen, "%s: nothing after ':'", out->name);
        return -1;
    }
    char keys[400];
    for (int index = 0; *rest; index++) {
        size_t len = strcspn(rest, ",");
        if (len == 0) {
            snprintf(err, errlen, "%s: empty option in '%s'", out->name, text);
            return -1;
        }
        const char *eq = memchr(rest, '=', len);
        char key[64];
        const char *value;
        size_t vlen;
        const vl_opt *found = NULL;
        vl_spec_value *slot = NULL;
        if (eq) {
            size_t klen = (size_t)(eq - rest);
            if (klen == 0 || klen >= sizeof key) {
                snprintf(err, errlen, "%s: malformed option '%.*s'", out->name, (int)len, rest);
                return -1;
            }
            memcpy(key, rest, klen);
            key[klen] = '\0';
            value = eq + 1;
            vlen = len - klen - 1;
        } else {
            /* A bare value: only first, and only for a positional option. */
            for (size_t i = 0; i < out->nvalues; i++)
                if (out->values[i].opt->positional) slot = &out->values[i];
            if (index != 0 || !slot) {
                list_keys(opts, keys, sizeof keys);
                snprintf(err, errlen, "%s: '%.*s' is not key=value (options: %s)", out->name, (int)len, rest, keys);
                return -1;
            }
            snprintf(key, sizeof key, "%s", slot->opt->name);
            value = rest;
            vlen = len;
        }
        for (size_t i = 0; !slot && i < out->nvalues; i++)
            if (strcmp(out->values[i].opt->name, key) == 0) slot = &out->values[i];
        if (!slot) {
            list_keys(opts, keys, sizeof keys);
            snprintf(err, errlen, "%s: unknown option '%s' (options: %s)", out->name, key, keys);
            return -1;
        }
        found = slot->opt;
        if (slot->given) {
            snprintf(err, errlen, "%s: option %s given twice", out->name, found->name);
            return -1;
        }
        if (vlen == 0) {
            snprintf(err, errlen, "%s: option %s has an empty value", out->name, found->name);
            return -1;
        }
        if (vlen >= sizeof slot->text) {
            snprintf(err, errlen, "%s: option %s value too long", out->name, found->name);
            return -1;
        }
        memcpy(slot->text, value, vlen);
        slot->text[vlen] = '\0';
        slot->given = slot->present = 1;
        if (convert_value(out->name, slot, err, errlen) != 0) return -1;
        rest += len;
        if (*rest == ',') {
            rest++;
            if (*rest == '\0') {
                snprintf(err, errlen, "%s: trailing ',' in '%s'", out->name, text);
                return -1;
            }
        }
    }
    return check_given(out, err, errlen);
}

const vl_spec_value *vl_spec_get(const vl_spec *s, const char *key)
{
    for (size_t i = 0; i < s->nvalues; i++)
        if (strcmp(s->values[i].opt->name, key) == 0) return &s->values[i];
    fprintf(stderr, "vramlab: internal error: option '%s' not declared for %s\n", key, s->name);
    abort();
}

uint64_t vl_spec_size(const vl_spec *s, const char *key) { return vl_spec_get(s, key)->value.size; }
int64_t vl_spec_int(const vl_spec *s, const char *key) { return vl_spec_get(s, key)->value.integer; }
int vl_spec_bool(const vl_spec *s, const char *key) { return vl_spec_get(s, key)->value.integer != 0; }
double vl_spec_double(const vl_spec *s, const char *key) { return vl_spec_get(s, key)->value.number; }
int vl_spec_choice(const vl_spec *s, const char *key) { return vl_spec_get(s, key)->value.choice; }
int vl_spec_given(const vl_spec *s, const char *key) { return vl_spec_get(s, key)->given; }
const char *vl_spec_str(const vl_spec *s, const char *key)
{
    const vl_spec_value *v = vl_spec_get(s, key);
    return v->present ? v->text : NULL;
}

void vl_spec_print_docs(FILE *out, const vl_opt *opts)
{
    if (!opts || !opts->name) {
        fprintf(out, "    (no options)\n");
        return;
    }
    for (const vl_opt *o = opts; o->name; o++) {
        char def[64];
        vl_opt_default_text(o, def, sizeof def);
        fprintf(out, "    %-20s %-22s default %-10s %s\n", o->name, vl_opt_type_name(o), def, o->help ? o->help : "");
    }
}
