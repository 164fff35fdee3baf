/* layout_channels_last.c - the main graph's float32 2-D convolutions
 * channels last, for the JIT's convolution library (emit.h, O2M_JIT_DNNL):
 * oneDNN's fast kernels read and write [N, H, W, C], so each such Conv
 * becomes a com.microsoft NhwcFusedConv (its X, Z and Y channels last, W
 * as ONNX has it), each QLinearConv the target kept for the runtime's
 * 8-bit kernel (qconvs: O2M_JIT_QUANT) an NhwcQLinearConv (X and Y
 * channels last, the rest as they are), and the values between them stay
 * channels last:
 *
 *   - a value that has an NHWC twin keeps it for every consumer that can
 *     take it: the ops of `agnostic` below (elementwise: their inputs
 *     permuted alike, an operand of one element as it is, another of
 *     known dims, 4-D or of a lower rank that broadcasts, transposed),
 *     Concat on the channels (axis 3 then),
 *     GlobalAveragePool (ReduceMean over axes 1, 2), and ReduceMean, Sum,
 *     Max and Min that keep their dims, over given axes (each moved to
 *     its place channels last: an InstanceNormalization's statistics);
 *   - a 4-D value without a twin that such a consumer reads gets one
 *     Transpose (perm [0, 2, 3, 1]), shared by all;
 *   - a value still read in NCHW (by any other op, a subgraph, or as a
 *     graph output) is made from its twin by one Transpose back;
 *   - either way a Reshape where the dims other than 1 keep their order
 *     (a [1, C, 1, 1] scale): the elements stay where they are;
 *   - an AveragePool of a twin (2-D, floor mode) becomes a depthwise
 *     NhwcFusedConv whose weights are 1 / its window's size, with the
 *     zero Pad before it that PyTorch exports for avg_pool2d's padding
 *     (convert_avg_pool);
 *   - a channel shuffle (Reshape to [N, g, C/g, H, W], Transpose
 *     [0, 2, 1, 3, 4], Reshape back) shuffles the twin's channels
 *     (convert_shuffle), a Slice with constant parameters takes its
 *     axes channels last (convert_slice), and so do a Resize's constant
 *     scales or sizes and a Pad's constant pads (convert_moved_param:
 *     an FPN's or a U-Net's upsampling, a reflection pad);
 *   - an activation that alone reads a convolution's output (Relu,
 *     Clip of constant bounds, HardSwish, Sigmoid, Tanh, LeakyRelu), or
 *     x gate(x) of it (SiLU, the Hardswish of older opsets), becomes the
 *     convolution's, and an Add of that output and a twin its Z (then an
 *     activation after the Add too), as onnxruntime's fusers do:
 *     act(Conv(X, W, B) + Z).
 * The rewrite is for the JIT only: `import` never sees these nodes, and
 * the shared layer writes NhwcFusedConv in ONNX ops for every other use.
 * Nothing changes in a graph without such a Conv.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"
#include "util/diag.h"

/* ---- per-value facts ------------------------------------------------------------ */

typedef struct value_fact {
  const o2m_value *key;
  o2m_value *twin;   /* its NHWC form, once made */
  int will_twin;     /* the analysis: it gets a twin */
  int needs_nchw;    /* some reader takes it as it is */
} value_fact;

typedef struct layout {
  o2m_rewriter rw;
  value_fact *facts;
  size_t cap;
  char *converts;  /* per node index: 1 when rewritten channels last */
  o2m_node **fused_into; /* per node index: the Conv that absorbs it */
  o2m_node **fused_act, **fused_add; /* per Conv: what it absorbs */
  int qconvs; /* QLinearConv nodes are the runtime's 8-bit kernel's */
} layout;

static value_fact *fact(layout *l, const o2m_value *v) {
  size_t i = ((uintptr_t)v >> 4) * 0x9e3779b97f4a7c15ull % l->cap;
  while (l->facts[i].key && l->facts[i].key != v) i = (i + 1) % l->cap;
  l->facts[i].key = v;
  return &l->facts[i];
}

static int is_op(const o2m_node *n, const char *op) { return !n->domain[0] && strcmp(n->op_type, op) == 0; }

static const o2m_tensor *known(const o2m_value *v) {
  const o2m_tensor *t = v ? (v->known ? v->known : v->init) : NULL;
  return t && t->data ? t : NULL;
}

static int static_4d(const o2m_value *v) {
  int64_t dims[4];
  return v && xk_rank(v) == 4 && XK_STATIC_DIMS(v, dims);
}

/* 4-D with C known; N, H and W known or not: the oneDNN kernels take any
 * (a compiled library's batch, a session's generic code, an image size
 * left open). */
static int image_4d(const o2m_value *v) {
  const o2m_type *t = v ? xk_type(v) : NULL;
  return t && t->kind == O2M_TYPE_TENSOR && t->rank == 4 && t->dims[1].size >= 0;
}

/* v's dims as a 4-D operand broadcasts them (ones in front of a lower
 * rank), when all are known and its rank is at most 4. */
static int padded_dims(const o2m_value *v, int64_t *dims) {
  int rank = xk_rank(v);
  int64_t own[4];
  if (rank < 0 || rank > 4 || (rank > 0 && !XK_STATIC_DIMS(v, own))) return 0;
  for (int k = 0; k < 4; k++) dims[k] = k < 4 - rank ? 1 : own[k - (4 - rank)];
  return 1;
}

/* ---- what converts ----------------------------------------------------------------- */

/* Elementwise ops with the same meaning in any layout (inputs permuted
 * alike); attributes, if any, are scalars. */
static const char *const agnostic[] = {
    "Relu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu", "Selu", "Celu", "Neg",
    "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Softplus", "Softsign", "Mish", "Gelu", "Identity",
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Sum", "Mean", "Cast", "Round", "Floor", "Ceil", "Sign",
    NULL};

static int is_agnostic(const o2m_node *n) {
  if (n->domain[0] || n->n_outputs != 1) return 0;
  for (int i = 0; agnostic[i]; i++)
    if (strcmp(n->op_type, agnostic[i]) == 0) return 1;
  return 0;
}

static int one_element(const o2m_value *v) {
  const o2m_tensor *t = known(v);
  return t && t->count == 1 && t->rank <= 4;
}

