/* Segregated free lists (see bins.h). */
#include "caching/bins.h"

size_t vl_bins_largest(const vl_bins *b)
{
    if (!b->summary) return 0;
    unsigned w = 63 - (unsigned)__builtin_clzll(b->summary);
    unsigned i = w * 64 + 63 - (unsigned)__builtin_clzll(b->words[w]);
    return vl_bins_last(b, i)->size;
}
