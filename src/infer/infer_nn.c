/* infer_nn.c - type and shape inference for the dense and normalisation ops
 * of the nn family: BatchNormalization, the shape-preserving normalisations
 * (InstanceNorm, LRN, MVN, LpNorm, GroupNorm, Softmax/LogSoftmax/Hardmax),
 * LayerNormalization/RMSNormalization, Gemm, MatMul and its integer and
 * quantized forms, Einsum, Dropout, Quantize/Dequantize, TopK, Det and the
 * losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss).
 *
 * Must not print, allocate outside the model arena, or fail on unknown or
 * unranked inputs.
 */
#include <stdint.h>
#include <string.h>

#include "infer/infer.h"
#include "infer/infer_data.h"
#include "util/diag.h"

/* ---- small helpers ----------------------------------------------------- */

static int is_ranked(const o2m_type *t) {
  return t->kind == O2M_TYPE_TENSOR && t->rank >= 0;
}

/* Output i as a tensor of `dtype` whose shape is not known; left untouched
 * when the dtype is not known either. */
static void out_unranked(o2m_infer_ctx *ctx, int i, o2m_dtype dtype) {
  if (dtype != O2M_DT_UNDEFINED) o2m_out_tensor(ctx, i, dtype, -1);
}

/* Output i as a tensor of `rank` dims, each a fresh symbol until set. */
static o2m_type *out_shaped(o2m_infer_ctx *ctx, int i, o2m_dtype dtype,
                            int rank) {
  o2m_type *t = o2m_out_tensor(ctx, i, dtype, rank);
  for (int k = 0; k < t->rank; k++) t->dims[k] = o2m_dim_fresh(ctx);
  return t;
}

/* Output i with the shape of `like` (unranked when it is) and `dtype`. */
static void out_like(o2m_infer_ctx *ctx, int i, const o2m_type *like,
                     o2m_dtype dtype) {
  if (!is_ranked(like)) {
    out_unranked(ctx, i, dtype);
    return;
  }
  o2m_type t = *like;
  t.elem = dtype;
  o2m_out_set_type(ctx, i, &t);
}

/* Of two dims that must be equal, the one that says more. */
static o2m_dim dim_either(o2m_dim a, o2m_dim b) {
  return a.size < 0 && b.size >= 0 ? b : a;
}

/* A ranked input's rank must lie in [min, max] (max INT32_MAX: no bound). */
static o2m_status check_rank(o2m_infer_ctx *ctx, const o2m_type *t,
                             const char *what, int min, int max) {
  if (!is_ranked(t) || (t->rank >= min && t->rank <= max)) return O2M_OK;
  if (min == max)
    return o2m_infer_error(ctx, "%s has rank %d, expected %d", what, t->rank,
                           min);
  if (max == INT32_MAX)
    return o2m_infer_error(ctx, "%s has rank %d, expected at least %d", what,
                           t->rank, min);
  return o2m_infer_error(ctx, "%s has rank %d, expected %d to %d", what,
                         t->rank, min, max);
}

/* Two dims that must agree: known sizes that differ are an error. */
static o2m_status check_same_dim(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b,
                                 const char *what) {
  if (a.size >= 0 && b.size >= 0 && a.size != b.size)
    return o2m_infer_error(ctx, "%s: %lld vs %lld", what, (long long)a.size,
                           (long long)b.size);
  return O2M_OK;
}

/* A dtype attribute (stash_type, output_dtype) that must name a dtype. */
static o2m_status dtype_attr(o2m_infer_ctx *ctx, const char *name,
                             o2m_dtype dflt, o2m_dtype *out) {
  int64_t v = o2m_attr_int(ctx, name, dflt);
  *out = O2M_DT_UNDEFINED;
  if (v != O2M_DT_UNDEFINED &&
      (v < 0 || v > INT32_MAX || !o2m_dtype_valid((int)v)))
    return o2m_infer_error(ctx, "attribute %s = %lld is not a data type", name,
                           (long long)v);
  *out = (o2m_dtype)v;
  return O2M_OK;
}

/* ---- normalisations ---------------------------------------------------- */

/* InstanceNormalization, LRN, MeanVarianceNormalization, LpNormalization,
 * GroupNormalization: Y has X's type. */
o2m_status o2m_infer_norm_same(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  out_like(ctx, 0, x, x->elem);
  return O2M_OK;
}

/* Softmax, LogSoftmax, Hardmax: Y has X's type; axis defaults to 1 before
 * opset 13 and to -1 since. */
o2m_status o2m_infer_softmax(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (is_ranked(x)) {
    int64_t axis;
    o2m_status s = o2m_norm_axis(
        ctx, o2m_attr_int(ctx, "axis", ctx->op_version < 13 ? 1 : -1), x->rank,
        0, &axis);
    if (s) return s;
  }
  out_like(ctx, 0, x, x->elem);
  return O2M_OK;
}

/* BatchNormalization(X, scale, B, mean, var). Before opset 14 the optional
 * outputs (mean, var, saved_mean, saved_var) have the statistics' types;
 * since 14 (training_mode) running_mean/running_var are (C) of the
 * statistics' dtypes. */
o2m_status o2m_infer_batch_norm(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  out_like(ctx, 0, x, x->elem);
  if (ctx->op_version < 14) {
    for (int i = 1; i < 5; i++) {
      const o2m_type *stat = o2m_in_type(ctx, i % 2 ? 3 : 4);
      out_like(ctx, i, stat, stat->elem);
    }
    return O2M_OK;
  }
  o2m_dim channels = !is_ranked(x) ? o2m_dim_fresh(ctx)
                     : x->rank > 1 ? x->dims[1]
                                   : o2m_dim_known(1);
  for (int i = 1; i < 5; i++) {
    const o2m_type *p = o2m_in_type(ctx, i);
    o2m_status s = check_rank(ctx, p, "scale, bias, mean and var", 1, 1);
    if (s) return s;
    if (!is_ranked(p)) continue;
    if ((s = check_same_dim(ctx, channels, p->dims[0], "channel count")))
      return s;
    channels = dim_either(channels, p->dims[0]);
  }
  for (int i = 1; i < 3; i++) {
    o2m_type *t = o2m_out_tensor(ctx, i, o2m_in_type(ctx, 2 + i)->elem, 1);
    t->dims[0] = channels;
  }
  return O2M_OK;
}

