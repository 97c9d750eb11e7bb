# The caching allocator's own targets. Included by the Makefile.
#
#   make proptest   the property test at full length: PROPTEST_OPS random operations
#                   (default 10 million) for each seed in PROPTEST_SEEDS, with the
#                   per-step checks on every step and the full invariant walk every
#                   PROPTEST_CHECK_EVERY steps (1 = every step; ~25 us per step then).
#                   CI runs the same binary with 200k operations, full walk every step.

KNOWN_VARS += PROPTEST_OPS PROPTEST_SEEDS PROPTEST_CHECK_EVERY
.PHONY: proptest

PROPTEST_OPS ?= 10000000
PROPTEST_SEEDS ?= 1 2 3
PROPTEST_CHECK_EVERY ?= 16

proptest: $(BUILD)/tests/test_caching_property
	@for seed in $(PROPTEST_SEEDS); do \
	  echo "proptest: seed $$seed, $(PROPTEST_OPS) operations, full check every $(PROPTEST_CHECK_EVERY)"; \
	  VL_PROPTEST_OPS=$(PROPTEST_OPS) VL_PROPTEST_SEED=$$seed VL_PROPTEST_CHECK_EVERY=$(PROPTEST_CHECK_EVERY) \
	    $< || exit 1; \
	done

# scripts/replay-sweep (tuning expandable on one set of traces, confirming on another):
# its tests, part of make test (no GPU).
.PHONY: test-replay-sweep
test-replay-sweep: $(BUILD)/bin/replay
	@tests/replay_sweep/run.sh
TEST_EXTRA_TARGETS += test-replay-sweep

# scripts/park-cost (what parking buys and costs, on the simulated device): its tests.
.PHONY: test-park-cost
test-park-cost: $(BUILD)/bin/replay $(BUILD)/bin/alloc_latency
	@tests/park_cost/run.sh
TEST_EXTRA_TARGETS += test-park-cost

# The cache-hit pair's length in instructions (valgrind's callgrind, deterministic):
# tests/pair_length/run.sh, part of make test; a skip without valgrind or under SAN=1.
.PHONY: test-pair-length
$(BUILD)/tests/pair_loop: tests/pair_length/pair_loop.c $(LIB_A) | setup
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LIB_A) $(LDLIBS) -o $@
test-pair-length: $(BUILD)/tests/pair_loop
	@tests/pair_length/run.sh $(BUILD)/tests/pair_loop $(if $(filter 1,$(SAN)),san)
TEST_EXTRA_TARGETS += test-pair-length

# The caching tests run the allocator with its internal assertions on (lib/debug.h):
# lib/caching/*.c compiled again with -DVL_DEBUG under $(BUILD)/debug/, linked before the
# library, so the library's own copies (assertions compiled out) are never pulled in.
CACHING_DEBUG_OBJS := $(patsubst lib/caching/%.c,$(BUILD)/debug/caching/%.o,$(sort $(wildcard lib/caching/*.c)))
CACHING_TESTS := $(addprefix $(BUILD)/tests/,$(notdir $(basename $(wildcard tests/test_caching*.c))))

$(BUILD)/debug/caching/%.o: lib/caching/%.c | $(VERSION_H)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -DVL_DEBUG=1 -c $< -o $@

$(CACHING_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(CACHING_DEBUG_OBJS) $(TEST_SUPPORT_OBJS) $(LIB_A) | setup
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $< $(CACHING_DEBUG_OBJS) $(TEST_SUPPORT_OBJS) $(LIB_A) -L$(CMOCKA_LIBDIR) \
	  -Wl,-rpath,$(CMOCKA_LIBDIR) -lcmocka $(LDLIBS) -o $@
