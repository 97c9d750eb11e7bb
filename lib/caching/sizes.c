/* Size policy (see sizes.h). */
#include "caching/sizes.h"

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

static size_t floor_pow2(size_t x)
{
    return (size_t)1 << (63 - __builtin_clzll((unsigned long long)x));
}

size_t vl_caching_round_divisions(size_t size, unsigned divisions)
{
    if (size < VL_CACHING_MIN_BLOCK) return VL_CACHING_MIN_BLOCK;
    if (divisions > 1 && size > VL_CACHING_MIN_BLOCK && (size & (size - 1)) != 0) {
        size_t pow2 = floor_pow2(size);
        size_t step = pow2 / divisions;
        if (step == 0) step = 1;
        size = round_up(size, step);
    }
    return round_up(size, VL_CACHING_MIN_BLOCK);
}

size_t vl_caching_classic_segment_size(size_t rounded)
{
    if (vl_caching_is_small(rounded)) return VL_CACHING_SMALL_SEGMENT;
    if (rounded < VL_CACHING_MIN_LARGE_ALLOC) return VL_CACHING_LARGE_SEGMENT;
    return round_up(rounded, VL_CACHING_ROUND_LARGE);
}

int vl_caching_oversize_ok(size_t block_size, size_t rounded, size_t max_split)
{
    if (max_split == 0) return 1;
    if (rounded < max_split) return block_size < max_split;
    return block_size < rounded + VL_CACHING_LARGE_BUFFER;
}
