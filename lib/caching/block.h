/* A block: one contiguous range of device memory inside a segment, in one of four
 * states. Block headers live in a slab (slab.h), never next to the memory they describe
 * (device memory is not host-addressable).
 *
 * Invariants (checked by vl_caching_check):
 *   - the blocks of a segment tile it exactly, in address order through prev/next:
 *     first->addr == seg->base, b->addr + b->size == b->next->addr, the last ends at
 *     seg->base + seg->size;
 *   - two FREE neighbours never exist (freeing coalesces), nor two UNMAPPED ones;
 *   - FREE blocks, and only they, are in their pool's bins (bins.h);
 *   - ALLOCATED and PARKED blocks, and only they, are in the allocator's pointer table
 *     (a PARKED one keeps its entry, so a parked hit and its free touch the table once);
 *   - a PARKED block is its stream's parked block (park.h) and may have FREE neighbours;
 *   - PENDING blocks have pending_events > 0 nodes waiting in stream FIFOs (events.c);
 *   - UNMAPPED blocks exist only in expandable segments, start and end on chunk
 *     boundaries and are in their pool's holes (bins keyed by size, through the
 *     bin_left / bin_right / bin fields that FREE blocks use for their pool's bins);
 *   - RETIRING blocks exist only in expandable segments, start and end on chunk
 *     boundaries, are still mapped and wait in one retire batch (release.c) for the
 *     event that covers their last use; never reused, never adjacent to each other
 *     within one batch's making (they may be, across batches). */
#ifndef VL_CACHING_BLOCK_H
#define VL_CACHING_BLOCK_H

#include <stddef.h>
#include <stdint.h>

enum vl_cblock_state {
    VL_CB_FREE = 0,      /* cached, reusable by its pool's stream */
    VL_CB_ALLOCATED = 1, /* handed out */
    VL_CB_PENDING = 2,   /* freed, waiting for events on streams it was used on */
    VL_CB_UNMAPPED = 3,  /* expandable segments only: address space without memory */
    VL_CB_RETIRING = 4,  /* expandable segments only: mapped, to be unmapped once its event completes */
    VL_CB_PARKED = 5     /* freed, parked uncoalesced as its stream's last free (park.h) */
};

struct vl_csegment;
struct vl_cuse;

typedef struct vl_cblock {
    uintptr_t addr;
    size_t size;
    struct vl_cblock *prev, *next;          /* address neighbours in the segment */
    struct vl_csegment *seg;
    /* Fields of one state at a time share space, so a header is one 64-byte cache line
     * (the hot paths touch several headers; each should cost one miss, not two). */
    union {
        struct {                            /* FREE: children in its class's treap (bins.h); */
            struct vl_cblock *bin_left, *bin_right; /* UNMAPPED: the same in its pool's holes */
        };
        struct {                            /* RETIRING: the batch's next block, and a */
            struct vl_cblock *retire_next;  /* header taken in advance for the split that a */
            struct vl_cblock *retire_spare; /* refused unmap needs (release.c) */
        };
        struct {                            /* ALLOCATED (and PARKED: uses NULL) */
            struct vl_cuse *uses;           /* other streams from record_use */
            size_t requested;               /* the caller's size */
        };
        uint32_t pending_events;            /* PENDING: events not yet seen complete */
    };
    uint16_t bin;                           /* FREE: class index in bins */
    uint8_t state;                          /* enum vl_cblock_state */
    uint8_t whole;                          /* FREE, PARKED: counted as a whole free segment (stats.c) */
    uint32_t plan_tag;                      /* ALLOCATED, plan=1: 1 + its entry in the plan's log, 0: none (plan_learn.c) */
} vl_cblock;

_Static_assert(sizeof(vl_cblock) <= 64, "a block header fits one cache line");

#endif
