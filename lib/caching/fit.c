/* Which cached block a request takes, and where in it: best fit (PyTorch's order), the
 * expandable rules around it (top=last passes over a block that borders unmapped space,
 * pack=1 takes the lowest-addressed of a few fits, lend=1 lets a stream's pools serve
 * each other), the split spot (split=hole, whole-chunk placement under a reclaim
 * budget), and whether a parked block is what all of that would hand out (park.h). */
#include "caching/allocator.h"
#include "caching/chunks.h"
#include "caching/park.h"
#include "caching/sizes.h"

/* How many size classes (the best fit's and the next non-empty ones above) an
 * expandable request looks at for the lowest-addressed fit. */
#define VL_LOW_FIT_CLASSES 8

/* Expandable with pack=1: the lowest-addressed of `best` (the best fit) and the smallest
 * blocks of the next VL_LOW_FIT_CLASSES - 1 non-empty classes above it. Low addresses
 * first keep long-lived blocks packed at the start of a range, as a cold pass (which
 * grows at the frontier) lays them out; by best fit alone a warm pass scattered them
 * into whatever free blocks the last pass left, and the short-lived ones between them
 * strand partly used chunks (it works together with consolidate_range in
 * expandable_pack.c; neither alone holds). */
static vl_cblock *low_fit(vl_cpool *p, vl_cblock *best)
{
    int j = (int)best->bin;
    for (int k = 1; k < VL_LOW_FIT_CLASSES && (j = vl_bins_next_nonempty(&p->bins, (unsigned)j)) >= 0; k++) {
        vl_cblock *b = vl_bins_first(&p->bins, (unsigned)j);
        if (b->addr < best->addr) best = b;
    }
    return best;
}

/* Best fit in pool p, PyTorch's rule: the smallest free block >= rounded (lowest
 * address among equal sizes), in the request's own class or else the first non-empty
 * class above; O(log n) in the blocks of a class (bins.h). */
static vl_cblock *best_fit(const vl_cpool *p, size_t rounded)
{
    unsigned i = vl_bin_index(rounded);
    vl_cblock *best = vl_bins_fit_in_class(&p->bins, i, rounded);
    if (!best) {
        int j = vl_bins_next_nonempty(&p->bins, i);
        if (j < 0) return NULL;
        best = vl_bins_first(&p->bins, (unsigned)j);
    }
    return best;
}

/* The block after the key (size, addr) in pool p's (size, address) order, or NULL. */
static vl_cblock *bins_successor(const vl_cpool *p, size_t size, uintptr_t addr)
{
    unsigned i = vl_bin_index(size);
    vl_cblock *n = vl_bins_after(&p->bins, i, size, addr);
    if (n) return n;
    int j = vl_bins_next_nonempty(&p->bins, i);
    return j < 0 ? NULL : vl_bins_first(&p->bins, (unsigned)j);
}

/* Whether the FREE block ending before `after` borders unmapped space (top=last). */
static inline int borders_hole(const vl_cblock *after) { return after && after->state == VL_CB_UNMAPPED; }

/* Bytes a FREE block could serve by growing: its own and the hole after it. */
static size_t growable_size(const vl_cblock *b) { return b->size + (borders_hole(b->next) ? b->next->size : 0); }

/* top=last, PyTorch's rule: a free block that borders unmapped space counts as large as
 * it could grow, so best fit moves on to the next larger block while that one could
 * grow less. The block at a range's top stays whole for growth; taken for every request
 * that fits it, it is split up and growth maps past the pieces. */
static vl_cblock *top_last(const vl_cpool *p, vl_cblock *best)
{
    for (vl_cblock *n; (n = bins_successor(p, best->size, best->addr)) && growable_size(n) < growable_size(best);)
        best = n;
    return best;
}

/* The block a request takes from pool p: the best fit, where classic large blocks
 * obey max_split (since the best fit is the smallest block that fits, when it is
 * oversize for this request every larger one is too, and the pool must grow),
 * expandable pools with top=last pass over blocks that border a hole (top_last), and
 * with pack=1 take the lowest-addressed of a few fits (low_fit). */
static vl_cblock *find_fit(vl_caching *c, vl_cpool *p, size_t rounded)
{
    vl_cblock *best = best_fit(p, rounded);
    if (!best) return NULL;
    if (c->cfg.top_last) best = top_last(p, best);
    if (!p->small && !c->cfg.expandable && !vl_caching_oversize_ok(best->size, rounded, c->cfg.max_split))
        return NULL;
    return c->cfg.pack ? low_fit(p, best) : best;
}

/* Bytes of the chunks of expandable segment s that [lo, lo+n) touches. */
static size_t chunks_touched(const vl_csegment *s, uintptr_t lo, size_t n)
{
    return vl_chunk_ceil(s->granule, s->chunk, lo + n - s->base) - vl_chunk_floor(s->granule, s->chunk, lo - s->base);
}

/* Where in the cached FREE block [lo, end) of expandable segment s a request of
 * `rounded` bytes, a whole number of granules, goes: at `at` (the split rule's choice),
 * unless the other end or the first or last chunk boundary inside the block touches
 * fewer chunks. A block that covers exactly its chunks leaves none of them partly used
 * when its neighbours are freed, so reclaim can take them all; placed across a chunk
 * boundary it strands up to a chunk either side. Only whole chunks: a request that is
 * not a whole number of chunks, aligned, leaves sub-chunk gaps that only small requests
 * fill. Only cached blocks: a fresh mapping extends a free block next to the hole on
 * purpose. */
