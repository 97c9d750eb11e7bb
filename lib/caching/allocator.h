/* The caching allocator's internal state, shared by its files:
 *   sizes.c                 rounding, pools, classic segment sizes, split rules
 *   bins.h/.c               segregated free lists with bitmaps (best/good fit in O(1))
 *   ../addrmap.h/.c         pointer -> block table (shared with the sim device)
 *   slab.h/.c               block headers and small records without malloc
 *   core.c                  alloc / free: split, coalesce, streams, OOM retry
 *   fit.c                   which cached block a request takes, where a split puts it
 *   segments_classic.c      one device allocation per segment (PyTorch's default)
 *   segments_expandable.c   growing VA ranges per stream and pool, mapped in chunks
 *   expandable.h            the expandable files' shared geometry and calls
 *   expandable_place.c      where a request goes in the ranges (the holes it looks at)
 *   expandable_reclaim.c    reclaim: free chunks retired, retired ones finished
 *   expandable_pack.c       pack=1: an idle stream's ranges laid out again
 *   chunks.h                where an expandable range's chunks start (sizes grow with offset)
 *   spans.h                 which chunks one map call covers (a span is unmapped whole)
 *   release.c               stream-ordered release: retire behind events, keep, lend
 *   budget.h/.c             the adaptive reclaim budget: its state and rules
 *   hostmem.h/.c            host allocations of the records (fault injection for tests)
 *   park_state.h            parking's state: each stream's slot, the allocator's list
 *   park.h/.c               a stream's last free, parked for the next request (fast path)
 *   fast.h                  the cache-hit pair inline in the entry points
 *   events.c                record_use and deferred reuse behind events
 *   plan.h, plan_state.h    plan=1: repeating programs served from an offline layout
 *   plan_learn.c, plan.c    its learning (log, period, layout) and its serving (arena)
 *   stats.c                 statistics, memory summary, OOM report
 *   check.c                 the invariant checker the tests run after every step
 *   lock.h                  the one spinlock
 *   backend.c               vl_backend_caching: options, locking, the vl_alloc glue
 * Written against lib/device.h only: the same code runs on a GPU and on the simulator.
 * Every function here expects the allocator's lock held (backend.c takes it). Internal
 * invariants are asserted where they could break (vl_assert_internal, lib/debug.h: on
 * in the caching tests, compiled out elsewhere); check.c walks all of them. */
#ifndef VL_CACHING_ALLOCATOR_H
#define VL_CACHING_ALLOCATOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "alloc.h"
#include "addrmap.h"
#include "caching/bins.h"
#include "caching/block.h"
#include "caching/budget.h"
#include "caching/park_state.h"
#include "caching/caching.h"
#include "caching/lock.h"
#include "caching/plan.h"
#include "caching/slab.h"
#include "caching/spans.h"
#include "debug.h"
#include "device.h"

struct vl_cstream;

/* One pool: the free blocks of one stream and one size range (small <= 1 MiB, large).
 * Blocks are never reused across streams: that is what makes reuse stream-ordered. In
 * classic mode they stay in their size range too, and in expandable mode unless lend=1
 * lets the two pools of a stream lend each other free blocks (fit.c). */
typedef struct vl_cpool {
    struct vl_cstream *stream; /* first, in one line with the bins' version (fast.h reads both) */
    int small;
    struct vl_csegment *ranges; /* segments=expandable: this pool's VA ranges (via pool_next), or NULL */
    /* segments=expandable: the UNMAPPED blocks of this pool's ranges, by size (a second
     * vl_bins; allocated with the pool's first range, NULL before). Placement finds the
     * smallest hole that fits in O(log n) instead of walking every hole. */
    vl_bins *holes;
    vl_bins bins;
} vl_cpool;

/* A segment: classic = one mem_alloc; expandable = one va_reserve whose chunks are mapped
 * on demand. Invariant: mapped_bytes == size for classic; for expandable it is the sum
 * of its non-UNMAPPED blocks, made of mapped_chunks whole chunks, and the segment is on
 * its pool's `ranges` list (a pool opens a further range when a request fits no unmapped
 * space of the ones it has: segments_expandable.c). mapped_bytes includes RETIRING
 * blocks (still mapped until their event completes). */
