# Peer shims: the small C++ libraries that put PyTorch's and RAPIDS RMM's allocators
# behind --alloc torch / --alloc rmm (lib/peers/, interface lib/peers/peer_abi.h).
# Programs load them with dlopen when the peer is named, so they are not part of `all`
# (`make bench` builds them) and nothing else links them. Each is built only where its peer is here:
#   make peers   build/lib/libvramlab_peer_torch.so  where python3 has torch with
#                                                    include/ and lib/libc10_cuda.so
#                build/lib/libvramlab_peer_rmm.so    where scripts/fetch-deps.sh has
#                                                    unpacked the librmm wheel into .deps/rmm
# A peer that is missing is one line saying so; `make peers` still succeeds.
#   make test-peer-tables  tests of scripts/peer-tables (part of make test; no GPU)

PEER_TORCH_SO := $(BUILD)/lib/libvramlab_peer_torch.so
PEER_RMM_SO := $(BUILD)/lib/libvramlab_peer_rmm.so
RMM_DEPS := $(CURDIR)/.deps/rmm
RMM_VERSION_FILE := $(RMM_DEPS)/librmm/VERSION

.PHONY: peers peer-torch peer-rmm
peers: peer-torch peer-rmm
# The suite runs the peers that are here (scripts/suite.d/peers.tsv); the others skip.
# The quick tier runs them only with PEERS=1 (or FULL=1), so builds them only then.
bench: $(if $(QUICK),$(if $(PEERS)$(FULL),peers),peers)

# TORCH_DIR: python3's torch folder, found as mk/torch.mk finds it.
peer-torch:
	@if [ -z "$(TORCH_DIR)" ] || [ ! -e "$(TORCH_DIR)/lib/libc10_cuda.so" ]; then \
	  echo "peer-torch: skipped: no torch with lib/libc10_cuda.so for python3"; \
	else $(MAKE) --no-print-directory $(PEER_TORCH_SO) TORCH_DIR_FOUND="$(TORCH_DIR)"; fi

peer-rmm:
	@if [ ! -f "$(RMM_VERSION_FILE)" ] || [ ! -d "$(RMM_DEPS)/rapids_logger/lib64" ]; then \
	  echo "peer-rmm: skipped: no RMM in .deps/rmm (run scripts/fetch-deps.sh)"; \
	else $(MAKE) --no-print-directory $(PEER_RMM_SO); fi

# Only the entry point is exported; c10 and its shared libcudart come from torch's lib/
# (found by rpath), so the allocator is the very one torch itself would use.
$(PEER_TORCH_SO): lib/peers/torch_shim.cpp lib/peers/peer_abi.h
	@test -n "$(TORCH_DIR_FOUND)" || { echo "use: make peers"; exit 2; }
	@mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -Wshadow -fPIC -fvisibility=hidden -shared -pthread $(ONE_STEP_DEPS) -Ilib \
	  -DTORCH_SHIM_VERSION='"$(shell sed -n "s/^__version__ = '\(.*\)'.*/\1/p" $(TORCH_DIR_FOUND)/version.py 2>/dev/null)"' \
	  -I$(CUDA_HOME)/include -isystem $(TORCH_DIR_FOUND)/include $< \
	  -L$(TORCH_DIR_FOUND)/lib -lc10_cuda -lc10 -Wl,-rpath,$(TORCH_DIR_FOUND)/lib -Wl,-z,defs -o $@

# RMM's wheel brings its headers, its own CCCL (include/rapids, ahead of the toolkit's)
# and librmm.so, which has the CUDA runtime inside; the shim's own CUDA calls (pool
# attributes) use a static runtime, hidden like the rest of its symbols.
PEER_RMM_OBJ := $(BUILD)/obj/lib/peers/rmm_shim.o
$(PEER_RMM_OBJ): lib/peers/rmm_shim.cpp lib/peers/peer_abi.h $(RMM_VERSION_FILE)
	@mkdir -p $(@D)
	$(Q)$(NVCC) -std=c++20 -x cu -O2 -Xcompiler -fPIC,-Wall,-Wextra,-fvisibility=hidden -Werror all-warnings $(GENCODE) -MMD -MP \
	  -DRMM_SHIM_VERSION='"$(shell cat $(RMM_VERSION_FILE))"' -Ilib -isystem $(RMM_DEPS)/librmm/include/rapids \
	  -isystem $(RMM_DEPS)/librmm/include -isystem $(RMM_DEPS)/rapids_logger/include -c $< -o $@

# rpath: the wheel's folders where they are now, and relative to the shim, so that a
# tree copied elsewhere with build/ and .deps/ still finds them.
$(PEER_RMM_SO): $(PEER_RMM_OBJ)
	@mkdir -p $(@D)
	$(Q)$(NVCC) -shared -Xlinker --exclude-libs,ALL -Xlinker -z,defs $< -o $@ \
	  -L$(RMM_DEPS)/librmm/lib64 -L$(RMM_DEPS)/rapids_logger/lib64 -lrmm -lrapids_logger -cudart static \
	  -Xlinker -rpath,'$$ORIGIN/../../.deps/rmm/librmm/lib64:$$ORIGIN/../../.deps/rmm/rapids_logger/lib64' \
	  -Xlinker -rpath,$(RMM_DEPS)/librmm/lib64:$(RMM_DEPS)/rapids_logger/lib64

# A stand-in shim under both peers' names, for build/tests/test_peers (no GPU, torch
# or RMM needed): the test points VL_PEER_DIR at build/tests/peers/.
FAKE_PEERS := $(BUILD)/tests/peers/libvramlab_peer_torch.so $(BUILD)/tests/peers/libvramlab_peer_rmm.so
tests: $(FAKE_PEERS)
$(FAKE_PEERS): tests/plugins/fake_peer.c lib/peers/peer_abi.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(filter-out -MMD -MP,$(CFLAGS)) $(ONE_STEP_DEPS) -shared $< -o $@

# scripts/peer-tables (the README's tables of vramlab against its peers) on a simulated
# repeated run and on synthetic peer CSVs: no GPU, torch or RMM.
.PHONY: test-peer-tables
test-peer-tables:
	@tests/peer_tables/run.sh
TEST_EXTRA_TARGETS += test-peer-tables
