/* bench/replay: replays an allocation trace (vramlab, torch-csv, torch-pickle, rmm;
 * formats in lib/trace/trace.h) against any allocator, on a GPU or on the simulated
 * device, and reports per pass: operations/s, alloc and free latency percentiles,
 * peak allocated and peak reserved bytes and their ratio, OOMs.
 *
 * Pass 1 starts from a cold allocator; later passes replay the same trace again on
 * the warm allocator (a caching allocator then serves from its cache). The trace is
 * read and checked before any device work, so a malformed trace is a usage error (2)
 * with FILE:LINE: reason, also on machines without a GPU. The first OOM prints its
 * report on stderr (lib/oom_report.h).
 *
 * --fit SETTINGS (with --device sim) answers "would this trace have fitted with setting
 * X" instead: for each allocator SPEC, the smallest simulated capacity at which every
 * pass replays without an OOM (lib/trace/fit.h), one CSV row per SPEC.
 *
 * --static-layout (with --device sim) replays nothing: it lays the trace out offline, each
 * block at one offset for its whole life, knowing every lifetime (lib/trace/layout.h), and
 * writes one row per heuristic and the best: how little an allocator that never moves a
 * block, so makes no map or unmap call once warm, could reserve for this trace. Its
 * metadata say whether the trace repeats exactly, and with what period
 * (lib/trace/period.h).
 *
 * --growth-log FILE (caching allocator) writes every growth to a second CSV: the request,
 * the largest free block it could have used, the free bytes, reserved before and after,
 * the device calls (lib/caching/caching.h, vl_caching_growth): where reserved rose
 * although memory was free, and how much.
 *
 * With a caching SPEC with plan=1 (lib/caching/plan.h) each pass row also says what the
 * plan did so far: its state after the pass, plans made, started, ended, requests served
 * from it, its period and arena, and why the last one ended (plan_* columns). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/calls.h"
#include "bench/peaks.h"
#include "caching/caching.h"
#include "caching/plan.h"
#include "caching/sizes.h"
#include "bench/streams.h"
#include "exitcodes.h"
#include "program.h"
#include "stats.h"
#include "trace/fit.h"
#include "trace/layout.h"
#include "trace/period.h"
#include "trace/load.h"
#include "trace/replay.h"
#include "trace/trace.h"

static const char *trace_path = NULL;
static const char *format_name = "auto";
static const char free_at_default[] = "completed";
static const char *free_at_name = free_at_default; /* another pointer: --free-at was given */
static int64_t passes = 3;
static const char *fit_list = NULL;
static uint64_t fit_resolution = 0;
static const char *growth_log_path = NULL;
static int static_layout = 0;
static uint64_t layout_chunk = 0;
static uint64_t layout_split = 0;
#define VL_LAYOUT_DEFAULT_CHUNK ((uint64_t)2 << 20)
#define VL_LAYOUT_ALIGN VL_CACHING_MIN_BLOCK /* the caching allocator's rounding */

/* --fit default: vramlab's caching allocator in both segment modes (raw and async need
 * a CUDA device; --fit replays on the simulated one). */
static const char *const fit_defaults[] = {"caching", "caching:segments=expandable"};
#define VL_FIT_MAX_SPECS 16
#define VL_FIT_DEFAULT_RESOLUTION ((uint64_t)2 << 20)
static char fit_specs[VL_FIT_MAX_SPECS][VL_SPEC_MAX_TEXT];
static size_t nfit_specs;

