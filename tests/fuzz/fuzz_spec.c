/* libFuzzer target for SPEC strings (lib/spec.h), the text of every --alloc and
 * --device option. It drives the parser through the real entry points and option
 * tables (vl_alloc_spec_check, vl_device_spec_check, every backend's and the
 * simulated device's table) and through a table with one option of every kind.
 *
 * Input: byte 0 picks the entry point, byte 1 the error buffer's size, the rest is
 * the SPEC text. Besides "no crash, no sanitizer report" it checks that a failure
 * gives one NUL-terminated line and that a success yields a consistent vl_spec. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device.h"
#include "util.h"
#include "size.h"
#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every backend, for its option table. */
static const vl_alloc_backend *const all_backends[] = {&vl_backend_raw, &vl_backend_async, &vl_backend_caching,
                                                       &vl_backend_plugin, &vl_backend_torch, &vl_backend_rmm};
#define NBACKENDS (sizeof all_backends / sizeof all_backends[0])

/* One option of every kind, a positional one first, so the fuzzer reaches every
 * value parser whatever the real tables hold today. */
static const vl_opt every_kind[] = {
    {.name = "size", .kind = VL_OPT_SIZE, .default_value = "2MiB", .help = "a size", .positional = 1},
    {.name = "flag", .kind = VL_OPT_BOOL, .default_value = "0", .help = "a boolean"},
    {.name = "count", .kind = VL_OPT_INT, .help = "an integer without default", .min = -1e19, .max = 1e19},
    {.name = "ratio", .kind = VL_OPT_DOUBLE, .default_value = "0.5", .help = "a number"},
    {.name = "mode", .kind = VL_OPT_ENUM, .default_value = "a", .choices = "a|bb|ccc", .help = "a choice"},
    {.name = "path", .kind = VL_OPT_STRING, .help = "a string"},
    {.name = NULL},
};

/* A table whose SPECs must name an option (like plugin's path=). */
static const vl_opt with_required[] = {
    {.name = "path", .kind = VL_OPT_STRING, .help = "a required string", .positional = 1, .required = 1},
    {.name = "limit", .kind = VL_OPT_SIZE, .help = "a size without default"},
    {.name = NULL},
};

static size_t count_docs(const vl_opt *docs)
{
    size_t n = 0;
    while (docs && docs[n].name) n++;
    return n;
}

static size_t count_choices(const char *choices)
{
    size_t n = 1;
    for (const char *c = choices; *c; c++) n += *c == '|';
    return n;
}

/* What a successful parse must look like, whatever the input was. */
static void check_parsed(const vl_spec *sp, const vl_opt *docs, const char *text)
{
    size_t ndocs = count_docs(docs);
    VL_FUZZ_ASSERT(strnlen(sp->name, sizeof sp->name) < sizeof sp->name, "name not terminated for '%s'", text);
    VL_FUZZ_ASSERT(sp->name[0] != '\0', "accepted an empty name: '%s'", text);
    VL_FUZZ_ASSERT(strchr(sp->name, ':') == NULL, "name '%s' holds a ':' (input '%s')", sp->name, text);
    VL_FUZZ_ASSERT(sp->nvalues <= VL_SPEC_MAX_OPTS, "nvalues %zu for '%s'", sp->nvalues, text);
    for (size_t i = 0; i < sp->nvalues; i++) {
        const vl_spec_value *v = &sp->values[i];
        VL_FUZZ_ASSERT(v->opt >= docs && v->opt < docs + ndocs, "value %zu has a doc outside the table ('%s')", i,
                       text);
        VL_FUZZ_ASSERT(!v->given || v->present, "option '%s' given but not present ('%s')", v->opt->name, text);
        VL_FUZZ_ASSERT(strnlen(v->text, sizeof v->text) < sizeof v->text, "value text not terminated ('%s')", text);
        for (size_t j = 0; j < i; j++)
            VL_FUZZ_ASSERT(sp->values[j].opt != v->opt || !v->present || !sp->values[j].present,
                           "option '%s' present twice ('%s')", v->opt->name, text);
        if (!v->present) continue;
        switch (v->opt->kind) {
        case VL_OPT_SIZE:
            VL_FUZZ_ASSERT(v->value.size <= (UINT64_C(1) << 62), "size %llu for '%s'", (unsigned long long)v->value.size, text);
            break;
        case VL_OPT_FLAG:
        case VL_OPT_BOOL:
            VL_FUZZ_ASSERT(v->value.integer == 0 || v->value.integer == 1, "bool %lld for '%s'", (long long)v->value.integer, text);
            break;
        case VL_OPT_DOUBLE:
            VL_FUZZ_ASSERT(!isnan(v->value.number), "NaN accepted for '%s' in '%s'", v->opt->name, text);
            break;
        case VL_OPT_ENUM:
            VL_FUZZ_ASSERT(v->value.choice >= 0 && (size_t)v->value.choice < count_choices(v->opt->choices),
                           "choice %d of '%s' for '%s'", v->value.choice, v->opt->choices, text);
            break;
        case VL_OPT_STRING:
            VL_FUZZ_ASSERT(strchr(v->text, ',') == NULL, "string value with ',' in '%s'", text);
            break;
        case VL_OPT_INT:
            break;
        }
    }
    /* Every option with a default, and every required one, is present once parsed. */
    for (size_t d = 0; d < ndocs; d++) {
        if (!docs[d].required) continue;
        int found = 0;
        for (size_t i = 0; i < sp->nvalues; i++) found |= sp->values[i].opt == &docs[d] && sp->values[i].given;
        VL_FUZZ_ASSERT(found, "required option '%s' missing but '%s' accepted", docs[d].name, text);
    }
    for (size_t d = 0; d < ndocs; d++) {
        if (!docs[d].default_value) continue;
        int found = 0;
        for (size_t i = 0; i < sp->nvalues; i++) found |= sp->values[i].opt == &docs[d] && sp->values[i].present;
        VL_FUZZ_ASSERT(found, "option '%s' has a default but is absent after parsing '%s'", docs[d].name, text);
    }
}