/* LayerNormalization (Y, Mean, InvStdDev) and RMSNormalization (Y): Y has
 * X's type; Mean and InvStdDev have dtype stash_type and X's dims with the
 * normalised axes [axis, rank) set to 1. */
o2m_status o2m_infer_layer_norm(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  o2m_dtype stash;
  o2m_status s = dtype_attr(ctx, "stash_type", O2M_DT_FLOAT, &stash);
  if (s) return s;
  out_like(ctx, 0, x, x->elem);
  if (!is_ranked(x)) {
    out_unranked(ctx, 1, stash);
    out_unranked(ctx, 2, stash);
    return O2M_OK;
  }
  int64_t axis;
  if ((s = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", -1), x->rank, 0,
                         &axis)))
    return s;
  for (int i = 1; i < 3; i++) {
    o2m_type *t = o2m_out_tensor(ctx, i, stash, x->rank);
    for (int k = 0; k < x->rank; k++)
      t->dims[k] = k < axis ? x->dims[k] : o2m_dim_known(1);
  }
  return O2M_OK;
}

/* ---- matrix products --------------------------------------------------- */

/* A view of dims [from, from + rank) of a ranked type. */
static o2m_type dims_view(const o2m_type *t, int from, int rank) {
  o2m_type v = *t;
  v.rank = rank;
  v.dims = rank > 0 ? t->dims + from : NULL;
  return v;
}

/* numpy matmul of A and B into output 0: 1-D operands are promoted (and the
 * promoted axis dropped), leading dims broadcast. */
o2m_status o2m_matmul_shape_of(o2m_infer_ctx *ctx, const o2m_type *a, const o2m_type *b,
                               o2m_dtype dtype) {
  if (!is_ranked(a) || !is_ranked(b)) {
    out_unranked(ctx, 0, dtype);
    return O2M_OK;
  }
  if (a->rank == 0 || b->rank == 0)
    return o2m_infer_error(ctx, "matmul operands must have rank >= 1");
  int ra = a->rank, rb = b->rank;
  o2m_dim ka = a->dims[ra - 1], kb = b->dims[rb == 1 ? 0 : rb - 2];
  o2m_status s = check_same_dim(ctx, ka, kb, "contracted dims differ");
  if (s) return s;
  o2m_type batch_a = dims_view(a, 0, ra > 2 ? ra - 2 : 0);
  o2m_type batch_b = dims_view(b, 0, rb > 2 ? rb - 2 : 0);
  const o2m_type *batches[] = {&batch_a, &batch_b};
  o2m_type batch;
  if ((s = o2m_broadcast(ctx, batches, 2, &batch))) return s;
  int rank = batch.rank + (ra > 1) + (rb > 1);
  o2m_type *y = o2m_out_tensor(ctx, 0, dtype, rank);
  for (int k = 0; k < batch.rank; k++) y->dims[k] = batch.dims[k];
  int k = batch.rank;
  if (ra > 1) y->dims[k++] = a->dims[ra - 2];
  if (rb > 1) y->dims[k] = b->dims[rb - 1];
  return O2M_OK;
}

static o2m_status matmul_shape(o2m_infer_ctx *ctx, int a_in, int b_in, o2m_dtype dtype) {
  return o2m_matmul_shape_of(ctx, o2m_in_type(ctx, a_in), o2m_in_type(ctx, b_in), dtype);
}

/* The element type of input a, else of input b (same type constraint). */
static o2m_dtype either_dtype(o2m_infer_ctx *ctx, int a, int b) {
  o2m_dtype d = o2m_in_type(ctx, a)->elem;
  return d ? d : o2m_in_type(ctx, b)->elem;
}

o2m_status o2m_infer_matmul(o2m_infer_ctx *ctx) {
  return matmul_shape(ctx, 0, 1, either_dtype(ctx, 0, 1));
}

/* MatMulInteger(A, B, a_zero_point, b_zero_point) -> int32. */
o2m_status o2m_infer_matmul_integer(o2m_infer_ctx *ctx) {
  return matmul_shape(ctx, 0, 1, O2M_DT_INT32);
}

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): the
 * output has y_zero_point's type. */
o2m_status o2m_infer_qlinear_matmul(o2m_infer_ctx *ctx) {
  o2m_status s;
  if ((s = o2m_check_scale(ctx, 1, "a_scale", 0)) || (s = o2m_check_scale(ctx, 4, "b_scale", 0)) ||
      (s = o2m_check_scale(ctx, 6, "y_scale", 1)))
    return s;
  return matmul_shape(ctx, 0, 3, o2m_in_type(ctx, 7)->elem);
}

/* Gemm(A, B, C): (M, N) from op(A) (M, K) and op(B) (K, N), op transposing
 * where transA/transB say so. */
o2m_status o2m_infer_gemm(o2m_infer_ctx *ctx) {
  const o2m_type *a = o2m_in_type(ctx, 0), *b = o2m_in_type(ctx, 1);
  o2m_status s;
  if ((s = check_rank(ctx, a, "A", 2, 2)) ||
      (s = check_rank(ctx, b, "B", 2, 2)))
    return s;
  int ta = o2m_attr_int(ctx, "transA", 0) != 0;
  int tb = o2m_attr_int(ctx, "transB", 0) != 0;
  o2m_type *y = out_shaped(ctx, 0, either_dtype(ctx, 0, 1), 2);
  if (is_ranked(a)) y->dims[0] = a->dims[ta ? 1 : 0];
  if (is_ranked(b)) y->dims[1] = b->dims[tb ? 0 : 1];
  if (is_ranked(a) && is_ranked(b))
    return check_same_dim(ctx, a->dims[ta ? 0 : 1], b->dims[tb ? 1 : 0],
                          "contracted dims differ");
  return O2M_OK;
}

