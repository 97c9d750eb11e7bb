/* lib/scenario/proc_memory.h: reading "KEY: N kB" lines of /proc files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <unistd.h>

#include "scenario/proc_memory.h"
#include "support/test_main.h"
#include "support/tmpfile.h"

static void write_file(char *path, size_t len, const char *text)
{
    assert_int_equal(vl_test_tmpfile("proc", path, len), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_first_and_sum(void **state)
{
    (void)state;
    char path[256];
    write_file(path, sizeof path,
               "Name:\tx\nVmLck:\t       8 kB\nVmLckX:\t 99 kB\nLocked:   4 kB\nSize: 12 kB\nLocked:   12 kB\n");
    assert_int_equal(vl_proc_kb_field(path, "VmLck", 0), 8 * 1024);
    assert_int_equal(vl_proc_kb_field(path, "Locked", 0), 4 * 1024);
    assert_int_equal(vl_proc_kb_field(path, "Locked", 1), 16 * 1024);
    assert_int_equal(vl_proc_kb_field(path, "VmPin", 0), -1); /* absent: unknown, not 0 */
    assert_int_equal(vl_proc_kb_field("/nonexistent/status", "VmLck", 0), -1);
    unlink(path);
}

static void test_malformed_is_unknown(void **state)
{
    (void)state;
    char path[256];
    write_file(path, sizeof path, "VmPin:\t12 pages\nLocked: abc kB\n");
    assert_int_equal(vl_proc_kb_field(path, "VmPin", 0), -1);
    assert_int_equal(vl_proc_kb_field(path, "Locked", 1), -1);
    unlink(path);
}

/* This process's own counters are there on Linux. */
static void test_reads_self(void **state)
{
    (void)state;
    vl_proc_memory m;
    vl_proc_memory_read(&m);
    assert_true(m.vm_rss_bytes > 0);
    assert_true(m.vm_lck_bytes >= 0);
    assert_true(m.mem_free_bytes > 0);
}

VL_TEST_MAIN(cmocka_unit_test(test_first_and_sum), cmocka_unit_test(test_malformed_is_unknown),
             cmocka_unit_test(test_reads_self))
