# Benchmarks, whole-process timing and run comparison (issue 5). Included by the Makefile.
#
#   make hyperfine      whole-process wall time of the suite's programs per allocator
#                       (scripts/compare.d/hyperfine.sh): RUN=<run-id> (default: a new
#                       one), HYPERFINE_RUNS (5), HYPERFINE_ONLY=prog,prog (default all)
#   make test-compare   tests of scripts/compare on synthetic results folders (no GPU);
#                       registered in TEST_EXTRA_TARGETS for `make test`
#   make slow-alloc     $(BUILD)/lib/libslow_alloc.so: a plugin allocator (PyTorch ABI)
#                       with a fixed busy-wait per alloc, for testing scripts/compare
#   scripts/compare RUN_A RUN_B   (not a make target) compares two results folders

.PHONY: hyperfine test-compare slow-alloc

HYPERFINE_RUNS ?= 5
HYPERFINE_ONLY ?=

hyperfine: programs
	@scripts/compare.d/hyperfine.sh --runs $(HYPERFINE_RUNS) $(if $(RUN),--run-id $(RUN)) \
	  $(if $(HYPERFINE_ONLY),--only $(HYPERFINE_ONLY))

test-compare:
	@tests/compare/run.sh

TEST_EXTRA_TARGETS += test-compare

slow-alloc: $(BUILD)/lib/libslow_alloc.so

# The shared cudart: a plugin must use the same CUDA runtime instance rules as any
# library loaded into a process; it is found through the rpath.
$(BUILD)/lib/libslow_alloc.so: tests/plugins/slow_alloc.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(filter-out -MMD -MP,$(CFLAGS)) -shared $< -L$(CUDA_HOME)/lib64 -lcudart \
	  -Wl,-rpath,$(CUDA_HOME)/lib64 -o $@

tests: $(BUILD)/lib/libslow_alloc.so
