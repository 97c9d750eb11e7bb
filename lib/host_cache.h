/* A caching allocator of pinned host memory, the shape of PyTorch's CachingHostAllocator:
 * each request is rounded (to the next power of two, or not at all), a block is pinned
 * through a pinner (cudaHostAlloc, or mmap + cudaHostRegister: the caller's choice),
 * freed blocks stay pinned in a cache and serve later requests of the same rounded
 * size. Its statistics say what was asked for against what is pinned: with power-of-two
 * rounding a request just above 2^k pins 2^(k+1).
 *
 * The policy touches no device: the pinner does, so the unit tests run it with a fake
 * pinner (tests/test_host_cache.c). Not thread-safe: one caller at a time. Library
 * code: failures are return values. */
#ifndef VL_HOST_CACHE_H
#define VL_HOST_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef enum vl_host_rounding {
    VL_HOST_ROUND_POW2,  /* the next power of two >= the request */
    VL_HOST_ROUND_EXACT  /* the request as it is */
} vl_host_rounding;

/* How blocks are pinned and given back. pin: 0 with *out set, or -1 (no memory, or
 * the pinning call failed; the pinner may say why on its own). */
typedef struct vl_host_pinner {
    int (*pin)(void *ctx, size_t size, void **out);
    void (*unpin)(void *ctx, void *ptr, size_t size);
    void *ctx;
} vl_host_pinner;

typedef struct vl_host_cache_stats {
    uint64_t requested_bytes, peak_requested_bytes; /* sum of live requests */
    uint64_t held_bytes, peak_held_bytes;           /* pinned now: live blocks + cached ones */
    uint64_t cached_bytes;                          /* pinned, free, in the cache */
    uint64_t pins, unpins, cache_hits;
} vl_host_cache_stats;

typedef struct vl_host_cache vl_host_cache;

/* The size a request is pinned with; 0 for 0, and 0 when the rounded size would not
 * fit in a size_t (the request then fails). */
size_t vl_host_round(vl_host_rounding rounding, size_t size);

/* NULL when out of host memory. The pinner is copied. */
vl_host_cache *vl_host_cache_create(vl_host_rounding rounding, const vl_host_pinner *pinner);
/* A block of at least size bytes: a cached one of the same rounded size, else a new
 * pinned one. NULL for size 0, an unroundable size, or a failed pin. */
void *vl_host_cache_alloc(vl_host_cache *c, size_t size);
/* Back into the cache (still pinned). 0, or -1 for a pointer the cache did not hand out
 * or one freed already. */
int vl_host_cache_free(vl_host_cache *c, void *ptr);
/* Unpins every cached block; returns the bytes unpinned. */
uint64_t vl_host_cache_empty(vl_host_cache *c);
void vl_host_cache_stats_get(const vl_host_cache *c, vl_host_cache_stats *st);
/* Unpins everything, blocks still handed out included, and frees the cache. */
void vl_host_cache_destroy(vl_host_cache *c);

#endif
