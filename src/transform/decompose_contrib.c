/* decompose_contrib.c - onnxruntime's com.microsoft contrib ops written in
 * ONNX ops, once for every target (rules.def). Semantics from onnxruntime's
 * schemas and CPU kernels (docs/ContribOperators.md,
 * onnxruntime/core/graph/contrib_ops/, onnxruntime/contrib_ops/cpu/):
 *
 *   FusedConv(X, W, B?, Z?)   act(Conv(X, W, B) + Z): the Conv attributes,
 *                             activation with activation_params
 *   FusedGemm(A, B, C?)       act(Gemm(A, B, C)): the Gemm attributes,
 *                             activation with activation_alpha/_beta
 *   FusedMatMul(A, B)         alpha * MatMul(op(A), op(B)), op swapping the
 *                             last two dims where transA/transB say so
 *                             (transBatchA/B are refused)
 *   Gelu(X)                   ONNX Gelu;  BiasGelu(X, bias): Gelu(X + bias)
 *   FastGelu(X, bias?)        ONNX Gelu, approximate "tanh", of X + bias
 *   QuickGelu(X)              X * Sigmoid(alpha X), alpha 1.702
 *   BiasAdd(X, bias, skip)    X + bias + skip
 *   SkipLayerNormalization(input, skip, gamma, beta?, bias?)
 *                             s = input + skip + bias; LayerNormalization
 *                             of s over the last axis (output, mean,
 *                             inv_std_var), s as input_skip_bias_sum
 *   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?)
 *                             the same with the RMS form (no mean output)
 *   SimplifiedLayerNormalization(X, scale) (ONNX domain, as onnxruntime
 *                             registers it): RMSNormalization; its second
 *                             output inv_std_var
 * Activations of FusedConv / FusedGemm: Relu, Tanh, Sigmoid, LeakyRelu
 * (alpha), Clip (min, max), HardSigmoid (alpha, beta); any other is
 * refused with its name.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"

/* ---- activations ------------------------------------------------------------------ */

typedef struct fused_activation {
  const char *name;    /* as the activation attribute names it */
  int n_params;        /* how many parameters it takes */
  const char *params[2]; /* the ONNX op's attribute for each (NULL: Clip's inputs) */
  float defaults[2];
} fused_activation;

static const fused_activation fused_activations[] = {
    {"Relu", 0, {NULL}, {0}},
    {"Tanh", 0, {NULL}, {0}},
    {"Sigmoid", 0, {NULL}, {0}},
    {"LeakyRelu", 1, {"alpha"}, {0.01f}},
    {"HardSigmoid", 2, {"alpha", "beta"}, {0.2f, 0.5f}},
    {"Clip", 2, {NULL, NULL}, {-INFINITY, INFINITY}},
};

/* The activation attribute of the node as a NUL-terminated string. */
static int activation_name(o2m_rewriter *rw, char *buf, size_t cap) {
  const o2m_attr *a = o2m_rw_attr(rw, "activation");
  if (!a || a->type != O2M_ATTR_STRING || a->s.len >= cap) return 0;
  memcpy(buf, a->s.ptr, a->s.len);
  buf[a->s.len] = '\0';
  return 1;
}

static const fused_activation *find_activation(const char *name) {
  for (size_t i = 0; i < sizeof(fused_activations) / sizeof(fused_activations[0]); i++)
    if (strcmp(fused_activations[i].name, name) == 0) return &fused_activations[i];
  return NULL;
}

/* act(x) with parameters p (p[i] given for i < n_given, else defaults). */
static o2m_value *apply_activation(o2m_rewriter *rw, const fused_activation *act, o2m_value *x,
                                   const float *p, int n_given) {
  float v[2];
  for (int i = 0; i < 2; i++) v[i] = i < n_given ? p[i] : act->defaults[i];
  if (strcmp(act->name, "Clip") == 0) {
    o2m_value *in[3] = {x, xk_scalar_like(rw, x, v[0]), xk_scalar_like(rw, x, v[1])};
    return in[1] && in[2] ? o2m_rw_op(rw, "Clip", 3, in, NULL, 0) : NULL;
  }
  o2m_attr attrs[2];
  for (int i = 0; i < act->n_params; i++) attrs[i] = o2m_rw_attr_float(act->params[i], v[i]);
  return o2m_rw_op(rw, act->name, 1, &x, attrs, act->n_params);
}

/* The node's activation; NULL after reporting an unknown one. */
static const fused_activation *node_activation(o2m_rewriter *rw, o2m_status *st) {
  char name[64];
  const fused_activation *act = activation_name(rw, name, sizeof(name)) ? find_activation(name) : NULL;
  *st = act ? O2M_OK
            : o2m_rw_unsupported(rw, "activation '%s' is not one of Relu, Tanh, Sigmoid, LeakyRelu, "
                                 "Clip, HardSigmoid", activation_name(rw, name, sizeof(name)) ? name : "");
  return act;
}

