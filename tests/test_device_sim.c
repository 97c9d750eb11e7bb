/* lib/device/sim.c: the simulated device keeps the driver's rules (capacity, aligned
 * never-overlapping addresses, VMM map/unmap discipline, events) and reports misuse as
 * VL_DEV_ERROR instead of corrupting its state. */
#include "test_caching_helpers.h"
#include "support/test_main.h"

static void test_plain_allocations(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=64MiB,overhead=4MiB");
    assert_int_equal(d->simulated, 1);
    assert_int_equal(d->total_bytes, 64 * MiB);
    assert_string_equal(d->kind, "sim");
    size_t free_bytes = 0, total = 0;
    assert_int_equal(d->ops->mem_info(d, &free_bytes, &total), VL_DEV_OK);
    assert_int_equal(free_bytes, 60 * MiB);
    void *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(d->ops->mem_alloc(d, 1000, &a), VL_DEV_OK);
    assert_int_equal(d->ops->mem_alloc(d, 30 * MiB, &b), VL_DEV_OK);
    assert_non_null(a);
    assert_true((uintptr_t)a % 512 == 0 && (uintptr_t)b % 512 == 0);
    assert_true((uintptr_t)b >= (uintptr_t)a + 1000); /* never overlapping */
    assert_int_equal(vl_sim_used_bytes(d), 30 * MiB + 1000);
    /* Past capacity: OOM, nothing changes. */
    assert_int_equal(d->ops->mem_alloc(d, 30 * MiB, &c), VL_DEV_OOM);
    assert_null(c);
    /* No external fragmentation: free bytes are usable whatever the holes. */
    assert_int_equal(d->ops->mem_free(d, a, 1000), VL_DEV_OK);
    assert_int_equal(d->ops->mem_alloc(d, 30 * MiB, &c), VL_DEV_OK);
    assert_true((uintptr_t)c >= (uintptr_t)b + 30 * MiB); /* addresses are never reused */
    /* Misuse: wrong size, unknown pointer, double free. */
    assert_int_equal(d->ops->mem_free(d, b, 1), VL_DEV_ERROR);
    assert_int_equal(d->ops->mem_free(d, (char *)b + 512, 30 * MiB), VL_DEV_ERROR);
    assert_int_equal(d->ops->mem_free(d, b, 30 * MiB), VL_DEV_OK);
    assert_int_equal(d->ops->mem_free(d, b, 30 * MiB), VL_DEV_ERROR);
    assert_int_equal(d->ops->mem_free(d, c, 30 * MiB), VL_DEV_OK);
    assert_int_equal(vl_sim_used_bytes(d), 0);
    vl_device_close(d);
}

static void test_vmm_rules(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=16MiB,granularity=2MiB");
    assert_int_equal(d->granularity, 2 * MiB);
    void *va = NULL, *other = NULL;
    assert_int_equal(d->ops->va_reserve(d, 3 * MiB, &va), VL_DEV_ERROR); /* not a granule multiple */
    assert_int_equal(d->ops->va_reserve(d, 64 * MiB, &va), VL_DEV_OK);  /* VA beyond capacity is fine */
    assert_int_equal(d->ops->va_reserve(d, 8 * MiB, &other), VL_DEV_OK);
    assert_true((uintptr_t)va % (2 * MiB) == 0);
    assert_true((uintptr_t)other >= (uintptr_t)va + 64 * MiB);
    char *base = va;
    assert_int_equal(d->ops->map(d, base, 3 * MiB), VL_DEV_ERROR);           /* size */
    assert_int_equal(d->ops->map(d, base + MiB, 2 * MiB), VL_DEV_ERROR);     /* alignment */
    assert_int_equal(d->ops->map(d, base + 62 * MiB, 4 * MiB), VL_DEV_ERROR); /* past the end */
    assert_int_equal(d->ops->map(d, base, 4 * MiB), VL_DEV_OK);
    assert_int_equal(d->ops->map(d, base + 2 * MiB, 2 * MiB), VL_DEV_ERROR); /* already mapped */
    assert_int_equal(d->ops->map(d, base + 4 * MiB, 2 * MiB), VL_DEV_OK);
    assert_int_equal(vl_sim_used_bytes(d), 6 * MiB);
    /* Capacity counts mapped memory: 6 + 12 > 16. */
    assert_int_equal(d->ops->map(d, base + 8 * MiB, 12 * MiB), VL_DEV_OOM);
    /* unmap takes exactly one map call's range. */
    assert_int_equal(d->ops->unmap(d, base, 2 * MiB), VL_DEV_ERROR);       /* part of one */
    assert_int_equal(d->ops->unmap(d, base, 6 * MiB), VL_DEV_ERROR);       /* two at once */
    assert_int_equal(d->ops->unmap(d, base + 2 * MiB, 2 * MiB), VL_DEV_ERROR);
    assert_int_equal(d->ops->va_release(d, va, 64 * MiB), VL_DEV_ERROR);   /* still mapped */
    assert_int_equal(d->ops->unmap(d, base, 4 * MiB), VL_DEV_OK);
    assert_int_equal(d->ops->unmap(d, base, 4 * MiB), VL_DEV_ERROR);       /* twice */
    assert_int_equal(d->ops->unmap(d, base + 4 * MiB, 2 * MiB), VL_DEV_OK);
    assert_int_equal(vl_sim_used_bytes(d), 0);
    assert_int_equal(d->ops->va_release(d, va, 32 * MiB), VL_DEV_ERROR);   /* wrong size */
    assert_int_equal(d->ops->va_release(d, va, 64 * MiB), VL_DEV_OK);
    assert_int_equal(d->ops->map(d, base, 2 * MiB), VL_DEV_ERROR);         /* released */
    assert_int_equal(d->ops->va_release(d, other, 8 * MiB), VL_DEV_OK);
    vl_device_close(d);
}

