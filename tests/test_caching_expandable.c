/* Expandable segments under the two loads the H200 runs exposed, reproduced on the
 * simulated device:
 *   - address space, not memory, running out: live blocks scattered over a pool's one
 *     device-sized range left no unmapped stretch for a large request although the
 *     memory was free ("OOM despite free"); a pool now opens a further range;
 *   - a multi-stream loop (scenarios/free_stall.c: allocate, kernel, free, 4 streams)
 *     that moved chunks between streams at every step, each unmap waiting for the GPU;
 *     reclaim is now stream-local and crosses streams only under memory pressure.
 * Every test ends with the invariant check and with the device holding nothing. */
#include "test_caching_helpers.h"

#include "rng.h"
#include "support/test_main.h"

/* A 64 MiB device with expandable segments whose memory stream 1 has left in holes:
 * 16 x 4 MiB fill it, so the pool's first range (as large as the device) is mapped end
 * to end; every other block is freed: 32 MiB free in 4 MiB holes. */
typedef struct holes {
    vl_device *d;
    vl_allocator *a;
    void *p[16]; /* stream 1's blocks, NULL where a hole is */
} holes;

static holes open_with_holes(void)
{
    holes h = {.d = sim_open("sim:capacity=64MiB")};
    h.a = caching_open(h.d, "caching:segments=expandable,chunk=2MiB,reclaim=0.008,lend=1,top=fit");
    for (int i = 0; i < 16; i++) {
        h.p[i] = vl_allocate(h.a, 4 * MiB, S(1));
        assert_non_null(h.p[i]);
    }
    for (int i = 0; i < 16; i += 2) {
        vl_deallocate(h.a, h.p[i], 4 * MiB, S(1));
        h.p[i] = NULL;
    }
    assert_consistent(h.a);
    return h;
}

/* Frees stream 1's blocks; the device must hold nothing afterwards. */
static void close_holes(holes *h)
{
    for (int i = 0; i < 16; i++)
        if (h->p[i]) vl_deallocate(h->a, h->p[i], 4 * MiB, S(1));
    close_all_returned(h->d, h->a);
}

/* The request is served at once: no OOM, and no flush-and-retry before it. */
static void *fits_without_retry(holes *h, size_t bytes, vl_stream s)
{
    void *p = vl_allocate(h->a, bytes, s);
    assert_non_null(p);
    vl_alloc_stats st = stats_of(h->a);
    assert_int_equal(st.ooms, 0);
    assert_int_equal(st.alloc_retries, 0);
    return p;
}

static void test_large_request_opens_a_further_range(void **state)
{
    (void)state;
    holes h = open_with_holes();
    /* 16 MiB fits no hole of the first range; free memory is 32 MiB. One range per pool
     * made this an OOM despite free memory, after a flush and a retry. */
    void *big = fits_without_retry(&h, 16 * MiB, S(1));
    assert_true(stats_of(h.a).reserved_bytes <= (int64_t)(64 * MiB));
    assert_consistent(h.a);
    vl_deallocate(h.a, big, 16 * MiB, S(1));
    close_holes(&h);
}

static void test_pressure_takes_other_streams_chunks_without_a_flush(void **state)
{
    (void)state;
    /* Stream 1 leaves 32 MiB free in holes; stream 2 asks for 24 MiB with the device full:
     * its mapping takes stream 1's free chunks (no OOM, no flush-and-retry). */
    holes h = open_with_holes();
    void *q = fits_without_retry(&h, 24 * MiB, S(2));
    assert_int_equal(stats_of(h.a).reserved_bytes, 64 * MiB); /* 32 live, 24 new, 2 holes still cached */
    vl_deallocate(h.a, q, 24 * MiB, S(2));
    close_holes(&h);
}

/* Random churn over the memory the allocator can reach, like fragmentation_churn's
 * random_churn (live bytes held near 90% of it, log-uniform sizes up to 1/32 of it): the
 * allocations that failed while the reach minus what is allocated could hold them (the
 * scenario's "OOM despite free"). Frees what it holds at the end. */
