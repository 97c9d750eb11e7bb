/* The raising entry point (lib/torch/raise_on_oom.cpp) called as PyTorch calls it, through
 * a std::function: where vl_alloc returns NULL (no GPU here, or a request larger than the
 * device), the call throws a std::runtime_error naming the size, and the program goes on;
 * a zero-byte request never throws. And the lookups PyTorch makes (ctypes: dlsym on the
 * library's handle) find vl_alloc_or_raise and, through its dependency, vl_free.
 *   raise_on_oom PATH_TO_libvramlab_caching_raise.so
 * Exit 0 when every check holds, 1 otherwise, 77 when a GPU served the impossible request. */
#include <dlfcn.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>

extern "C" {
#include "torch/vramlab_caching.h"
void *vl_alloc_or_raise(ssize_t size, int device, cudaStream_t stream);
}

int main(int argc, char **argv) {
    std::function<void *(ssize_t, int, cudaStream_t)> alloc = vl_alloc_or_raise;
    int failures = 0;
    void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : nullptr;
    bool found = lib != nullptr && dlsym(lib, "vl_alloc_or_raise") != nullptr && dlsym(lib, "vl_free") != nullptr &&
                 dlsym(lib, "vl_torch_stat") != nullptr;
    std::printf("%s the library's handle finds vl_alloc_or_raise, vl_free and vl_torch_stat\n", found ? "ok  " : "FAIL");
    failures += !found;
    const ssize_t impossible = static_cast<ssize_t>(1) << 60;  // 1 EiB: no device has it
    for (int round = 0; round < 2; round++) {                   // and again: still usable
        try {
            void *p = alloc(impossible, 0, nullptr);
            std::printf("SKIP a device served 1 EiB (%p): nothing to check\n", p);
            return 77;
        } catch (const std::runtime_error &e) {
            std::string what = e.what();
            bool ok = what.find("CUDA out of memory") != std::string::npos &&
                      what.find(std::to_string(static_cast<long long>(impossible))) != std::string::npos;
            std::printf("%s a NULL from vl_alloc is raised (round %d): %s\n", ok ? "ok  " : "FAIL", round, e.what());
            failures += !ok;
        }
    }
    try {
        alloc(0, 0, nullptr);
        std::printf("ok   a zero-byte request does not raise\n");
    } catch (const std::exception &e) {
        std::printf("FAIL a zero-byte request raised: %s\n", e.what());
        failures++;
    }
    return failures ? 1 : 0;
}
