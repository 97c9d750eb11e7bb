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

# The longest step of the build, and one file: for one architecture (a GPU box) `nvcc
# --fatbin` ran cicc, then ptxas, one thread each over its 128 kernels (21 s alone; 17 of
# the sm_90 build's 49 CPU seconds on a 2-core VM, the rest small files), so on 16 cores
# it alone set the build's wall time. For one architecture it is therefore built in
# FAT_PARTS parts (one per core, at most 16): each part's kernels compiled to PTX at once
# (cicc), the parts joined into one PTX module (every header line but the first part's
# dropped), and that module assembled into the image (ptxas, fatbinary), with
# --split-compile 0 on 8 cores or more (ptxas over every core: 8.3 -> 5.0 s with 2 threads;
# left out on fewer cores, which the parts keep busy). The image holds the same kernels with the same
# SASS, section by section, as the file built whole (checked for sm_90, CUDA 13.0: 129
# .text sections, 4,089,032 bytes either way). With every architecture (no GPU here):
# built whole, --threads 0 running the architectures at once.
ifeq ($(CUDA_ARCH),all)
FAT_GENCODE := $(foreach a,$(NVCC_ARCHS),-gencode arch=compute_$(a),code=sm_$(a))
$(BUILD)/gen/fat_kernels.fatbin: scenarios/fatbin/fat_kernels.cu
	@mkdir -p $(@D)
	$(Q)$(NVCC) --fatbin --threads 0 -O2 -std=c++17 -Werror all-warnings $(FAT_GENCODE) $< -o $@
else
FAT_GENCODE := -gencode arch=compute_$(ARCH_NUM),code=sm_$(ARCH_NUM)
FAT_PARTS := $(if $(filter 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15,$(NPROC)),$(NPROC),16)
# The parts' folder is named by their count: parts made for another count never mix in.
FAT_DIR := $(BUILD)/gen/fat-$(FAT_PARTS)
FAT_PART_PTX := $(patsubst %,$(FAT_DIR)/part%.ptx,$(wordlist 1,$(FAT_PARTS),0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15))
FAT_SPLIT = $(if $(filter 1 2 3 4 5 6 7,$(NPROC)),,$(shell $(NVCC) --help 2>/dev/null | grep -q -e '--split-compile ' && echo --split-compile 0))
$(FAT_DIR)/part%.ptx: scenarios/fatbin/fat_kernels.cu
	@mkdir -p $(@D)
	$(Q)$(NVCC) -ptx -O2 -std=c++17 -Werror all-warnings -arch=compute_$(ARCH_NUM) -DFAT_PARTS=$(FAT_PARTS) -DFAT_PART=$* $< -o $@
$(FAT_DIR)/fat_kernels.ptx: $(FAT_PART_PTX)
	$(Q)awk 'FNR == 1 { part++ } part == 1 || !/^\.(version|target|address_size)[ \t]/' $^ >$@
$(BUILD)/gen/fat_kernels.fatbin: $(FAT_DIR)/fat_kernels.ptx
	$(Q)$(NVCC) --fatbin $(FAT_SPLIT) -Werror all-warnings $(FAT_GENCODE) $< -o $@
endif

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
