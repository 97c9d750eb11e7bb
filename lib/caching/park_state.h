/* Parking's state (park.h has the rule and why): each stream's slot and score, and the
 * allocator's list of streams that may hold a parked block. */
#ifndef VL_CACHING_PARK_STATE_H
#define VL_CACHING_PARK_STATE_H

#include <stdint.h>

struct vl_cblock;
struct vl_cpool;
struct vl_cstream;

typedef struct vl_cpark {
    struct vl_cblock *block;          /* the stream's last free, PARKED, or NULL */
    int32_t score;                    /* parking pays while >= 0 */
    const struct vl_cblock *ok;       /* the block last found to be the best fit and */
    uint64_t ok_version;              /* the request's pool's bins' version then, and */
    const struct vl_cpool *ok_own;    /* the block's own pool (the request's, or the other that lent it) */
    uint64_t ok_own_version;          /* and its version: the verdict holds while both versions stay */
    uint32_t skipped;                 /* frees not parked since the last probe */
    int listed;                       /* on the allocator's list (vl_cparking.streams, via next) */
    struct vl_cstream *next;
} vl_cpark;

typedef struct vl_cparking {
    struct vl_cstream *streams; /* streams that may hold a PARKED block (via park.next) */
    uint64_t hits;              /* requests served by taking a parked block back (vl_caching_park_hits) */
} vl_cparking;

#endif
