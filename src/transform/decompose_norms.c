/* decompose_norms.c - the normalization layers into elementwise ops and
 * ReduceMean (their ONNX function bodies, or the reference formulas where
 * an op has no body):
 *  BatchNormalization  inference: (x - mean) * k + bias, k = scale /
 *                      sqrt(var + eps) (folded at import when the
 *                      parameters are constants); training (training_mode
 *                      since 14, is_test=0 before 7): batch statistics,
 *                      running_mean/var = old * momentum + batch * (1 -
 *                      momentum). Training outputs before 14 are refused.
 *  InstanceNormalization, GroupNormalization (18: scale/bias per group,
 *                      21: per channel, stash_type), LayerNormalization
 *                      (Mean/InvStdDev outputs, stash_type),
 *                      RMSNormalization, MeanVarianceNormalization,
 *                      LpNormalization (p 1 or 2; a zero norm gives 0),
 *                      LRN (a windowed sum over channels from a padded
 *                      square and `size` slices).
 * Parameters given per channel become [C, 1, ..., 1] to broadcast over
 * the spatial dims.
 */
#include <math.h>
#include <stdint.h>

#include "transform/decompose_kit.h"

/* The axes [from, rank) (from >= 0), or [from, -1] counted from the back
 * (from < 0, rank may be unknown); their count. */
static int tail_axes(int from, int rank, int64_t *axes) {
  int n = 0;
  if (from < 0)
    for (int a = from; a < 0; a++) axes[n++] = a;
  else
    for (int a = from; a < rank; a++) axes[n++] = a;
  return n;
}

/* Mean, x - mean and the biased variance of x over `axes` (kept as dims
 * of 1). */
static void moments(o2m_rewriter *rw, o2m_value *x, const int64_t *axes, int n,
                    o2m_value **mean, o2m_value **centered, o2m_value **var) {
  *mean = xk_reduce(rw, "ReduceMean", x, axes, n, 1);
  *centered = xk_op2(rw, "Sub", x, *mean);
  *var = xk_reduce(rw, "ReduceMean", xk_op2(rw, "Mul", *centered, *centered), axes, n, 1);
}

/* centered / sqrt(var + eps). */
static o2m_value *standardize(o2m_rewriter *rw, o2m_value *centered, o2m_value *var, double eps) {
  return xk_op2(rw, "Div", centered, xk_op1(rw, "Sqrt", xk_op2(rw, "Add", var, xk_scalar_like(rw, var, eps))));
}

/* x * scale + bias (bias may be NULL). */
static o2m_value *affine(o2m_rewriter *rw, o2m_value *x, o2m_value *scale, o2m_value *bias) {
  o2m_value *y = xk_op2(rw, "Mul", x, scale);
  return bias ? xk_op2(rw, "Add", y, bias) : y;
}

/* The rank of input 0, or an unsupported status. */
static int input_rank(o2m_rewriter *rw, int min_rank, o2m_status *st) {
  int rank = xk_rank(o2m_rw_in(rw, 0));
  *st = O2M_OK;
  if (rank < 0) *st = o2m_rw_unsupported(rw, "the input rank is unknown");
  else if (rank < min_rank) *st = o2m_rw_error(rw, "the input has rank %d, below %d", rank, min_rank);
  return rank;
}

/* The stash_type attribute: the element type of the statistics. */
static o2m_dtype stash_type(o2m_rewriter *rw) {
  int64_t u = o2m_rw_attr_i(rw, "stash_type", O2M_DT_FLOAT);
  return u > 0 && u < O2M_DT_COUNT && o2m_dtype_is_float((o2m_dtype)u) ? (o2m_dtype)u : O2M_DT_UNDEFINED;
}

/* ---- BatchNormalization ---------------------------------------------------------- */

/* Per-channel parameter p made to broadcast against a rank-`rank` input:
 * [C] becomes [C, 1, ...]; a per-activation [C, D1, ...] (spatial = 0)
 * already aligns with the trailing dims. */
static o2m_value *per_channel(o2m_rewriter *rw, o2m_value *p, int rank) {
  return xk_rank(p) == 1 ? xk_along_axis(rw, p, 1, rank) : p;
}

/* Input i (a parameter) in the element type of x: since 15 the
 * parameters may differ from x. */
static o2m_value *param(o2m_rewriter *rw, int i) {
  return xk_cast(rw, o2m_rw_in(rw, i), xk_elem(o2m_rw_in(rw, 0)));
}

