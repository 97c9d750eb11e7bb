# The measured figures of README.md and docs/*.md (every file holding a block), generated from
# results/reference/. Included by the
# Makefile; findings-check, test-findings, citations-check and test-citations are
# registered in TEST_EXTRA_TARGETS.
#
#   make findings         rewrite the generated blocks (README.md, docs/*.md) from the stored data
#                         (scripts/findings; what each figure is: scripts/vramlab/findings/figures.tsv)
#   make findings-check   fail when a generated block (README.md, docs/*.md) differs from what the
#                         stored data give (a figure edited by hand); no GPU, seconds
#   make test-findings    tests/findings/run.sh: the generator and the check on fake data
#   make citations-check  scripts/vl findings.citations: fail on a stored run under
#                         results/reference/ that no findings block, doc, test or cited run's
#                         README cites, on a citation of results/reference/... that is not
#                         stored, and on an empty file under results/; no GPU, seconds
#   make test-citations   tests/findings/citations.sh: that check on fake trees

.PHONY: findings findings-check test-findings citations-check test-citations

findings:
	@scripts/findings

findings-check:
	@scripts/findings --check

test-findings: $(BUILD)/bin/alloc_latency
	@VL_BIN=$(BUILD)/bin tests/findings/run.sh

citations-check:
	@scripts/vl findings.citations

test-citations:
	@tests/findings/citations.sh

TEST_EXTRA_TARGETS += findings-check test-findings citations-check test-citations