/* ---- Einsum ------------------------------------------------------------ */

enum { EINSUM_LABELS = 52 };

/* The label index of a letter (a-z, A-Z), or -1. */
static int einsum_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + c - 'A';
  return -1;
}

/* What the left-hand side says: each label's dim and use count, and the
 * broadcast ellipsis dims (rank -1 when some operand is unranked). */
typedef struct einsum_lhs {
  o2m_dim label_dim[EINSUM_LABELS];
  int label_uses[EINSUM_LABELS];
  o2m_type ellipsis;
} einsum_lhs;

/* Records the dim a label takes in one operand. As in numpy, a size 1
 * broadcasts against the others; known sizes that differ otherwise are an
 * error; a known size wins over a symbol. */
static o2m_status einsum_bind(o2m_infer_ctx *ctx, einsum_lhs *lhs, int label,
                              o2m_dim d) {
  o2m_dim *cur = &lhs->label_dim[label];
  if (lhs->label_uses[label]++ == 0 || cur->size == 1) {
    *cur = d;
    return O2M_OK;
  }
  if (d.size < 0 || d.size == 1) return O2M_OK;
  if (cur->size >= 0 && cur->size != d.size)
    return o2m_infer_error(ctx, "einsum label dims differ: %lld vs %lld",
                           (long long)cur->size, (long long)d.size);
  *cur = d;
  return O2M_OK;
}

/* Parses one operand's term (letters and at most one "...") against its
 * type; `ellipsis_type` receives the dims the ellipsis covers. */
static o2m_status einsum_term(o2m_infer_ctx *ctx, const char *term, int len,
                              const o2m_type *t, einsum_lhs *lhs,
                              o2m_type *ellipsis_type) {
  int letters = 0, ellipsis_at = -1;
  for (int i = 0; i < len; i++) {
    if (term[i] == '.') {
      if (ellipsis_at >= 0 || i + 2 >= len || term[i + 1] != '.' ||
          term[i + 2] != '.')
        return o2m_infer_error(ctx, "bad ellipsis in einsum equation");
      ellipsis_at = letters;
      i += 2;
    } else if (einsum_label(term[i]) < 0) {
      return o2m_infer_error(ctx, "bad character '%c' in einsum equation",
                             term[i]);
    } else {
      letters++;
    }
  }
  *ellipsis_type = (o2m_type){O2M_TYPE_TENSOR, t->elem, 0, NULL, NULL};
  if (!is_ranked(t)) {
    if (ellipsis_at >= 0) ellipsis_type->rank = -1;
    for (int i = 0; i < len; i++)
      if (einsum_label(term[i]) >= 0) {
        int l = einsum_label(term[i]);
        if (!lhs->label_uses[l]++) lhs->label_dim[l] = o2m_dim_fresh(ctx);
      }
    return O2M_OK;
  }
  int spread = t->rank - letters;
  if (spread < 0 || (ellipsis_at < 0 && spread != 0))
    return o2m_infer_error(ctx, "einsum term has %d labels for rank %d",
                           letters, t->rank);
  if (ellipsis_at >= 0) *ellipsis_type = dims_view(t, ellipsis_at, spread);
  for (int i = 0, axis = 0; i < len; i++) {
    if (term[i] == '.') {
      axis += spread;
      i += 2;
      continue;
    }
    o2m_status s =
        einsum_bind(ctx, lhs, einsum_label(term[i]), t->dims[axis++]);
    if (s) return s;
  }
  return O2M_OK;
}

static o2m_status einsum_parse_lhs(o2m_infer_ctx *ctx, const char *eq, int len,
                                   einsum_lhs *lhs) {
  int n = o2m_in_count(ctx);
  o2m_type *ell = o2m_arena_array(ctx->arena, (size_t)n + 1, sizeof(o2m_type));
  const o2m_type **ell_ptrs =
      o2m_arena_array(ctx->arena, (size_t)n + 1, sizeof(o2m_type *));
  if (!ell || !ell_ptrs)
    return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
  int op = 0, start = 0;
  for (int i = 0; i <= len; i++) {
    if (i < len && eq[i] != ',') continue;
    if (op >= n)
      return o2m_infer_error(ctx,
                             "einsum equation has more terms than the "
                             "%d inputs",
                             n);
    o2m_status s = einsum_term(ctx, eq + start, i - start, o2m_in_type(ctx, op),
                               lhs, &ell[op]);
    if (s) return s;
    ell_ptrs[op] = &ell[op];
    op++;
    start = i + 1;
  }
  if (op != n)
    return o2m_infer_error(ctx, "einsum equation has %d terms for %d inputs",
                           op, n);
  return o2m_broadcast(ctx, ell_ptrs, n, &lhs->ellipsis);
}

/* Output 0 from an explicit right-hand side (unranked when it has an
 * ellipsis whose dims are not known). */
static o2m_status einsum_explicit(o2m_infer_ctx *ctx, const char *rhs, int len,
                                  einsum_lhs *lhs, o2m_dtype dtype) {
  int rank = 0, seen[EINSUM_LABELS] = {0}, ellipsis = 0;
  for (int i = 0; i < len; i++) {
    if (rhs[i] == '.') {
      if (ellipsis++ || i + 2 >= len || rhs[i + 1] != '.' || rhs[i + 2] != '.')
        return o2m_infer_error(ctx, "bad ellipsis in einsum output");
      i += 2;
      continue;
    }
    int l = einsum_label(rhs[i]);
    if (l < 0 || !lhs->label_uses[l] || seen[l]++)
      return o2m_infer_error(ctx,
                             "einsum output label '%c' is unknown or "
                             "repeated",
                             rhs[i]);
    rank++;
  }
  if (ellipsis && lhs->ellipsis.rank < 0) {
    out_unranked(ctx, 0, dtype);
    return O2M_OK;
  }
  if (ellipsis) rank += lhs->ellipsis.rank;
  o2m_type *y = o2m_out_tensor(ctx, 0, dtype, rank);
  for (int i = 0, k = 0; i < len; i++) {
    if (rhs[i] == '.') {
      for (int e = 0; e < lhs->ellipsis.rank; e++)
        y->dims[k++] = lhs->ellipsis.dims[e];
      i += 2;
    } else {
      y->dims[k++] = lhs->label_dim[einsum_label(rhs[i])];
    }
  }
  return O2M_OK;
}