static uintptr_t chunk_spot(const vl_csegment *s, uintptr_t lo, uintptr_t end, size_t rounded, uintptr_t at)
{
    size_t best = chunks_touched(s, at, rounded);
    uintptr_t c1 = s->base + vl_chunk_ceil(s->granule, s->chunk, lo - s->base);
    uintptr_t c2 = s->base + vl_chunk_floor(s->granule, s->chunk, end - s->base);
    uintptr_t cand[3] = {at == lo ? end - rounded : lo, c1, c2 - rounded};
    for (int i = 0; i < 3; i++) {
        if (cand[i] < lo || cand[i] > end - rounded) continue; /* also c2 - rounded wrapped */
        size_t t = chunks_touched(s, cand[i], rounded);
        if (t < best) {
            best = t;
            at = cand[i];
        }
    }
    return at;
}

/* Where take() puts `rounded` bytes when it splits the FREE block [lo, end) of segment
 * s whose address neighbours are prev and next (detached: a fresh mapping). */
uintptr_t vl_caching_split_spot(const vl_caching *c, const vl_csegment *s, const vl_cblock *prev, const vl_cblock *next,
                                 uintptr_t lo, uintptr_t end, size_t rounded, int detached)
{
    uintptr_t at = lo;
    /* split=hole: the remainder before the request, next to the hole, where a later,
     * larger request can extend it into the hole (placement's frontier). */
    if (c->cfg.split_toward_hole && s->expandable && prev && prev->state == VL_CB_UNMAPPED &&
        !(next && next->state == VL_CB_UNMAPPED))
        at = end - rounded;
    /* Whole-chunk placement serves reclaim; without a budget (reclaim=-1) nothing
     * unmaps in steady state and it would only scatter blocks over the cache. */
    if (!detached && s->expandable && c->cfg.reclaim >= 0 && rounded % s->granule == 0)
        at = chunk_spot(s, lo, end, rounded, at);
    return at;
}

/* A cached block for `rounded` in the stream's pool *pp. With lend=1, expandable
 * segments may also take one from the stream's other pool before mapping more (both
 * split to 512 B and give whole chunks back); off by default, since small blocks that
 * settle in the large pool's free memory split it up. *pp becomes the pool the block
 * is in. */
vl_cblock *vl_caching_cached_fit(vl_caching *c, vl_cpool **pp, size_t rounded)
{
    vl_cblock *b = find_fit(c, *pp, rounded);
    if (b || !c->cfg.lend) return b;
    vl_cpool *other = vl_caching_other_pool(*pp);
    b = find_fit(c, other, rounded);
    if (b) *pp = other;
    return b;
}

/* Whether the parked block x is what a request of `rounded` bytes in pool p would get,
 * where it lies, had x's free coalesced it: then handing x out again changes nothing.
 * Its free would have merged it with a FREE block after it (next), and best fit over the
 * bins with that merged block would pick it and split `rounded` off its low end. Any
 * doubt (x handed out unsplit, a FREE block before it, another split spot, max_split's
 * refusal) is a no: the caller releases x and takes the slow path. */
int vl_caching_parked_is_best_fit(const vl_caching *c, const vl_cpool *p, const vl_cblock *x, size_t rounded)
{
    if (x->size != rounded) return 0;
    /* The verdict of the last hit, where nothing in the bins it read has changed since:
     * the same block at the same place, the same neighbours (a neighbour becomes or stops
     * being FREE only through its pool's bins), so the same answer, without the descents.
     * The request's pool is fixed by `rounded`, which equals x's size. */
    const vl_cstream *st = p->stream;
    /* Under top=last the answer also depends on a hole next to x, which completed
     * retirements (reclaim >= 0) can open without touching the bins. */
    if (x == st->park.ok && p->bins.version == st->park.ok_version && x->seg->pool == st->park.ok_own &&
        st->park.ok_own->bins.version == st->park.ok_own_version && (!c->cfg.top_last || c->cfg.reclaim < 0))
        return 1;
    if (x->seg->pool != p) {
        /* With lend=1 the slow path takes from the stream's other pool only
         * when the request's own has no fit (cached_fit), so x may be its answer then
         * (a 2 MiB pair served from the small pool's free chunk); its verdict is kept
         * too, so a hit does not descend both pools' bins. */
        if (!c->cfg.lend || best_fit(p, rounded) != NULL) return 0; /* x: p's stream's (park.h) */
        p = x->seg->pool;
    }
    if (x->prev && x->prev->state == VL_CB_FREE) return 0; /* merged, the block would start there */
    const vl_cblock *next = x->next && x->next->state == VL_CB_FREE ? x->next : NULL;
    size_t merged = rounded + (next ? next->size : 0);
    const vl_cblock *best = best_fit(p, rounded);
    if (best && best == next) best = bins_successor(p, next->size, next->addr); /* gone once merged */
    if (best && (best->size < merged || (best->size == merged && best->addr < x->addr))) return 0;
    /* top=last: the merged block is the best fit; bordering a hole, find_fit passes over
     * it when a larger block follows (a no without asking whether that one could grow
     * less). One that borders none is kept: the blocks after it are no smaller. */
    if (c->cfg.top_last && borders_hole(next ? next->next : x->next) &&
        bins_successor(p, merged, x->addr) != NULL)
        return 0;
    if (!p->small && !c->cfg.expandable && !vl_caching_oversize_ok(merged, rounded, c->cfg.max_split)) return 0;
    if (!next) return 1; /* an exact fit: take() hands it out unsplit */
    return vl_caching_should_split(merged, rounded, p->small, x->seg->expandable, c->cfg.max_split) &&
           vl_caching_split_spot(c, x->seg, x->prev, next->next, x->addr, x->addr + merged, rounded, 0) == x->addr;
}
