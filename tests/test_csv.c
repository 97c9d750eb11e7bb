/* lib/csv.h + lib/runinfo.h: metadata lines, header, rows, unknown values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "alloc.h"
#include "csv.h"
#include "runinfo.h"
#include "support/tmpfile.h"
#include "support/test_main.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_layout(void **state)
{
    (void)state;
    char path[64];
    assert_int_equal(vl_test_tmpfile("csv", path, sizeof path), 0);
    char *argv[] = {"prog", "--alloc", "raw", "evil\nline"};
    vl_run_info ri;
    vl_run_info_fill(&ri, 4, argv, NULL, "raw");
    char err[128];
    vl_csv *c = vl_csv_open(path, &ri, err, sizeof err);
    assert_non_null(c);
    vl_csv_meta(c, "variant", "%s", "bad");
    vl_csv_header(c, "size_bytes,time_ns,reserved_bytes");
    char unk[32];
    vl_csv_row(c, "%d,%.1f,%s", 512, 3.5, vl_csv_i64(VL_UNKNOWN, unk, sizeof unk));
    vl_csv_row(c, "%d,%.1f,%s", 1024, 4.5, vl_csv_i64(2048, unk, sizeof unk));
    assert_int_equal(vl_csv_close(c), 0);
    char *text = slurp(path);
    unlink(path);
    assert_true(strncmp(text, "# vramlab: ", 11) == 0);
    assert_non_null(strstr(text, "# git_revision: "));
    assert_non_null(strstr(text, "# date_utc: "));
    assert_non_null(strstr(text, "# alloc: raw\n"));
    assert_non_null(strstr(text, "# command: prog --alloc raw evil line\n")); /* newline flattened */
    assert_non_null(strstr(text, "# variant: bad\n"));
    /* Every line before the header is metadata; then header, then two rows. */
    char *header = strstr(text, "\nsize_bytes,time_ns,reserved_bytes\n");
    assert_non_null(header);
    for (char *p = text; p <= header; p = strchr(p, '\n') + 1) assert_int_equal(*p, '#');
    assert_string_equal(header + 1, "size_bytes,time_ns,reserved_bytes\n512,3.5,\n1024,4.5,2048\n");
}

/* The header declares the columns once; a row with fewer or more fields is refused
 * by the writer (not written, an error to return), never a silently shifted table. */
static void test_row_field_count(void **state)
{
    (void)state;
    char path[64];
    assert_int_equal(vl_test_tmpfile("csv", path, sizeof path), 0);
    char err[128];
    vl_csv *c = vl_csv_open(path, NULL, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(vl_csv_header(c, "gpu,size_bytes,time_ns"), 0);
    assert_null(vl_csv_error(c));
    assert_int_equal(vl_csv_row(c, "\"%s\",%d,%d", "H200, SXM", 1, 2), 0); /* quoted comma: one field */
    assert_int_equal(vl_csv_row(c, "x,%d,", 3), 0);                       /* empty last field counts */
    assert_int_equal(vl_csv_row(c, "x,%d", 4), -1);                       /* short */
    assert_non_null(vl_csv_error(c));
    assert_non_null(strstr(vl_csv_error(c), "row 3 has 2 fields, the header 3"));
    assert_int_equal(vl_csv_row(c, "x,%d,6,7", 5), -1); /* long */
    assert_int_equal(vl_csv_close(c), -1);
    char *text = slurp(path);
    unlink(path);
    assert_string_equal(text, "gpu,size_bytes,time_ns\n\"H200, SXM\",1,2\nx,3,\n");
}

static void test_unwritable(void **state)
{
    (void)state;
    char err[128] = "";
    assert_null(vl_csv_open("/nonexistent-dir/x.csv", NULL, err, sizeof err));
    assert_non_null(strstr(err, "cannot write /nonexistent-dir/x.csv"));
}

/* Entries of dir whose name starts with prefix. */
static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* The final name appears only at close, complete; before, a hidden temporary name in
 * the same folder holds the rows; discard leaves nothing. */
static void test_written_under_a_temporary_name(void **state)
{
    (void)state;
    char dir[] = "/tmp/vl_test_csv_XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/it's a \"name\".csv", dir);
    char err[256];
    vl_csv *c = vl_csv_open(path, NULL, err, sizeof err);
    assert_non_null(c);
    vl_csv_header(c, "a,b");
    vl_csv_row(c, "1,2");
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(count_entries(dir, ".it's a"), 1);
    assert_int_equal(vl_csv_close(c), 0);
    assert_string_equal(slurp(path), "a,b\n1,2\n");
    assert_int_equal(count_entries(dir, ".it's a"), 0);

    c = vl_csv_open(path, NULL, err, sizeof err); /* a second run over the result */
    assert_non_null(c);
    vl_csv_header(c, "x");
    vl_csv_discard(c);
    assert_string_equal(slurp(path), "a,b\n1,2\n"); /* the earlier result stays */
    assert_int_equal(count_entries(dir, "."), 2);   /* only . and .. */

    char link[300];
    snprintf(link, sizeof link, "%s/link.csv", dir);
    assert_int_equal(symlink(path, link), 0);
    assert_int_equal(vl_csv_same_file(link, path), 1);
    assert_int_equal(vl_csv_same_file(path, "-"), 0);
    assert_int_equal(vl_csv_same_file(path, "/nonexistent"), 0);
    assert_null(vl_csv_open(dir, NULL, err, sizeof err)); /* a folder */
    assert_non_null(strstr(err, "folder"));
    unlink(link);
    unlink(path);
    rmdir(dir);
}

/* An unknown double is an empty field, never 0 or -1; a known one keeps its decimals. */
static void test_f64_unknown_is_empty(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(vl_csv_f64(NAN, 4, buf, sizeof buf), "");
    assert_string_equal(vl_csv_f64(INFINITY, 4, buf, sizeof buf), "");
    assert_string_equal(vl_csv_f64(1.00783, 4, buf, sizeof buf), "1.0078");
    assert_string_equal(vl_csv_f64(0.0, 2, buf, sizeof buf), "0.00");
}

VL_TEST_MAIN(cmocka_unit_test(test_written_under_a_temporary_name), cmocka_unit_test(test_layout), cmocka_unit_test(test_row_field_count), cmocka_unit_test(test_unwritable),
             cmocka_unit_test(test_f64_unknown_is_empty))
