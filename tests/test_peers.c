/* The peer backends torch and rmm without a GPU, PyTorch or RMM: their SPECs and the
 * checks that run before a device opens, `--alloc help`, the skip (exit 77) when a
 * shim is missing or does not load, and the forwarding to a shim, through a stand-in
 * (tests/plugins/fake_peer.c, built into BUILD/tests/peers/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cuda/peer_backend.h"
#include "exitcodes.h"
#include "support/test_main.h"

/* Opens only what the backend needs from a device: not simulated, an ordinal. */
static vl_device gpu_like = {.simulated = 0, .ordinal = 0};

static void use_fake_peers(void)
{
    char exe[PATH_MAX], dir[PATH_MAX + 8];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    snprintf(dir, sizeof dir, "%s/peers", dirname(exe));
    setenv("VL_PEER_DIR", dir, 1);
}

/* Opens spec on the fake peers (an open that fails ends the test). */
static vl_allocator *open_on_fake_peers(const char *spec)
{
    char err[600] = "";
    int status = 0;
    use_fake_peers();
    vl_allocator *a = vl_alloc_open(spec, &gpu_like, &status, err, sizeof err);
    if (!a) fail_msg("open %s: %s", spec, err);
    return a;
}

static void parses(const char *spec)
{
    char err[300] = "";
    if (vl_alloc_spec_check(spec, err, sizeof err) != 0) fail_msg("'%s' refused: %s", spec, err);
}

static void refuses(const char *spec, const char *why)
{
    char err[300] = "";
    if (vl_alloc_spec_check(spec, err, sizeof err) == 0) fail_msg("'%s' accepted", spec);
    if (!strstr(err, why)) fail_msg("'%s': '%s' does not say '%s'", spec, err, why);
    assert_null(strchr(err, '\n'));
}

static void test_torch_specs(void **state)
{
    (void)state;
    parses("torch");
    parses("torch:expandable_segments=1");
    refuses("torch:cudaMallocAsync", "not supported");
    parses("torch:backend=native,expandable_segments=0");
    refuses("torch:backend=jemalloc", "must be one of native|cudaMallocAsync");
    refuses("torch:expandable_segments=maybe", "not a boolean");
    refuses("torch:backend=cudaMallocAsync,expandable_segments=1", "needs backend=native");
    refuses("torch:max_split_size_mb=4", "unknown option");
}

static void test_rmm_specs(void **state)
{
    (void)state;
    vl_spec s;
    char err[300];
    assert_int_equal(vl_alloc_spec_parse("rmm", &s, err, sizeof err), 0);
    assert_string_equal(vl_spec_str(&s, "resource"), "pool");
    assert_false(vl_spec_given(&s, "initial"));
    assert_int_equal(vl_alloc_spec_parse("rmm:async,initial=1GiB", &s, err, sizeof err), 0);
    assert_string_equal(vl_spec_str(&s, "resource"), "async");
    assert_int_equal(vl_spec_size(&s, "initial"), 1u << 30);
    parses("rmm:pool,initial=256MiB,maximum=1GiB");
    parses("rmm:resource=binning,maximum=2GiB");
    parses("rmm:arena,initial=1GiB");
    refuses("rmm:slab", "must be one of pool|arena|binning|async");
    refuses("rmm:pool,initial=lots", "initial");
    refuses("rmm:pool,initial=1000", "multiples of 256");
    refuses("rmm:pool,initial=2GiB,maximum=1GiB", "larger than maximum");
    refuses("rmm:async,maximum=1GiB", "not async");
    refuses("rmm:arena,maximum=1GiB", "not arena");
    refuses("rmm:pool,initial=0", "more than 0");
}

static void test_help_lists_peers(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    unsetenv("VL_PEER_DIR");
    setenv("VL_PEER_DIR", "/nonexistent-vramlab-peers", 1);
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    vl_alloc_help(out);
    fclose(out);
    assert_non_null(strstr(text, "\n  torch "));
    assert_non_null(strstr(text, "\n  rmm "));
    assert_non_null(strstr(text, "peer library: not built: /nonexistent-vramlab-peers/libvramlab_peer_torch.so"));
    assert_non_null(strstr(text, "peer library: not built: /nonexistent-vramlab-peers/libvramlab_peer_rmm.so"));
    assert_non_null(strstr(text, "make peers"));
    free(text);

    use_fake_peers();
    out = open_memstream(&text, &len);
    vl_alloc_help(out);
    fclose(out);
    assert_non_null(strstr(text, "peer library: built and loadable (fake 1)"));
    free(text);
}

