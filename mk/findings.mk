# The measured figures of README.md and docs/caching-measured.md, generated from
# results/reference/. Included by the
# Makefile; findings-check and test-findings are registered in TEST_EXTRA_TARGETS.
#
#   make findings         rewrite the generated blocks (README.md, docs/*.md) from the stored data
#                         (scripts/findings; what each figure is: scripts/findings.d/figures.tsv)
#   make findings-check   fail when a generated block (README.md, docs/*.md) differs from what the
#                         stored data give (a figure edited by hand); no GPU, seconds
#   make test-findings    tests/findings/run.sh: the generator and the check on fake data

.PHONY: findings findings-check test-findings

findings:
	@scripts/findings

findings-check:
	@scripts/findings --check

test-findings: $(BUILD)/bin/alloc_latency
	@VL_BIN=$(BUILD)/bin tests/findings/run.sh

TEST_EXTRA_TARGETS += findings-check test-findings
