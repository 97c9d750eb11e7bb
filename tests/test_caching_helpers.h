/* Shared by the caching allocator's tests (tests/test_caching*.c): open a simulated
 * device and a caching allocator on it, failing the test with the reason otherwise.
 * Streams on the sim device are any token: S(1), S(2) name distinct streams. */
#ifndef VL_TEST_CACHING_HELPERS_H
#define VL_TEST_CACHING_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "caching/caching.h"
#include "device.h"

#define S(n) ((vl_stream)(uintptr_t)(n))
#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static inline vl_device *sim_open(const char *spec)
{
    int status = 0;
    char err[256] = "";
    vl_device *d = vl_device_open(spec, &status, err, sizeof err);
    if (!d) fail_msg("opening %s: %s", spec, err);
    return d;
}

static inline vl_allocator *caching_open(vl_device *d, const char *spec)
{
    int status = 0;
    char err[256] = "";
    vl_allocator *a = vl_alloc_open(spec, d, &status, err, sizeof err);
    if (!a) fail_msg("opening %s: %s", spec, err);
    return a;
}

static inline void assert_consistent(vl_allocator *a)
{
    char err[512] = "";
    if (vl_caching_check(a, err, sizeof err) != 0) fail_msg("invariant broken: %s", err);
}

static inline vl_alloc_stats stats_of(vl_allocator *a)
{
    vl_alloc_stats st;
    vl_alloc_stats_get(a, &st);
    return st;
}

/* Ends a sim test: invariants hold, every event completes, trim gives the device all its
 * memory back; then closes both. */
static inline void close_all_returned(vl_device *d, vl_allocator *a)
{
    assert_consistent(a);
    vl_sim_complete_all(d);
    vl_trim(a);
    assert_int_equal(stats_of(a).reserved_bytes, 0);
    assert_int_equal(vl_sim_used_bytes(d), 0);
    vl_alloc_close(a);
    vl_device_close(d);
}

#endif
