/* The caching allocator's rules, one at a time, on the simulated device: rounding,
 * pools, splitting, coalescing, best fit, per-stream pools, record_use deferral and the
 * race without it, classic segment sizes, expandable mapping, trim, OOM retry and
 * report, statistics. Every test ends with the invariant check and with the device
 * holding nothing. */
#include "test_caching_helpers.h"

#include <unistd.h>

#include "caching/chunks.h"
#include "caching/sizes.h"
#include "support/test_main.h"

typedef struct fixture {
    vl_device *dev;
    vl_allocator *a;
} fixture;

static fixture open_both(const char *dev_spec, const char *alloc_spec)
{
    fixture f;
    f.dev = sim_open(dev_spec);
    f.a = caching_open(f.dev, alloc_spec);
    return f;
}

/* Trims, checks that every byte went back to the device, closes. */
static void close_both(fixture f)
{
    assert_consistent(f.a);
    vl_trim(f.a);
    assert_int_equal(stats_of(f.a).reserved_bytes, 0);
    assert_int_equal(vl_sim_used_bytes(f.dev), 0);
    vl_alloc_close(f.a);
    vl_device_close(f.dev);
}

static void test_rounding(void **state)
{
    (void)state;
    assert_int_equal(vl_caching_round_size(1, 0), 512);
    assert_int_equal(vl_caching_round_size(512, 0), 512);
    assert_int_equal(vl_caching_round_size(513, 0), 1024);
    assert_int_equal(vl_caching_round_size(3 * MiB + 1, 0), 3 * MiB + 512);
    /* Four divisions per power of two: 5 MiB + 1 lies in [4, 8) MiB, steps of 1 MiB. */
    assert_int_equal(vl_caching_round_size(5 * MiB + 1, 4), 6 * MiB);
    assert_int_equal(vl_caching_round_size(8 * MiB, 4), 8 * MiB);
    assert_int_equal(vl_caching_round_size(1100, 4), 1536); /* 1280, then to 512 B */
    assert_int_equal(vl_caching_round_size(1100, 1), 1536);
}

static void test_size_rules(void **state)
{
    (void)state;
    assert_true(vl_caching_is_small(MiB));
    assert_false(vl_caching_is_small(MiB + 512));
    assert_int_equal(vl_caching_classic_segment_size(512), 2 * MiB);
    assert_int_equal(vl_caching_classic_segment_size(MiB), 2 * MiB);
    assert_int_equal(vl_caching_classic_segment_size(MiB + 512), 20 * MiB);
    assert_int_equal(vl_caching_classic_segment_size(10 * MiB - 512), 20 * MiB);
    assert_int_equal(vl_caching_classic_segment_size(10 * MiB), 10 * MiB);
    assert_int_equal(vl_caching_classic_segment_size(11 * MiB + 512), 12 * MiB);
    /* Small pool and expandable: any remainder >= 512 B; classic large: > 1 MiB. */
    assert_true(vl_caching_should_split(2 * MiB, 2 * MiB - 512, 1, 0, 0));
    assert_false(vl_caching_should_split(2 * MiB, 2 * MiB, 1, 0, 0));
    assert_false(vl_caching_should_split(20 * MiB, 19 * MiB, 0, 0, 0));
    assert_true(vl_caching_should_split(20 * MiB, 19 * MiB - 512, 0, 0, 0));
    assert_true(vl_caching_should_split(20 * MiB, 20 * MiB - 512, 0, 1, 0));
    assert_false(vl_caching_should_split(64 * MiB, 8 * MiB, 0, 0, 8 * MiB)); /* at max_split */
    assert_true(vl_caching_oversize_ok(64 * MiB, 8 * MiB, 0));
    assert_false(vl_caching_oversize_ok(64 * MiB, 2 * MiB, 8 * MiB));
    assert_true(vl_caching_oversize_ok(64 * MiB, 50 * MiB, 8 * MiB));
    assert_false(vl_caching_oversize_ok(64 * MiB, 40 * MiB, 8 * MiB)); /* wastes >= 20 MiB */
}

static void test_chunk_geometry(void **state)
{
    (void)state;
    const size_t g = 2 * MiB, max = 32 * MiB;
    assert_int_equal(vl_chunk_max_for(g, 20 * MiB), 16 * MiB);
    assert_int_equal(vl_chunk_max_for(g, MiB), g);
    assert_int_equal(vl_chunk_at(g, max, 0), g);
    assert_int_equal(vl_chunk_at(g, max, 255 * MiB), g);       /* below 128 granules */
    assert_int_equal(vl_chunk_at(g, max, 256 * MiB), 2 * g);   /* [64g*2, 64g*4) */
    assert_int_equal(vl_chunk_at(g, max, 1024 * MiB), 8 * g);
    assert_int_equal(vl_chunk_at(g, max, 64ull << 30), max);   /* capped */
    /* Walking chunk by chunk from 0 lands on every boundary floor/ceil agree on, and a
     * chunk is never more than 1/64 of its offset once past the first ones. */
    size_t off = 0, chunks = 0;
    while (off < (8ull << 30)) {
        size_t c = vl_chunk_at(g, max, off);
        assert_int_equal(vl_chunk_floor(g, max, off), off);
        assert_int_equal(vl_chunk_ceil(g, max, off), off);
        assert_int_equal(vl_chunk_floor(g, max, off + c - 512), off);
        assert_int_equal(vl_chunk_ceil(g, max, off + 512), off + c);
        if (off >= 128 * g) assert_true(c * 64 <= off);
        off += c;
        chunks++;
    }
    assert_true(chunks < 128 + 64 * 4 + 8 * 32); /* 8 GiB in a few hundred map calls */
}

