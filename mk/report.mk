# The report of a run (scripts/report: report.md and a self-contained report.html).
# Included by the Makefile; test-report is registered in TEST_EXTRA_TARGETS. No GPU.
#
#   make report RUN=<run>      writes RUN's report again (RUN: a run id or a path under
#                              results/, e.g. reference/h200-quick): into the run folder where
#                              bench.sh made it, else into results/report-<name>/
#   make report A=<run> B=<run>  a comparison report from scripts/compare's verdicts, into
#                              results/report-<A>-vs-<B>/; exits with compare's status (0 no
#                              regression, 1 regression or a program missing or failed, 2 bad
#                              input; make itself exits 2 on any of them: run scripts/report A B
#                              for the exact status). REPORT_FLAGS='--allow-incomplete
#                              --allow-missing' go to compare (other words are dropped)
#   make test-report           tests/report/run.sh (a simulated run, stored GPU runs, hostile values)
# `make bench` writes the report at its end (scripts/bench.sh).

KNOWN_VARS += REPORT_FLAGS
.PHONY: report test-report
REPORT_FLAGS ?=

report:
	@if [ -n $(call vl_shq,$(RUN)) ] && [ -z $(call vl_shq,$(A)$(B)) ]; then scripts/report $(filter --allow-incomplete --allow-missing,$(REPORT_FLAGS)) $(call vl_shq,$(RUN)); \
	 elif [ -z $(call vl_shq,$(RUN)) ] && [ -n $(call vl_shq,$(A)) ] && [ -n $(call vl_shq,$(B)) ]; then scripts/report $(filter --allow-incomplete --allow-missing,$(REPORT_FLAGS)) --compare $(call vl_shq,$(A)) $(call vl_shq,$(B)); \
	 else echo "make report: give RUN=<run>, or A=<run> B=<run>" >&2; exit 2; fi

test-report: programs
	@VL_BIN=$(BUILD)/bin tests/report/run.sh

TEST_EXTRA_TARGETS += test-report
