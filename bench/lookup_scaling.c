/* bench/lookup_scaling: does an allocation get slower as the allocator's tables grow?
 * Two cases, each at growing counts:
 *   cached:  N free blocks cached in ONE size class (each kept apart from the next by
 *            a live 512 B block, so none coalesce), then allocations of random sizes
 *            from that class, each freed again: the best-fit search in a class;
 *   streams: N streams with a cached block each, then allocations on random streams:
 *            the stream lookup (and the pointer table, in both).
 * Reports per-call latency percentiles at each count. A scalable allocator keeps p99
 * at the largest count near the median at the smallest. Meant for --device sim (the
 * blocks would need tens of GB on a GPU): its times are host CPU time of the policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "exitcodes.h"
#include "program.h"
#include "rng.h"
#include "stats.h"

#define MAX_COUNTS 16

static const char default_streams[] = "1,1000,10000", quick_streams[] = "1,1000";
static const char *cached_list = "1000,10000,100000", *stream_list = default_streams;
static uint64_t class_size = UINT64_C(256) << 10;
static int64_t samples = 20000;

static const vl_cli_opt options[] = {
    {"cached", VL_CLI_STRING, &cached_list, "cached-block counts, increasing (comma-separated; '-': skip)", 0, 0, VL_QUICK_DEFAULT, "1000,10000"},
    {"streams", VL_CLI_STRING, &stream_list, "stream counts, increasing (comma-separated; '-': skip)", 0, 0, VL_QUICK_DEFAULT, quick_streams},
    {"class-size", VL_CLI_SIZE, &class_size, "the size class of the cached blocks (its lower end)", 64 << 10, 1 << 20},
    {"samples", VL_CLI_INT, &samples, "timed allocations per count; --quick: 2000", 100, 1e8, VL_QUICK_AT_MOST, "2000"},
    {NULL},
};

static int64_t cached_counts[MAX_COUNTS], stream_counts[MAX_COUNTS];
static size_t ncached, nstreams;

/* "1,10,100" -> counts (each >= 1, increasing, at most 10^7); "-" -> none. */
static size_t parse_counts(vl_cli *cli, const char *flag, const char *text, int64_t *out)
{
    if (strcmp(text, "-") == 0) return 0;
    size_t n = 0;
    const char *s = text;
    for (;;) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 1 || v > 10000000 || (n && v <= out[n - 1]) || n == MAX_COUNTS)
            vl_cli_usage_error(cli, "--%s: expected up to %d increasing counts in [1, 10^7], not '%s'", flag,
                               MAX_COUNTS, text);
        out[n++] = v;
        if (*end == '\0') return n;
        if (*end != ',') vl_cli_usage_error(cli, "--%s: expected comma-separated counts, not '%s'", flag, text);
        s = end + 1;
    }
}

static void check_options(vl_cli *cli)
{
    ncached = parse_counts(cli, "cached", cached_list, cached_counts);
    nstreams = parse_counts(cli, "streams", stream_list, stream_counts);
    /* The stream case passes made-up stream handles, which only the simulated device's
     * allocators take as opaque keys; a CUDA backend would dereference them. On a GPU the
     * case is left out unless asked for, and then refused. */
    if (nstreams && strcmp(cli->device.name, "sim") != 0) {
        if (stream_list != default_streams && stream_list != quick_streams) /* given on the command line */
            vl_cli_usage_error(cli, "--streams needs --device sim (it uses stream tokens, not CUDA streams)");
        nstreams = 0;
    }
}

static const vl_program_def def = {
    .summary = "allocation latency as cached blocks and streams grow (size-class, stream and pointer lookups)",
    .default_alloc = "caching",
    .options = options,
    .check_options = check_options,
};

/* Sizes inside one class: classes split each power of two into 32 (lib/caching/bins.h),
 * so [class_size, class_size * 33/32) is one class for a power-of-two class_size. */
static size_t size_in_class(vl_rng *rng)
{
    uint64_t steps = class_size / 32 / 512;
    return (size_t)(class_size + 512 * vl_rng_below(rng, steps ? steps : 1));
}

typedef struct held {
    void **p;
    vl_stream *s;
    size_t n, cap;
} held;

static int hold(held *h, void *p, vl_stream s)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 1024;
        void **np = realloc(h->p, cap * sizeof *np);
        if (!np) return -1;
        h->p = np;
        vl_stream *ns = realloc(h->s, cap * sizeof *ns);
        if (!ns) return -1;
        h->s = ns;
        h->cap = cap;
    }
    h->p[h->n] = p;
    h->s[h->n++] = s;
    return 0;
}