/* Implicit output: the ellipsis dims, then the labels used exactly once in
 * alphabetical order (upper case before lower case, as in ASCII). */
static void einsum_implicit(o2m_infer_ctx *ctx, einsum_lhs *lhs,
                            o2m_dtype dtype) {
  if (lhs->ellipsis.rank < 0) {
    out_unranked(ctx, 0, dtype);
    return;
  }
  static const int ascii_order[EINSUM_LABELS] = {
      26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
      44, 45, 46, 47, 48, 49, 50, 51, 0,  1,  2,  3,  4,  5,  6,  7,  8,  9,
      10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25};
  int rank = lhs->ellipsis.rank;
  for (int l = 0; l < EINSUM_LABELS; l++) rank += lhs->label_uses[l] == 1;
  o2m_type *y = o2m_out_tensor(ctx, 0, dtype, rank);
  int k = 0;
  for (int e = 0; e < lhs->ellipsis.rank; e++)
    y->dims[k++] = lhs->ellipsis.dims[e];
  for (int i = 0; i < EINSUM_LABELS; i++)
    if (lhs->label_uses[ascii_order[i]] == 1)
      y->dims[k++] = lhs->label_dim[ascii_order[i]];
}

/* Einsum(Inputs...) with attribute equation "lhs[->rhs]". */
o2m_status o2m_infer_einsum(o2m_infer_ctx *ctx) {
  const char *raw = o2m_attr_string(ctx, "equation", NULL);
  if (!raw) return o2m_infer_error(ctx, "attribute equation is required");
  size_t raw_len = strlen(raw);
  char *eq = o2m_arena_alloc(ctx->arena, raw_len + 1);
  einsum_lhs *lhs = o2m_arena_alloc(ctx->arena, sizeof(*lhs));
  if (!eq || !lhs) return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
  int len = 0;
  for (size_t i = 0; i < raw_len; i++)
    if (raw[i] != ' ') eq[len++] = raw[i];
  const char *arrow = strstr(eq, "->");
  int lhs_len = arrow ? (int)(arrow - eq) : len;
  o2m_status s = einsum_parse_lhs(ctx, eq, lhs_len, lhs);
  if (s) return s;
  o2m_dtype dtype = o2m_in_type(ctx, 0)->elem;
  if (arrow)
    return einsum_explicit(ctx, arrow + 2, len - lhs_len - 2, lhs, dtype);
  einsum_implicit(ctx, lhs, dtype);
  return O2M_OK;
}

/* ---- Dropout, quantization --------------------------------------------- */

/* Whether Dropout copies its input: with is_test set (opsets 1, 6), always
 * in inference (7, 10), or without a true training_mode (12+). */
static int dropout_is_identity(o2m_infer_ctx *ctx) {
  if (ctx->op_version < 7) return o2m_attr_int(ctx, "is_test", 0) != 0;
  if (ctx->op_version < 12 || !o2m_in_present(ctx, 2)) return 1;
  int64_t *training;
  return o2m_in_known_ints(ctx, 2, &training) == 1 && training[0] == 0;
}

/* Dropout(data, ratio?, training_mode?) -> (output, mask): the mask is
 * bool since opset 10 and has the data's dtype before. A known input
 * passes through in inference. */
o2m_status o2m_infer_dropout(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  const o2m_tensor *data = o2m_in_known(ctx, 0);
  o2m_status s;
  if ((s = check_rank(ctx, o2m_in_type(ctx, 1), "ratio", 0, 0)) ||
      (s = check_rank(ctx, o2m_in_type(ctx, 2), "training_mode", 0, 0)))
    return s;
  out_like(ctx, 0, x, x->elem);
  out_like(ctx, 1, x, ctx->op_version < 10 ? x->elem : O2M_DT_BOOL);
  if (data && data->count <= O2M_KNOWN_MAX && dropout_is_identity(ctx))
    o2m_out_known(ctx, 0, data);
  return O2M_OK;
}

o2m_status o2m_check_scale(o2m_infer_ctx *ctx, int i, const char *what, int divides) {
  const o2m_tensor *t = o2m_in_present(ctx, i) ? o2m_in_known(ctx, i) : NULL;
  for (int64_t k = 0; t && t->data && o2m_dtype_is_float(t->dtype) && k < t->count; k++) {
    double v = o2m_tensor_get_float(t, k);
    if (v != v || v - v != 0 || (divides && v == 0))
      return o2m_infer_error(ctx, "%s[%lld] is %g: a scale must be finite%s", what, (long long)k, v,
                             divides ? " and not 0" : "");
  }
  return O2M_OK;
}

/* Checks a scale (or zero point) against x for per-tensor, per-axis or
 * (block_size > 0, opset 21+) blocked quantization along `axis`. */
