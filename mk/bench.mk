# Benchmarks, whole-process timing and run comparison. Included by the Makefile.
#
#   make bench REPEAT=N the whole suite N times, separate processes, interleaved order:
#                       results/<run-id>/rep-<k>/ and summary.csv (Makefile, scripts/bench.sh)
#   make ab A='...' B='...' [PAIRS=10] [QUICK=1] [ONLY=prog,prog]
#                       an A/B experiment on this machine (scripts/ab): A and B alternate
#                       in a balanced order, then scripts/compare decides per metric.
#                       A and B are settings: alloc=SPEC env=NAME=VALUE build=DIR rev=REV
#                       Both A and B must be given (B='' is the suite as it is). make exits
#                       2 on any failure; the verdict is the last line, and scripts/ab's own
#                       status (0 no regression, 1 regression, 2 usage/vacuous) is in
#                       OUT/verdict.txt (run scripts/ab directly to get it as the status)
#   make noise [A='...'] [PAIRS=10] [QUICK=1] [ONLY=...]
#                       A/A calibration (scripts/ab --noise): the noise floor and the
#                       smallest detectable change per metric at PAIRS (noise.csv, noise.png)
#   make hyperfine      whole-process wall time of the suite's programs per allocator
#                       (scripts/compare.d/hyperfine.sh): RUN=<run-id> (default: a new
#                       one), HYPERFINE_RUNS (5), HYPERFINE_ONLY=prog,prog (default all),
#                       REPEAT=N (N interleaved rounds into rep-<k>/)
#   make test-hyperfine tests/hyperfine/run.sh: hyperfine.sh end to end on the simulated
#                       device (a labelled line timed, every line timed or left out with
#                       why, a bogus --only); skips without hyperfine; in TEST_EXTRA_TARGETS
#   make test-compare   tests of scripts/compare on synthetic results folders (no GPU);
#                       registered in TEST_EXTRA_TARGETS for `make test`
#   make slow-alloc     $(BUILD)/lib/libslow_alloc.so: a plugin allocator (PyTorch ABI)
#                       with a fixed busy-wait per alloc, for testing scripts/compare
#   scripts/compare RUN_A RUN_B   (not a make target) compares two results folders

KNOWN_VARS += A B PAIRS HYPERFINE_RUNS HYPERFINE_ONLY
.PHONY: hyperfine test-hyperfine test-compare slow-alloc ab noise

PAIRS ?= 10
AB_FLAGS = --pairs $(call vl_shq,$(PAIRS)) $(if $(QUICK),--quick) $(if $(ONLY),--only $(call vl_shq,$(ONLY)))

ab: programs
	@[ "$(origin A)" != undefined ] && [ "$(origin B)" != undefined ] || \
	  { echo "make ab: give both A='...' and B='...' (B='' is the suite as it is; settings: see scripts/ab)" >&2; exit 2; }
	@scripts/ab $(AB_FLAGS) $(call vl_shq,$(A)) $(call vl_shq,$(B))

noise: programs
	@scripts/ab --noise $(AB_FLAGS) $(call vl_shq,$(A))

HYPERFINE_RUNS ?= 5
HYPERFINE_ONLY ?=

hyperfine: programs
	@scripts/compare.d/hyperfine.sh --bin $(BUILD)/bin --runs $(call vl_shq,$(HYPERFINE_RUNS)) $(if $(RUN),--run-id $(call vl_shq,$(RUN))) \
	  $(if $(HYPERFINE_ONLY),--only $(call vl_shq,$(HYPERFINE_ONLY))) $(if $(REPEAT),--repeat $(call vl_shq,$(REPEAT)))

test-hyperfine: programs
	@tests/hyperfine/run.sh $(BUILD)

TEST_EXTRA_TARGETS += test-hyperfine

test-compare:
	@tests/compare/run.sh

TEST_EXTRA_TARGETS += test-compare

slow-alloc: $(BUILD)/lib/libslow_alloc.so

# The shared cudart: a plugin must use the same CUDA runtime instance rules as any
# library loaded into a process; it is found through the rpath.
$(BUILD)/lib/libslow_alloc.so: tests/plugins/slow_alloc.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(filter-out -MMD -MP,$(CFLAGS)) $(ONE_STEP_DEPS) -shared $< -L$(CUDA_HOME)/lib64 -lcudart \
	  -Wl,-rpath,$(CUDA_HOME)/lib64 -o $@

tests: $(BUILD)/lib/libslow_alloc.so
