/* plan=1: a memory plan for programs that repeat exactly (fixed-shape training loops).
 *
 * Such a program makes the same requests, of the same sizes, freed in the same order,
 * every step. Laid out offline, knowing every lifetime, one step fits in about its peak
 * of live bytes (replay --static-layout: 1.0001 on a recorded fixed-shape LM), while
 * best fit online either leaves holes the next step's largest request cannot use (and
 * reserves more) or relocates free memory every step (map and unmap calls). So:
 *
 *   LEARNING  the plan's stream (the first one that allocates, or one that allocates 4
 *             times as much while learning) logs its allocations and
 *             frees, each as a signature (size; how many events back its allocation was),
 *             and looks, at geometric checkpoints, for the smallest period q with which
 *             the latest events repeat at least three times;
 *   ARMED     found: one period, starting at a point where none of the repeating blocks
 *             is live, is laid out offline (lib/trace/layout.h, best of its heuristics);
 *             the next events must keep repeating;
 *   ACTIVE    at the next such point the plan takes one block from the allocator (the
 *             arena, as large as the layout) and serves the period's k-th request at
 *             arena + offset[k]: no fit, no split, no map call, while the program repeats;
 *   DRAINING  a request that differs (size, stream) or whose place is still taken (a
 *             block freed later than planned; checked against every planned block that
 *             shares its addresses, so a wrong plan costs memory, never correctness)
 *             ends the plan: the request and all later ones go to the allocator, and the
 *             arena goes back to it once its last planned block is freed; learning starts
 *             again (at most VL_PLAN_ATTEMPTS plans per allocator).
 *
 * Memory: blocks made before the plan (parameters, optimizer state) stay where they are;
 * the arena holds the repeating ones. What the plan reserves is the allocator's own
 * policy until the plan starts, then that policy's memory for the blocks it still holds
 * plus the arena. Statistics count planned blocks as allocated and the arena not at all.
 * Cross-stream use (record_use from another stream) of a planned block ends the plan and
 * is recorded on the arena, which therefore waits for that stream's work before reuse. */
#ifndef VL_CACHING_PLAN_H
#define VL_CACHING_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

struct vl_caching;
struct vl_cblock;
struct vl_cstream;
typedef struct vl_cplan vl_cplan;

/* NULL out of host memory. */
vl_cplan *vl_plan_new(void);
void vl_plan_delete(vl_cplan *p);

/* The hooks core.c, events.c and backend.c call, with the allocator's lock held. */
/* A request: 1 when the plan served it (*out: its pointer), 0 when the allocator must. */
int vl_plan_serve(struct vl_caching *c, size_t size, vl_stream s, void **out);
/* Told every block the allocator hands out and every free it takes (learning). */
void vl_plan_note_alloc(struct vl_caching *c, struct vl_cstream *st, struct vl_cblock *b);
void vl_plan_note_free(struct vl_caching *c, const struct vl_cblock *b);
/* Whether ptr lies in the plan's arena (then it is the plan's to free, size, record). */
int vl_plan_owns(const vl_cplan *p, const void *ptr);
void vl_plan_free(struct vl_caching *c, void *ptr);
size_t vl_plan_block_size(const vl_cplan *p, const void *ptr);
int vl_plan_record_use(struct vl_caching *c, void *ptr, vl_stream s);
/* trim: an arena that holds no planned block goes back (the plan ends, learning restarts). */
void vl_plan_trim(struct vl_caching *c);

/* For the invariant check (check.c): the arena's mapped bytes (in reserved, and in its
 * stream's), the plan's stream, and a self-check of the plan's own records. */
int64_t vl_plan_mapped_bytes(const vl_cplan *p);
const struct vl_cstream *vl_plan_stream(const vl_cplan *p);
int64_t vl_plan_live_bytes(const vl_cplan *p);
int64_t vl_plan_live_requested(const vl_cplan *p);
int vl_plan_check(const vl_cplan *p, char *err, size_t errlen);

/* What the plan did, for reports (caching.h: vl_caching_plan_info). */
typedef struct vl_plan_info {
    const char *state;           /* "learning", "armed", "active", "draining", "off" */
    uint64_t plans;              /* plans made (layouts computed) */
    uint64_t activations;        /* arenas taken */
    uint64_t ends;               /* plans ended by a request that differed */
    uint64_t served;             /* requests served from an arena */
    uint64_t period_events;      /* the last plan's span, in events (allocs + frees): one period of the */
    uint64_t period_allocs;      /* program or several (a block that outlives one); and in allocations */
    uint64_t arena_bytes;        /* the last plan's arena */
    uint64_t peak_bytes;         /* the last plan's peak of live planned bytes */
    char last_end[160];          /* why the last plan ended or was refused ("" if none) */
} vl_plan_info;
void vl_plan_get_info(const vl_cplan *p, vl_plan_info *out);

#endif
