# Reliability targets: sanitizers, valgrind, fuzzing, the bad-input table and
# the GPU sanitizer pass. Included by the Makefile; every recipe here runs from the repo root.
#
#   make reliability-ci every CI step below (test-san, test-tsan, valgrind, fuzz-ci,
#                       bad-input on the plain and the sanitized build) at once, each under
#                       its time limit (.ci/run); names the failing ones, fails if any did
#   make test-san       make test SAN=1: every test and suite under ASan+UBSan+LSan (build-san/)
#   make test-tsan      the multi-threaded tests under ThreadSanitizer (build/tsan/)
#   make valgrind       memcheck over the host-only / simulated-device tests (build/)
#   make fuzz           every libFuzzer target for FUZZ_SECONDS (default 60) each (clang, build-fuzz/)
#   make fuzz-ci        replays tests/corpus/ (the regression inputs) and fuzzes ~10 s per target
#   make bad-input      tests/bad_input/table.tsv against every program in $(BUILD)/bin (SAN=1: build-san),
#                       then tests/bad_input/outputs.sh (-o at FIFOs, device nodes, sockets, inputs)
#   make test-outputs   outputs.sh alone, part of make test
#   make test-plots-hostile  every plot from results whose strings are shell and gnuplot
#                       code runs nothing (tests/plots_hostile/run.sh), part of make test
#   make sanitize-gpu   GPU box only: compute-sanitizer over the scenarios, leak and thread checks

KNOWN_VARS += FUZZ_CC FUZZ_SECONDS FUZZ_CI_SECONDS FUZZ_TARGETS VALGRIND GPU_SANITIZE_OUT
.PHONY: reliability-ci tsan-build test-san test-tsan valgrind fuzz fuzz-ci fuzz-build bad-input sanitize-gpu

reliability-ci:
	@VL_CI_NO_APT=1 .ci/run test-san test-tsan valgrind fuzz-ci bad-input bad-input-san

# --- sanitizers ----------------------------------------------------------------------
# Why these options:
#  - detect_leaks=1: LeakSanitizer on for every host test and program run;
#  - protect_shadow_gap=0: the CUDA driver maps memory where ASan keeps its shadow gap,
#    so CUDA under ASan needs it (a known requirement of ASan with CUDA; not yet run on
#    a GPU box here: tests/gpu_sanitize/session.sh step 4 does). Harmless without a GPU;
#  - no suppressions: the statically linked cudart gives no report on a machine without
#    a GPU (it fails to find libcuda.so.1 and allocates nothing it keeps), checked with
#    every test of `make test SAN=1` and every bad-input case; add one only with a stack
#    that shows third-party code alone.
VL_SAN_ENV := ASAN_OPTIONS=detect_leaks=1:protect_shadow_gap=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1 \
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# The test programs of build-san/ (`make test`'s script suites run the plain build's
# programs whatever SAN says, so they are not run a second time here).
# All of make test (the script suites too, which run the sanitized programs), not only
# the cmocka binaries.
test-san:
	@env $(VL_SAN_ENV) $(MAKE) --no-print-directory test SAN=1

# --- ThreadSanitizer -------------------------------------------------------------------
# The tests that run threads against one allocator, built into build/tsan/ (inside the
# ignored build/) with -fsanitize=thread instead of ASan (the two do not mix). One GPU
# architecture is enough there: the kernels are not what TSan looks at.
TSAN_TESTS := $(notdir $(basename $(wildcard tests/test_threads*.c tests/test_caching_property.c)))
tsan-build:
	@$(MAKE) --no-print-directory BUILD=build/tsan SAN= CUDA_ARCH=sm_90 \
	  SANFLAGS="-fsanitize=thread -fno-omit-frame-pointer" $(addprefix build/tsan/tests/,$(TSAN_TESTS))

# The property test runs a tenth of its operations here (20,000: under TSan the whole
# test ran past 420 s on a 2-core machine beside CI's other checks); TSan looks at its
# threads test, which keeps 4 threads on shared streams, at 1,250 operations each.
test-tsan: tsan-build
	@status=0; for t in $(TSAN_TESTS); do \
	  VL_PROPTEST_OPS=20000 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build/tsan/tests/$$t >build/tsan/$$t.log 2>&1 \
	    && echo "test-tsan $$t: ok" || { status=1; echo "test-tsan $$t: FAILED"; cat build/tsan/$$t.log; }; \
	done; exit $$status

# --- valgrind ------------------------------------------------------------------------
# Plain build (valgrind and ASan do not mix). Every test binary runs under memcheck;
# GPU tests skip themselves without a device, so this is the host-only / sim suite.
VALGRIND ?= valgrind
# --fair-sched=yes: valgrind runs one thread at a time, and by default a thread that
# loops without blocking gets the CPU straight back. test_threads_caching's trim thread
# (vl_trim in a loop, yielding after each round since) starved the workers waiting for
# the allocator's spinlock, and the test ran into the timeout on CI.
VALGRIND_FLAGS := --tool=memcheck --fair-sched=yes --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect \
                  --errors-for-leak-kinds=definite,indirect --track-origins=yes --num-callers=30 \
                  --suppressions=$(CURDIR)/tests/valgrind/vramlab.supp

