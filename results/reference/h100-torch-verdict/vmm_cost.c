/* scratch: cost of each VMM driver call per chunk, and of one cuMemSetAccess over N chunks */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); printf("FAIL %s: %s\n", #x, s_); exit(1); } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static double med(double *v, int n) { qsort(v, n, sizeof *v, cmp); return v[n / 2]; }

int main(void)
{
    CK(cuInit(0));
    CUdevice dev; CK(cuDeviceGet(&dev, 0));
    CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemAccessDesc acc = {0};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    size_t sizes[] = {2u << 20, 4u << 20, 8u << 20, 20u << 20, 64u << 20};
    printf("chunk_mib,n,create_us,map_us,setaccess_each_us,unmap_us,remap_us,setaccess_all_us_per_chunk,setaccess_all_us,release_us\n");
    for (unsigned si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t S = sizes[si];
        int N = (int)((1024ull << 20) / S); if (N > 256) N = 256;
        CUdeviceptr va; CK(cuMemAddressReserve(&va, S * N, 0, 0, 0));
        CUmemGenericAllocationHandle *h = calloc(N, sizeof *h);
        double *t = calloc(N, sizeof *t);
        double c = 0, m = 0, sa = 0, u = 0, rm = 0, sall = 0, rel = 0;
        int rounds = 5;
        double *cr = calloc(rounds, sizeof(double)), *mr = calloc(rounds, sizeof(double)), *sr = calloc(rounds, sizeof(double)),
               *ur = calloc(rounds, sizeof(double)), *rmr = calloc(rounds, sizeof(double)), *sallr = calloc(rounds, sizeof(double)),
               *relr = calloc(rounds, sizeof(double));
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < N; i++) { double a = now(); CK(cuMemCreate(&h[i], S, &prop, 0)); t[i] = now() - a; }
            cr[r] = med(t, N);
            for (int i = 0; i < N; i++) { double a = now(); CK(cuMemMap(va + S * i, S, 0, h[i], 0)); t[i] = now() - a; }
            mr[r] = med(t, N);
            for (int i = 0; i < N; i++) { double a = now(); CK(cuMemSetAccess(va + S * i, S, &acc, 1)); t[i] = now() - a; }
            sr[r] = med(t, N);
            CK(cuCtxSynchronize());
            for (int i = 0; i < N; i++) { double a = now(); CK(cuMemUnmap(va + S * i, S)); t[i] = now() - a; }
            ur[r] = med(t, N);
            for (int i = 0; i < N; i++) { double a = now(); CK(cuMemMap(va + S * i, S, 0, h[i], 0)); t[i] = now() - a; }
            rmr[r] = med(t, N);
            double a = now(); CK(cuMemSetAccess(va, S * N, &acc, 1)); sallr[r] = now() - a;
            CK(cuCtxSynchronize());
            for (int i = 0; i < N; i++) CK(cuMemUnmap(va + S * i, S));
            for (int i = 0; i < N; i++) { double b = now(); CK(cuMemRelease(h[i])); t[i] = now() - b; }
            relr[r] = med(t, N);
        }
        c = med(cr, rounds); m = med(mr, rounds); sa = med(sr, rounds); u = med(ur, rounds); rm = med(rmr, rounds);
        sall = med(sallr, rounds); rel = med(relr, rounds);
        printf("%zu,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n", S >> 20, N, c / 1e3, m / 1e3, sa / 1e3, u / 1e3, rm / 1e3,
               sall / 1e3 / N, sall / 1e3, rel / 1e3);
        CK(cuMemAddressFree(va, S * N));
    }
    return 0;
}