static o2m_status check_quant_param(o2m_infer_ctx *ctx, const o2m_type *x,
                                    const o2m_type *p) {
  if (!is_ranked(x) || !is_ranked(p)) return O2M_OK;
  int64_t block = o2m_attr_int(ctx, "block_size", 0);
  if (block < 0) return o2m_infer_error(ctx, "block_size is negative");
  /* per tensor: a scalar or one element (unknown length: cannot tell) */
  if (p->rank == 0 || (block == 0 && p->rank == 1 && p->dims[0].size <= 1))
    return O2M_OK;
  int64_t axis;
  o2m_status s =
      o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", 1), x->rank, 0, &axis);
  if (s) return s;
  if (block == 0) {
    if (p->rank != 1) return o2m_infer_error(ctx, "per-axis scale must be 1-D");
    return check_same_dim(ctx, p->dims[0], x->dims[axis],
                          "per-axis scale length differs from the axis");
  }
  if (p->rank != x->rank)
    return o2m_infer_error(ctx, "blocked scale has rank %d, input %d", p->rank,
                           x->rank);
  for (int k = 0; k < x->rank; k++) {
    o2m_dim want = x->dims[k];
    if (k == axis && want.size >= 0)
      want = o2m_dim_known((want.size + block - 1) / block);
    else if (k == axis)
      continue;
    if ((s = check_same_dim(ctx, p->dims[k], want, "blocked scale dims")))
      return s;
  }
  return O2M_OK;
}

/* QuantizeLinear(x, y_scale, y_zero_point?): y has the zero point's type,
 * else output_dtype (opset 21+), else uint8. */
o2m_status o2m_infer_quantize(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  o2m_dtype attr = O2M_DT_UNDEFINED, dtype = O2M_DT_UINT8;
  o2m_status s;
  if (ctx->op_version >= 21 &&
      (s = dtype_attr(ctx, "output_dtype", O2M_DT_UNDEFINED, &attr)))
    return s;
  if (o2m_in_present(ctx, 2)) {
    dtype = o2m_in_type(ctx, 2)->elem;
    if (attr != O2M_DT_UNDEFINED && dtype != O2M_DT_UNDEFINED && attr != dtype)
      return o2m_infer_error(ctx, "output_dtype differs from the zero "
                                  "point's type");
    if (dtype == O2M_DT_UNDEFINED) dtype = attr;
  } else if (attr != O2M_DT_UNDEFINED) {
    dtype = attr;
  }
  if ((s = check_quant_param(ctx, x, o2m_in_type(ctx, 1))) ||
      (s = check_quant_param(ctx, x, o2m_in_type(ctx, 2))) || (s = o2m_check_scale(ctx, 1, "y_scale", 1)))
    return s;
  out_like(ctx, 0, x, dtype);
  return O2M_OK;
}

/* DequantizeLinear(x, x_scale, x_zero_point?): y has dtype output_dtype
 * (opset 23+), else the scale's type (float before opset 19). */
o2m_status o2m_infer_dequantize(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  o2m_dtype dtype = o2m_in_type(ctx, 1)->elem;
  o2m_status s;
  if (ctx->op_version < 19) dtype = O2M_DT_FLOAT;
  if (ctx->op_version >= 23) {
    o2m_dtype attr;
    if ((s = dtype_attr(ctx, "output_dtype", O2M_DT_UNDEFINED, &attr)))
      return s;
    if (attr != O2M_DT_UNDEFINED) dtype = attr;
  }
  if ((s = check_quant_param(ctx, x, o2m_in_type(ctx, 1))) ||
      (s = check_quant_param(ctx, x, o2m_in_type(ctx, 2))) || (s = o2m_check_scale(ctx, 1, "x_scale", 0)))
    return s;
  out_like(ctx, 0, x, dtype);
  return O2M_OK;
}

/* DynamicQuantizeLinear(x) -> (y uint8 like x, y_scale float scalar,
 * y_zero_point uint8 scalar). */
o2m_status o2m_infer_dynamic_quantize(o2m_infer_ctx *ctx) {
  out_like(ctx, 0, o2m_in_type(ctx, 0), O2M_DT_UINT8);
  o2m_out_tensor(ctx, 1, O2M_DT_FLOAT, 0);
  o2m_out_tensor(ctx, 2, O2M_DT_UINT8, 0);
  return O2M_OK;
}

/* ---- TopK, Det, losses ------------------------------------------------- */

/* The k of TopK: the attribute before opset 10, else the one-element K
 * input; -1 when not known. */
static o2m_status topk_k(o2m_infer_ctx *ctx, int64_t *k) {
  *k = -1;
  if (ctx->op_version < 10) {
    *k = o2m_attr_int(ctx, "k", -1);
    if (*k <= 0) return o2m_infer_error(ctx, "attribute k must be positive");
    return O2M_OK;
  }
  o2m_status s = check_rank(ctx, o2m_in_type(ctx, 1), "K", 1, 1);
  if (s) return s;
  int64_t *values;
  int64_t n = o2m_in_known_ints(ctx, 1, &values);
  if (n < 0) return O2M_OK;
  if (n != 1 || values[0] < 0)
    return o2m_infer_error(ctx, "K must hold one non-negative value");
  *k = values[0];
  return O2M_OK;
}

/* TopK -> (Values, Indices int64): X's dims with dim[axis] = k. */
o2m_status o2m_infer_topk(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  int64_t k;
  o2m_status s = topk_k(ctx, &k);
  if (s) return s;
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, x->elem);
    out_unranked(ctx, 1, O2M_DT_INT64);
    return O2M_OK;
  }
  int64_t axis;
  if ((s = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", -1), x->rank, 0,
                         &axis)))
    return s;
  o2m_dim along = x->dims[axis];
  if (k >= 0 && along.size >= 0 && k > along.size)
    return o2m_infer_error(ctx, "k = %lld exceeds the axis size %lld",
                           (long long)k, (long long)along.size);
  o2m_type *y = o2m_type_copy(ctx, x);
  if (!y) return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
  y->dims[axis] = k >= 0 ? o2m_dim_known(k) : o2m_dim_fresh(ctx);
  o2m_out_set_type(ctx, 0, y);
  y->elem = O2M_DT_INT64;
  o2m_out_set_type(ctx, 1, y);
  return O2M_OK;
}

/* Det(X (..., M, M)) -> (...). */
o2m_status o2m_infer_det(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, x->elem);
    return O2M_OK;
  }
  if (x->rank < 2)
    return o2m_infer_error(ctx, "input has rank %d, expected >= 2", x->rank);
  o2m_status s = check_same_dim(ctx, x->dims[x->rank - 2], x->dims[x->rank - 1],
                                "matrices are not square");
  if (s) return s;
  o2m_type y = dims_view(x, 0, x->rank - 2);
  o2m_out_set_type(ctx, 0, &y);
  return O2M_OK;
}