static void test_zero_and_null(void **state)
{
    (void)state;
    fixture f = open_both("sim", "caching");
    assert_null(vl_allocate(f.a, 0, NULL));
    vl_deallocate(f.a, NULL, 0, NULL);
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.ooms, 0);
    assert_int_equal(st.reserved_bytes, 0);
    close_both(f);
}

static void test_classic_segment_sizes(void **state)
{
    (void)state;
    fixture f = open_both("sim", "caching");
    void *small = vl_allocate(f.a, 1000, NULL);
    assert_int_equal(vl_sim_used_bytes(f.dev), 2 * MiB);
    assert_int_equal(vl_caching_block_size(f.a, small), 1024);
    void *mid = vl_allocate(f.a, 3 * MiB, NULL);
    assert_int_equal(vl_sim_used_bytes(f.dev), 22 * MiB);
    /* >= 10 MiB: its own segment rounded to 2 MiB (it does not fit the 17 MiB left). */
    void *big = vl_allocate(f.a, 21 * MiB + 1, NULL);
    assert_int_equal(vl_sim_used_bytes(f.dev), 44 * MiB);
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.segments, 3);
    assert_int_equal(st.device_allocs, 3);
    assert_int_equal(st.reserved_bytes, 44 * MiB);
    assert_int_equal(st.requested_bytes, 1000 + 3 * MiB + 21 * MiB + 1);
    /* The big block keeps its unsplittable tail (< 1 MiB) and counts it as allocated. */
    assert_int_equal(vl_caching_block_size(f.a, big), 22 * MiB);
    assert_int_equal(st.allocated_bytes, 1024 + 3 * MiB + 22 * MiB);
    vl_deallocate(f.a, small, 1000, NULL);
    vl_deallocate(f.a, mid, 3 * MiB, NULL);
    vl_deallocate(f.a, big, 21 * MiB + 1, NULL);
    close_both(f);
}

static void test_splitting(void **state)
{
    (void)state;
    fixture f = open_both("sim", "caching");
    /* A 2 MiB request gets a 20 MiB segment; the 18 MiB rest serves the next ones. */
    char *a = vl_allocate(f.a, 2 * MiB, NULL);
    char *b = vl_allocate(f.a, 2 * MiB, NULL);
    assert_ptr_equal(b, a + 2 * MiB);
    assert_int_equal(stats_of(f.a).segments, 1);
    assert_int_equal(stats_of(f.a).inactive_split_bytes, 16 * MiB);
    /* 16 MiB left; 15.5 MiB would leave 0.5 MiB: not split, the block takes all 16. */
    char *c = vl_allocate(f.a, 15 * MiB + 512 * KiB, NULL);
    assert_ptr_equal(c, b + 2 * MiB);
    assert_int_equal(vl_caching_block_size(f.a, c), 16 * MiB);
    assert_int_equal(stats_of(f.a).inactive_split_bytes, 0);
    vl_deallocate(f.a, a, 0, NULL);
    vl_deallocate(f.a, b, 0, NULL);
    vl_deallocate(f.a, c, 0, NULL);
    close_both(f);
}

static void test_coalescing(void **state)
{
    (void)state;
    /* park=0: the statistics right after each free (a parked block is not merged yet) */
    fixture f = open_both("sim", "caching:park=0");
    void *p[4];
    for (int i = 0; i < 4; i++) p[i] = vl_allocate(f.a, 512 * KiB, NULL);
    assert_int_equal(stats_of(f.a).segments, 1); /* 4 x 512 KiB = one 2 MiB small segment */
    vl_deallocate(f.a, p[0], 0, NULL);
    vl_deallocate(f.a, p[2], 0, NULL);
    assert_int_equal(stats_of(f.a).largest_free_block_bytes, 512 * KiB);
    vl_deallocate(f.a, p[1], 0, NULL); /* joins 0..2 */
    assert_int_equal(stats_of(f.a).largest_free_block_bytes, 3 * 512 * KiB);
    assert_consistent(f.a);
    vl_deallocate(f.a, p[3], 0, NULL); /* the whole segment is one free block again */
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.largest_free_block_bytes, 2 * MiB);
    assert_int_equal(st.inactive_split_bytes, 0);
    assert_int_equal(vl_trim(f.a), 2 * MiB);
    close_both(f);
}