static long churn_despite_free(vl_allocator *a, size_t reach)
{
    enum { SLOTS = 512 };
    void *ptr[SLOTS] = {0};
    size_t size[SLOTS] = {0}, live = 0;
    long despite_free = 0;
    vl_rng rng;
    vl_rng_seed(&rng, 42);
    for (int op = 0; op < 20000; op++) {
        size_t i = (size_t)vl_rng_below(&rng, SLOTS);
        if (ptr[i]) {
            vl_deallocate(a, ptr[i], size[i], S(1));
            ptr[i] = NULL;
            live -= size[i];
            continue;
        }
        size_t bytes = (size_t)vl_rng_log_uniform(&rng, 4 * KiB, reach / 32);
        if (live + bytes > reach / 10 * 9) continue;
        ptr[i] = vl_allocate(a, bytes, S(1));
        if (ptr[i]) {
            size[i] = bytes;
            live += bytes;
            continue;
        }
        if (reach - (size_t)stats_of(a).allocated_bytes >= bytes) despite_free++;
    }
    print_message("churn over %zu MiB: %ld OOMs despite free memory, %lld OOMs in all\n", reach / MiB, despite_free,
                  (long long)stats_of(a).ooms);
    assert_consistent(a);
    for (size_t i = 0; i < SLOTS; i++)
        if (ptr[i]) vl_deallocate(a, ptr[i], size[i], S(1));
    return despite_free;
}

/* Churn over the whole device: one range per pool failed 445 of these here (568 with
 * the full-size scenario). */
static void test_churn_over_the_whole_device_fails_only_when_memory_is_short(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,chunk=2MiB,reclaim=0.008,lend=1,top=fit");
    assert_int_equal(churn_despite_free(a, 1024 * MiB), 0);
    close_all_returned(d, a);
}

/* A device of capacity bytes whose first `held` bytes someone else holds (as
 * fragmentation_churn's ballast), with an expandable allocator on it. */
typedef struct shared_device {
    vl_device *d;
    vl_allocator *a;
    void *others;
    size_t held;
} shared_device;

static shared_device open_shared(const char *sim_spec, size_t held)
{
    shared_device sd = {.d = sim_open(sim_spec), .held = held};
    assert_int_equal(sd.d->ops->mem_alloc(sd.d, held, &sd.others), VL_DEV_OK);
    sd.a = caching_open(sd.d, "caching:segments=expandable,reclaim=0.008,lend=1,top=fit");
    return sd;
}

/* Closes the allocator, gives the others' memory back; the device must hold nothing. */
static void close_shared(shared_device *sd)
{
    vl_alloc_close(sd->a);
    assert_int_equal(sd->d->ops->mem_free(sd->d, sd->others, sd->held), VL_DEV_OK);
    close_all_returned(sd->d, caching_open(sd->d, "caching:segments=expandable,reclaim=0.008,lend=1,top=fit"));
}

/* Churn over the last GiB of a 4 GiB device whose other 3 GiB someone else holds (as
 * fragmentation_churn's ballast): spans allowed by the device's size alone (a quarter
 * of 4 GiB) covered the whole reach, partly used spans stranded memory, and 37 of the
 * full-size scenario's requests failed despite free memory (sim; 141 on an H200). */
static void test_churn_near_the_reach_with_others_memory_fails_only_when_short(void **state)
{
    (void)state;
    shared_device sd = open_shared("sim:capacity=4GiB", 3072 * MiB);
    assert_int_equal(churn_despite_free(sd.a, 1024 * MiB), 0);
    close_shared(&sd);
}

/* A request larger than the device's free memory but not than free plus what the
 * allocator caches: its range is mapped once, the cached memory given back on the way.
 * Mapped until the device refused, then unmapped and mapped again after the reclaim, such
 * requests near a full device cost thousands of calls (fragmentation_churn's bisection
 * of the largest allocation made 63,000 maps and as many unmaps in a quick run; 16,000
 * now); this one made 388 map calls for 195 mappings. */
/* refuse_release: the device refuses the first release of the kept memory (recorded):
 * the request still comes back, served by the unmap-and-retry path, and the allocator
 * stays consistent. */