static int explicit_pads(const o2m_node *n) {
  const o2m_attr *pad = o2m_node_attr(n, "auto_pad");
  return !pad || pad->type != O2M_ATTR_STRING || (pad->s.len == 6 && memcmp(pad->s.ptr, "NOTSET", 6) == 0) ||
         (pad->s.len == 5 && memcmp(pad->s.ptr, "VALID", 5) == 0);
}

/* A Conv the library takes: float32 4-D X and Y of known C (any batch
 * and image size), constant W (and B), explicit pads. */
static int library_conv(const o2m_node *n) {
  if (!is_op(n, "Conv") || n->n_inputs < 2 || n->n_outputs != 1 || !n->outputs[0]) return 0;
  const o2m_value *x = n->inputs[0], *w = n->inputs[1], *b = n->n_inputs > 2 ? n->inputs[2] : NULL;
  if (!explicit_pads(n)) return 0;
  return x && xk_elem(x) == O2M_DT_FLOAT && image_4d(x) && image_4d(n->outputs[0]) && known(w) &&
         known(w)->rank == 4 && (!b || (known(b) && known(b)->rank == 1));
}

/* A QLinearConv kept for the runtime's 8-bit kernel (every QLinearConv
 * left after the transform layer, when qconvs) of 4-D static X and Y. */
static int library_qconv(const layout *l, const o2m_node *n) {
  return l->qconvs && is_op(n, "QLinearConv") && n->n_inputs >= 8 && n->n_outputs == 1 && static_4d(n->inputs[0]) &&
         static_4d(n->outputs[0]) && explicit_pads(n);
}

/* A float32 2-D MaxPool without its Indices output; of ceil mode, with
 * H and W known (the lowering sizes the others' output by floor). */
static int library_pool(const o2m_node *n) {
  const o2m_attr *k = o2m_node_attr(n, "kernel_shape"), *ceil = o2m_node_attr(n, "ceil_mode");
  return is_op(n, "MaxPool") && n->n_inputs == 1 && n->inputs[0] && xk_elem(n->inputs[0]) == O2M_DT_FLOAT &&
         (n->n_outputs == 1 || !n->outputs[1] || !n->outputs[1]->use_count) && n->outputs[0] &&
         image_4d(n->inputs[0]) && image_4d(n->outputs[0]) && k && k->count == 2 && explicit_pads(n) &&
         (!ceil || !ceil->i || (static_4d(n->inputs[0]) && static_4d(n->outputs[0])));
}

/* A Pad of zeros on H and W only that an AveragePool without pads of its
 * own reads alone (PyTorch exports avg_pool2d's padding so): the pool
 * takes its pads, the zeros counted in each average; the Pad, or NULL. */
static o2m_node *absorbed_pad(const o2m_node *pool, int64_t *pads) {
  o2m_node *pad = pool->inputs[0] ? pool->inputs[0]->producer : NULL;
  if (!pad || !is_op(pad, "Pad") || pad->n_outputs != 1 || pool->inputs[0]->use_count != 1 || !pad->inputs[0] ||
      (pad->n_inputs > 3 && pad->inputs[3]))
    return NULL;
  const o2m_attr *mode = o2m_node_attr(pad, "mode"), *attr_pads = o2m_node_attr(pad, "pads"),
                 *value = o2m_node_attr(pad, "value");
  if (mode && (mode->type != O2M_ATTR_STRING || mode->s.len != 8 || memcmp(mode->s.ptr, "constant", 8) != 0)) return NULL;
  const o2m_tensor *given = pad->n_inputs > 1 && pad->inputs[1] ? known(pad->inputs[1]) : NULL;
  const o2m_tensor *fill = pad->n_inputs > 2 && pad->inputs[2] ? known(pad->inputs[2]) : NULL;
  if ((pad->n_inputs > 2 && pad->inputs[2] && (!fill || fill->count != 1 || o2m_tensor_get_float(fill, 0) != 0)) ||
      (value && value->f != 0))
    return NULL;
  int64_t all[8];
  int count = given ? (int)given->count : attr_pads ? attr_pads->count : 0;
  if (count != 8) return NULL;
  for (int k = 0; k < 8; k++) all[k] = given ? o2m_tensor_get_int(given, k) : attr_pads->ints[k];
  if (all[0] || all[1] || all[4] || all[5] || all[2] < 0 || all[3] < 0 || all[6] < 0 || all[7] < 0) return NULL;
  pads[0] = all[2], pads[1] = all[3], pads[2] = all[6], pads[3] = all[7];
  return pad;
}

/* A float32 2-D AveragePool the library's depthwise convolution computes
 * (convert_avg_pool): static dims, explicit pads (or those of a Pad it
 * absorbs), no dilation, the output of floor mode (a ceil_mode window past
 * the pads would have another divisor). Its window, the value it reads
 * (the Pad's input when it absorbs one), whether the pads count in the
 * averages; 0 when it is none such. */
typedef struct avg_window {
  int64_t kernel[2], strides[2], pads[4];
  o2m_value *source;
  o2m_node *pad; /* absorbed */
  int include_pads;
} avg_window;

static int library_avg_pool(const o2m_node *n, avg_window *w) {
  if (!is_op(n, "AveragePool") || n->n_inputs != 1 || !n->inputs[0] || xk_elem(n->inputs[0]) != O2M_DT_FLOAT ||
      n->n_outputs != 1 || !n->outputs[0] || !static_4d(n->inputs[0]) || !static_4d(n->outputs[0]) || !explicit_pads(n))
    return 0;
  const o2m_attr *k = o2m_node_attr(n, "kernel_shape"), *s = o2m_node_attr(n, "strides"),
                 *p = o2m_node_attr(n, "pads"), *d = o2m_node_attr(n, "dilations"), *pad = o2m_node_attr(n, "auto_pad"),
                 *include = o2m_node_attr(n, "count_include_pad");
  int valid = pad && pad->type == O2M_ATTR_STRING && pad->s.len == 5;
  if (!k || k->count != 2 || (s && s->count != 2) || (p && !valid && p->count != 4) ||
      (d && (d->count != 2 || d->ints[0] != 1 || d->ints[1] != 1)))
    return 0;
  int own_pads = 0;
  for (int i = 0; i < 4; i++) {
    w->pads[i] = p && !valid ? p->ints[i] : 0;
    own_pads |= w->pads[i] != 0;
  }
  w->source = n->inputs[0];
  w->include_pads = include && include->i != 0;
  w->pad = own_pads ? NULL : absorbed_pad(n, w->pads);
  if (w->pad) w->source = w->pad->inputs[0], w->include_pads = 1;
  int64_t in[4], out[4];
  if (!static_4d(w->source) || !XK_STATIC_DIMS(w->source, in) || !XK_STATIC_DIMS(n->outputs[0], out)) return 0;
  for (int i = 0; i < 2; i++) {
    w->kernel[i] = k->ints[i], w->strides[i] = s ? s->ints[i] : 1;
    int64_t span = in[2 + i] + w->pads[i] + w->pads[2 + i] - w->kernel[i];
    if (w->kernel[i] < 1 || w->strides[i] < 1 || span < 0 || out[2 + i] != span / w->strides[i] + 1) return 0;
  }
  return 1;
}

