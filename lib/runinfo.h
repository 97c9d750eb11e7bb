/* The conditions of a run, written as '#' metadata lines at the top of every CSV:
 * vramlab version and git revision, UTC date, host, GPU, driver and runtime, device
 * memory, allocator SPEC, device SPEC, and the full command line. */
#ifndef VL_RUNINFO_H
#define VL_RUNINFO_H

#include <stdint.h>
#include <stdio.h>

#include "device.h"

typedef struct vl_run_info {
    char version[32];
    char git_rev[64];
    char date_utc[32];
    char host[64];
    char gpu[128];
    char driver[32];
    char runtime[32];
    int64_t device_memory_bytes;
    int simulated;
    char alloc_spec[512];
    char device_spec[512];
    char command[2048];
} vl_run_info;

/* dev may be NULL (a program that opened none). alloc_spec may be NULL. */
void vl_run_info_fill(vl_run_info *ri, int argc, char **argv, const vl_device *dev, const char *alloc_spec);
void vl_run_info_write(FILE *out, const vl_run_info *ri);
const char *vl_version(void);
const char *vl_git_revision(void);

#endif