typedef struct vl_csegment {
    uintptr_t base;
    size_t size;
    size_t mapped_bytes;
    size_t granule;            /* expandable: device granularity = smallest chunk */
    size_t chunk;              /* expandable: largest chunk (chunks.h) */
    size_t mapped_chunks;      /* expandable: live map calls (spans) */
    vl_spans spans;            /* expandable: where each map call's span starts and ends (spans.h) */
    int expandable;
    vl_cpool *pool;
    vl_cblock *first;          /* lowest-address block */
    struct vl_csegment *prev, *next; /* the allocator's segment list */
    struct vl_csegment *pool_next;   /* expandable: the pool's next range */
    uint64_t serial;                 /* classic: creation order (gc releases the oldest first) */
    size_t idle_at;                  /* classic: 1 + its index in the idle heap, 0 when not there */
} vl_csegment;

/* A stream that used another stream's block (record_use): one node per block and
 * stream, from the allocator's node slab. */
typedef struct vl_cuse {
    struct vl_cstream *stream;
    struct vl_cuse *next;
} vl_cuse;

/* An event recorded on a stream when a block used there was freed: the block is
 * reusable once all its events completed. FIFO per stream (events on one stream
 * complete in order, so only the oldest needs asking). */
typedef struct vl_cpending {
    vl_event event;
    vl_cblock *block;
    struct vl_cpending *next;
} vl_cpending;

/* A retire batch (release.c): RETIRING blocks (via retire_next) that one event, recorded
 * on the stream whose pools hold them, covers (NULL: complete already, a retry of
 * refused unmaps). From the node slab. */
typedef struct vl_cretire {
    vl_event event;
    vl_cblock *blocks;
    struct vl_cretire *next;
    /* Bytes of this batch's chunks whose memory was shared with a new mapping of the
     * same stream (release.c, "lending"): the first `lent` bytes in the order of the
     * blocks list, each block from its low end. Those chunks are unmapped without
     * releasing their memory, which the new mapping holds. */
    size_t lent;
} vl_cretire;

/* Where the next chunk to lend lies: batch's block `block` at `at` (release.c). Lives
 * only during one grow (segments_expandable.c): batch = NULL once lending stopped. */
typedef struct vl_clend {
    vl_cretire *batch;
    vl_cblock *block;
    uintptr_t at;
} vl_clend;

/* Physical memory kept unmapped for the next map of a chunk of the same size (release.c).
 * From the node slab. */
typedef struct vl_cspare {
    vl_phys phys;
    size_t size;
    struct vl_cspare *next;
} vl_cspare;

#define VL_SPARE_CLASSES 64 /* list k holds sizes in [2^k, 2^(k+1)) */

/* The node slab (vl_caching.nodes) serves vl_cuse, vl_cpending, vl_cretire and vl_cspare. */
#define VL_MAX2(a, b) ((a) > (b) ? (a) : (b))
#define VL_NODE_SIZE VL_MAX2(VL_MAX2(sizeof(vl_cuse), sizeof(vl_cpending)), VL_MAX2(sizeof(vl_cretire), sizeof(vl_cspare)))

/* Per-stream byte counts drive expandable reclaim (segments_expandable.c): a stream
 * gives back its own free chunks once its reserved passes (1 + reclaim) x its peak
 * allocated, and takes other streams' only under device memory pressure. Invariants:
 * allocated = sum of its ALLOCATED blocks' sizes; reserved = mapped bytes of its pools'
 * expandable ranges minus their RETIRING blocks (on their way out; 0 in classic mode); peak_allocated >= allocated, the stream's
 * high-water mark since it was first seen (reset_peaks leaves it: reclaim's cap). */