static void test_best_fit(void **state)
{
    (void)state;
    fixture f = open_both("sim", "caching");
    /* Holes of 8 KiB and 4 KiB (in that address order) between live blocks. */
    void *hole8 = vl_allocate(f.a, 8 * KiB, NULL);
    void *keep1 = vl_allocate(f.a, 512, NULL);
    void *hole4 = vl_allocate(f.a, 4 * KiB, NULL);
    void *keep2 = vl_allocate(f.a, 512, NULL);
    vl_deallocate(f.a, hole8, 0, NULL);
    vl_deallocate(f.a, hole4, 0, NULL);
    void *p = vl_allocate(f.a, 4 * KiB, NULL);
    assert_ptr_equal(p, hole4);
    void *q = vl_allocate(f.a, 6 * KiB, NULL);
    assert_ptr_equal(q, hole8);
    vl_deallocate(f.a, p, 0, NULL);
    vl_deallocate(f.a, q, 0, NULL);
    vl_deallocate(f.a, keep1, 0, NULL);
    vl_deallocate(f.a, keep2, 0, NULL);
    close_both(f);
}

static void test_per_stream_pools(void **state)
{
    (void)state;
    fixture f = open_both("sim", "caching");
    void *p = vl_allocate(f.a, 4 * KiB, S(1));
    vl_deallocate(f.a, p, 0, S(1));
    void *q = vl_allocate(f.a, 4 * KiB, S(2));
    assert_ptr_not_equal(q, p); /* stream 2 never gets stream 1's cached block */
    assert_int_equal(stats_of(f.a).segments, 2);
    void *r = vl_allocate(f.a, 4 * KiB, S(1));
    assert_ptr_equal(r, p);
    /* The freeing stream does not matter: a block returns to its own stream's pool. */
    vl_deallocate(f.a, q, 0, S(1));
    void *t = vl_allocate(f.a, 4 * KiB, S(2));
    assert_ptr_equal(t, q);
    vl_deallocate(f.a, r, 0, NULL);
    vl_deallocate(f.a, t, 0, NULL);
    close_both(f);
}

static void test_record_use_defers_reuse(void **state)
{
    (void)state;
    fixture f = open_both("sim:events=manual", "caching");
    void *p = vl_allocate(f.a, 64 * KiB, S(1));
    assert_int_equal(vl_record_use(f.a, p, S(2)), VL_OK);
    assert_int_equal(vl_record_use(f.a, p, S(2)), VL_OK); /* once per stream */
    assert_int_equal(vl_record_use(f.a, p, S(1)), VL_OK); /* its own stream: nothing to do */
    vl_deallocate(f.a, p, 0, S(1));
    assert_int_equal(vl_sim_pending_events(f.dev), 1);
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.allocated_bytes, 0);
    assert_int_equal(st.active_bytes, 64 * KiB); /* still active until stream 2 is done */
    void *q = vl_allocate(f.a, 64 * KiB, S(1));
    assert_ptr_not_equal(q, p);
    assert_consistent(f.a);
    vl_sim_complete_stream(f.dev, S(2));
    void *r = vl_allocate(f.a, 64 * KiB, S(1));
    assert_ptr_equal(r, p);
    assert_int_equal(vl_sim_pending_events(f.dev), 0);
    vl_deallocate(f.a, q, 0, S(1));
    vl_deallocate(f.a, r, 0, S(1));
    close_both(f);
}

static void test_record_use_many_streams_and_trim_waits(void **state)
{
    (void)state;
    fixture f = open_both("sim:events=manual", "caching");
    void *p = vl_allocate(f.a, 8 * KiB, S(1));
    vl_record_use(f.a, p, S(2));
    vl_record_use(f.a, p, S(3));
    vl_deallocate(f.a, p, 0, S(1));
    assert_int_equal(vl_sim_pending_events(f.dev), 2);
    vl_sim_complete_stream(f.dev, S(2));
    void *q = vl_allocate(f.a, 8 * KiB, S(1));
    assert_ptr_not_equal(q, p); /* stream 3 still uses it */
    vl_deallocate(f.a, q, 0, S(1));
    /* trim waits for every deferred free (like empty_cache) and then gives all back. */
    assert_int_equal(vl_trim(f.a), 2 * MiB);
    assert_int_equal(vl_sim_pending_events(f.dev), 0);
    assert_int_equal(stats_of(f.a).active_bytes, 0);
    close_both(f);
}

static void test_race_without_record_use(void **state)
{
    (void)state;
    fixture f = open_both("sim:events=manual", "caching");
    /* Stream 2 still works on p (no record_use), yet stream 1 gets it back at once:
     * PyTorch's behaviour, which the async-free-race scenario depends on. */
    void *p = vl_allocate(f.a, 1 * MiB, S(1));
    vl_deallocate(f.a, p, 0, S(1));
    void *q = vl_allocate(f.a, 1 * MiB, S(1));
    assert_ptr_equal(q, p);
    assert_int_equal(vl_sim_pending_events(f.dev), 0);
    vl_deallocate(f.a, q, 0, S(1));
    close_both(f);
}