static o2m_status batch_norm_training(o2m_rewriter *rw, int rank, double eps) {
  o2m_value *x = o2m_rw_in(rw, 0);
  int64_t axes[rank];
  int n = 0;
  for (int a = 0; a < rank; a++)
    if (a != 1) axes[n++] = a;
  o2m_value *mean, *centered, *var;
  moments(rw, x, axes, n, &mean, &centered, &var);
  o2m_value *y = affine(rw, standardize(rw, centered, var, eps), per_channel(rw, param(rw, 1), rank),
                        per_channel(rw, param(rw, 2), rank));
  o2m_status s = xk_bind(rw, 0, y);
  double momentum = o2m_rw_attr_f(rw, "momentum", 0.9f);
  static const int64_t flat[1] = {-1};
  for (int k = 1; k <= 2 && !s; k++) { /* running_mean, running_var */
    if (!o2m_rw_out(rw, k)) continue;
    o2m_value *old = o2m_rw_in(rw, 2 + k);
    o2m_value *batch = xk_cast(rw, xk_reshape(rw, k == 1 ? mean : var, flat, 1), xk_elem(old));
    o2m_value *run = xk_op2(rw, "Add", xk_op2(rw, "Mul", old, xk_scalar_like(rw, old, momentum)),
                            xk_op2(rw, "Mul", batch, xk_scalar_like(rw, batch, 1.0 - momentum)));
    s = xk_bind(rw, k, run);
  }
  return s;
}

o2m_status o2m_decompose_batch_norm(o2m_rewriter *rw) {
  o2m_status st;
  int rank = input_rank(rw, 2, &st), version = xk_version(rw);
  if (st) return st;
  if (!xk_elem(o2m_rw_in(rw, 0))) return o2m_rw_unsupported(rw, "the element type is unknown");
  double eps = o2m_rw_attr_f(rw, "epsilon", 1e-5f);
  int training = version >= 14 ? o2m_rw_attr_i(rw, "training_mode", 0) != 0
                               : version < 7 && o2m_rw_attr_i(rw, "is_test", 0) == 0;
  for (int k = 1; k < rw->node->n_outputs; k++)
    if (o2m_rw_out(rw, k) && (version < 14 || !training))
      return o2m_rw_unsupported(rw, "statistics outputs outside opset-14 training mode");
  if (training) return batch_norm_training(rw, rank, eps);
  o2m_value *var = param(rw, 4);
  o2m_value *k = xk_op2(rw, "Div", param(rw, 1), xk_op1(rw, "Sqrt", xk_op2(rw, "Add", var, xk_scalar_like(rw, var, eps))));
  o2m_value *centered = xk_op2(rw, "Sub", o2m_rw_in(rw, 0), per_channel(rw, param(rw, 3), rank));
  return xk_bind(rw, 0, affine(rw, centered, per_channel(rw, k, rank), per_channel(rw, param(rw, 2), rank)));
}

/* ---- InstanceNormalization, GroupNormalization ------------------------------------ */

o2m_status o2m_decompose_instance_norm(o2m_rewriter *rw) {
  o2m_status st;
  int rank = input_rank(rw, 3, &st);
  if (st) return st;
  o2m_value *mean, *centered, *var;
  int64_t axes[rank];
  int n = tail_axes(2, rank, axes);
  moments(rw, o2m_rw_in(rw, 0), axes, n, &mean, &centered, &var);
  double eps = o2m_rw_attr_f(rw, "epsilon", 1e-5f);
  o2m_value *y = affine(rw, standardize(rw, centered, var, eps), xk_along_axis(rw, o2m_rw_in(rw, 1), 1, rank),
                        xk_along_axis(rw, o2m_rw_in(rw, 2), 1, rank));
  return xk_bind(rw, 0, y);
}

