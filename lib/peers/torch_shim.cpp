// The torch peer shim (lib/peers/peer_abi.h): PyTorch's CUDA allocator
// (c10::cuda::CUDACachingAllocator, native or cudaMallocAsync) behind vramlab's
// --alloc torch. Built by `make peers` (mk/peers.mk) where torch is installed; loaded
// by lib/cuda/backend_torch.c, which sets PYTORCH_CUDA_ALLOC_CONF before c10 loads.
// Statistics are c10's device stats (the aggregate of all pools).
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <exception>
#include <mutex>

#include "peers/peer_abi.h"

#ifndef TORCH_SHIM_VERSION
#define TORCH_SHIM_VERSION "unknown"
#endif

namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;
constexpr auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);

struct torch_peer {
    c10::DeviceIndex device;
};

// c10 wants this once per process, as torch's own lazy CUDA init does.
std::once_flag init_once;

void *shim_open(const vl_peer_config *cfg, char *err, size_t errlen)
{
    try {
        std::call_once(init_once, [] { alloc::init(c10::cuda::device_count()); });
        auto device = static_cast<c10::DeviceIndex>(cfg->device);
        c10::cuda::set_device(device);
        return new torch_peer{device};
    } catch (const std::exception &e) {
        snprintf(err, errlen, "%s", e.what());
        return nullptr;
    }
}

void *shim_alloc(void *h, size_t size, void *stream)
{
    auto *p = static_cast<torch_peer *>(h);
    try {
        if (c10::cuda::current_device() != p->device) c10::cuda::set_device(p->device);
        return alloc::raw_alloc_with_stream(size, static_cast<cudaStream_t>(stream));
    } catch (const c10::OutOfMemoryError &) {
        return nullptr; // an OOM is a result: vramlab counts it
    } catch (const std::exception &e) {
        fprintf(stderr, "torch: raw_alloc_with_stream(%zu): %.200s\n", size, e.what());
        return nullptr;
    }
}

void shim_free(void *, void *ptr, size_t, void *)
{
    try {
        alloc::raw_delete(ptr); // the block remembers its stream
    } catch (const std::exception &e) {
        fprintf(stderr, "torch: raw_delete: %.200s\n", e.what());
    }
}

size_t shim_trim(void *h)
{
    auto *p = static_cast<torch_peer *>(h);
    try {
        int64_t before = alloc::getDeviceStats(p->device).reserved_bytes[aggregate].current;
        alloc::emptyCache();
        int64_t after = alloc::getDeviceStats(p->device).reserved_bytes[aggregate].current;
        return before > after ? static_cast<size_t>(before - after) : 0;
    } catch (const std::exception &e) {
        fprintf(stderr, "torch: emptyCache: %.200s\n", e.what());
        return 0;
    }
}

void shim_stats(void *h, vl_peer_stats *st)
{
    auto *p = static_cast<torch_peer *>(h);
    try {
        c10::CachingDeviceAllocator::DeviceStats s = alloc::getDeviceStats(p->device);
        st->allocated_bytes = s.allocated_bytes[aggregate].current;
        st->peak_allocated_bytes = s.allocated_bytes[aggregate].peak;
        st->reserved_bytes = s.reserved_bytes[aggregate].current;
        st->peak_reserved_bytes = s.reserved_bytes[aggregate].peak;
        st->active_bytes = s.active_bytes[aggregate].current;
        st->peak_active_bytes = s.active_bytes[aggregate].peak;
        st->inactive_split_bytes = s.inactive_split_bytes[aggregate].current;
        st->peak_inactive_split_bytes = s.inactive_split_bytes[aggregate].peak;
        st->segments = s.segment[aggregate].current;
        st->device_allocs = s.num_device_alloc;
        st->device_frees = s.num_device_free;
        st->alloc_retries = s.num_alloc_retries;
    } catch (const std::exception &e) { // a backend without stats: every field stays unknown
        fprintf(stderr, "torch: getDeviceStats: %.200s\n", e.what());
    }
}

void shim_reset_peaks(void *h)
{
    auto *p = static_cast<torch_peer *>(h);
    try {
        alloc::resetPeakStats(p->device);
    } catch (const std::exception &e) {
        fprintf(stderr, "torch: resetPeakStats: %.200s\n", e.what());
    }
}

void shim_close(void *h)
{
    auto *p = static_cast<torch_peer *>(h);
    try {
        c10::cuda::device_synchronize();
        alloc::emptyCache(); // c10's allocator lives on; its cache goes back to the device
    } catch (const std::exception &e) {
        fprintf(stderr, "torch: emptyCache: %.200s\n", e.what());
    }
    delete p;
}

const vl_peer_api api = {
    VL_PEER_ABI_VERSION, "torch " TORCH_SHIM_VERSION, shim_open, shim_alloc, shim_free, shim_trim,
    shim_stats, shim_reset_peaks, shim_close,
};

} // namespace

extern "C" __attribute__((visibility("default"))) const vl_peer_api *vl_peer_entry(void) { return &api; }
