/* The command line every vramlab program shares, plus each program's own options.
 *
 * Common options: --alloc SPEC, --device SPEC, -o/--output FILE, --quick, --seed N,
 * --help. A program adds its own with a vl_cli_opt (= vl_opt, lib/opt.h) table. Unknown
 * flags and bad values print one line and exit with VL_EXIT_USAGE; --help prints usage and exits 0.
 * --alloc and --device SPECs are parsed here once, before any device work; the parsed
 * forms (vl_cli.alloc, vl_cli.device) go on to the opening calls. */
#ifndef VL_CLI_H
#define VL_CLI_H

#include <stdint.h>

#include "opt.h"
#include "spec.h"

/* A program's own options are vl_opt entries (lib/opt.h, the same type SPEC options
 * use); vl_cli_opt is the name program tables are written with. */
typedef vl_opt vl_cli_opt;

#define VL_CLI_MAX_OPTS 64 /* a program's own options at most */

typedef struct vl_cli {
    const char *prog;        /* basename of argv[0] */
    const char *summary;     /* one line: what the program measures */
    const char *alloc_spec;  /* default set by the program */
    const char *device_spec; /* default "cuda" */
    const char *output;      /* NULL: stdout */
    int quick;
    uint64_t seed;
    int no_alloc;            /* set by programs that take no --alloc (e.g. pinned_copy) */
    vl_spec alloc;           /* alloc_spec, parsed once here (unless no_alloc) */
    vl_spec device;          /* device_spec, parsed once here */
    int argc;
    char **argv;
} vl_cli;

/* Parses argv. extra may be NULL; it is terminated by an entry with name == NULL.
 * With --quick, every option's quick rule is applied once all of argv is read.
 * positional: if non-NULL, receives up to max_positional bare arguments. */
void vl_cli_parse(vl_cli *cli, int argc, char **argv, const vl_cli_opt *extra,
                  const char **positional, int max_positional, int *npositional);

/* Replaces control characters (newlines included) with '?', so that text quoted from
 * the user stays on one line of an error message. */
void vl_one_line(char *text);

/* One-line usage error and exit(VL_EXIT_USAGE). */
void vl_cli_usage_error(const vl_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

#endif
