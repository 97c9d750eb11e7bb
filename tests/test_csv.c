/* lib/csv.h + lib/runinfo.h: metadata lines, header, rows, unknown values; how each kind
 * of output path is written or refused, and the same-file checks before a run. */
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
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
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

/* One header and one row into path; returns vl_csv_close's result. */
static int write_small(const char *path)
{
    char err[256];
    vl_csv *c = vl_csv_open(path, NULL, err, sizeof err);
    if (!c) fail_msg("vl_csv_open(%s): %s", path, err);
    vl_csv_header(c, "a,b");
    vl_csv_row(c, "1,2");
    return vl_csv_close(c);
}

/* A FIFO gets the rows in place: its reader reads them, and it is still a FIFO (a rename
 * over it would leave the reader waiting, killed here by its alarm). */
static void test_fifo_written_in_place(void **state)
{
    (void)state;
    char dir[] = "/tmp/vl_test_csv_XXXXXX", fifo[256], got[256];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(got, sizeof got, "%s/got", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the reader: copies what the FIFO carries into got */
        alarm(10);
        int in = open(fifo, O_RDONLY), out = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char buf[512];
        ssize_t n;
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) _exit(1);
        _exit(in >= 0 && out >= 0 ? 0 : 1);
    }
    alarm(30); /* the open waits for the reader; a reader that died must not hang the test */
    assert_int_equal(write_small(fifo), 0);
    alarm(0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_string_equal(slurp(got), "a,b\n1,2\n");
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(count_entries(dir, "."), 2); /* no hidden temporary name: . and .. */
    unlink(got);
    unlink(fifo);
    rmdir(dir);
}

/* A character device is written in place, and stays the same device, also through a
 * symbolic link (which stays a link). As root, a rename could replace /dev/null itself:
 * the device then is a node made for the test in a scratch folder. */
