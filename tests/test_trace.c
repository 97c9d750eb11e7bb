/* Tests of the trace parsers (lib/trace): every format, format guessing, malformed
 * lines with their line numbers, unknown frees, the torch free_requested /
 * free_completed choice, and hostile bytes. No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/tmpfile.h"
#include "trace/load.h"
#include "trace/record.h"
#include "trace/trace.h"
#include "support/test_main.h"

static char err[512];

static int parse(const char *text, vl_trace_format fmt, vl_trace *t)
{
    return vl_trace_parse_buffer(text, strlen(text), fmt, t, err, sizeof err);
}

static void expect_error(const char *text, vl_trace_format fmt, const char *fragment)
{
    vl_trace t;
    assert_int_equal(parse(text, fmt, &t), -1);
    if (!strstr(err, fragment)) fail_msg("error '%s' lacks '%s'", err, fragment);
    assert_int_equal(t.nops, 0);
    vl_trace_free(&t);
}

/* What each format's main test checks first: text parses with the format guessed (fmt),
 * into nallocs allocations and nfrees frees on nstreams streams. */
static void parse_guessed(const char *text, vl_trace_format fmt, size_t nallocs, size_t nfrees, size_t nstreams,
                          vl_trace *t)
{
    assert_int_equal(parse(text, VL_TRACE_AUTO, t), 0);
    assert_int_equal(t->format, fmt);
    assert_int_equal(t->nallocs, nallocs);
    assert_int_equal(t->nfrees, nfrees);
    assert_int_equal(t->nstreams, nstreams);
}

static void test_vramlab_basic(void **state)
{
    (void)state;
    vl_trace t;
    const char *text = "vramlab-trace 1\n"
                       "# two blocks on two streams\n"
                       "a 1 4KiB\n"
                       "\n"
                       "a 0x20 100 7\n"
                       "f 1\n"
                       "a 1 512 7\n"
                       "f 0x20 7\n";
    parse_guessed(text, VL_TRACE_VRAMLAB, 3, 2, 2, &t);
    assert_int_equal(t.nops, 5);
    assert_true(vl_trace_stream_is_default(&t, 0));
    assert_false(vl_trace_stream_is_default(&t, 1));
    /* a 1 4KiB */
    assert_int_equal(t.ops[0].kind, VL_TRACE_ALLOC);
    assert_int_equal(t.ops[0].size, 4096);
    assert_int_equal(t.ops[0].slot, 0);
    assert_int_equal(t.ops[0].line, 3);
    /* f 1 frees slot 0 with its size */
    assert_int_equal(t.ops[2].kind, VL_TRACE_FREE);
    assert_int_equal(t.ops[2].slot, 0);
    assert_int_equal(t.ops[2].size, 4096);
    /* ID 1 reused after its free: a new slot */
    assert_int_equal(t.ops[3].slot, 2);
    assert_int_equal(t.ops[3].stream, 1);
    assert_int_equal(t.ops[4].slot, 1);
    assert_int_equal(t.peak_live_bytes, 4096 + 100);
    assert_int_equal(t.live_at_end, 1);
    assert_int_equal(t.unknown_frees, 0);
    vl_trace_free(&t);
}

static void test_vramlab_errors(void **state)
{
    (void)state;
    expect_error("vramlab-trace 1\na 1 100\nx 2\n", VL_TRACE_VRAMLAB, "3: unknown operation");
    expect_error("vramlab-trace 1\na 1 12QB\n", VL_TRACE_VRAMLAB, "2: bad SIZE");
    expect_error("vramlab-trace 1\na one 12\n", VL_TRACE_VRAMLAB, "2: bad ID");
    expect_error("vramlab-trace 1\na 1 12\na 1 8\n", VL_TRACE_VRAMLAB, "3: address 0x1 allocated again while live (allocated on line 2)");
    expect_error("vramlab-trace 2\n", VL_TRACE_VRAMLAB, "1: unsupported vramlab-trace version");
    expect_error("vramlab-trace 1\na 1\n", VL_TRACE_VRAMLAB, "2: expected 'a ID SIZE [STREAM]'");
    expect_error("vramlab-trace 1\nf 1 2 3\n", VL_TRACE_VRAMLAB, "2: expected 'f ID [STREAM]'");
    expect_error("vramlab-trace 1\na 1 99999999999999999999999\n", VL_TRACE_VRAMLAB, "2: bad SIZE");
}

