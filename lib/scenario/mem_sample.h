/* One reading of "where is the memory": the allocator's view (allocated, reserved)
 * and the device's (used = total - free, from cudaMemGetInfo or the simulation).
 * Scenarios print it per iteration; reserved/allocated and the device's used bytes
 * can disagree, and that disagreement is often the finding. */
#ifndef VL_SCENARIO_MEM_SAMPLE_H
#define VL_SCENARIO_MEM_SAMPLE_H

#include <stdint.h>

#include "alloc.h"

typedef struct vl_mem_sample {
    int64_t requested_bytes;  /* VL_UNKNOWN when the backend cannot tell */
    int64_t allocated_bytes;
    int64_t reserved_bytes;
    int64_t peak_allocated_bytes;
    int64_t peak_reserved_bytes;
    int64_t device_used_bytes; /* total - free on the device */
    int64_t device_free_bytes;
    int64_t ooms;
} vl_mem_sample;

void vl_mem_sample_take(vl_allocator *a, vl_mem_sample *m);

/* The CSV columns of a sample, in this order, and its values ("" for unknown). */
#define VL_MEM_SAMPLE_COLUMNS \
    "requested_bytes,allocated_bytes,reserved_bytes,peak_allocated_bytes,peak_reserved_bytes,device_used_bytes,device_free_bytes"
const char *vl_mem_sample_values(const vl_mem_sample *m, char *buf, size_t buflen);

/* reserved when known, else device used: the memory this process holds. */
int64_t vl_mem_sample_held(const vl_mem_sample *m);

#endif