/* NegativeLogLikelihoodLoss(input (N, C, d..), target (N, d..), weight?)
 * and SoftmaxCrossEntropyLoss(scores, labels, weights?) -> (loss,
 * log_prob?): the loss is per element (target's dims) for reduction "none",
 * else a scalar; log_prob has the scores' type. */
o2m_status o2m_infer_loss(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *target = o2m_in_type(ctx, 1);
  const char *reduction = o2m_attr_string(ctx, "reduction", "mean");
  o2m_status s;
  if ((s = check_rank(ctx, x, "input", 2, INT32_MAX)) ||
      (s = check_rank(ctx, target, "target", 1, INT32_MAX)))
    return s;
  if (is_ranked(x) && is_ranked(target)) {
    if (target->rank != x->rank - 1)
      return o2m_infer_error(ctx, "target rank %d does not fit input rank %d",
                             target->rank, x->rank);
    for (int k = 0; k < target->rank; k++)
      if ((s = check_same_dim(ctx, x->dims[k ? k + 1 : 0], target->dims[k],
                              "target dims differ from the input's")))
        return s;
  }
  out_like(ctx, 1, x, x->elem);
  if (strcmp(reduction, "mean") == 0 || strcmp(reduction, "sum") == 0) {
    o2m_out_tensor(ctx, 0, x->elem, 0);
    return O2M_OK;
  }
  if (strcmp(reduction, "none") != 0)
    return o2m_infer_error(ctx, "unknown reduction '%s'", reduction);
  if (is_ranked(target)) {
    o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, target->rank);
    for (int k = 0; k < target->rank; k++)
      y->dims[k] = is_ranked(x)
                       ? dim_either(target->dims[k], x->dims[k ? k + 1 : 0])
                       : target->dims[k];
  } else if (is_ranked(x)) {
    o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, x->rank - 1);
    for (int k = 0; k < x->rank - 1; k++) y->dims[k] = x->dims[k ? k + 1 : 0];
  } else {
    out_unranked(ctx, 0, x->elem);
  }
  return O2M_OK;
}

/* ---- Resize, Upsample and the sampling ops ----------------------------- */

/* The entries of a 1-D integer input as dims: its known values, or the
 * symbolic dims that shape data propagation tracked. *count is -1 when
 * neither is known; a negative entry is an error. */
static o2m_status in_dims_value(o2m_infer_ctx *ctx, int i, const char *what,
                                int64_t *count, const o2m_dim **dims) {
  *count = o2m_shape_value_in(ctx, i, 0, dims);
  for (int64_t k = 0; k < *count; k++)
    if (o2m_entry_known((*dims)[k]) && (*dims)[k].size < 0)
      return o2m_infer_error(ctx, "%s has a negative value", what);
  return O2M_OK;
}

/* The known values of a floating-point input; -1 when not known. */
static int64_t in_known_floats(o2m_infer_ctx *ctx, int i, double **values) {
  const o2m_tensor *t = o2m_in_known(ctx, i);
  if (!t || !o2m_dtype_is_float(t->dtype) || (t->count && !t->data)) return -1;
  *values = o2m_arena_array(ctx->arena, (size_t)t->count + 1, sizeof(double));
  if (!*values) return -1;
  for (int64_t k = 0; k < t->count; k++)
    (*values)[k] = o2m_tensor_get_float(t, k);
  return t->count;
}

/* Whether an optional 1-D input is given: present and not empty. */
static int in_given(o2m_infer_ctx *ctx, int i, int64_t known_count) {
  const o2m_type *t = o2m_in_type(ctx, i);
  int empty = known_count == 0 ||
              (is_ranked(t) && t->rank == 1 && t->dims[0].size == 0);
  return o2m_in_present(ctx, i) && !empty;
}

/* floor(in * scale), the output size of a scaled axis. */
static o2m_status scaled_dim(o2m_infer_ctx *ctx, o2m_dim in, double scale,
                             o2m_dim *out) {
  if (!(scale > 0) || scale > 1e15)
    return o2m_infer_error(ctx, "scale %g is not positive or too large", scale);
  if (in.size < 0) {
    *out = scale == 1.0 ? in : o2m_dim_fresh(ctx);
    return O2M_OK;
  }
  double size = (double)in.size * scale;
  if (size >= 9.0e18) return o2m_infer_error(ctx, "scaled size overflows");
  *out = o2m_dim_known((int64_t)size);
  return O2M_OK;
}

/* Scales the dims of `x` listed in `axes` (NULL: every axis, in order) by
 * `scales` into y. */
static o2m_status apply_scales(o2m_infer_ctx *ctx, const o2m_type *x,
                               const int64_t *axes, int n_axes,
                               const double *scales, int64_t n_scales,
                               o2m_type *y) {
  if (n_scales != n_axes)
    return o2m_infer_error(ctx, "%lld scales for %d axes", (long long)n_scales,
                           n_axes);
  for (int j = 0; j < n_axes; j++) {
    int axis = axes ? (int)axes[j] : j;
    o2m_status s = scaled_dim(ctx, x->dims[axis], scales[j], &y->dims[axis]);
    if (s) return s;
  }
  return O2M_OK;
}

/* Upsample: scales from height_scale/width_scale (opset 1, NCHW), the
 * scales attribute (7) or the scales input (9, 10). */