o2m_status o2m_decompose_group_norm(o2m_rewriter *rw) {
  o2m_status st;
  int rank = input_rank(rw, 2, &st), per_channel_params = xk_version(rw) >= 21;
  if (st) return st;
  int64_t groups = o2m_rw_attr_i(rw, "num_groups", 0);
  if (groups <= 0) return o2m_rw_error(rw, "num_groups must be positive");
  o2m_dtype t = xk_elem(o2m_rw_in(rw, 0)), u = per_channel_params ? stash_type(rw) : t;
  if (!t || !u) return o2m_rw_unsupported(rw, "unknown element type or stash_type");
  o2m_value *x = o2m_rw_in(rw, 0), *mean, *centered, *var;
  const int64_t grouped[3] = {0, groups, -1}, axis2[1] = {2}, by_group[2] = {-1, 1};
  o2m_value *x3 = xk_reshape(rw, xk_cast(rw, x, u), grouped, 3);
  moments(rw, x3, axis2, 1, &mean, &centered, &var);
  o2m_value *n3 = standardize(rw, centered, var, o2m_rw_attr_f(rw, "epsilon", 1e-5f));
  o2m_value *scale = o2m_rw_in(rw, 1), *bias = o2m_rw_in(rw, 2), *shape = xk_op1(rw, "Shape", x);
  if (!per_channel_params) {
    o2m_value *y3 = affine(rw, n3, xk_reshape(rw, scale, by_group, 2), xk_reshape(rw, bias, by_group, 2));
    return xk_bind(rw, 0, xk_op2(rw, "Reshape", y3, shape));
  }
  o2m_value *normalized = xk_cast(rw, xk_op2(rw, "Reshape", n3, shape), t);
  return xk_bind(rw, 0, affine(rw, normalized, xk_along_axis(rw, scale, 1, rank),
                               xk_along_axis(rw, bias, 1, rank)));
}

/* ---- LayerNormalization, RMSNormalization ---------------------------------------------- */

/* The normalized axes [axis, rank) of input 0; their count, or -1 with
 * *st set. A negative axis needs no rank. */
static int normalized_axes(o2m_rewriter *rw, int64_t *axes, o2m_status *st) {
  int64_t axis = o2m_rw_attr_i(rw, "axis", -1);
  int rank = xk_rank(o2m_rw_in(rw, 0));
  *st = O2M_OK;
  if (axis < 0 && (rank < 0 || axis >= -rank)) return tail_axes((int)axis, 0, axes);
  if (rank < 0) *st = o2m_rw_unsupported(rw, "the input rank is unknown");
  else if (axis >= rank || axis < -rank) *st = o2m_rw_error(rw, "axis %lld is out of range", (long long)axis);
  return *st ? -1 : tail_axes((int)axis, rank, axes);
}

o2m_status o2m_decompose_layer_norm(o2m_rewriter *rw) {
  int64_t axes[64];
  o2m_status st;
  int n = normalized_axes(rw, axes, &st);
  if (n < 0) return st;
  o2m_value *x = o2m_rw_in(rw, 0), *mean, *centered, *var;
  o2m_dtype t = xk_elem(x), u = stash_type(rw);
  if (!t || !u) return o2m_rw_unsupported(rw, "unknown element type or stash_type");
  moments(rw, xk_cast(rw, x, u), axes, n, &mean, &centered, &var);
  double eps = o2m_rw_attr_f(rw, "epsilon", 1e-5f);
  o2m_value *inv = xk_op1(rw, "Reciprocal", xk_op1(rw, "Sqrt", xk_op2(rw, "Add", var, xk_scalar_like(rw, var, eps))));
  o2m_value *normalized = xk_cast(rw, xk_op2(rw, "Mul", centered, inv), t);
  st = xk_bind(rw, 0, affine(rw, normalized, o2m_rw_in(rw, 1), o2m_rw_in(rw, 2)));
  if (!st) st = xk_bind(rw, 1, mean);
  return st ? st : xk_bind(rw, 2, inv);
}

o2m_status o2m_decompose_rms_norm(o2m_rewriter *rw) {
  int64_t axes[64];
  o2m_status st;
  int n = normalized_axes(rw, axes, &st);
  if (n < 0) return st;
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_dtype t = xk_elem(x), u = stash_type(rw);
  if (!t || !u) return o2m_rw_unsupported(rw, "unknown element type or stash_type");
  o2m_value *xu = xk_cast(rw, x, u);
  o2m_value *ms = xk_reduce(rw, "ReduceMean", xk_op2(rw, "Mul", xu, xu), axes, n, 1);
  o2m_value *rms = xk_op1(rw, "Sqrt", xk_op2(rw, "Add", ms, xk_scalar_like(rw, ms, o2m_rw_attr_f(rw, "epsilon", 1e-5f))));
  o2m_value *normalized = xk_cast(rw, xk_op2(rw, "Div", xu, rms), t);
  return xk_bind(rw, 0, xk_op2(rw, "Mul", normalized, o2m_rw_in(rw, 1)));
}

