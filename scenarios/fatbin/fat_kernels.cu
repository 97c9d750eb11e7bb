// The large fat binary context_cost loads into a context: FAT_KERNELS template
// instantiations of a kernel unrolled FAT_UNROLL times (about 32 KiB of SASS each,
// about 4 MiB per architecture), compiled with `nvcc --fatbin` for the build's real
// architectures (mk/failmodes.mk) and embedded into context_cost as data, so the
// program loads it (cudaLibraryLoadData) only in the variants that ask for it. It
// stands for the kernels a framework links in (PyTorch ships thousands), at a size
// that builds in a minute or two.
#ifndef FAT_KERNELS
#define FAT_KERNELS 128
#endif
#ifndef FAT_UNROLL
#define FAT_UNROLL 1024
#endif
// Built in parts where the build has one architecture (mk/failmodes.mk): part FAT_PART of
// FAT_PARTS holds the kernels [FAT_FIRST, FAT_END), part 0 also vl_fat_touch, each part
// compiled to PTX at once, the parts' PTX joined into one module and assembled into one
// image (the same SASS, kernel by kernel, as this file built whole). So nothing here may
// be defined in two parts but kernels of distinct N (no __device__ variables).
#ifndef FAT_PARTS
#define FAT_PARTS 1
#define FAT_PART 0
#endif
#define FAT_FIRST (FAT_PART * FAT_KERNELS / FAT_PARTS)
#define FAT_END ((FAT_PART + 1) * FAT_KERNELS / FAT_PARTS)

template <int N>
__global__ void vl_fat_kernel(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
#pragma unroll
    for (int k = 0; k < FAT_UNROLL; k++) v = v * (1.0f + (N + k) * 1e-7f) + (float)((N * 31 + k) & 255) * 1e-3f;
    x[i] = v;
}

// Taking each kernel's address instantiates it (recursively, this part's of them).
template <int N>
struct vl_fat_all {
    static const void *at(int i) { return i == N ? (const void *)vl_fat_kernel<N> : vl_fat_all<N - 1>::at(i); }
};
template <>
struct vl_fat_all<FAT_FIRST - 1> {
    static const void *at(int) { return nullptr; }
};
const void *vl_fat_kernel_at(int i) { return vl_fat_all<FAT_END - 1>::at(i); }

#if FAT_PART == 0
// The one kernel context_cost launches (by this name), so that lazy loading loads
// something of the library, as a program that uses a few of its kernels does.
extern "C" __global__ void vl_fat_touch(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
#endif
