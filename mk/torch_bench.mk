# Live PyTorch benchmark: the workload zoo (scripts/vramlab/torch/zoo.py, workloads.py) in
# fresh processes, one allocator each, under PyTorch's allocators, vramlab's through the
# plugin, and RMM's through the same plugin (scripts/vl torch.bench: vramlab/torch/bench.py,
# statistics vramlab/torch/bench_stats.py, figures plots/torch_zoo.gp and plots/torch_bench.gp).
#   make torch-bench [QUICK=1] [ZOO=tune|confirm|all] [RUN=id] [ROUNDS=n] [BUDGET=seconds]
#                    [RESUME=1] [TORCH_BENCH_ARGS='--workloads moe --allocators torch,vramlab-expandable']
#       results/torch-bench/<run-id>/{samples,summary,verdict}.csv, report.txt, zoo.md,
#       conditions.txt; plots/torch_zoo.png and torch_bench.png where gnuplot is
#       installed, elsewhere later: make plots RUN=torch-bench/<run-id>
#   A long run in time-boxed calls: the first with RUN=x BUDGET=540 (seconds), the next
#   ones the same plus RESUME=1 (skips the processes samples.csv already has, re-runs
#   failed ones), until it prints "bench: complete" (scripts/vramlab/torch/README.md).
#   Stopped by a signal (timeout), the bench keeps the finished processes and exits 124.
#   make test-torch-bench   statistics, verdict, CSVs, figure and the skip: no torch, no GPU
#   make test-tradeoff      the trade-off and steps-from analyses of a run (also in make test)
# Without torch or a GPU the script exits 77; make can only exit 0 or 2, so a skip is
# one last line "SKIP torch-bench: <why>" and status 0 (as test-gpu-torch).

# What the bench loads: the plugin, and the RMM shim where .deps/rmm is (peer-rmm says
# when it is not). Overridable (empty) by the skip test.
TORCH_BENCH_DEPS ?= plugin peer-rmm

KNOWN_VARS += ZOO ROUNDS BUDGET RESUME TORCH_BENCH_ARGS TORCH_BENCH_DEPS
.PHONY: torch-bench test-torch-bench test-tradeoff
TEST_HEAVY_TARGETS += test-torch-bench
TEST_EXTRA_TARGETS += test-tradeoff

torch-bench: $(TORCH_BENCH_DEPS)
	@why=$$(python3 scripts/vl torch.bench --check 2>&1); rc=$$?; \
	 if [ $$rc -eq 77 ]; then echo "$$why"; echo "SKIP torch-bench: $$(echo "$$why" | tail -1)"; exit 0; fi; \
	 [ $$rc -eq 0 ] || { echo "$$why"; exit $$rc; }; \
	 python3 scripts/vl torch.bench $(if $(QUICK),--quick) $(if $(ZOO),--zoo $(call vl_shq,$(ZOO))) $(if $(RUN),--run-id $(call vl_shq,$(RUN))) \
	   $(if $(ROUNDS),--rounds $(call vl_shq,$(ROUNDS))) $(if $(BUDGET),--budget $(call vl_shq,$(BUDGET))) \
	   $(if $(filter-out 0 no,$(RESUME)),--resume) --plugin $(PLUGIN_SO) $(TORCH_BENCH_ARGS)

test-torch-bench:
	@python3 tests/torch/test_bench.py && python3 tests/torch/test_tradeoff.py

test-tradeoff:
	@python3 tests/torch/test_tradeoff.py