/* ---- MeanVarianceNormalization, LpNormalization ------------------------------------------ */

o2m_status o2m_decompose_mvn(o2m_rewriter *rw) {
  static const int64_t default_axes[3] = {0, 2, 3};
  const o2m_attr *a = o2m_rw_attr(rw, "axes");
  const int64_t *axes = a && a->type == O2M_ATTR_INTS ? a->ints : default_axes;
  int n = a && a->type == O2M_ATTR_INTS ? a->count : 3;
  if (n == 0) return o2m_rw_unsupported(rw, "empty axes");
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_value *mean = xk_reduce(rw, "ReduceMean", x, axes, n, 1);
  o2m_value *mean_sq = xk_reduce(rw, "ReduceMean", xk_op2(rw, "Mul", x, x), axes, n, 1);
  o2m_value *std = xk_op1(rw, "Sqrt", xk_op2(rw, "Sub", mean_sq, xk_op2(rw, "Mul", mean, mean)));
  o2m_value *denom = xk_op2(rw, "Add", std, xk_scalar_like(rw, std, 1e-9));
  return xk_bind(rw, 0, xk_op2(rw, "Div", xk_op2(rw, "Sub", x, mean), denom));
}

o2m_status o2m_decompose_lp_norm(o2m_rewriter *rw) {
  int64_t p = o2m_rw_attr_i(rw, "p", 2), axis = o2m_rw_attr_i(rw, "axis", -1);
  if (p != 1 && p != 2) return o2m_rw_error(rw, "p must be 1 or 2, not %lld", (long long)p);
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_value *norm = xk_reduce(rw, p == 1 ? "ReduceL1" : "ReduceL2", x, &axis, 1, 1);
  o2m_value *zero = xk_scalar_like(rw, x, 0.0);
  return xk_bind(rw, 0, xk_where(rw, xk_op2(rw, "Equal", norm, zero), zero, xk_op2(rw, "Div", x, norm)));
}

/* ---- LRN ------------------------------------------------------------------------------------ */

o2m_status o2m_decompose_lrn(o2m_rewriter *rw) {
  int64_t size = o2m_rw_attr_i(rw, "size", 0);
  if (size <= 0 || size > 64) return o2m_rw_unsupported(rw, "size %lld (1..64 are decomposed)", (long long)size);
  double alpha = o2m_rw_attr_f(rw, "alpha", 1e-4f), beta = o2m_rw_attr_f(rw, "beta", 0.75f);
  double bias = o2m_rw_attr_f(rw, "bias", 1.0f);
  o2m_value *x = o2m_rw_in(rw, 0);
  const int64_t channel[1] = {1}, pads[2] = {(size - 1) / 2, size / 2};
  /* squares padded along the channels: window c covers padded [c, c + size) */
  o2m_value *sq = xk_op2(rw, "Mul", x, x);
  o2m_value *pad_in[4] = {sq, o2m_rw_const_ints(rw, pads, 2), NULL, o2m_rw_const_ints(rw, channel, 1)};
  o2m_value *padded = sq && pad_in[1] && pad_in[3] ? o2m_rw_op(rw, "Pad", 4, pad_in, NULL, 0) : NULL;
  o2m_value *sum = NULL;
  for (int64_t i = 0; i < size && padded; i++) {
    int64_t start = i, end = i == size - 1 ? INT64_MAX : i - (size - 1);
    o2m_value *in[4] = {padded, o2m_rw_const_ints(rw, &start, 1), o2m_rw_const_ints(rw, &end, 1),
                        o2m_rw_const_ints(rw, channel, 1)};
    o2m_value *part = in[1] && in[2] && in[3] ? o2m_rw_op(rw, "Slice", 4, in, NULL, 0) : NULL;
    sum = sum ? xk_op2(rw, "Add", sum, part) : part;
  }
  o2m_value *base = xk_op2(rw, "Add", xk_op2(rw, "Mul", sum, xk_scalar_like(rw, x, alpha / (double)size)),
                           xk_scalar_like(rw, x, bias));
  return xk_bind(rw, 0, xk_op2(rw, "Div", x, xk_op2(rw, "Pow", base, xk_scalar_like(rw, x, beta))));
}
