/* retained_graph: does memory grow per training iteration, and why?
 *
 * A training loop reduced to its allocations (lib/scenario/train_model.h) runs with
 * three habits people are warned about, each next to its remedy:
 *   loss_history   losses.append(loss) in an eval loop without no_grad, where the
 *                  graph and its saved activations stay alive (append_loss_no_backward);
 *                  the same in a training loop, where backward already freed the saved
 *                  activations and only the loss tensor is kept (append_loss);
 *                  losses.append(loss.item()) keeps a host scalar (item: fixed).
 *   grad_accum     gradients never zeroed: they accumulate in place (accumulate_no_zero)
 *                  vs zero_grad(set_to_none=True) every step (zero_grad_each_step).
 *   epoch_outputs  each step's output kept in a list that is never cleared
 *                  (outputs_kept_across_epochs) vs cleared at each epoch's end.
 * Per iteration: allocated/reserved/device-used bytes. Per variant: the slope of
 * allocated and reserved bytes per iteration, a leak verdict from it (leak_fit.h),
 * the iteration that ran out of memory, or the projected one at that slope.
 * The slope is fitted on allocated bytes, or on requested bytes where the backend
 * cannot know allocated ones (raw, plugin). No kernels run, so this also runs on
 * --device sim. --memory limits the device to a working set (lib/scenario/ballast.h;
 * default 16 GiB, the same on every GPU; --quick: 4 GiB; 0: the whole device). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "scenario/ballast.h"
#include "scenario/leak_fit.h"
#include "scenario/mem_sample.h"
#include "scenario/train_model.h"

typedef enum habit {
    APPEND_LOSS_NO_BACKWARD,
    APPEND_LOSS,
    LOSS_ITEM,
    ACCUMULATE_NO_ZERO,
    ZERO_GRAD_EACH_STEP,
    OUTPUTS_KEPT,
    OUTPUTS_CLEARED,
    NHABITS
} habit;

static const struct {
    const char *scase, *variant, *role;
} habit_info[NHABITS] = {
    {"loss_history", "append_loss_no_backward", "bad"},
    {"loss_history", "append_loss", "bad"},
    {"loss_history", "item", "fixed"},
    {"grad_accum", "accumulate_no_zero", "bad"},
    {"grad_accum", "zero_grad_each_step", "fixed"},
    {"epoch_outputs", "outputs_kept_across_epochs", "bad"},
    {"epoch_outputs", "outputs_cleared_each_epoch", "fixed"},
};

#define CSV_COLUMNS                                                                                              \
    "record,case,variant,role,iteration," VL_MEM_SAMPLE_COLUMNS ",history_bytes,oom,slope_allocated_bytes_per_iter," \
    "slope_reserved_bytes_per_iter,fit_r2,verdict,oom_iteration,projected_iterations_to_oom"

/* What the loop's history list holds: graphs (eval loop) or plain tensors. */
typedef struct history {
    vl_train_graph *graphs;
    void **tensors;
    size_t *tensor_bytes;
    size_t ngraphs, ntensors, cap;
    size_t bytes;
} history;

static void history_reserve(history *h, size_t cap)
{
    h->graphs = calloc(cap, sizeof *h->graphs);
    h->tensors = calloc(cap, sizeof *h->tensors);
    h->tensor_bytes = calloc(cap, sizeof *h->tensor_bytes);
    if (!h->graphs || !h->tensors || !h->tensor_bytes) abort();
    h->cap = cap;
}

static void history_clear(history *h, vl_train_model *m)
{
    for (size_t i = 0; i < h->ngraphs; i++) vl_train_release(m, &h->graphs[i]);
    for (size_t i = 0; i < h->ntensors; i++) vl_deallocate(m->alloc, h->tensors[i], h->tensor_bytes[i], m->stream);
    h->ngraphs = h->ntensors = 0;
    h->bytes = 0;
}

static void history_free(history *h, vl_train_model *m)
{
    history_clear(h, m);
    free(h->graphs);
    free(h->tensors);
    free(h->tensor_bytes);
}

/* Keeps a tensor in the history; 0, or -1 on OOM. */
static int history_keep_tensor(history *h, vl_train_model *m, size_t bytes)
{
    void *t = vl_allocate(m->alloc, bytes, m->stream);
    if (!t) return -1;
    h->tensors[h->ntensors] = t;
    h->tensor_bytes[h->ntensors++] = bytes;
    h->bytes += bytes;
    return 0;
}

