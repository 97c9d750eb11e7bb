/* The address map (lib/addrmap.h): lookups stay short for any address layout,
 * in particular for addresses that differ only in their high bits (reservations a
 * large power of two apart, stream handles), and removal keeps every key findable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "addrmap.h"
#include "support/test_main.h"

/* Slots between a key's home and where it sits, the longest over the table. */
static size_t longest_probe(const vl_addrmap *m)
{
    size_t longest = 0;
    for (size_t i = 0; i <= m->mask; i++) {
        if (m->slots[i].key == 0) continue;
        size_t home = vl_addrmap_home(m, m->slots[i].key);
        size_t distance = (i - home) & m->mask;
        if (distance > longest) longest = distance;
    }
    return longest;
}

static void fill_and_check(uintptr_t base, int shift, size_t n)
{
    vl_addrmap m;
    assert_int_equal(vl_addrmap_init(&m, 64), 0);
    for (size_t k = 1; k <= n; k++) assert_int_equal(vl_addrmap_insert(&m, base + ((uintptr_t)k << shift), k), 0);
    /* Load <= 1/2 with a good hash: runs of a few dozen slots at most. */
    size_t probe = longest_probe(&m);
    if (probe > 64) fail_msg("keys 2^%d apart: longest probe %zu slots for %zu keys", shift, probe, n);
    for (size_t k = 1; k <= n; k += 2) {
        uint64_t v = 0;
        assert_int_equal(vl_addrmap_remove(&m, base + ((uintptr_t)k << shift), &v), 1);
        assert_int_equal(v, k);
    }
    for (size_t k = 1; k <= n; k++) {
        vl_addrmap_slot *s = vl_addrmap_find(&m, base + ((uintptr_t)k << shift));
        if (k % 2) assert_null(s);
        else assert_true(s && s->value == k);
    }
    vl_addrmap_destroy(&m);
}

static void test_high_bit_addresses_spread(void **state)
{
    (void)state;
    fill_and_check(0, 40, 4000);              /* differ only above bit 40 */
    fill_and_check(UINT64_C(1) << 40, 29, 4000); /* only above bit 28 */
    fill_and_check(UINT64_C(1) << 40, 9, 100000); /* consecutive 512 B blocks */
    fill_and_check(0, 0, 10000);              /* small tokens (sim streams + 1) */
}

VL_TEST_MAIN(cmocka_unit_test(test_high_bit_addresses_spread))