static const vl_cli_opt options[] = {
    {"trace", VL_CLI_STRING, &trace_path, "trace file, '-' for standard input (required)", 0, 0},
    {"format", VL_CLI_ENUM, &format_name, "auto|vramlab|torch-csv|torch-pickle|rmm", 0, 0, .choices = "auto|vramlab|torch-csv|torch-pickle|rmm"},
    {"free-at", VL_CLI_ENUM, &free_at_name, "torch-csv: a free takes effect at completed|requested", 0, 0, .choices = "completed|requested"},
    {"passes", VL_CLI_INT, &passes, "replays of the trace (the first one cold); --quick: 2", 1, 1000, VL_QUICK_AT_MOST, "2"},
    {"fit", VL_CLI_STRING, &fit_list,
     "with --device sim: for each allocator SPEC ('SPEC;SPEC;...', or 'default': caching and "
     "caching:segments=expandable), the smallest capacity at which every pass replays without an OOM, "
     "by bisection of sim:capacity; one CSV row per SPEC instead of the pass rows; --alloc is not used",
     0, 0},
    {"fit-resolution", VL_CLI_SIZE, &fit_resolution,
     "--fit: the capacity step of the search (0: 2 MiB, the simulated device's default granularity, "
     "at which the answer is exact)", 0, (double)(1ull << 40)},
    {"static-layout", VL_CLI_FLAG, &static_layout,
     "with --device sim: replay nothing; lay the trace out offline, every block at one offset for its whole life, "
     "with each heuristic of lib/trace/layout.h, and write one row per heuristic and the best: footprint (chunks "
     "touched) / peak live bytes, what a static layout needs; --alloc is not used", 0, 0},
    {"layout-chunk", VL_CLI_SIZE, &layout_chunk,
     "--static-layout: the mapping grain the footprint counts in (0: 2 MiB, expandable's chunk; a power of two "
     ">= 512)", 0, (double)(1ull << 40)},
    {"layout-split", VL_CLI_SIZE, &layout_split,
     "--static-layout: also lay out the requests below this size and those from it up apart, as pools of their "
     "own would, and add their footprints (0: no split)", 0, (double)(1ull << 50)},
    {"growth-log", VL_CLI_STRING, &growth_log_path,
     "caching allocator: write every growth (request, largest usable free block, free bytes, reserved before and "
     "after, device calls; pass and operation) to this CSV file", 0, 0},
    {NULL},
};

static void check_options(vl_cli *cli);

static const vl_program_def def = {
    .summary = "replay an allocation trace against an allocator: ops/s, latency, peak reserved/allocated",
    .default_alloc = "caching",
    .options = options,
    .check_options = check_options,
    .input = &trace_path,
};

static vl_trace trace;

/* Before the device is opened: reads and checks the trace, so a malformed one is a
 * usage error (exit 2) with FILE:LINE: reason also without a GPU. */
static void load_trace(vl_cli *cli)
{
    vl_trace_options opt = {0};
    char err[512];
    if (!trace_path) vl_cli_usage_error(cli, "--trace FILE is required ('-' reads standard input)");
    vl_trace_format_parse(format_name, &opt.format); /* a name of --format's choices */
    opt.free_at = strcmp(free_at_name, "requested") == 0 ? VL_TRACE_FREE_AT_REQUESTED : VL_TRACE_FREE_AT_COMPLETED;
    int rc = vl_trace_load(trace_path, &opt, &trace, err, sizeof err);
    if (rc == -1) fprintf(stderr, "%s: %s\n", cli->prog, err);
    if (rc != 0) exit(VL_EXIT_USAGE); /* -2: the pickle converter already said why */
    if (free_at_name != free_at_default && trace.format != VL_TRACE_TORCH_CSV && trace.format != VL_TRACE_TORCH_PICKLE) {
        const char *format = vl_trace_format_name(trace.format);
        vl_trace_free(&trace);
        vl_cli_usage_error(cli, "--free-at applies to torch traces only; %s is a %s trace", trace_path, format);
    }
    if (trace.unknown_frees)
        fprintf(stderr, "%s: %s\n", cli->prog, vl_trace_unknown_frees_note(&trace, trace_path, err, sizeof err));
}

