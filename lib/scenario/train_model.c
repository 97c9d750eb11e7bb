/* See train_model.h. The graph's saved[] array is host memory owned by the graph;
 * an empty graph has saved == NULL and loss == NULL, so release is idempotent. */
#include "scenario/train_model.h"

#include <stdlib.h>
#include <string.h>

int vl_train_open(vl_train_model *m, vl_allocator *a, vl_stream s, const vl_train_shape *shape)
{
    memset(m, 0, sizeof *m);
    m->alloc = a;
    m->stream = s;
    m->shape = *shape;
    m->params = calloc(shape->layers, sizeof *m->params);
    m->grads = calloc(shape->layers, sizeof *m->grads);
    if (!m->params || !m->grads) abort();
    for (size_t l = 0; l < shape->layers; l++) {
        m->params[l] = vl_allocate(a, shape->param_bytes, s);
        if (!m->params[l] && shape->param_bytes) {
            vl_train_close(m);
            return -1;
        }
    }
    return 0;
}

int vl_train_forward(vl_train_model *m, size_t batch, vl_train_graph *g)
{
    memset(g, 0, sizeof *g);
    g->nsaved = m->shape.layers;
    g->saved_bytes = batch * m->shape.activation_bytes_per_sample;
    g->saved = calloc(g->nsaved, sizeof *g->saved);
    if (!g->saved) abort();
    for (size_t l = 0; l < g->nsaved; l++) {
        g->saved[l] = vl_allocate(m->alloc, g->saved_bytes, m->stream);
        if (!g->saved[l]) goto oom;
    }
    g->loss = vl_allocate(m->alloc, m->shape.loss_bytes, m->stream);
    if (!g->loss) goto oom;
    return 0;
oom:
    vl_train_release(m, g);
    return -1;
}

int vl_train_backward(vl_train_model *m, vl_train_graph *g)
{
    vl_allocator *a = m->alloc;
    /* The gradient flowing back: one temporary of an activation's size alive at a time
     * next to the one being produced. */
    void *grad_out = vl_allocate(a, g->saved_bytes, m->stream);
    if (!grad_out) return -1;
    for (size_t l = g->nsaved; l-- > 0;) {
        void *grad_in = vl_allocate(a, g->saved_bytes, m->stream);
        if (!grad_in) {
            vl_deallocate(a, grad_out, g->saved_bytes, m->stream);
            return -1;
        }
        if (!m->grads[l]) {
            m->grads[l] = vl_allocate(a, m->shape.param_bytes, m->stream);
            if (!m->grads[l] && m->shape.param_bytes) {
                vl_deallocate(a, grad_in, g->saved_bytes, m->stream);
                vl_deallocate(a, grad_out, g->saved_bytes, m->stream);
                return -1;
            }
        } /* else: accumulated in place, as .grad += does */
        vl_deallocate(a, g->saved[l], g->saved_bytes, m->stream);
        g->saved[l] = NULL;
        vl_deallocate(a, grad_out, g->saved_bytes, m->stream);
        grad_out = grad_in;
    }
    vl_deallocate(a, grad_out, g->saved_bytes, m->stream);
    return 0;
}

void vl_train_zero_grad(vl_train_model *m)
{
    for (size_t l = 0; l < m->shape.layers; l++) {
        vl_deallocate(m->alloc, m->grads[l], m->shape.param_bytes, m->stream);
        m->grads[l] = NULL;
    }
}

void vl_train_release(vl_train_model *m, vl_train_graph *g)
{
    for (size_t l = 0; g->saved && l < g->nsaved; l++)
        vl_deallocate(m->alloc, g->saved[l], g->saved_bytes, m->stream);
    vl_deallocate(m->alloc, g->loss, m->shape.loss_bytes, m->stream);
    free(g->saved);
    memset(g, 0, sizeof *g);
}

size_t vl_train_graph_bytes(const vl_train_graph *g, const vl_train_model *m)
{
    size_t bytes = g->loss ? m->shape.loss_bytes : 0;
    for (size_t l = 0; g->saved && l < g->nsaved; l++)
        if (g->saved[l]) bytes += g->saved_bytes;
    return bytes;
}

void vl_train_close(vl_train_model *m)
{
    if (m->grads) vl_train_zero_grad(m);
    for (size_t l = 0; m->params && l < m->shape.layers; l++)
        vl_deallocate(m->alloc, m->params[l], m->shape.param_bytes, m->stream);
    free(m->params);
    free(m->grads);
    memset(m, 0, sizeof *m);
}
