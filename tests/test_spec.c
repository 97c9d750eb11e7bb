/* lib/spec.h and the --alloc / --device SPEC checks built on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "device.h"
#include "spec.h"
#include "support/test_main.h"

static const vl_opt opts[] = {
    {.name = "path", .kind = VL_OPT_STRING, .help = "a file", .positional = 1},
    {.name = "threshold", .kind = VL_OPT_SIZE, .default_value = "2MiB", .help = "a size"},
    {.name = "on", .kind = VL_OPT_BOOL, .default_value = "0", .help = "a flag"},
    {.name = "n", .kind = VL_OPT_INT, .default_value = "3", .help = "a count", .min = -100, .max = 100},
    {.name = "frac", .kind = VL_OPT_DOUBLE, .default_value = "0.5", .help = "a fraction"},
    {.name = "mode", .kind = VL_OPT_ENUM, .default_value = "classic", .choices = "classic|expandable",
     .help = "a choice"},
    {NULL},
};

static void expect_error(const char *text, const char *why)
{
    vl_spec s;
    char err[256] = "";
    assert_int_equal(vl_spec_parse(text, opts, &s, err, sizeof err), -1);
    if (!strstr(err, why)) fail_msg("'%s': error '%s' lacks '%s'", text, err, why);
}

static void test_defaults(void **state)
{
    (void)state;
    vl_spec s;
    char err[256];
    assert_int_equal(vl_spec_parse("thing", opts, &s, err, sizeof err), 0);
    assert_string_equal(s.name, "thing");
    assert_int_equal(vl_spec_size(&s, "threshold"), 2u << 20);
    assert_int_equal(vl_spec_bool(&s, "on"), 0);
    assert_int_equal(vl_spec_int(&s, "n"), 3);
    assert_true(vl_spec_double(&s, "frac") == 0.5);
    assert_int_equal(vl_spec_choice(&s, "mode"), 0);
    assert_null(vl_spec_str(&s, "path"));
    assert_false(vl_spec_given(&s, "n"));
}

static void test_values(void **state)
{
    (void)state;
    vl_spec s;
    char err[256];
    assert_int_equal(vl_spec_parse("thing:./lib.so,threshold=1.5GiB,on=yes,n=-7,frac=0.25,mode=expandable", opts, &s,
                                   err, sizeof err),
                     0);
    assert_string_equal(vl_spec_str(&s, "path"), "./lib.so");
    assert_int_equal(vl_spec_size(&s, "threshold"), 3ull << 29);
    assert_int_equal(vl_spec_bool(&s, "on"), 1);
    assert_int_equal(vl_spec_int(&s, "n"), -7);
    assert_true(vl_spec_double(&s, "frac") == 0.25);
    assert_int_equal(vl_spec_choice(&s, "mode"), 1);
    assert_true(vl_spec_given(&s, "n"));
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", "empty");
    expect_error(":x=1", "no name");
    expect_error("thing:", "nothing after");
    expect_error("thing:bogus=1", "unknown option 'bogus'");
    expect_error("thing:n=1,n=2", "given twice");
    expect_error("thing:n=", "empty value");
    expect_error("thing:n=1,", "trailing");
    expect_error("thing:n=1,,on=1", "empty option");
    expect_error("thing:n=x", "not an integer");
    expect_error("thing:on=2", "not a boolean");
    expect_error("thing:frac=nan", "not a number");
    expect_error("thing:threshold=-1", "not a number");
    expect_error("thing:mode=other", "must be one of classic|expandable");
    expect_error("thing:n=101", "out of range [-100, 100]");
    expect_error("thing:n=1,./lib.so", "not key=value");
    expect_error("th ing", "bad character");
}

static void test_alloc_specs(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(vl_alloc_spec_check("raw", err, sizeof err), 0);
    assert_int_equal(vl_alloc_spec_check("async:pool=private,release_threshold=1GiB,follow_events=0", err, sizeof err), 0);
    assert_int_equal(vl_alloc_spec_check("plugin:/x/y.so,alloc=a,free=b", err, sizeof err), 0);
    assert_int_equal(vl_alloc_spec_check("nonsense", err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown allocator 'nonsense'"));
    assert_int_equal(vl_alloc_spec_check("raw:x=1", err, sizeof err), -1);
    assert_int_equal(vl_alloc_spec_check("async:release_threshold=lots", err, sizeof err), -1);
    assert_int_equal(vl_alloc_spec_check("plugin", err, sizeof err), -1);
    assert_non_null(strstr(err, "path is required"));
}

/* A named SPEC stands for its SPEC; options given replace its own of the same key. */
static void test_named_specs(void **state)
{
    (void)state;
    char err[256], out[VL_SPEC_MAX_TEXT];
    assert_int_equal(vl_alloc_spec_expand("lowwaste", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.008,lend=1,top=fit");
    assert_int_equal(vl_alloc_spec_expand("lowwaste:span=8MiB,park=0", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "caching:segments=expandable,reclaim=0.008,reclaim_max=0.008,lend=1,top=fit,span=8MiB,park=0");
    assert_int_equal(vl_alloc_spec_expand("lowwaste:spanx=1", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.008,lend=1,top=fit,spanx=1"); /* a key, not a prefix */
    assert_int_equal(vl_alloc_spec_expand("raw", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "raw");
    assert_int_equal(vl_alloc_spec_expand("lowwaste:span=8MiB", out, 40, err, sizeof err), -1);
    assert_non_null(strstr(err, "too long"));
    vl_spec parsed;
    assert_int_equal(vl_alloc_spec_parse("lowwaste:reclaim=0.004", &parsed, err, sizeof err), 0);
    assert_string_equal(parsed.name, "caching");
    assert_int_equal(vl_alloc_spec_check("lowwaste:bogus=1", err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown option 'bogus'"));
    assert_int_equal(vl_alloc_spec_check("lowwaste:", err, sizeof err), 0);
}

static void test_device_specs(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(vl_device_spec_check("cuda", err, sizeof err), 0);
    assert_int_equal(vl_device_spec_check("sim", err, sizeof err), 0);
    assert_int_equal(vl_device_spec_check("tpu", err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown device 'tpu'"));
    assert_int_equal(vl_device_spec_check("sim:capacity=lots", err, sizeof err), -1);
}

/* --device cuda:N is the short form of cuda:device=N (the ordinal is the positional
 * option), so that every program runs on a chosen GPU. */
static void test_device_ordinal_shorthand(void **state)
{
    (void)state;
    char err[256];
    vl_spec s;
    assert_int_equal(vl_device_spec_parse("cuda:1", &s, err, sizeof err), 0);
    assert_string_equal(s.name, "cuda");
    assert_int_equal(vl_spec_int(&s, "device"), 1);
    assert_true(vl_spec_given(&s, "device"));
    assert_int_equal(vl_device_spec_parse("cuda:3,vmm=0", &s, err, sizeof err), 0);
    assert_int_equal(vl_spec_int(&s, "device"), 3);
    assert_int_equal(vl_spec_bool(&s, "vmm"), 0);
    assert_int_equal(vl_device_spec_parse("cuda:device=2", &s, err, sizeof err), 0);
    assert_int_equal(vl_spec_int(&s, "device"), 2);
    assert_int_equal(vl_device_spec_parse("cuda", &s, err, sizeof err), 0);
    assert_int_equal(vl_spec_int(&s, "device"), 0);
    assert_int_equal(vl_device_spec_check("cuda:one", err, sizeof err), -1);
    assert_int_equal(vl_device_spec_check("cuda:1,device=2", err, sizeof err), -1);
}

/* An option that means something only under another option's value is refused when
 * given without it (it would be ignored), and accepted with it, given or by default. */
static void test_applies_if(void **state)
{
    (void)state;
    static const vl_opt cond[] = {
        {.name = "mode", .kind = VL_OPT_ENUM, .default_value = "classic", .choices = "classic|expandable|other",
         .help = "a choice"},
        {.name = "on", .kind = VL_OPT_BOOL, .default_value = "0", .help = "a flag"},
        {.name = "chunk", .kind = VL_OPT_SIZE, .default_value = "2MiB", .help = "x", .applies_if = "mode=expandable|other"},
        {.name = "gc", .kind = VL_OPT_DOUBLE, .default_value = "0", .help = "y", .applies_if = "mode=classic"},
        {.name = "deep", .kind = VL_OPT_INT, .default_value = "1", .help = "z", .applies_if = "on=1"},
        {NULL},
    };
    vl_spec s;
    char err[256];
    assert_int_equal(vl_spec_parse("c:chunk=4MiB", cond, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "chunk applies only with mode=expandable|other (here mode=classic)"));
    assert_int_equal(vl_spec_parse("c:mode=expandable,chunk=4MiB", cond, &s, err, sizeof err), 0);
    assert_int_equal(vl_spec_parse("c:chunk=4MiB,mode=other", cond, &s, err, sizeof err), 0);
    assert_int_equal(vl_spec_parse("c:gc=0.5", cond, &s, err, sizeof err), 0); /* classic by default */
    assert_int_equal(vl_spec_parse("c:mode=expandable,gc=0.5", cond, &s, err, sizeof err), -1);
    assert_int_equal(vl_spec_parse("c:mode=expandable", cond, &s, err, sizeof err), 0); /* defaults never refused */
    assert_int_equal(vl_spec_parse("c:deep=2", cond, &s, err, sizeof err), -1);
    assert_int_equal(vl_spec_parse("c:on=true,deep=2", cond, &s, err, sizeof err), 0);
}

VL_TEST_MAIN(cmocka_unit_test(test_applies_if), cmocka_unit_test(test_defaults), cmocka_unit_test(test_values), cmocka_unit_test(test_errors),
             cmocka_unit_test(test_alloc_specs), cmocka_unit_test(test_named_specs), cmocka_unit_test(test_device_specs),
             cmocka_unit_test(test_device_ordinal_shorthand))