/* The node reading v alone (its only use in this graph), or NULL. */
static o2m_node *only_reader(const o2m_graph *g, const o2m_value *v) {
  o2m_node *reader = NULL;
  int uses = 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_inputs; k++)
      if (g->nodes[i]->inputs[k] == v) uses++, reader = g->nodes[i];
  return uses == 1 && v->use_count == 1 ? reader : NULL;
}

/* A channel shuffle (ShuffleNet's, as PyTorch exports it): Reshape of
 * [N, C, H, W] to [N, g, C/g, H, W], Transpose [0, 2, 1, 3, 4], Reshape
 * back to [N, C, H, W], each read by the next alone. The last Reshape,
 * or NULL; *groups: g. */
static o2m_node *shuffle_end(const o2m_node *n, int64_t *groups) {
  int64_t in[4], mid[5], out[4];
  if (!is_op(n, "Reshape") || n->n_inputs < 1 || !n->inputs[0] || !static_4d(n->inputs[0]) || n->n_outputs != 1 ||
      !n->outputs[0] || xk_rank(n->outputs[0]) != 5 || !XK_STATIC_DIMS(n->inputs[0], in) ||
      !XK_STATIC_DIMS(n->outputs[0], mid))
    return NULL;
  const o2m_graph *g = n->outputs[0]->graph;
  o2m_node *t = g ? only_reader(g, n->outputs[0]) : NULL, *back = NULL;
  const o2m_attr *perm = t && is_op(t, "Transpose") ? o2m_node_attr(t, "perm") : NULL;
  static const int64_t swap[5] = {0, 2, 1, 3, 4};
  if (!perm || perm->count != 5 || memcmp(perm->ints, swap, sizeof(swap)) != 0 || t->n_outputs != 1 ||
      !t->outputs[0])
    return NULL;
  back = only_reader(g, t->outputs[0]);
  if (!back || !is_op(back, "Reshape") || back->n_outputs != 1 || !back->outputs[0] ||
      !static_4d(back->outputs[0]) || !XK_STATIC_DIMS(back->outputs[0], out) || memcmp(in, out, sizeof(in)) != 0 ||
      mid[0] != in[0] || mid[1] * mid[2] != in[1] || mid[3] != in[2] || mid[4] != in[3])
    return NULL;
  *groups = mid[1];
  return back;
}

/* A Slice of 4-D static dims with constant starts, ends, axes and steps:
 * its NCHW axes (the count; 0 when it is none such). */
static int slice_axes(const o2m_node *n, int64_t *axes) {
  if (!is_op(n, "Slice") || n->n_inputs < 3 || !n->inputs[0] || !static_4d(n->inputs[0]) || n->n_outputs != 1 ||
      !n->outputs[0] || !static_4d(n->outputs[0]))
    return 0;
  const o2m_tensor *starts = known(n->inputs[1]), *ends = known(n->inputs[2]);
  const o2m_tensor *given = n->n_inputs > 3 && n->inputs[3] ? known(n->inputs[3]) : NULL;
  if (!starts || !ends || starts->count != ends->count || starts->count < 1 || starts->count > 4 ||
      (n->n_inputs > 3 && n->inputs[3] && (!given || given->count != starts->count)) ||
      (n->n_inputs > 4 && n->inputs[4] && !known(n->inputs[4])))
    return 0;
  for (int k = 0; k < (int)starts->count; k++) {
    int64_t a = given ? o2m_tensor_get_int(given, k) : k;
    if (a < -4 || a > 3) return 0;
    axes[k] = a < 0 ? a + 4 : a;
  }
  return (int)starts->count;
}

