/* decompose_contrib.c - onnxruntime's com.microsoft contrib ops written in
 * ONNX ops, once for every target (rules.def). Semantics from onnxruntime's
 * schemas and CPU kernels (docs/ContribOperators.md,
 * onnxruntime/core/graph/contrib_ops/, onnxruntime/contrib_ops/cpu/):
 *
 *   FusedConv(X, W, B?, Z?)   act(Conv(X, W, B) + Z): the Conv attributes,
 *                             activation (none: identity) with
 *                             activation_params
 *   FusedGemm(A, B, C?)       act(Gemm(A, B, C)): the Gemm attributes,
 *                             activation with activation_alpha/_beta/_gamma
 *   FusedMatMul(A, B)         alpha * MatMul(op(A), op(B)), op the
 *                             permutation transA / transBatchA give
 *   Gelu(X)                   ONNX Gelu;  BiasGelu(X, bias): Gelu(X + bias)
 *   FastGelu(X, bias?)        ONNX Gelu, approximate "tanh", of X + bias
 *   QuickGelu(X)              X * Sigmoid(alpha X), alpha 1.702
 *   BiasAdd(X, bias, skip)    X + bias + skip
 *   SkipLayerNormalization(input, skip, gamma, beta?, bias?)
 *                             s = input + skip + bias; LayerNormalization
 *                             of s over the last axis (output, mean,
 *                             inv_std_var), s as input_skip_bias_sum;
 *                             epsilon 1e-12
 *   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?)
 *                             the same with the RMS form (mean: zeros)
 *   SimplifiedLayerNormalization(X, scale) (ONNX domain, as onnxruntime
 *                             registers it): RMSNormalization; its second
 *                             output inv_std_var
 *   RotaryEmbedding(input, position_ids, cos, sin)  ONNX's RotaryEmbedding
 *                             (a one-element position_ids an offset)
 *   EmbedLayerNormalization   LayerNormalization of the summed embeddings
 *                             (see its function)
 *   Inverse(X (..., N, N))    Gauss-Jordan elimination with partial
 *                             pivoting, unrolled (N known, at most 16)
 *   NhwcConv, NhwcFusedConv   Conv / FusedConv between transposes (X, Z
 *                             and Y channels last, W in ONNX's layout)
 *   NhwcMaxPool(X)            MaxPool between transposes (onnxruntime's
 *                             is for 8-bit integers; any dtype here)
 * Activations of FusedConv / FusedGemm: those onnxruntime's fusers make
 * (fused_activations below); any other is refused with its name.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"

/* ---- activations ------------------------------------------------------------------ */

/* Composite activations, of x and their two parameters. */
static o2m_value *clip_act(o2m_rewriter *rw, o2m_value *x, const double *p) {
  o2m_value *in[3] = {x, xk_scalar_like(rw, x, p[0]), xk_scalar_like(rw, x, p[1])};
  return in[1] && in[2] ? o2m_rw_op(rw, "Clip", 3, in, NULL, 0) : NULL;
}
static o2m_value *silu_act(o2m_rewriter *rw, o2m_value *x, const double *p) {
  (void)p;
  return xk_op2(rw, "Mul", x, xk_op1(rw, "Sigmoid", x));
}
static o2m_value *scaled_tanh_act(o2m_rewriter *rw, o2m_value *x, const double *p) {
  o2m_value *t = xk_op1(rw, "Tanh", xk_op2(rw, "Mul", x, xk_scalar_like(rw, x, p[1])));
  return xk_op2(rw, "Mul", t, xk_scalar_like(rw, x, p[0]));
}
static o2m_value *parametric_softplus_act(o2m_rewriter *rw, o2m_value *x, const double *p) {
  o2m_value *t = xk_op1(rw, "Softplus", xk_op2(rw, "Mul", x, xk_scalar_like(rw, x, p[1])));
  return xk_op2(rw, "Mul", t, xk_scalar_like(rw, x, p[0]));
}

typedef struct fused_activation {
  const char *name;           /* as the activation attribute names it */
  int n_params;
  const char *onnx_attrs[2];  /* the ONNX op's attribute for each parameter */
  const char *gemm_attrs[2];  /* FusedGemm's attribute holding each */
  double defaults[2];         /* the ONNX op's defaults, where a parameter is left out */
  o2m_value *(*build)(o2m_rewriter *rw, o2m_value *x, const double *p); /* NULL: the ONNX op */
} fused_activation;