static void serve_beyond_free_memory(int refuse_release)
{
    shared_device sd = open_shared("sim:capacity=1GiB", 512 * MiB);
    vl_device *d = sd.d;
    vl_allocator *a = sd.a;
    void *p[8];
    for (int i = 0; i < 8; i++) assert_non_null(p[i] = vl_allocate(a, 16 * MiB, S(1)));
    vl_deallocate(a, p[3], 16 * MiB, S(1)); /* 16 MiB cached between live blocks; 384 MiB free */
    size_t want = 390 * MiB; /* more than free, less than free + cached */
    if (refuse_release) vl_sim_fail_nth(d, VL_SIM_PHYS_RELEASE, 1);
    uint64_t maps = vl_sim_calls(d, VL_SIM_MAP);
    int64_t kept = stats_of(a).device_allocs;
    void *big = vl_allocate(a, want, S(1));
    print_message("%zu MiB with 384 MiB free and 16 MiB cached%s: %s, %llu map calls, %lld kept\n", want / MiB,
                  refuse_release ? ", release refused" : "", big ? "served" : "OOM",
                  (unsigned long long)(vl_sim_calls(d, VL_SIM_MAP) - maps), (long long)(stats_of(a).device_allocs - kept));
    if (!refuse_release) {
        assert_non_null(big);
        /* Every map call made a mapping the allocator keeps, but for one the device
         * refused (the memory kept for other sizes is then given back). */
        assert_true(vl_sim_calls(d, VL_SIM_MAP) - maps <= (uint64_t)(stats_of(a).device_allocs - kept) + 1);
    }
    assert_consistent(a);
    if (big) vl_deallocate(a, big, want, S(1));
    for (int i = 0; i < 8; i++)
        if (i != 3) vl_deallocate(a, p[i], 16 * MiB, S(1));
    close_shared(&sd);
}

static void test_request_beyond_free_memory_maps_its_range_once(void **state)
{
    (void)state;
    serve_beyond_free_memory(0);
}

static void test_request_beyond_free_memory_comes_back_when_a_release_is_refused(void **state)
{
    (void)state;
    serve_beyond_free_memory(1);
}

/* A request larger than the device's free memory plus what reclaim can give back (freed
 * blocks that share every chunk with a live one) but not than free plus all it caches
 * fails before any map: mapped chunk by chunk until the device refused, then unmapped,
 * it cost as many calls as free memory has chunks (fragmentation_churn's bisection near
 * a full device: most of the 63,000). The allocator stays usable after. */
static void test_request_beyond_what_can_be_freed_fails_before_any_map(void **state)
{
    (void)state;
    shared_device sd = open_shared("sim:capacity=1GiB", 512 * MiB);
    vl_device *d = sd.d;
    vl_allocator *a = sd.a;
    enum { N = 128 };
    const size_t piece = 3 * MiB / 2; /* freed ones leave no 2 MiB chunk whole */
    void *p[N];
    for (int i = 0; i < N; i++) assert_non_null(p[i] = vl_allocate(a, piece, S(1)));
    for (int i = 0; i < N; i += 2) vl_deallocate(a, p[i], piece, S(1)); /* 96 MiB cached; 320 MiB free */
    uint64_t maps = vl_sim_calls(d, VL_SIM_MAP);
    assert_null(vl_allocate(a, 360 * MiB, S(1)));
    print_message("360 MiB with 320 MiB free and 96 MiB cached in pieces: %llu map calls\n",
                  (unsigned long long)(vl_sim_calls(d, VL_SIM_MAP) - maps));
    assert_int_equal(vl_sim_calls(d, VL_SIM_MAP), maps);
    assert_consistent(a);
    void *fits = vl_allocate(a, 256 * MiB, S(1));
    assert_non_null(fits);
    vl_deallocate(a, fits, 256 * MiB, S(1));
    for (int i = 1; i < N; i += 2) vl_deallocate(a, p[i], piece, S(1));
    close_shared(&sd);
}

/* scenarios/free_stall.c's loop: each step allocates 4 buffers (log-uniform 64 KiB..
 * 16 MiB, 64 size sets drawn once) on stream i % 4, "launches a kernel" and frees
 * them. Once every stream has seen its sizes, a step must map and unmap nothing: each
 * unmap waits for its stream's queued kernel on a GPU. Moving chunks to whichever
 * stream allocates (global reclaim) did so at nearly every step. */