/* ---- FusedConv, FusedGemm --------------------------------------------------------- */

static const char *const fused_conv_extras[] = {"activation", "activation_params", NULL};

o2m_status o2m_decompose_fused_conv(o2m_rewriter *rw) {
  o2m_status st;
  const fused_activation *act = node_activation(rw, &st);
  if (!act) return st;
  const o2m_attr *params = o2m_rw_attr(rw, "activation_params");
  int n_given = params && params->type == O2M_ATTR_FLOATS ? params->count : 0;
  if (n_given > act->n_params)
    return o2m_rw_unsupported(rw, "activation %s takes %d parameters, %d given", act->name, act->n_params,
                              n_given);
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, fused_conv_extras, 0, &n_attrs);
  if (!attrs) return xk_failed(rw);
  o2m_value *in[3] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 1), o2m_rw_in(rw, 2)};
  o2m_value *y = o2m_rw_op(rw, "Conv", in[2] ? 3 : 2, in, attrs, n_attrs);
  if (o2m_rw_in(rw, 3)) y = xk_op2(rw, "Add", y, o2m_rw_in(rw, 3));
  return xk_bind(rw, 0, y ? apply_activation(rw, act, y, n_given ? params->floats : NULL, n_given) : NULL);
}

static const char *const fused_gemm_extras[] = {"activation", "activation_alpha", "activation_beta",
                                                "activation_gamma", NULL};

o2m_status o2m_decompose_fused_gemm(o2m_rewriter *rw) {
  o2m_status st;
  const fused_activation *act = node_activation(rw, &st);
  if (!act) return st;
  if (strcmp(act->name, "Clip") == 0)
    return o2m_rw_unsupported(rw, "activation Clip (its bounds have no attribute in FusedGemm)");
  static const char *const param_attrs[2] = {"activation_alpha", "activation_beta"};
  float p[2];
  for (int i = 0; i < 2; i++) p[i] = o2m_rw_attr_f(rw, param_attrs[i], act->defaults[i]);
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, fused_gemm_extras, 0, &n_attrs);
  if (!attrs) return xk_failed(rw);
  o2m_value *in[3] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 1), o2m_rw_in(rw, 2)};
  o2m_value *y = o2m_rw_op(rw, "Gemm", in[2] ? 3 : 2, in, attrs, n_attrs);
  return xk_bind(rw, 0, y ? apply_activation(rw, act, y, p, 2) : NULL);
}

/* ---- FusedMatMul ------------------------------------------------------------------ */

/* x with its last two dims swapped (rank >= 2 known). */
static o2m_value *swap_last_two(o2m_rewriter *rw, o2m_value *x, int rank) {
  int64_t perm[64];
  for (int k = 0; k < rank; k++) perm[k] = k;
  perm[rank - 2] = rank - 1;
  perm[rank - 1] = rank - 2;
  return xk_transpose(rw, x, perm, rank);
}

o2m_status o2m_decompose_fused_matmul(o2m_rewriter *rw) {
  if (o2m_rw_attr_i(rw, "transBatchA", 0) || o2m_rw_attr_i(rw, "transBatchB", 0))
    return o2m_rw_unsupported(rw, "transBatchA / transBatchB");
  o2m_value *ab[2] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 1)};
  static const char *const trans[2] = {"transA", "transB"};
  for (int i = 0; i < 2; i++) {
    if (!o2m_rw_attr_i(rw, trans[i], 0)) continue;
    int rank = xk_rank(ab[i]);
    if (rank < 0 || rank > 64) return o2m_rw_unsupported(rw, "%s on an input of unknown rank", trans[i]);
    if (rank >= 2) ab[i] = swap_last_two(rw, ab[i], rank);
  }
  o2m_value *y = o2m_rw_op(rw, "MatMul", 2, ab, NULL, 0);
  double alpha = o2m_rw_attr_f(rw, "alpha", 1.0f);
  if (y && alpha != 1.0) y = xk_op2(rw, "Mul", y, xk_scalar_like(rw, y, alpha));
  return xk_bind(rw, 0, y);
}

/* ---- the Gelu family, BiasAdd ----------------------------------------------------- */

static o2m_value *onnx_gelu(o2m_rewriter *rw, o2m_value *x, const char *approximate) {
  o2m_attr a = o2m_rw_attr_string(rw, "approximate", approximate);
  return x ? o2m_rw_op(rw, "Gelu", 1, &x, &a, 1) : NULL;
}

/* Input 0, plus input `bias` when present. */
static o2m_value *with_bias(o2m_rewriter *rw, int bias) {
  o2m_value *x = o2m_rw_in(rw, 0);
  return o2m_rw_in(rw, bias) ? xk_op2(rw, "Add", x, o2m_rw_in(rw, bias)) : x;
}

o2m_status o2m_decompose_ms_gelu(o2m_rewriter *rw) { return xk_bind(rw, 0, onnx_gelu(rw, o2m_rw_in(rw, 0), "none")); }