/* --fit: splits the list, checks each SPEC (before any device opens). */
static void parse_fit(vl_cli *cli)
{
    if (!fit_list) {
        if (fit_resolution) vl_cli_usage_error(cli, "--fit-resolution applies to --fit only");
        return;
    }
    if (strcmp(cli->device.name, "sim") != 0)
        vl_cli_usage_error(cli, "--fit searches the capacity of the simulated device: add --device sim[:OPTIONS]");
    if (strcmp(fit_list, "default") == 0) {
        for (size_t i = 0; i < sizeof fit_defaults / sizeof fit_defaults[0]; i++)
            snprintf(fit_specs[nfit_specs++], VL_SPEC_MAX_TEXT, "%s", fit_defaults[i]);
        return;
    }
    const char *p = fit_list;
    for (;;) {
        size_t n = strcspn(p, ";");
        if (n == 0) vl_cli_usage_error(cli, "--fit: an empty SPEC in '%s' (SPEC;SPEC;... or default)", fit_list);
        if (nfit_specs == VL_FIT_MAX_SPECS) vl_cli_usage_error(cli, "--fit: more than %d SPECs", VL_FIT_MAX_SPECS);
        if (n >= VL_SPEC_MAX_TEXT) vl_cli_usage_error(cli, "--fit: a SPEC longer than %d characters", VL_SPEC_MAX_TEXT - 1);
        char *spec = fit_specs[nfit_specs++];
        memcpy(spec, p, n);
        spec[n] = '\0';
        vl_spec parsed;
        char err[512];
        if (vl_alloc_spec_parse(spec, &parsed, err, sizeof err) != 0) vl_cli_usage_error(cli, "--fit: %s", err);
        if (vl_alloc_needs_cuda(parsed.name))
            vl_cli_usage_error(cli, "--fit: '%s' needs a CUDA device; --fit replays on the simulated device", spec);
        if (p[n] == '\0') break;
        p += n + 1;
    }
}

/* --growth-log: a caching allocator's, into a file that is no input (the trace, a file
 * of the SPECs, the program) and not -o's. */
static void check_growth_log(vl_cli *cli)
{
    if (!growth_log_path) return;
    if (fit_list) vl_cli_usage_error(cli, "--growth-log applies to replay passes, not to --fit");
    if (strcmp(cli->alloc.name, "caching") != 0)
        vl_cli_usage_error(cli, "--growth-log needs --alloc caching[:...] (it is the caching allocator's), not '%s'",
                           cli->alloc.name);
    if (strcmp(growth_log_path, "-") == 0) vl_cli_usage_error(cli, "--growth-log needs a file, not standard output");
    vl_program_refuse_onto_inputs(cli, &def, growth_log_path, "--growth-log");
    /* no -o is standard output, which may be a file too (> FILE) */
    if (vl_csv_same_output(growth_log_path, cli->output ? cli->output : "-"))
        vl_cli_usage_error(cli, "--growth-log %s names the %s: give it a file of its own", growth_log_path,
                           cli->output ? "-o file" : "file standard output is");
}

/* --static-layout: on the simulated device (nothing is replayed), alone. */
static void check_static_layout(vl_cli *cli)
{
    if (!static_layout) {
        if (layout_chunk) vl_cli_usage_error(cli, "--layout-chunk applies to --static-layout only");
        if (layout_split) vl_cli_usage_error(cli, "--layout-split applies to --static-layout only");
        return;
    }
    if (strcmp(cli->device.name, "sim") != 0)
        vl_cli_usage_error(cli, "--static-layout replays nothing and needs no GPU: add --device sim");
    if (fit_list) vl_cli_usage_error(cli, "--static-layout and --fit are separate runs: give one");
    if (growth_log_path) vl_cli_usage_error(cli, "--growth-log applies to replay passes, not to --static-layout");
    if (layout_chunk && (layout_chunk < VL_LAYOUT_ALIGN || (layout_chunk & (layout_chunk - 1))))
        vl_cli_usage_error(cli, "--layout-chunk %llu: a power of two of at least %zu bytes",
                           (unsigned long long)layout_chunk, VL_LAYOUT_ALIGN);
}

static void check_options(vl_cli *cli)
{
    check_static_layout(cli);
    parse_fit(cli); /* before the trace: a bad option is found without reading it */
    check_growth_log(cli);
    load_trace(cli);
}

/* --growth-log's rows: the hook (lib/caching/caching.h) is told of each growth; which
 * pass and operation it happened in comes from the replay. */
typedef struct growth_log {
    vl_csv *csv;
    const vl_replay *replay;
    int64_t pass;
} growth_log;

