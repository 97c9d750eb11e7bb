/* The statistics adaptor (lib/alloc.h): a backend that counts nothing itself gets
 * requested bytes, their peak, calls and OOMs for free; unknown stays unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "alloc.h"
#include "support/test_main.h"

/* A backend with no statistics at all: malloc, and OOM above 1 MiB. */
static void *bare_alloc(vl_allocator *a, size_t size, vl_stream s)
{
    (void)a, (void)s;
    return size == 0 || size > (1u << 20) ? NULL : malloc(size);
}
static void bare_free(vl_allocator *a, void *p, size_t size, vl_stream s)
{
    (void)a, (void)size, (void)s;
    free(p);
}
static const vl_alloc_backend bare = {.name = "bare", .alloc = bare_alloc, .free = bare_free};

static void test_adaptor_counts_any_backend(void **state)
{
    (void)state;
    vl_allocator a = {.backend = &bare};
    void *p = vl_allocate(&a, 1000, 0), *q = vl_allocate(&a, 24, 0);
    assert_non_null(p);
    assert_non_null(q);
    assert_null(vl_allocate(&a, 2u << 20, 0)); /* OOM */
    assert_null(vl_allocate(&a, 0, 0));        /* not an OOM */
    vl_deallocate(&a, p, 1000, 0);
    vl_deallocate(&a, NULL, 0, 0); /* nothing */

    vl_alloc_stats st;
    vl_alloc_stats_get(&a, &st);
    assert_int_equal(st.requested_bytes, 24);
    assert_int_equal(st.peak_requested_bytes, 1024);
    assert_int_equal(st.allocs, 2);
    assert_int_equal(st.frees, 1);
    assert_int_equal(st.ooms, 1);
    assert_int_equal(st.reserved_bytes, VL_UNKNOWN);
    assert_int_equal(st.allocated_bytes, VL_UNKNOWN);

    vl_alloc_reset_peaks(&a);
    vl_alloc_stats_get(&a, &st);
    assert_int_equal(st.peak_requested_bytes, 24);
    vl_deallocate(&a, q, 24, 0);
}

VL_TEST_MAIN(cmocka_unit_test(test_adaptor_counts_any_backend))