valgrind:
	@$(MAKE) --no-print-directory tests SAN=
	@tests/valgrind/run.sh build "$(VALGRIND) $(VALGRIND_FLAGS)"

# --- fuzzing -------------------------------------------------------------------------
# libFuzzer targets are tests/fuzz/fuzz_NAME.c with seeds in tests/corpus/NAME/. They link
# every C source of the library compiled with clang (as objects), so that the real
# backend registry and option tables are fuzzed. CUDA runtime/driver calls (and the .cu kernel wrappers) are replaced by
# generated stubs that abort: a parser that reached the device would be reported, and
# cudart is never linked.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 10
FUZZ_DIR := build-fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CPPFLAGS := -Ilib -Itests/fuzz -I$(FUZZ_DIR)/gen -I$(CUDA_HOME)/include -D_GNU_SOURCE
FUZZ_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -pthread -MMD -MP $(FUZZ_SAN)
FUZZ_TARGET_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS := $(notdir $(FUZZ_TARGET_SRCS:.c=))
# Every other C file in tests/fuzz/ is a helper linked into each target (property checks).
FUZZ_HELPER_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(filter-out $(FUZZ_TARGET_SRCS),$(wildcard tests/fuzz/*.c)))
FUZZ_BINS := $(addprefix $(FUZZ_DIR)/bin/,$(FUZZ_TARGETS))
FUZZ_LIB_OBJS := $(LIB_C:%.c=$(FUZZ_DIR)/obj/%.o)

$(FUZZ_DIR)/gen/vl_version.h:
	@mkdir -p $(@D)
	@echo '#define VL_GIT_REV "fuzz"' > $@

# The library: warnings are not errors here (clang may warn where gcc does not; the
# gcc build with -Werror is the judge of the library's warnings).
$(FUZZ_DIR)/obj/lib/%.o: lib/%.c $(FUZZ_DIR)/gen/vl_version.h
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -Wno-missing-field-initializers -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/obj/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-missing-field-initializers \
	  -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/gen/device_stubs.c: $(FUZZ_LIB_OBJS) tests/fuzz/gen_stubs.sh
	@mkdir -p $(@D)
	$(Q)tests/fuzz/gen_stubs.sh $(FUZZ_LIB_OBJS) > $@

$(FUZZ_DIR)/obj/gen/device_stubs.o: $(FUZZ_DIR)/gen/device_stubs.c
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -w -c $< -o $@

$(FUZZ_DIR)/bin/%: $(FUZZ_DIR)/obj/tests/fuzz/%.o $(FUZZ_HELPER_OBJS) \
                   $(FUZZ_DIR)/obj/gen/device_stubs.o $(FUZZ_LIB_OBJS)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -ldl -lm -lrt -o $@

fuzz-build: $(FUZZ_BINS)

# Long run: a scratch corpus in build-fuzz/ grows; the seeds in tests/corpus/ stay as they are.
fuzz: fuzz-build
	@tests/fuzz/run.sh --seconds $(FUZZ_SECONDS) $(FUZZ_DIR) $(FUZZ_TARGETS)

# CI: every seed and regression input once, then a short exploration per target.
fuzz-ci: fuzz-build
	@tests/fuzz/run.sh --seconds $(FUZZ_CI_SECONDS) $(FUZZ_DIR) $(FUZZ_TARGETS)

# --- bad input -----------------------------------------------------------------------
# `make bad-input SAN=1` runs the table against the sanitized programs (build-san/).
bad-input: programs
	@tests/bad_input/selftest.sh
	@env $(VL_SAN_ENV) tests/bad_input/run.sh $(BUILD) tests/bad_input/table.tsv
	@env $(VL_SAN_ENV) tests/bad_input/outputs.sh $(BUILD)

# The output cases (FIFO, device node, socket, -o onto standard input's file) in make
# test too: they guard the machine, not only the program.
.PHONY: test-outputs
test-outputs: programs
	@tests/bad_input/outputs.sh $(BUILD)

TEST_EXTRA_TARGETS += test-outputs

# Every plots/*.gp on hostile strings, as plots.sh and the tools render them (~1 min;
# skipped without gnuplot).
.PHONY: test-plots-hostile
test-plots-hostile:
	@tests/plots_hostile/run.sh

TEST_EXTRA_TARGETS += test-plots-hostile

# --- GPU box -------------------------------------------------------------------------
# Builds the programs and the thread test, then runs tests/gpu_sanitize/run.sh, which
# writes its logs and a summary into GPU_SANITIZE_OUT (default build/sanitize-gpu).
GPU_SANITIZE_OUT ?= $(BUILD)/sanitize-gpu
sanitize-gpu: programs $(filter $(BUILD)/tests/test_threads%,$(TESTS))
	@tests/gpu_sanitize/run.sh $(BUILD) $(GPU_SANITIZE_OUT)

-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
