/* The smallest capacity at which a trace replays without an OOM (see fit.h). */
#include "fit.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "exitcodes.h"
#include "replay.h"

typedef struct fit_ctx {
    const vl_trace *t;
    vl_stream *streams;
    const vl_spec *device;
    const char *alloc_spec;
    int passes;
    int *status;
    char *err;
    size_t errlen;
} fit_ctx;

/* The caller's sim SPEC with capacity replaced. -1 when it does not fit in buf. */
static int device_text(const vl_spec *device, uint64_t capacity, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "sim:capacity=%llu", (unsigned long long)capacity);
    for (size_t i = 0; i < device->nvalues && used < len; i++) {
        const vl_spec_value *v = &device->values[i];
        if (!v->given || strcmp(v->opt->name, "capacity") == 0) continue;
        used += (size_t)snprintf(buf + used, len - used, ",%s=%s", v->opt->name, v->text);
    }
    return used < len ? 0 : -1;
}

/* 1 when every pass replays without an OOM, 0 when one had one, -1 out of host memory. */
static int replay_fits(fit_ctx *x, vl_allocator *a)
{
    vl_replay r;
    if (vl_replay_init(&r, x->t, a, x->streams) != 0) {
        *x->status = VL_EXIT_FAIL;
        snprintf(x->err, x->errlen, "out of host memory");
        return -1;
    }
    int fits = 1;
    for (int pass = 0; pass < x->passes && fits; pass++) {
        vl_replay_pass rp;
        vl_replay_pass_run(&r, &rp);
        if (rp.ooms) fits = 0;
    }
    vl_replay_destroy(&r);
    return fits;
}

/* One try: 1 fits, 0 an OOM in some pass (or the allocator cannot open on a device this
 * small: check_open = 0), -1 an error (in ctx). */
static int try_capacity(fit_ctx *x, uint64_t capacity, int check_open)
{
    char spec[VL_SPEC_MAX_TEXT * 2];
    int status = 0;
    if (device_text(x->device, capacity, spec, sizeof spec) != 0) {
        *x->status = VL_EXIT_USAGE;
        snprintf(x->err, x->errlen, "--device: the SPEC is too long");
        return -1;
    }
    vl_device *dev = vl_device_open(spec, &status, x->err, x->errlen);
    if (!dev) {
        *x->status = status;
        return -1;
    }
    vl_allocator *a = vl_alloc_open(x->alloc_spec, dev, &status, x->err, x->errlen);
    if (!a) {
        vl_device_close(dev);
        if (!check_open && status == VL_EXIT_USAGE) return 0; /* e.g. a granule larger than the device */
        *x->status = status;
        return -1;
    }
    int fits = check_open ? 1 : replay_fits(x, a);
    vl_alloc_close(a);
    if (fits >= 0 && dev->failed_calls) {
        *x->status = VL_EXIT_FAIL;
        snprintf(x->err, x->errlen, "%s at capacity %llu: a device call failed (%s)", x->alloc_spec,
                 (unsigned long long)capacity, dev->first_failure);
        fits = -1;
    }
    vl_device_close(dev);
    return fits;
}

int vl_trace_fit_capacity(const vl_trace *t, vl_stream *streams, const vl_spec *device, const char *alloc_spec,
                          uint64_t resolution, int passes, vl_trace_fit *out, int *status, char *err, size_t errlen)
{
    fit_ctx x = {t, streams, device, alloc_spec, passes < 1 ? 1 : passes, status, err, errlen};
    memset(out, 0, sizeof *out);
    if (resolution == 0) resolution = 1;
    /* Below the peak live bytes plus the context's overhead nothing fits. */
    uint64_t need = t->peak_live_bytes + vl_spec_size(device, "overhead");
    uint64_t k = need ? (need - 1) / resolution + 1 : 1; /* the smallest multiple >= need */
    const uint64_t max_limit = (uint64_t)1 << 50;
    uint64_t limit = need > (uint64_t)1 << 24 ? need * 64 : (uint64_t)1 << 30;
    if (limit > max_limit) limit = max_limit;
    uint64_t max_k = limit / resolution;
    if (max_k < k) max_k = k;
    out->limit = max_k * resolution;
    /* A SPEC that cannot open even on the largest device is an error, not "never fits". */
    if (try_capacity(&x, out->limit, 1) < 0) return -1;

    uint64_t lo = k - 1, hi = k; /* lo * resolution < need: known not to fit */
    for (;;) {
        out->tries++;
        int rc = try_capacity(&x, hi * resolution, 0);
        if (rc < 0) return -1;
        if (rc == 1) break;
        lo = hi;
        if (hi >= max_k) return 0; /* never fitted: found = 0 */
        hi = hi > max_k / 2 ? max_k : hi * 2;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        out->tries++;
        int rc = try_capacity(&x, mid * resolution, 0);
        if (rc < 0) return -1;
        if (rc == 1) hi = mid;
        else lo = mid;
    }
    out->found = 1;
    out->smallest_capacity = hi * resolution;
    return 0;
}
