/* The out-of-memory report (oom_report.h) and its glue to every allocator (alloc.h):
 * the figures any backend has (SPEC, request, device memory, its statistics), then the
 * backend's own hook, and the bounded probe that raw and async use. */
#include "oom_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "scenario/largest_alloc.h"
#include "size.h"

void vl_oom_report_unknown(vl_oom_report *r)
{
    memset(r, 0, sizeof *r);
    int64_t *const unknown[] = {
        &r->request_bytes,        &r->rounded_bytes,         &r->device_free_bytes,   &r->device_total_bytes,
        &r->allocated_bytes,      &r->reserved_bytes,        &r->reserved_unused_bytes, &r->cached_free_bytes,
        &r->largest_block_bytes,  &r->largest_free_bytes,  &r->probe_attempts,        &r->probe_resolution_bytes, &r->releasable_bytes,
        &r->largest_after_release_bytes, &r->ooms,
    };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) *unknown[i] = VL_UNKNOWN;
    r->largest_block_method = "unknown";
    r->fragmentation = NAN;
    r->fits_after_release = -1;
    r->fits_after_release_basis = "unknown";
}

void vl_oom_report_derive_fragmentation(vl_oom_report *r)
{
    r->fragmentation = NAN;
    if (r->largest_free_bytes < 0 || r->device_free_bytes < 0 || r->cached_free_bytes < 0) return;
    int64_t usable = r->device_free_bytes + r->cached_free_bytes;
    if (usable <= 0) return; /* nothing free: no share of it to speak of */
    double f = 1.0 - (double)r->largest_free_bytes / (double)usable;
    r->fragmentation = f < 0 ? 0 : f; /* a probe's rounding never makes it negative */
}

typedef struct out_buf {
    char *p;
    size_t len, used;
} out_buf;

static void put(out_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf *o, const char *fmt, ...)
{
    if (o->used + 1 >= o->len) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->p + o->used, o->len - o->used, fmt, ap);
    va_end(ap);
    if (n > 0) o->used += (size_t)n < o->len - o->used ? (size_t)n : o->len - o->used - 1;
}

static void put_bytes(out_buf *o, const char *key, int64_t v)
{
    char h[32];
    if (v < 0) put(o, "%s: unknown\n", key);
    else put(o, "%s: %" PRId64 " (%s)\n", key, v, vl_format_size((uint64_t)v, h, sizeof h));
}

size_t vl_oom_report_format(const vl_oom_report *r, char *buf, size_t len)
{
    out_buf o = {buf, len, 0};
    if (len) buf[0] = '\0';
    put(&o, "oom_report: %s\n", r->alloc[0] ? r->alloc : "unknown");
    put_bytes(&o, "request_bytes", r->request_bytes);
    put_bytes(&o, "rounded_bytes", r->rounded_bytes);
    put_bytes(&o, "device_free_bytes", r->device_free_bytes);
    put_bytes(&o, "device_total_bytes", r->device_total_bytes);
    put_bytes(&o, "allocated_bytes", r->allocated_bytes);
    put_bytes(&o, "reserved_bytes", r->reserved_bytes);
    put_bytes(&o, "reserved_unused_bytes", r->reserved_unused_bytes);
    put_bytes(&o, "cached_free_bytes", r->cached_free_bytes);
    put_bytes(&o, "largest_block_bytes", r->largest_block_bytes);
    if (strcmp(r->largest_block_method, "probe") == 0 && r->probe_resolution_bytes > 0) {
        char h[32];
        put(&o, "largest_block_method: probe (%" PRId64 " attempts, %s resolution)\n", r->probe_attempts,
            vl_format_size((uint64_t)r->probe_resolution_bytes, h, sizeof h));
    } else {
        put(&o, "largest_block_method: %s\n", r->largest_block_method);
    }
    put_bytes(&o, "largest_free_bytes", r->largest_free_bytes);
    if (isnan(r->fragmentation))
        put(&o, "fragmentation: unknown\n");
    else
        put(&o, "fragmentation: %.4f (1 - largest_free / (device_free + cached_free))\n", r->fragmentation);
    put_bytes(&o, "releasable_bytes", r->releasable_bytes);
    put_bytes(&o, "largest_after_release_bytes", r->largest_after_release_bytes);
    put(&o, "fits_after_release: %s (%s)\n",
        r->fits_after_release == 1 ? "yes" : r->fits_after_release == 0 ? "no" : "unknown", r->fits_after_release_basis);
    if (r->ooms < 0) put(&o, "ooms: unknown\n");
    else put(&o, "ooms: %" PRId64 "\n", r->ooms);
    return o.used;
}

