/* --alloc SPEC: the backend registry (see alloc.h). */
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

#include "exitcodes.h"

static const vl_alloc_backend *const backends[] = {
    &vl_backend_raw, &vl_backend_async, &vl_backend_caching, &vl_backend_plugin, &vl_backend_torch, &vl_backend_rmm,
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

void vl_alloc_stats_unknown(vl_alloc_stats *st)
{
    int64_t *field = (int64_t *)st;
    for (size_t i = 0; i < sizeof *st / sizeof(int64_t); i++) field[i] = VL_UNKNOWN;
}

#define STATS_FIELD(f) {#f, offsetof(vl_alloc_stats, f)}
const vl_alloc_stats_field vl_alloc_stats_fields[] = {
    STATS_FIELD(requested_bytes),      STATS_FIELD(peak_requested_bytes),
    STATS_FIELD(allocated_bytes),      STATS_FIELD(peak_allocated_bytes),
    STATS_FIELD(reserved_bytes),       STATS_FIELD(peak_reserved_bytes),
    STATS_FIELD(active_bytes),         STATS_FIELD(peak_active_bytes),
    STATS_FIELD(inactive_split_bytes), STATS_FIELD(peak_inactive_split_bytes),
    STATS_FIELD(segments),             STATS_FIELD(device_allocs),
    STATS_FIELD(device_frees),         STATS_FIELD(alloc_retries),
    STATS_FIELD(ooms),                 STATS_FIELD(largest_free_block_bytes),
    STATS_FIELD(allocs),               STATS_FIELD(frees),
};
const size_t vl_alloc_stats_nfields = sizeof vl_alloc_stats_fields / sizeof vl_alloc_stats_fields[0];
_Static_assert(sizeof vl_alloc_stats_fields / sizeof vl_alloc_stats_fields[0] == sizeof(vl_alloc_stats) / sizeof(int64_t),
               "every field of vl_alloc_stats has its name");

static const vl_alloc_backend *find_backend(const char *name, char *err, size_t errlen)
{
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(backends[i]->name, name) == 0) return backends[i];
    snprintf(err, errlen, "unknown allocator '%s' (allocators: raw, async, caching, plugin, torch, rmm; '--alloc help' lists options)", name);
    return NULL;
}

/* Named SPECs: a name for a SPEC worth knowing by heart. Options after the name
 * (lowwaste:span=8MiB) replace the named ones of the same key, or add to them. */
typedef struct named_spec {
    const char *name, *spec, *summary;
} named_spec;
static const named_spec named_specs[] = {
    {"lowwaste", "caching:segments=expandable,span=0,reclaim=0.008,reclaim_max=0.008,lend=1,top=fit",
     "expandable segments that waste least: a map call per 2 MiB chunk and a fixed 0.8% reclaim budget, paid in "
     "map calls (docs/allocators.md, \"The low-waste SPEC\")"},
};
#define NNAMED (sizeof named_specs / sizeof named_specs[0])

/* Whether the options OPTS (key=value,...) give KEY (of length n). */
static int gives_key(const char *opts, const char *key, size_t n)
{
    for (const char *o = opts; *o; o += strcspn(o, ","), o += *o == ',') {
        size_t k = strcspn(o, "=,");
        if (k == n && strncmp(o, key, n) == 0) return 1;
    }
    return 0;
}

static int append(char *out, size_t outlen, size_t *len, const char *what, size_t n)
{
    if (*len + n >= outlen) return -1;
    memcpy(out + *len, what, n);
    *len += n;
    out[*len] = '\0';
    return 0;
}

int vl_alloc_spec_expand(const char *spec, char *out, size_t outlen, char *err, size_t errlen)
{
    char name[64];
    if (vl_spec_name(spec, name, sizeof name, err, errlen) != 0) return -1;
    const named_spec *n = NULL;
    for (size_t i = 0; i < NNAMED; i++)
        if (strcmp(named_specs[i].name, name) == 0) n = &named_specs[i];
    size_t len = 0;
    int rc = 0;
    if (!n) {
        rc = append(out, outlen, &len, spec, strlen(spec));
    } else {
        const char *given = spec + strlen(name);
        given += *given == ':';
        const char *named = strchr(n->spec, ':') + 1;
        rc = append(out, outlen, &len, n->spec, (size_t)(named - 1 - n->spec));
        const char *sep = ":";
        for (const char *o = named; *o && rc == 0; o += strcspn(o, ","), o += *o == ',') {
            size_t olen = strcspn(o, ",");
            if (gives_key(given, o, strcspn(o, "="))) continue;
            rc = append(out, outlen, &len, sep, 1) || append(out, outlen, &len, o, olen);
            sep = ",";
        }
        if (*given && rc == 0) rc = append(out, outlen, &len, sep, 1) || append(out, outlen, &len, given, strlen(given));
    }
    if (rc != 0) snprintf(err, errlen, "SPEC '%.40s...' is too long", spec);
    return rc ? -1 : 0;
}

