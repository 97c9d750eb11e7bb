/* libFuzzer target for the caching allocator's policy (lib/caching) on the simulated
 * device: the fuzz input is a program of allocator operations (alloc, free,
 * record_use on another stream, trim, event completion) on a small device with manual
 * events, so that OOM-and-retry, splitting, merging, cross-stream deferral and both
 * segment kinds are reached in any order. As it goes:
 *   - vl_caching_check: every internal invariant (block tiling, bins, table, stats);
 *   - no two live blocks overlap (by their real block sizes), after every operation;
 * and at the end, with everything freed, events completed and the cache trimmed:
 * nothing allocated, nothing reserved, nothing left on the device.
 *
 * Input: byte 0 picks the configuration; then one operation per 3 bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "caching/caching.h"
#include "device.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOTS 32
#define NSTREAMS 4

static const char *const configs[][2] = {
    {"sim:capacity=64MiB,events=manual", "caching"},
    {"sim:capacity=64MiB,events=manual", "caching:segments=expandable"},
    {"sim:capacity=96MiB,events=manual", "caching:max_split=4MiB,roundup_div=4"},
    {"sim:capacity=64MiB,events=manual,granularity=64KiB", "caching:segments=expandable,chunk=1MiB"},
    {"sim:capacity=128MiB,events=manual", "caching:gc=0.5"},
    {"sim:capacity=64MiB,events=manual", "caching:segments=expandable,pack=1"}, /* low fits, idle streams packed */
    {"sim:capacity=64MiB,events=manual", "caching:park=0"},                     /* every free merged at once */
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

typedef struct slot {
    void *p;
    size_t size, block; /* asked for; the block's real size (fixed while allocated) */
    vl_stream s;
} slot;

static vl_stream stream_of(unsigned b) { return (vl_stream)(uintptr_t)(1 + b % NSTREAMS); }

/* The full invariant check walks every structure (~10 us, ~0.3 ms under ASan and
 * coverage): it runs after every 16th operation and at the end, the overlap check
 * after every one. */
static unsigned steps;

static void check_step(vl_allocator *a, const slot *slots, const char *what)
{
    char err[512];
    if (steps++ % 16 == 0 || strcmp(what, "final trim") == 0)
        VL_FUZZ_ASSERT(vl_caching_check(a, err, sizeof err) == 0, "after %s: %s", what, err);
    for (int i = 0; i < SLOTS; i++) {
        if (!slots[i].p) continue;
        uintptr_t lo = (uintptr_t)slots[i].p, hi = lo + slots[i].block;
        for (int j = 0; j < i; j++) {
            if (!slots[j].p) continue;
            uintptr_t lo2 = (uintptr_t)slots[j].p, hi2 = lo2 + slots[j].block;
            VL_FUZZ_ASSERT(hi <= lo2 || hi2 <= lo, "after %s: blocks [%#lx,%#lx) and [%#lx,%#lx) overlap", what,
                           (unsigned long)lo, (unsigned long)hi, (unsigned long)lo2, (unsigned long)hi2);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *const *cfg = configs[data[0] % NCONFIGS];
    int status = 0;
    char err[256];
    vl_device *dev = vl_device_open(cfg[0], &status, err, sizeof err);
    VL_FUZZ_ASSERT(dev, "opening %s: %s", cfg[0], err);
    vl_allocator *a = vl_alloc_open(cfg[1], dev, &status, err, sizeof err);
    VL_FUZZ_ASSERT(a, "opening %s: %s", cfg[1], err);

    slot slots[SLOTS];
    memset(slots, 0, sizeof slots);
    steps = 0;
    int64_t allocs = 0, ooms = 0;
    for (size_t at = 1; at + 3 <= size; at += 3) {
        unsigned op = data[at], x = data[at + 1], y = data[at + 2];
        slot *sl = &slots[x % SLOTS];
        switch (op % 8) {
        case 0: case 1: case 2: /* alloc: sizes from 1 B to ~32 MiB, small ones more often */
            if (sl->p) break;
            sl->size = ((size_t)y + 1) << (op / 8 % 18);
            sl->s = stream_of(x / SLOTS);
            sl->p = vl_allocate(a, sl->size, sl->s);
            allocs++;
            if (!sl->p) ooms++;
            sl->block = sl->p ? vl_caching_block_size(a, sl->p) : 0;
            VL_FUZZ_ASSERT(!sl->p || sl->block >= sl->size, "a block of %zu bytes for a request of %zu", sl->block,
                           sl->size);
            check_step(a, slots, "alloc");
            break;
        case 3: case 4: /* free on the stream it was allocated on */
            if (!sl->p) break;
            vl_deallocate(a, sl->p, sl->size, sl->s);
            sl->p = NULL;
            check_step(a, slots, "free");
            break;
        case 5: /* the block is used on another stream too (record_stream) */
            if (sl->p) vl_record_use(a, sl->p, stream_of(y));
            check_step(a, slots, "record_use");
            break;
        case 6: /* the work queued on a stream finishes */
            if (y % 5 == 4) vl_sim_complete_all(dev);
            else vl_sim_complete_stream(dev, stream_of(y));
            check_step(a, slots, "event completion");
            break;
        case 7:
            vl_trim(a);
            check_step(a, slots, "trim");
            break;
        }
    }

    /* Everything back: the allocator holds nothing, the device has nothing in use. */
    for (int i = 0; i < SLOTS; i++)
        if (slots[i].p) vl_deallocate(a, slots[i].p, slots[i].size, slots[i].s);
    vl_sim_complete_all(dev);
    vl_trim(a);
    memset(slots, 0, sizeof slots);
    check_step(a, slots, "final trim");
    vl_alloc_stats st;
    vl_alloc_stats_get(a, &st);
    VL_FUZZ_ASSERT(st.allocated_bytes == 0 && st.requested_bytes == 0, "allocated %lld, requested %lld at the end",
                   (long long)st.allocated_bytes, (long long)st.requested_bytes);
    VL_FUZZ_ASSERT(st.reserved_bytes == 0, "reserved %lld after freeing everything and trimming",
                   (long long)st.reserved_bytes);
    VL_FUZZ_ASSERT(st.allocs == allocs && st.ooms == ooms, "stats count %lld allocs / %lld OOMs, ran %lld / %lld",
                   (long long)st.allocs, (long long)st.ooms, (long long)allocs, (long long)ooms);
    vl_alloc_close(a);
    VL_FUZZ_ASSERT(vl_sim_used_bytes(dev) == 0, "%zu bytes still in use on the device after close",
                   vl_sim_used_bytes(dev));
    vl_device_close(dev);
    return 0;
}
