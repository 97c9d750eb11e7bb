/* Prints the conditions of this machine's device (GPU, driver, runtime, memory, VMM
 * granularity) as the '#' metadata every CSV carries, plus one data row. `make bench`
 * runs it first: its exit status (77) is how the suite learns there is no GPU. */
#include <stdio.h>

#include "program.h"

int main(int argc, char **argv)
{
    static const vl_program_def def = {
        .summary = "Describes the device: name, driver, runtime, memory, VMM granularity.",
        .default_alloc = NULL,
    };
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    size_t free_bytes = 0, total_bytes = 0;
    p.dev->ops->mem_info(p.dev, &free_bytes, &total_bytes);
    vl_csv_header(p.csv, "gpu,total_bytes,free_bytes,granularity_bytes,vmm_supported,simulated");
    vl_csv_row(p.csv, "\"%s\",%zu,%zu,%zu,%d,%d", p.dev->name, total_bytes, free_bytes, p.dev->granularity,
               p.dev->vmm_supported, p.dev->simulated);
    return vl_program_finish(&p);
}