o2m_status o2m_decompose_bias_gelu(o2m_rewriter *rw) { return xk_bind(rw, 0, onnx_gelu(rw, with_bias(rw, 1), "none")); }

o2m_status o2m_decompose_fast_gelu(o2m_rewriter *rw) { return xk_bind(rw, 0, onnx_gelu(rw, with_bias(rw, 1), "tanh")); }

o2m_status o2m_decompose_quick_gelu(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_value *ax = xk_op2(rw, "Mul", x, xk_scalar_like(rw, x, o2m_rw_attr_f(rw, "alpha", 1.702f)));
  return xk_bind(rw, 0, xk_op2(rw, "Mul", x, xk_op1(rw, "Sigmoid", ax)));
}

o2m_status o2m_decompose_bias_add(o2m_rewriter *rw) {
  return xk_bind(rw, 0, xk_op2(rw, "Add", with_bias(rw, 1), o2m_rw_in(rw, 2)));
}

/* ---- layer normalizations --------------------------------------------------------- */

/* 1 / sqrt(mean(x^2 over the last axis) + eps), as float: the inv_std_var
 * of the RMS forms. */
static o2m_value *rms_inv_std(o2m_rewriter *rw, o2m_value *x, double eps) {
  const int64_t last[1] = {-1};
  o2m_value *xf = xk_cast(rw, x, O2M_DT_FLOAT);
  o2m_value *ms = xk_reduce(rw, "ReduceMean", xk_op2(rw, "Mul", xf, xf), last, 1, 1);
  return xk_op1(rw, "Reciprocal", xk_op1(rw, "Sqrt", xk_op2(rw, "Add", ms, xk_scalar_like(rw, ms, eps))));
}

/* The RMS normalization of x (over the last axis) times scale, as output 0,
 * and its inv_std_var as output `inv_out` when used. */
static o2m_status rms_outputs(o2m_rewriter *rw, o2m_value *x, o2m_value *scale, double eps, int inv_out) {
  o2m_attr attrs[2] = {o2m_rw_attr_int("axis", -1), o2m_rw_attr_float("epsilon", (float)eps)};
  o2m_value *in[2] = {x, scale};
  o2m_status st = xk_bind(rw, 0, x ? o2m_rw_op(rw, "RMSNormalization", 2, in, attrs, 2) : NULL);
  if (!st && o2m_rw_out(rw, inv_out)) st = xk_bind(rw, inv_out, rms_inv_std(rw, x, eps));
  return st;
}

/* input + skip (+ bias at input `bias`). */
static o2m_value *skip_sum(o2m_rewriter *rw, int bias) {
  o2m_value *s = xk_op2(rw, "Add", o2m_rw_in(rw, 0), o2m_rw_in(rw, 1));
  return o2m_rw_in(rw, bias) ? xk_op2(rw, "Add", s, o2m_rw_in(rw, bias)) : s;
}

o2m_status o2m_decompose_skip_layer_norm(o2m_rewriter *rw) {
  o2m_value *s = skip_sum(rw, 4);
  if (!s) return xk_failed(rw);
  o2m_attr attrs[2] = {o2m_rw_attr_int("axis", -1),
                       o2m_rw_attr_float("epsilon", o2m_rw_attr_f(rw, "epsilon", 1e-5f))};
  o2m_value *in[3] = {s, o2m_rw_in(rw, 2), o2m_rw_in(rw, 3)};
  o2m_value **outs = o2m_rw_node(rw, "LayerNormalization", in[2] ? 3 : 2, in, 3, attrs, 2);
  if (!outs) return xk_failed(rw);
  o2m_status st = O2M_OK;
  for (int k = 0; k < 3 && !st; k++) st = xk_bind(rw, k, outs[k]);
  return st ? st : xk_bind(rw, 3, s);
}

o2m_status o2m_decompose_skip_simplified_layer_norm(o2m_rewriter *rw) {
  if (o2m_rw_out(rw, 1)) return o2m_rw_unsupported(rw, "the mean output (the RMS form computes none)");
  o2m_value *s = skip_sum(rw, 3);
  o2m_status st = rms_outputs(rw, s, o2m_rw_in(rw, 2), o2m_rw_attr_f(rw, "epsilon", 1e-5f), 2);
  return st ? st : xk_bind(rw, 3, s);
}

o2m_status o2m_decompose_simplified_layer_norm(o2m_rewriter *rw) {
  int64_t axis = o2m_rw_attr_i(rw, "axis", -1);
  int rank = xk_rank(o2m_rw_in(rw, 0));
  if (axis != -1 && !(rank > 0 && axis == rank - 1))
    return o2m_rw_unsupported(rw, "axis %lld (only the last axis)", (long long)axis);
  return rms_outputs(rw, o2m_rw_in(rw, 0), o2m_rw_in(rw, 1), o2m_rw_attr_f(rw, "epsilon", 1e-5f), 1);
}
