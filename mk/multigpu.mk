# The multi-GPU and multi-process scenarios (device0_pileup, ipc_hold, peer_access,
# graph_pool). Included by the Makefile.
#
#   make test-multigpu-nogpu  tests/multigpu/run.sh: each program answers --help (0),
#                             a bad flag (2) and, without a GPU, skips in one line (77);
#                             registered in TEST_EXTRA_TARGETS for `make test`
#   tests/gpu/multigpu.sh     (GPU box, not a make target) runs them --quick and checks
#                             that each bad variant shows its failure and each fixed one
#                             does not: OUT=dir tests/gpu/multigpu.sh

.PHONY: test-multigpu-nogpu

test-multigpu-nogpu: programs
	@tests/multigpu/run.sh $(BUILD)

TEST_EXTRA_TARGETS += test-multigpu-nogpu
