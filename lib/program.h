/* The frame of every scenario and bench program: parse the command line, open the
 * device (exit 77 with one line when there is no CUDA device), open the allocator,
 * open the CSV with its metadata; at the end close everything and check that the
 * device got its memory back. A program's main() then reads as its experiment. */
#ifndef VL_PROGRAM_H
#define VL_PROGRAM_H

#include "alloc.h"
#include "cli.h"
#include "csv.h"
#include "device.h"
#include "runinfo.h"

typedef struct vl_program {
    vl_cli cli;
    vl_device *dev;
    vl_allocator *alloc;  /* NULL when the program takes no --alloc */
    vl_csv *csv;
    vl_run_info info;
    size_t free_at_start; /* device free bytes once the device was opened */
} vl_program;

typedef struct vl_program_def {
    const char *summary;        /* one line for --help */
    const char *default_alloc;  /* NULL: the program takes no --alloc */
    int needs_cuda;             /* 1: refuses --device sim (exit 77 unless --device sim given: exit 2) */
    const vl_cli_opt *options;  /* the program's own options, may be NULL */
    /* Checks the program's own options once parsed, before the device is opened, so a
     * bad value is a usage error (exit 2) also on a machine without a GPU. May be NULL;
     * reports with vl_cli_usage_error. */
    void (*check_options)(vl_cli *cli);
    /* The program's input file option (its variable), may be NULL: -o naming it (by any
     * path or link) is refused, like -o naming the program or a file of --alloc. */
    const char *const *input;
} vl_program_def;

/* An output file onto an input would replace what the run reads with its results:
 * refused (usage error, exit 2) before anything runs, the input left as it was. Inputs:
 * the program's own input file (when it is "-", the file standard input is), every text
 * value of --alloc and --device (a plugin's .so), the program itself; compared by
 * vl_csv_onto_input. vl_program_start checks -o; a program with a second output (flag
 * names it in the message) checks it from its check_options, and that it is not -o's
 * file (vl_csv_same_output). out "-" and NULL pass. */
void vl_program_refuse_onto_inputs(const vl_cli *cli, const vl_program_def *def, const char *out, const char *flag);
/* Exits on usage errors (2) and when no CUDA device is there (77). Turns on the
 * allocator's OOM report for the first OOM (lib/oom_report.h, printed on stderr). */
void vl_program_start(vl_program *p, const vl_program_def *def, int argc, char **argv);
/* Closes the allocator now instead of in vl_program_finish: a program calls it before
 * it destroys the streams its blocks were used on, because an allocator may
 * synchronize a segment's stream when it gives the segment back (c10 with expandable
 * segments does, in emptyCache: on a destroyed stream that is a crash at exit). */
void vl_program_close_alloc(vl_program *p);
/* Closes the allocator and the CSV; reports device memory not given back (a leak)
 * on stderr and as a failure. Returns the exit status for main(). */
int vl_program_finish(vl_program *p);

#endif
