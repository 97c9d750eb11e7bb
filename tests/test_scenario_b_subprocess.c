/* lib/scenario/subprocess: children report through the channel, their endings are
 * told apart (exit status, signal, killed after a deadline), releases reach the right
 * child even with siblings alive, and exec passes the channel through the environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario/subprocess.h"

/* How a child ended, waited for (5 s at most) and checked: kind, and the exit status
 * or the signal. Returns the ending, for its text. */
static vl_child_end expect_end(vl_child *c, vl_child_end_kind kind, int code)
{
    vl_child_end e = vl_child_wait(c, 5000);
    assert_int_equal(e.kind, kind);
    assert_int_equal(e.code, code);
    return e;
}

/* What a child wrote to its channel: exactly the text want (short). */
static void expect_text(vl_child *c, const char *want)
{
    char got[16] = {0};
    size_t len = strlen(want);
    assert_true(len < sizeof got);
    assert_int_equal(vl_child_read(c, got, len, 5000), 1);
    assert_string_equal(got, want);
}

static int report_and_exit(void *arg, int fd)
{
    int value = *(int *)arg;
    return vl_fd_write_full(fd, &value, sizeof value) == 0 ? 7 : 1;
}

static void test_child_reports_and_exit_status_is_kept(void **state)
{
    (void)state;
    vl_child c;
    int sent = 12345, got = 0;
    assert_int_equal(vl_child_fork(&c, report_and_exit, &sent), 0);
    assert_int_equal(vl_child_read(&c, &got, sizeof got, 5000), 1);
    assert_int_equal(got, 12345);
    expect_end(&c, VL_CHILD_EXITED, 7);
    assert_int_equal(c.pid, -1);
    assert_int_equal(c.fd, -1);
    /* a second wait is harmless */
    assert_int_equal(vl_child_wait(&c, 10).kind, VL_CHILD_WAIT_FAILED);
}

static int crash(void *arg, int fd)
{
    (void)arg;
    (void)fd;
    signal(SIGABRT, SIG_DFL);
    abort();
}

static void test_crash_is_a_signal_and_read_sees_eof(void **state)
{
    (void)state;
    vl_child c;
    int got;
    assert_int_equal(vl_child_fork(&c, crash, NULL), 0);
    assert_int_equal(vl_child_read(&c, &got, sizeof got, 5000), 0);
    vl_child_end e = expect_end(&c, VL_CHILD_SIGNALED, SIGABRT);
    char buf[64];
    assert_string_equal(vl_child_end_text(e, buf, sizeof buf), "signal 6");
}

static int hang(void *arg, int fd)
{
    (void)arg;
    (void)fd;
    for (;;) pause();
    return 0;
}

static void test_hanging_child_times_out_and_is_killed(void **state)
{
    (void)state;
    vl_child c;
    int got;
    assert_int_equal(vl_child_fork(&c, hang, NULL), 0);
    assert_int_equal(vl_child_read(&c, &got, sizeof got, 50), -1);
    vl_child_end e = vl_child_wait(&c, 50);
    assert_int_equal(e.kind, VL_CHILD_KILLED);
}

static int half_message(void *arg, int fd)
{
    (void)arg;
    char two[2] = {1, 2};
    vl_fd_write_full(fd, two, sizeof two);
    return 0;
}

static void test_short_message_is_an_error(void **state)
{
    (void)state;
    vl_child c;
    int64_t got;
    assert_int_equal(vl_child_fork(&c, half_message, NULL), 0);
    assert_int_equal(vl_child_read(&c, &got, sizeof got, 5000), -1);
    assert_int_equal(vl_child_wait(&c, 5000).kind, VL_CHILD_EXITED);
}

/* A worker of a pool: says "ready" with its number, waits for the release (EOF),
 * exits with its number. */
static int pool_worker(void *arg, int fd)
{
    int id = *(int *)arg;
    char byte;
    if (vl_fd_write_full(fd, &id, sizeof id) != 0) return 100;
    return vl_fd_read_full(fd, &byte, 1) == 0 ? id : 101;
}

