/* fuse_bn.c - BatchNormalization folded into the Conv before it:
 *   BN(Conv(x, W, B)) = Conv(x, W', B'),  k = scale / sqrt(var + eps),
 *   W'[f, ...] = W[f, ...] k[f],  B'[f] = (B[f] - mean[f]) k[f] + bias[f]
 * when the Conv's output feeds only the BatchNormalization (inference
 * form: one output, no training_mode), and W, B (or none), scale, bias,
 * mean and var are constants of a float type. W' and B' are new
 * initializers (named after W and the BatchNormalization's output), so
 * that they stay weights (a JIT argument read in place) rather than
 * constants in the code. Exporters that fold already (PyTorch's, with
 * constant folding) leave nothing to do; models exported without it save
 * a pass over every convolution's output. Computed in double, stored in
 * the weight's dtype.
 */
#include <math.h>
#include <string.h>

#include "infer/infer.h"
#include "transform/decompose_kit.h"
#include "util/diag.h"

static const o2m_tensor *constant(const o2m_value *v) {
  const o2m_tensor *t = v ? (v->known ? v->known : v->init) : NULL;
  return t && t->data ? t : NULL;
}

/* A 1-D constant of n float elements, or NULL. */
static const o2m_tensor *per_channel(const o2m_value *v, int64_t n) {
  const o2m_tensor *t = constant(v);
  return t && t->rank == 1 && t->dims[0] == n && o2m_dtype_is_float(t->dtype) ? t : NULL;
}

/* A new initializer of the main graph holding t. */
static o2m_value *new_initializer(o2m_rewriter *rw, const char *name, o2m_tensor *t) {
  o2m_value *v = o2m_graph_new_value(rw->model, rw->graph, name, O2M_VALUE_INITIALIZER);
  if (!v) return NULL;
  t->name = name;
  v->init = t;
  v->known = t;
  v->type.kind = O2M_TYPE_TENSOR;
  v->type.elem = t->dtype;
  v->type.rank = t->rank;
  v->type.dims = o2m_arena_array(&rw->model->arena, (size_t)t->rank + 1, sizeof(o2m_dim));
  if (!v->type.dims) return NULL;
  for (int k = 0; k < t->rank; k++) v->type.dims[k] = (o2m_dim){t->dims[k], NULL};
  return v;
}

int o2m_fuse_conv_bn(o2m_rewriter *rw, o2m_node **dead, int *n_dead) {
  o2m_node *bn = rw->node;
  o2m_value *x = bn->n_inputs >= 5 ? bn->inputs[0] : NULL;
  if (!x || bn->n_outputs < 1 || !bn->outputs[0] || o2m_rw_attr_i(rw, "training_mode", 0) != 0 ||
      x->kind != O2M_VALUE_NODE || !x->producer || x->use_count != 1 || rw->graph != rw->model->graph)
    return 0;
  for (int i = 1; i < bn->n_outputs; i++)
    if (bn->outputs[i] && bn->outputs[i]->use_count) return 0;
  o2m_node *conv = x->producer;
  if (conv->domain[0] || strcmp(conv->op_type, "Conv") != 0 || conv->n_outputs != 1 || conv->n_inputs < 2)
    return 0;
  const o2m_tensor *w = constant(conv->inputs[1]);
  if (!w || w->rank < 3 || !o2m_dtype_is_float(w->dtype) || w->dims[0] <= 0) return 0;
  int64_t f = w->dims[0], per = w->count / f;
  o2m_value *b_in = conv->n_inputs > 2 ? conv->inputs[2] : NULL;
  const o2m_tensor *b = b_in ? per_channel(b_in, f) : NULL;
  const o2m_tensor *scale = per_channel(bn->inputs[1], f), *bias = per_channel(bn->inputs[2], f);
  const o2m_tensor *mean = per_channel(bn->inputs[3], f), *var = per_channel(bn->inputs[4], f);
  if ((b_in && !b) || !scale || !bias || !mean || !var) return 0;
  double eps = o2m_rw_attr_f(rw, "epsilon", 1e-5f);
  o2m_infer_ctx ctx = {rw->model, &rw->model->arena, rw->diag, rw->graph, bn, 0};
  int64_t bdim[1] = {f};
  o2m_tensor *w2 = o2m_tensor_new(&ctx, w->dtype, w->rank, w->dims), *b2 = o2m_tensor_new(&ctx, w->dtype, 1, bdim);
  const char *w_name = o2m_arena_printf(&rw->model->arena, "%s/folded_bn/%s", conv->inputs[1]->name, bn->outputs[0]->name);
  const char *b_name = o2m_arena_printf(&rw->model->arena, "%s/folded_bn_bias", bn->outputs[0]->name);
  if (!w2 || !b2 || !w_name || !b_name) return -1;
  for (int64_t c = 0; c < f; c++) {
    double k = o2m_tensor_get_float(scale, c) / sqrt(o2m_tensor_get_float(var, c) + eps);
    for (int64_t i = 0; i < per; i++) o2m_tensor_set_float(w2, c * per + i, o2m_tensor_get_float(w, c * per + i) * k);
    double shift = (b ? o2m_tensor_get_float(b, c) : 0.0) - o2m_tensor_get_float(mean, c);
    o2m_tensor_set_float(b2, c, shift * k + o2m_tensor_get_float(bias, c));
  }
  o2m_value *ins[3] = {conv->inputs[0], new_initializer(rw, w_name, w2), new_initializer(rw, b_name, b2)};
  if (!ins[1] || !ins[2]) return -1;
  int n_attrs = 0;
  rw->node = conv; /* the folded Conv keeps the Conv's attributes */
  o2m_attr *attrs = xk_attrs_except(rw, (const char *const[]){NULL}, 0, &n_attrs);
  rw->node = bn;
  if (!attrs) return -1;
  if (o2m_rw_node_into(rw, "Conv", 3, ins, 1, &bn->outputs[0], attrs, n_attrs)) return -1;
  dead[(*n_dead)++] = conv;
  return 1;
}