static void test_multi_stream_loop_maps_nothing_per_step(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,reclaim=0.008,lend=1,top=fit");
    vl_rng rng;
    vl_rng_seed(&rng, 42);
    size_t sizes[64][4];
    for (int i = 0; i < 64; i++)
        for (int b = 0; b < 4; b++) sizes[i][b] = (size_t)vl_rng_log_uniform(&rng, 64 * KiB, 16 * MiB);
    const int warm = 256, steps = 2000;
    vl_alloc_stats before = {0};
    for (int i = 0; i < warm + steps; i++) {
        if (i == warm) before = stats_of(a);
        void *p[4];
        for (int b = 0; b < 4; b++) {
            p[b] = vl_allocate(a, sizes[i % 64][b], S(1 + i % 4));
            assert_non_null(p[b]);
        }
        for (int b = 0; b < 4; b++) vl_deallocate(a, p[b], sizes[i % 64][b], S(1 + i % 4));
    }
    vl_alloc_stats after = stats_of(a);
    int64_t maps = after.device_allocs - before.device_allocs, unmaps = after.device_frees - before.device_frees;
    print_message("4-stream loop: %.3f maps and %.3f unmaps per step after warm-up; peak reserved / peak "
                  "allocated %.3f\n", (double)maps / steps, (double)unmaps / steps,
                  (double)after.peak_reserved_bytes / (double)after.peak_allocated_bytes);
    assert_int_equal(maps, 0);
    assert_int_equal(unmaps, 0);
    close_all_returned(d, a);
}

/* Where a split's remainder goes. After a trim, a FREE block [2, 3) MiB sits between the
 * unmapped hole [0, 2) and a live block at 3 MiB. A 512 KiB request split from it leaves
 * a 512 KiB remainder: split=low (as PyTorch) puts it after the request, stranded
 * against the live block; split=hole (the default) puts it before, next to the hole, where a
 * larger request can later extend it into the hole. Returns the request's offset. */
static size_t offset_of_split_request(const char *spec)
{
    vl_device *d = sim_open("sim:capacity=1GiB");
    vl_allocator *a = caching_open(d, spec);
    char *x = vl_allocate(a, 3 * MiB, S(1));
    char *y = vl_allocate(a, 4 * MiB, S(1));
    assert_non_null(x);
    assert_ptr_equal(y, x + 3 * MiB); /* [x 0-3][y 3-7][free 7-8] */
    vl_deallocate(a, x, 0, S(1));
    vl_trim(a); /* unmaps the whole chunk [0, 2); [2, 3) stays FREE */
    assert_false(vl_sim_is_mapped(d, x));
    char *z = vl_allocate(a, 512 * KiB, S(1));
    assert_non_null(z);
    assert_consistent(a);
    size_t off = (size_t)(z - x);
    vl_deallocate(a, z, 0, S(1));
    vl_deallocate(a, y, 0, S(1));
    close_all_returned(d, a);
    return off;
}

static void test_split_remainder_goes_next_to_the_hole(void **state)
{
    (void)state;
    assert_int_equal(offset_of_split_request("caching:segments=expandable,split=low,span=0,reclaim=0.008,lend=1,top=fit"), 2 * MiB);
    assert_int_equal(offset_of_split_request("caching:segments=expandable,split=hole,span=0,reclaim=0.008,lend=1,top=fit"), 2 * MiB + 512 * KiB);
    assert_int_equal(offset_of_split_request("caching:segments=expandable,span=0,reclaim=0.008,lend=1,top=fit"), 2 * MiB + 512 * KiB);
}

/* Three blocks on stream 1, which a fresh range places one after the other. */
static void allocate_side_by_side(vl_allocator *a, size_t sx, size_t sy, size_t sz, char **x, char **y, char **z)
{
    *x = vl_allocate(a, sx, S(1));
    *y = vl_allocate(a, sy, S(1));
    *z = vl_allocate(a, sz, S(1));
    assert_non_null(*x);
    assert_ptr_equal(*y, *x + sx);
    assert_ptr_equal(*z, *x + sx + sy);
}