/* A field past the last one a line may have is malformed, not ignored (a trace with a
 * column the reader does not know would replay as something else): the error is one
 * line and names the line, whether the format is named or guessed. */
static void test_vramlab_extra_fields_rejected(void **state)
{
    (void)state;
    const char *text = "vramlab-trace 1\na 1 4096 0 junk\n";
    expect_error(text, VL_TRACE_VRAMLAB, "2: expected 'a ID SIZE [STREAM]'");
    assert_null(strchr(err, '\n'));
    expect_error(text, VL_TRACE_AUTO, "2: expected 'a ID SIZE [STREAM]'");
    expect_error("vramlab-trace 1\na 1 4096\nf 1 0 junk\n", VL_TRACE_VRAMLAB, "3: expected 'f ID [STREAM]'");
    assert_null(strchr(err, '\n'));
}

static void test_unknown_frees_reported(void **state)
{
    (void)state;
    vl_trace t;
    const char *text = "vramlab-trace 1\na 1 10\nf 2\nf 1\nf 1\n";
    assert_int_equal(parse(text, VL_TRACE_AUTO, &t), 0);
    assert_int_equal(t.unknown_frees, 2);
    assert_int_equal(t.unknown_free_lines[0], 3);
    assert_int_equal(t.unknown_free_lines[1], 5);
    assert_int_equal(t.nfrees, 1);
    assert_int_equal(t.nops, 2);
    vl_trace_free(&t);

    /* More than the remembered lines: all counted, the first few kept. */
    char big[4096] = "vramlab-trace 1\n";
    for (int i = 0; i < 20; i++) snprintf(big + strlen(big), sizeof big - strlen(big), "f %d\n", 100 + i);
    assert_int_equal(parse(big, VL_TRACE_AUTO, &t), 0);
    assert_int_equal(t.unknown_frees, 20);
    assert_int_equal(t.unknown_free_lines[VL_TRACE_FIRST_UNKNOWN - 1], VL_TRACE_FIRST_UNKNOWN + 1);
    vl_trace_free(&t);
}

static const char torch_text[] = "action,addr,size,stream,time_us\n"
                                 "segment_alloc,1000,2097152,0,1\n"
                                 "alloc,1000,512,0,2\n"
                                 "alloc,0x2000,1024,93824992236048,3.5\n"
                                 "free_requested,1000,512,0,4\n"
                                 "free_completed,1000,512,0,5\n"
                                 "oom,0,99999999999,0,6\n"
                                 "snapshot,0,0,0,\n"
                                 "free_requested,0x2000,1024,93824992236048,7\n"
                                 "alloc,3000,4096,0,8\n"
                                 "free_completed,0x2000,1024,93824992236048,9\n";

static void test_torch_csv_completed(void **state)
{
    (void)state;
    vl_trace t;
    parse_guessed(torch_text, VL_TRACE_TORCH_CSV, 3, 2, 2, &t);
    assert_int_equal(t.recorded_ooms, 1);
    assert_int_equal(t.skipped_records, 2);
    assert_int_equal(t.stream_ids[1], 93824992236048ULL);
    /* Freed at free_completed: 0x2000 is still live when 3000 is allocated. */
    assert_int_equal(t.peak_live_bytes, 1024 + 4096);
    assert_int_equal(t.ops[2].kind, VL_TRACE_FREE);
    assert_int_equal(t.ops[2].line, 6);
    assert_int_equal(t.ops[4].kind, VL_TRACE_FREE);
    assert_int_equal(t.ops[4].line, 11);
    vl_trace_free(&t);
}

static void test_torch_csv_requested(void **state)
{
    (void)state;
    vl_trace t;
    vl_trace_options opt = {.format = VL_TRACE_TORCH_CSV, .free_at = VL_TRACE_FREE_AT_REQUESTED};
    assert_int_equal(vl_trace_parse_buffer_opts(torch_text, strlen(torch_text), &opt, &t, err, sizeof err), 0);
    assert_int_equal(t.nfrees, 2);
    assert_int_equal(t.unknown_frees, 0);
    assert_int_equal(t.ops[2].line, 5);
    /* Freed at free_requested: 0x2000 is gone before 3000 comes. */
    assert_int_equal(t.peak_live_bytes, 4096);
    vl_trace_free(&t);
}