static void test_char_device_written_in_place(void **state)
{
    (void)state;
    char dir[] = "/tmp/vl_test_csv_XXXXXX", node[256], link[256];
    assert_non_null(mkdtemp(dir));
    snprintf(node, sizeof node, "%s/null", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    if (geteuid() == 0) {
        assert_int_equal(mknod(node, S_IFCHR | 0666, makedev(1, 3)), 0);
    } else {
        /* not root: /dev/null cannot be replaced, so it is the target */
        print_message("test_char_device_written_in_place: not root, so no mknod: /dev/null is the target\n");
        snprintf(node, sizeof node, "/dev/null");
    }
    struct stat before, after, lst;
    assert_int_equal(stat(node, &before), 0);
    assert_true(S_ISCHR(before.st_mode));
    assert_int_equal(write_small(node), 0);
    assert_int_equal(stat(node, &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_true(after.st_ino == before.st_ino && after.st_rdev == before.st_rdev);

    assert_int_equal(symlink(node, link), 0);
    assert_int_equal(write_small(link), 0);
    assert_int_equal(lstat(link, &lst), 0);
    assert_true(S_ISLNK(lst.st_mode)); /* not replaced by a regular file */
    assert_int_equal(stat(link, &after), 0);
    assert_true(S_ISCHR(after.st_mode) && after.st_ino == before.st_ino);
    unlink(link);
    if (geteuid() == 0) unlink(node);
    assert_int_equal(count_entries(dir, "."), 2);
    rmdir(dir);
}

/* A socket, a folder, a block device and a link to nothing are refused, one line each,
 * and left as they were. */
static void test_refused_kinds(void **state)
{
    (void)state;
    char dir[] = "/tmp/vl_test_csv_XXXXXX", sock[64], blk[256], dangling[256], err[256]; /* sock: fits sun_path */
    assert_non_null(mkdtemp(dir));
    snprintf(sock, sizeof sock, "%s/sock", dir);
    snprintf(blk, sizeof blk, "%s/blk", dir);
    snprintf(dangling, sizeof dangling, "%s/dangling", dir);

    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_null(vl_csv_open(sock, NULL, err, sizeof err));
    assert_non_null(strstr(err, "it is a socket"));
    assert_null(strchr(err, '\n'));
    struct stat st;
    assert_int_equal(lstat(sock, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    close(fd);
    unlink(sock);

    assert_null(vl_csv_open(dir, NULL, err, sizeof err));
    assert_non_null(strstr(err, "it is a folder"));

    if (mknod(blk, S_IFBLK | 0600, makedev(7, 0)) == 0) {
        assert_null(vl_csv_open(blk, NULL, err, sizeof err));
        assert_non_null(strstr(err, "it is a block device"));
        assert_int_equal(lstat(blk, &st), 0);
        assert_true(S_ISBLK(st.st_mode));
        unlink(blk);
    } else {
        print_message("test_refused_kinds: no block device case (mknod: %s)\n", strerror(errno));
    }

    assert_int_equal(symlink("nowhere.csv", dangling), 0);
    assert_null(vl_csv_open(dangling, NULL, err, sizeof err));
    assert_non_null(strstr(err, "symbolic link to a file that does not exist"));
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    unlink(dangling);
    assert_int_equal(count_entries(dir, "."), 2);
    rmdir(dir);
}

/* A symbolic link to a result: the target gets the new rows, the link stays a link. */
static void test_link_to_a_file_writes_the_target(void **state)
{
    (void)state;
    char dir[] = "/tmp/vl_test_csv_XXXXXX", real[256], link[256];
    assert_non_null(mkdtemp(dir));
    snprintf(real, sizeof real, "%s/real.csv", dir);
    snprintf(link, sizeof link, "%s/link.csv", dir);
    FILE *f = fopen(real, "w");
    assert_non_null(f);
    fputs("old\n", f);
    fclose(f);
    assert_int_equal(symlink("real.csv", link), 0);
    assert_int_equal(write_small(link), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp(real), "a,b\n1,2\n");
    assert_int_equal(count_entries(dir, "."), 2); /* no hidden temporary name left: . and .. */
    unlink(link);
    unlink(real);
    rmdir(dir);
}

/* An output onto the input that "-" reads: the file on fd 0, by any path. Checked in a
 * child, whose standard input is a file. */
static void test_onto_standard_input(void **state)
{
    (void)state;
    char dir[] = "/tmp/vl_test_csv_XXXXXX", in[256], other[256], link[256];
    assert_non_null(mkdtemp(dir));
    snprintf(in, sizeof in, "%s/trace.csv", dir);
    snprintf(other, sizeof other, "%s/other.csv", dir);
    snprintf(link, sizeof link, "%s/link.csv", dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fclose(f);
    f = fopen(other, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink(in, link), 0);

    int fd = open(in, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(vl_csv_onto_fd(in, fd), 1);
    assert_int_equal(vl_csv_onto_fd(link, fd), 1);
    assert_int_equal(vl_csv_onto_fd(other, fd), 0);
    assert_int_equal(vl_csv_onto_fd("-", fd), 0);
    assert_int_equal(vl_csv_onto_input(link, in), 1);
    assert_int_equal(vl_csv_onto_input(other, in), 0);
    assert_int_equal(vl_csv_onto_input("/dev/null", "/dev/null"), 0); /* a device loses nothing */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (dup2(fd, STDIN_FILENO) != STDIN_FILENO) _exit(10);
        if (vl_csv_onto_input(in, "-") != 1) _exit(11);
        if (vl_csv_onto_input(link, "-") != 1) _exit(12);
        if (vl_csv_onto_input(other, "-") != 0) _exit(13);
        if (vl_csv_onto_input("-", "-") != 0) _exit(14);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    close(fd);
    unlink(link);
    unlink(other);
    unlink(in);
    rmdir(dir);
}

/* Two outputs of one run: one file however spelt, existing or not yet. */
static void test_same_output(void **state)
{
    (void)state;
    char dir[] = "/tmp/vl_test_csv_XXXXXX", a[256], b[256], cwd[4096];
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/sub", dir);
    assert_int_equal(mkdir(a, 0700), 0);
    const char *same[] = {"/x.csv", "/./x.csv", "//x.csv", "/sub/../x.csv"}; /* after dir */
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
            snprintf(a, sizeof a, "%s%s", dir, same[i]);
            snprintf(b, sizeof b, "%s%s", dir, same[k]);
            assert_int_equal(access(a, F_OK), -1); /* not there yet */
            if (vl_csv_same_output(a, b) != 1) fail_msg("%s and %s: not the same output", a, b);
        }
    snprintf(a, sizeof a, "%s/x.csv", dir);
    snprintf(b, sizeof b, "%s/y.csv", dir);
    assert_int_equal(vl_csv_same_output(a, b), 0);
    snprintf(b, sizeof b, "%s/sub/x.csv", dir);
    assert_int_equal(vl_csv_same_output(a, b), 0);

    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    int rel = vl_csv_same_output("./x.csv", "x.csv") == 1 && vl_csv_same_output("sub/../x.csv", a) == 1 &&
              vl_csv_same_output("x.csv", "sub/x.csv") == 0;
    assert_int_equal(chdir(cwd), 0);
    assert_true(rel);

    FILE *f = fopen(a, "w"); /* existing: by inode, also through a hard link */
    assert_non_null(f);
    fclose(f);
    snprintf(b, sizeof b, "%s/hard.csv", dir);
    assert_int_equal(link(a, b), 0);
    assert_int_equal(vl_csv_same_output(a, b), 1);
    assert_int_equal(vl_csv_same_output("-", "-"), 1);
    assert_int_equal(vl_csv_same_output("/dev/null", "/dev/null"), 0); /* both discarded: no clash */
    assert_int_equal(vl_csv_same_output(a, NULL), 0);

    pid_t pid = fork(); /* "-" is standard output's file */
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(a, O_WRONLY);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) != STDOUT_FILENO) _exit(10);
        _exit(vl_csv_same_output(b, "-") == 1 && vl_csv_same_output("-", a) == 1 ? 0 : 11);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    unlink(b);
    unlink(a);
    snprintf(a, sizeof a, "%s/sub", dir);
    rmdir(a);
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
             cmocka_unit_test(test_f64_unknown_is_empty), cmocka_unit_test(test_fifo_written_in_place),
             cmocka_unit_test(test_char_device_written_in_place), cmocka_unit_test(test_refused_kinds),
             cmocka_unit_test(test_link_to_a_file_writes_the_target), cmocka_unit_test(test_onto_standard_input),
             cmocka_unit_test(test_same_output))