/* Reductions that keep a 4-D value 4-D whatever the layout. */
static const char *const reductions[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", NULL};

/* The axes (0..3, NCHW) of a reduction with keepdims that names them (an
 * attribute, or a constant input from opset 18 on); their count, or 0
 * when n is no such reduction. */
static int reduce_axes(const o2m_node *n, int64_t *axes) {
  int reduction = 0;
  for (int i = 0; reductions[i] && !reduction; i++) reduction = is_op(n, reductions[i]);
  const o2m_attr *keep = o2m_node_attr(n, "keepdims");
  if (!reduction || (keep && keep->i != 1) || n->n_inputs < 1) return 0;
  const o2m_attr *attr = o2m_node_attr(n, "axes");
  const o2m_tensor *given = n->n_inputs > 1 ? known(n->inputs[1]) : NULL;
  int count = attr ? attr->count : given ? (int)given->count : 0;
  if (count < 1 || count > 4 || (n->n_inputs > 1 && n->inputs[1] && !given)) return 0;
  for (int k = 0; k < count; k++) {
    int64_t a = attr ? attr->ints[k] : o2m_tensor_get_int(given, k);
    if (a < -4 || a > 3) return 0;
    axes[k] = a < 0 ? a + 4 : a;
  }
  return count;
}

/* A Resize or Pad of 4-D X whose per-dim parameter is a constant that
 * moves to NHWC's order (Resize's scales or sizes, without roi or axes;
 * Pad's pads, without axes): that input's index, or 0 when n is none such. */
static int moved_param(const o2m_node *n) {
  if (n->n_outputs != 1 || !n->outputs[0] || !image_4d(n->outputs[0]) || n->n_inputs < 2 || !n->inputs[0]) return 0;
  const o2m_tensor *t;
  if (is_op(n, "Resize")) {
    const o2m_attr *policy = o2m_node_attr(n, "keep_aspect_ratio_policy");
    if ((n->inputs[1] && !(known(n->inputs[1]) && !known(n->inputs[1])->count)) || o2m_node_attr(n, "axes") ||
        (policy && (policy->type != O2M_ATTR_STRING || policy->s.len != 7 || memcmp(policy->s.ptr, "stretch", 7))))
      return 0;
    int at = n->n_inputs > 3 && n->inputs[3] ? 3 : 2;
    t = at < n->n_inputs && n->inputs[at] ? known(n->inputs[at]) : NULL;
    return t && t->count == 4 && t->rank == 1 ? at : 0;
  }
  if (!is_op(n, "Pad") || (n->n_inputs > 3 && n->inputs[3])) return 0;
  t = n->inputs[1] ? known(n->inputs[1]) : NULL;
  return t && t->count == 8 && t->rank == 1 ? 1 : 0;
}

/* Which input positions of a converting node read twins (the others:
 * constants, as they are or transposed). */
static int reads_twin(const layout *l, const o2m_node *n, int i) {
  if (library_conv(n) || library_qconv(l, n) || is_op(n, "Slice") || is_op(n, "Reshape") || moved_param(n))
    return i == 0;
  return 1;
}

/* Whether n can run channels last given which of its inputs will have
 * twins: a library Conv always; an agnostic op when one input will and
 * every other is of one element or of known dims (rank 4 at most);
 * Concat on the channels, GlobalAveragePool and the reductions that keep
 * their dims, of a twin. */
static int can_convert(layout *l, const o2m_node *n) {
  if (library_conv(n) || library_qconv(l, n)) return 1;
  avg_window window;
  if (is_op(n, "AveragePool")) return library_avg_pool(n, &window) && fact(l, window.source)->will_twin;
  int any_twin = 0;
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] && fact(l, n->inputs[i])->will_twin) any_twin = 1;
  if (!any_twin) return 0;
  if (is_op(n, "MaxPool")) return library_pool(n);
  int64_t groups, axes[4];
  if (is_op(n, "Reshape")) return shuffle_end(n, &groups) != NULL;
  if (is_op(n, "Slice")) return slice_axes(n, axes) > 0;
  if (is_op(n, "Resize") || is_op(n, "Pad")) return moved_param(n) && fact(l, n->inputs[0])->will_twin;
  if (n->n_outputs != 1 || !n->outputs[0] || !image_4d(n->outputs[0])) return 0;
  if (is_op(n, "GlobalAveragePool") || reduce_axes(n, axes)) return 1;
  if (is_op(n, "Concat")) {
    const o2m_attr *axis = o2m_node_attr(n, "axis");
    if (!axis || (axis->i != 1 && axis->i != -3)) return 0;
    for (int i = 0; i < n->n_inputs; i++)
      if (!n->inputs[i] || !image_4d(n->inputs[i])) return 0;
    return 1;
  }
  if (!is_agnostic(n)) return 0;
  int64_t dims[4];
  for (int i = 0; i < n->n_inputs; i++) {
    const o2m_value *v = n->inputs[i];
    if (v && !fact(l, v)->will_twin && !one_element(v) && !padded_dims(v, dims)) return 0;
  }
  return 1;
}

/* Whether a and b are 4-D of the same dims (no broadcast): each known
 * and equal, or of one symbol. */
static int same_dims(const o2m_value *a, const o2m_value *b) {
  if (!image_4d(a) || !image_4d(b)) return 0;
  const o2m_dim *da = xk_type(a)->dims, *db = xk_type(b)->dims;
  for (int k = 0; k < 4; k++) {
    if (da[k].size >= 0 || db[k].size >= 0) {
      if (da[k].size != db[k].size) return 0;
    } else if (!da[k].sym || !db[k].sym || strcmp(da[k].sym, db[k].sym) != 0) {
      return 0;
    }
  }
  return 1;
}


/* n's float attribute, or dflt when n has none. */
static float float_attr(const o2m_node *n, const char *name, float dflt) {
  const o2m_attr *a = o2m_node_attr(n, name);
  return a && a->type == O2M_ATTR_FLOAT ? a->f : dflt;
}

/* An activation a convolution takes: its name as NhwcFusedConv's
 * activation attribute, and its parameters. */
typedef struct conv_act {
  const char *name;
  int n_params;
  float params[2];
} conv_act;

/* Ops that alone are a kernel activation of their input, with the
 * attribute of their parameter and its default. */
static const struct {
  const char *op, *param;
  float default_value;
} single_activations[] = {
    {"Relu", NULL, 0}, {"HardSwish", NULL, 0}, {"Sigmoid", NULL, 0}, {"Tanh", NULL, 0}, {"LeakyRelu", "alpha", 0.01f},
};

/* The activation n applies alone: one of those above, or a Clip with
 * constant bounds. */
static int single_activation(const o2m_node *n, conv_act *a) {
  *a = (conv_act){0};
  for (size_t i = 0; i < sizeof(single_activations) / sizeof(single_activations[0]); i++) {
    if (!is_op(n, single_activations[i].op)) continue;
    a->name = single_activations[i].op;
    if (single_activations[i].param) {
      a->n_params = 1;
      a->params[0] = float_attr(n, single_activations[i].param, single_activations[i].default_value);
    }
    return 1;
  }
  if (!is_op(n, "Clip")) return 0;
  const o2m_tensor *lo = n->n_inputs > 1 && n->inputs[1] ? known(n->inputs[1]) : NULL;
  const o2m_tensor *hi = n->n_inputs > 2 && n->inputs[2] ? known(n->inputs[2]) : NULL;
  if ((n->n_inputs > 1 && n->inputs[1] && (!lo || lo->count != 1)) ||
      (n->n_inputs > 2 && n->inputs[2] && (!hi || hi->count != 1)))
    return 0;
  *a = (conv_act){"Clip", 2, {lo ? (float)o2m_tensor_get_float(lo, 0) : -3.402823466e38f,
                              hi ? (float)o2m_tensor_get_float(hi, 0) : 3.402823466e38f}};
  return 1;
}

