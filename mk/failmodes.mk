# What the scenarios pinned_rounding, context_cost, cublas_workspace and stream_pools
# need beyond the generic rules of the Makefile. Included by the Makefile.
#
#   context_cost      embeds a large fat binary (scenarios/fatbin/fat_kernels.cu, built
#                     with `nvcc --fatbin` for the build's real architectures, no PTX:
#                     a PTX fallback would be JIT-compiled at load, a different cost)
#                     and links cuBLAS from the CUDA toolkit
#   cublas_workspace  links cuBLAS
#   make test-failmodes  tests/failmodes/run.sh: --help, a bad flag, the no-GPU skip (77)
#                     and stream_pools on the simulated device; in TEST_EXTRA_TARGETS
# The fat binary takes a minute or two to build for every architecture; CUDA_ARCH=sm_90
# builds it for one.

.PHONY: test-failmodes

# Shared cuBLAS (it carries its own runtime, so it sits beside the static cudart of
# the programs), found at run time through the rpath.
CUBLAS_LDLIBS := -L$(CUDA_HOME)/lib64 -lcublas -Wl,-rpath,$(CUDA_HOME)/lib64
$(BUILD)/bin/context_cost $(BUILD)/bin/cublas_workspace: PROG_LDLIBS = $(CUBLAS_LDLIBS)

ifeq ($(CUDA_ARCH),all)
FAT_GENCODE := $(foreach a,$(NVCC_ARCHS),-gencode arch=compute_$(a),code=sm_$(a))
else
FAT_GENCODE := -gencode arch=compute_$(ARCH_NUM),code=sm_$(ARCH_NUM)
endif

$(BUILD)/gen/fat_kernels.fatbin: scenarios/fatbin/fat_kernels.cu
	@mkdir -p $(@D)
	$(Q)$(NVCC) --fatbin --threads 0 -O2 -std=c++17 -Werror all-warnings $(FAT_GENCODE) $< -o $@

# The image as read-only data (vl_fat_image .. vl_fat_image_end).
$(BUILD)/obj/scenarios/fat_kernels_image.o: $(BUILD)/gen/fat_kernels.fatbin
	@mkdir -p $(@D)
	$(Q)printf '%s\n' '.section .rodata' '.balign 64' '.globl vl_fat_image' 'vl_fat_image:' \
	  '.incbin "$<"' '.globl vl_fat_image_end' 'vl_fat_image_end:' '.section .note.GNU-stack,"",@progbits' | \
	  $(CC) -x assembler -c - -o $@

$(BUILD)/bin/context_cost: $(BUILD)/obj/scenarios/fat_kernels_image.o

test-failmodes: programs
	@tests/failmodes/run.sh $(BUILD)

TEST_EXTRA_TARGETS += test-failmodes