typedef struct vl_cstream {
    /* What a cache-hit pair touches first, together (fast.h); the pools' bins are large. */
    vl_stream handle;
    vl_cpark park;                   /* its parking slot (park.h) */
    int64_t allocated, peak_allocated, reserved;
    vl_cpending *pending_head, *pending_tail;
    struct vl_cstream *next_waiting; /* on the allocator's waiting_streams list iff pending_head */
    vl_cpool pools[2]; /* [0] small, [1] large */
} vl_cstream;

typedef struct vl_caching_config {
    int expandable;        /* segments=expandable */
    unsigned roundup_div;  /* power-of-two divisions (0/1: off) */
    size_t max_split;      /* 0: unlimited */
    double gc_threshold;   /* 0: off; else fraction of device capacity */
    size_t chunk;          /* expandable: largest chunk (chunks.h) */
    size_t span;           /* expandable: most bytes one map call covers (spans.h); 0: one chunk */
    double reclaim;        /* expandable: reserved cap above peak allocated (fraction); < 0 off */
    double reclaim_max;    /* expandable: the most the budget rises to when reclaim churns (budget.c) */
    int raise_maps;        /* expandable: relocating map calls in a budget window above which it doubles */
    int decay;             /* expandable, decay=1: the budget falls back once reclaim stops churning (budget.c) */
    int split_toward_hole; /* expandable, split=hole: a remainder goes next to an unmapped hole before the block */
    int lend;              /* expandable, lend=1: a stream's two pools serve each other's requests from cache */
    int top_last;          /* expandable, top=last: best fit passes over a block that borders unmapped space */
    int pack;              /* expandable with pack=1 (0 for classic): lowest of a few fits; idle ranges laid out again */
    int oom_report;        /* print the OOM report to stderr */
    int park;              /* park a stream's last free (park.h) */
    int plan;              /* plan=1: serve a repeating program from an offline layout (plan.h) */
} vl_caching_config;

typedef struct vl_caching {
    /* What a cache-hit pair reads and writes (fast.h) comes first, in four cache lines. */
    vl_lock lock;
    /* fast.h's paths may run: park=1, the verdict cache applies (not top=last under a
     * reclaim budget), no plan, no roundup_div (park=1 is never on with pack=1). Fixed at open. */
    int fast;
    vl_addrmap table;              /* ALLOCATED and PARKED block address -> vl_cblock* */
    vl_cstream *last_stream;       /* lookup cache: most programs use one stream */
    vl_alloc_stats st;             /* kept current except inactive_split/largest_free (stats.c) */
    size_t npending;               /* vl_cpending nodes in all FIFOs */
    vl_cretire *retire_head, *retire_tail; /* release.c (below) */
    int64_t whole_free_bytes;      /* FREE blocks that span a whole segment */
    int64_t allocated_high_water;  /* release.c (below) */
    vl_cparking parking;           /* park.h: the streams that may hold a PARKED block */
    /* The reclaim budget (budget.h, budget.c): rises by doublings when reclaim keeps
     * mapping memory again, falls back one doubling at a time once it stops. */
    vl_cbudget budget;
    vl_device *dev;
    vl_caching_config cfg;
    vl_slab blocks;                /* vl_cblock headers */
    vl_slab nodes;                 /* vl_cuse and vl_cpending (same size class) */
    vl_cstream **streams;          /* every stream seen; entries never move */
    size_t nstreams, streams_cap;
    vl_addrmap stream_table;       /* handle + 1 -> vl_cstream*: O(1) lookup at any stream count */
    vl_cstream *waiting_streams;   /* streams whose pending FIFO is non-empty (via next_waiting) */
    vl_csegment *segments;         /* all segments, newest first */
    /* Classic segments that are one FREE block ("idle"), in a binary min-heap by serial,
     * so gc and flushes release the oldest first without walking every segment.
     * Invariants: a classic segment is in the heap iff its only block is FREE; its
     * idle_at is its index + 1; idle_cap >= the number of classic segments (reserved
     * when a segment is made, so the FREE transitions never allocate). */
    vl_csegment **idle;
    size_t nidle, idle_cap, nclassic;
    uint64_t next_serial;
    /* Stream-ordered release (release.c). Invariants: the batches (retire_head..tail,
     * FIFO) hold every RETIRING block once, retiring_bytes is their sum; spares[k] holds
     * kept memory of sizes in [2^k, 2^(k+1)), spare_bytes their sum; lent_bytes is the sum of the
     * batches' `lent` (memory mapped twice: at the retiring chunk and at the new
     * mapping it was lent to); st.reserved_bytes = mapped bytes of all segments +
     * spare_bytes - lent_bytes. allocated_high_water never drops (the spares' cap). */
    int64_t retiring_bytes;
    int64_t lent_bytes;
    int64_t last_batch_bytes;      /* what the last reclaim retired: the spares' slack */
    vl_cspare *spares[VL_SPARE_CLASSES];
    int64_t spare_bytes;
    vl_crelocation relocation;     /* budget.h: relocating map calls, hidden or exposed (a diagnostic) */
    vl_caching_growth_fn on_growth; /* caching.h: told after every growth (NULL: nobody) */
    void *on_growth_ctx;
    char last_oom[1024];           /* the last OOM report as one line ("" if none) */
    vl_oom_report last_report;     /* the last OOM report (valid when last_oom[0]) */
    /* The last failure other than an OOM (caching.h: VL_CACHING_ERR_*; 0: none since
     * open) and its one line. Every path that fails leaves the state consistent: the
     * call returns NULL or an error code, or does less (a block not split, a chunk not
     * unmapped), and the allocator stays usable. */
    int last_error;
    char last_error_text[256];
    vl_cplan *plan;                /* plan=1 (plan.h), else NULL */
} vl_caching;

