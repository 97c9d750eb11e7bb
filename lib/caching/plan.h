/* plan=1: a memory plan for programs that repeat exactly (fixed-shape training loops).
 *
 * Such a program makes the same requests, of the same sizes, freed in the same order,
 * every step. Laid out offline, knowing every lifetime, one step fits in about its peak
 * of live bytes (replay --static-layout), while
 * best fit online either leaves holes the next step's largest request cannot use (and
 * reserves more) or relocates free memory every step (map and unmap calls). So:
 *
 *   LEARNING  the plan's stream (the first one that allocates, or one that allocates 4
 *             times as much while learning) logs its allocations and frees, each as a
 *             signature (size; how many events back its allocation was), and looks, at
 *             geometric checkpoints, for the smallest period q with which the latest
 *             events repeat at least 3 times (doubled after each plan that ended within
 *             two of its periods), over at least half of what it logged;
 *   ARMED     found: one period is laid out offline (lib/trace/layout.h, the best of its
 *             heuristics, lives that outlive the period wrapping into the next; a plan
 *             spans several periods where a block outlives one), starting at the request
 *             where the fewest bytes of repeating blocks are live; the next events must
 *             keep repeating;
 *   ACTIVE    at the next such request the cache is given back and the plan serves the
 *             k-th request at arena + offset[k]: no fit, no split, no map call once warm,
 *             while the program repeats. The arena is address space of the plan's own,
 *             mapped one granule at a time on first use and kept mapped;
 *   DRAINING  a request that differs (size) or whose place is still taken (a block freed
 *             later than planned; checked against every planned block that shares its
 *             addresses, so a wrong plan costs memory, never correctness), or record_use
 *             of a planned block by another stream, ends the plan: later requests go to
 *             the allocator, the arena's chunks that no live planned block uses are
 *             unmapped after a device synchronize, the rest once its last planned block
 *             is freed; learning starts again (plan turns off after VL_PLAN_ATTEMPTS plans
 *             in a row that ended within two periods).
 *
 * Memory: blocks made before the plan (parameters, optimizer state) stay where they are;
 * the arena holds the repeating ones. Peak reserved counts the steps before the plan
 * (the SPEC's own policy) and the first planned period, which holds the blocks live as
 * the plan starts twice: where the allocator put them, and the arena around their planned
 * places (docs/caching-measured.md). Statistics count planned blocks as allocated and the
 * arena's mapped chunks as reserved. */
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
/* close: the arena goes back whatever it holds (planned blocks still live are reported). */
void vl_plan_close(struct vl_caching *c);

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
