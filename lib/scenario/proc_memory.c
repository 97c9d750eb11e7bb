/* Host memory counters from /proc (see proc_memory.h). */
#include "scenario/proc_memory.h"

#include <stdio.h>
#include <string.h>

int64_t vl_proc_kb_field(const char *path, const char *key, int sum_all)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    size_t klen = strlen(key);
    int64_t total = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0 || line[klen] != ':') continue;
        long long kb;
        char unit[8];
        if (sscanf(line + klen + 1, "%lld %7s", &kb, unit) != 2 || strcmp(unit, "kB") != 0 || kb < 0) {
            total = -1;
            break;
        }
        total = (total < 0 ? 0 : total) + kb * 1024;
        if (!sum_all) break;
    }
    fclose(f);
    return total;
}

void vl_proc_memory_read(vl_proc_memory *m)
{
    m->vm_lck_bytes = vl_proc_kb_field("/proc/self/status", "VmLck", 0);
    m->vm_pin_bytes = vl_proc_kb_field("/proc/self/status", "VmPin", 0);
    m->vm_rss_bytes = vl_proc_kb_field("/proc/self/status", "VmRSS", 0);
    m->smaps_locked_bytes = vl_proc_kb_field("/proc/self/smaps", "Locked", 1);
    m->mem_free_bytes = vl_proc_kb_field("/proc/meminfo", "MemFree", 0);
}