/* segments_classic.c: the idle heap (vl_caching.idle). */
void vl_classic_idle_add(vl_caching *c, struct vl_csegment *s);
void vl_classic_idle_remove(vl_caching *c, struct vl_csegment *s);

/* Blocks tile their segment: b starts where the one before it ends and ends where the
 * next starts (true between changes; a split or merge restores it before it returns). */
static inline int vl_block_tiles(const vl_cblock *b)
{
    return (!b->prev || (b->prev->next == b && b->prev->addr + b->prev->size == b->addr)) &&
           (!b->next || (b->next->prev == b && b->addr + b->size == b->next->addr));
}

/* FREE-state transitions; `whole` remembers whether the block was counted as a whole
 * free segment, so removal undoes exactly what insertion did. */
static inline void vl_free_insert(vl_caching *c, vl_cblock *b)
{
    vl_assert_internal(b->size > 0 && b->state != VL_CB_UNMAPPED);
    b->state = VL_CB_FREE;
    b->whole = !b->prev && !b->next;
    if (b->whole) {
        c->whole_free_bytes += (int64_t)b->size;
        if (!b->seg->expandable) vl_classic_idle_add(c, b->seg);
    }
    vl_bins_insert(&b->seg->pool->bins, b);
}
static inline void vl_free_remove(vl_caching *c, vl_cblock *b)
{
    vl_assert_internal(b->state == VL_CB_FREE);
    if (b->whole) {
        c->whole_free_bytes -= (int64_t)b->size;
        if (!b->seg->expandable) vl_classic_idle_remove(c, b->seg);
    }
    b->whole = 0;
    vl_bins_remove(&b->seg->pool->bins, b);
}

/* core.c */
vl_cstream *vl_caching_stream(vl_caching *c, vl_stream s); /* NULL: out of host memory (recorded) */
vl_cblock *vl_caching_new_block(vl_caching *c);            /* NULL: out of host memory (recorded) */
/* Links the fresh header b as the block [addr, addr+size) of segment s after `after`
 * (or first when NULL); returns b. The caller sets its state and bins. */
