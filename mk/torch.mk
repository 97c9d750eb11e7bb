# PyTorch integration (needs a GPU box): the pluggable-allocator library, the C++
# speed comparison against PyTorch's own allocator, the GPU-box test that trains on
# both allocators, and the recording of PyTorch allocation traces.
#   make plugin          build/lib/libvramlab_caching.so (also part of `all`)
#   make torch-compare   build/bin/torch_alloc_compare (needs torch's C++ headers/libs)
#   make test-gpu-torch  training on vramlab's allocator == on PyTorch's (GPU + torch)
#   make test-torch-snapshot  scripts/torch-snapshot-to-csv on synthetic snapshots
#   build/tests/test_torch_plugin  the vl_alloc/vl_free entry points (part of `make tests`)
#   make torch-traces    records snapshot traces into results/traces/ (GPU + torch)
#   make torch-bench     live workloads per allocator: mk/torch_bench.mk

PLUGIN_SO := $(BUILD)/lib/libvramlab_caching.so
TORCH_COMPARE := $(BUILD)/bin/torch_alloc_compare

.PHONY: plugin torch-compare test-gpu-torch test-torch-snapshot torch-traces
all: plugin
plugin: $(PLUGIN_SO)
# The suite runs torch_alloc_compare as a peer's job (-peer in scripts/suite.d/torch.tsv),
# which the quick tier leaves out unless PEERS=1 (or FULL=1): only then is it built, as
# mk/peers.mk does for the peers (a compile against torch's headers where torch is here).
bench: $(if $(QUICK),$(if $(PEERS)$(FULL),torch-compare),torch-compare)
TEST_EXTRA_TARGETS += test-gpu-torch test-torch-snapshot

# Static cudart (LDLIBS), nothing exported but the C API: loaded into PyTorch, the
# library neither clashes with torch's libcudart nor needs a libcudart of its own.
$(PLUGIN_SO): $(BUILD)/obj/lib/torch/vramlab_caching.o $(LIB_A) lib/torch/exports.map
	@mkdir -p $(@D)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,libvramlab_caching.so -Wl,--version-script=lib/torch/exports.map \
	  -Wl,--exclude-libs,ALL $(if $(SAN),,-Wl,-z,defs) $< $(LIB_A) $(LDLIBS) -o $@

