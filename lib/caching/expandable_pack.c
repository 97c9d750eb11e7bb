/* segments=expandable with pack=1: when a stream holds nothing, each of its small idle
 * ranges is laid out again as a cold pass would find it, its holes filled with the
 * chunks at its top, lent (release.c), so its mapped memory is one FREE block from the
 * range's start. It pays in a replay's warm passes, not in a live run's steady state,
 * which is why pack is off by default (lib/caching/README.md). */
#include "caching/expandable.h"

/* The highest FREE block of range s, above which there are only holes and chunks
 * retired by consolidate_range, or NULL. */
static vl_cblock *top_free(const vl_csegment *s)
{
    vl_cblock *b = s->first;
    while (b->next) b = b->next;
    while (b && (b->state == VL_CB_UNMAPPED || b->state == VL_CB_RETIRING)) b = b->prev;
    return b && b->state == VL_CB_FREE ? b : NULL;
}

/* The most blocks a range may have for consolidate_range to lay it out again: idle
 * moments can come at every free, so their work stays bounded (an idle range is FREE
 * blocks between holes). Small idle layouts (a few holes) are packed; ranges with many
 * holes are left as they are, since re-laying those maps more chunks than packing
 * saves (docs/caching-measured.md). */
#define VL_CONSOLIDATE_BLOCKS 33

/* Fills the holes of range s below its top with the top's own chunks, lowest first, so
 * its mapped memory becomes one FREE block from the range's start (only when nothing in
 * s is in use: FREE and UNMAPPED blocks only). Each hole is mapped with the memory of
 * the chunks retired for it (lent, release.c), so reserved does not grow. Stops where
 * the top cannot fill the next hole, or at a failure: the layout is then only partly
 * consolidated, which is harmless. */
static void consolidate_range(vl_caching *c, vl_csegment *s)
{
    /* Only where every chunk is one granule and one span (the default): then the top's
     * chunks fit any hole, each is lent whole, and kept memory stays in granules. With
     * chunks growing with the offset the top's are larger than a low hole's, so the
     * hole would take fresh memory instead. */
    if (s->chunk != s->granule || c->cfg.span >= 2 * s->chunk) return;
    int n = 0;
    for (vl_cblock *b = s->first; b; b = b->next)
        if ((b->state != VL_CB_FREE && b->state != VL_CB_UNMAPPED) || ++n > VL_CONSOLIDATE_BLOCKS) return;
    vl_cstream *st = s->pool->stream;
    for (vl_cblock *h = s->first; h && h->next; h = h->next) {
        if (h->state != VL_CB_UNMAPPED) continue;
        vl_cblock *top = top_free(s), *list = NULL, *right;
        size_t released = 0;
        if (!top || top->addr < h->addr || span_floor(s, top->addr + top->size) < span_ceil(s, top->addr) + h->size)
            return;
        if (!vl_expandable_retire_free_block(c, s, top, h->size, &released, &list, &right)) return;
        vl_cretire *batch = vl_release_queue(c, st, list);
        vl_clend lend = {batch, batch ? batch->blocks : NULL, batch ? batch->blocks->addr : 0};
        if (vl_expandable_map_range(c, s, h->addr, h->size, batch ? &lend : NULL) != VL_DEV_OK) return;
        unmapped_remove(s, h);
        h = vl_caching_release_block(c, h); /* FREE, merged with the FREE blocks beside it */
    }
}

void vl_expandable_idle(vl_caching *c, vl_cstream *st)
{
    if (c->retire_head) vl_release_process(c, 0);
    if (c->npending || c->retire_head) return; /* blocks still in use elsewhere: not now */
    for (int k = 0; k < 2; k++)
        for (vl_csegment *s = st->pools[k].ranges; s; s = s->pool_next) consolidate_range(c, s);
}