vl_cblock *vl_block_insert_after(vl_csegment *s, vl_cblock *after, vl_cblock *b, uintptr_t addr, size_t size);
/* Merges b->next into b (the caller took both out of bins / lists first). */
void vl_block_absorb_next(vl_caching *c, vl_cblock *b);
/* Records a failure (code: VL_CACHING_ERR_*) as the last error and prints its one line;
 * rc is the device status, or 0 for host memory. Never exits: callers undo and return. */
void vl_caching_fail(vl_caching *c, int code, const char *what, int rc);
/* vl_caching_fail for a host allocation that returned NULL. */
static inline void vl_caching_fail_host(vl_caching *c, const char *what)
{
    vl_caching_fail(c, VL_CACHING_ERR_HOST_MEMORY, what, 0);
}
/* Merges b with its FREE neighbours into a FREE block that is in no bins (detached:
 * the caller hands it out at once); returns it. */
vl_cblock *vl_caching_coalesce(vl_caching *c, vl_cblock *b);
/* Makes b FREE: coalesces with FREE neighbours, puts the result in its pool's bins. */
vl_cblock *vl_caching_release_block(vl_caching *c, vl_cblock *b);
void *vl_caching_alloc(vl_caching *c, size_t size, vl_stream s);
void vl_caching_free(vl_caching *c, void *ptr);
/* fit.c: the stream's other pool (its small pool for a large one, and the other way round). */
static inline vl_cpool *vl_caching_other_pool(const vl_cpool *p) { return &p->stream->pools[p->small ? 1 : 0]; }
/* A cached block for `rounded` in the stream's pool *pp, or from its other pool with
 * lend=1 (*pp becomes the pool the block is in); NULL: none fits. */
vl_cblock *vl_caching_cached_fit(vl_caching *c, vl_cpool **pp, size_t rounded);
/* Where `rounded` bytes go when the FREE block [lo, end) of segment s, whose address
 * neighbours are prev and next, is split (detached: a fresh mapping). */
uintptr_t vl_caching_split_spot(const vl_caching *c, const vl_csegment *s, const vl_cblock *prev,
                                const vl_cblock *next, uintptr_t lo, uintptr_t end, size_t rounded, int detached);
/* Whether the parked block x is what a request of `rounded` bytes in pool p would get. */
int vl_caching_parked_is_best_fit(const vl_caching *c, const vl_cpool *p, const vl_cblock *x, size_t rounded);
/* trim without the plan's arena: every cached byte back, after deferred frees (plan.c
 * gives the cache back when its arena replaces it). */
size_t vl_caching_release_cached(vl_caching *c);
size_t vl_caching_trim(vl_caching *c);

/* segments_classic.c: a FREE block (in bins) of a new segment that fits `rounded`,
 * or NULL with *rc = VL_DEV_OOM, or VL_DEV_ERROR after a device or host failure (recorded;
 * nothing changed). */
vl_cblock *vl_classic_grow(vl_caching *c, vl_cpool *p, size_t rounded, int *rc);
/* Releases every segment that is one FREE block; returns bytes released. */
size_t vl_classic_release_free(vl_caching *c, size_t stop_when_reserved_below);
/* A zeroed segment record for [base, base+size) of pool p, linked in; NULL when out of
 * host memory (recorded). */
vl_csegment *vl_segment_new(vl_caching *c, vl_cpool *p, uintptr_t base, size_t size);
void vl_segment_link(vl_caching *c, vl_csegment *s);
void vl_segment_unlink(vl_caching *c, vl_csegment *s);

/* segments_expandable.c (grow: as vl_classic_grow, but the block is detached: FREE,
 * coalesced, in no bins; vl_caching_alloc hands it out at once; and *rc may be
 * VL_GROW_NEVER_FITS: an OOM that no flush can cure, the mapping needing more than the
 * device could give even with every cached byte released) */
#define VL_GROW_NEVER_FITS 100
vl_cblock *vl_expandable_grow(vl_caching *c, vl_cpool *p, size_t rounded, int *rc);
/* Unmaps every whole chunk inside FREE blocks; releases fully unmapped ranges. */
size_t vl_expandable_release_free(vl_caching *c);
void vl_expandable_destroy(vl_caching *c, vl_csegment *s); /* close: unmap and release all */
/* expandable_pack.c, pack=1: the stream holds nothing (its allocated dropped to 0): fills
 * the holes of its ranges with chunks from their tops, so its cache is one FREE block
 * from each range's start. */
