/* Exit statuses shared by every vramlab program (documented in docs/results.md). */
#ifndef VL_EXITCODES_H
#define VL_EXITCODES_H

enum {
    VL_EXIT_OK = 0,      /* ran, results written */
    VL_EXIT_FAIL = 1,    /* ran and failed: a CUDA error, an I/O error, a failed check */
    VL_EXIT_USAGE = 2,   /* bad command line, SPEC, size or input file */
    VL_EXIT_SKIP = 77    /* needs something this machine lacks (a CUDA device); nothing measured */
};

#endif