o2m_status o2m_infer_upsample(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, x->elem);
    return O2M_OK;
  }
  o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, x->rank);
  for (int k = 0; k < x->rank; k++) y->dims[k] = o2m_dim_fresh(ctx);
  double *scales = NULL, hw[4];
  int64_t n = -1;
  if (ctx->op_version >= 9) {
    n = in_known_floats(ctx, 1, &scales);
  } else if (ctx->op_version >= 7) {
    const o2m_attr *a = o2m_attr_get(ctx, "scales");
    if (!a || a->type != O2M_ATTR_FLOATS)
      return o2m_infer_error(ctx, "attribute scales is required");
    scales = o2m_arena_array(ctx->arena, (size_t)a->count + 1, sizeof(double));
    if (!scales) return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
    for (int k = 0; k < a->count; k++) scales[k] = a->floats[k];
    n = a->count;
  } else {
    if (x->rank != 4)
      return o2m_infer_error(ctx, "input has rank %d, expected 4", x->rank);
    hw[0] = hw[1] = 1.0;
    hw[2] = o2m_attr_float(ctx, "height_scale", 0.0f);
    hw[3] = o2m_attr_float(ctx, "width_scale", 0.0f);
    scales = hw;
    n = 4;
  }
  return n < 0 ? O2M_OK : apply_scales(ctx, x, NULL, x->rank, scales, n, y);
}

static const char *const aspect_policies[] = {"stretch", "not_larger",
                                              "not_smaller"};

/* The output dims of Resize from `sizes` under keep_aspect_ratio_policy
 * (0 stretch, 1 not_larger, 2 not_smaller): a policy other than stretch
 * scales every listed axis by the min (max) ratio, rounding half up. */
static o2m_status apply_sizes(o2m_infer_ctx *ctx, const o2m_type *x,
                              const int64_t *axes, int n_axes,
                              const o2m_dim *sizes, int policy, o2m_type *y) {
  double scale = policy == 1 ? 1e300 : 0.0;
  for (int j = 0; j < n_axes; j++) {
    int axis = axes ? (int)axes[j] : j;
    if (policy == 0) {
      y->dims[axis] = sizes[j];
      continue;
    }
    if (x->dims[axis].size <= 0 || sizes[j].size < 0) return O2M_OK;
    double ratio = (double)sizes[j].size / (double)x->dims[axis].size;
    if ((policy == 1) == (ratio < scale)) scale = ratio;
  }
  for (int j = 0; policy && j < n_axes; j++) {
    int axis = axes ? (int)axes[j] : j;
    y->dims[axis] =
        o2m_dim_known((int64_t)(scale * (double)x->dims[axis].size + 0.5));
  }
  return O2M_OK;
}

/* The axes attribute of Resize (opset 18+), normalised and checked for
 * duplicates; NULL with count rank when absent. */
static o2m_status resize_axes(o2m_infer_ctx *ctx, int rank, int64_t **axes,
                              int *count) {
  const int64_t *raw;
  int n = ctx->op_version >= 18 ? o2m_attr_ints(ctx, "axes", &raw) : -1;
  *axes = NULL;
  *count = rank;
  if (n < 0) return O2M_OK;
  if (n > rank) return o2m_infer_error(ctx, "more axes than input dims");
  int64_t *a = o2m_arena_array(ctx->arena, (size_t)n + 1, sizeof(int64_t));
  if (!a) return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int j = 0; j < n; j++) {
    o2m_status s = o2m_norm_axis(ctx, raw[j], rank, 0, &a[j]);
    if (s) return s;
    for (int i = 0; i < j; i++)
      if (a[i] == a[j])
        return o2m_infer_error(ctx, "axes repeat %lld", (long long)a[j]);
  }
  *axes = a;
  *count = n;
  return O2M_OK;
}

/* Resize(X, scales) at opset 10; Resize(X, roi?, scales?, sizes?) since 11,
 * with exactly one of scales and sizes, and axes and
 * keep_aspect_ratio_policy since 18. Axes not resized keep their dims. */
o2m_status o2m_infer_resize(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, x->elem);
    return O2M_OK;
  }
  int64_t *axes;
  int n_axes, policy = 0;
  o2m_status s = resize_axes(ctx, x->rank, &axes, &n_axes);
  if (s) return s;
  const char *name =
      ctx->op_version >= 18
          ? o2m_attr_string(ctx, "keep_aspect_ratio_policy", "stretch")
          : "stretch";
  while (policy < 3 && strcmp(name, aspect_policies[policy])) policy++;
  if (policy == 3)
    return o2m_infer_error(ctx, "unknown keep_aspect_ratio_policy '%s'", name);
  int scales_in = ctx->op_version < 11 ? 1 : 2;
  double *scales = NULL;
  int64_t n_scales = in_known_floats(ctx, scales_in, &scales), n_sizes = -1;
  const o2m_dim *sizes = NULL;
  if (ctx->op_version >= 11 &&
      (s = in_dims_value(ctx, 3, "sizes", &n_sizes, &sizes)))
    return s;
  int has_scales = in_given(ctx, scales_in, n_scales);
  int has_sizes = ctx->op_version >= 11 && in_given(ctx, 3, n_sizes);
  if (ctx->op_version >= 11 && has_scales + has_sizes != 1)
    return o2m_infer_error(ctx,
                           "exactly one of scales and sizes must be given");
  if (has_scales && policy != 0)
    return o2m_infer_error(ctx, "scales need keep_aspect_ratio_policy stretch");
  o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, x->rank);
  for (int k = 0; k < x->rank; k++)
    y->dims[k] = axes ? x->dims[k] : o2m_dim_fresh(ctx);
  for (int j = 0; axes && j < n_axes; j++)
    y->dims[axes[j]] = o2m_dim_fresh(ctx);
  if (has_scales && n_scales >= 0)
    return apply_scales(ctx, x, axes, n_axes, scales, n_scales, y);
  if (!has_sizes || n_sizes < 0) return O2M_OK;
  if (n_sizes != n_axes)
    return o2m_infer_error(ctx, "%lld sizes for %d axes", (long long)n_sizes,
                           n_axes);
  return apply_sizes(ctx, x, axes, n_axes, sizes, policy, y);
}

/* GridSample(X (N, C, D1..Dr), grid (N, O1..Or, r)) -> (N, C, O1..Or);
 * 2-D only (rank 4) before opset 20. */
