# Running the suite across a Slurm cluster, and reading many machines' results at once.
# Included by the Makefile.
#
#   make fleet [QUICK=1] [REPEAT=N] [ONLY=prog,prog] [FLEET='--nodes a,b ...'] [SBATCH='-p gpu --gres=gpu:1 ...']
#                    scripts/fleet: one Slurm array task per target, each running the
#                    suite into results/<fleet-id>/<host>-<gpu>-<driver>/, then the matrix
#   make test-fleet  tests/fleet/run.sh: a one-node Slurm cluster brought up and taken
#                    down by the test (root; skipped where Slurm cannot start);
#                    heavy (Slurm, ~20 s, may install slurm with apt): registered in
#                    TEST_HEAVY_TARGETS for `make test-heavy`, not `make test`
#   scripts/matrix FOLDER...   (not a make target) one column per machine against a baseline

KNOWN_VARS += FLEET SBATCH
.PHONY: fleet test-fleet

fleet: programs
	@scripts/fleet $(if $(QUICK),--quick) $(if $(REPEAT),--repeat $(call vl_shq,$(REPEAT))) $(if $(ONLY),--only $(call vl_shq,$(ONLY))) \
	  $(FLEET) -- $(SBATCH)

test-fleet: programs
	@tests/fleet/run.sh

TEST_HEAVY_TARGETS += test-fleet
