// torch_alloc_compare: vramlab's caching allocator (classic and expandable segments,
// and through the PyTorch plugin's vl_alloc/vl_free) against PyTorch's C++ caching
// allocator (c10::cuda::CUDACachingAllocator::raw_alloc / raw_delete), a warm
// cudaMallocAsync pool and RAPIDS RMM's resources (pool, arena, async, binning), side
// by side in one process on one GPU. RMM comes through its peer shim (--alloc rmm,
// lib/cuda/backend_rmm.c dlopens build/lib/libvramlab_peer_rmm.so), so nothing here
// links RMM; where the shim is not built its rows are absent and a "# rmm" line and
// one line on stderr say why.
//
// Two tests, the same operations for every allocator:
//   pair   alloc + free of one size, again and again: every alloc hits the cache
//          (after warm-up). One sample = mean ns per pair over --batch pairs.
//   churn  --slots slots; each op picks a random slot: frees its block if it holds
//          one, else allocates a size drawn log-uniform in [512 B, 4 MiB]. The op
//          sequence is drawn once from --seed, so all allocators see the same one.
//          Untimed --warmup-ops first. One sample = mean ns per op over --batch ops.
// Samples are batch means because a single 100 ns operation is close to the cost of
// reading the clock; median and p99 are over those samples.
//
// C++ only for torch's headers; everything else is vramlab's C library. Built by
// `make torch-compare` (mk/torch.mk) where torch's include/ and libc10_cuda.so exist.
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cuda/gpu.h"
#include "torch/vramlab_caching.h"
extern "C" {
#include "alloc.h"
#include "clock.h"
#include "exitcodes.h"
#include "program.h"
#include "rng.h"
#include "stats.h"
}

namespace {

int64_t pair_samples = 2000, churn_ops = 1000000, warmup_ops = 200000, slots = 10000, batch = 100;

const vl_cli_opt options[] = {
    {"pair-samples", VL_CLI_INT, &pair_samples, "samples per size in the pair test; --quick: 200", 10, 1e8,
     VL_QUICK_AT_MOST, "200", NULL},
    {"churn-ops", VL_CLI_INT, &churn_ops, "timed churn operations; --quick: 100000", 1000, 1e10, VL_QUICK_AT_MOST,
     "100000", NULL},
    {"warmup-ops", VL_CLI_INT, &warmup_ops, "untimed churn operations first; --quick: 20000", 0, 1e10,
     VL_QUICK_AT_MOST, "20000", NULL},
    {"slots", VL_CLI_INT, &slots, "churn slots (at most this many live blocks)", 1, 1e7, VL_QUICK_KEEP, NULL, NULL},
    {"batch", VL_CLI_INT, &batch, "operations per timed sample", 1, 1e6, VL_QUICK_KEEP, NULL, NULL},
    {NULL, VL_CLI_FLAG, NULL, NULL, 0, 0, VL_QUICK_KEEP, NULL, NULL},
};

const vl_program_def def = {
    "vramlab caching vs PyTorch's caching allocator vs cudaMallocAsync vs RMM: cache-hit pair and churn ns/op",
    NULL, 1, options, nullptr, nullptr,
};

// RMM's resources, each with a fixed first size: by default a pool takes half the free
// memory, and four of them beside c10's and vramlab's caches would not fit. The pools
// grow past it; the arena is this size (the churn's live bytes stay near 2.5 GiB).
// A row is named by the resource alone; the sizes are in the CSV's "# rmm_resources".
struct rmm_resource {
    const char *name, *spec;
};
const rmm_resource rmm_resources[] = {{"rmm:pool", "rmm:pool,initial=4GiB"},
                                      {"rmm:arena", "rmm:arena,initial=8GiB"},
                                      {"rmm:async", "rmm:async"},
                                      {"rmm:binning", "rmm:binning,initial=4GiB"}};

const size_t pair_sizes[] = {512, 64 << 10, 1 << 20, 16 << 20};
const uint64_t churn_min = 512, churn_max = 4u << 20;

// One allocator under test, called through the same two function pointers as the others.
struct contender {
    const char *name;
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
    vl_allocator *vl;  // vramlab's: statistics; NULL for the others
    int64_t ooms;
};

void *torch_alloc(void *, size_t size)
{
    try {
        return c10::cuda::CUDACachingAllocator::raw_alloc(size);
    } catch (const std::exception &) {  // c10::OutOfMemoryError: a result, not a crash
        return nullptr;
    }
}
void torch_free(void *, void *ptr, size_t) { c10::cuda::CUDACachingAllocator::raw_delete(ptr); }

void *async_alloc(void *, size_t size)
{
    void *p = nullptr;
    cudaError_t err = cudaMallocAsync(&p, size, 0);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return nullptr;
    }
    VL_CUDA_CHECK(err);
    return p;
}
void async_free(void *, void *ptr, size_t) { VL_CUDA_CHECK(cudaFreeAsync(ptr, 0)); }

