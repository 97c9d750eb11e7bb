/* The exact period of a trace's allocations (see period.h). */
#include "period.h"

#include <stdint.h>
#include <stdlib.h>

#define NEVER UINT64_MAX

int vl_trace_find_period(const vl_trace *t, vl_trace_period *out)
{
    size_t n = t->nallocs;
    out->allocs = 0;
    out->compared = 0;
    uint64_t *size = malloc((n ? n : 1) * sizeof *size), *life = malloc((n ? n : 1) * sizeof *life);
    if (!size || !life) {
        free(size);
        free(life);
        return -1;
    }
    /* lifetime of slot k: allocations made from its own until its free (NEVER: not freed) */
    size_t made = 0;
    for (size_t i = 0; i < t->nops; i++) {
        const vl_trace_op *op = &t->ops[i];
        if (op->kind == VL_TRACE_ALLOC) {
            size[op->slot] = op->size;
            life[op->slot] = NEVER;
            made++;
        } else {
            life[op->slot] = made - op->slot;
        }
    }
    /* The last period is left out: how a recording ends (a last step, a teardown) changes
     * when its blocks are freed. */
    size_t half = n / 2;
    for (size_t p = 1; p <= n / 4 && !out->allocs; p++) {
        if (n - half < 3 * p) break; /* fewer than two periods to compare, and the last */
        size_t k = half, end = n - p;
        while (k < end && size[k] == size[k - p] &&
               (life[k] == life[k - p] || life[k] == NEVER || life[k - p] == NEVER))
            k++;
        if (k == end) {
            out->allocs = p;
            out->compared = end - half;
        }
    }
    free(size);
    free(life);
    return 0;
}