static void log_growth(void *ctx, const vl_caching_growth *g)
{
    growth_log *gl = ctx;
    vl_csv_row(gl->csv, "%lld,%zu,%zu,%zu,%lld,%lld,%lld,%lld,%lld,%lld", (long long)gl->pass, gl->replay->op,
               g->request_bytes, g->largest_free_bytes, (long long)g->free_bytes, (long long)g->allocated_bytes,
               (long long)g->reserved_bytes, (long long)g->reserved_after_bytes, (long long)g->map_calls,
               (long long)g->unmap_calls);
}

static vl_csv *open_growth_log(vl_program *p, growth_log *gl, const vl_replay *r, char *err, size_t errlen)
{
    gl->csv = vl_csv_open(growth_log_path, &p->info, err, errlen);
    if (!gl->csv) return NULL;
    gl->replay = r;
    vl_csv_meta(gl->csv, "trace", "%s", trace_path);
    vl_csv_meta(gl->csv, "growth", "a request no cached block served; largest_free: the largest free block it "
                "could have used; free = reserved - allocated, all streams; op: the trace operation's index");
    vl_csv_header(gl->csv, "pass,op,request_bytes,largest_free_bytes,free_bytes,allocated_bytes,reserved_bytes,"
                  "reserved_after_bytes,map_calls,unmap_calls");
    vl_caching_on_growth(p->alloc, log_growth, gl);
    return gl->csv;
}

/* plan=1 (lib/caching/plan.h): its state after the pass and its counts so far. */
#define PLAN_COLUMNS ",plan_state,plan_plans,plan_activations,plan_ends,plan_served,plan_period_allocs,plan_arena_bytes," \
                     "plan_last_end"
static void plan_values(vl_program *p, char *out, size_t len)
{
    vl_plan_info info;
    if (vl_caching_plan_info(p->alloc, &info) != 0) return;
    for (char *c = info.last_end; *c; c++)
        if (*c == '"' || *c == ',') *c = ';'; /* one CSV field, unquoted */
    snprintf(out, len, ",%s,%llu,%llu,%llu,%llu,%llu,%llu,%s", info.state, (unsigned long long)info.plans,
             (unsigned long long)info.activations, (unsigned long long)info.ends, (unsigned long long)info.served,
             (unsigned long long)info.period_allocs, (unsigned long long)info.arena_bytes, info.last_end);
}

static void write_trace_meta(vl_csv *csv, const vl_trace *t)
{
    vl_csv_meta(csv, "trace", "%s", trace_path);
    vl_csv_meta(csv, "trace_format", "%s", vl_trace_format_name(t->format));
    vl_csv_meta(csv, "trace_free_at", "%s", free_at_name);
    vl_csv_meta(csv, "trace_ops", "%zu", t->nops);
    vl_csv_meta(csv, "trace_allocs", "%zu", t->nallocs);
    vl_csv_meta(csv, "trace_frees", "%zu", t->nfrees);
    vl_csv_meta(csv, "trace_streams", "%u", t->nstreams);
    vl_csv_meta(csv, "trace_peak_live_bytes", "%llu", (unsigned long long)t->peak_live_bytes);
    vl_csv_meta(csv, "trace_unknown_frees", "%zu", t->unknown_frees);
    vl_csv_meta(csv, "trace_recorded_ooms", "%zu", t->recorded_ooms);
    vl_csv_meta(csv, "trace_skipped_records", "%zu (segment_*/snapshot: the recording allocator's own work)",
                t->skipped_records);
    vl_csv_meta(csv, "trace_live_at_end", "%zu", t->live_at_end);
    vl_csv_meta(csv, "timing", "host monotonic clock around each call; wall includes a final device synchronize");
}