static vl_stream stream_token(int64_t i) { return (vl_stream)(uintptr_t)(i == 0 ? 0 : 0x1000 + 16 * i); }

static void row(vl_program *p, const char *which, int64_t count, double *ns, size_t n, size_t ooms)
{
    char c1[256];
    vl_summary s = vl_summarize(ns, n);
    vl_csv_row(p->csv, "%d,%s,%lld,%zu,%zu,%s", p->dev->simulated, which, (long long)count, n, ooms,
               vl_summary_values(&s, c1, sizeof c1));
}

/* Time `samples` alloc+free pairs; sizes from size_in_class, streams from pick. */
static size_t time_allocs(vl_program *p, vl_rng *rng, int64_t nstream, double *ns, size_t *ooms)
{
    size_t n = 0;
    for (int64_t i = 0; i < samples; i++) {
        size_t size = size_in_class(rng);
        vl_stream s = stream_token(nstream > 1 ? (int64_t)vl_rng_below(rng, (uint64_t)nstream) : 0);
        uint64_t t0 = vl_now_ns();
        void *q = vl_allocate(p->alloc, size, s);
        uint64_t t1 = vl_now_ns();
        if (!q) {
            (*ooms)++;
            continue;
        }
        ns[n++] = (double)(t1 - t0);
        vl_deallocate(p->alloc, q, size, s);
    }
    return n;
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    vl_rng rng;
    vl_rng_seed(&rng, p.cli.seed);
    double *ns = malloc((size_t)samples * sizeof *ns);
    held keep = {0}, cached = {0};
    if (!ns) {
        fprintf(stderr, "%s: out of host memory\n", p.cli.prog);
        return VL_EXIT_FAIL;
    }
    vl_csv_meta(p.csv, "timing", "host monotonic clock around each allocation call (each followed by its free)");
    char c1[256], header[512];
    snprintf(header, sizeof header, "simulated,case,count,samples,ooms,%s",
             vl_summary_columns("alloc", "ns", c1, sizeof c1));
    vl_csv_header(p.csv, header);
    int status = VL_EXIT_OK;

    /* cached: grow to each count, freeing the new class-sized blocks between keepers. */
    size_t made = 0;
    for (size_t k = 0; k < ncached && status == VL_EXIT_OK; k++) {
        size_t first_new = cached.n;
        for (; made < (size_t)cached_counts[k]; made++) {
            void *a = vl_allocate(p.alloc, size_in_class(&rng), NULL), *b = vl_allocate(p.alloc, 512, NULL);
            if (!a || !b || hold(&cached, a, NULL) != 0 || hold(&keep, b, NULL) != 0) {
                fprintf(stderr, "%s: could not set up %lld cached blocks (out of memory)\n", p.cli.prog,
                        (long long)cached_counts[k]);
                if (a) vl_deallocate(p.alloc, a, 0, NULL);
                if (b) vl_deallocate(p.alloc, b, 0, NULL);
                status = VL_EXIT_FAIL;
                break;
            }
        }
        for (size_t i = first_new; i < cached.n; i++) vl_deallocate(p.alloc, cached.p[i], 0, NULL);
        if (status != VL_EXIT_OK) break;
        size_t ooms = 0, n = time_allocs(&p, &rng, 1, ns, &ooms);
        row(&p, "cached", cached_counts[k], ns, n, ooms);
    }
    for (size_t i = 0; i < keep.n; i++) vl_deallocate(p.alloc, keep.p[i], 0, keep.s[i]);
    keep.n = 0;
    vl_trim(p.alloc);

    /* streams: one cached block per stream, then allocations on random streams. */
    int64_t known = 0;
    for (size_t k = 0; k < nstreams && status == VL_EXIT_OK; k++) {
        for (; known < stream_counts[k]; known++) {
            size_t size = size_in_class(&rng);
            void *a = vl_allocate(p.alloc, size, stream_token(known));
            if (!a) {
                fprintf(stderr, "%s: could not set up %lld streams (out of memory)\n", p.cli.prog,
                        (long long)stream_counts[k]);
                status = VL_EXIT_FAIL;
                break;
            }
            vl_deallocate(p.alloc, a, size, stream_token(known));
        }
        if (status != VL_EXIT_OK) break;
        size_t ooms = 0, n = time_allocs(&p, &rng, stream_counts[k], ns, &ooms);
        row(&p, "streams", stream_counts[k], ns, n, ooms);
    }
    vl_trim(p.alloc);
    free(keep.p);
    free(keep.s);
    free(cached.p);
    free(cached.s);
    free(ns);
    int finish = vl_program_finish(&p);
    return status != VL_EXIT_OK ? status : finish;
}