static void parse_against(const char *text, const vl_opt *docs, size_t errlen)
{
    vl_spec *sp = calloc(1, sizeof *sp);
    char *err = malloc(errlen);
    if (vl_spec_parse(text, docs, sp, err, errlen) == 0) {
        check_parsed(sp, docs, text);
        /* Parsing is a function of the text: the same text parses the same way again. */
        vl_spec *again = calloc(1, sizeof *again);
        char err2[256];
        VL_FUZZ_ASSERT(vl_spec_parse(text, docs, again, err2, sizeof err2) == 0, "second parse of '%s' failed: %s",
                       text, err2);
        VL_FUZZ_ASSERT(again->nvalues == sp->nvalues && strcmp(again->name, sp->name) == 0,
                       "second parse of '%s' differs", text);
        free(again);
    } else {
        vl_fuzz_check_error_line(err, errlen, text);
    }
    free(err);
    free(sp);
}

/* The table of the backend that text names, or NULL. */
static const vl_alloc_backend *backend_named(const char *text)
{
    char name[64], err[128];
    if (vl_spec_name(text, name, sizeof name, err, sizeof err) != 0) return NULL;
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(all_backends[i]->name, name) == 0) return all_backends[i];
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    unsigned entry = data[0];
    size_t errlen = (size_t)data[1] % 200 + 1;
    char *text = vl_fuzz_cstring(data + 2, size - 2);
    char *err = malloc(errlen);

    switch (entry % 5) {
    case 0: /* --alloc SPEC as programs check it */
        if (vl_alloc_spec_check(text, err, errlen) == 0) {
            /* A named SPEC (lowwaste) stands for the SPEC it expands to. */
            char expanded[VL_SPEC_MAX_TEXT], why[128];
            VL_FUZZ_ASSERT(vl_alloc_spec_expand(text, expanded, sizeof expanded, why, sizeof why) == 0,
                           "--alloc '%s' accepted but does not expand: %s", text, why);
            const vl_alloc_backend *b = backend_named(expanded);
            VL_FUZZ_ASSERT(b != NULL, "--alloc '%s' accepted but names no backend", text);
            parse_against(expanded, b->options, 256);
        } else {
            vl_fuzz_check_error_line(err, errlen, text);
        }
        break;
    case 1: /* --device SPEC */
        if (vl_device_spec_check(text, err, errlen) != 0) vl_fuzz_check_error_line(err, errlen, text);
        break;
    case 2: /* every option kind */
        parse_against(text, every_kind, errlen);
        break;
    case 4: /* a required option */
        parse_against(text, with_required, errlen);
        break;
    case 3: /* one real table: a backend's, or the simulated device's */
    {
        size_t pick = (entry / 5) % (NBACKENDS + 1);
        if (pick == NBACKENDS)
            parse_against(text, vl_device_sim_options, errlen);
        else
            parse_against(text, all_backends[pick]->options, errlen);
        break;
    }
    }

    free(err);
    free(text);
    return 0;
}