/* Live x, y, z side by side (sizes sx, sy, sz), then x or y freed (free_x): the offset
 * from x of a request of `request` bytes, which the cache serves (reserved unchanged). */
static size_t offset_of_cached_request(const char *spec, size_t sx, size_t sy, size_t sz, int free_x, size_t request)
{
    vl_device *d = sim_open("sim:capacity=1GiB");
    vl_allocator *a = caching_open(d, spec);
    char *x, *y, *z;
    allocate_side_by_side(a, sx, sy, sz, &x, &y, &z);
    char **freed = free_x ? &x : &y;
    vl_deallocate(a, *freed, 0, S(1));
    int64_t reserved = stats_of(a).reserved_bytes;
    char *w = vl_allocate(a, request, S(1));
    assert_non_null(w);
    assert_consistent(a);
    assert_int_equal(stats_of(a).reserved_bytes, reserved);
    size_t off = (size_t)(w - x);
    *freed = w;
    vl_deallocate(a, x, 0, S(1));
    vl_deallocate(a, y, 0, S(1));
    vl_deallocate(a, z, 0, S(1));
    close_all_returned(d, a);
    return off;
}

/* Where a request of whole chunks goes inside a cached block. Live a [0, 3) and c
 * [11, 13) MiB keep a FREE block [3, 11) between them. A 4 MiB request at the block's low
 * end, [3, 7), would touch the chunks [2, 8); on the chunk boundary at 4 MiB it touches
 * [4, 8) only, and freed later it leaves no partly used chunk. A request that is not a
 * whole number of chunks keeps the low end. Returns the request's offset from a. */
static size_t offset_in_cached_block(const char *spec, size_t request)
{
    return offset_of_cached_request(spec, 3 * MiB, 8 * MiB, 2 * MiB, 0, request);
}

static void test_whole_chunk_request_lands_on_chunk_boundaries(void **state)
{
    (void)state;
    assert_int_equal(offset_in_cached_block("caching:segments=expandable,reclaim=0.008,lend=1,top=fit", 4 * MiB), 4 * MiB);
    assert_int_equal(offset_in_cached_block("caching:segments=expandable,split=low,reclaim=0.008,lend=1,top=fit", 4 * MiB), 4 * MiB);
    assert_int_equal(offset_in_cached_block("caching:segments=expandable,reclaim=0.008,lend=1,top=fit", 3 * MiB + 512 * KiB), 3 * MiB);
}

/* The default places like PyTorch's expandable segments. x [0, 8), y [8, 10) and
 * z [10, 12.5) MiB map [0, 14): a free 1.5 MiB block at the top borders unmapped space.
 * With x freed, a 1.25 MiB request fits both free blocks: top=last (the default) passes
 * over the top one, as large as it could grow, and takes x's; top=fit takes the smaller
 * top block. Returns the request's offset from x. */
static size_t offset_beside_the_top(const char *spec)
{
    return offset_of_cached_request(spec, 8 * MiB, 2 * MiB, 2 * MiB + 512 * KiB, 1, MiB + 256 * KiB);
}

static void test_best_fit_takes_the_top_block_last(void **state)
{
    (void)state;
    assert_int_equal(offset_beside_the_top("caching:segments=expandable"), 0);
    assert_int_equal(offset_beside_the_top("caching:segments=expandable,park=0"), 0);
    assert_int_equal(offset_beside_the_top("caching:segments=expandable,top=fit"), 12 * MiB + 512 * KiB);
}

/* lend=0 (the default): the small pool's free chunk does not serve a large request; the
 * large pool maps its own. lend=1 takes the small pool's chunk. */