static void test_torch_csv_columns_and_errors(void **state)
{
    (void)state;
    vl_trace t;
    /* Columns in another order, no stream or time column, CRLF, quoted fields. */
    const char *text = "size,\"action\",addr\r\n100,alloc,0x10\r\n100,free_completed,0x10\r\n";
    assert_int_equal(parse(text, VL_TRACE_AUTO, &t), 0);
    assert_int_equal(t.nops, 2);
    assert_int_equal(t.nstreams, 1);
    vl_trace_free(&t);

    expect_error("action,addr,size,stream,time_us\nalloc,1,2,0,0\nallocate,1,2,0,0\n", VL_TRACE_TORCH_CSV,
                 "3: unknown action");
    expect_error("action,addr,size,stream,time_us\nalloc,1,2,0\n", VL_TRACE_TORCH_CSV,
                 "2: 4 fields where the header has 5");
    expect_error("action,addr,size,stream,time_us\nalloc,1,-2,0,0\n", VL_TRACE_TORCH_CSV, "2: bad size");
    expect_error("action,addr,stream\n", VL_TRACE_TORCH_CSV, "1: header lacks column 'size'");
    expect_error("# only a comment\n", VL_TRACE_TORCH_CSV, "no header line");
}

static void test_rmm(void **state)
{
    (void)state;
    vl_trace t;
    const char *text = "Thread,Time,Action,Pointer,Size,Stream\n"
                       "140573312345856,1634567890.123456,allocate,0x7f8a40000000,1024,0x7f8a38001020\n"
                       "140573312345856,1634567890.2,allocate,0x7f8a40000400,2048,0x0\n"
                       "140573312345856,1634567890.3,allocate failure,0x0,99999999999,0x0\n"
                       "140573312345856,1634567890.4,free,0x7f8a40000000,1024,0x7f8a38001020\n"
                       "140573312345856,1634567890.5,deallocate,0x7f8a40000400,2048,0x0\n";
    parse_guessed(text, VL_TRACE_RMM, 2, 2, 2, &t);
    assert_int_equal(t.recorded_ooms, 1);
    assert_true(vl_trace_stream_is_default(&t, 1));
    assert_int_equal(t.ops[0].size, 1024);
    vl_trace_free(&t);
    expect_error("Thread,Time,Action,Pointer,Size,Stream\n1,2,allocate,zz,10,0x0\n", VL_TRACE_RMM, "2: bad Pointer");
}

static void test_guess(void **state)
{
    (void)state;
    assert_int_equal(vl_trace_guess("\x80\x04\x95", 3), VL_TRACE_TORCH_PICKLE);
    assert_int_equal(vl_trace_guess("# c\nvramlab-trace 1\n", 20), VL_TRACE_VRAMLAB);
    assert_int_equal(vl_trace_guess("Thread,Time,Action,Pointer,Size,Stream\n", 39), VL_TRACE_RMM);
    assert_int_equal(vl_trace_guess("hello\n", 6), VL_TRACE_AUTO);
    assert_int_equal(vl_trace_guess("", 0), VL_TRACE_AUTO);
    vl_trace t;
    expect_error("hello\n", VL_TRACE_AUTO, "unknown trace format");
    assert_int_equal(vl_trace_parse_buffer("\x80\x04\x95", 3, VL_TRACE_AUTO, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "torch-snapshot-to-csv"));
    vl_trace_format f;
    assert_int_equal(vl_trace_format_parse("torch-csv", &f), 0);
    assert_int_equal(f, VL_TRACE_TORCH_CSV);
    assert_int_equal(vl_trace_format_parse("csv", &f), -1);
}