static void test_expandable_maps_on_demand(void **state)
{
    (void)state;
    fixture f = open_both("sim:granularity=2MiB", "caching:segments=expandable,chunk=2MiB,span=0,reclaim=0.008,lend=1,top=fit");
    char *a = vl_allocate(f.a, 3 * MiB, NULL);
    assert_int_equal(stats_of(f.a).reserved_bytes, 4 * MiB);
    assert_int_equal(vl_sim_used_bytes(f.dev), 4 * MiB);
    char *b = vl_allocate(f.a, 3 * MiB, NULL);
    assert_ptr_equal(b, a + 3 * MiB); /* the range grows in place: no per-segment waste */
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.reserved_bytes, 6 * MiB);
    assert_int_equal(st.segments, 3); /* three mapped 2 MiB chunks */
    assert_int_equal(vl_caching_block_size(f.a, b), 3 * MiB);
    /* Freeing a leaves [0, 3 MiB) free: trim unmaps the one whole chunk inside it. */
    vl_deallocate(f.a, a, 0, NULL);
    assert_int_equal(vl_trim(f.a), 2 * MiB);
    assert_int_equal(vl_sim_used_bytes(f.dev), 4 * MiB);
    assert_consistent(f.a);
    /* A request that fits the hole maps it again and reuses the same addresses. */
    char *c = vl_allocate(f.a, 3 * MiB, NULL);
    assert_ptr_equal(c, a);
    assert_int_equal(stats_of(f.a).reserved_bytes, 6 * MiB);
    vl_deallocate(f.a, b, 0, NULL);
    vl_deallocate(f.a, c, 0, NULL);
    close_both(f);
}

static void test_expandable_chunk_sizes_grow_with_offset(void **state)
{
    (void)state;
    /* 2 MiB granules; chunk=20MiB caps chunks at 16 MiB (a power-of-two multiple). */
    fixture f = open_both("sim", "caching:segments=expandable,chunk=20MiB,span=0,reclaim=0.008,lend=1,top=fit");
    void *first = vl_allocate(f.a, 3 * MiB, NULL);
    assert_int_equal(stats_of(f.a).reserved_bytes, 4 * MiB); /* two one-granule chunks */
    /* A small request takes the large range's free 1 MiB rather than map a granule of
     * its own pool: expandable pools lend each other free blocks. */
    void *small = vl_allocate(f.a, 4 * KiB, NULL);
    assert_int_equal(stats_of(f.a).reserved_bytes, 4 * MiB);
    /* Up to offset ~403 MiB: 2 MiB chunks below 256 MiB (128 of them), 4 MiB chunks in
     * [256, 512) MiB, so the range ends at 404 MiB after 128 + 37 map calls. */
    void *big = vl_allocate(f.a, 400 * MiB, NULL);
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.reserved_bytes, 404 * MiB);
    assert_int_equal(st.segments, 128 + 37);
    /* Far out the chunks are 16 MiB, yet the unused tail stays under 1/64. */
    void *huge = vl_allocate(f.a, 3 * 1024 * MiB + 1, NULL);
    st = stats_of(f.a);
    assert_true(st.reserved_bytes - st.allocated_bytes < st.reserved_bytes / 64);
    assert_true(st.segments < 128 + 64 * 4 + 200);
    assert_consistent(f.a);
    vl_deallocate(f.a, big, 0, NULL);
    vl_deallocate(f.a, first, 0, NULL);
    vl_deallocate(f.a, small, 0, NULL);
    vl_deallocate(f.a, huge, 0, NULL);
    close_both(f);
}

static void test_trim_keeps_live_segments(void **state)
{
    (void)state;
    fixture f = open_both("sim", "caching");
    void *live = vl_allocate(f.a, 4 * KiB, NULL);
    void *gone = vl_allocate(f.a, 4 * MiB, NULL);
    vl_deallocate(f.a, gone, 0, NULL);
    assert_int_equal(vl_trim(f.a), 20 * MiB);
    assert_int_equal(stats_of(f.a).reserved_bytes, 2 * MiB); /* the small segment stays */
    assert_int_equal(vl_trim(f.a), 0);
    vl_deallocate(f.a, live, 0, NULL);
    close_both(f);
}

static void test_oom_retry_and_report(void **state)
{
    (void)state;
    fixture f = open_both("sim:capacity=64MiB", "caching");
    void *p = vl_allocate(f.a, 30 * MiB, NULL);
    vl_deallocate(f.a, p, 0, NULL); /* 30 MiB stay cached */
    /* 40 MiB does not fit beside the cache: the allocator frees it and retries once. */
    void *q = vl_allocate(f.a, 40 * MiB, NULL);
    assert_non_null(q);
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.alloc_retries, 1);
    assert_int_equal(st.ooms, 0);
    assert_int_equal(st.device_frees, 1);
    /* Now nothing can make room: NULL, counted, reported, state intact. */
    void *r = vl_allocate(f.a, 40 * MiB, NULL);
    assert_null(r);
    st = stats_of(f.a);
    assert_int_equal(st.ooms, 1);
    assert_int_equal(st.alloc_retries, 2);
    assert_int_equal(st.allocated_bytes, 40 * MiB);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    f.a->backend->print_summary(f.a, out);
    fclose(out);
    assert_non_null(strstr(text, "out of memory: tried to allocate 40.0 MiB"));
    assert_non_null(strstr(text, "64.0 MiB total"));
    assert_non_null(strstr(text, "reserved but unallocated"));
    free(text);
    assert_consistent(f.a);
    /* Bigger than the device: NULL at once, in both segment modes. */
    assert_null(vl_allocate(f.a, 1ull << 40, NULL));
    assert_int_equal(stats_of(f.a).ooms, 2);
    vl_deallocate(f.a, q, 0, NULL);
    close_both(f);

    f = open_both("sim:capacity=64MiB", "caching:segments=expandable,reclaim=0.008,lend=1,top=fit");
    assert_null(vl_allocate(f.a, 65 * MiB, NULL));
    void *s = vl_allocate(f.a, 64 * MiB, NULL);
    assert_non_null(s); /* exactly the capacity: every chunk mapped */
    assert_null(vl_allocate(f.a, 512, NULL)); /* the small pool cannot map a granule */
    assert_int_equal(stats_of(f.a).ooms, 2);
    vl_deallocate(f.a, s, 0, NULL);
    close_both(f);
}

