/* Segregated free lists (see bins.h). */
#include "caching/bins.h"

size_t vl_bins_largest(const vl_bins *b)
{
    if (!b->summary) return 0;
    unsigned w = 63 - (unsigned)__builtin_clzll(b->summary);
    unsigned i = w * 64 + 63 - (unsigned)__builtin_clzll(b->words[w]);
    size_t largest = 0;
    for (const vl_cblock *blk = b->heads[i]; blk; blk = blk->bin_next)
        if (blk->size > largest) largest = blk->size;
    return largest;
}