/* Hostile input: NUL bytes, no final newline, a line much longer than any buffer. */
static void test_hostile_bytes(void **state)
{
    (void)state;
    vl_trace t;
    const char nul[] = "vramlab-trace 1\na 1 1\0 0\nf 1";
    assert_int_equal(vl_trace_parse_buffer(nul, sizeof nul - 1, VL_TRACE_VRAMLAB, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "2: "));
    const char no_newline[] = "vramlab-trace 1\na 1 1\nf 1";
    assert_int_equal(vl_trace_parse_buffer(no_newline, sizeof no_newline - 1, VL_TRACE_AUTO, &t, err, sizeof err), 0);
    assert_int_equal(t.nops, 2);
    vl_trace_free(&t);

    size_t n = 1 << 20;
    char *longline = malloc(n);
    assert_non_null(longline);
    memcpy(longline, "action,addr,size\nalloc,1,", 25);
    memset(longline + 25, '9', n - 25);
    assert_int_equal(vl_trace_parse_buffer(longline, n, VL_TRACE_AUTO, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "2: bad size"));
    /* Every prefix of a valid trace either parses or fails cleanly. */
    for (size_t len = 0; len <= strlen(torch_text); len++) {
        if (vl_trace_parse_buffer(torch_text, len, VL_TRACE_TORCH_CSV, &t, err, sizeof err) == 0) vl_trace_free(&t);
    }
    /* Random bytes never crash any parser. */
    uint64_t x = 88172645463325252ULL;
    for (int round = 0; round < 2000; round++) {
        char buf[256];
        size_t len = (size_t)(round % 256);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[i] = (char)(round & 1 ? "af 0123x,\n#\r"[x % 12] : (char)x);
        }
        for (int fmt = VL_TRACE_AUTO; fmt <= VL_TRACE_RMM; fmt++)
            if (vl_trace_parse_buffer(buf, len, (vl_trace_format)fmt, &t, err, sizeof err) == 0) vl_trace_free(&t);
    }
    free(longline);
}

