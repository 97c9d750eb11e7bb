# vramlab build. `make` builds every program into build/bin/, `make test` runs the
# tests, `make bench` runs the suite on a GPU box (or its simulated part without one;
# GPUS=all|0,1: the single-GPU suite once per GPU into results/<run-id>/gpu<N>/).
# Sources are found by folder, so adding a scenario, bench or test needs no edit here:
#   lib/**/*.c, lib/kernels/*.cu -> build/lib/libvramlab.a
#   scenarios/NAME.c, bench/NAME.c -> build/bin/NAME
#   tests/test_NAME.c              -> build/tests/test_NAME (cmocka)
# Areas with targets of their own (fuzzing, sanitizers, hyperfine, ...) keep them in mk/*.mk.
#
# Knobs: CUDA_ARCH=sm_90 (one architecture; default: the one of this machine's GPUs
# when nvidia-smi names one, else every one nvcc supports from Turing on, plus PTX;
# CUDA_ARCH=all: every one), VL_GIT_REV=<rev> (for a copy of the tree without .git),
# SAN=1 (host code under ASan+UBSan, in build-san/), V=1 (show the compiler command
# lines; the build is quiet otherwise), CC, NVCC.
# Builds run on every core unless -jN is given.

SHELL := /bin/bash
.DEFAULT_GOAL := all
NPROC := $(shell nproc 2>/dev/null || echo 2)
# Every core by default, at the top level only (a sub-make shares its parent's jobs);
# not with `clean` among the goals (clean and a build would race).
ifeq ($(MAKELEVEL)$(filter -j% --jobserver%,$(MAKEFLAGS))$(filter clean,$(MAKECMDGOALS)),0)
MAKEFLAGS += -j$(NPROC)
endif
# Quiet recipes: compiler lines only with V=1 (their warnings and errors always show).
Q := $(if $(filter 1,$(V)),,@)

# --- the command line's knobs --------------------------------------------------------
# Every variable the command line may set, each mk/*.mk adding its own: a misspelt one
# (QUIK=1) is an error naming the known ones (checked at the end of this file), not a
# silent full run. INTERNAL_VARS: what recipes pass to sub-makes.
KNOWN_VARS := CUDA_ARCH VL_GIT_REV SAN V CC NVCC CXX CUDA_HOME BUILD QUICK PEERS FULL FORCE RUN REPEAT GPUS ONLY
INTERNAL_VARS := SANFLAGS TORCH_DIR_FOUND
# On/off knobs: 1 is on; 0 or nothing is off (QUICK=0 is not quick); anything else is an error.
BOOL_VARS := QUICK PEERS FULL FORCE
$(foreach v,$(BOOL_VARS),$(if $(filter-out 0 1,$($(v))),$(error $(v)=$($(v)): use $(v)=1 or $(v)=0)))
$(foreach v,$(BOOL_VARS),$(eval override $(v) := $(filter 1,$($(v)))))
# RUN names one folder under results/ (scripts/bench.d/run-folder.sh's rule, which the
# scripts check too): checked here as well, so that no space or shell character reaches a recipe.
VL_ID_CHARS := a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z 0 1 2 3 4 5 6 7 8 9 . _ -
vl_strip = $(if $2,$(call vl_strip,$(subst $(firstword $2),,$1),$(wordlist 2,$(words $2),$2)),$1)
# make report RUN=reference/h200-quick, make plots RUN=torch-bench/<id>: a path under
# results/ as well (report writes nothing there; plots.sh refuses . and .. components).
VL_RUN_CHARS := $(VL_ID_CHARS) $(if $(filter report plots,$(MAKECMDGOALS)),/)
$(if $(RUN),$(if $(or $(filter-out 1,$(words $(RUN))),$(call vl_strip,$(RUN),$(VL_RUN_CHARS)),$(filter .%,$(RUN))),$(error RUN=$(RUN): a run id is one folder name of letters, digits and . _ - (not starting with a dot))))
# A variable's value as one single-quoted shell word: what the command line sets is data
# to a recipe (GPUS='0;x' is a bad GPU list, not a command).
vl_shq = '$(subst ','\'',$(1))'
.DELETE_ON_ERROR:
# Keep objects of programs and tests: they are intermediate files to make, and a second
# `make` would otherwise compile them again.
.SECONDARY:

NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),/usr/local/cuda/bin/nvcc)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif

ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD ?= build
SANFLAGS :=
endif

# --- GPU architectures -----------------------------------------------------------
# On a GPU box, its own architecture: a build for every one takes minutes (the fat binary
# of context_cost alone 158 CPU seconds) that make test and make bench would spend on
# code this machine never runs. Several kinds of GPU, or none: every architecture.
VL_GPU_ARCHS := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | grep -E '^[0-9]+$$' | sort -u)
CUDA_ARCH ?= $(if $(filter 1,$(words $(VL_GPU_ARCHS))),sm_$(VL_GPU_ARCHS),all)
ifeq ($(CUDA_ARCH),all)
# Every real architecture from Turing (sm_75) on that this nvcc knows, plus PTX for the newest.
NVCC_ARCHS := $(shell $(NVCC) --list-gpu-arch 2>/dev/null | sed -n 's/^compute_\([0-9]*\)$$/\1/p' | awk '$$1 >= 75' | sort -n)
ifeq ($(NVCC_ARCHS),)
NVCC_ARCHS := 75 80 86 89 90
endif
NVCC_PTX := $(lastword $(NVCC_ARCHS))
GENCODE := $(foreach a,$(NVCC_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) -gencode arch=compute_$(NVCC_PTX),code=compute_$(NVCC_PTX)
else
ARCH_NUM := $(patsubst sm_%,%,$(CUDA_ARCH))
GENCODE := -gencode arch=compute_$(ARCH_NUM),code=[sm_$(ARCH_NUM),compute_$(ARCH_NUM)]
endif

# --- flags ---------------------------------------------------------------------------
# Test framework: the system's cmocka, or one unpacked into .deps/ (GPU boxes without apt).
CMOCKA_PREFIX := $(firstword $(foreach d,/usr $(CURDIR)/.deps/usr,$(if $(wildcard $(d)/include/cmocka.h),$(d))))
CMOCKA_LIBDIR := $(firstword $(dir $(wildcard $(CMOCKA_PREFIX)/lib/x86_64-linux-gnu/libcmocka.so $(CMOCKA_PREFIX)/lib/libcmocka.so)))

CPPFLAGS := -Ilib -I$(BUILD)/gen -I$(CUDA_HOME)/include -D_GNU_SOURCE
# -fno-semantic-interposition: -fPIC code (the plugin's library) may inline and call its
# own functions directly; nothing interposes on them (the plugin exports only its ABI).
CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 \
          -Wno-missing-field-initializers \
          -fPIC -fno-semantic-interposition -pthread -MMD -MP $(SANFLAGS)
NVCCFLAGS := -O2 -std=c++17 -Xcompiler -fPIC,-Wall,-Wextra -Werror all-warnings \
             -Ilib -I$(BUILD)/gen $(GENCODE) -MMD -MP
LDFLAGS := -pthread $(SANFLAGS)
# A rule that compiles and links in one step (a source straight to a .so or program):
# its .d named after its output, which -MMD alone would not do.
ONE_STEP_DEPS = -MMD -MP -MT $@ -MF $@.d
# Static cudart: programs start (and exit 77 cleanly) on machines without a CUDA driver.
LDLIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lm -lstdc++

# --- sources -------------------------------------------------------------------------
LIB_C := $(sort $(wildcard lib/*.c lib/*/*.c))
LIB_CU := $(sort $(wildcard lib/kernels/*.cu))
LIB_OBJS := $(LIB_C:%.c=$(BUILD)/obj/%.o) $(LIB_CU:%.cu=$(BUILD)/obj/%.o)
LIB_A := $(BUILD)/lib/libvramlab.a

PROG_SRCS := $(sort $(wildcard scenarios/*.c bench/*.c))
PROGS := $(addprefix $(BUILD)/bin/,$(notdir $(PROG_SRCS:.c=)))
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TESTS := $(addprefix $(BUILD)/tests/,$(notdir $(TEST_SRCS:.c=)))
TEST_SUPPORT := $(sort $(wildcard tests/support/*.c))
TEST_SUPPORT_OBJS := $(TEST_SUPPORT:%.c=$(BUILD)/obj/%.o)

VERSION_H := $(BUILD)/gen/vl_version.h

.PHONY: all programs tests test test-heavy bench plots clean setup FORCE
all: programs

programs: $(PROGS)
tests: $(TESTS) programs

$(VERSION_H): FORCE
	@mkdir -p $(@D)
	@rev=$${VL_GIT_REV:-$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}; \
	 [ -n "$${VL_GIT_REV:-}" ] || git diff --quiet HEAD -- 2>/dev/null || rev="$$rev-dirty"; \
	 line="#define VL_GIT_REV \"$$rev\""; \
	 [ -f $@ ] && grep -qxF "$$line" $@ || echo "$$line" > $@

$(BUILD)/obj/lib/runinfo.o: $(VERSION_H)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# A program may add objects (a prerequisite of its own) and PROG_LDLIBS (a
# target-specific variable) in an mk/*.mk file.
$(BUILD)/bin/%: $(BUILD)/obj/scenarios/%.o $(LIB_A)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $(filter %.o,$^) $(LIB_A) $(PROG_LDLIBS) $(LDLIBS) -o $@

$(BUILD)/bin/%: $(BUILD)/obj/bench/%.o $(LIB_A)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $< $(LIB_A) $(LDLIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT_OBJS) $(LIB_A) | setup
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $< $(TEST_SUPPORT_OBJS) $(LIB_A) -L$(CMOCKA_LIBDIR) -Wl,-rpath,$(CMOCKA_LIBDIR) -lcmocka $(LDLIBS) -o $@

$(BUILD)/obj/tests/%.o: CPPFLAGS += $(if $(filter-out /usr,$(CMOCKA_PREFIX)),-isystem $(CMOCKA_PREFIX)/include) -Itests

# Installs what the tests need when it is missing (apt-get where it works).
setup:
	@scripts/setup-deps.sh

# The heavy suites are not part of `make test`; they run on their own (and in CI).
TEST_HEAVY_NOTE = make test-heavy ($(TEST_HEAVY_TARGETS)), make reliability-ci (sanitizers, valgrind, fuzzing), make proptest

test: setup
	@echo "make test: unit tests and $(words $(TEST_EXTRA_TARGETS)) script suites, $(NPROC) at a time; not included, run on their own: $(TEST_HEAVY_NOTE)"
	@$(MAKE) --no-print-directory tests
	@scripts/run-tests.sh $(BUILD) $(TEST_EXTRA_TARGETS)

# Suites too slow or too heavy for `make test` (they register in TEST_HEAVY_TARGETS).
test-heavy: setup
	@$(MAKE) --no-print-directory tests
	@scripts/run-tests.sh --targets-only $(BUILD) $(TEST_HEAVY_TARGETS)

# Tiers: QUICK=1 (a minute at most on an H100; PEERS=1 adds PyTorch's and RMM's
# allocators), the default (about 5 minutes), FULL=1 (everything: *.full.tsv too;
# with QUICK=1 each job short). RUN=<id> names the run (an existing one only with
# FORCE=1, which clears it first where bench.sh made it); ONLY=prog,prog; REPEAT=N; GPUS=all|0,1.
bench: programs
	@scripts/bench.sh $(if $(QUICK),--quick) $(if $(PEERS),--peers) $(if $(FULL),--full) $(if $(ONLY),--only $(call vl_shq,$(ONLY))) \
	  $(if $(RUN),--run-id $(call vl_shq,$(RUN))) $(if $(FORCE),--force) $(if $(REPEAT),--repeat $(call vl_shq,$(REPEAT))) \
	  $(if $(GPUS),--gpus $(call vl_shq,$(GPUS)))

plots:
	@scripts/plots.sh $(if $(RUN),$(call vl_shq,$(RUN)))

clean:
	rm -rf build build-san

-include $(wildcard mk/*.mk)

UNKNOWN_VARS := $(filter-out $(KNOWN_VARS) $(INTERNAL_VARS),$(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v))))
ifneq ($(UNKNOWN_VARS),)
$(error unknown variable $(UNKNOWN_VARS) on the command line; known: $(sort $(KNOWN_VARS)))
endif
# Header dependencies: every compile writes a .d beside its output (CFLAGS' -MMD -MP, or
# ONE_STEP_DEPS), in obj/, broken/ or next to a .so built straight from its source; all
# of them under $(BUILD) are read back, so a header's change rebuilds every object of it.
-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)