/* --fit: one row per SPEC. Returns the exit status. */
static int fit_rows(vl_program *p, vl_stream *streams)
{
    uint64_t resolution = fit_resolution ? fit_resolution : VL_FIT_DEFAULT_RESOLUTION;
    vl_csv_meta(p->csv, "fit", "smallest sim capacity at which %lld pass%s replay without an OOM, by bisection; "
                "assumes what fits at C fits above C", (long long)passes, passes == 1 ? "" : "es");
    vl_csv_meta(p->csv, "fit_resolution_bytes", "%llu", (unsigned long long)resolution);
    vl_csv_header(p->csv, "alloc,smallest_capacity_bytes,trace_peak_live_bytes,ratio,resolution_bytes,search_limit_bytes,tries");
    for (size_t i = 0; i < nfit_specs; i++) {
        vl_trace_fit fit;
        int status = 0;
        char err[512];
        if (vl_trace_fit_capacity(&trace, streams, &p->cli.device, fit_specs[i], resolution, (int)passes, &fit,
                                  &status, err, sizeof err) != 0) {
            vl_one_line(err);
            fprintf(stderr, "%s: --fit %s: %s\n", p->cli.prog, fit_specs[i], err);
            return status;
        }
        char cap[32] = "", ratio[32] = "";
        if (fit.found) {
            snprintf(cap, sizeof cap, "%llu", (unsigned long long)fit.smallest_capacity);
            if (trace.peak_live_bytes)
                snprintf(ratio, sizeof ratio, "%.4f", (double)fit.smallest_capacity / (double)trace.peak_live_bytes);
        } else {
            fprintf(stderr, "%s: --fit %s: no OOM-free replay up to %llu bytes\n", p->cli.prog, fit_specs[i],
                    (unsigned long long)fit.limit);
        }
        vl_csv_row(p->csv, "\"%s\",%s,%llu,%s,%llu,%llu,%zu", fit_specs[i], cap,
                   (unsigned long long)trace.peak_live_bytes, ratio, (unsigned long long)resolution,
                   (unsigned long long)fit.limit, fit.tries);
    }
    return VL_EXIT_OK;
}

/* Ends a run without pass rows (--fit, --static-layout, or a growth log that cannot be
 * written): a failed
 * status discards the CSV (none rather than one that lacks its rows); everything closes in
 * order. Returns status, or the finish's own where status is OK. */
static int end_run(vl_program *p, vl_replay *r, vl_bench_streams *streams, int *is_default, int status)
{
    if (status != VL_EXIT_OK) {
        vl_csv_discard(p->csv);
        p->csv = NULL;
    }
    vl_replay_destroy(r);
    vl_program_close_alloc(p);
    vl_bench_streams_destroy(streams);
    free(is_default);
    vl_trace_free(&trace);
    int finish = vl_program_finish(p);
    return status != VL_EXIT_OK ? status : finish;
}

static void layout_row(vl_csv *csv, const char *name, const vl_layout_result *r)
{
    char ext[32] = "", foot[32] = "";
    if (r->peak_bytes) {
        snprintf(ext, sizeof ext, "%.4f", (double)r->extent_bytes / (double)r->peak_bytes);
        snprintf(foot, sizeof foot, "%.4f", (double)r->footprint_bytes / (double)r->peak_bytes);
    }
    vl_csv_row(csv, "\"%s\",%llu,%llu,%llu,%s,%s", name, (unsigned long long)r->peak_bytes,
               (unsigned long long)r->extent_bytes, (unsigned long long)r->footprint_bytes, ext, foot);
}

/* A best layout's row, named "LABEL (heuristic)". */
static void best_row(vl_csv *csv, const char *label, const vl_layout_result *r, int h)
{
    char name[96];
    snprintf(name, sizeof name, "%s (%s)", label, vl_layout_heuristic_name((vl_layout_heuristic)h));
    layout_row(csv, name, r);
}

/* The layouts of the blocks `sizes` covers with every heuristic, each checked
 * independently before it counts; one row each when csv is given;
 * *best gets the smallest footprint. Returns the exit status. */
