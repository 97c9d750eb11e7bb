/* --alloc torch[:expandable_segments=0|1,backend=native|cudaMallocAsync]: PyTorch's
 * CUDA allocator (c10::cuda::CUDACachingAllocator), run through the shim
 * lib/peers/torch_shim.cpp, built by `make peers` where torch is installed. Statistics
 * are c10's device stats. c10 reads its settings from PYTORCH_CUDA_ALLOC_CONF once,
 * when libc10_cuda loads, so the SPEC sets that variable just before the shim loads:
 * one torch configuration per process. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "peer_backend.h"

static const vl_opt torch_options[] = {
    {.name = "expandable_segments", .kind = VL_OPT_BOOL, .default_value = "0",
     .help = "grow segments by mapping pages (native backend only)"},
    {.name = "backend", .kind = VL_OPT_ENUM, .default_value = "native", .choices = "native|cudaMallocAsync",
     .help = "c10's own caching allocator, or its cudaMallocAsync one",
     .positional = 1},
    {NULL},
};

static const vl_peer_desc torch_peer = {
    .name = "torch",
    .library = "libvramlab_peer_torch.so",
    .how_to_get = "install PyTorch with CUDA for python3, then run make peers",
};

static int torch_check(const vl_spec *spec, char *err, size_t errlen)
{
    if (vl_spec_choice(spec, "backend") == 0) return 0;
    if (vl_spec_bool(spec, "expandable_segments")) {
        snprintf(err, errlen, "torch: expandable_segments=1 needs backend=native");
        return -1;
    }
    /* c10's cudaMallocAsync backend asks PyTorch's CUDA hooks (libtorch_cuda) whether a
     * primary context exists; with c10 alone the hook aborts the process (seen on an
     * H100 with torch 2.11: "Should never been called" in dummyHasPrimaryContext). */
    snprintf(err, errlen, "torch: backend=cudaMallocAsync is not supported: c10's cudaMallocAsync backend "
                          "needs PyTorch's CUDA hooks (libtorch_cuda), which the shim does not load; "
                          "use --alloc async for a cudaMallocAsync pool");
    return -1;
}

static int torch_open(vl_allocator *a, const vl_spec *spec, char *err, size_t errlen)
{
    static char loaded_conf[128]; /* the settings c10 was loaded with, in this process */
    char conf[128];
    snprintf(conf, sizeof conf, "backend:%s,expandable_segments:%s", vl_spec_str(spec, "backend"),
             vl_spec_bool(spec, "expandable_segments") ? "True" : "False");
    if (loaded_conf[0] && strcmp(conf, loaded_conf) != 0) {
        snprintf(err, errlen, "torch: this process already loaded c10 with %s; one torch setting per process", loaded_conf);
        return VL_OPEN_USAGE;
    }
    setenv("PYTORCH_CUDA_ALLOC_CONF", conf, 1); /* takes precedence over PYTORCH_ALLOC_CONF */
    vl_peer_config cfg = {.device = a->dev->ordinal, .resource = vl_spec_str(spec, "backend")};
    int rc = vl_peer_open(a, &torch_peer, &cfg, err, errlen);
    if (rc != VL_OPEN_SKIP) snprintf(loaded_conf, sizeof loaded_conf, "%s", conf);
    return rc;
}

static void torch_print_status(FILE *out) { vl_peer_print_status(&torch_peer, out); }

/* What c10 was given: the PYTORCH_CUDA_ALLOC_CONF this process loaded it with. */
static void torch_effective(vl_allocator *a, char *buf, size_t len)
{
    (void)a;
    const char *conf = getenv("PYTORCH_CUDA_ALLOC_CONF");
    snprintf(buf, len, "PYTORCH_CUDA_ALLOC_CONF=%s", conf ? conf : "");
}

const vl_alloc_backend vl_backend_torch = {
    .name = "torch",
    .summary = "PyTorch's CUDA caching allocator (peer, loaded when named); stats from c10's device stats",
    .options = torch_options,
    .needs_cuda = 1,
    .open = torch_open,
    .check_spec = torch_check,
    .print_status = torch_print_status,
    .alloc = vl_peer_alloc,
    .free = vl_peer_free,
    .record_use = NULL, /* c10's recordStream needs a DataPtr, which raw_alloc has not */
    .trim = vl_peer_trim,
    .get_stats = vl_peer_get_stats,
    .reset_peaks = vl_peer_reset_peaks,
    .close = vl_peer_close,
    .version = vl_peer_version,
    .effective = torch_effective,
};
