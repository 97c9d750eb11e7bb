/* segments=expandable: where a request that no cached block serves goes (expandable.h).
 * The placement maps the fewest bytes: a hole that extends a large free block, a hole
 * with free blocks either side (what reclaim leaves), or the smallest hole that holds
 * the request alone; a request that fits no hole of its pool's ranges opens a further
 * range. Bounded work: O(log n) per probe, never a walk of every hole. */
#include "caching/expandable.h"

/* How many of the pool's largest free blocks placement probes for a hole next to them. */
#define VL_FRONTIER_PROBES 8

/* Improves *best with the hole u: the vl_cplacement that maps the fewest bytes, at the
 * start of u (extending a FREE block before it), at its end (extending one after it),
 * or all of it (joining both). */
static void consider_hole(const vl_cblock *hole, size_t rounded, vl_cplacement *best)
{
    vl_cblock *u = (vl_cblock *)hole;
    const vl_csegment *s = u->seg;
    size_t before = u->prev && u->prev->state == VL_CB_FREE ? u->prev->size : 0;
    size_t after = u->next && u->next->state == VL_CB_FREE ? u->next->size : 0;
    uintptr_t end = u->addr + u->size;
    if (rounded > before && rounded - before <= u->size) {
        size_t need = chunk_ceil(s, u->addr + (rounded - before)) - u->addr;
        if (need < best->bytes) *best = (vl_cplacement){u, u->addr, need};
    }
    if (rounded > after && rounded - after <= u->size) {
        uintptr_t lo = chunk_floor(s, end - (rounded - after));
        if (end - lo < best->bytes) *best = (vl_cplacement){u, lo, end - lo};
    }
    if (before + u->size + after >= rounded && u->size < best->bytes) *best = (vl_cplacement){u, u->addr, u->size};
}

/* The best vl_cplacement among: the holes next to the pool's VL_FRONTIER_PROBES largest
 * free blocks (a hole extending a large free block maps the fewest bytes), the
 * VL_FRONTIER_PROBES largest holes no larger than the request (joined with FREE
 * neighbours), and the smallest hole that holds the request alone. O(log n) per probe. */
static void find_placement(const vl_cpool *p, size_t rounded, vl_cplacement *best)
{
    int probes = 0;
    for (int j = vl_bins_prev_nonempty(&p->bins, VL_BIN_COUNT); j >= 0 && probes < VL_FRONTIER_PROBES;
         j = vl_bins_prev_nonempty(&p->bins, (unsigned)j)) {
        for (vl_cblock *b = vl_bins_last(&p->bins, (unsigned)j); b && probes < VL_FRONTIER_PROBES;
             b = vl_bins_before(&p->bins, (unsigned)j, b->size, b->addr), probes++) {
            if (b->next && b->next->state == VL_CB_UNMAPPED) consider_hole(b->next, rounded, best);
            if (b->prev && b->prev->state == VL_CB_UNMAPPED) consider_hole(b->prev, rounded, best);
        }
    }
    /* The largest holes up to the request's size: with FREE blocks on both sides (what
     * reclaim leaves: the chunks it unmapped, a remainder either side) they are joined. */
    unsigned i = vl_bin_index(rounded);
    probes = 0;
    for (int j = vl_bins_prev_nonempty(p->holes, i + 1); j >= 0 && probes < VL_FRONTIER_PROBES;
         j = vl_bins_prev_nonempty(p->holes, (unsigned)j)) {
        for (vl_cblock *h = vl_bins_last(p->holes, (unsigned)j); h && probes < VL_FRONTIER_PROBES;
             h = vl_bins_before(p->holes, (unsigned)j, h->size, h->addr), probes++)
            consider_hole(h, rounded, best);
    }
    vl_cblock *h = vl_bins_fit_in_class(p->holes, i, rounded);
    if (!h) {
        int j = vl_bins_next_nonempty(p->holes, i);
        if (j >= 0) h = vl_bins_first(p->holes, (unsigned)j);
    }
    if (h) consider_hole(h, rounded, best);
}

/* A vl_cplacement for `rounded` in pool p, opening a further range when none fits; 0 with
 * *rc set when there is none. */
int vl_expandable_place(vl_caching *c, vl_cpool *p, size_t rounded, vl_cplacement *best, int *rc)
{
    *best = (vl_cplacement){NULL, 0, SIZE_MAX};
    if (p->holes) find_placement(p, rounded, best);
    if (!best->u) {
        vl_csegment *fresh = vl_expandable_open_range(c, p, rounded, rc);
        if (!fresh) return 0;
        consider_hole(fresh->first, rounded, best);
    }
    if (!best->u) {
        *rc = VL_DEV_OOM;
        return 0;
    }
    return 1;
}