void vl_oom_report_print(const vl_oom_report *r, const char *prefix, FILE *out)
{
    char text[4096];
    vl_oom_report_format(r, text, sizeof text);
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        fprintf(out, "%s%.*s\n", prefix, (int)n, line);
        line += n + (line[n] == '\n');
    }
}

void vl_alloc_oom_report(vl_allocator *a, size_t size, vl_stream s, vl_oom_report *r)
{
    vl_oom_report_unknown(r);
    snprintf(r->alloc, sizeof r->alloc, "%s", a->spec);
    r->request_bytes = (int64_t)size;
    size_t dev_free = 0, dev_total = 0;
    if (a->dev && a->dev->ops->mem_info(a->dev, &dev_free, &dev_total) == VL_DEV_OK) {
        r->device_free_bytes = (int64_t)dev_free;
        r->device_total_bytes = (int64_t)dev_total;
    }
    vl_alloc_stats st;
    vl_alloc_stats_get(a, &st);
    r->allocated_bytes = st.allocated_bytes;
    r->reserved_bytes = st.reserved_bytes;
    if (st.allocated_bytes >= 0 && st.reserved_bytes >= 0)
        r->reserved_unused_bytes = st.reserved_bytes - st.allocated_bytes;
    r->ooms = st.ooms;
    if (a->backend->oom_report) a->backend->oom_report(a, size, s, r);
    vl_oom_report_derive_fragmentation(r);
}

void vl_alloc_note_oom(vl_allocator *a, size_t size, vl_stream s)
{
    if (a->oom_report_mode == VL_OOM_REPORT_FIRST && a->oom_reports_taken > 0) {
        a->oom_reports_skipped++;
        return;
    }
    if (!a->last_oom && (a->last_oom = malloc(sizeof *a->last_oom)) == NULL) return; /* no report, still an OOM */
    vl_alloc_oom_report(a, size, s, a->last_oom);
    a->oom_reports_taken++;
    if (a->oom_report_mode == VL_OOM_REPORT_FIRST) vl_oom_report_print(a->last_oom, "", stderr);
}

int vl_alloc_oom_reports(vl_allocator *a, int mode)
{
    int old = a->oom_report_mode;
    a->oom_report_mode = mode;
    return old;
}

typedef struct probe_ctx {
    vl_oom_probe_fn try_alloc;
    void *ctx;
} probe_ctx;

static int probe_fits(void *ctx, size_t bytes)
{
    probe_ctx *p = ctx;
    return p->try_alloc(p->ctx, bytes);
}

void vl_oom_report_probe(vl_oom_report *r, size_t upper, vl_oom_probe_fn try_alloc, void *ctx)
{
    probe_ctx p = {try_alloc, ctx};
    vl_largest_alloc found = vl_largest_fit(upper, VL_OOM_PROBE_RESOLUTION, probe_fits, &p);
    r->largest_block_bytes = (int64_t)found.largest_bytes;
    r->largest_free_bytes = r->largest_block_bytes;
    r->largest_block_method = "probe";
    r->probe_attempts = (int64_t)found.probes;
    r->probe_resolution_bytes = (int64_t)VL_OOM_PROBE_RESOLUTION;
}