/* Missing or broken shim: the open says how to get the peer, and the status is a skip. */
static void test_missing_peer_skips(void **state)
{
    (void)state;
    char err[600] = "";
    int status = 0;
    setenv("VL_PEER_DIR", "/nonexistent-vramlab-peers", 1);
    assert_null(vl_alloc_open("rmm:async", &gpu_like, &status, err, sizeof err));
    assert_int_equal(status, VL_EXIT_SKIP);
    assert_non_null(strstr(err, "peer 'rmm' is not available"));
    assert_non_null(strstr(err, "scripts/fetch-deps.sh"));
    assert_null(strchr(err, '\n'));

    char dir[] = "/tmp/vl_test_peers_XXXXXX", path[sizeof dir + 40];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/libvramlab_peer_torch.so", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a library\n", f);
    fclose(f);
    setenv("VL_PEER_DIR", dir, 1);
    assert_null(vl_alloc_open("torch", &gpu_like, &status, err, sizeof err));
    assert_int_equal(status, VL_EXIT_SKIP);
    assert_non_null(strstr(err, "cannot load"));
    assert_non_null(strstr(err, "make peers"));
    assert_null(strchr(err, '\n'));
    unlink(path);
    rmdir(dir);

    /* A bad SPEC is a usage error whatever is installed. */
    assert_null(vl_alloc_open("rmm:async,maximum=1GiB", &gpu_like, &status, err, sizeof err));
    assert_int_equal(status, VL_EXIT_USAGE);
}

static void test_forwards_to_the_shim(void **state)
{
    (void)state;
    char err[600] = "";
    int status = 0;
    vl_allocator *a = open_on_fake_peers("rmm:pool,initial=4KiB");
    vl_alloc_stats st;
    vl_alloc_stats_get(a, &st);
    assert_int_equal(st.reserved_bytes, 4096);
    assert_string_equal(a->backend->version(a), "fake 1"); /* the CSV's # alloc_version */
    void *p = vl_allocate(a, 1000, 0);
    assert_non_null(p);
    assert_null(vl_allocate(a, (size_t)2 << 30, 0)); /* the shim's OOM: counted by the adaptor */
    vl_alloc_stats_get(a, &st);
    assert_int_equal(st.reserved_bytes, 5096);
    assert_int_equal(st.peak_reserved_bytes, 5096);
    assert_int_equal(st.requested_bytes, 1000);
    assert_int_equal(st.ooms, 1);
    assert_int_equal(st.allocated_bytes, VL_UNKNOWN); /* the shim does not count it */
    assert_int_equal(st.segments, VL_UNKNOWN);
    vl_deallocate(a, p, 1000, 0);
    vl_alloc_reset_peaks(a);
    vl_alloc_stats_get(a, &st);
    assert_int_equal(st.peak_reserved_bytes, 4096);
    assert_int_equal(vl_trim(a), 0);
    vl_alloc_close(a);

    /* The shim loads but fails to open: a failure, not a skip. */
    assert_null(vl_alloc_open("rmm:arena", &gpu_like, &status, err, sizeof err));
    assert_int_equal(status, VL_EXIT_FAIL);
    assert_non_null(strstr(err, "fake peer: no arena"));
}

/* c10 reads its settings when it loads: the SPEC becomes PYTORCH_CUDA_ALLOC_CONF first,
 * and a second, different torch setting in the same process is refused. */
static void test_torch_settings_reach_c10(void **state)
{
    (void)state;
    char err[600] = "";
    int status = 0;
    vl_allocator *a = open_on_fake_peers("torch:expandable_segments=1");
    assert_string_equal(getenv("PYTORCH_CUDA_ALLOC_CONF"), "backend:native,expandable_segments:True");
    vl_alloc_close(a);
    a = vl_alloc_open("torch:backend=native,expandable_segments=1", &gpu_like, &status, err, sizeof err);
    assert_non_null(a);
    vl_alloc_close(a);
    assert_null(vl_alloc_open("torch:expandable_segments=0", &gpu_like, &status, err, sizeof err));
    assert_int_equal(status, VL_EXIT_USAGE);
    assert_non_null(strstr(err, "one torch setting per process"));
}

VL_TEST_MAIN(cmocka_unit_test(test_torch_specs), cmocka_unit_test(test_rmm_specs),
             cmocka_unit_test(test_help_lists_peers), cmocka_unit_test(test_missing_peer_skips),
             cmocka_unit_test(test_forwards_to_the_shim), cmocka_unit_test(test_torch_settings_reach_c10))
