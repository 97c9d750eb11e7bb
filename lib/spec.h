/* SPEC strings: NAME[:ITEM,ITEM,...] where ITEM is key=value, or (first item only) a
 * bare value for the owner's positional option. Used for --alloc and --device.
 *
 * Each owner (a backend, a device) declares its options once in a vl_opt table (lib/opt.h,
 * the type program options use too: .name, .kind, .help, a range, .choices, and here
 * .default_value, .positional, .required); parsing checks every key, and every value
 * with vl_opt_parse_value, and fills in the defaults, so a bad SPEC is rejected with one
 * line before any device work starts, and `--alloc help` prints the same table. */
#ifndef VL_SPEC_H
#define VL_SPEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "opt.h"

#define VL_SPEC_MAX_OPTS 32
#define VL_SPEC_MAX_TEXT 512

typedef struct vl_spec_value {
    const vl_opt *opt;
    int given;   /* 1 if present in the text, 0 if a default */
    int present; /* given or defaulted */
    char text[VL_SPEC_MAX_TEXT];
    vl_opt_value value; /* the checked value (when present) */
} vl_spec_value;

typedef struct vl_spec {
    char name[64];
    char text[VL_SPEC_MAX_TEXT]; /* the whole SPEC as given */
    size_t nvalues;
    vl_spec_value values[VL_SPEC_MAX_OPTS];
} vl_spec;

/* Splits off the NAME (up to the first ':'); no validation of options yet. */
int vl_spec_name(const char *text, char *name, size_t namelen, char *err, size_t errlen);

/* Parses text against opts (terminated by an entry with name == NULL).
 * Returns 0, or -1 with a one-line reason ("unknown option 'x' for raw; options: ..."). */
int vl_spec_parse(const char *text, const vl_opt *opts, vl_spec *out, char *err, size_t errlen);

/* Typed accessors; the key must be one of the options (aborts otherwise: a programming error). */
const vl_spec_value *vl_spec_get(const vl_spec *s, const char *key);
uint64_t vl_spec_size(const vl_spec *s, const char *key);
int64_t vl_spec_int(const vl_spec *s, const char *key);
int vl_spec_bool(const vl_spec *s, const char *key);
double vl_spec_double(const vl_spec *s, const char *key);
int vl_spec_choice(const vl_spec *s, const char *key);
const char *vl_spec_str(const vl_spec *s, const char *key); /* NULL when absent */
int vl_spec_given(const vl_spec *s, const char *key);

/* Prints an options table (key, type, default, help), indented. */
void vl_spec_print_docs(FILE *out, const vl_opt *opts);

#endif
