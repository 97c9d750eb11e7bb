/* One typed option table for everything vramlab lets the user set: a program's own
 * command-line options (lib/cli.h) and the options inside a SPEC (--alloc caching:
 * chunk=4MiB, --device sim:capacity=8GiB; lib/spec.h). Both parsers check a value with
 * the one function here (vl_opt_parse_value: kind, size syntax, range, choices), so a
 * bad value is rejected with the same reason wherever it is given, and both print
 * their help from the same fields.
 *
 * A program table names where each value goes (target, which holds the default on
 * entry) and may say what --quick does; a SPEC table has no targets (the parsed values
 * live in a vl_spec) and gives its defaults as text (default_value). */
#ifndef VL_OPT_H
#define VL_OPT_H

#include <stddef.h>
#include <stdint.h>

typedef enum vl_opt_kind {
    VL_OPT_FLAG,   /* command line: a bare --name sets the int target to 1; in a SPEC, as BOOL */
    VL_OPT_INT,    /* signed decimal integer (target: int64_t) */
    VL_OPT_SIZE,   /* "2MiB", lib/size.h syntax (target: uint64_t bytes) */
    VL_OPT_DOUBLE, /* decimal number, finite (target: double) */
    VL_OPT_STRING, /* any text (target: const char *) */
    VL_OPT_ENUM,   /* one of the '|'-separated choices (target: const char *, the chosen name) */
    VL_OPT_BOOL    /* 0|1|true|false|yes|no|on|off (target: int) */
} vl_opt_kind;

/* The names program tables were written with; other engineers' tables use them, so
 * they stay as plain aliases of the kinds above. */
#define VL_CLI_FLAG VL_OPT_FLAG
#define VL_CLI_INT VL_OPT_INT
#define VL_CLI_SIZE VL_OPT_SIZE
#define VL_CLI_DOUBLE VL_OPT_DOUBLE
#define VL_CLI_STRING VL_OPT_STRING
#define VL_CLI_ENUM VL_OPT_ENUM

/* What --quick does to an option, so no program clamps values by hand. */
typedef enum vl_opt_quick {
    VL_QUICK_KEEP = 0, /* nothing */
    VL_QUICK_AT_MOST,  /* the value is at most quick (given or default) */
    VL_QUICK_AT_LEAST, /* the value is at least quick */
    VL_QUICK_DEFAULT   /* quick replaces the default; a given value stays */
} vl_opt_quick;

/* C++ program tables (bench/torch) are written positionally under -Wextra -Werror, which
 * there reports every field left out: the SPEC-only fields get default member
 * initializers in C++, so those tables need not spell them out. */
#ifdef __cplusplus
#define VL_OPT_SPEC_ONLY = {}
#else
#define VL_OPT_SPEC_ONLY
#endif

/* The field order is that of the program tables ({"slots", VL_CLI_INT, &slots, "help",
 * 1, 1e9, VL_QUICK_AT_MOST, "1000"}), so they are written positionally; the fields a
 * SPEC table needs come last and are named (.default_value = "2MiB"). */
typedef struct vl_opt {
    const char *name;        /* "--name" on the command line, "name=" in a SPEC */
    vl_opt_kind kind;
    void *target;            /* command line: receives the value, holds the default on entry */
    const char *help;
    double min, max;         /* accepted range for INT/SIZE/DOUBLE; min == max == 0: any non-negative */
    vl_opt_quick quick;      /* with --quick: what quick_value does (command line only) */
    const char *quick_value; /* written as on the command line ("64MiB", "1,4") */
    const char *choices;     /* VL_OPT_ENUM: "a|b|c" */
    const char *default_value VL_OPT_SPEC_ONLY; /* SPEC: the default as text; NULL: absent unless given */
    int positional VL_OPT_SPEC_ONLY;            /* SPEC: may be given bare as the first item */
    int required VL_OPT_SPEC_ONLY;              /* SPEC: must be given */
    /* SPEC: "KEY=V1|V2": the option means something only while option KEY has one of
     * these values (given or default); given otherwise, the SPEC is refused rather than
     * the option silently ignored. NULL: always applies. */
    const char *applies_if VL_OPT_SPEC_ONLY;
} vl_opt;

/* A checked value, in the field its kind uses. */
typedef struct vl_opt_value {
    uint64_t size;   /* SIZE */
    int64_t integer; /* INT, and BOOL/FLAG as 0/1 */
    double number;   /* DOUBLE */
    int choice;      /* ENUM: index into choices */
} vl_opt_value;

/* Checks text against o (kind, range, choices) and converts it into *out. Returns 0,
 * or -1 with the reason in why, worded to follow the option's name ("'x' is not an
 * integer", "'9' is out of range [1, 4]", "'z' must be one of a|b|c"). */
int vl_opt_parse_value(const vl_opt *o, const char *text, vl_opt_value *out, char *why, size_t whylen);

/* Stores a checked value into o->target (text is kept for STRING and ENUM, so it must
 * outlive the target). */
void vl_opt_store(const vl_opt *o, const char *text, const vl_opt_value *v);

/* What the help shows: the value's type ("size", "integer", the choices, ...) and the
 * default (the target's value where there is a target, else default_value, "(none)"). */
const char *vl_opt_type_name(const vl_opt *o);
void vl_opt_default_text(const vl_opt *o, char *buf, size_t len);

#endif
