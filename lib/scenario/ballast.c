/* See ballast.h. The driver keeps some memory for itself when an allocation is made,
 * so the first try at exactly free - keep may fail: back off in 64 MiB steps. */
#include "scenario/ballast.h"

#include <string.h>

static size_t device_free(vl_device *dev)
{
    size_t free_b = 0, total = 0;
    if (dev->ops->mem_info(dev, &free_b, &total) != VL_DEV_OK) return 0;
    return free_b;
}

size_t vl_working_set(uint64_t memory, int quick)
{
    if (quick && (memory == 0 || memory > VL_QUICK_WORKING_SET)) return (size_t)VL_QUICK_WORKING_SET;
    return (size_t)memory;
}

size_t vl_ballast_take(vl_ballast *b, vl_device *dev, size_t keep_free)
{
    memset(b, 0, sizeof *b);
    b->dev = dev;
    size_t free_b = device_free(dev);
    if (keep_free == 0 || free_b <= keep_free) return free_b;
    const size_t step = 64u << 20;
    for (size_t want = free_b - keep_free; want >= step; want -= step) {
        void *p = NULL;
        int rc = dev->ops->mem_alloc(dev, want, &p);
        if (rc == VL_DEV_OK) {
            b->ptr = p;
            b->bytes = want;
            break;
        }
        if (rc != VL_DEV_OOM) break;
    }
    return device_free(dev);
}

void vl_ballast_release(vl_ballast *b)
{
    if (b->ptr) b->dev->ops->mem_free(b->dev, b->ptr, b->bytes);
    b->ptr = NULL;
    b->bytes = 0;
}

size_t vl_ballast_take_working_set(vl_ballast *b, vl_program *p, uint64_t memory)
{
    size_t work = vl_ballast_take(b, p->dev, vl_working_set(memory, p->cli.quick));
    vl_csv_meta(p->csv, "working_set_bytes", "%zu (device free memory during the run)", work);
    return work;
}
