/* Host memory for the caching allocator's own records (block headers, segment and
 * stream records, the pointer table) and the simulated device's bookkeeping, with one
 * fault-injection knob so tests can drive every "out of host memory" path.
 *
 * The knob is process-wide (the records are not tied to one allocator); tests that use
 * it run single-threaded around the call they make fail. */
#ifndef VL_CACHING_HOSTMEM_H
#define VL_CACHING_HOSTMEM_H

#include <stddef.h>
#include <stdint.h>

void *vl_host_malloc(size_t size);
void *vl_host_calloc(size_t n, size_t size);
void *vl_host_realloc(void *p, size_t size);
void *vl_host_aligned_alloc(size_t align, size_t size);

/* Test API: the nth host allocation through these functions from now on (1 = the next
 * one) returns NULL, once; 0 disarms. */
void vl_host_fail_nth(uint64_t n);
/* Host allocations made through these functions so far (to size a fault sweep). */
uint64_t vl_host_allocations(void);

#endif
