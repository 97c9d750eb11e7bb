/* A stand-in peer shim (lib/peers/peer_abi.h) for tests without a GPU, PyTorch or RMM:
 * host memory, and "reserved" bytes it counts itself, so that the loading, the
 * forwarding and the statistics of lib/cuda/peer_backend.c can be checked. Built as
 * BUILD/tests/peers/libvramlab_peer_{torch,rmm}.so by mk/peers.mk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers/peer_abi.h"

typedef struct fake_peer {
    int64_t reserved, peak_reserved;
    char resource[32];
} fake_peer;

static void *fake_open(const vl_peer_config *cfg, char *err, size_t errlen)
{
    if (cfg->resource && strcmp(cfg->resource, "arena") == 0) { /* the test's failing open */
        snprintf(err, errlen, "fake peer: no arena");
        return NULL;
    }
    fake_peer *p = calloc(1, sizeof *p);
    if (p) {
        snprintf(p->resource, sizeof p->resource, "%s", cfg->resource ? cfg->resource : "");
        p->reserved = p->peak_reserved = (int64_t)cfg->initial;
    }
    return p;
}

static void *fake_alloc(void *h, size_t size, void *stream)
{
    fake_peer *p = h;
    (void)stream;
    if (size > ((size_t)1 << 30)) return NULL; /* "out of memory" */
    p->reserved += (int64_t)size;
    if (p->reserved > p->peak_reserved) p->peak_reserved = p->reserved;
    return malloc(size);
}

static void fake_free(void *h, void *ptr, size_t size, void *stream)
{
    fake_peer *p = h;
    (void)stream;
    p->reserved -= (int64_t)size;
    free(ptr);
}

static void fake_stats(void *h, vl_peer_stats *st)
{
    fake_peer *p = h;
    st->reserved_bytes = p->reserved;
    st->peak_reserved_bytes = p->peak_reserved; /* every other field stays -1: unknown */
}

static void fake_reset_peaks(void *h)
{
    fake_peer *p = h;
    p->peak_reserved = p->reserved;
}

static void fake_close(void *h) { free(h); }

static const vl_peer_api api = {
    .abi_version = VL_PEER_ABI_VERSION,
    .peer_version = "fake 1",
    .open = fake_open,
    .alloc = fake_alloc,
    .free = fake_free,
    .trim = NULL,
    .stats = fake_stats,
    .reset_peaks = fake_reset_peaks,
    .close = fake_close,
};

const vl_peer_api *vl_peer_entry(void) { return &api; }
