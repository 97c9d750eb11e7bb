/* libvramlab_caching_raise.so: the plugin's allocation entry point for PyTorch that raises
 * instead of returning NULL.
 *
 * PyTorch's pluggable allocator (CUDAPluggableAllocator, torch 2.11) stores whatever
 * pointer alloc returns and never checks it: a NULL becomes a tensor at address 0, and the
 * first kernel that touches it faults (an illegal memory access, which ends the CUDA
 * context). It calls alloc through a std::function from C++, so a C++ exception thrown
 * here travels up to PyTorch's Python binding, which raises it as a RuntimeError: an
 * error the program can catch, the CUDA context intact, the allocator still usable.
 *
 *   torch.cuda.memory.CUDAPluggableAllocator(
 *       "build/lib/libvramlab_caching_raise.so", "vl_alloc_or_raise", "vl_free")
 *
 * vl_free and the vl_torch_* functions are libvramlab_caching.so's (this library needs
 * it, from its own folder, and lookups through this library find them). Built only where
 * a C++ compiler is (make plugin-raise; C, not C++, is what CI installs). */
#include <stdexcept>
#include <string>

extern "C" {
#include "torch/vramlab_caching.h"
}

extern "C" __attribute__((visibility("default"))) void *vl_alloc_or_raise(ssize_t size, int device,
                                                                          cudaStream_t stream) {
    void *p = vl_alloc(size, device, stream);
    if (p == nullptr && size > 0) {
        // "CUDA out of memory" is the phrase PyTorch's own allocator and its users match on
        throw std::runtime_error("CUDA out of memory: vramlab's allocator (VRAMLAB_ALLOC) returned no memory for " +
                                 std::to_string(static_cast<long long>(size)) + " bytes on device " +
                                 std::to_string(device) +
                                 "; its line on stderr says why (out of memory, or an allocator that could not open)");
    }
    return p;
}
