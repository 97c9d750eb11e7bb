/* --alloc rmm[:resource=pool|arena|binning|async,initial=SIZE,maximum=SIZE]: a RAPIDS
 * RMM memory resource, run through the shim lib/peers/rmm_shim.cpp, built by
 * `make peers` from the librmm wheel that scripts/fetch-deps.sh unpacks into .deps/rmm.
 * The resource may be given bare: rmm:async. Reserved bytes are RMM's pool size (pool,
 * binning) or the CUDA pool's reserved memory (async); arena keeps none we can read. */
#include "alloc.h"
#include "peer_backend.h"

static const vl_opt rmm_options[] = {
    {.name = "resource", .kind = VL_OPT_ENUM, .default_value = "pool", .choices = "pool|arena|binning|async",
     .help = "pool_memory_resource, arena_memory_resource, binning over a pool (bins 256KiB..4MiB), cuda_async_memory_resource",
     .positional = 1},
    {.name = "initial", .kind = VL_OPT_SIZE,
     .help = "pool/binning: initial pool size (default half the free memory); arena: arena size; async: initial pool size"},
    {.name = "maximum", .kind = VL_OPT_SIZE, .help = "pool/binning: the most the pool grows to (default: all memory)"},
    {NULL},
};

enum { RMM_POOL, RMM_ARENA, RMM_BINNING, RMM_ASYNC };

static const vl_peer_desc rmm_peer = {
    .name = "rmm",
    .library = "libvramlab_peer_rmm.so",
    .how_to_get = "run scripts/fetch-deps.sh, which unpacks RMM into .deps/rmm, then make peers",
};

/* RMM's own rules, checked here so that a bad SPEC is a usage error before any device work. */
static int rmm_check(const vl_spec *spec, char *err, size_t errlen)
{
    int resource = vl_spec_choice(spec, "resource");
    const char *name = vl_spec_str(spec, "resource");
    int has_max = vl_spec_given(spec, "maximum");
    uint64_t initial = vl_spec_given(spec, "initial") ? vl_spec_size(spec, "initial") : 0;
    uint64_t maximum = has_max ? vl_spec_size(spec, "maximum") : 0;
    if (has_max && (resource == RMM_ARENA || resource == RMM_ASYNC)) {
        snprintf(err, errlen, "rmm: option maximum is for pool and binning, not %s", name);
        return -1;
    }
    if (vl_spec_given(spec, "initial") && initial == 0) {
        snprintf(err, errlen, "rmm: initial must be more than 0");
        return -1;
    }
    if (has_max && maximum == 0) {
        snprintf(err, errlen, "rmm: maximum must be more than 0");
        return -1;
    }
    if (initial % 256 || maximum % 256) { /* RMM throws on sizes it cannot align */
        snprintf(err, errlen, "rmm: initial and maximum must be multiples of 256 bytes");
        return -1;
    }
    if (initial && maximum && initial > maximum) {
        snprintf(err, errlen, "rmm: initial is larger than maximum");
        return -1;
    }
    return 0;
}

static int rmm_open(vl_allocator *a, const vl_spec *spec, char *err, size_t errlen)
{
    vl_peer_config cfg = {
        .device = a->dev->ordinal,
        .resource = vl_spec_str(spec, "resource"),
        .initial = vl_spec_given(spec, "initial") ? vl_spec_size(spec, "initial") : 0,
        .maximum = vl_spec_given(spec, "maximum") ? vl_spec_size(spec, "maximum") : 0,
    };
    return vl_peer_open(a, &rmm_peer, &cfg, err, errlen);
}

/* pool and binning record and wait on events of their own in allocate, calls a capture
 * refuses, and RMM asserts on the refusal (the process ends: H100, graph_pool). */
static const char *rmm_capture_refusal(const vl_spec *spec)
{
    int resource = vl_spec_choice(spec, "resource");
    return resource == RMM_POOL || resource == RMM_BINNING
               ? "RMM's pool resource ends the process when it allocates inside a stream capture (an assertion on its "
                 "stream events)"
               : NULL;
}

static void rmm_print_status(FILE *out) { vl_peer_print_status(&rmm_peer, out); }

const vl_alloc_backend vl_backend_rmm = {
    .name = "rmm",
    .summary = "a RAPIDS RMM memory resource (peer, loaded when named); reserved bytes from RMM or its CUDA pool",
    .options = rmm_options,
    .needs_cuda = 1,
    .open = rmm_open,
    .check_spec = rmm_check,
    .print_status = rmm_print_status,
    .alloc = vl_peer_alloc,
    .free = vl_peer_free,
    .record_use = NULL, /* RMM orders reuse by the stream of the free only */
    .trim = vl_peer_trim,
    .get_stats = vl_peer_get_stats,
    .reset_peaks = vl_peer_reset_peaks,
    .close = vl_peer_close,
    .version = vl_peer_version,
    .capture_refusal = rmm_capture_refusal,
};