static void test_no_vmm(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:vmm=0");
    void *va = NULL;
    assert_int_equal(d->vmm_supported, 0);
    assert_int_equal(d->ops->va_reserve(d, 2 * MiB, &va), VL_DEV_UNSUPPORTED);
    vl_device_close(d);
}

static void test_events_manual(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:events=manual");
    vl_event e1, e2, e3;
    assert_int_equal(d->ops->event_record(d, S(1), &e1), VL_DEV_OK);
    assert_int_equal(d->ops->event_record(d, S(1), &e2), VL_DEV_OK);
    assert_int_equal(d->ops->event_record(d, S(2), &e3), VL_DEV_OK);
    assert_int_equal(vl_sim_pending_events(d), 3);
    assert_int_equal(d->ops->event_query(d, e1), 0);
    vl_sim_complete_stream(d, S(1));
    assert_int_equal(d->ops->event_query(d, e1), 1);
    assert_int_equal(d->ops->event_query(d, e2), 1);
    assert_int_equal(d->ops->event_query(d, e3), 0);
    assert_int_equal(vl_sim_pending_events(d), 1);
    /* An event recorded after the completion is not complete. */
    vl_event e4;
    assert_int_equal(d->ops->event_record(d, S(1), &e4), VL_DEV_OK);
    assert_int_equal(d->ops->event_query(d, e4), 0);
    assert_int_equal(d->ops->synchronize(d), VL_DEV_OK); /* waits for everything */
    assert_int_equal(d->ops->event_query(d, e3), 1);
    assert_int_equal(d->ops->event_query(d, e4), 1);
    assert_int_equal(vl_sim_pending_events(d), 0);
    d->ops->event_release(d, e1);
    assert_int_equal(d->ops->event_query(d, e1), -1); /* released: misuse */
    d->ops->event_release(d, e2);
    d->ops->event_release(d, e3);
    d->ops->event_release(d, e4);
    vl_device_close(d);
}

/* unmap does not wait (device.h), nor complete any event; unmap_keep keeps the memory
 * counted until map_phys maps it again (no new memory) or phys_release gives it back. */
static void test_unmap_keep_and_map_phys(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=8MiB,events=manual");
    void *va = NULL;
    vl_event e;
    assert_int_equal(d->ops->va_reserve(d, 8 * MiB, &va), VL_DEV_OK);
    char *a = va, *b = a + 4 * MiB;
    assert_int_equal(d->ops->map(d, a, 4 * MiB), VL_DEV_OK);
    assert_int_equal(d->ops->event_record(d, S(1), &e), VL_DEV_OK);
    vl_phys kept = NULL;
    assert_int_equal(d->ops->unmap_keep(d, a, 4 * MiB, &kept), VL_DEV_OK);
    assert_int_equal(d->ops->event_query(d, e), 0); /* nothing waited */
    assert_false(vl_sim_is_mapped(d, a));
    assert_int_equal(vl_sim_mapped_bytes(d), 0);
    assert_int_equal(vl_sim_used_bytes(d), 4 * MiB);
    assert_int_equal(d->ops->map(d, b, 4 * MiB), VL_DEV_OK);   /* the other half of capacity */
    assert_int_equal(d->ops->map(d, a, 2 * MiB), VL_DEV_OOM);  /* kept memory still counts */
    assert_int_equal(d->ops->unmap(d, b, 4 * MiB), VL_DEV_OK);
    assert_int_equal(d->ops->map_phys(d, b, 2 * MiB, kept), VL_DEV_ERROR); /* another size */
    assert_int_equal(d->ops->map_phys(d, b, 4 * MiB, kept), VL_DEV_OK);
    assert_true(vl_sim_is_mapped(d, b));
    assert_int_equal(vl_sim_used_bytes(d), 4 * MiB);
    assert_int_equal(d->ops->unmap_keep(d, b, 4 * MiB, &kept), VL_DEV_OK);
    assert_int_equal(d->ops->phys_release(d, kept, 4 * MiB), VL_DEV_OK);
    assert_int_equal(vl_sim_used_bytes(d), 0);
    d->ops->event_release(d, e);
    assert_int_equal(d->ops->va_release(d, va, 8 * MiB), VL_DEV_OK);
    vl_device_close(d);
}

static void test_events_immediate(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim");
    vl_event e;
    assert_int_equal(d->ops->event_record(d, S(5), &e), VL_DEV_OK);
    assert_int_equal(vl_sim_pending_events(d), 0);
    assert_int_equal(d->ops->event_query(d, e), 1);
    d->ops->event_release(d, e);
    vl_device_close(d);
}

static void test_bad_specs(void **state)
{
    (void)state;
    char err[256];
    int status = 0;
    assert_null(vl_device_open("sim:granularity=3000", &status, err, sizeof err));
    assert_non_null(strstr(err, "granularity"));
    assert_null(vl_device_open("sim:capacity=0", &status, err, sizeof err));
    assert_null(vl_device_open("sim:capacity=1GiB,overhead=2GiB", &status, err, sizeof err));
    assert_null(vl_device_open("sim:events=sometimes", &status, err, sizeof err));
    vl_device *d = sim_open("sim:4GiB"); /* capacity is positional */
    assert_int_equal(d->total_bytes, 4ull << 30);
    vl_device_close(d);
}

VL_TEST_MAIN(cmocka_unit_test(test_plain_allocations), cmocka_unit_test(test_vmm_rules),
             cmocka_unit_test(test_no_vmm), cmocka_unit_test(test_events_manual),
             cmocka_unit_test(test_unmap_keep_and_map_phys), cmocka_unit_test(test_events_immediate),
             cmocka_unit_test(test_bad_specs))