static const fused_activation fused_activations[] = {
    {"Relu", 0, {NULL}, {NULL}, {0}, NULL},
    {"Tanh", 0, {NULL}, {NULL}, {0}, NULL},
    {"Sigmoid", 0, {NULL}, {NULL}, {0}, NULL},
    {"Softplus", 0, {NULL}, {NULL}, {0}, NULL},
    {"Softsign", 0, {NULL}, {NULL}, {0}, NULL},
    {"LeakyRelu", 1, {"alpha"}, {"activation_alpha"}, {0.01}, NULL},
    {"Elu", 1, {"alpha"}, {"activation_alpha"}, {1.0}, NULL},
    {"Celu", 1, {"alpha"}, {"activation_alpha"}, {1.0}, NULL},
    {"ThresholdedRelu", 1, {"alpha"}, {"activation_alpha"}, {1.0}, NULL},
    {"HardSigmoid", 2, {"alpha", "beta"}, {"activation_alpha", "activation_beta"}, {0.2, 0.5}, NULL},
    {"Selu", 2, {"alpha", "gamma"}, {"activation_alpha", "activation_gamma"}, {1.67326319217681884765625, 1.05070102214813232421875}, NULL},
    {"ScaledTanh", 2, {NULL}, {"activation_alpha", "activation_beta"}, {1.0, 1.0}, scaled_tanh_act},
    {"ParametricSoftplus", 2, {NULL}, {"activation_alpha", "activation_beta"}, {1.0, 1.0}, parametric_softplus_act},
    {"Clip", 2, {NULL}, {NULL}, {-INFINITY, INFINITY}, clip_act},
    {"Silu", 0, {NULL}, {NULL}, {0}, silu_act},
    {"HardSwish", 0, {NULL}, {NULL}, {0}, NULL}, /* the layout pass's, from a HardSwish it fuses */
};

static const fused_activation *find_activation(const char *name) {
  for (size_t i = 0; i < sizeof(fused_activations) / sizeof(fused_activations[0]); i++)
    if (strcmp(fused_activations[i].name, name) == 0) return &fused_activations[i];
  return NULL;
}

/* act(x) with parameters p. */
static o2m_value *apply_activation(o2m_rewriter *rw, const fused_activation *act, o2m_value *x,
                                   const double *p) {
  if (!x) return NULL;
  if (act->build) return act->build(rw, x, p);
  o2m_attr attrs[2];
  for (int i = 0; i < act->n_params; i++) attrs[i] = o2m_rw_attr_float(act->onnx_attrs[i], (float)p[i]);
  return o2m_rw_op(rw, act->name, 1, &x, attrs, act->n_params);
}

/* The node's activation: *act NULL when it has none (`none_ok`: identity);
 * an unknown one is refused with its name. */
static o2m_status node_activation(o2m_rewriter *rw, int none_ok, const fused_activation **act) {
  const o2m_attr *a = o2m_rw_attr(rw, "activation");
  *act = NULL;
  if (!a && none_ok) return O2M_OK;
  char name[64] = "";
  if (a && a->type == O2M_ATTR_STRING && a->s.len < sizeof(name)) {
    memcpy(name, a->s.ptr, a->s.len);
    name[a->s.len] = '\0';
  }
  if ((*act = find_activation(name))) return O2M_OK;
  return o2m_rw_unsupported(rw, "activation '%s' is none onnxruntime fuses (Relu, Tanh, Sigmoid, Softplus, "
                            "Softsign, LeakyRelu, Elu, Celu, ThresholdedRelu, HardSigmoid, Selu, "
                            "ScaledTanh, ParametricSoftplus, Clip, Silu, HardSwish)", name);
}

/* ---- FusedConv, FusedGemm --------------------------------------------------------- */

static const char *const fused_conv_extras[] = {"activation", "activation_params", NULL};

/* FusedConv, or (channels_last) NhwcConv / NhwcFusedConv: X, Z and Y
 * channels last, moved around the Conv by transposes. */
