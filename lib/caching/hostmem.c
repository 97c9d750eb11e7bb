/* Host memory with fault injection (see hostmem.h). */
#include "caching/hostmem.h"

#include <stdatomic.h>
#include <stdlib.h>

static _Atomic uint64_t fail_countdown; /* 0: off; 1: the next allocation fails */
static _Atomic uint64_t allocations;

/* Whether this allocation is the one to fail (counts it either way). */
static int injected_failure(void)
{
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    uint64_t n = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    while (n != 0) {
        if (atomic_compare_exchange_weak_explicit(&fail_countdown, &n, n - 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return n == 1;
    }
    return 0;
}

void *vl_host_malloc(size_t size) { return injected_failure() ? NULL : malloc(size); }
void *vl_host_calloc(size_t n, size_t size) { return injected_failure() ? NULL : calloc(n, size); }
void *vl_host_realloc(void *p, size_t size) { return injected_failure() ? NULL : realloc(p, size); }
void *vl_host_aligned_alloc(size_t align, size_t size)
{
    return injected_failure() ? NULL : aligned_alloc(align, size);
}

void vl_host_fail_nth(uint64_t n) { atomic_store_explicit(&fail_countdown, n, memory_order_relaxed); }
uint64_t vl_host_allocations(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }
