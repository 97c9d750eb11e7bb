# Unknown is not a number: the readers of results take an empty CSV field as missing.
# Included by the Makefile; registered in TEST_EXTRA_TARGETS for `make test`.
#
#   make test-unknown-values   tests/unknown_values/run.sh: scripts/compare, scripts/matrix
#                              and the plots on CSVs with an empty field; no GPU

.PHONY: test-unknown-values
test-unknown-values:
	@tests/unknown_values/run.sh

TEST_EXTRA_TARGETS += test-unknown-values
