/* See mem_sample.h. */
#include "scenario/mem_sample.h"

#include <stdio.h>

#include "csv.h"

void vl_mem_sample_take(vl_allocator *a, vl_mem_sample *m)
{
    vl_alloc_stats st;
    vl_alloc_stats_get(a, &st);
    m->requested_bytes = st.requested_bytes;
    m->allocated_bytes = st.allocated_bytes;
    m->reserved_bytes = st.reserved_bytes;
    m->peak_allocated_bytes = st.peak_allocated_bytes;
    m->peak_reserved_bytes = st.peak_reserved_bytes;
    m->ooms = st.ooms;
    size_t free_b = 0, total_b = 0;
    if (a->dev->ops->mem_info(a->dev, &free_b, &total_b) == VL_DEV_OK) {
        m->device_free_bytes = (int64_t)free_b;
        m->device_used_bytes = (int64_t)(total_b - free_b);
    } else {
        m->device_free_bytes = VL_UNKNOWN;
        m->device_used_bytes = VL_UNKNOWN;
    }
}

const char *vl_mem_sample_values(const vl_mem_sample *m, char *buf, size_t buflen)
{
    char b[7][24];
    snprintf(buf, buflen, "%s,%s,%s,%s,%s,%s,%s", vl_csv_i64(m->requested_bytes, b[0], sizeof b[0]),
             vl_csv_i64(m->allocated_bytes, b[1], sizeof b[1]), vl_csv_i64(m->reserved_bytes, b[2], sizeof b[2]),
             vl_csv_i64(m->peak_allocated_bytes, b[3], sizeof b[3]),
             vl_csv_i64(m->peak_reserved_bytes, b[4], sizeof b[4]),
             vl_csv_i64(m->device_used_bytes, b[5], sizeof b[5]),
             vl_csv_i64(m->device_free_bytes, b[6], sizeof b[6]));
    return buf;
}

int64_t vl_mem_sample_held(const vl_mem_sample *m)
{
    return m->reserved_bytes != VL_UNKNOWN ? m->reserved_bytes : m->device_used_bytes;
}