/* A request larger than the device is refused at once, without a device call: an
 * expandable range would otherwise map the whole device chunk by chunk first. */
static void test_request_beyond_device_refused_at_once(void **state)
{
    (void)state;
    const char *specs[] = {"caching", "caching:segments=expandable,reclaim=0.008,lend=1,top=fit"};
    for (int k = 0; k < 2; k++) {
        fixture f = open_both("sim:capacity=100TiB", specs[k]);
        assert_null(vl_allocate(f.a, (size_t)101 << 40, NULL));
        vl_alloc_stats st = stats_of(f.a);
        assert_int_equal(st.ooms, 1);
        assert_int_equal(st.device_allocs, 0);
        assert_int_equal(st.reserved_bytes, 0);
        void *p = vl_allocate(f.a, MiB, NULL); /* and stays usable */
        assert_non_null(p);
        vl_deallocate(f.a, p, 0, NULL);
        close_both(f);
    }
}

static void test_oom_report_on_stderr_when_asked(void **state)
{
    (void)state;
    fixture f = open_both("sim:capacity=16MiB", "caching:oom_report=1");
    /* Catch stderr in a temporary file for the one failing call. */
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(fileno(stderr));
    dup2(fileno(tmp), fileno(stderr));
    void *p = vl_allocate(f.a, 32 * MiB, NULL);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    assert_null(p);
    char text[2048] = "";
    rewind(tmp);
    size_t n = fread(text, 1, sizeof text - 1, tmp);
    text[n] = 0;
    fclose(tmp);
    assert_non_null(strstr(text, "caching: out of memory: tried to allocate 32.0 MiB"));
    assert_non_null(strstr(text, "16.0 MiB total"));
    close_both(f);
}

static void test_expandable_releases_cache_under_pressure(void **state)
{
    (void)state;
    /* Stream 1 caches 40 MiB; stream 2 needs 40 MiB: the retry unmaps stream 1's
     * (reclaim off: with it, the chunks would move before any OOM). */
    fixture f = open_both("sim:capacity=64MiB", "caching:segments=expandable,reclaim=-1,lend=1,top=fit");
    void *p = vl_allocate(f.a, 40 * MiB, S(1));
    vl_deallocate(f.a, p, 0, S(1));
    void *q = vl_allocate(f.a, 40 * MiB, S(2));
    assert_non_null(q);
    assert_int_equal(stats_of(f.a).alloc_retries, 1);
    assert_int_equal(stats_of(f.a).reserved_bytes, 40 * MiB);
    vl_deallocate(f.a, q, 0, S(2));
    close_both(f);
}

static void test_expandable_reclaim_moves_memory(void **state)
{
    (void)state;
    /* Within a stream: an 8 MiB hole is unmapped to back a 12 MiB request, so reserved
     * stays at the peak of allocated (reclaim=-1: the hole stays cached). */
    fixture f = open_both("sim", "caching:segments=expandable,chunk=2MiB,span=0,reclaim=0.008,lend=1,top=fit");
    void *a = vl_allocate(f.a, 8 * MiB, S(1)), *b = vl_allocate(f.a, 8 * MiB, S(1));
    vl_deallocate(f.a, a, 0, S(1));
    void *c = vl_allocate(f.a, 12 * MiB, S(1));
    assert_int_equal(stats_of(f.a).reserved_bytes, 20 * MiB);
    assert_int_equal(stats_of(f.a).device_frees, 4);
    vl_deallocate(f.a, b, 0, S(1));
    vl_deallocate(f.a, c, 0, S(1));
    close_both(f);

    /* Across streams only under memory pressure: every unmap waits for the owning
     * stream's queued work on a GPU, so with memory to spare stream 2 maps its own
     * (stream 1 keeps its cache, as in PyTorch) ... */
    f = open_both("sim", "caching:segments=expandable,chunk=2MiB,reclaim=0.008,lend=1,top=fit");
    vl_deallocate(f.a, vl_allocate(f.a, 40 * MiB, S(1)), 0, S(1));
    void *q = vl_allocate(f.a, 40 * MiB, S(2));
    assert_int_equal(stats_of(f.a).reserved_bytes, 80 * MiB);
    assert_int_equal(stats_of(f.a).device_frees, 0);
    vl_deallocate(f.a, q, 0, S(2));
    close_both(f);

    /* ... and when the device is full, its chunks move without an OOM, flush or retry. */
    f = open_both("sim:capacity=64MiB", "caching:segments=expandable,chunk=2MiB,reclaim=0.008,lend=1,top=fit");
    vl_deallocate(f.a, vl_allocate(f.a, 40 * MiB, S(1)), 0, S(1));
    q = vl_allocate(f.a, 40 * MiB, S(2));
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.reserved_bytes, 40 * MiB);
    assert_int_equal(st.device_frees, 20);
    assert_int_equal(st.alloc_retries, 0);
    vl_deallocate(f.a, q, 0, S(2));
    close_both(f);

    f = open_both("sim", "caching:segments=expandable,reclaim=-1,chunk=2MiB,lend=1,top=fit");
    a = vl_allocate(f.a, 8 * MiB, S(1));
    b = vl_allocate(f.a, 8 * MiB, S(1));
    vl_deallocate(f.a, a, 0, S(1));
    c = vl_allocate(f.a, 12 * MiB, S(1));
    assert_int_equal(stats_of(f.a).reserved_bytes, 28 * MiB);
    vl_deallocate(f.a, b, 0, S(1));
    vl_deallocate(f.a, c, 0, S(1));
    close_both(f);
}