void vl_expandable_idle(vl_caching *c, vl_cstream *st);

/* expandable_reclaim.c, for release.c: unmaps the RETIRING block b whose event
 * completed (keep: its memory becomes spare), making it UNMAPPED (merged with UNMAPPED
 * neighbours); its first `lent` bytes were lent (unmapped without releasing memory).
 * A refused unmap leaves the rest FREE (recorded); after a refused unmap of a lent
 * chunk the rest stays RETIRING and is queued again (recorded). */
void vl_expandable_finish_retire(vl_caching *c, vl_cblock *b, int keep, size_t lent);
/* segments_expandable.c: device memory a mapping of `bytes` could still get: 0 when it can never fit. */
int vl_expandable_could_fit(vl_caching *c, size_t bytes);
/* The size of the live span that starts at addr of segment s. */
size_t vl_expandable_span_at(const vl_csegment *s, uintptr_t addr);

/* release.c: stream-ordered release of expandable chunks. */
/* Queues the RETIRING blocks `list` behind one event recorded on st (alive: the caller
 * allocates on it now); without an event, waits for the device and unmaps them now. */
vl_cretire *vl_release_queue(vl_caching *c, vl_cstream *st, vl_cblock *list); /* the batch, or NULL */
/* Lending: a RETIRING span's memory, shared with a new mapping on the same stream
 * (work queued later on one stream runs after the work queued before, so the new
 * address may use the memory while the old one waits for its event). Maps the next
 * span of l's batch at addr of segment s if it fits in `room` bytes and ends on a chunk
 * boundary there; returns its size, or 0 when it does not, the batch has none left or
 * the device refused (l->batch becomes NULL: lending stops, so the lent spans of a
 * mapping are its first ones). */
size_t vl_release_lend_span(vl_caching *c, vl_clend *l, const vl_csegment *s, uintptr_t addr, size_t room);
/* Undoes one lent span of a mapping that failed later on. */
void vl_release_unlend_span(vl_caching *c, vl_cretire *batch, uintptr_t addr, size_t size);
/* Unmaps a lent span of a RETIRING block whose event completed. */
int vl_release_unmap_lent_span(vl_caching *c, uintptr_t addr, size_t size);
/* Queues the RETIRING block b (its first `lent` bytes lent) again, in a batch without an
 * event: the next processing tries its unmaps again (a refused unmap of a lent chunk:
 * its memory is in use elsewhere, so it can become neither FREE nor UNMAPPED).
 * Returns 0, or -1 without host memory for the batch (recorded). */
int vl_release_requeue(vl_caching *c, vl_cblock *b, size_t lent);
/* Unmaps the blocks of batches whose events completed, oldest first; all = 1: every
 * batch (the caller synchronized the device), their memory given back, not kept. */
void vl_release_process(vl_caching *c, int all);
/* Maps one span at addr of segment s: kept (spare) memory of at most `room` bytes
 * that ends on a chunk boundary there when there is some, else `room` bytes of fresh
 * memory; *size gets the span's size. Counts its bytes in reserved (not in segments /
 * device_allocs: the caller counts the map calls of a mapping that succeeded as a whole). */
int vl_release_map_span(vl_caching *c, const vl_csegment *s, uintptr_t addr, size_t room, size_t *size);
/* Unmaps one span whose work is known complete; keep: its memory becomes spare.
 * Counts one segment less and one device free. */
int vl_release_unmap_span(vl_caching *c, uintptr_t addr, size_t size, int keep);
/* Gives spare memory back to the device until reserved <= target (0: all of it). */
void vl_release_spares(vl_caching *c, int64_t target);
/* The spares' cap: (1 + reclaim) x the allocated high-water mark, plus what the last
 * reclaim retired (on a GPU its event is rarely complete when the mapping it made room
 * for is made, so that mapping takes fresh memory; keeping one batch's worth lets the
 * next reclaim's mapping take this one's memory instead of creating and releasing). */