// The PyTorch plugin's entry points (the .so's code, linked statically): what PyTorch
// calls, with the lazy per-device lookup in front of the allocator.
void *plugin_alloc(void *, size_t size) { return vl_alloc(static_cast<ssize_t>(size), 0, nullptr); }
void plugin_free(void *, void *ptr, size_t size) { vl_free(ptr, static_cast<ssize_t>(size), 0, nullptr); }

void *vl_alloc_fn(void *ctx, size_t size) { return vl_allocate(static_cast<vl_allocator *>(ctx), size, NULL); }
void vl_free_fn(void *ctx, void *ptr, size_t size) { vl_deallocate(static_cast<vl_allocator *>(ctx), ptr, size, NULL); }

[[noreturn]] void fail(const char *what)
{
    fprintf(stderr, "torch_alloc_compare: %s\n", what);
    exit(VL_EXIT_FAIL);
}

void write_row(vl_csv *csv, const contender &c, const char *test, size_t size, std::vector<double> &samples,
               int64_t ooms)
{
    vl_summary s = vl_summarize(samples.data(), samples.size());
    char values[512], peak[32] = "";
    if (c.vl != nullptr) {
        vl_alloc_stats st;
        vl_alloc_stats_get(c.vl, &st);
        vl_csv_i64(st.peak_reserved_bytes, peak, sizeof peak);
    }
    vl_csv_row(csv, "%s,%s,%zu,%lld,%s,%s,%lld", c.name, test, size, static_cast<long long>(batch),
               vl_summary_values(&s, values, sizeof values), peak, static_cast<long long>(ooms));
    fprintf(stderr, "%-28s %-5s %9zu B  median %8.1f ns  p99 %8.1f ns\n", c.name, test, size, s.median, s.p99);
}

void run_pair(vl_csv *csv, contender &c, size_t size)
{
    for (int i = 0; i < 1000; i++) {  // warm-up: the first alloc creates the segment
        void *p = c.alloc(c.ctx, size);
        if (p == nullptr) fail("out of memory in the pair warm-up");
        c.free(c.ctx, p, size);
    }
    std::vector<double> samples(static_cast<size_t>(pair_samples));
    for (auto &sample : samples) {
        uint64_t t0 = vl_now_ns();
        for (int64_t i = 0; i < batch; i++) {
            void *p = c.alloc(c.ctx, size);
            if (__builtin_expect(p == nullptr, 0)) fail("out of memory in the pair test");
            c.free(c.ctx, p, size);
        }
        sample = static_cast<double>(vl_now_ns() - t0) / static_cast<double>(batch);
    }
    write_row(csv, c, "pair", size, samples, 0);
}

struct churn_op {
    uint32_t slot;
    uint32_t size;  // used when the slot is empty
};

struct live_block {
    void *ptr;
    size_t size;
};

inline void churn_step(contender &c, std::vector<live_block> &live, const churn_op &op, int64_t &ooms)
{
    live_block &b = live[op.slot];
    if (b.ptr != nullptr) {
        c.free(c.ctx, b.ptr, b.size);
        b.ptr = nullptr;
    } else {
        b.ptr = c.alloc(c.ctx, op.size);
        b.size = op.size;
        if (b.ptr == nullptr) ooms++;
    }
}

void run_churn(vl_csv *csv, contender &c, const std::vector<churn_op> &ops)
{
    std::vector<live_block> live(static_cast<size_t>(slots), live_block{nullptr, 0});
    int64_t ooms = 0;
    size_t i = 0;
    for (; i < static_cast<size_t>(warmup_ops); i++) churn_step(c, live, ops[i], ooms);
    if (c.vl != nullptr) vl_alloc_reset_peaks(c.vl);
    std::vector<double> samples;
    samples.reserve(static_cast<size_t>(churn_ops / batch));
    while (i + static_cast<size_t>(batch) <= ops.size()) {
        uint64_t t0 = vl_now_ns();
        for (int64_t k = 0; k < batch; k++, i++) churn_step(c, live, ops[i], ooms);
        samples.push_back(static_cast<double>(vl_now_ns() - t0) / static_cast<double>(batch));
    }
    write_row(csv, c, "churn", 0, samples, ooms);
    for (auto &b : live)
        if (b.ptr != nullptr) c.free(c.ctx, b.ptr, b.size);
}

// NULL only where the allocator is a peer that is not here (exit 77 of a program):
// why goes into skip_why. Any other failure ends the run.
vl_allocator *open_vramlab(vl_device *dev, const char *spec, std::string *skip_why = nullptr)
{
    char err[512];
    int status = 0;
    vl_allocator *a = vl_alloc_open(spec, dev, &status, err, sizeof err);
    if (a == nullptr && status == VL_EXIT_SKIP && skip_why != nullptr) {
        *skip_why = err;
        return nullptr;
    }
    if (a == nullptr) {
        fprintf(stderr, "torch_alloc_compare: --alloc %s: %s\n", spec, err);
        exit(status);
    }
    return a;
}