static o2m_status fused_conv(o2m_rewriter *rw, int channels_last) {
  int rank = xk_rank(o2m_rw_in(rw, 0));
  if (channels_last && (rank < 3 || rank > 16)) return o2m_rw_unsupported(rw, "an input of unknown rank");
  const fused_activation *act;
  o2m_status st = node_activation(rw, 1, &act);
  if (st) return st;
  const o2m_attr *params = o2m_rw_attr(rw, "activation_params");
  int n_given = params && params->type == O2M_ATTR_FLOATS ? params->count : 0;
  if (act && n_given != act->n_params && !(n_given == 0 && act->n_params == 0))
    return o2m_rw_error(rw, "activation %s takes %d parameters, %d given", act->name, act->n_params, n_given);
  double p[2] = {0, 0};
  for (int i = 0; act && i < act->n_params; i++) p[i] = params->floats[i];
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, fused_conv_extras, 0, &n_attrs);
  if (!attrs) return xk_failed(rw);
  o2m_value *x = o2m_rw_in(rw, 0), *z = o2m_rw_in(rw, 3);
  if (channels_last) {
    x = xk_channels(rw, x, rank, 1);
    if (z) z = xk_channels(rw, z, rank, 1);
  }
  o2m_value *in[3] = {x, o2m_rw_in(rw, 1), o2m_rw_in(rw, 2)};
  o2m_value *y = x ? o2m_rw_op(rw, "Conv", in[2] ? 3 : 2, in, attrs, n_attrs) : NULL;
  if (z) y = xk_op2(rw, "Add", y, z);
  if (act) y = apply_activation(rw, act, y, p);
  return xk_bind(rw, 0, channels_last && y ? xk_channels(rw, y, rank, 0) : y);
}

o2m_status o2m_decompose_fused_conv(o2m_rewriter *rw) { return fused_conv(rw, 0); }

/* NhwcConv(X, W, B?), NhwcFusedConv(X, W, B?, Z?): W in ONNX's layout. */
o2m_status o2m_decompose_nhwc_conv(o2m_rewriter *rw) { return fused_conv(rw, 1); }

o2m_status o2m_decompose_nhwc_max_pool(o2m_rewriter *rw) {
  int rank = xk_rank(o2m_rw_in(rw, 0)), n_attrs;
  if (rank < 3 || rank > 16) return o2m_rw_unsupported(rw, "an input of unknown rank");
  o2m_attr *attrs = xk_attrs_except(rw, (const char *const[]){NULL}, 0, &n_attrs);
  if (!attrs) return xk_failed(rw);
  o2m_value *x = xk_channels(rw, o2m_rw_in(rw, 0), rank, 1);
  o2m_value *y = x ? o2m_rw_op(rw, "MaxPool", 1, &x, attrs, n_attrs) : NULL;
  return xk_bind(rw, 0, y ? xk_channels(rw, y, rank, 0) : NULL);
}

static const char *const fused_gemm_extras[] = {"activation", "activation_alpha", "activation_beta",
                                                "activation_gamma", NULL};

o2m_status o2m_decompose_fused_gemm(o2m_rewriter *rw) {
  const fused_activation *act;
  o2m_status st = node_activation(rw, 0, &act);
  if (st) return st;
  if (act->build == clip_act) return o2m_rw_unsupported(rw, "activation Clip (FusedGemm has no bounds for it)");
  double p[2];
  for (int i = 0; i < 2; i++)
    p[i] = act->gemm_attrs[i] ? o2m_rw_attr_f(rw, act->gemm_attrs[i], (float)act->defaults[i]) : act->defaults[i];
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, fused_gemm_extras, 0, &n_attrs);
  if (!attrs) return xk_failed(rw);
  o2m_value *in[3] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 1), o2m_rw_in(rw, 2)};
  return xk_bind(rw, 0, apply_activation(rw, act, o2m_rw_op(rw, "Gemm", in[2] ? 3 : 2, in, attrs, n_attrs), p));
}

/* ---- FusedMatMul ------------------------------------------------------------------ */

/* The permutation onnxruntime applies to a FusedMatMul operand of rank r:
 * transBatch moves dim 0 behind the batch dims ([1, .., r-2, 0, r-1]),
 * trans swaps the last two (both: [1, .., r-2, r-1, 0]). */
static o2m_value *fused_operand(o2m_rewriter *rw, o2m_value *x, int rank, int trans, int trans_batch) {
  int64_t perm[64];
  for (int k = 0; k < rank; k++) perm[k] = k;
  if (trans_batch) {
    for (int k = 0; k < rank - 2; k++) perm[k] = k + 1;
    perm[rank - 2] = 0;
  }
  if (trans) {
    int64_t t = perm[rank - 2];
    perm[rank - 2] = perm[rank - 1];
    perm[rank - 1] = t;
  }
  return xk_transpose(rw, x, perm, rank);
}

