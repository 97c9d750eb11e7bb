// The rmm peer shim (lib/peers/peer_abi.h): RAPIDS RMM's memory resources behind
// vramlab's --alloc rmm:RESOURCE. Built by `make peers` (mk/peers.mk) against the
// librmm wheel unpacked into .deps/rmm; loaded by lib/cuda/backend_rmm.c.
// Statistics are RMM's own: the pool's size (pool, binning: its upstream pool) or the
// CUDA pool's reserved and used memory (async). What RMM does not count stays -1.
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "peers/peer_abi.h"

namespace {

constexpr std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT;
// binning: RMM's benchmarks put fixed-size bins from 2^18 to 2^22 bytes over a pool.
constexpr int8_t binning_min_exponent = 18, binning_max_exponent = 22;

struct rmm_peer {
    cuda::mr::any_resource<cuda::mr::device_accessible> resource;
    std::optional<rmm::mr::pool_memory_resource> pool;        // pool, binning: the pool itself
    std::optional<rmm::mr::cuda_async_memory_resource> async; // async: for its cudaMemPool_t
    std::atomic<int64_t> peak_pool_size{0};                    // a pool only grows in allocate
};

void note_pool_peak(rmm_peer *p)
{
    if (!p->pool) return;
    auto now = static_cast<int64_t>(p->pool->pool_size());
    int64_t peak = p->peak_pool_size.load(std::memory_order_relaxed);
    while (now > peak && !p->peak_pool_size.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
}

int64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr)
{
    cuuint64_t value = 0;
    return cudaMemPoolGetAttribute(pool, attr, &value) == cudaSuccess ? static_cast<int64_t>(value) : -1;
}

rmm::mr::pool_memory_resource make_pool(const vl_peer_config *cfg)
{
    std::size_t initial = cfg->initial ? cfg->initial : rmm::percent_of_free_device_memory(50);
    std::optional<std::size_t> maximum;
    if (cfg->maximum) maximum = cfg->maximum;
    return rmm::mr::pool_memory_resource(rmm::mr::cuda_memory_resource{}, initial, maximum);
}

void *shim_open(const vl_peer_config *cfg, char *err, size_t errlen)
{
    try {
        if (cudaSetDevice(cfg->device) != cudaSuccess) {
            snprintf(err, errlen, "cannot use CUDA device %d", cfg->device);
            return nullptr;
        }
        std::string kind = cfg->resource ? cfg->resource : "pool";
        auto *p = new rmm_peer{};
        if (kind == "pool") {
            p->pool.emplace(make_pool(cfg));
            p->resource = *p->pool;
        } else if (kind == "binning") {
            p->pool.emplace(make_pool(cfg));
            p->resource = rmm::mr::binning_memory_resource(*p->pool, binning_min_exponent, binning_max_exponent);
        } else if (kind == "arena") {
            std::optional<std::size_t> size;
            if (cfg->initial) size = cfg->initial;
            p->resource = rmm::mr::arena_memory_resource(rmm::mr::cuda_memory_resource{}, size);
        } else if (kind == "async") {
            std::optional<std::size_t> initial;
            if (cfg->initial) initial = cfg->initial;
            p->async.emplace(initial);
            p->resource = *p->async;
        } else {
            snprintf(err, errlen, "unknown RMM resource '%s'", kind.c_str());
            delete p;
            return nullptr;
        }
        note_pool_peak(p);
        return p;
    } catch (const std::exception &e) {
        snprintf(err, errlen, "%s", e.what());
        return nullptr;
    }
}

void *shim_alloc(void *h, size_t size, void *stream)
{
    auto *p = static_cast<rmm_peer *>(h);
    try {
        void *ptr = p->resource.allocate(cuda::stream_ref{static_cast<cudaStream_t>(stream)}, size, alignment);
        note_pool_peak(p);
        return ptr;
    } catch (const rmm::out_of_memory &) {
        return nullptr; // an OOM is a result: vramlab counts it
    } catch (const std::exception &e) {
        fprintf(stderr, "rmm: allocate(%zu): %s\n", size, e.what());
        return nullptr;
    }
}

void shim_free(void *h, void *ptr, size_t size, void *stream)
{
    auto *p = static_cast<rmm_peer *>(h);
    try {
        p->resource.deallocate(cuda::stream_ref{static_cast<cudaStream_t>(stream)}, ptr, size, alignment);
    } catch (const std::exception &e) {
        fprintf(stderr, "rmm: deallocate(%zu): %s\n", size, e.what());
    }
}

size_t shim_trim(void *h)
{
    auto *p = static_cast<rmm_peer *>(h);
    if (!p->async) return 0; // RMM's pool, arena and bins give memory back only when destroyed
    cudaMemPool_t pool = p->async->pool_handle();
    int64_t before = pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent);
    if (cudaDeviceSynchronize() != cudaSuccess || cudaMemPoolTrimTo(pool, 0) != cudaSuccess) return 0;
    int64_t after = pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent);
    return before > after && after >= 0 ? static_cast<size_t>(before - after) : 0;
}

void shim_stats(void *h, vl_peer_stats *st)
{
    auto *p = static_cast<rmm_peer *>(h);
    if (p->pool) {
        st->reserved_bytes = static_cast<int64_t>(p->pool->pool_size());
        st->peak_reserved_bytes = p->peak_pool_size.load(std::memory_order_relaxed);
    } else if (p->async) {
        cudaMemPool_t pool = p->async->pool_handle();
        st->reserved_bytes = pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent);
        st->peak_reserved_bytes = pool_attribute(pool, cudaMemPoolAttrReservedMemHigh);
        st->allocated_bytes = pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent);
        st->peak_allocated_bytes = pool_attribute(pool, cudaMemPoolAttrUsedMemHigh);
    }
}

void shim_reset_peaks(void *h)
{
    auto *p = static_cast<rmm_peer *>(h);
    if (p->pool) p->peak_pool_size.store(static_cast<int64_t>(p->pool->pool_size()), std::memory_order_relaxed);
    if (p->async) {
        cuuint64_t zero = 0; // resets a high-water mark to the current value
        cudaMemPoolSetAttribute(p->async->pool_handle(), cudaMemPoolAttrReservedMemHigh, &zero);
        cudaMemPoolSetAttribute(p->async->pool_handle(), cudaMemPoolAttrUsedMemHigh, &zero);
    }
}

void shim_close(void *h)
{
    auto *p = static_cast<rmm_peer *>(h);
    cudaDeviceSynchronize(); // stream-ordered frees complete before the pool goes
    delete p;                // the last owner of each resource gives its memory back
}

const vl_peer_api api = {
    VL_PEER_ABI_VERSION, "rmm " RMM_SHIM_VERSION, shim_open, shim_alloc, shim_free, shim_trim,
    shim_stats, shim_reset_peaks, shim_close,
};

} // namespace

extern "C" __attribute__((visibility("default"))) const vl_peer_api *vl_peer_entry(void) { return &api; }
