/* The part every peer backend (torch, rmm) shares: finding and loading its shim
 * library (lib/peers/peer_abi.h) when the peer is first named, and the alloc, free,
 * statistics and close calls that forward to it. Each backend file keeps only its
 * options, their checks and how they become a vl_peer_config. */
#ifndef VL_PEER_BACKEND_H
#define VL_PEER_BACKEND_H

#include <stdio.h>

#include "alloc.h"
#include "peers/peer_abi.h"

typedef struct vl_peer_desc {
    const char *name;       /* the backend's name, "torch" */
    const char *library;    /* the shim's file name, "libvramlab_peer_torch.so" */
    const char *how_to_get; /* one clause: what makes the shim exist and load */
} vl_peer_desc;

/* Where the shim lives: $VL_PEER_DIR/LIBRARY when set, else LIBRARY in the lib/
 * folder next to the program's bin/ (build/lib/). 0, or -1 with one line in err. */
int vl_peer_library_path(const vl_peer_desc *d, char *path, size_t len, char *err, size_t errlen);

/* The folder to look in when VL_PEER_DIR is unset, instead of the program's lib/: for a
 * library loaded into someone else's program (the PyTorch plugin names its own folder).
 * Call before the first peer is opened; NULL or "" goes back to the program's lib/. */
void vl_peer_set_default_dir(const char *dir);

/* Loads the shim once per process (never unloaded: a peer keeps threads and device
 * state until exit). NULL with one line in err that says how to get the peer. */
const vl_peer_api *vl_peer_load(const vl_peer_desc *d, char *err, size_t errlen);

/* A backend's open: loads the shim, then opens the peer with cfg. 0; VL_OPEN_SKIP when
 * the peer is not available here; -1 when it is but failed to open. One line in err. */
int vl_peer_open(vl_allocator *a, const vl_peer_desc *d, const vl_peer_config *cfg, char *err, size_t errlen);

/* For `--alloc help`: whether the shim is built and loads, and how to get it if not. */
void vl_peer_print_status(const vl_peer_desc *d, FILE *out);

/* The vl_alloc_backend entries, forwarding to the shim. */
void *vl_peer_alloc(vl_allocator *a, size_t size, vl_stream s);
void vl_peer_free(vl_allocator *a, void *ptr, size_t size, vl_stream s);
size_t vl_peer_trim(vl_allocator *a);
void vl_peer_get_stats(vl_allocator *a, vl_alloc_stats *st);
void vl_peer_reset_peaks(vl_allocator *a);
void vl_peer_close(vl_allocator *a);
const char *vl_peer_version(vl_allocator *a); /* the shim's peer_version, "rmm 26.10.0" */

#endif
