/* The shared command line (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device.h"
#include "exitcodes.h"

void vl_one_line(char *text)
{
    for (unsigned char *c = (unsigned char *)text; *c; c++)
        if (*c < 0x20 || *c == 0x7f) *c = '?';
}

void vl_cli_usage_error(const vl_cli *cli, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vl_one_line(msg); /* a value with a newline in it must not break the one-line error */
    fprintf(stderr, "%s: %s (try --help)\n", cli->prog, msg);
    exit(VL_EXIT_USAGE);
}

static void print_help(const vl_cli *cli, const vl_cli_opt *extra)
{
    printf("usage: %s [options]\n%s\n\ncommon options:\n", cli->prog, cli->summary ? cli->summary : "");
    if (!cli->no_alloc)
        printf("  --alloc SPEC        allocator, NAME[:key=value,...] (default %s; '--alloc help' lists them)\n",
               cli->alloc_spec);
    printf("  --device SPEC       cuda or sim[:capacity=...] (default %s; '--device help' lists options)\n"
           "  -o, --output FILE   write CSV to FILE (default: standard output)\n"
           "  --quick             a short run (seconds)\n"
           "  --seed N            random seed (default %llu)\n"
           "  -h, --help          this help\n",
           cli->device_spec, (unsigned long long)cli->seed);
    if (extra && extra->name) {
        printf("\nprogram options:\n");
        for (const vl_cli_opt *o = extra; o->name; o++) {
            /* tests/bad_input/run.sh finds the options of each kind by these words */
            static const char *const arg[] = {
                [VL_OPT_FLAG] = "", [VL_OPT_INT] = " N", [VL_OPT_SIZE] = " SIZE", [VL_OPT_DOUBLE] = " X",
                [VL_OPT_STRING] = " TEXT", [VL_OPT_ENUM] = " TEXT", [VL_OPT_BOOL] = " 0|1"};
            char left[64], def[64];
            snprintf(left, sizeof left, "--%s%s", o->name, arg[o->kind]);
            vl_opt_default_text(o, def, sizeof def);
            printf("  %-19s %s (default %s)\n", left, o->help ? o->help : "", def);
        }
    }
    printf("\nexit status: 0 ok, 1 failure, 2 usage error, 77 skipped (no CUDA device)\n");
}

/* Every value goes through the checker SPEC options use (lib/opt.c), so a value is
 * rejected for the same reason on the command line and in a SPEC. */
static void set_option(const vl_cli *cli, const vl_cli_opt *o, const char *value)
{
    vl_opt_value v = {0};
    char why[256];
    if (o->kind != VL_OPT_FLAG && vl_opt_parse_value(o, value, &v, why, sizeof why) != 0)
        vl_cli_usage_error(cli, "--%s: %s", o->name, why);
    if (o->kind == VL_OPT_FLAG) v.integer = 1; /* a bare --name */
    vl_opt_store(o, value, &v);
}

/* Whether the numeric option's value lies beyond quick's in the rule's direction. */
static int beyond(const vl_cli_opt *o, const void *now, const void *quick)
{
    int more;
    switch (o->kind) {
    case VL_OPT_INT: more = *(const int64_t *)now > *(const int64_t *)quick; break;
    case VL_OPT_SIZE: more = *(const uint64_t *)now > *(const uint64_t *)quick; break;
    case VL_OPT_DOUBLE: more = *(const double *)now > *(const double *)quick; break;
    default: return 0;
    }
    int same = memcmp(now, quick, 8) == 0;
    return o->quick == VL_QUICK_AT_MOST ? more : !more && !same;
}

/* --quick: a shorter run by each option's own rule (see vl_opt_quick). */
static void apply_quick(const vl_cli *cli, const vl_cli_opt *o, int given)
{
    if (o->quick == VL_QUICK_KEEP || !o->quick_value) return;
    if (o->quick == VL_QUICK_DEFAULT) {
        if (!given) set_option(cli, o, o->quick_value);
        return;
    }
    if (o->kind != VL_OPT_INT && o->kind != VL_OPT_SIZE && o->kind != VL_OPT_DOUBLE) return; /* no order */
    unsigned char now[8], quick[8]; /* an int64_t, uint64_t or double */
    memcpy(now, o->target, sizeof now);
    set_option(cli, o, o->quick_value);
    memcpy(quick, o->target, sizeof quick);
    if (!beyond(o, now, quick)) memcpy(o->target, now, sizeof now); /* short enough already */
}

