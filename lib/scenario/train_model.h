/* A training loop reduced to its allocations, the way PyTorch's autograd makes them:
 *   forward(batch)  allocates each layer's activation (saved for backward) and a loss;
 *   backward        allocates a gradient temporary per layer, frees each saved
 *                   activation once used, allocates the parameter gradients the first
 *                   time and afterwards accumulates into them in place (no allocation);
 *   zero_grad       set_to_none: frees the parameter gradients;
 *   release(graph)  drops whatever the graph still holds (the loss, and the saved
 *                   activations if backward never ran).
 * No kernels run: the model is an allocation trace, so it also runs on --device sim.
 * Every allocation that fails is an OOM result (-1), never an abort; a failed step
 * leaves no memory behind. */
#ifndef VL_SCENARIO_TRAIN_MODEL_H
#define VL_SCENARIO_TRAIN_MODEL_H

#include <stddef.h>

#include "alloc.h"

typedef struct vl_train_shape {
    size_t layers;
    size_t activation_bytes_per_sample; /* one layer's output for one sample */
    size_t param_bytes;                 /* one layer's weights (and so its gradient) */
    size_t loss_bytes;                  /* a scalar: 4 */
} vl_train_shape;

/* One iteration's autograd graph: what forward saved. */
typedef struct vl_train_graph {
    void **saved;        /* layers entries; NULL once freed */
    size_t saved_bytes;  /* size of each saved activation */
    void *loss;
    size_t nsaved;
} vl_train_graph;

typedef struct vl_train_model {
    vl_allocator *alloc;
    vl_stream stream;
    vl_train_shape shape;
    void **params; /* layers entries, allocated by open */
    void **grads;  /* layers entries, NULL until the first backward (or after zero_grad) */
} vl_train_model;

/* Allocates the parameters. 0, or -1 on OOM (nothing left allocated). */
int vl_train_open(vl_train_model *m, vl_allocator *a, vl_stream s, const vl_train_shape *shape);
/* 0, or -1 on OOM (g is then empty and nothing of it is allocated). */
int vl_train_forward(vl_train_model *m, size_t batch, vl_train_graph *g);
/* Frees g's saved activations as it goes. 0, or -1 on OOM (the graph keeps what
 * was not yet freed; release it). */
int vl_train_backward(vl_train_model *m, vl_train_graph *g);
void vl_train_zero_grad(vl_train_model *m);
void vl_train_release(vl_train_model *m, vl_train_graph *g);
/* Bytes the graph still holds on the device. */
size_t vl_train_graph_bytes(const vl_train_graph *g, const vl_train_model *m);
void vl_train_close(vl_train_model *m);

#endif
