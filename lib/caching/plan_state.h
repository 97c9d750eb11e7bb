/* plan=1's state, shared by its two files (plan.h says what a plan is and why):
 *   plan_learn.c   the log of one stream's events, period detection, the offline layout
 *   plan.c         the arena: serving the layout, ending the plan, giving the arena back
 * Only these files include it. */
#ifndef VL_CACHING_PLAN_STATE_H
#define VL_CACHING_PLAN_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "caching/allocator.h"
#include "caching/plan.h"

#define VL_PLAN_LOG_EVENTS (1u << 17) /* the log: a period must repeat inside it */
#define VL_PLAN_FIRST_CHECK 2048      /* events between looks for a period, at first (then half the log) */
#define VL_PLAN_MIN_REPEATS 3         /* periods seen before a plan is made, doubled after each plan */
                                      /* that ended within two periods (a program that repeats a while) */
#define VL_PLAN_ATTEMPTS 8            /* short plans in a row before plan gives up */
#define VL_PLAN_MAX_FOLD 4            /* a plan spans at most this many periods */
#define VL_PLAN_SWITCH 256            /* requests on another stream before the plan may follow it */
#define VL_PLAN_CHUNK (2u << 20)      /* the layout's footprint unit (one granule) */
/* The arena maps this much per call (one granule): larger spans save calls once, but in
 * the first period a span also maps the idle places of blocks still live from before
 * the plan, which costs more memory than the calls are worth. */
#define VL_PLAN_SPAN (2u << 20)
#define VL_PLAN_NOT_FREED UINT64_MAX

enum { LEARNING, ARMED, ACTIVE, DRAINING, OFF };

typedef struct logged {
    uintptr_t addr;
    uint64_t size;    /* the request rounded as the allocator rounds it */
    uint64_t ev;      /* its allocation's event */
    uint64_t free_ev; /* VL_PLAN_NOT_FREED while live */
} logged;

struct vl_cplan {
    int state;
    vl_cstream *stream; /* the stream planned for: the first that allocated, or one that */
                        /* allocated 4x as much since the log began (while learning) */
    uint64_t elsewhere; /* allocations on other streams since the log began */

    /* The log (LEARNING, ARMED): one signature per event, the allocations among them. */
    uint64_t *sig;
    uint32_t *work; /* detection's prefix function, then its live counts */
    logged *allocs;
    size_t nallocs;
    uint64_t nev, next_check;

    /* ARMED: the period (events) and the cut (the allocation event where it starts). */
    uint64_t q, cut;

    /* The plan: slot k is the k-th request after a cut. */
    size_t m;
    uint64_t *off, *size;   /* per slot */
    uint64_t *requested;    /* per live slot: the caller's size */
    uint32_t *by_off;       /* slots sorted by offset (frees find theirs by binary search) */
    /* Whether a slot's place is free: live slots as bits over their ranks in by_off; the
     * slots that start inside slot k's bytes are ranks [lo_rank[k], hi_rank[k]). */
    uint32_t *rank, *lo_rank, *hi_rank;
    uint64_t *live_bits;
    size_t k;
    /* The arena: address space of its own, mapped span by span (VL_PLAN_SPAN, one map
     * call each) the first time a slot touches a span (so the first period holds only
     * about what it uses, beside the blocks still live from before the plan) and kept
     * mapped while the plan lasts. */
    uintptr_t base;          /* 0: no arena */
    uint64_t arena_size;     /* the layout's extent */
    uint64_t va_size;        /* reserved: arena_size rounded up to the device's granularity */
    size_t span;             /* VL_PLAN_SPAN in whole granules; the last span may be shorter */
    uint8_t *mapped;         /* per span */
    int64_t mapped_bytes;
    size_t live_count;
    int64_t live_bytes, live_requested;
    /* ACTIVE: blocks of the repeating kind made before the plan and still live (the
     * allocator's): once all are freed, their cached memory is given back (trim). */
    uint64_t regime;
    size_t old_live;
    int trim_due;

    /* Plans in a row that ended within two of their periods (a program that repeated only
     * a while, as an inference server's run of same-shape requests): each doubles the
     * repeats the next plan waits for; VL_PLAN_ATTEMPTS of them turn plan off. */
    uint64_t short_ends;
    uint64_t served_since_open;
    vl_plan_info info;
};

/* plan_learn.c, for the arena's end: forgets the layout (the slots and their index), starts
 * the log again, refuses a plan (why into info; learning again). */
void vl_plan_drop_layout(vl_cplan *p);
void vl_plan_restart_log(vl_cplan *p);
void vl_plan_refuse(vl_cplan *p, const char *why);

/* First logged allocation with ev >= e (allocations are in event order). */
static inline size_t first_alloc_at(const vl_cplan *p, uint64_t e)
{
    size_t lo = 0, hi = p->nallocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->allocs[mid].ev < e) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The first rank (position in by_off) whose slot starts at o or above. */
static inline size_t first_rank_at(const vl_cplan *p, uint64_t o)
{
    size_t lo = 0, hi = p->m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->off[p->by_off[mid]] < o) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

#endif