/* The gate of a Mul that computes x gate(x), as PyTorch exports SiLU
 * (Sigmoid) and, before opset 14, Hardswish (HardSigmoid of alpha 1/6,
 * beta 1/2); NULL when it is not one. */
static o2m_node *gate_of(const o2m_node *mul, conv_act *a) {
  if (!is_op(mul, "Mul") || mul->n_inputs != 2 || !mul->inputs[0] || !mul->inputs[1]) return NULL;
  for (int k = 0; k < 2; k++) {
    o2m_node *gate = mul->inputs[k]->producer;
    if (!gate || gate->n_inputs < 1 || gate->inputs[0] != mul->inputs[1 - k]) continue;
    if (is_op(gate, "Sigmoid")) {
      *a = (conv_act){.name = "Silu"};
      return gate;
    }
    if (is_op(gate, "HardSigmoid") && fabsf(float_attr(gate, "alpha", 0.2f) - 1.0f / 6.0f) < 1e-6f &&
        float_attr(gate, "beta", 0.5f) == 0.5f) {
      *a = (conv_act){.name = "HardSwish"};
      return gate;
    }
  }
  return NULL;
}

/* The activation the node that ends a convolution's fusion applies. */
static int activation_of(const o2m_node *n, conv_act *a) { return single_activation(n, a) || gate_of(n, a); }

/* The Mul of x gate(x) when it and its gate are all that read x, and
 * the gate's output is read by the Mul alone; NULL otherwise. */
static o2m_node *gated_reader(layout *l, const o2m_graph *g, o2m_value *x, o2m_node **gate) {
  if (x->use_count != 2 || fact(l, x)->needs_nchw) return NULL;
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_node *n = g->nodes[i];
    if (n->n_inputs < 1 || n->inputs[0] != x || n->n_outputs != 1 || !n->outputs[0]) continue;
    o2m_node *mul = fact(l, n->outputs[0])->needs_nchw ? NULL : only_reader(g, n->outputs[0]);
    conv_act a;
    if (mul && gate_of(mul, &a) == n && mul->inputs[0] != mul->inputs[1] && l->converts[n->index] &&
        l->converts[mul->index] && !l->fused_into[n->index] && !l->fused_into[mul->index]) {
      *gate = n;
      return mul;
    }
  }
  return NULL;
}

static void analyse(layout *l, const o2m_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_node *n = g->nodes[i];
    if (l->fused_into[i]) continue; /* a channel shuffle's Transpose and last Reshape */
    l->converts[i] = (char)can_convert(l, n);
    if (l->converts[i]) fact(l, n->outputs[0])->will_twin = 1;
    int64_t groups;
    o2m_node *back = l->converts[i] && is_op(n, "Reshape") ? shuffle_end(n, &groups) : NULL;
    if (back) { /* the three as one: the last Reshape's output gets the twin */
      o2m_node *t = back->inputs[0]->producer;
      l->converts[t->index] = l->converts[back->index] = 1;
      l->fused_into[t->index] = l->fused_into[back->index] = n;
      fact(l, back->outputs[0])->will_twin = 1;
    }
    avg_window window; /* a Pad the pool takes goes with it */
    if (l->converts[i] && library_avg_pool(n, &window) && window.pad)
      l->converts[window.pad->index] = 1, l->fused_into[window.pad->index] = n;
  }
  /* who still reads NCHW: unconverted nodes, a converted node's constant
   * positions aside; subgraphs (uses not counted here); graph outputs */
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_node *n = g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] && (!l->converts[i] || !reads_twin(l, n, k))) fact(l, n->inputs[k])->needs_nchw = 1;
  }
  for (int i = 0; i < g->n_values; i++) {
    o2m_value *v = g->values[i];
    if (v->kind != O2M_VALUE_NODE || !fact(l, v)->will_twin) continue;
    int counted = 0;
    for (int j = 0; j < g->n_nodes; j++)
      for (int k = 0; k < g->nodes[j]->n_inputs; k++) counted += g->nodes[j]->inputs[k] == v;
    if (counted != v->use_count) fact(l, v)->needs_nchw = 1;
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (g->output_values[i]) fact(l, g->output_values[i])->needs_nchw = 1;
  /* fusions: Conv -> [Add with a twin] -> [Relu | Clip], each step the
   * only reader of a value nobody needs in NCHW */
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_node *n = g->nodes[i];
    if (!library_conv(n)) continue;
    o2m_value *y = n->outputs[0];
    o2m_node *next = fact(l, y)->needs_nchw ? NULL : only_reader(g, y);
    if (next && l->converts[next->index] && is_op(next, "Add") && next->n_inputs == 2 && !l->fused_into[next->index] &&
        next->inputs[0] != next->inputs[1] && same_dims(next->inputs[0], next->inputs[1])) {
      l->fused_add[i] = next;
      l->fused_into[next->index] = n;
      y = next->outputs[0];
      next = fact(l, y)->needs_nchw ? NULL : only_reader(g, y);
    } else if (next && is_op(next, "Add")) {
      next = NULL;
    }
    conv_act act;
    o2m_node *gate = NULL;
    if (next && l->converts[next->index] && !l->fused_into[next->index] && single_activation(next, &act)) {
      l->fused_act[i] = next;
      l->fused_into[next->index] = n;
    } else if (!next && (next = gated_reader(l, g, y, &gate))) {
      l->fused_act[i] = next;
      l->fused_into[next->index] = l->fused_into[gate->index] = n;
    }
  }
}

/* ---- the rewrite ------------------------------------------------------------------- */

static const int64_t to_last[4] = {0, 2, 3, 1}, to_first[4] = {0, 3, 1, 2};

/* Whether moving dims by perm keeps the order of those not of size 1 (a
 * [1, C, 1, 1] scale, a per-image statistic): then the elements stay in
 * place and a Reshape does it. */
static int order_kept(const int64_t *dims, const int64_t *perm) {
  int64_t last = -1;
  for (int k = 0; k < 4; k++) {
    if (dims[perm[k]] == 1) continue;
    if (perm[k] < last) return 0;
    last = perm[k];
  }
  return 1;
}

/* v's twin, made (once) when it has none: a Reshape where the elements
 * stay in place, else a Transpose (of v made 4-D where its rank is lower). */
