/* lib/host_cache.h: the pinned host memory cache's rounding, reuse and accounting,
 * against a fake pinner (no GPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "host_cache.h"
#include "support/test_main.h"

/* The fake pinner: malloc, with a count of live pinned bytes and a failure switch. */
typedef struct fake_pinner {
    uint64_t pinned_bytes, pins, unpins;
    int fail_next;
} fake_pinner;

static int fake_pin(void *ctx, size_t size, void **out)
{
    fake_pinner *f = ctx;
    if (f->fail_next) {
        f->fail_next = 0;
        return -1;
    }
    *out = malloc(size > 64 ? 64 : size); /* the policy never touches the bytes */
    if (!*out) return -1;
    f->pinned_bytes += size;
    f->pins++;
    return 0;
}

static void fake_unpin(void *ctx, void *ptr, size_t size)
{
    fake_pinner *f = ctx;
    free(ptr);
    f->pinned_bytes -= size;
    f->unpins++;
}

static vl_host_cache *make_cache(vl_host_rounding r, fake_pinner *f)
{
    vl_host_pinner p = {.pin = fake_pin, .unpin = fake_unpin, .ctx = f};
    vl_host_cache *c = vl_host_cache_create(r, &p);
    assert_non_null(c);
    return c;
}

static void test_round(void **state)
{
    (void)state;
    assert_int_equal(vl_host_round(VL_HOST_ROUND_POW2, 0), 0);
    assert_int_equal(vl_host_round(VL_HOST_ROUND_POW2, 1), 1);
    assert_int_equal(vl_host_round(VL_HOST_ROUND_POW2, 3), 4);
    assert_int_equal(vl_host_round(VL_HOST_ROUND_POW2, 4096), 4096);
    assert_int_equal(vl_host_round(VL_HOST_ROUND_POW2, (1u << 20) + 1), 2u << 20);
    assert_int_equal(vl_host_round(VL_HOST_ROUND_POW2, SIZE_MAX / 2 + 2), 0); /* 2^64 does not fit */
    assert_int_equal(vl_host_round(VL_HOST_ROUND_EXACT, 3), 3);
    assert_int_equal(vl_host_round(VL_HOST_ROUND_EXACT, SIZE_MAX), SIZE_MAX);
}

/* Requests just above powers of two pin up to twice as much under pow2; exact pins
 * what was asked for. */
static void test_pow2_holds_more_than_requested(void **state)
{
    (void)state;
    static const size_t sizes[] = {(5u << 20) + 1, (65u << 20), (3u << 20), (129u << 20)};
    uint64_t asked = 0, pow2 = 0;
    fake_pinner fp = {0}, fe = {0};
    vl_host_cache *p = make_cache(VL_HOST_ROUND_POW2, &fp), *e = make_cache(VL_HOST_ROUND_EXACT, &fe);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        assert_non_null(vl_host_cache_alloc(p, sizes[i]));
        assert_non_null(vl_host_cache_alloc(e, sizes[i]));
        asked += sizes[i];
    }
    pow2 = (8u << 20) + (128u << 20) + (4u << 20) + (256u << 20);
    vl_host_cache_stats sp, se;
    vl_host_cache_stats_get(p, &sp);
    vl_host_cache_stats_get(e, &se);
    assert_int_equal(sp.requested_bytes, asked);
    assert_int_equal(sp.held_bytes, pow2);
    assert_int_equal(fp.pinned_bytes, pow2); /* the stats agree with what was pinned */
    assert_int_equal(se.requested_bytes, asked);
    assert_int_equal(se.held_bytes, asked);
    assert_int_equal(fe.pinned_bytes, asked);
    vl_host_cache_destroy(p);
    vl_host_cache_destroy(e);
    assert_int_equal(fp.pinned_bytes, 0);
    assert_int_equal(fe.pinned_bytes, 0);
}

/* A freed block stays pinned and serves the next request of the same rounded size. */
static void test_reuse_and_empty(void **state)
{
    (void)state;
    fake_pinner f = {0};
    vl_host_cache *c = make_cache(VL_HOST_ROUND_POW2, &f);
    void *a = vl_host_cache_alloc(c, 3000);
    void *b = vl_host_cache_alloc(c, 100);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(vl_host_cache_free(c, a), 0);
    assert_int_equal(vl_host_cache_free(c, a), -1); /* twice */
    int unknown;
    assert_int_equal(vl_host_cache_free(c, &unknown), -1);
    vl_host_cache_stats st;
    vl_host_cache_stats_get(c, &st);
    assert_int_equal(st.requested_bytes, 100);
    assert_int_equal(st.held_bytes, 4096 + 128);
    assert_int_equal(st.cached_bytes, 4096);
    assert_int_equal(st.peak_requested_bytes, 3100);
    /* 2049..4096 rounds to 4096: the cached block; 5000 needs a new one */
    assert_ptr_equal(vl_host_cache_alloc(c, 2049), a);
    vl_host_cache_stats_get(c, &st);
    assert_int_equal(st.cache_hits, 1);
    assert_int_equal(st.pins, 2);
    assert_int_equal(st.cached_bytes, 0);
    void *d = vl_host_cache_alloc(c, 5000);
    assert_non_null(d);
    assert_int_equal(vl_host_cache_free(c, d), 0);
    assert_int_equal(vl_host_cache_free(c, b), 0);
    /* empty unpins the cached blocks (8192 + 128), keeps the live one (4096) */
    assert_int_equal(vl_host_cache_empty(c), 8192 + 128);
    vl_host_cache_stats_get(c, &st);
    assert_int_equal(st.held_bytes, 4096);
    assert_int_equal(f.pinned_bytes, 4096);
    assert_int_equal(st.peak_held_bytes, 4096 + 128 + 8192);
    vl_host_cache_destroy(c);
    assert_int_equal(f.pinned_bytes, 0);
    assert_int_equal(f.pins, f.unpins);
}

/* A failed pin is NULL and changes no figure; size 0 and an unroundable size too. */
static void test_failures(void **state)
{
    (void)state;
    fake_pinner f = {0};
    vl_host_cache *c = make_cache(VL_HOST_ROUND_POW2, &f);
    f.fail_next = 1;
    assert_null(vl_host_cache_alloc(c, 1000));
    assert_null(vl_host_cache_alloc(c, 0));
    assert_null(vl_host_cache_alloc(c, SIZE_MAX));
    vl_host_cache_stats st;
    vl_host_cache_stats_get(c, &st);
    assert_int_equal(st.held_bytes, 0);
    assert_int_equal(st.requested_bytes, 0);
    assert_int_equal(st.pins, 0);
    assert_non_null(vl_host_cache_alloc(c, 1000)); /* the next one works */
    vl_host_cache_destroy(c);
    assert_int_equal(f.pinned_bytes, 0);
}

VL_TEST_MAIN(cmocka_unit_test(test_round), cmocka_unit_test(test_pow2_holds_more_than_requested),
             cmocka_unit_test(test_reuse_and_empty), cmocka_unit_test(test_failures))