typedef struct setup {
    vl_train_shape shape;
    size_t batch;
    size_t output_bytes; /* one step's output (logits) kept by the epoch_outputs habit */
    int iterations, epoch_length, warmup;
} setup;

/* One training step with a habit. 0, or -1 on OOM. */
static int step(habit hb, vl_train_model *m, history *h, const setup *su, int iteration)
{
    vl_train_graph g;
    if (hb != ACCUMULATE_NO_ZERO) vl_train_zero_grad(m);
    if (vl_train_forward(m, su->batch, &g) < 0) return -1;
    if (hb == APPEND_LOSS_NO_BACKWARD) {
        /* No backward in an eval loop: the graph stays alive with the loss. */
        h->bytes += vl_train_graph_bytes(&g, m);
        h->graphs[h->ngraphs++] = g;
        return 0;
    }
    if (vl_train_backward(m, &g) < 0) {
        vl_train_release(m, &g);
        return -1;
    }
    if (hb == APPEND_LOSS) {
        /* backward freed the saved activations; the loss tensor survives in the list. */
        h->bytes += vl_train_graph_bytes(&g, m);
        h->graphs[h->ngraphs++] = g;
        return 0;
    }
    vl_train_release(m, &g);
    if (hb == OUTPUTS_KEPT || hb == OUTPUTS_CLEARED) {
        if (hb == OUTPUTS_CLEARED && iteration % su->epoch_length == 0) history_clear(h, m);
        if (history_keep_tensor(h, m, su->output_bytes) < 0) return -1;
    }
    return 0;
}

static void run_habit(vl_program *p, habit hb, const setup *su)
{
    vl_allocator *a = p->alloc;
    char vals[256], b1[32], b2[32];
    vl_trim(a);
    vl_alloc_reset_peaks(a);
    vl_train_model m;
    const char *scase = habit_info[hb].scase, *variant = habit_info[hb].variant, *role = habit_info[hb].role;
    vl_mem_sample ms;
    if (vl_train_open(&m, a, NULL, &su->shape) < 0) {
        vl_mem_sample_take(a, &ms);
        vl_csv_row(p->csv, "summary,%s,%s,%s,0,%s,0,1,,,,oom_at_setup,0,", scase, variant, role,
                   vl_mem_sample_values(&ms, vals, sizeof vals));
        return;
    }
    history h = {0};
    history_reserve(&h, (size_t)su->iterations + 1);
    double *xs = calloc((size_t)su->iterations, sizeof *xs);
    double *alloc_ys = calloc((size_t)su->iterations, sizeof *alloc_ys);
    double *held_ys = calloc((size_t)su->iterations, sizeof *held_ys);
    if (!xs || !alloc_ys || !held_ys) abort();
    size_t nfit = 0;
    int oom_iteration = -1, it;
    for (it = 1; it <= su->iterations; it++) {
        int oom = step(hb, &m, &h, su, it) < 0;
        vl_mem_sample_take(a, &ms);
        vl_csv_row(p->csv, "iteration,%s,%s,%s,%d,%s,%zu,%d,,,,,,", scase, variant, role, it,
                   vl_mem_sample_values(&ms, vals, sizeof vals), h.bytes, oom);
        if (oom) {
            oom_iteration = it;
            break;
        }
        if (it > su->warmup) {
            int64_t used = ms.allocated_bytes != VL_UNKNOWN   ? ms.allocated_bytes
                           : ms.requested_bytes != VL_UNKNOWN ? ms.requested_bytes
                                                              : ms.device_used_bytes;
            xs[nfit] = it;
            alloc_ys[nfit] = (double)used;
            held_ys[nfit] = (double)vl_mem_sample_held(&ms);
            nfit++;
        }
    }
    vl_line_fit fa = vl_line_fit_xy(xs, alloc_ys, nfit);
    vl_line_fit fr = vl_line_fit_xy(xs, held_ys, nfit);
    /* Headroom: what the device still has free plus what the allocator caches unused. */
    double headroom = (double)(ms.device_free_bytes == VL_UNKNOWN ? 0 : ms.device_free_bytes);
    if (ms.reserved_bytes != VL_UNKNOWN && ms.allocated_bytes != VL_UNKNOWN)
        headroom += (double)(ms.reserved_bytes - ms.allocated_bytes);
    double projected = vl_iterations_until(&fa, headroom);
    vl_leak_verdict verdict = vl_leak_verdict_of(&fa, 1.0, VL_LEAK_MIN_R2);
    if (oom_iteration > 0) verdict = VL_LEAK; /* it ran out: no fit needed */
    /* Out of memory before the fitted iterations began: the working set cannot hold one
     * iteration of the model, which says nothing about growth. */
    const char *verdict_name = oom_iteration > 0 && oom_iteration <= su->warmup ? "oom_in_warmup"
                                                                               : vl_leak_verdict_name(verdict);
    snprintf(b1, sizeof b1, "%d", oom_iteration);
    snprintf(b2, sizeof b2, "%.0f", projected);
    vl_csv_row(p->csv, "summary,%s,%s,%s,%d,%s,%zu,%d,%.1f,%.1f,%.4f,%s,%s,%s", scase, variant, role,
               oom_iteration > 0 ? oom_iteration : su->iterations, vl_mem_sample_values(&ms, vals, sizeof vals),
               h.bytes, oom_iteration > 0, fa.slope, fr.slope, fa.r2, verdict_name,
               oom_iteration > 0 ? b1 : "", oom_iteration > 0 ? "" : (projected < 0 ? "never" : b2));
    history_free(&h, &m);
    vl_train_close(&m);
    free(xs);
    free(alloc_ys);
    free(held_ys);
}