static void test_release_reaches_each_worker_with_siblings_alive(void **state)
{
    (void)state;
    enum { N = 4 };
    vl_child c[N];
    int ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = 10 + i;
        assert_int_equal(vl_child_fork(&c[i], pool_worker, &ids[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        int got = -1;
        assert_int_equal(vl_child_read(&c[i], &got, sizeof got, 5000), 1);
        assert_int_equal(got, 10 + i);
    }
    /* Release in reverse order: each release must reach its own worker. */
    for (int i = N - 1; i >= 0; i--) {
        vl_child_release(&c[i]);
        expect_end(&c[i], VL_CHILD_EXITED, 10 + i);
    }
}

/* Exits 0 when the fd given as arg (the parent's end of a sibling's channel) is not
 * open in this child. */
static int sibling_fd_closed(void *arg, int fd)
{
    (void)fd;
    return fcntl(*(int *)arg, F_GETFD) < 0 ? 0 : 1;
}

static void test_forked_child_holds_no_sibling_channel(void **state)
{
    (void)state;
    vl_child a, b;
    int id = 1;
    assert_int_equal(vl_child_fork(&a, pool_worker, &id), 0);
    assert_int_equal(vl_child_fork(&b, sibling_fd_closed, &a.fd), 0);
    expect_end(&b, VL_CHILD_EXITED, 0);
    vl_child_release(&a);
    assert_int_equal(vl_child_wait(&a, 5000).code, 1);
}

static void test_exec_passes_the_channel(void **state)
{
    (void)state;
    vl_child c;
    /* The shell writes "ok" to the fd named in the variable. */
    char *const argv[] = {"/bin/sh", "-c", "printf ok >&$VL_TEST_FD", NULL};
    assert_int_equal(vl_child_exec(&c, "/bin/sh", argv, "VL_TEST_FD"), 0);
    expect_text(&c, "ok");
    expect_end(&c, VL_CHILD_EXITED, 0);
}

static void test_exec_of_missing_program_exits_127(void **state)
{
    (void)state;
    vl_child c;
    char *const argv[] = {"/nonexistent/vl_prog", NULL};
    assert_int_equal(vl_child_exec(&c, argv[0], argv, "VL_TEST_FD"), 0);
    expect_end(&c, VL_CHILD_EXITED, 127);
}

/* This test program run again as a child (see main): it echoes its first argument. */
static void test_exec_self_runs_this_program_with_args(void **state)
{
    (void)state;
    vl_child c;
    const char *args[] = {"hello", NULL};
    assert_int_equal(vl_child_exec_self(&c, args, "VL_TEST_SELF_FD"), 0);
    expect_text(&c, "hello");
    expect_end(&c, VL_CHILD_EXITED, 0);
}

/* The child sees the variable as asked (set, or removed); this process keeps its own. */
static void test_exec_self_env_sets_only_the_child(void **state)
{
    (void)state;
    setenv("VL_TEST_VAR", "parent", 1);
    vl_child c;
    const char *args[] = {"env", NULL};
    assert_int_equal(vl_child_exec_self_env(&c, args, "VL_TEST_SELF_FD", "VL_TEST_VAR", "child"), 0);
    expect_text(&c, "child");
    expect_end(&c, VL_CHILD_EXITED, 0);
    assert_string_equal(getenv("VL_TEST_VAR"), "parent");
    assert_int_equal(vl_child_exec_self_env(&c, args, "VL_TEST_SELF_FD", "VL_TEST_VAR", NULL), 0);
    expect_text(&c, "(unset)");
    expect_end(&c, VL_CHILD_EXITED, 0);
    assert_string_equal(getenv("VL_TEST_VAR"), "parent");
    unsetenv("VL_TEST_VAR");
    assert_int_equal(vl_child_exec_self_env(&c, args, "VL_TEST_SELF_FD", "VL_TEST_VAR", "child"), 0);
    expect_text(&c, "child");
    expect_end(&c, VL_CHILD_EXITED, 0);
    assert_null(getenv("VL_TEST_VAR"));
}

static void test_fd_from_env(void **state)
{
    (void)state;
    unsetenv("VL_TEST_FD2");
    assert_int_equal(vl_child_fd_from_env("VL_TEST_FD2"), -1);
    setenv("VL_TEST_FD2", "12x", 1);
    assert_int_equal(vl_child_fd_from_env("VL_TEST_FD2"), -1);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    char num[16];
    snprintf(num, sizeof num, "%d", fds[0]);
    setenv("VL_TEST_FD2", num, 1);
    assert_int_equal(vl_child_fd_from_env("VL_TEST_FD2"), fds[0]);
    close(fds[0]);
    close(fds[1]);
    /* a number that is no open fd */
    assert_int_equal(vl_child_fd_from_env("VL_TEST_FD2"), -1);
}

int main(int argc, char **argv)
{
    if (getenv("VL_TEST_SELF_FD")) { /* the child of test_exec_self_runs_this_program_with_args */
        int fd = vl_child_fd_from_env("VL_TEST_SELF_FD");
        /* "env": the value of VL_TEST_VAR (test_exec_self_env_sets_only_the_child) */
        const char *text = argc == 2 && strcmp(argv[1], "env") == 0
                               ? (getenv("VL_TEST_VAR") ? getenv("VL_TEST_VAR") : "(unset)")
                               : argv[1];
        return fd >= 0 && argc == 2 && vl_fd_write_full(fd, text, strlen(text)) == 0 ? 0 : 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_reports_and_exit_status_is_kept),
        cmocka_unit_test(test_crash_is_a_signal_and_read_sees_eof),
        cmocka_unit_test(test_hanging_child_times_out_and_is_killed),
        cmocka_unit_test(test_short_message_is_an_error),
        cmocka_unit_test(test_release_reaches_each_worker_with_siblings_alive),
        cmocka_unit_test(test_forked_child_holds_no_sibling_channel),
        cmocka_unit_test(test_exec_passes_the_channel),
        cmocka_unit_test(test_exec_of_missing_program_exits_127),
        cmocka_unit_test(test_exec_self_runs_this_program_with_args),
        cmocka_unit_test(test_exec_self_env_sets_only_the_child),
        cmocka_unit_test(test_fd_from_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