static int best_layout(vl_program *p, vl_layout_sizes sizes, uint64_t chunk, uint64_t *offsets, vl_csv *csv,
                       vl_layout_result *best, int *best_h)
{
    *best_h = -1;
    for (int h = 0; h < VL_LAYOUT_NHEURISTICS; h++) {
        vl_layout_result r;
        char err[512];
        if (vl_trace_layout(&trace, (vl_layout_heuristic)h, sizes, VL_LAYOUT_ALIGN, chunk, offsets, &r, err,
                            sizeof err) != 0 ||
            vl_trace_layout_check(&trace, sizes, offsets, VL_LAYOUT_ALIGN, err, sizeof err) != 0) {
            fprintf(stderr, "%s: --static-layout %s: %s\n", p->cli.prog, vl_layout_heuristic_name(h), err);
            return VL_EXIT_FAIL;
        }
        if (csv) layout_row(csv, vl_layout_heuristic_name(h), &r);
        if (*best_h < 0 || r.footprint_bytes < best->footprint_bytes) {
            *best = r;
            *best_h = h;
        }
    }
    return VL_EXIT_OK;
}

/* --static-layout: one row per heuristic, then the best (the smallest footprint). With
 * --layout-split SIZE, then the best layouts of the blocks below SIZE and of those from
 * SIZE up, each alone (a pool of their own), and their footprints added, over the
 * whole trace's peak. Returns the exit status. */
static int layout_rows(vl_program *p)
{
    uint64_t chunk = layout_chunk ? layout_chunk : VL_LAYOUT_DEFAULT_CHUNK;
    vl_csv_meta(p->csv, "static_layout", "offline greedy layouts knowing every lifetime (lib/trace/layout.h): "
                "footprint = chunks touched by any block; the best is an upper bound on the best static layout, "
                "peak_bytes the lower one");
    vl_csv_meta(p->csv, "layout_chunk_bytes", "%llu", (unsigned long long)chunk);
    vl_csv_meta(p->csv, "layout_align_bytes", "%zu", VL_LAYOUT_ALIGN);
    vl_trace_period period;
    if (vl_trace_find_period(&trace, &period) != 0) {
        fprintf(stderr, "%s: out of host memory\n", p->cli.prog);
        return VL_EXIT_FAIL;
    }
    vl_csv_meta(p->csv, "trace_period_allocs", "%zu (0: none; the allocations repeat with this period in the "
                "second half, sizes and lifetimes, %zu compared: lib/trace/period.h)", period.allocs, period.compared);
    if (layout_split)
        vl_csv_meta(p->csv, "layout_split_bytes", "%llu (requested sizes below it and from it up laid out apart)",
                    (unsigned long long)layout_split);
    vl_csv_header(p->csv, "heuristic,peak_bytes,extent_bytes,footprint_bytes,extent_ratio,footprint_ratio");
    uint64_t *offsets = malloc((trace.nallocs ? trace.nallocs : 1) * sizeof *offsets);
    if (!offsets) {
        fprintf(stderr, "%s: out of host memory\n", p->cli.prog);
        return VL_EXIT_FAIL;
    }
    vl_layout_result best = {0}, below = {0}, above = {0};
    int best_h, below_h, above_h;
    int status = best_layout(p, VL_LAYOUT_ALL_SIZES, chunk, offsets, p->csv, &best, &best_h);
    if (status == VL_EXIT_OK) best_row(p->csv, "best", &best, best_h);
    if (status == VL_EXIT_OK && layout_split) {
        status = best_layout(p, (vl_layout_sizes){0, layout_split}, chunk, offsets, NULL, &below, &below_h);
        if (status == VL_EXIT_OK)
            status = best_layout(p, (vl_layout_sizes){layout_split, UINT64_MAX}, chunk, offsets, NULL, &above, &above_h);
        if (status == VL_EXIT_OK) {
            best_row(p->csv, "best below the split", &below, below_h);
            best_row(p->csv, "best from the split up", &above, above_h);
            vl_layout_result apart = {best.peak_bytes, below.extent_bytes + above.extent_bytes,
                                      below.footprint_bytes + above.footprint_bytes};
            layout_row(p->csv, "split: both apart", &apart);
        }
    }
    free(offsets);
    return status;
}