static o2m_value *twin_of(layout *l, o2m_value *v) {
  value_fact *f = fact(l, v);
  int64_t dims[4], shape[4];
  if (f->twin) return f->twin;
  if (!padded_dims(v, dims)) return f->twin = xk_transpose(&l->rw, v, to_last, 4);
  for (int k = 0; k < 4; k++) shape[k] = dims[to_last[k]];
  if (order_kept(dims, to_last)) return f->twin = xk_reshape(&l->rw, v, shape, 4);
  o2m_value *v4 = xk_rank(v) == 4 ? v : xk_reshape(&l->rw, v, dims, 4);
  return f->twin = xk_transpose(&l->rw, v4, to_last, 4);
}

/* Records t as v's twin; makes v from it when something reads v in NCHW. */
static o2m_status set_twin(layout *l, o2m_value *v, o2m_value *t) {
  if (!t) return xk_failed(&l->rw);
  value_fact *f = fact(l, v);
  f->twin = t;
  if (!f->needs_nchw) return O2M_OK;
  int64_t dims[4];
  if (static_4d(v) && padded_dims(v, dims) && order_kept(dims, to_last)) { /* the elements in place: a Reshape */
    o2m_value *in[2] = {t, o2m_rw_const_ints(&l->rw, dims, 4)};
    return in[1] ? o2m_rw_node_into(&l->rw, "Reshape", 2, in, 1, &v, NULL, 0) : xk_failed(&l->rw);
  }
  o2m_attr perm = o2m_rw_attr_ints(&l->rw, "perm", to_first, 4);
  return o2m_rw_node_into(&l->rw, "Transpose", 1, &t, 1, &v, &perm, 1);
}

/* Input k of a converted agnostic node: its twin, or a constant as it is
 * (one element) or transposed (4-D). */
static o2m_value *agnostic_input(layout *l, o2m_value *v) {
  if (!v) return NULL;
  if (fact(l, v)->twin || !known(v) || !one_element(v)) return twin_of(l, v);
  return v;
}

/* A fresh value for the twin of v, its dims v's permuted (the inference
 * of the channels-last contrib ops leaves spatial sizes symbolic). */
static o2m_value *new_twin_value(layout *l, const o2m_value *v) {
  const char *name = o2m_arena_printf(&l->rw.model->arena, "%s/nhwc", v->name);
  return name ? o2m_graph_new_value(l->rw.model, l->rw.graph, name, O2M_VALUE_NODE) : NULL;
}

static void permute_dims(o2m_value *twin, const o2m_value *v) {
  const o2m_type *t = xk_type(v);
  for (int k = 0; k < 4; k++) twin->type.dims[k] = t->dims[to_last[k]];
}

static o2m_status convert_conv(layout *l, o2m_node *conv) {
  int i = conv->index;
  o2m_node *add = l->fused_add[i], *act = l->fused_act[i];
  o2m_value *ins[4] = {twin_of(l, conv->inputs[0]), conv->inputs[1], conv->n_inputs > 2 ? conv->inputs[2] : NULL, NULL};
  if (add) ins[3] = twin_of(l, add->inputs[add->inputs[0] == conv->outputs[0] ? 1 : 0]);
  if (!ins[0] || (add && !ins[3])) return xk_failed(&l->rw);
  int n_attrs = 0;
  o2m_attr *attrs = o2m_arena_array(&l->rw.model->arena, (size_t)conv->n_attrs + 3, sizeof(o2m_attr));
  if (!attrs) return o2m_fail(l->rw.diag, O2M_ERR_NOMEM, "out of memory");
  for (int a = 0; a < conv->n_attrs; a++)
    if (strcmp(conv->attrs[a].name, "auto_pad") != 0) attrs[n_attrs++] = conv->attrs[a];
  conv_act a;
  if (act && activation_of(act, &a)) {
    attrs[n_attrs++] = o2m_rw_attr_string(&l->rw, "activation", a.name);
    if (a.n_params) {
      o2m_attr p = {.name = "activation_params", .type = O2M_ATTR_FLOATS, .count = a.n_params};
      float *v = o2m_arena_array(&l->rw.model->arena, (size_t)a.n_params, sizeof(float));
      if (!v) return o2m_fail(l->rw.diag, O2M_ERR_NOMEM, "out of memory");
      memcpy(v, a.params, (size_t)a.n_params * sizeof(float));
      p.floats = v;
      attrs[n_attrs++] = p;
    }
  }
  /* the result: the last absorbed node's output, channels last */
  o2m_node *last = act ? act : add ? add : conv;
  o2m_value *y_nchw = last->outputs[0], *y = new_twin_value(l, y_nchw);
  if (!y) return o2m_fail(l->rw.diag, O2M_ERR_NOMEM, "out of memory");
  int n_in = ins[3] ? 4 : ins[2] ? 3 : 2;
  o2m_status s = o2m_rw_domain_node_into(&l->rw, "com.microsoft", "NhwcFusedConv", n_in, ins, 1, &y, attrs, n_attrs);
  if (s) return s;
  permute_dims(y, y_nchw);
  if (add) fact(l, add->outputs[0])->twin = y;
  if (act) fact(l, act->outputs[0])->twin = y;
  return set_twin(l, y_nchw, y);
}

/* NhwcQLinearConv: X's twin, the other operands and the attributes as they are. */
static o2m_status convert_qconv(layout *l, o2m_node *n) {
  o2m_value *ins[9], *y = new_twin_value(l, n->outputs[0]);
  if (n->n_inputs > 9) return o2m_rw_unsupported(&l->rw, "too many inputs");
  for (int i = 0; i < n->n_inputs; i++) ins[i] = i ? n->inputs[i] : twin_of(l, n->inputs[0]);
  if (!ins[0]) return xk_failed(&l->rw);
  if (!y) return o2m_fail(l->rw.diag, O2M_ERR_NOMEM, "out of memory");
  o2m_status s = o2m_rw_domain_node_into(&l->rw, "com.microsoft", "NhwcQLinearConv", n->n_inputs, ins, 1, &y,
                                         n->attrs, n->n_attrs);
  if (s) return s;
  permute_dims(y, n->outputs[0]);
  return set_twin(l, n->outputs[0], y);
}