static void test_max_split(void **state)
{
    (void)state;
    fixture f = open_both("sim", "caching:max_split=4MiB");
    void *big = vl_allocate(f.a, 8 * MiB, NULL);
    assert_int_equal(stats_of(f.a).reserved_bytes, 20 * MiB);
    assert_int_equal(vl_caching_block_size(f.a, big), 20 * MiB); /* oversize: never split */
    vl_deallocate(f.a, big, 0, NULL);
    /* A request under max_split never takes an oversize block. */
    void *p = vl_allocate(f.a, 2 * MiB, NULL);
    assert_int_equal(stats_of(f.a).reserved_bytes, 40 * MiB);
    /* One >= max_split may, when it wastes < 20 MiB. */
    void *q = vl_allocate(f.a, 6 * MiB, NULL);
    assert_int_equal(stats_of(f.a).reserved_bytes, 40 * MiB);
    vl_deallocate(f.a, p, 0, NULL);
    vl_deallocate(f.a, q, 0, NULL);
    close_both(f);
}

/* max_split with no window on the fit: the best fit is found however many oversize
 * blocks share its size class (here four 1054 MiB blocks, freed after the 1 GiB one,
 * in the same class as 1 GiB). */
static void test_max_split_best_fit_beyond_a_window(void **state)
{
    (void)state;
    fixture f = open_both("sim:capacity=141GiB", "caching:max_split=100MiB");
    void *p[5];
    p[0] = vl_allocate(f.a, 1024 * MiB, NULL);
    for (int i = 1; i < 5; i++) p[i] = vl_allocate(f.a, 1054 * MiB, NULL);
    for (int i = 0; i < 5; i++) vl_deallocate(f.a, p[i], 0, NULL);
    void *q = vl_allocate(f.a, 1024 * MiB, NULL);
    assert_non_null(q);
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.device_allocs, 5);
    assert_int_equal(st.reserved_bytes, (1024 + 4 * 1054) * MiB);
    assert_int_equal(vl_caching_block_size(f.a, q), 1024 * MiB);
    vl_deallocate(f.a, q, 0, NULL);
    close_both(f);
}

static void test_gc_threshold(void **state)
{
    (void)state;
    fixture f = open_both("sim:capacity=100MiB", "caching:gc=0.5");
    for (int s = 1; s <= 2; s++) vl_deallocate(f.a, vl_allocate(f.a, 2 * MiB, S(s)), 0, S(s));
    assert_int_equal(stats_of(f.a).reserved_bytes, 40 * MiB);
    /* A third 20 MiB segment would pass 50 MiB: the oldest free one goes first. */
    void *p = vl_allocate(f.a, 2 * MiB, S(3));
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.reserved_bytes, 40 * MiB);
    assert_int_equal(st.device_frees, 1);
    assert_int_equal(st.alloc_retries, 0);
    /* Stream 1's segment was the one released: stream 2 reuses its cached block. */
    vl_deallocate(f.a, vl_allocate(f.a, 2 * MiB, S(2)), 0, S(2));
    assert_int_equal(stats_of(f.a).device_allocs, 3);
    vl_deallocate(f.a, p, 0, S(3));
    close_both(f);
}