/* The whole-stream reader (what bench/replay uses for files and stdin). */
static void test_parse_file(void **state)
{
    (void)state;
    char text[] = "vramlab-trace 1\na 5 1MiB 3\nf 5 3\n";
    FILE *f = fmemopen(text, strlen(text), "rb");
    assert_non_null(f);
    vl_trace t;
    vl_trace_options opt = {0};
    assert_int_equal(vl_trace_parse_file(f, &opt, &t, err, sizeof err), 0);
    fclose(f);
    assert_int_equal(t.nops, 2);
    assert_int_equal(t.ops[0].size, 1 << 20);
    assert_int_equal(t.stream_ids[0], 3);
    vl_trace_free(&t);
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* One sniff rule: loading a file decides pickle or text exactly as vl_trace_guess
 * does on a buffer. A pickle header goes to the converter (here one that cannot run);
 * 0x80 followed by no pickle protocol is no pickle, so it gets the text formats'
 * "unknown trace format"; text is parsed, with FILE:LINE in errors. */
static void test_load_one_sniff_rule(void **state)
{
    (void)state;
    char path[64];
    assert_int_equal(vl_test_tmpfile("trace", path, sizeof path), 0);
    char msg[1024];
    vl_trace t;
    setenv("VRAMLAB_TORCH_CONVERTER", "/nonexistent/converter", 1);

    write_file(path, "\x80\x04\x95", 3);
    assert_int_equal(vl_trace_guess("\x80\x04\x95", 3), VL_TRACE_TORCH_PICKLE);
    assert_int_equal(vl_trace_load(path, NULL, &t, msg, sizeof msg), -1);
    if (!strstr(msg, "cannot run /nonexistent/converter")) fail_msg("%s", msg);

    write_file(path, "\x80\x09zz\n", 4);
    assert_int_equal(vl_trace_guess("\x80\x09zz\n", 4), VL_TRACE_AUTO);
    assert_int_equal(vl_trace_load(path, NULL, &t, msg, sizeof msg), -1);
    if (!strstr(msg, ": unknown trace format")) fail_msg("%s", msg);

    const char *text = "vramlab-trace 1\na 5 1MiB\nq\n";
    write_file(path, text, strlen(text));
    assert_int_equal(vl_trace_load(path, NULL, &t, msg, sizeof msg), -1);
    assert_true(strncmp(msg, path, strlen(path)) == 0);
    if (!strstr(msg + strlen(path), ":3: ")) fail_msg("%s", msg);

    text = "vramlab-trace 1\n# nothing\n";
    write_file(path, text, strlen(text));
    assert_int_equal(vl_trace_load(path, NULL, &t, msg, sizeof msg), -1);
    if (!strstr(msg, ": the trace has no operations")) fail_msg("%s", msg);

    text = "vramlab-trace 1\na 5 1MiB\nf 9\n";
    write_file(path, text, strlen(text));
    assert_int_equal(vl_trace_load(path, NULL, &t, msg, sizeof msg), 0);
    assert_int_equal(t.nops, 1);
    assert_string_equal(vl_trace_unknown_frees_note(&t, "x", msg, sizeof msg),
                        "x: 1 free of addresses not allocated at that point (line 3); they are left out of the replay");
    vl_trace_free(&t);
    unlink(path);
    unsetenv("VRAMLAB_TORCH_CONVERTER");
}

/* What the plugin records (VRAMLAB_TRACE) parses back as the same operations: addresses
 * as IDs (one reused after its free), sizes, the stream handles as stream numbers. */
static void test_recorded_trace_parses_back(void **state)
{
    (void)state;
    char path[64], why[256];
    assert_int_equal(vl_test_tmpfile("record", path, sizeof path), 0);
    vl_trace_recorder *r = vl_trace_record_open(path, why, sizeof why);
    assert_non_null(r);
    int x, y; /* two distinct addresses */
    vl_trace_record_alloc(r, &x, 3 << 20, 0);
    vl_trace_record_alloc(r, &y, 512, 0x55aa00);
    vl_trace_record_free(r, &x, 0);
    vl_trace_record_alloc(r, &x, 1000, 0x55aa00);
    vl_trace_record_free(r, &y, 0x55aa00);
    assert_int_equal(vl_trace_record_close(r), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    vl_trace t;
    vl_trace_options opt = {0};
    assert_int_equal(vl_trace_parse_file(f, &opt, &t, why, sizeof why), 0);
    fclose(f);
    unlink(path);
    assert_int_equal(t.format, VL_TRACE_VRAMLAB);
    assert_int_equal(t.nops, 5);
    assert_int_equal(t.nallocs, 3);
    assert_int_equal(t.nstreams, 2);
    assert_int_equal(t.ops[0].size, 3 << 20);
    assert_int_equal(t.ops[2].kind, VL_TRACE_FREE);
    assert_int_equal(t.ops[2].slot, t.ops[0].slot);
    assert_int_equal(t.ops[3].size, 1000);
    assert_int_not_equal(t.ops[3].slot, t.ops[0].slot); /* x again: a new block */
    assert_int_equal(t.ops[3].stream, t.ops[1].stream);
    assert_true(vl_trace_stream_is_default(&t, t.ops[0].stream));
    assert_false(vl_trace_stream_is_default(&t, t.ops[1].stream));
    assert_int_equal(t.peak_live_bytes, (3 << 20) + 512);
    assert_int_equal(t.live_at_end, 1);
    vl_trace_free(&t);
}

/* A path that cannot be written: a reason, no recorder. */
static void test_record_open_failure(void **state)
{
    (void)state;
    char why[256] = "";
    assert_null(vl_trace_record_open("/nonexistent-dir/x.trace", why, sizeof why));
    assert_non_null(strstr(why, "/nonexistent-dir/x.trace"));
}

/* Live bytes past 2^64 would wrap into a small peak: refused with the line. */
static void test_peak_overflow_refused(void **state)
{
    (void)state;
    expect_error("vramlab-trace 1\na 1 4611686018427387904\na 2 4611686018427387904\n"
                 "a 3 4611686018427387904\na 4 4611686018427387904\n",
                 VL_TRACE_VRAMLAB, "5: live bytes pass 2^64");
    /* Freed in between: the live sum stays small, but the total allocated passes 2^64. */
    expect_error("vramlab-trace 1\na 1 4611686018427387904\nf 1\na 1 4611686018427387904\nf 1\n"
                 "a 1 4611686018427387904\nf 1\na 1 4611686018427387904\nf 1\n",
                 VL_TRACE_VRAMLAB, "allocated bytes in total pass 2^64");
    vl_trace t;
    assert_int_equal(parse("vramlab-trace 1\na 1 4611686018427387904\na 2 4611686018427387904\n"
                           "a 3 4611686018427387904\n", VL_TRACE_VRAMLAB, &t), 0);
    assert_true(t.peak_live_bytes == 3 * UINT64_C(4611686018427387904));
    vl_trace_free(&t);
}

VL_TEST_MAIN(cmocka_unit_test(test_peak_overflow_refused), cmocka_unit_test(test_recorded_trace_parses_back), cmocka_unit_test(test_record_open_failure),
             cmocka_unit_test(test_vramlab_basic), cmocka_unit_test(test_vramlab_errors),
             cmocka_unit_test(test_vramlab_extra_fields_rejected),
             cmocka_unit_test(test_unknown_frees_reported), cmocka_unit_test(test_torch_csv_completed),
             cmocka_unit_test(test_torch_csv_requested), cmocka_unit_test(test_torch_csv_columns_and_errors),
             cmocka_unit_test(test_rmm), cmocka_unit_test(test_guess), cmocka_unit_test(test_hostile_bytes),
             cmocka_unit_test(test_parse_file), cmocka_unit_test(test_load_one_sniff_rule))