static void test_pools_lend_only_when_asked(void **state)
{
    (void)state;
    const char *specs[] = {"caching:segments=expandable", "caching:segments=expandable,lend=1"};
    for (int k = 0; k < 2; k++) {
        vl_device *d = sim_open("sim:capacity=1GiB");
        vl_allocator *a = caching_open(d, specs[k]);
        void *small[4];
        for (int i = 0; i < 4; i++) small[i] = vl_allocate(a, 512 * KiB, S(1));
        for (int i = 0; i < 4; i++) vl_deallocate(a, small[i], 0, S(1));
        int64_t before = stats_of(a).reserved_bytes;
        void *p = vl_allocate(a, 2 * MiB, S(1));
        assert_non_null(p);
        assert_consistent(a);
        if (k == 0) {
            assert_true(stats_of(a).reserved_bytes > before);
        } else {
            assert_ptr_equal(p, small[0]);
            assert_int_equal(stats_of(a).reserved_bytes, before);
        }
        vl_deallocate(a, p, 0, S(1));
        close_all_returned(d, a);
    }
}

/* Growth in spans (span=16MiB, spans.h): one map call for the chunks a request needs,
 * at most 16 MiB each, and a span is unmapped only whole. x = 7 MiB maps [0, 8) in one
 * call; y = 40 MiB extends x's free MiB: [8, 48) in three (16 + 16 + 8). With x freed,
 * trim keeps the span [0, 8), whose last MiB y holds (chunk by chunk it would unmap
 * [0, 6)); with y freed too, everything goes. */
static void test_growth_maps_spans_unmapped_whole(void **state)
{
    (void)state;
    vl_device *d = sim_open("sim:capacity=1GiB");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,span=16MiB,reclaim=0.008,lend=1,top=fit");
    char *x = vl_allocate(a, 7 * MiB, S(1));
    assert_non_null(x);
    assert_int_equal(stats_of(a).device_allocs, 1);
    assert_int_equal(vl_sim_mapped_bytes(d), 8 * MiB);
    char *y = vl_allocate(a, 40 * MiB, S(1));
    assert_ptr_equal(y, x + 7 * MiB);
    assert_int_equal(stats_of(a).device_allocs, 4);
    assert_int_equal(vl_sim_mapped_bytes(d), 48 * MiB);
    assert_consistent(a);
    vl_deallocate(a, x, 0, S(1));
    vl_trim(a);
    assert_int_equal(vl_sim_mapped_bytes(d), 48 * MiB);
    assert_consistent(a);
    vl_deallocate(a, y, 0, S(1));
    close_all_returned(d, a);
}

/* pack=1 (not the default since the zoo): when its stream goes idle, a range's holes are filled with the
 * chunks at its top. Live a, b, c of 4 MiB each; b freed and trimmed leaves a hole [4, 8); a and c
 * freed leave FREE [0, 4) and [8, 12), and the stream idle. Packed, they become one FREE
 * block [0, 8) (c's chunks lent to the hole), so an 8 MiB request lands at 0 with no
 * more memory mapped; unpacked, it extends c's block at 8 into fresh chunks, and a's
 * stay mapped up to the reclaim cap (12 MiB mapped for 8 live). Returns the
 * request's offset from a; *mapped gets the device's mapped bytes with it live. */
static size_t offset_after_idle(const char *spec, size_t *mapped)
{
    vl_device *d = sim_open("sim:capacity=1GiB");
    vl_allocator *a = caching_open(d, spec);
    char *x, *y, *z;
    allocate_side_by_side(a, 4 * MiB, 4 * MiB, 4 * MiB, &x, &y, &z);
    vl_deallocate(a, y, 0, S(1));
    vl_trim(a);
    assert_int_equal(vl_sim_mapped_bytes(d), 8 * MiB);
    vl_deallocate(a, x, 0, S(1));
    vl_deallocate(a, z, 0, S(1));
    assert_consistent(a);
    char *w = vl_allocate(a, 8 * MiB, S(1));
    assert_non_null(w);
    assert_consistent(a);
    *mapped = vl_sim_mapped_bytes(d);
    size_t off = (size_t)(w - x);
    vl_deallocate(a, w, 0, S(1));
    close_all_returned(d, a);
    return off;
}

static void test_idle_stream_packs_its_range(void **state)
{
    (void)state;
    size_t mapped;
    assert_int_equal(offset_after_idle("caching:segments=expandable,pack=1,span=0,reclaim=0.008,lend=1,top=fit", &mapped), 0);
    assert_int_equal(mapped, 8 * MiB);
    assert_int_equal(offset_after_idle("caching:segments=expandable,pack=0,span=0,reclaim=0.008,lend=1,top=fit", &mapped), 8 * MiB);
    assert_int_equal(mapped, 12 * MiB);
}