o2m_status o2m_infer_grid_sample(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *grid = o2m_in_type(ctx, 1);
  int max_rank = ctx->op_version < 20 ? 4 : INT32_MAX;
  o2m_status s;
  if ((s = check_rank(ctx, x, "input", ctx->op_version < 20 ? 4 : 3,
                      max_rank)) ||
      (s = check_rank(ctx, grid, "grid", ctx->op_version < 20 ? 4 : 3,
                      max_rank)))
    return s;
  int rank = is_ranked(x) ? x->rank : is_ranked(grid) ? grid->rank : -1;
  if (rank < 0) {
    out_unranked(ctx, 0, x->elem);
    return O2M_OK;
  }
  if (is_ranked(grid)) {
    if (grid->rank != rank)
      return o2m_infer_error(ctx, "grid rank %d differs from input rank %d",
                             grid->rank, rank);
    if ((s = check_same_dim(ctx, grid->dims[rank - 1], o2m_dim_known(rank - 2),
                            "grid's last dim is not the spatial rank")))
      return s;
  }
  o2m_type *y = out_shaped(ctx, 0, x->elem, rank);
  if (is_ranked(x)) {
    y->dims[0] = x->dims[0];
    y->dims[1] = x->dims[1];
  }
  if (is_ranked(grid)) {
    y->dims[0] = dim_either(y->dims[0], grid->dims[0]);
    for (int k = 2; k < rank; k++) y->dims[k] = grid->dims[k - 1];
  }
  return O2M_OK;
}

/* AffineGrid(theta (N, 2, 3) or (N, 3, 4), size (N, C, H, W) or
 * (N, C, D, H, W)) -> grid (N, H, W, 2) or (N, D, H, W, 3). */
o2m_status o2m_infer_affine_grid(o2m_infer_ctx *ctx) {
  const o2m_type *theta = o2m_in_type(ctx, 0), *size_type = o2m_in_type(ctx, 1);
  const o2m_dim *size = NULL;
  int64_t n = -1;
  o2m_status s;
  if ((s = check_rank(ctx, theta, "theta", 3, 3)) ||
      (s = check_rank(ctx, size_type, "size", 1, 1)) ||
      (s = in_dims_value(ctx, 1, "size", &n, &size)))
    return s;
  if (n < 0 && is_ranked(size_type)) n = size_type->dims[0].size;
  if (n < 0 && is_ranked(theta) && theta->dims[1].size >= 0)
    n = theta->dims[1].size == 2 ? 4 : 5;
  if (n < 0) {
    out_unranked(ctx, 0, theta->elem);
    return O2M_OK;
  }
  if (n != 4 && n != 5)
    return o2m_infer_error(ctx, "size has %lld values, expected 4 or 5",
                           (long long)n);
  int spatial = (int)n - 2;
  if (is_ranked(theta) &&
      ((s = check_same_dim(ctx, theta->dims[1], o2m_dim_known(spatial),
                           "theta rows do not fit size")) ||
       (s = check_same_dim(ctx, theta->dims[2], o2m_dim_known(spatial + 1),
                           "theta columns do not fit size"))))
    return s;
  o2m_type *y = out_shaped(ctx, 0, theta->elem, spatial + 2);
  if (is_ranked(theta)) y->dims[0] = theta->dims[0];
  if (size) {
    y->dims[0] = dim_either(size[0], y->dims[0]);
    for (int k = 0; k < spatial; k++) y->dims[1 + k] = size[2 + k];
  }
  y->dims[spatial + 1] = o2m_dim_known(spatial);
  return O2M_OK;
}

/* RoiAlign(X (N, C, H, W), rois (R, 4), batch_indices (R)) ->
 * (R, C, output_height, output_width). */
o2m_status o2m_infer_roi_align(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *rois = o2m_in_type(ctx, 1);
  const o2m_type *batch = o2m_in_type(ctx, 2);
  const char *mode = o2m_attr_string(ctx, "mode", "avg");
  int64_t height = o2m_attr_int(ctx, "output_height", 1);
  int64_t width = o2m_attr_int(ctx, "output_width", 1);
  o2m_status s;
  if (strcmp(mode, "avg") && strcmp(mode, "max"))
    return o2m_infer_error(ctx, "unknown mode '%s'", mode);
  if (height <= 0 || width <= 0)
    return o2m_infer_error(ctx,
                           "output_height and output_width must be positive");
  if ((s = check_rank(ctx, x, "X", 4, 4)) ||
      (s = check_rank(ctx, rois, "rois", 2, 2)) ||
      (s = check_rank(ctx, batch, "batch_indices", 1, 1)))
    return s;
  if (is_ranked(rois) &&
      (s = check_same_dim(ctx, rois->dims[1], o2m_dim_known(4),
                          "rois must be (R, 4)")))
    return s;
  o2m_type *y = out_shaped(ctx, 0, x->elem, 4);
  if (is_ranked(rois)) y->dims[0] = rois->dims[0];
  if (is_ranked(batch)) y->dims[0] = dim_either(y->dims[0], batch->dims[0]);
  if (is_ranked(x)) y->dims[1] = x->dims[1];
  y->dims[2] = o2m_dim_known(height);
  y->dims[3] = o2m_dim_known(width);
  return O2M_OK;
}

/* NonMaxSuppression(boxes (B, S, 4), scores (B, K, S), ...) ->
 * selected_indices int64 (?, 3). */
o2m_status o2m_infer_nms(o2m_infer_ctx *ctx) {
  o2m_status s;
  if ((s = check_rank(ctx, o2m_in_type(ctx, 0), "boxes", 3, 3)) ||
      (s = check_rank(ctx, o2m_in_type(ctx, 1), "scores", 3, 3)))
    return s;
  o2m_type *y = o2m_out_tensor(ctx, 0, O2M_DT_INT64, 2);
  y->dims[0] = o2m_dim_fresh(ctx);
  y->dims[1] = o2m_dim_known(3);
  return O2M_OK;
}
