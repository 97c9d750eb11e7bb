/* The expandable allocator's idle gate (idle_gate=1, segments_expandable.c): spans and
 * reclaim-budget raises only where the stream is idle at a growth. On the simulated
 * device, events=immediate makes every stream idle (a trace replay: the host is what the
 * device waits for) and events=manual with nothing completed keeps the stream busy (the
 * host ahead of the GPU). Replayed: the first steps of a fixed-shape language model
 * (tests/fixtures/zoo/lm-fixed.trace, recorded live on an H100), whose free memory does
 * not fit its next large requests: the default budget rises there (the replay-sweep test
 * shows its later steps map nothing). Every event is completed after each operation, so
 * a busy stream's retired chunks are still unmapped; only the growth's own question sees
 * work queued. */
#include "test_caching_helpers.h"

#include "trace/trace.h"
#include "support/test_main.h"

#define FIXTURE "tests/fixtures/zoo/lm-fixed.trace"

typedef struct run {
    int64_t device_allocs; /* map calls over both passes */
    int64_t pass2_maps;    /* map calls of the second (warm) pass */
    double budget;         /* the reclaim budget at the end */
    int64_t peak_reserved, peak_allocated;
} run;

static void play_pass(vl_device *d, vl_allocator *a, const vl_trace *t, void **ptrs, int manual)
{
    for (size_t i = 0; i < t->nops; i++) {
        const vl_trace_op *op = &t->ops[i];
        if (op->kind == VL_TRACE_ALLOC) {
            ptrs[op->slot] = vl_allocate(a, op->size, S(1));
            assert_non_null(ptrs[op->slot]);
        } else if (ptrs[op->slot]) {
            vl_deallocate(a, ptrs[op->slot], op->size, S(1));
            ptrs[op->slot] = NULL;
        }
        if (manual) vl_sim_complete_all(d);
    }
    for (size_t i = 0; i < t->nops; i++) /* what the trace left live */
        if (t->ops[i].kind == VL_TRACE_ALLOC && ptrs[t->ops[i].slot]) {
            vl_deallocate(a, ptrs[t->ops[i].slot], t->ops[i].size, S(1));
            ptrs[t->ops[i].slot] = NULL;
        }
    if (manual) vl_sim_complete_all(d);
}

/* Two passes of the fixture on one stream under spec, on a device whose events are
 * "immediate" or "manual". */
static run replay_twice(const char *spec, const char *events)
{
    FILE *in = fopen(FIXTURE, "r");
    if (!in) fail_msg("cannot open %s (run the tests from the repository root)", FIXTURE);
    vl_trace t;
    vl_trace_options opt = {0};
    char err[256] = "", dev_spec[64];
    if (vl_trace_parse_file(in, &opt, &t, err, sizeof err) != 0) fail_msg("%s: %s", FIXTURE, err);
    fclose(in);
    snprintf(dev_spec, sizeof dev_spec, "sim:capacity=80GiB,events=%s", events);
    vl_device *d = sim_open(dev_spec);
    vl_allocator *a = caching_open(d, spec);
    int manual = !strcmp(events, "manual");
    void **ptrs = calloc(t.nallocs + 1, sizeof *ptrs);
    assert_non_null(ptrs);
    play_pass(d, a, &t, ptrs, manual);
    int64_t after_first = stats_of(a).device_allocs;
    play_pass(d, a, &t, ptrs, manual);
    vl_alloc_stats st = stats_of(a);
    run out = {st.device_allocs, st.device_allocs - after_first, vl_caching_reclaim_budget(a), st.peak_reserved_bytes,
               st.peak_allocated_bytes};
    assert_consistent(a);
    close_all_returned(d, a);
    free(ptrs);
    vl_trace_free(&t);
    return out;
}

static void test_idle_stream_changes_nothing(void **state)
{
    (void)state;
    run plain = replay_twice("caching:segments=expandable", "immediate");
    run gated = replay_twice("caching:segments=expandable,idle_gate=1", "immediate");
    assert_int_equal(gated.device_allocs, plain.device_allocs);
    assert_int_equal(gated.peak_reserved, plain.peak_reserved);
    assert_true(gated.budget == plain.budget);
    assert_true(plain.budget > 0.008); /* the fixture does raise the default's budget */
}

static void test_busy_stream_keeps_the_budget_and_maps_chunk_by_chunk(void **state)
{
    (void)state;
    run plain = replay_twice("caching:segments=expandable", "manual");
    run gated = replay_twice("caching:segments=expandable,idle_gate=1", "manual");
    run chunks = replay_twice("caching:segments=expandable,span=0,reclaim_max=0.008", "manual");
    /* without the gate a busy stream raises the budget as an idle one does */
    assert_true(plain.budget > 0.008);
    /* with it, relocating while the stream is busy raises nothing, and growth maps no
     * span: the decisions of one call per chunk at a fixed budget */
    assert_true(gated.budget == 0.008);
    assert_int_equal(gated.device_allocs, chunks.device_allocs);
    assert_int_equal(gated.peak_reserved, chunks.peak_reserved);
    /* the price the gate accepts where the GPU has work queued: the warm pass relocates */
    assert_true(gated.pass2_maps > 10 * (plain.pass2_maps + 1));
    assert_true((double)gated.peak_reserved <= 1.02 * (double)gated.peak_allocated);
}

VL_TEST_MAIN(cmocka_unit_test(test_idle_stream_changes_nothing),
             cmocka_unit_test(test_busy_stream_keeps_the_budget_and_maps_chunk_by_chunk))