// RMM's resources as contenders (none where the peer is not built: one line says why).
std::vector<contender> open_rmm(vl_program &p)
{
    std::vector<contender> opened;
    std::string why, specs;
    for (const rmm_resource &r : rmm_resources) {
        vl_allocator *a = open_vramlab(p.dev, r.spec, &why);
        if (a == nullptr) {
            fprintf(stderr, "torch_alloc_compare: no RMM rows: %s\n", why.c_str());
            vl_csv_meta(p.csv, "rmm", "absent: %s", why.c_str());
            break; // one shim for all resources: the others would say the same
        }
        opened.push_back({r.name, vl_alloc_fn, vl_free_fn, a, a, 0});
        specs += (specs.empty() ? "" : " ") + std::string(r.spec);
    }
    if (!opened.empty()) {
        vl_csv_meta(p.csv, "rmm", "%s", opened[0].vl->backend->version(opened[0].vl));
        vl_csv_meta(p.csv, "rmm_resources", "%s (binning: bins of 256 KiB-4 MiB over the pool)", specs.c_str());
    }
    return opened;
}

}  // namespace


int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);

    // The op sequence of the churn test, drawn once.
    vl_rng rng;
    vl_rng_seed(&rng, p.cli.seed);
    std::vector<churn_op> ops(static_cast<size_t>(warmup_ops + churn_ops));
    for (auto &op : ops) {
        op.slot = static_cast<uint32_t>(vl_rng_below(&rng, static_cast<uint64_t>(slots)));
        op.size = static_cast<uint32_t>(vl_rng_log_uniform(&rng, churn_min, churn_max));
    }

    // PyTorch's allocator as torch sets it up (CUDAHooks::init); a warm async pool
    // that keeps its memory between frees.
    c10::cuda::CUDACachingAllocator::init(c10::cuda::device_count());
    cudaMemPool_t pool;
    VL_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, p.dev->ordinal));
    uint64_t keep_all = UINT64_MAX, old_threshold = 0;
    VL_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &old_threshold));
    VL_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));

    setenv("VRAMLAB_ALLOC", "caching", 1); // the plugin's SPEC: classic, as the first contender
    vl_allocator *classic = open_vramlab(p.dev, "caching");
    vl_allocator *expandable = open_vramlab(p.dev, "caching:segments=expandable");
    std::vector<contender> all = {
        {"vramlab:caching", vl_alloc_fn, vl_free_fn, classic, classic, 0},
        {"vramlab:caching:expandable", vl_alloc_fn, vl_free_fn, expandable, expandable, 0},
        {"vramlab-plugin:vl_alloc", plugin_alloc, plugin_free, nullptr, nullptr, 0},
        {"torch:CUDACachingAllocator", torch_alloc, torch_free, nullptr, nullptr, 0},
        {"cudaMallocAsync:warm-pool", async_alloc, async_free, nullptr, nullptr, 0},
    };
    std::vector<contender> rmm = open_rmm(p);
    all.insert(all.end(), rmm.begin(), rmm.end());

    vl_csv_meta(p.csv, "pair_sizes", "512 65536 1048576 16777216");
    vl_csv_meta(p.csv, "churn", "%lld slots, sizes log-uniform %llu-%llu B, %lld warm-up ops, %lld timed ops",
                static_cast<long long>(slots), static_cast<unsigned long long>(churn_min),
                static_cast<unsigned long long>(churn_max), static_cast<long long>(warmup_ops),
                static_cast<long long>(churn_ops));
    vl_csv_meta(p.csv, "sample", "mean over batch_ops operations (pair: one alloc+free); stream: legacy default");
    char cols[512];
    vl_csv_header(p.csv, (std::string("allocator,test,size_bytes,batch_ops,") +
                          vl_summary_columns("op", "ns", cols, sizeof cols) + ",peak_reserved_bytes,ooms")
                             .c_str());

    for (auto &c : all)
        for (size_t size : pair_sizes) run_pair(p.csv, c, size);
    for (auto &c : all) {
        run_churn(p.csv, c, ops);
        VL_CUDA_CHECK(cudaDeviceSynchronize());
    }

    // Give everything back before the frame checks for leaks.
    vl_alloc_close(classic);
    vl_alloc_close(expandable);
    for (contender &c : rmm) vl_alloc_close(c.vl);
    vl_torch_trim(-1);
    c10::cuda::CUDACachingAllocator::emptyCache();
    VL_CUDA_CHECK(cudaDeviceSynchronize());
    VL_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &old_threshold));
    VL_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    return vl_program_finish(&p);
}