/* Two allocators on one device, as the plugin's paired mode runs them: A holds 55% of it
 * in 512 MiB blocks (a model's weights), then B asks for as much in one block (paired
 * mode's ballast on a model larger than half the GPU). B must say out of memory and map
 * nothing, and every byte of A's blocks must stay mapped. On an H200 this pair ended in
 * an illegal memory access instead of an out-of-memory error (SPEC b). */
static void ballast_beyond_free(const char *spec_b)
{
    vl_device *d = sim_open("sim:capacity=16GiB");
    vl_allocator *a = caching_open(d, "caching:segments=expandable,reclaim=0.008,lend=1,top=fit");
    vl_allocator *b = caching_open(d, spec_b);
    enum { N = 17 }; /* 17 x 512 MiB: 53% of 16 GiB */
    char *w[N];
    const size_t held = N * 512 * MiB;
    for (int i = 0; i < N; i++) assert_non_null(w[i] = vl_allocate(a, 512 * MiB, S(1)));
    size_t mapped = vl_sim_mapped_bytes(d);
    void *ballast = vl_allocate(b, held, S(1));
    print_message("%s: ballast of %zu MiB with %zu MiB mapped of 16384: %s; %zu MiB mapped after\n", spec_b,
                  held / MiB, mapped / MiB, ballast ? "served" : "OOM", vl_sim_mapped_bytes(d) / MiB);
    assert_null(ballast);
    assert_int_equal(vl_sim_mapped_bytes(d), mapped);
    for (int i = 0; i < N; i++)
        for (size_t off = 0; off < 512 * MiB; off += 2 * MiB) assert_true(vl_sim_is_mapped(d, w[i] + off));
    assert_consistent(a);
    assert_consistent(b);
    /* what B can have, it gets, mapped whole */
    size_t fits = 16384 * MiB - mapped - 1024 * MiB;
    char *p = vl_allocate(b, fits, S(1));
    assert_non_null(p);
    for (size_t off = 0; off < fits; off += 2 * MiB) assert_true(vl_sim_is_mapped(d, p + off));
    assert_consistent(b);
    vl_deallocate(b, p, fits, S(1));
    for (int i = 0; i < N; i++) vl_deallocate(a, w[i], 512 * MiB, S(1));
    vl_alloc_close(b);
    close_all_returned(d, a);
}

static void test_second_allocator_beyond_free_memory_fails_cleanly(void **state)
{
    (void)state;
    ballast_beyond_free("caching:segments=expandable,reclaim=0.008,lend=1,top=fit");
    ballast_beyond_free("caching:segments=expandable,span=0,reclaim_max=0.008,reclaim=0.008,lend=1,top=fit");
}

VL_TEST_MAIN(cmocka_unit_test(test_large_request_opens_a_further_range),
             cmocka_unit_test(test_best_fit_takes_the_top_block_last), cmocka_unit_test(test_pools_lend_only_when_asked),
             cmocka_unit_test(test_second_allocator_beyond_free_memory_fails_cleanly),
             cmocka_unit_test(test_idle_stream_packs_its_range),
             cmocka_unit_test(test_growth_maps_spans_unmapped_whole),
             cmocka_unit_test(test_whole_chunk_request_lands_on_chunk_boundaries),
             cmocka_unit_test(test_split_remainder_goes_next_to_the_hole),
             cmocka_unit_test(test_pressure_takes_other_streams_chunks_without_a_flush),
             cmocka_unit_test(test_churn_over_the_whole_device_fails_only_when_memory_is_short),
             cmocka_unit_test(test_churn_near_the_reach_with_others_memory_fails_only_when_short),
             cmocka_unit_test(test_request_beyond_free_memory_maps_its_range_once),
             cmocka_unit_test(test_request_beyond_free_memory_comes_back_when_a_release_is_refused),
             cmocka_unit_test(test_request_beyond_what_can_be_freed_fails_before_any_map),
             cmocka_unit_test(test_multi_stream_loop_maps_nothing_per_step))
