/* libFuzzer target for the shared command line (lib/cli.h, vl_cli_parse): the first
 * code every program runs on its arguments, with the real --alloc / --device checks
 * and a program table holding an option of every kind.
 *
 * Input: up to 16 arguments separated by NUL bytes. vl_cli_parse ends a usage error
 * with exit(2) and --help with exit(0); this target interposes exit() so that such an
 * input returns here (longjmp) with its status, and captures stderr, then checks:
 *   - status 2: exactly one line on stderr (even for arguments holding line breaks),
 *     starting with the program's name;
 *   - status 0: only with -h / --help / --alloc help / --device help among the arguments;
 *   - a normal return: every option value lies within its declared range. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exitcodes.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 16

static jmp_buf exit_jump;
static int exit_status;
static int parsing; /* 1 while vl_cli_parse runs: exit() returns to the target */

/* Interposes libc's exit for the library's calls; outside a parse (libFuzzer's own
 * exit at the end) it is the real one. */
void exit(int status)
{
    if (parsing) {
        parsing = 0;
        exit_status = status;
        longjmp(exit_jump, 1);
    }
    void (*real_exit)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
    real_exit(status);
    abort(); /* unreachable: the real exit does not return */
}

/* The options of a made-up program: one of every kind, with and without a range. */
static int64_t opt_count;
static uint64_t opt_size;
static double opt_ratio;
static const char *opt_name;
static int opt_flag;
static int64_t opt_any;

static int has_arg(char **argv, int argc, const char *a, const char *b)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], a) == 0 && (!b || (i + 1 < argc && strcmp(argv[i + 1], b) == 0))) return 1;
    return 0;
}

static int has_help_request(char **argv, int argc)
{
    return has_arg(argv, argc, "-h", NULL) || has_arg(argv, argc, "--help", NULL) ||
           has_arg(argv, argc, "--alloc", "help") || has_arg(argv, argc, "--device", "help") ||
           has_arg(argv, argc, "--alloc=help", NULL) || has_arg(argv, argc, "--device=help", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = vl_fuzz_cstring(data, size);
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "fuzzprog";
    for (size_t at = 0; at <= size && argc <= MAX_ARGS; at += strlen(buf + at) + 1) argv[argc++] = buf + at;
    argv[argc] = NULL;

    opt_count = 5, opt_size = 4096, opt_ratio = 0.5, opt_name = NULL, opt_flag = 0, opt_any = 0;
    const vl_cli_opt extra[] = {
        {"count", VL_CLI_INT, &opt_count, "an integer in [1, 1000]", 1, 1000},
        {"size", VL_CLI_SIZE, &opt_size, "a size in [4096, 2^40]", 4096, 0x1p40},
        {"ratio", VL_CLI_DOUBLE, &opt_ratio, "a number in (0, 1]", 1e-9, 1},
        {"name", VL_CLI_STRING, &opt_name, "a string", 0, 0},
        {"flag", VL_CLI_FLAG, &opt_flag, "a flag", 0, 0},
        {"any", VL_CLI_INT, &opt_any, "a non-negative integer", 0, 0},
        {NULL},
    };
    vl_cli cli = {.summary = "fuzzed", .alloc_spec = "caching", .device_spec = "sim", .seed = 1};

    char *err_text = NULL;
    size_t err_len = 0;
    FILE *saved_err = stderr, *saved_out = stdout;
    stderr = open_memstream(&err_text, &err_len);
    stdout = fopen("/dev/null", "w");
    int returned = 0;
    if (setjmp(exit_jump) == 0) {
        parsing = 1;
        vl_cli_parse(&cli, argc, argv, extra, NULL, 0, NULL);
        parsing = 0;
        returned = 1;
    }
    fclose(stderr);
    fclose(stdout);
    stderr = saved_err, stdout = saved_out;

    if (returned) {
        VL_FUZZ_ASSERT(opt_count >= 1 && opt_count <= 1000, "--count %lld accepted", (long long)opt_count);
        VL_FUZZ_ASSERT(opt_size >= 4096 && opt_size <= (UINT64_C(1) << 40), "--size %llu accepted",
                       (unsigned long long)opt_size);
        VL_FUZZ_ASSERT(opt_ratio >= 1e-9 && opt_ratio <= 1, "--ratio %g accepted", opt_ratio);
        VL_FUZZ_ASSERT(opt_any >= 0, "--any %lld accepted", (long long)opt_any);
        VL_FUZZ_ASSERT(cli.device_spec && cli.alloc_spec, "specs lost");
    } else if (exit_status == VL_EXIT_USAGE) {
        size_t lines = 0;
        for (size_t i = 0; i < err_len; i++) lines += err_text[i] == '\n';
        /* One line even when the message quotes an argument with a line break in it. */
        VL_FUZZ_ASSERT(err_len > 0 && err_text[err_len - 1] == '\n', "usage error without a line: '%s'", err_text);
        VL_FUZZ_ASSERT(lines == 1, "usage error in %zu lines: '%s'", lines, err_text);
        VL_FUZZ_ASSERT(strncmp(err_text, "fuzzprog: ", 10) == 0, "usage error without the program's name: '%s'",
                       err_text);
    } else {
        VL_FUZZ_ASSERT(exit_status == VL_EXIT_OK, "vl_cli_parse exited with %d", exit_status);
        VL_FUZZ_ASSERT(has_help_request(argv, argc), "exit 0 without a help request");
    }
    free(err_text);
    free(buf);
    return 0;
}
