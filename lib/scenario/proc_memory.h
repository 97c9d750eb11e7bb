/* What the operating system says this process's host memory is: the locked and pinned
 * counters of /proc/self/status (VmLck: mlock'ed pages; VmPin: pages pinned by a
 * driver that accounts them, mm->pinned_vm), VmRSS, "Locked:" summed over
 * /proc/self/smaps, and the machine's MemFree (/proc/meminfo), which drops by what any
 * pinning takes whether or not the process's counters show it. Which counters move for
 * cudaHostAlloc and cudaHostRegister depends on the driver: pinned_rounding records
 * all of them and says which moved. */
#ifndef VL_SCENARIO_PROC_MEMORY_H
#define VL_SCENARIO_PROC_MEMORY_H

#include <stdint.h>

typedef struct vl_proc_memory {
    int64_t vm_lck_bytes, vm_pin_bytes, vm_rss_bytes; /* /proc/self/status */
    int64_t smaps_locked_bytes;                       /* sum of Locked: in /proc/self/smaps */
    int64_t mem_free_bytes;                           /* /proc/meminfo MemFree */
} vl_proc_memory;

/* Every field in bytes, -1 (VL_UNKNOWN) where the file or the line is missing. */
void vl_proc_memory_read(vl_proc_memory *m);

/* The value of "KEY: N kB" lines of a /proc file, in bytes: the first such line, or
 * with sum_all the sum over all of them. -1 when the file cannot be read or has no
 * such line (or a malformed one). */
int64_t vl_proc_kb_field(const char *path, const char *key, int sum_all);

#endif