int main(int argc, char **argv)
{
    vl_program p;
    vl_program_start(&p, &def, argc, argv);

    int *is_default = calloc(trace.nstreams ? trace.nstreams : 1, sizeof *is_default);
    vl_bench_streams streams;
    vl_replay r;
    if (!is_default) {
        fprintf(stderr, "%s: out of host memory\n", p.cli.prog);
        return VL_EXIT_FAIL;
    }
    for (uint32_t i = 0; i < trace.nstreams; i++) is_default[i] = vl_trace_stream_is_default(&trace, i);
    if (vl_bench_streams_create(&streams, p.dev, trace.nstreams, is_default) != 0 ||
        vl_replay_init(&r, &trace, p.alloc, streams.s) != 0) {
        fprintf(stderr, "%s: out of host memory\n", p.cli.prog);
        return VL_EXIT_FAIL;
    }

    write_trace_meta(p.csv, &trace);
    if (fit_list) return end_run(&p, &r, &streams, is_default, fit_rows(&p, streams.s));
    if (static_layout) return end_run(&p, &r, &streams, is_default, layout_rows(&p));
    char acols[256], fcols[256];
    char header[1024];
    vl_plan_info plan;
    int planned = vl_caching_plan_info(p.alloc, &plan) == 0; /* plan=1: what the plan did, per pass */
    snprintf(header, sizeof header,
             "pass,ops,allocs,frees,ooms,frees_after_oom,wall_ms,ops_per_s,%s,%s," VL_BENCH_PEAK_COLUMNS
             ",segments,device_allocs," VL_BENCH_CALL_COLUMNS "%s",
             vl_summary_columns("alloc", "ns", acols, sizeof acols), vl_summary_columns("free", "ns", fcols, sizeof fcols),
             planned ? PLAN_COLUMNS : "");
    vl_csv_header(p.csv, header);
    growth_log gl = {0};
    char gl_err[512];
    if (growth_log_path && !open_growth_log(&p, &gl, &r, gl_err, sizeof gl_err)) {
        fprintf(stderr, "%s: --growth-log: %s\n", p.cli.prog, gl_err);
        return end_run(&p, &r, &streams, is_default, VL_EXIT_FAIL);
    }

    vl_alloc_stats before; /* the device calls of each pass: since the one before */
    vl_alloc_stats_get(p.alloc, &before);
    for (int64_t pass = 1; pass <= passes; pass++) {
        gl.pass = pass;
        vl_replay_pass rp;
        vl_replay_pass_run(&r, &rp);
        char avals[256], fvals[256], peaks[256], seg[32], dal[32], rate[32], calls[160];
        size_t ops = rp.allocs + rp.frees;
        char planv[320] = "";
        if (planned) plan_values(&p, planv, sizeof planv);
        vl_csv_row(p.csv, "%lld,%zu,%zu,%zu,%zu,%zu,%.3f,%s,%s,%s,%s,%s,%s,%s%s", (long long)pass, ops, rp.allocs,
                   rp.frees, rp.ooms, rp.frees_after_oom, rp.wall_ns / 1e6,
                   vl_csv_f64(vl_rate((double)ops, rp.wall_ns / 1e9), 1, rate, sizeof rate),
                   vl_summary_values(&rp.alloc_ns, avals, sizeof avals),
                   vl_summary_values(&rp.free_ns, fvals, sizeof fvals),
                   vl_bench_peak_values(&rp.stats, peaks, sizeof peaks), vl_csv_i64(rp.stats.segments, seg, sizeof seg),
                   vl_csv_i64(rp.stats.device_allocs, dal, sizeof dal),
                   vl_bench_call_values(&before, &rp.stats, (double)ops, calls, sizeof calls), planv);
        before = rp.stats;
    }

    vl_replay_destroy(&r);
    int growth_failed = 0;
    if (gl.csv) {
        vl_caching_on_growth(p.alloc, NULL, NULL);
        if (vl_csv_close(gl.csv) != 0) {
            fprintf(stderr, "%s: --growth-log %s: a write failed\n", p.cli.prog, growth_log_path);
            growth_failed = 1;
        }
    }
    vl_program_close_alloc(&p); /* before the streams its blocks were used on */
    vl_bench_streams_destroy(&streams);
    free(is_default);
    vl_trace_free(&trace);
    int status = vl_program_finish(&p);
    return status == VL_EXIT_OK && growth_failed ? VL_EXIT_FAIL : status;
}