static o2m_status convert_pool(layout *l, o2m_node *n) {
  o2m_value *x = twin_of(l, n->inputs[0]), *y = new_twin_value(l, n->outputs[0]);
  if (!x) return xk_failed(&l->rw);
  if (!y) return o2m_fail(l->rw.diag, O2M_ERR_NOMEM, "out of memory");
  o2m_status s = o2m_rw_domain_node_into(&l->rw, "com.microsoft", "NhwcMaxPool", 1, &x, 1, &y, n->attrs, n->n_attrs);
  if (s) return s;
  permute_dims(y, n->outputs[0]);
  return set_twin(l, n->outputs[0], y);
}

/* An AveragePool (with the Pad it absorbs) as the library's depthwise
 * convolution: an NhwcFusedConv of C groups whose weights are all 1 /
 * (the window's size), as fast as oneDNN's pooling and no new kernel. Where
 * count_include_pad is 0 and the window overhangs the pads, a constant
 * [1, OH, OW, 1] map of (window size / elements inside) multiplies the
 * sums. Each output differs from the reference's sum / count by a
 * rounding (sum times the reciprocal). */
static o2m_status convert_avg_pool(layout *l, o2m_node *n) {
  o2m_rewriter *rw = &l->rw;
  avg_window win;
  int64_t in[4], out[4];
  if (!library_avg_pool(n, &win) || !XK_STATIC_DIMS(win.source, in) || !XK_STATIC_DIMS(n->outputs[0], out))
    return o2m_rw_error(rw, "internal: an AveragePool the layout pass cannot convert");
  int64_t *kernel = win.kernel, *strides = win.strides, *pads = win.pads;
  o2m_value *x = twin_of(l, win.source), *y = new_twin_value(l, n->outputs[0]);
  if (!x) return xk_failed(rw);
  if (!y) return o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
  int64_t c = in[1], taps = kernel[0] * kernel[1], w_dims[4] = {c, 1, kernel[0], kernel[1]};
  o2m_tensor *w = o2m_rw_new_tensor(rw, O2M_DT_FLOAT, 4, w_dims);
  if (!w) return O2M_ERR_NOMEM;
  for (int64_t i = 0; i < c * taps; i++) ((float *)w->data)[i] = 1.0f / (float)taps;
  int exclude = !win.include_pads && (pads[0] || pads[1] || pads[2] || pads[3]);
  o2m_attr attrs[3] = {o2m_rw_attr_ints(rw, "strides", strides, 2), o2m_rw_attr_ints(rw, "pads", pads, 4),
                       o2m_rw_attr_int("group", c)};
  o2m_value *ins[2] = {x, o2m_rw_const_tensor(rw, w)};
  o2m_value *sum = y;
  if (exclude) {
    const char *name = o2m_arena_printf(&rw->model->arena, "%s/nhwc_sum", n->outputs[0]->name);
    sum = name ? o2m_graph_new_value(rw->model, rw->graph, name, O2M_VALUE_NODE) : NULL;
  }
  if (!ins[1] || !sum) return o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
  o2m_status s = o2m_rw_domain_node_into(rw, "com.microsoft", "NhwcFusedConv", 2, ins, 1, &sum, attrs, 3);
  if (s) return s;
  permute_dims(sum, n->outputs[0]);
  if (exclude) { /* the sums of windows cut by the border, rescaled */
    int64_t map_dims[4] = {1, out[2], out[3], 1};
    o2m_tensor *map = o2m_rw_new_tensor(rw, O2M_DT_FLOAT, 4, map_dims);
    if (!map) return O2M_ERR_NOMEM;
    for (int64_t r = 0; r < out[2]; r++)
      for (int64_t q = 0; q < out[3]; q++) {
        int64_t top = r * strides[0] - pads[0], left = q * strides[1] - pads[1];
        int64_t rows = (top + kernel[0] < in[2] ? top + kernel[0] : in[2]) - (top > 0 ? top : 0);
        int64_t cols = (left + kernel[1] < in[3] ? left + kernel[1] : in[3]) - (left > 0 ? left : 0);
        ((float *)map->data)[r * out[3] + q] = rows > 0 && cols > 0 ? (float)taps / (float)(rows * cols) : 0.0f;
      }
    o2m_value *scale[2] = {sum, o2m_rw_const_tensor(rw, map)};
    if (!scale[1]) return O2M_ERR_NOMEM;
    if ((s = o2m_rw_node_into(rw, "Mul", 2, scale, 1, &y, NULL, 0))) return s;
    permute_dims(y, n->outputs[0]);
  }
  return set_twin(l, n->outputs[0], y);
}

/* A channel shuffle channels last: [N, H, W, C] as [N, H, W, g, C/g],
 * the last two swapped, back to [N, H, W, C]; the same channel order. */
static o2m_status convert_shuffle(layout *l, o2m_node *n) {
  int64_t groups, dims[4];
  o2m_node *back = shuffle_end(n, &groups);
  o2m_value *x = twin_of(l, n->inputs[0]);
  if (!back || !x || !XK_STATIC_DIMS(n->inputs[0], dims)) return xk_failed(&l->rw);
  int64_t split[5] = {dims[0], dims[2], dims[3], groups, dims[1] / groups}, swap[5] = {0, 1, 2, 4, 3};
  int64_t whole[4] = {dims[0], dims[2], dims[3], dims[1]};
  o2m_value *v = xk_reshape(&l->rw, x, split, 5);
  v = v ? xk_transpose(&l->rw, v, swap, 5) : NULL;
  v = v ? xk_reshape(&l->rw, v, whole, 4) : NULL;
  return set_twin(l, back->outputs[0], v);
}

/* A Slice of a twin: its axes moved to their places channels last. */
static o2m_status convert_slice(layout *l, o2m_node *n) {
  int64_t axes[4];
  int count = slice_axes(n, axes);
  for (int k = 0; k < count; k++) axes[k] = to_first[axes[k]];
  o2m_value *ins[5] = {twin_of(l, n->inputs[0]), n->inputs[1], n->inputs[2], o2m_rw_const_ints(&l->rw, axes, count),
                       n->n_inputs > 4 ? n->inputs[4] : NULL};
  if (!ins[0] || !ins[3]) return xk_failed(&l->rw);
  return set_twin(l, n->outputs[0], o2m_rw_op(&l->rw, "Slice", ins[4] ? 5 : 4, ins, NULL, 0));
}

