/* Makes the device look smaller: takes all free device memory but `keep_free` bytes in
 * one plain device allocation outside the allocator under test. Experiments about
 * running out of memory (fragmentation, largest fit, iterations until OOM) then run
 * against a working set of a chosen size: seconds instead of minutes on a 140 GiB GPU,
 * and the same working set on every GPU. Works on cuda and sim (through vl_device). */
#ifndef VL_SCENARIO_BALLAST_H
#define VL_SCENARIO_BALLAST_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "device.h"
#include "program.h"

typedef struct vl_ballast {
    vl_device *dev;
    void *ptr;    /* NULL when nothing is held */
    size_t bytes;
} vl_ballast;

/* The working set a --quick run uses at most. */
#define VL_QUICK_WORKING_SET (4ull << 30)

/* A program's --memory value (0: the whole device) as the working set to keep free:
 * under --quick at most VL_QUICK_WORKING_SET. */
size_t vl_working_set(uint64_t memory, int quick);

/* The --memory row of a program's option table (a uint64_t target), declared once. */
#define VL_WORKING_SET_OPTION(target)                                                                             \
    {                                                                                                          \
        "memory", VL_CLI_SIZE, (target), "working set: device memory left free (0: all; --quick: at most 4 GiB)", \
            0, 0x1p50                                                                                          \
    }

/* Leaves about keep_free bytes free (nothing is taken when less than that is free,
 * or keep_free is 0). Returns the device's free bytes afterwards. */
size_t vl_ballast_take(vl_ballast *b, vl_device *dev, size_t keep_free);
void vl_ballast_release(vl_ballast *b);

/* What every working-set program does after vl_program_start: takes the ballast for its
 * --memory value (under --quick at most VL_QUICK_WORKING_SET) and records the working set
 * in the CSV's metadata (working_set_bytes). Returns the device's free bytes. */
size_t vl_ballast_take_working_set(vl_ballast *b, vl_program *p, uint64_t memory);

#endif