int vl_alloc_spec_parse(const char *spec, vl_spec *out, char *err, size_t errlen)
{
    char name[64], text[VL_SPEC_MAX_TEXT];
    if (vl_alloc_spec_expand(spec, text, sizeof text, err, errlen) != 0) return -1;
    if (vl_spec_name(text, name, sizeof name, err, errlen) != 0) return -1;
    const vl_alloc_backend *b = find_backend(name, err, errlen);
    if (!b || vl_spec_parse(text, b->options, out, err, errlen) != 0) return -1;
    return b->check_spec ? b->check_spec(out, err, errlen) : 0;
}

int vl_alloc_needs_cuda(const char *name)
{
    char err[160];
    const vl_alloc_backend *b = find_backend(name, err, sizeof err);
    return b && b->needs_cuda;
}

int vl_alloc_spec_check(const char *spec, char *err, size_t errlen)
{
    vl_spec parsed;
    return vl_alloc_spec_parse(spec, &parsed, err, errlen);
}

vl_allocator *vl_alloc_open(const char *spec, vl_device *dev, int *status, char *err, size_t errlen)
{
    vl_spec parsed;
    *status = VL_EXIT_USAGE;
    if (vl_alloc_spec_parse(spec, &parsed, err, errlen) != 0) return NULL;
    return vl_alloc_open_spec(&parsed, dev, status, err, errlen);
}

vl_allocator *vl_alloc_open_spec(const vl_spec *spec, vl_device *dev, int *status, char *err, size_t errlen)
{
    const vl_alloc_backend *b = find_backend(spec->name, err, errlen);
    *status = VL_EXIT_USAGE;
    if (!b) return NULL;
    if (b->needs_cuda && dev->simulated) {
        *status = VL_EXIT_SKIP;
        snprintf(err, errlen, "allocator '%s' needs a CUDA device, not the simulated one", b->name);
        return NULL;
    }
    vl_allocator *a = calloc(1, sizeof *a);
    if (!a) {
        *status = VL_EXIT_FAIL;
        snprintf(err, errlen, "out of host memory");
        return NULL;
    }
    a->backend = b;
    a->dev = dev;
    a->counts_requests = b->counts_requests;
    snprintf(a->spec, sizeof a->spec, "%s", spec->text);
    int orc = b->open(a, spec, err, errlen);
    if (orc != 0) {
        *status = orc == VL_OPEN_USAGE ? VL_EXIT_USAGE : orc == VL_OPEN_SKIP ? VL_EXIT_SKIP : VL_EXIT_FAIL;
        free(a);
        return NULL;
    }
    return a;
}

void vl_alloc_close(vl_allocator *a)
{
    if (!a) return;
    a->backend->close(a);
    free(a->last_oom);
    free(a);
}

void vl_alloc_help(FILE *out)
{
    fprintf(out, "allocators (--alloc SPEC, SPEC = NAME[:key=value,...]; sizes like 512, 4KiB, 2MiB, 1.5GiB):\n");
    for (size_t i = 0; i < NBACKENDS; i++) {
        const vl_alloc_backend *b = backends[i];
        fprintf(out, "  %-8s %s%s\n", b->name, b->summary, b->needs_cuda ? "" : " [also on --device sim]");
        vl_spec_print_docs(out, b->options);
        for (size_t k = 0; k < NNAMED; k++)
            if (strncmp(named_specs[k].spec, b->name, strlen(b->name)) == 0 && named_specs[k].spec[strlen(b->name)] == ':')
                fprintf(out, "  %-8s = %s: %s\n", named_specs[k].name, named_specs[k].spec, named_specs[k].summary);
        if (b->print_status) b->print_status(out);
    }
}

const char *vl_alloc_capture_refusal(const vl_allocator *a, const vl_spec *spec)
{
    return a->backend->capture_refusal ? a->backend->capture_refusal(spec) : NULL;
}
