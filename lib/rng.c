/* xoshiro256** seeded through splitmix64 (see rng.h). */
#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void vl_rng_seed(vl_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

uint64_t vl_rng_next(vl_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t vl_rng_below(vl_rng *r, uint64_t n)
{
    /* Lemire: multiply, reject the small biased zone. */
    unsigned __int128 m = (unsigned __int128)vl_rng_next(r) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = -n % n;
        while (low < threshold) {
            m = (unsigned __int128)vl_rng_next(r) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double vl_rng_unit(vl_rng *r) { return (double)(vl_rng_next(r) >> 11) * 0x1.0p-53; }

uint64_t vl_rng_log_uniform(vl_rng *r, uint64_t lo, uint64_t hi)
{
    if (lo < 1) lo = 1;
    if (hi <= lo) return lo;
    double x = exp(log((double)lo) + vl_rng_unit(r) * (log((double)hi + 1.0) - log((double)lo)));
    uint64_t v = (uint64_t)x;
    return v < lo ? lo : v > hi ? hi : v;
}