int main(int argc, char **argv)
{
    int64_t iterations = 40, layers = 8, epoch_length = 10;
    uint64_t memory = 16ull << 30;
    const vl_cli_opt opts[] = {
        VL_WORKING_SET_OPTION(&memory),
        {"iterations", VL_CLI_INT, &iterations, "training iterations per variant", 4, 100000, VL_QUICK_AT_MOST, "16"},
        {"layers", VL_CLI_INT, &layers, "layers of the modelled network", 1, 1000},
        {"epoch-length", VL_CLI_INT, &epoch_length, "iterations per epoch", 1, 100000, VL_QUICK_AT_MOST, "4"},
        {NULL},
    };
    const vl_program_def def = {
        .summary = "memory growth per training iteration from retained graphs, gradients and kept outputs",
        .default_alloc = "caching",
        .options = opts,
    };
    vl_program p;
    vl_program_start(&p, &def, argc, argv);
    vl_ballast ballast;
    size_t work = vl_ballast_take_working_set(&ballast, &p, memory);

    /* Sized so that a graph kept every iteration fills free memory in about 60% of the
     * iterations: the bad variant must reach its OOM within the run. */
    setup su = {.batch = 32, .iterations = (int)iterations, .epoch_length = (int)epoch_length, .warmup = 2};
    double graph_bytes = (double)work / (0.6 * (double)iterations);
    su.shape.layers = (size_t)layers;
    su.shape.activation_bytes_per_sample = (size_t)(graph_bytes / (double)layers / (double)su.batch) & ~(size_t)511;
    su.shape.param_bytes = (size_t)((double)work / 50.0 / (double)layers) & ~(size_t)511;
    su.shape.loss_bytes = 4;
    su.output_bytes = su.batch * 1000 * 4; /* logits of 1000 classes */
    if (su.shape.activation_bytes_per_sample == 0) su.shape.activation_bytes_per_sample = 512;

    vl_csv_meta(p.csv, "model", "%zu layers, batch %zu, %zu activation bytes per sample per layer, %zu param bytes per layer",
                su.shape.layers, su.batch, su.shape.activation_bytes_per_sample, su.shape.param_bytes);
    vl_csv_meta(p.csv, "iterations", "%d (epoch %d, first %d not fitted)", su.iterations, su.epoch_length, su.warmup);
    vl_csv_meta(p.csv, "verdict",
                "leak if the slope of allocated (else requested) bytes >= 1 B/iteration with r2 >= %.2f, or an OOM "
                "after the first %d iterations (an OOM before: oom_in_warmup, the working set is too small)",
                VL_LEAK_MIN_R2, su.warmup);
    vl_csv_header(p.csv, CSV_COLUMNS);
    for (int hb = 0; hb < NHABITS; hb++) run_habit(&p, (habit)hb, &su);
    vl_ballast_release(&ballast);
    return vl_program_finish(&p);
}