o2m_status o2m_decompose_fused_matmul(o2m_rewriter *rw) {
  o2m_value *ab[2] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 1)};
  static const char *const trans[2] = {"transA", "transB"}, *const batch[2] = {"transBatchA", "transBatchB"};
  for (int i = 0; i < 2; i++) {
    int t = o2m_rw_attr_i(rw, trans[i], 0) != 0, tb = o2m_rw_attr_i(rw, batch[i], 0) != 0;
    int rank = xk_rank(ab[i]);
    if (!t && !tb) continue;
    if (rank < 0 || rank > 64) return o2m_rw_unsupported(rw, "%s on an input of unknown rank", t ? trans[i] : batch[i]);
    if (tb && rank < 3) return o2m_rw_unsupported(rw, "%s on an input of rank %d (onnxruntime needs 3 or more)", batch[i], rank);
    if (rank >= 2) ab[i] = fused_operand(rw, ab[i], rank, t, tb);
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

/* The skip normalizations' epsilon defaults to 1e-12. */
static float skip_epsilon(o2m_rewriter *rw) { return o2m_rw_attr_f(rw, "epsilon", 1e-12f); }

o2m_status o2m_decompose_skip_layer_norm(o2m_rewriter *rw) {
  o2m_value *s = skip_sum(rw, 4);
  if (!s) return xk_failed(rw);
  o2m_attr attrs[2] = {o2m_rw_attr_int("axis", -1), o2m_rw_attr_float("epsilon", skip_epsilon(rw))};
  o2m_value *in[3] = {s, o2m_rw_in(rw, 2), o2m_rw_in(rw, 3)};
  o2m_value **outs = o2m_rw_node(rw, "LayerNormalization", in[2] ? 3 : 2, in, 3, attrs, 2);
  if (!outs) return xk_failed(rw);
  o2m_status st = O2M_OK;
  for (int k = 0; k < 3 && !st; k++) st = xk_bind(rw, k, outs[k]);
  return st ? st : xk_bind(rw, 3, s);
}

o2m_status o2m_decompose_skip_simplified_layer_norm(o2m_rewriter *rw) {
  o2m_value *s = skip_sum(rw, 3);
  double eps = skip_epsilon(rw);
  o2m_status st = rms_outputs(rw, s, o2m_rw_in(rw, 2), eps, 2);
  if (!st && o2m_rw_out(rw, 1)) { /* the RMS form has no mean: onnxruntime writes zeros */
    o2m_value *inv = rms_inv_std(rw, s, eps);
    st = xk_bind(rw, 1, xk_op2(rw, "Mul", inv, xk_scalar_like(rw, inv, 0.0)));
  }
  return st ? st : xk_bind(rw, 3, s);
}

o2m_status o2m_decompose_simplified_layer_norm(o2m_rewriter *rw) {
  int64_t axis = o2m_rw_attr_i(rw, "axis", -1);
  int rank = xk_rank(o2m_rw_in(rw, 0));
  if (axis != -1 && !(rank > 0 && axis == rank - 1))
    return o2m_rw_unsupported(rw, "axis %lld (only the last axis)", (long long)axis);
  return rms_outputs(rw, o2m_rw_in(rw, 0), o2m_rw_in(rw, 1), o2m_rw_attr_f(rw, "epsilon", 1e-5f), 1);
}

/* ---- RotaryEmbedding -------------------------------------------------------------- */

/* com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache)
 * is ONNX's RotaryEmbedding(input, cos_cache, sin_cache, position_ids);
 * a one-element position_ids is the offset of positions 0..S-1. */
o2m_status o2m_decompose_ms_rotary_embedding(o2m_rewriter *rw) {
  if (o2m_rw_attr_i(rw, "is_packed_batching", 0)) return o2m_rw_unsupported(rw, "is_packed_batching");
  if (o2m_rw_attr_f(rw, "scale", 1.0f) != 1.0f) return o2m_rw_unsupported(rw, "a scale other than 1");
  o2m_value *x = o2m_rw_in(rw, 0), *ids = o2m_rw_in(rw, 1);
  int rank = xk_rank(x), id_rank = xk_rank(ids);
  const o2m_type *it = ids ? xk_type(ids) : NULL;
  int offset = id_rank == 1 || id_rank == 0;
  if (offset && !(id_rank == 0 || it->dims[0].size == 1))
    return o2m_rw_unsupported(rw, "1-D position_ids of more than one element");
  if (offset) {
    if (rank != 3 && rank != 4) return o2m_rw_unsupported(rw, "the input must be 3-D or 4-D");
    const int64_t zero[1] = {0};
    o2m_value *pos = xk_op2(rw, "Add", xk_iota(rw, xk_dim(rw, x, rank == 3 ? 1 : 2)), xk_cast(rw, ids, O2M_DT_INT64));
    ids = xk_unsqueeze(rw, pos, zero, 1);
  }
  static const char *const kept[3] = {"interleaved", "num_heads", "rotary_embedding_dim"};
  o2m_attr attrs[3];
  int n = 0;
  for (int i = 0; i < 3; i++)
    if (o2m_rw_attr(rw, kept[i])) attrs[n++] = o2m_rw_attr_int(kept[i], o2m_rw_attr_i(rw, kept[i], 0));
  o2m_value *in[4] = {x, o2m_rw_in(rw, 2), o2m_rw_in(rw, 3), ids};
  if (!ids) return xk_failed(rw);
  return xk_bind(rw, 0, o2m_rw_op(rw, "RotaryEmbedding", 4, in, attrs, n));
}

/* ---- EmbedLayerNormalization ------------------------------------------------------ */

/* EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
 * position_embedding, segment_embedding?, gamma, beta, mask?,
 * position_ids?): LayerNormalization (epsilon 1e-12) of the sum of the
 * three embeddings looked up (positions 0..S-1 unless given) as output 0;
 * mask_index (output 1) the count of ones of each mask row (zeros
 * without a mask, as onnxruntime writes); the sum itself as embedding_sum
 * (output 2). */
o2m_status o2m_decompose_embed_layer_norm(o2m_rewriter *rw) {
  if (o2m_rw_attr_i(rw, "mask_index_type", 1) != 1) return o2m_rw_unsupported(rw, "mask_index_type other than 1");
  o2m_value *ids = o2m_rw_in(rw, 0), *pos_ids = o2m_rw_in(rw, 8);
  if (xk_rank(ids) != 2) return o2m_rw_unsupported(rw, "input_ids of rank other than 2");
  const int64_t zero[1] = {0};
  if (!pos_ids) pos_ids = xk_unsqueeze(rw, xk_iota(rw, xk_dim(rw, ids, 1)), zero, 1);
  o2m_value *sum = xk_op2(rw, "Add", xk_op2(rw, "Gather", o2m_rw_in(rw, 2), ids),
                          xk_op2(rw, "Gather", o2m_rw_in(rw, 3), pos_ids));
  if (o2m_rw_in(rw, 1) && o2m_rw_in(rw, 4))
    sum = xk_op2(rw, "Add", sum, xk_op2(rw, "Gather", o2m_rw_in(rw, 4), o2m_rw_in(rw, 1)));
  if (!sum) return xk_failed(rw);
  o2m_attr attrs[2] = {o2m_rw_attr_int("axis", -1),
                       o2m_rw_attr_float("epsilon", o2m_rw_attr_f(rw, "epsilon", 1e-12f))};
  o2m_value *in[3] = {sum, o2m_rw_in(rw, 5), o2m_rw_in(rw, 6)};
  o2m_status st = xk_bind(rw, 0, o2m_rw_op(rw, "LayerNormalization", 3, in, attrs, 2));
  if (!st && o2m_rw_out(rw, 1)) {
    const int64_t rows[1] = {1};
    o2m_value *mask = o2m_rw_in(rw, 7);
    o2m_value *ones = mask ? xk_cast(rw, xk_op2(rw, "Equal", mask, xk_scalar(rw, xk_elem(mask), 1)), O2M_DT_INT32) : NULL;
    o2m_value *count = mask ? xk_reduce(rw, "ReduceSum", ones, rows, 1, 0)
                            : xk_op2(rw, "Expand", xk_scalar(rw, O2M_DT_INT32, 0),
                                     xk_unsqueeze(rw, xk_dim(rw, ids, 0), zero, 1));
    st = xk_bind(rw, 1, count);
  }
  return st ? st : xk_bind(rw, 2, sum);
}

/* ---- Inverse ------------------------------------------------------------------------ */

/* x[..., i] of the last axis for a 1-D one-element i, keeping the axis:
 * (..., 1). */
static o2m_value *last_at(o2m_rewriter *rw, o2m_value *x, o2m_value *i) {
  o2m_attr axis = o2m_rw_attr_int("axis", -1);
  o2m_value *in[2] = {x, i};
  return o2m_rw_op(rw, "Gather", 2, in, &axis, 1);
}

/* Inverse(X (..., N, N)) of a known N: Gauss-Jordan elimination with
 * partial pivoting on [X | I], unrolled over the N columns. */
o2m_status o2m_decompose_inverse(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  int rank = xk_rank(x);
  if (rank < 2 || rank > 16) return o2m_rw_unsupported(rw, "an input of rank below 2 or unknown");
  int64_t n = xk_type(x)->dims[rank - 1].size;
  if (n <= 0 || n > 16 || xk_type(x)->dims[rank - 2].size != n)
    return o2m_rw_unsupported(rw, "a matrix size unknown, not square or above 16");
  o2m_dtype t = xk_elem(x);
  /* [X | I]: (..., N, 2N) */
  int64_t eye_dims[2] = {n, n};
  double *eye = o2m_arena_array(&rw->model->arena, (size_t)(n * n), sizeof(double));
  if (!eye) return o2m_rw_error(rw, "out of memory");
  for (int64_t i = 0; i < n; i++) eye[i * n + i] = 1.0;
  o2m_value *id = xk_op2(rw, "Add", xk_op2(rw, "Mul", x, xk_scalar_like(rw, x, 0.0)),
                         xk_const_nd(rw, t, 2, eye_dims, eye));
  o2m_attr cat = o2m_rw_attr_int("axis", -1);
  o2m_value *parts[2] = {x, id};
  o2m_value *a = o2m_rw_op(rw, "Concat", 2, parts, &cat, 1);
  o2m_value *rows = xk_iota(rw, xk_scalar(rw, O2M_DT_INT64, (double)n)); /* (N) */
  const int64_t last[1] = {-1};
  o2m_value *rows_col = xk_unsqueeze(rw, rows, last, 1);                  /* (N, 1) */
  for (int64_t c = 0; c < n && a; c++) {
    o2m_value *cc = xk_scalar(rw, O2M_DT_INT64, (double)c), *c1 = o2m_rw_const_ints(rw, &c, 1);
    /* the pivot: the row r >= c of the largest |a[r, c]| */
    o2m_value *col = last_at(rw, a, c1); /* (..., N, 1) */
    o2m_value *eligible = xk_op2(rw, "GreaterOrEqual", rows_col, cc);
    o2m_value *mag = xk_where(rw, eligible, xk_op1(rw, "Abs", col), xk_scalar_like(rw, col, -1.0));
    o2m_attr am[2] = {o2m_rw_attr_int("axis", -2), o2m_rw_attr_int("keepdims", 1)};
    o2m_value *pivot = mag ? o2m_rw_op(rw, "ArgMax", 1, &mag, am, 2) : NULL; /* (..., 1, 1) */
    /* swap rows c and pivot: row r reads row perm[r] */
    o2m_value *at_c = xk_op2(rw, "Equal", rows_col, cc);
    o2m_value *perm = xk_where(rw, at_c, pivot, xk_where(rw, xk_op2(rw, "Equal", rows_col, pivot), cc, rows_col));
    o2m_value *idx = xk_op2(rw, "Expand", perm, xk_op1(rw, "Shape", a));
    o2m_attr ga = o2m_rw_attr_int("axis", -2);
    o2m_value *gin[2] = {a, idx};
    a = idx ? o2m_rw_op(rw, "GatherElements", 2, gin, &ga, 1) : NULL;
    /* normalize row c, eliminate column c from the others */
    o2m_attr ra = o2m_rw_attr_int("axis", -2);
    o2m_value *rin[2] = {a, c1};
    o2m_value *row = a ? o2m_rw_op(rw, "Gather", 2, rin, &ra, 1) : NULL; /* (..., 1, 2N) */
    row = xk_op2(rw, "Div", row, last_at(rw, row, c1));
    o2m_value *factor = xk_where(rw, at_c, xk_scalar_like(rw, x, 0.0), last_at(rw, a, c1));
    a = xk_where(rw, at_c, row, xk_op2(rw, "Sub", a, xk_op2(rw, "Mul", factor, row)));
  }
  const int64_t from[1] = {n}, to[1] = {2 * n};
  o2m_value *sl[4] = {a, o2m_rw_const_ints(rw, from, 1), o2m_rw_const_ints(rw, to, 1), o2m_rw_const_ints(rw, last, 1)};
  return xk_bind(rw, 0, a ? o2m_rw_op(rw, "Slice", 4, sl, NULL, 0) : NULL);
}