/* A Resize or Pad of a twin: its per-dim parameter in NHWC's order (a
 * Pad's begins and ends alike), the other inputs and attributes as they
 * are. */
static o2m_status convert_moved_param(layout *l, o2m_node *n) {
  int at = moved_param(n);
  const o2m_tensor *t = known(n->inputs[at]);
  double v[8];
  for (int k = 0; k < (int)t->count; k++) {
    int dim = k % 4, half = k - dim;
    v[k] = o2m_dtype_is_float(t->dtype) ? o2m_tensor_get_float(t, half + to_last[dim])
                                        : (double)o2m_tensor_get_int(t, half + to_last[dim]);
  }
  o2m_value *ins[5] = {NULL};
  for (int i = 0; i < n->n_inputs && i < 5; i++) ins[i] = n->inputs[i];
  ins[0] = twin_of(l, n->inputs[0]);
  ins[at] = xk_const_1d(&l->rw, t->dtype, v, (int)t->count);
  if (!ins[0] || !ins[at] || n->n_inputs > 5) return xk_failed(&l->rw);
  return set_twin(l, n->outputs[0], o2m_rw_op(&l->rw, n->op_type, n->n_inputs, ins, n->attrs, n->n_attrs));
}

static o2m_status convert_other(layout *l, o2m_node *n) {
  o2m_rewriter *rw = &l->rw;
  o2m_value *out;
  if (is_op(n, "MaxPool")) return convert_pool(l, n);
  if (is_op(n, "AveragePool")) return convert_avg_pool(l, n);
  if (library_qconv(l, n)) return convert_qconv(l, n);
  if (is_op(n, "Reshape")) return convert_shuffle(l, n);
  if (is_op(n, "Slice")) return convert_slice(l, n);
  if (moved_param(n)) return convert_moved_param(l, n);
  int64_t axes[4];
  int n_axes = reduce_axes(n, axes);
  if (is_op(n, "GlobalAveragePool")) {
    out = xk_reduce(rw, "ReduceMean", twin_of(l, n->inputs[0]), (const int64_t[]){1, 2}, 2, 1);
  } else if (n_axes) {
    for (int k = 0; k < n_axes; k++) axes[k] = to_first[axes[k]]; /* where NCHW's dim lies channels last */
    out = xk_reduce(rw, n->op_type, twin_of(l, n->inputs[0]), axes, n_axes, 1);
  } else if (is_op(n, "Concat")) {
    o2m_value **ins = o2m_arena_array(&rw->model->arena, (size_t)n->n_inputs + 1, sizeof(o2m_value *));
    if (!ins) return o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n->n_inputs; i++)
      if (!(ins[i] = twin_of(l, n->inputs[i]))) return xk_failed(rw);
    o2m_attr axis = o2m_rw_attr_int("axis", 3);
    out = o2m_rw_op(rw, "Concat", n->n_inputs, ins, &axis, 1);
  } else {
    o2m_value *ins[8];
    if (n->n_inputs > 8) return o2m_rw_unsupported(rw, "too many inputs");
    for (int i = 0; i < n->n_inputs; i++)
      if (!(ins[i] = agnostic_input(l, n->inputs[i])) && n->inputs[i]) return xk_failed(rw);
    out = o2m_rw_op(rw, n->op_type, n->n_inputs, ins, n->attrs, n->n_attrs);
  }
  return set_twin(l, n->outputs[0], out);
}

static void drop_uses(const o2m_node *n) {
  for (int k = 0; k < n->n_inputs; k++)
    if (n->inputs[k]) n->inputs[k]->use_count--;
}

o2m_status o2m_layout_channels_last(o2m_model *model, int qconvs, o2m_diag *diag) {
  o2m_graph *g = model->graph;
  layout l;
  memset(&l, 0, sizeof(l));
  l.qconvs = qconvs;
  int any = 0;
  for (int i = 0; i < g->n_nodes && !any; i++) any = library_conv(g->nodes[i]) || library_qconv(&l, g->nodes[i]);
  if (!any) return O2M_OK;
  l.rw = (o2m_rewriter){model, diag, g, NULL, NULL, 0, 0, 0, NULL, NULL};
  l.cap = 4 * (size_t)(g->n_values + 2 * g->n_nodes) + 64;
  o2m_arena *arena = &model->arena;
  l.facts = o2m_arena_array(arena, l.cap, sizeof(value_fact));
  l.converts = o2m_arena_array(arena, (size_t)g->n_nodes + 1, 1);
  l.fused_into = o2m_arena_array(arena, (size_t)g->n_nodes + 1, sizeof(o2m_node *));
  l.fused_act = o2m_arena_array(arena, (size_t)g->n_nodes + 1, sizeof(o2m_node *));
  l.fused_add = o2m_arena_array(arena, (size_t)g->n_nodes + 1, sizeof(o2m_node *));
  if (!l.facts || !l.converts || !l.fused_into || !l.fused_act || !l.fused_add)
    return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->index = i;
  analyse(&l, g);
  o2m_node **old = g->nodes;
  int n_old = g->n_nodes;
  for (int i = 0; i < n_old; i++) {
    o2m_node *n = old[i];
    l.rw.node = n;
    o2m_status s = O2M_OK;
    o2m_node *owner = l.fused_into[i];
    if (!l.converts[i]) {
      s = o2m_rw_append(&l.rw, n) ? o2m_fail(diag, O2M_ERR_NOMEM, "out of memory") : O2M_OK;
    } else if (library_conv(n) && l.fused_add[i]) {
      drop_uses(n); /* made where its Add was, when Z is there */
    } else if (owner && owner != n && l.fused_add[owner->index] == n) {
      l.rw.node = owner;
      s = convert_conv(&l, owner);
      drop_uses(n);
    } else if (owner) {
      drop_uses(n); /* an activation the Conv took */
    } else {
      s = library_conv(n) ? convert_conv(&l, n) : convert_other(&l, n);
      drop_uses(n);
    }
    if (s) return s;
  }
  g->nodes = l.rw.out_nodes;
  g->n_nodes = l.rw.n_out_nodes;
  return O2M_OK;
}
