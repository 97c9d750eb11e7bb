/* The C interface between vramlab and a peer shim: a small shared library that puts
 * someone else's allocator (PyTorch's, RAPIDS RMM's) behind --alloc. vramlab dlopens
 * the shim when the peer is first named, so programs stay C, link nothing new, and
 * start without the peer installed. A shim exports one function, vl_peer_entry, that
 * returns its table. Plain C types only: the shims are C++, vramlab is C. */
#ifndef VL_PEER_ABI_H
#define VL_PEER_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VL_PEER_ABI_VERSION 1
#define VL_PEER_ENTRY_SYMBOL "vl_peer_entry"

/* What the SPEC chose, already validated by vramlab. */
typedef struct vl_peer_config {
    int device;           /* CUDA ordinal; the shim makes it current on the opening thread */
    const char *resource; /* the peer's own kind of allocator ("pool", "async", ...); may be "" */
    uint64_t initial;     /* 0: the peer's default */
    uint64_t maximum;     /* 0: no limit */
} vl_peer_config;

/* The peer's own counters; -1 for each one it does not keep (never guessed). */
typedef struct vl_peer_stats {
    int64_t allocated_bytes, peak_allocated_bytes;
    int64_t reserved_bytes, peak_reserved_bytes;
    int64_t active_bytes, peak_active_bytes;
    int64_t inactive_split_bytes, peak_inactive_split_bytes;
    int64_t segments, device_allocs, device_frees, alloc_retries;
} vl_peer_stats;

typedef struct vl_peer_api {
    int abi_version; /* VL_PEER_ABI_VERSION */
    const char *peer_version; /* e.g. "torch 2.11.0", "rmm 26.10.0" */
    /* NULL with one line in err; never throws. */
    void *(*open)(const vl_peer_config *cfg, char *err, size_t errlen);
    /* NULL when out of memory (another failure: one line on stderr, then NULL). */
    void *(*alloc)(void *h, size_t size, void *stream);
    void (*free)(void *h, void *ptr, size_t size, void *stream);
    size_t (*trim)(void *h); /* releases cached memory; bytes released */
    void (*stats)(void *h, vl_peer_stats *st);
    void (*reset_peaks)(void *h);
    void (*close)(void *h); /* frees what the handle holds */
} vl_peer_api;

typedef const vl_peer_api *(*vl_peer_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
