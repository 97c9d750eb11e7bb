/* --alloc plugin:PATH.so[,alloc=SYM,free=SYM]: any shared library with PyTorch's
 * pluggable-allocator ABI (torch.cuda.memory.CUDAPluggableAllocator):
 *   void *alloc(ssize_t size, int device, cudaStream_t stream);
 *   void  free(void *ptr, ssize_t size, int device, cudaStream_t stream);
 * so users benchmark their own allocators without rebuilding vramlab. The ABI has no
 * statistics: only what passes through it (requested bytes, calls) is known, unless the
 * library exports vramlab's vl_torch_stat and vl_torch_reset_peaks (lib/torch/
 * vramlab_caching.h); then its own statistics are read and nothing is counted around
 * its calls, so the pair measured is what PyTorch pays. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "alloc.h"

static const vl_opt plugin_options[] = {
    {.name = "path", .kind = VL_OPT_STRING,
     .help = "the shared library (may be given bare: plugin:./my.so)",
     .positional = 1, .required = 1},
    {.name = "alloc", .kind = VL_OPT_STRING, .default_value = "vl_alloc", .help = "name of its allocation function"},
    {.name = "free", .kind = VL_OPT_STRING, .default_value = "vl_free", .help = "name of its free function"},
    {.name = "trim", .kind = VL_OPT_STRING, .default_value = "vl_torch_trim",
     .help = "name of its release-the-cache function, size_t trim(int device), called at close so that the "
             "program's check of device memory at exit sees what the library kept (optional under its default "
             "name; -: none)"},
    {NULL},
};

typedef void *(*plugin_alloc_fn)(ssize_t size, int device, cudaStream_t stream);
typedef void (*plugin_free_fn)(void *ptr, ssize_t size, int device, cudaStream_t stream);
typedef size_t (*plugin_trim_fn)(int device);
typedef int64_t (*plugin_stat_fn)(int device, const char *name);
typedef void (*plugin_reset_fn)(int device);

typedef struct plugin_state {
    void *handle;
    plugin_alloc_fn alloc;
    plugin_free_fn free;
    plugin_trim_fn trim; /* NULL: the library keeps its cache until the process exits */
    plugin_stat_fn stat; /* with reset: the library's own statistics; NULL: none */
    plugin_reset_fn reset;
} plugin_state;

/* Looks sym up in the library itself: dlsym on a handle also searches its
 * dependencies, where a name like "free" would find libc's. */
static void *own_symbol(void *handle, const char *path, const char *sym, char *err, size_t errlen)
{
    void *f = dlsym(handle, sym);
    Dl_info info;
    void *self = dlsym(handle, "_init"); /* any address known to be in the library itself */
    Dl_info self_info;
    if (!f) {
        snprintf(err, errlen, "%s does not export '%s'", path, sym);
        return NULL;
    }
    if (self && dladdr(f, &info) && dladdr(self, &self_info) && info.dli_fbase != self_info.dli_fbase) {
        snprintf(err, errlen, "'%s' found in %s is not defined by %s itself", sym, info.dli_fname, path);
        return NULL;
    }
    return f;
}

static int plugin_open(vl_allocator *a, const vl_spec *spec, char *err, size_t errlen)
{
    const char *path = vl_spec_str(spec, "path");
    plugin_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    st->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!st->handle) {
        snprintf(err, errlen, "cannot load %s", dlerror());
        free(st);
        return -1;
    }
    *(void **)&st->alloc = own_symbol(st->handle, path, vl_spec_str(spec, "alloc"), err, errlen);
    if (st->alloc) *(void **)&st->free = own_symbol(st->handle, path, vl_spec_str(spec, "free"), err, errlen);
    const char *trim = vl_spec_str(spec, "trim");
    int trim_named = strcmp(trim, "vl_torch_trim") != 0;
    if (st->alloc && st->free && strcmp(trim, "-") != 0) {
        char trim_err[256];
        *(void **)&st->trim = own_symbol(st->handle, path, trim, trim_err, sizeof trim_err);
        if (!st->trim && trim_named) { /* asked for by name: its absence is an error */
            snprintf(err, errlen, "%s", trim_err);
            st->free = NULL;
        }
    }
    if (!st->alloc || !st->free) {
        dlclose(st->handle);
        free(st);
        return -1;
    }
    char unused[256];
    *(void **)&st->stat = own_symbol(st->handle, path, "vl_torch_stat", unused, sizeof unused);
    *(void **)&st->reset = own_symbol(st->handle, path, "vl_torch_reset_peaks", unused, sizeof unused);
    if (!st->stat || !st->reset) st->stat = NULL, st->reset = NULL;
    a->counts_requests = st->stat != NULL;
    a->impl = st;
    return 0;
}

static void *plugin_alloc(vl_allocator *a, size_t size, vl_stream s)
{
    plugin_state *st = a->impl;
    if (size == 0) return NULL;
    return st->alloc((ssize_t)size, a->dev->ordinal, (cudaStream_t)s); /* NULL: an OOM */
}

static void plugin_free(vl_allocator *a, void *p, size_t size, vl_stream s)
{
    plugin_state *st = a->impl;
    if (!p) return;
    st->free(p, (ssize_t)size, a->dev->ordinal, (cudaStream_t)s);
}

static void plugin_get_stats(vl_allocator *a, vl_alloc_stats *out)
{
    plugin_state *st = a->impl;
    if (!st->stat) return; /* the statistics adaptor's fields are all that is known */
    for (size_t i = 0; i < vl_alloc_stats_nfields; i++) {
        int64_t v = st->stat(a->dev->ordinal, vl_alloc_stats_fields[i].name); /* -1: unknown */
        memcpy((char *)out + vl_alloc_stats_fields[i].offset, &v, sizeof v);
    }
}

static void plugin_reset_peaks(vl_allocator *a)
{
    plugin_state *st = a->impl;
    if (st->reset) st->reset(a->dev->ordinal);
}

static void plugin_close(vl_allocator *a)
{
    plugin_state *st = a->impl;
    if (st->trim) (void)st->trim(a->dev->ordinal); /* what it caches goes back before the exit check */
    /* Not dlclose'd: the library may keep device memory and threads of its own alive
     * until exit, as it would inside PyTorch. */
    free(st);
}

const vl_alloc_backend vl_backend_plugin = {
    .name = "plugin",
    .summary = "a .so with PyTorch's pluggable-allocator ABI (alloc/free); stats beyond requested bytes unknown unless it exports vl_torch_stat (vramlab's plugin does)",
    .options = plugin_options,
    .needs_cuda = 1,
    .open = plugin_open,
    .alloc = plugin_alloc,
    .free = plugin_free,
    .record_use = NULL,
    .get_stats = plugin_get_stats,
    .reset_peaks = plugin_reset_peaks,
    .close = plugin_close,
};