static void test_stats_and_reset_peaks(void **state)
{
    (void)state;
    /* park=0: the statistics right after a free (a parked block is not merged yet) */
    fixture f = open_both("sim", "caching:park=0");
    void *p = vl_allocate(f.a, 1000, NULL);
    void *q = vl_allocate(f.a, 5 * MiB, NULL);
    vl_alloc_stats st = stats_of(f.a);
    assert_int_equal(st.allocs, 2);
    assert_int_equal(st.requested_bytes, 1000 + 5 * MiB);
    assert_int_equal(st.allocated_bytes, 1024 + 5 * MiB);
    assert_int_equal(st.active_bytes, st.allocated_bytes);
    assert_int_equal(st.reserved_bytes, 22 * MiB);
    assert_int_equal(st.inactive_split_bytes, 22 * MiB - st.allocated_bytes);
    vl_deallocate(f.a, q, 0, NULL);
    st = stats_of(f.a);
    assert_int_equal(st.frees, 1);
    assert_int_equal(st.allocated_bytes, 1024);
    assert_int_equal(st.peak_allocated_bytes, 1024 + 5 * MiB);
    assert_int_equal(st.peak_requested_bytes, 1000 + 5 * MiB);
    assert_int_equal(st.inactive_split_bytes, 2 * MiB - 1024); /* the 20 MiB one is whole again */
    assert_int_equal(st.largest_free_block_bytes, 20 * MiB);
    vl_alloc_reset_peaks(f.a);
    st = stats_of(f.a);
    assert_int_equal(st.peak_allocated_bytes, 1024);
    assert_int_equal(st.peak_reserved_bytes, 22 * MiB);
    assert_int_equal(st.peak_inactive_split_bytes, 2 * MiB - 1024);
    vl_deallocate(f.a, p, 0, NULL);
    close_both(f);
}

/* Resetting peak statistics leaves the per-stream peak that expandable reclaim caps
 * reserved against: a program that resets its peaks (every epoch, say) must not make
 * the allocator unmap and map its cache again. */
static void test_reset_peaks_keeps_reclaim_peak(void **state)
{
    (void)state;
    fixture f = open_both("sim", "caching:segments=expandable,chunk=2MiB,reclaim=0.008,lend=1,top=fit");
    vl_deallocate(f.a, vl_allocate(f.a, 100 * MiB, S(1)), 0, S(1)); /* the stream's peak: 100 MiB */
    vl_trim(f.a);
    void *p[10];
    for (int i = 0; i < 10; i++) p[i] = vl_allocate(f.a, 6 * MiB, S(1));
    for (int i = 0; i < 10; i += 2) vl_deallocate(f.a, p[i], 0, S(1)); /* five 6 MiB holes */
    vl_alloc_reset_peaks(f.a);
    assert_int_equal(stats_of(f.a).peak_allocated_bytes, 30 * MiB);
    int64_t unmaps = stats_of(f.a).device_frees;
    /* 10 MiB fits no hole: 10 MiB more are mapped, 70 MiB reserved, well under the
     * stream's peak of 100 MiB, so nothing is unmapped. */
    void *q = vl_allocate(f.a, 10 * MiB, S(1));
    assert_non_null(q);
    assert_int_equal(stats_of(f.a).device_frees, unmaps);
    assert_int_equal(stats_of(f.a).reserved_bytes, 70 * MiB);
    vl_deallocate(f.a, q, 0, S(1));
    for (int i = 1; i < 10; i += 2) vl_deallocate(f.a, p[i], 0, S(1));
    close_both(f);
}

static void test_bad_options(void **state)
{
    (void)state;
    char err[256];
    int status = 0;
    vl_device *plain = sim_open("sim:vmm=0");
    assert_null(vl_alloc_open("caching:roundup_div=3", plain, &status, err, sizeof err));
    assert_non_null(strstr(err, "roundup_div"));
    assert_null(vl_alloc_open("caching:gc=1.5", plain, &status, err, sizeof err));
    assert_non_null(strstr(err, "gc"));
    assert_int_equal(status, 2); /* usage errors, found when the allocator opens */
    assert_null(vl_alloc_open("caching:segments=expandable,reclaim=0.008,lend=1,top=fit", plain, &status, err, sizeof err));
    assert_non_null(strstr(err, "virtual memory"));
    assert_int_equal(status, 2);
    /* Options that cannot work on this device: usage errors too, not failures later. */
    vl_device *vmm = sim_open("sim:capacity=1GiB");
    assert_null(vl_alloc_open("caching:segments=expandable,chunk=1TiB,reclaim=0.008,lend=1,top=fit", vmm, &status, err, sizeof err));
    vl_device_close(vmm);
    assert_non_null(strstr(err, "chunk"));
    assert_int_equal(status, 2);
    assert_null(vl_alloc_open("caching:reclaim=nan", plain, &status, err, sizeof err));
    assert_int_equal(status, 2);
    vl_device *tiny = sim_open("sim:capacity=1GiB,granularity=2GiB");
    assert_null(vl_alloc_open("caching:segments=expandable,reclaim=0.008,lend=1,top=fit", tiny, &status, err, sizeof err));
    assert_int_equal(status, 2);
    vl_device_close(tiny);
    int dev_status = 0;
    assert_null(vl_device_open("sim:capacity=0", &dev_status, err, sizeof err));
    assert_int_equal(dev_status, 2);
    assert_null(vl_device_open("sim:fail_map=-1", &dev_status, err, sizeof err));
    assert_int_equal(dev_status, 2);
    assert_int_equal(vl_alloc_spec_check("caching:segments=sideways", err, sizeof err), -1);
    assert_int_equal(vl_alloc_spec_check("caching:expandable,roundup_div=4,max_split=64MiB,gc=0.8", err, sizeof err), 0);
    vl_allocator *a = caching_open(plain, "caching:roundup_div=4");
    vl_alloc_close(a);
    vl_device_close(plain);
}

