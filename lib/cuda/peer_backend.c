/* Loading a peer's shim and forwarding to it (see peer_backend.h). */
#include "peer_backend.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct peer_state {
    const vl_peer_api *api;
    void *handle;
} peer_state;

static char default_dir[PATH_MAX];

void vl_peer_set_default_dir(const char *dir)
{
    snprintf(default_dir, sizeof default_dir, "%s", dir ? dir : "");
}

int vl_peer_library_path(const vl_peer_desc *d, char *path, size_t len, char *err, size_t errlen)
{
    const char *dir = getenv("VL_PEER_DIR");
    if ((!dir || !*dir) && default_dir[0]) dir = default_dir;
    char exe[PATH_MAX];
    if (!dir || !*dir) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) {
            snprintf(err, errlen, "%s: cannot tell where this program lives to find %s (set VL_PEER_DIR)", d->name,
                     d->library);
            return -1;
        }
        exe[n] = '\0';
        char libdir[PATH_MAX + 8], resolved[PATH_MAX];
        snprintf(libdir, sizeof libdir, "%s/../lib", dirname(exe)); /* BUILD/bin -> BUILD/lib */
        if ((size_t)snprintf(path, len, "%s/%s", realpath(libdir, resolved) ? resolved : libdir, d->library) >= len)
            goto too_long;
        return 0;
    }
    if ((size_t)snprintf(path, len, "%s/%s", dir, d->library) >= len) goto too_long;
    return 0;
too_long:
    snprintf(err, errlen, "%s: the path of %s is too long", d->name, d->library);
    return -1;
}

/* dlerror's text is long and may span lines; the first line is the reason. */
static const char *first_line(char *text)
{
    text[strcspn(text, "\n")] = '\0';
    return text;
}

const vl_peer_api *vl_peer_load(const vl_peer_desc *d, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (vl_peer_library_path(d, path, sizeof path, err, errlen) != 0) return NULL;
    if (access(path, F_OK) != 0) {
        snprintf(err, errlen, "peer '%s' is not available: %s is not built (%s)", d->name, path, d->how_to_get);
        return NULL;
    }
    /* RTLD_LOCAL: the peer's libraries (its CUDA runtime among them) stay its own. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        char why[400];
        snprintf(why, sizeof why, "%s", dlerror());
        snprintf(err, errlen, "peer '%s' is not available: cannot load %s (%s)", d->name, first_line(why),
                 d->how_to_get);
        return NULL;
    }
    vl_peer_entry_fn entry;
    *(void **)&entry = dlsym(lib, VL_PEER_ENTRY_SYMBOL);
    const vl_peer_api *api = entry ? entry() : NULL;
    if (!api || api->abi_version != VL_PEER_ABI_VERSION) {
        snprintf(err, errlen, "peer '%s' is not available: %s is a different vramlab's shim (rebuild it: make peers)",
                 d->name, path);
        return NULL;
    }
    return api;
}

int vl_peer_open(vl_allocator *a, const vl_peer_desc *d, const vl_peer_config *cfg, char *err, size_t errlen)
{
    const vl_peer_api *api = vl_peer_load(d, err, errlen);
    if (!api) return VL_OPEN_SKIP;
    peer_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    char why[300] = "";
    st->api = api;
    st->handle = api->open(cfg, why, sizeof why);
    if (!st->handle) {
        snprintf(err, errlen, "%s (%s): %s", d->name, api->peer_version, why[0] ? why : "could not open");
        free(st);
        return -1;
    }
    a->impl = st;
    return 0;
}

void vl_peer_print_status(const vl_peer_desc *d, FILE *out)
{
    char path[PATH_MAX], err[600];
    if (vl_peer_library_path(d, path, sizeof path, err, sizeof err) != 0) {
        fprintf(out, "    peer library: %s\n", err);
        return;
    }
    const vl_peer_api *api = vl_peer_load(d, err, sizeof err);
    if (api)
        fprintf(out, "    peer library: built and loadable (%s): %s\n", api->peer_version, path);
    else if (access(path, F_OK) != 0)
        fprintf(out, "    peer library: not built: %s (%s)\n", path, d->how_to_get);
    else
        fprintf(out, "    peer library: built, not loadable: %s\n", err);
}

void *vl_peer_alloc(vl_allocator *a, size_t size, vl_stream s)
{
    peer_state *st = a->impl;
    if (size == 0) return NULL;
    return st->api->alloc(st->handle, size, (void *)s);
}

void vl_peer_free(vl_allocator *a, void *ptr, size_t size, vl_stream s)
{
    peer_state *st = a->impl;
    if (!ptr) return;
    st->api->free(st->handle, ptr, size, (void *)s);
}

size_t vl_peer_trim(vl_allocator *a)
{
    peer_state *st = a->impl;
    return st->api->trim ? st->api->trim(st->handle) : 0;
}

/* Each peer counter that is kept (>= 0) replaces VL_UNKNOWN; the others stay unknown. */
static void take(int64_t *field, int64_t value)
{
    if (value >= 0) *field = value;
}

void vl_peer_get_stats(vl_allocator *a, vl_alloc_stats *st)
{
    peer_state *ps = a->impl;
    vl_peer_stats p;
    memset(&p, 0xff, sizeof p); /* every field -1 unless the shim fills it */
    ps->api->stats(ps->handle, &p);
    take(&st->allocated_bytes, p.allocated_bytes);
    take(&st->peak_allocated_bytes, p.peak_allocated_bytes);
    take(&st->reserved_bytes, p.reserved_bytes);
    take(&st->peak_reserved_bytes, p.peak_reserved_bytes);
    take(&st->active_bytes, p.active_bytes);
    take(&st->peak_active_bytes, p.peak_active_bytes);
    take(&st->inactive_split_bytes, p.inactive_split_bytes);
    take(&st->peak_inactive_split_bytes, p.peak_inactive_split_bytes);
    take(&st->segments, p.segments);
    take(&st->device_allocs, p.device_allocs);
    take(&st->device_frees, p.device_frees);
    take(&st->alloc_retries, p.alloc_retries);
}

void vl_peer_reset_peaks(vl_allocator *a)
{
    peer_state *st = a->impl;
    if (st->api->reset_peaks) st->api->reset_peaks(st->handle);
}

void vl_peer_close(vl_allocator *a)
{
    peer_state *st = a->impl;
    st->api->close(st->handle);
    free(st);
}

const char *vl_peer_version(vl_allocator *a)
{
    peer_state *st = a->impl;
    return st->api->peer_version;
}
