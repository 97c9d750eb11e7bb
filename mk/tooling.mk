# Tests of the tooling a newcomer meets first: the test runner, scripts/bench.sh and
# the make command line. No GPU. Included by the Makefile; registered in
# TEST_EXTRA_TARGETS for `make test`.
#
#   make test-runner   tests/runner/run.sh: scripts/run-tests.sh's counts, skips, failures
#                      and parallel runs, on stand-in test programs

.PHONY: test-runner

test-runner:
	@tests/runner/run.sh

TEST_EXTRA_TARGETS += test-runner