# SAN=1: the plugins carry ASan, whose runtime must come first in a process; python3
# has none of its own, so it is preloaded, without the leak check (python's allocations
# at exit are not the plugin's).
SAN_PRELOAD := $(if $(filter 1,$(SAN)),LD_PRELOAD=$(shell $(CC) -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0)

# torch's folder, found without importing torch (an import takes seconds).
TORCH_DIR = $(shell python3 -c 'import importlib.util as u,os; s=u.find_spec("torch"); print(os.path.dirname(s.origin) if s else "")' 2>/dev/null)
CXX ?= g++
ifeq ($(origin CXX),default)
CXX := g++
endif

torch-compare:
	@if [ -z "$(TORCH_DIR)" ] || [ ! -e "$(TORCH_DIR)/lib/libc10_cuda.so" ]; then \
	  echo "torch-compare: skipped: no torch with lib/libc10_cuda.so for python3"; \
	else $(MAKE) --no-print-directory $(TORCH_COMPARE) TORCH_DIR_FOUND="$(TORCH_DIR)"; fi

# One runtime in the process: the shared libcudart, the same one c10_cuda uses
# (a static one in the executable would interpose torch's calls).
$(TORCH_COMPARE): bench/torch/torch_alloc_compare.cpp $(LIB_A)
	@test -n "$(TORCH_DIR_FOUND)" || { echo "use: make torch-compare"; exit 2; }
	@mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -Wshadow -pthread $(ONE_STEP_DEPS) -D_GNU_SOURCE -Ilib -I$(BUILD)/gen \
	  -I$(CUDA_HOME)/include -isystem $(TORCH_DIR_FOUND)/include $< $(LIB_A) \
	  -L$(TORCH_DIR_FOUND)/lib -lc10_cuda -lc10 -L$(CUDA_HOME)/lib64 -lcudart -ldl -lrt -lm \
	  -Wl,-rpath,$(TORCH_DIR_FOUND)/lib -Wl,-rpath,$(CUDA_HOME)/lib64 -o $@

# The script exits 77 without torch or a GPU. make itself can only exit 0 or 2, so a
# skip is one last line "SKIP test-gpu-torch: <why>" and status 0.
test-gpu-torch: plugin
	@why=$$($(SAN_PRELOAD) tests/gpu/torch_training_equal.sh $(PLUGIN_SO) 2>&1); rc=$$?; echo "$$why"; \
	 if [ $$rc -eq 77 ]; then echo "SKIP test-gpu-torch: $$(echo "$$why" | tail -1)"; elif [ $$rc -ne 0 ]; then exit $$rc; fi

# The snapshot converter on synthetic snapshots: no torch, no GPU.
test-torch-snapshot:
	@python3 tests/torch/test_snapshot_to_csv.py

torch-traces:
	@python3 scripts/vl torch.record_traces --out results/traces

# The pluggable-allocator entry points under test, linked statically (the same code
# as the .so); run by `make test` with the other build/tests/test_* binaries.
TORCH_PLUGIN_TEST := $(BUILD)/tests/test_torch_plugin
tests: $(TORCH_PLUGIN_TEST)
$(TORCH_PLUGIN_TEST): $(BUILD)/obj/tests/gpu/test_torch_plugin.o $(LIB_A) | setup
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $< $(LIB_A) -L$(CMOCKA_LIBDIR) -Wl,-rpath,$(CMOCKA_LIBDIR) -lcmocka $(LDLIBS) -o $@

# The raising entry point (lib/torch/raise_on_oom.cpp): a C++ library beside the plugin,
# built only where a C++ compiler works (CI installs C only: then a visible skip).
#   make plugin-raise        build/lib/libvramlab_caching_raise.so
#   make test-plugin-raise   tests/plugins/raise_on_oom.cpp calls it as PyTorch does
PLUGIN_RAISE_SO := $(BUILD)/lib/libvramlab_caching_raise.so
PLUGIN_RAISE_TEST := $(BUILD)/tests/raise_on_oom
HASH := \#
CXX_WORKS = $(shell printf '$(HASH)include <string>\n' | $(CXX) -x c++ -std=c++17 -fsyntax-only - >/dev/null 2>&1 && echo yes)
.PHONY: plugin-raise test-plugin-raise
# built with the other tests (make test's first phase), so the suites below find it made
tests: $(if $(CXX_WORKS),$(PLUGIN_RAISE_TEST))
TEST_EXTRA_TARGETS += test-plugin-raise
plugin-raise: $(PLUGIN_RAISE_SO)
# SANFLAGS: under SAN=1 the library and its test carry ASan as the plugin does, so the
# test starts with the runtime first. mk/torch.mk: the flags are here, not in a .d file.
$(PLUGIN_RAISE_SO): lib/torch/raise_on_oom.cpp lib/torch/vramlab_caching.h $(PLUGIN_SO) mk/torch.mk
	@mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror $(SANFLAGS) $(ONE_STEP_DEPS) -fPIC -shared -Ilib -I$(CUDA_HOME)/include $< \
	  -L$(BUILD)/lib -l:libvramlab_caching.so -Wl,-rpath,'$$ORIGIN' -Wl,-z,defs -o $@
$(PLUGIN_RAISE_TEST): tests/plugins/raise_on_oom.cpp $(PLUGIN_RAISE_SO) mk/torch.mk
	@mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror $(SANFLAGS) $(ONE_STEP_DEPS) -Ilib -I$(CUDA_HOME)/include $< \
	  -L$(BUILD)/lib -l:libvramlab_caching_raise.so -l:libvramlab_caching.so -Wl,-rpath,$(abspath $(BUILD)/lib) -ldl -o $@
test-plugin-raise:
	@if [ "$(CXX_WORKS)" != yes ]; then echo "SKIP test-plugin-raise: no working C++ compiler ($(CXX))"; \
	 else $(MAKE) --no-print-directory $(PLUGIN_RAISE_TEST) || exit 1; \
	   out=$$($(PLUGIN_RAISE_TEST) $(PLUGIN_RAISE_SO) 2>&1); rc=$$?; echo "$$out"; \
	   if [ $$rc -eq 77 ]; then echo "SKIP test-plugin-raise: $$(echo "$$out" | tail -1)"; \
	   else p=$$(echo "$$out" | grep -c '^ok'); f=$$(echo "$$out" | grep -c '^FAIL'); \
	     [ $$rc -eq 0 ] || [ $$f -gt 0 ] || f=1; \
	     echo "test-plugin-raise: $$p passed, $$f failed, 0 skipped"; [ $$f -eq 0 ]; fi; fi
#   make test-gpu-torch-oom  PyTorch through it: an impossible request raises, the context lives on
TEST_EXTRA_TARGETS += test-gpu-torch-oom
.PHONY: test-gpu-torch-oom
test-gpu-torch-oom:
	@if [ "$(CXX_WORKS)" != yes ]; then echo "SKIP test-gpu-torch-oom: no working C++ compiler ($(CXX))"; \
	 else $(MAKE) --no-print-directory $(PLUGIN_RAISE_SO) || exit 1; \
	   out=$$($(SAN_PRELOAD) python3 tests/gpu/torch_oom_raises.py $(PLUGIN_RAISE_SO) 2>&1); rc=$$?; echo "$$out"; \
	   if [ $$rc -eq 77 ]; then echo "SKIP test-gpu-torch-oom: $$(echo "$$out" | tail -1)"; else exit $$rc; fi; fi