/* The growth hook (caching.h): told of every growth with the largest free block the
 * request could have used, and of nothing a cached block served. Both segment modes;
 * the third growth is one despite free memory (8 MiB free, 16 MiB asked; sizes of their
 * own classic segments, >= 10 MiB). */
typedef struct growths {
    int n;
    vl_caching_growth g[8];
} growths;

static void record_growth(void *ctx, const vl_caching_growth *g)
{
    growths *gs = ctx;
    if (gs->n < 8) gs->g[gs->n] = *g;
    gs->n++;
}

static void growth_hook_in(const char *spec)
{
    vl_device *d = sim_open("sim:capacity=1GiB");
    vl_allocator *a = caching_open(d, spec);
    growths gs = {0};
    assert_int_equal(vl_caching_on_growth(a, record_growth, &gs), 0);
    void *x = vl_allocate(a, 12 * MiB, S(1)), *y = vl_allocate(a, 12 * MiB, S(1));
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(gs.n, 2);
    assert_int_equal(gs.g[0].request_bytes, 12 * MiB);
    assert_int_equal(gs.g[0].largest_free_bytes, 0);
    assert_int_equal(gs.g[0].reserved_bytes, 0);
    assert_true(gs.g[0].reserved_after_bytes >= (int64_t)(12 * MiB) && gs.g[0].map_calls >= 1);
    assert_int_equal(gs.g[1].allocated_bytes, 12 * MiB);
    vl_deallocate(a, x, 12 * MiB, S(1));
    void *w = vl_allocate(a, 4 * MiB, S(1)); /* served by x's block: no growth */
    assert_non_null(w);
    assert_int_equal(gs.n, 2);
    void *z = vl_allocate(a, 16 * MiB, S(1)); /* no free block of 16 MiB: grows despite 8 MiB free */
    assert_non_null(z);
    assert_int_equal(gs.n, 3);
    assert_int_equal(gs.g[2].request_bytes, 16 * MiB);
    assert_int_equal(gs.g[2].largest_free_bytes, 8 * MiB);
    assert_true(gs.g[2].free_bytes >= (int64_t)(8 * MiB));
    assert_int_equal(gs.g[2].allocated_bytes, 16 * MiB);
    assert_int_equal(gs.g[2].reserved_after_bytes, stats_of(a).reserved_bytes);
    assert_int_equal(vl_caching_on_growth(a, NULL, NULL), 0);
    void *v = vl_allocate(a, 64 * MiB, S(1)); /* grows, told to nobody */
    assert_non_null(v);
    assert_int_equal(gs.n, 3);
    void *ps[] = {y, z, w, v};
    size_t sizes[] = {12 * MiB, 16 * MiB, 4 * MiB, 64 * MiB};
    for (int i = 0; i < 4; i++) vl_deallocate(a, ps[i], sizes[i], S(1));
    assert_consistent(a);
    vl_alloc_close(a);
    vl_device_close(d);
}

static void test_growth_hook(void **state)
{
    (void)state;
    growth_hook_in("caching");
    growth_hook_in("caching:segments=expandable,reclaim=0.008,lend=1,top=fit");
    vl_allocator other = {.backend = &vl_backend_raw};
    assert_int_equal(vl_caching_on_growth(&other, record_growth, NULL), -1);
    assert_int_equal(vl_caching_on_growth(NULL, record_growth, NULL), -1);
}

VL_TEST_MAIN(cmocka_unit_test(test_rounding), cmocka_unit_test(test_size_rules),
             cmocka_unit_test(test_chunk_geometry), cmocka_unit_test(test_zero_and_null),
             cmocka_unit_test(test_classic_segment_sizes), cmocka_unit_test(test_splitting),
             cmocka_unit_test(test_coalescing), cmocka_unit_test(test_best_fit),
             cmocka_unit_test(test_per_stream_pools), cmocka_unit_test(test_record_use_defers_reuse),
             cmocka_unit_test(test_record_use_many_streams_and_trim_waits),
             cmocka_unit_test(test_race_without_record_use), cmocka_unit_test(test_expandable_maps_on_demand),
             cmocka_unit_test(test_expandable_chunk_sizes_grow_with_offset),
             cmocka_unit_test(test_trim_keeps_live_segments), cmocka_unit_test(test_oom_retry_and_report),
             cmocka_unit_test(test_oom_report_on_stderr_when_asked),
             cmocka_unit_test(test_request_beyond_device_refused_at_once),
             cmocka_unit_test(test_expandable_releases_cache_under_pressure),
             cmocka_unit_test(test_expandable_reclaim_moves_memory), cmocka_unit_test(test_max_split),
             cmocka_unit_test(test_max_split_best_fit_beyond_a_window), cmocka_unit_test(test_gc_threshold),
             cmocka_unit_test(test_stats_and_reset_peaks), cmocka_unit_test(test_reset_peaks_keeps_reclaim_peak),
             cmocka_unit_test(test_bad_options), cmocka_unit_test(test_growth_hook))
