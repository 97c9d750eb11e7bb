# Tests of the tooling a newcomer meets first: the test runner, scripts/bench.sh and
# the make command line. No GPU. Included by the Makefile; registered in
# TEST_EXTRA_TARGETS for `make test`.
#
#   make test-runner     tests/runner/run.sh: scripts/run-tests.sh's counts, skips,
#                        failures and parallel runs, on stand-in test programs
#   make test-bench-cli  tests/bench_cli/run.sh: bench.sh's mistakes caught, run folders
#                        (run ids, FORCE on its own folders only, the lock, same second),
#                        COMPLETE, interruption, trace fixtures, the time estimate;
#                        stand-in programs, no GPU
#   make test-make-cli   tests/make_cli/run.sh: unknown variables, QUICK=0, ONLY=, V=1
#   make test-vramlab    tests/vramlab/test_package.py: the Python package scripts/vramlab/
#                        (the verdict vocabulary, the number formatter, the CSV reader, the
#                        launchers from any folder, no sys.path edit, short docstrings)

.PHONY: test-runner test-bench-cli test-make-cli test-vramlab

test-runner:
	@tests/runner/run.sh

test-bench-cli:
	@tests/bench_cli/run.sh

test-make-cli:
	@tests/make_cli/run.sh

test-vramlab:
	@python3 tests/vramlab/test_package.py

TEST_EXTRA_TARGETS += test-runner test-bench-cli test-make-cli test-vramlab
