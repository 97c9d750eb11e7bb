# The build's header dependencies. Included by the Makefile; registered in
# TEST_EXTRA_TARGETS for `make test`. No GPU; a few seconds.
#
#   make test-make-deps  tests/make_deps/run.sh: a header-only change rebuilds every
#                        object that includes it (obj/ and broken/ alike), and nothing
#                        else; objects in a scratch BUILD, the header never touched

.PHONY: test-make-deps
test-make-deps:
	@tests/make_deps/run.sh

TEST_EXTRA_TARGETS += test-make-deps