int64_t vl_release_spare_cap(const vl_caching *c);
/* Waits for the device and completes every batch, spares given back (trim, close,
 * memory pressure: where waiting is the point). */
void vl_release_drain(vl_caching *c);

/* budget.c (budget.h): the reclaim budget, at an allocation (after st.allocs counts it). */
static inline void vl_caching_budget_tick(vl_caching *c)
{
    if (vl_budget_decay_due(&c->budget, c->st.allocs))
        vl_budget_decay(&c->budget, &c->cfg, c->st.allocs, c->allocated_high_water);
}

/* events.c */
int vl_caching_record_use(vl_caching *c, void *ptr, vl_stream s);
/* ALLOCATED b with uses: records events, makes it PENDING. When no event can be
 * recorded it waits for the device instead and makes b FREE at once. */
void vl_caching_defer_free(vl_caching *c, vl_cblock *b);
/* Releases blocks whose events completed. wait = 1: synchronizes the device first. */
void vl_caching_process_events(vl_caching *c, int wait);

/* stats.c; inline: every allocation and free updates them. */
static inline void vl_stat_add(int64_t *cur, int64_t *peak, int64_t n)
{
    *cur += n;
    if (*cur > *peak) *peak = *cur;
}
/* The inactive split bytes and their peak, after a change of reserved, active or whole free. */
static inline void vl_caching_stats_touch(vl_caching *c)
{
    int64_t inactive = c->st.reserved_bytes - c->st.active_bytes - c->whole_free_bytes;
    c->st.inactive_split_bytes = inactive;
    if (inactive > c->st.peak_inactive_split_bytes) c->st.peak_inactive_split_bytes = inactive;
}
/* The statistics of one allocation of `size` bytes for a caller who asked for `requested`
 * on stream st (all but allocs), and of its free (frees too; active_bytes is the caller's:
 * a block with uses stays active). Blocks of segments and plan=1's planned blocks alike. */
static inline void vl_caching_count_alloc(vl_caching *c, vl_cstream *st, size_t requested, size_t size)
{
    vl_stat_add(&c->st.requested_bytes, &c->st.peak_requested_bytes, (int64_t)requested);
    vl_stat_add(&c->st.allocated_bytes, &c->st.peak_allocated_bytes, (int64_t)size);
    if (c->st.allocated_bytes > c->allocated_high_water) c->allocated_high_water = c->st.allocated_bytes;
    vl_stat_add(&st->allocated, &st->peak_allocated, (int64_t)size);
    vl_stat_add(&c->st.active_bytes, &c->st.peak_active_bytes, (int64_t)size);
    vl_caching_stats_touch(c);
}
static inline void vl_caching_count_free(vl_caching *c, vl_cstream *st, size_t requested, size_t size)
{
    c->st.frees++;
    c->st.requested_bytes -= (int64_t)requested;
    c->st.allocated_bytes -= (int64_t)size;
    st->allocated -= (int64_t)size;
}
void vl_caching_get_stats(vl_caching *c, vl_alloc_stats *out);
void vl_caching_reset_peaks(vl_caching *c);
size_t vl_caching_largest_free(vl_caching *c);
/* The OOM report's figures from the allocator's state (oom_report.h), for a request
 * of `requested` bytes on s now; leaves fragmentation and the SPEC to the caller. */
void vl_caching_fill_oom_report(vl_caching *c, size_t requested, vl_stream s, vl_oom_report *r);
/* At an OOM: the report into last_report, its one line into last_oom, printed with
 * oom_report=1. */
void vl_caching_oom_report(vl_caching *c, size_t requested, vl_stream s);
void vl_caching_print_summary(vl_caching *c, FILE *out);

/* check.c */
int vl_caching_check_locked(vl_caching *c, char *err, size_t errlen);

#endif
