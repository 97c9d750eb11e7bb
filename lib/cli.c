/* The shared command line (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device.h"
#include "exitcodes.h"
#include "size.h"

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

static void print_default(const vl_cli_opt *o)
{
    char buf[64];
    switch (o->kind) {
    case VL_CLI_FLAG: printf("off"); break;
    case VL_CLI_INT: printf("%lld", (long long)*(int64_t *)o->target); break;
    case VL_CLI_SIZE: printf("%s", vl_format_size(*(uint64_t *)o->target, buf, sizeof buf)); break;
    case VL_CLI_DOUBLE: printf("%g", *(double *)o->target); break;
    case VL_CLI_STRING:
    case VL_CLI_ENUM: printf("%s", *(const char **)o->target ? *(const char **)o->target : "(none)"); break;
    }
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
            static const char *const arg[] = {"", " N", " SIZE", " X", " TEXT", " TEXT"};
            char left[64];
            snprintf(left, sizeof left, "--%s%s", o->name, arg[o->kind]);
            printf("  %-19s %s (default ", left, o->help ? o->help : "");
            print_default(o);
            printf(")\n");
        }
    }
    printf("\nexit status: 0 ok, 1 failure, 2 usage error, 77 skipped (no CUDA device)\n");
}

static int is_choice(const char *choices, const char *value)
{
    size_t len = strlen(value);
    for (const char *c = choices; c && *c;) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        if (n == len && strncmp(c, value, n) == 0) return 1;
        c = bar ? bar + 1 : c + n;
    }
    return 0;
}

/* "a|b|c" -> "a, b or c" */
static void choices_in_words(const char *choices, char *buf, size_t buflen)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const char *c = choices; c && *c && used < buflen;) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        const char *sep = c == choices ? "" : bar ? ", " : " or ";
        used += (size_t)snprintf(buf + used, buflen - used, "%s%.*s", sep, (int)n, c);
        c = bar ? bar + 1 : c + n;
    }
}

static void check_range(const vl_cli *cli, const vl_cli_opt *o, double v, const char *text)
{
    double lo = o->min, hi = o->max;
    if (lo == 0 && hi == 0) {
        if (v < 0) vl_cli_usage_error(cli, "--%s %s: must not be negative", o->name, text);
        return;
    }
    if (v < lo || v > hi) vl_cli_usage_error(cli, "--%s %s: out of range [%g, %g]", o->name, text, lo, hi);
}

static void set_option(const vl_cli *cli, const vl_cli_opt *o, const char *value)
{
    char *end;
    char why[160];
    switch (o->kind) {
    case VL_CLI_FLAG: *(int *)o->target = 1; return;
    case VL_CLI_INT: {
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (!*value || *end || errno) vl_cli_usage_error(cli, "--%s '%s' is not an integer", o->name, value);
        check_range(cli, o, (double)v, value);
        *(int64_t *)o->target = v;
        return;
    }
    case VL_CLI_SIZE: {
        uint64_t v;
        if (vl_parse_size(value, &v, why, sizeof why) != 0) vl_cli_usage_error(cli, "--%s: %s", o->name, why);
        check_range(cli, o, (double)v, value);
        *(uint64_t *)o->target = v;
        return;
    }
    case VL_CLI_DOUBLE: {
        errno = 0;
        double v = strtod(value, &end);
        if (!*value || *end || errno || !isfinite(v)) vl_cli_usage_error(cli, "--%s '%s' is not a number", o->name, value);
        check_range(cli, o, v, value);
        *(double *)o->target = v;
        return;
    }
    case VL_CLI_STRING: *(const char **)o->target = value; return;
    case VL_CLI_ENUM:
        if (!is_choice(o->choices, value)) {
            choices_in_words(o->choices, why, sizeof why);
            vl_cli_usage_error(cli, "--%s: expected %s, not '%s'", o->name, why, value);
        }
        *(const char **)o->target = value;
        return;
    }
}

/* Whether the numeric option's value lies beyond quick's in the rule's direction. */
static int beyond(const vl_cli_opt *o, const void *now, const void *quick)
{
    int more;
    switch (o->kind) {
    case VL_CLI_INT: more = *(const int64_t *)now > *(const int64_t *)quick; break;
    case VL_CLI_SIZE: more = *(const uint64_t *)now > *(const uint64_t *)quick; break;
    case VL_CLI_DOUBLE: more = *(const double *)now > *(const double *)quick; break;
    default: return 0;
    }
    int same = memcmp(now, quick, 8) == 0;
    return o->quick == VL_QUICK_AT_MOST ? more : !more && !same;
}

/* --quick: a shorter run by each option's own rule (see vl_cli_quick). */
static void apply_quick(const vl_cli *cli, const vl_cli_opt *o, int given)
{
    if (o->quick == VL_QUICK_KEEP || !o->quick_value) return;
    if (o->quick == VL_QUICK_DEFAULT) {
        if (!given) set_option(cli, o, o->quick_value);
        return;
    }
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
        int is_flag = strcmp(name, "quick") == 0 || (o && o->kind == VL_CLI_FLAG);
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
