/* The frame shared by every scenario and bench program (see program.h). */
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcodes.h"

/* Device memory the driver may legitimately keep after we free everything (page
 * tables, pool bookkeeping): smaller differences are not reported as leaks. */
#define VL_LEAK_TOLERANCE_BYTES (4u << 20)

void vl_program_refuse_onto_inputs(const vl_cli *cli, const vl_program_def *def, const char *out, const char *flag)
{
    if (!out || strcmp(out, "-") == 0) return;
    const char *in = def->input ? *def->input : NULL;
    if (in && vl_csv_onto_input(out, in)) {
        if (strcmp(in, "-") == 0)
            vl_cli_usage_error(cli, "%s %s is the file standard input reads: refused, the input is left as it was",
                               flag, out);
        vl_cli_usage_error(cli, "%s %s names the input %s: refused, the input is left as it was", flag, out, in);
    }
    const vl_spec *specs[] = {cli->no_alloc ? NULL : &cli->alloc, &cli->device};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        for (size_t k = 0; specs[i] && k < specs[i]->nvalues; k++) {
            const vl_spec_value *v = &specs[i]->values[k];
            if (v->given && v->opt->kind == VL_OPT_STRING && strcmp(v->text, "-") != 0 &&
                vl_csv_onto_input(out, v->text))
                vl_cli_usage_error(cli, "%s %s names %s of the SPEC: refused", flag, out, v->text);
        }
    if (vl_csv_onto_input(out, "/proc/self/exe"))
        vl_cli_usage_error(cli, "%s %s names this program: refused", flag, out);
}

void vl_program_start(vl_program *p, const vl_program_def *def, int argc, char **argv)
{
    memset(p, 0, sizeof *p);
    p->cli.summary = def->summary;
    p->cli.alloc_spec = def->default_alloc;
    p->cli.no_alloc = def->default_alloc == NULL;
    p->cli.device_spec = "cuda";
    p->cli.seed = 42;
    vl_cli_parse(&p->cli, argc, argv, def->options, NULL, 0, NULL);
    if (def->check_options) def->check_options(&p->cli);
    vl_program_refuse_onto_inputs(&p->cli, def, p->cli.output, "-o");

    char err[512];
    int status;
    if (def->needs_cuda && strcmp(p->cli.device.name, "sim") == 0)
        vl_cli_usage_error(&p->cli, "this program needs a real GPU; --device sim is not supported");
    p->dev = vl_device_open_spec(&p->cli.device, &status, err, sizeof err);
    if (!p->dev) {
        vl_one_line(err);
        fprintf(stderr, "%s: %s%s\n", p->cli.prog, err, status == VL_EXIT_SKIP ? " (skipped)" : "");
        exit(status);
    }
    size_t total = 0;
    if (p->dev->ops->mem_info(p->dev, &p->free_at_start, &total) != VL_DEV_OK) p->free_at_start = 0;
    if (!p->cli.no_alloc) {
        p->alloc = vl_alloc_open_spec(&p->cli.alloc, p->dev, &status, err, sizeof err);
        if (!p->alloc) {
            vl_one_line(err);
            fprintf(stderr, "%s: --alloc: %s\n", p->cli.prog, err);
            vl_device_close(p->dev);
            exit(status);
        }
        /* An OOM is a result the CSV records; the first one's report goes to stderr. */
        vl_alloc_oom_reports(p->alloc, VL_OOM_REPORT_FIRST);
    }
    vl_run_info_fill(&p->info, argc, argv, p->dev, p->alloc ? p->alloc->spec : NULL);
    p->csv = vl_csv_open(p->cli.output, &p->info, err, sizeof err);
    if (!p->csv) {
        fprintf(stderr, "%s: %s\n", p->cli.prog, err);
        exit(VL_EXIT_FAIL);
    }
    vl_csv_meta(p->csv, "seed", "%llu", (unsigned long long)p->cli.seed);
    vl_csv_meta(p->csv, "quick", "%s", p->cli.quick ? "yes" : "no");
    if (p->alloc && p->alloc->backend->version)
        vl_csv_meta(p->csv, "alloc_version", "%s", p->alloc->backend->version(p->alloc));
    if (p->alloc && p->alloc->backend->effective) {
        char eff[512];
        p->alloc->backend->effective(p->alloc, eff, sizeof eff);
        vl_one_line(eff);
        vl_csv_meta(p->csv, "alloc_effective", "%s", eff);
    }
}

void vl_program_close_alloc(vl_program *p)
{
    if (p->alloc && p->alloc->oom_reports_skipped)
        fprintf(stderr, "%s: %lld more OOMs after the one reported (a report is taken for the first only)\n",
                p->cli.prog, (long long)p->alloc->oom_reports_skipped);
    if (p->alloc) vl_alloc_close(p->alloc);
    p->alloc = NULL;
}

int vl_program_finish(vl_program *p)
{
    int status = VL_EXIT_OK;
    vl_program_close_alloc(p);
    if (p->dev && !p->dev->simulated && p->free_at_start) {
        size_t free_now = 0, total = 0;
        p->dev->ops->synchronize(p->dev);
        if (p->dev->ops->mem_info(p->dev, &free_now, &total) == VL_DEV_OK &&
            free_now + VL_LEAK_TOLERANCE_BYTES < p->free_at_start) {
            fprintf(stderr, "%s: device memory not returned at exit: %zu bytes free at start, %zu now\n",
                    p->cli.prog, p->free_at_start, free_now);
            status = VL_EXIT_FAIL;
        }
    }
    if (p->dev && p->dev->failed_calls) {
        /* The allocator may have carried on, but its figures describe a run in which the
         * device failed it. */
        fprintf(stderr, "%s: %llu device call%s failed (first: %s): the results are not valid\n", p->cli.prog,
                (unsigned long long)p->dev->failed_calls, p->dev->failed_calls == 1 ? "" : "s",
                p->dev->first_failure);
        status = VL_EXIT_FAIL;
    }
    char why[200] = "";
    if (p->csv && vl_csv_error(p->csv)) snprintf(why, sizeof why, ": %s", vl_csv_error(p->csv));
    if (vl_csv_close(p->csv) != 0) {
        fprintf(stderr, "%s: writing the CSV failed%s\n", p->cli.prog, why);
        status = VL_EXIT_FAIL;
    }
    p->csv = NULL;
    vl_device_close(p->dev);
    p->dev = NULL;
    return status;
}