void vl_cli_parse(vl_cli *cli, int argc, char **argv, const vl_cli_opt *extra,
                  const char **positional, int max_positional, int *npositional)
{
    const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    cli->prog = argc > 0 ? (slash ? slash + 1 : argv[0]) : "vramlab";
    cli->argc = argc;
    cli->argv = argv;
    if (!cli->device_spec) cli->device_spec = "cuda";
    if (npositional) *npositional = 0;
    int alloc_given = 0;
    unsigned char given[VL_CLI_MAX_OPTS] = {0};
    size_t nextra = 0;
    while (extra && extra[nextra].name) nextra++;
    if (nextra > VL_CLI_MAX_OPTS) vl_cli_usage_error(cli, "internal error: more than %d options", VL_CLI_MAX_OPTS);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(cli, extra);
            exit(VL_EXIT_OK);
        }
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (!positional || *npositional >= max_positional)
                vl_cli_usage_error(cli, "unexpected argument '%s'", arg);
            positional[(*npositional)++] = arg;
            continue;
        }
        /* --name=value or --name value */
        char name[64];
        const char *value = NULL;
        if (strcmp(arg, "-o") == 0) {
            snprintf(name, sizeof name, "output");
        } else if (strncmp(arg, "--", 2) == 0) {
            const char *eq = strchr(arg, '=');
            size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
            if (len == 0 || len >= sizeof name) vl_cli_usage_error(cli, "malformed option '%s'", arg);
            memcpy(name, arg + 2, len);
            name[len] = '\0';
            if (eq) value = eq + 1;
        } else {
            vl_cli_usage_error(cli, "unknown option '%s'", arg);
        }
        const vl_cli_opt *o = NULL;
        for (const vl_cli_opt *e = extra; e && e->name; e++)
            if (strcmp(e->name, name) == 0) o = e;
        int is_flag = strcmp(name, "quick") == 0 || (o && o->kind == VL_OPT_FLAG);
        int is_common = strcmp(name, "alloc") == 0 || strcmp(name, "device") == 0 || strcmp(name, "output") == 0 ||
                        strcmp(name, "seed") == 0 || strcmp(name, "quick") == 0;
        if (!o && !is_common) vl_cli_usage_error(cli, "unknown option '%s'", arg);
        if (is_flag) {
            if (value) vl_cli_usage_error(cli, "--%s takes no value", name);
        } else if (!value) {
            if (i + 1 >= argc) vl_cli_usage_error(cli, "%s needs a value", arg);
            value = argv[++i];
        }
        if (o) {
            set_option(cli, o, value);
            given[o - extra] = 1;
        } else if (strcmp(name, "quick") == 0) {
            cli->quick = 1;
        } else if (strcmp(name, "output") == 0) {
            if (!*value) vl_cli_usage_error(cli, "-o needs a file name");
            cli->output = value;
        } else if (strcmp(name, "seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(value, &end, 10);
            if (!*value || *end || errno || value[0] == '-') vl_cli_usage_error(cli, "--seed '%s' is not a non-negative integer", value);
            cli->seed = v;
        } else if (strcmp(name, "alloc") == 0) {
            if (cli->no_alloc) vl_cli_usage_error(cli, "this program takes no --alloc");
            if (strcmp(value, "help") == 0) {
                vl_alloc_help(stdout);
                exit(VL_EXIT_OK);
            }
            cli->alloc_spec = value;
            alloc_given = 1;
        } else if (strcmp(name, "device") == 0) {
            if (strcmp(value, "help") == 0) {
                vl_device_help(stdout);
                exit(VL_EXIT_OK);
            }
            cli->device_spec = value;
        }
    }
    for (size_t k = 0; cli->quick && k < nextra; k++) apply_quick(cli, &extra[k], given[k]);
    char err[512];
    if (!cli->no_alloc && (alloc_given || cli->alloc_spec) &&
        vl_alloc_spec_parse(cli->alloc_spec, &cli->alloc, err, sizeof err) != 0)
        vl_cli_usage_error(cli, "--alloc: %s", err);
    if (vl_device_spec_parse(cli->device_spec, &cli->device, err, sizeof err) != 0)
        vl_cli_usage_error(cli, "--device: %s", err);
}
