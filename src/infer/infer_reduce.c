/* infer_reduce.c - type inference for the reductions: the Reduce* ops
 * (axes as an attribute before opset 18, 13 for ReduceSum, and as an
 * optional input since, with noop_with_empty_axes), ArgMax/ArgMin and
 * CumSum/CumProd; data propagation for ReduceSum, ReduceProd, ReduceMax
 * and ReduceMin over known inputs. */
#include <string.h>

#include "infer/infer.h"
#include "infer/value_fold.h"
#include "util/diag.h"

enum { NO_IDENTITY = -1 };

typedef struct reduce_op {
  const char *name;
  int axes_input_since; /* the version whose `axes` is an input */
  o2m_num_binary_fn fold; /* NULL: the value is not propagated */
  int identity;           /* the result of an empty reduction */
} reduce_op;

static const reduce_op reduce_ops[] = {
    {"ReduceSum", 13, o2m_num_add, 0},
    {"ReduceProd", 18, o2m_num_mul, 1},
    {"ReduceMax", 18, o2m_num_max, NO_IDENTITY},
    {"ReduceMin", 18, o2m_num_min, NO_IDENTITY},
    {"ReduceMean", 18, NULL, NO_IDENTITY},
    {"ReduceSumSquare", 18, NULL, NO_IDENTITY},
    {"ReduceL1", 18, NULL, NO_IDENTITY},
    {"ReduceL2", 18, NULL, NO_IDENTITY},
    {"ReduceLogSum", 18, NULL, NO_IDENTITY},
    {"ReduceLogSumExp", 18, NULL, NO_IDENTITY},
};

/* The reduced axes as flags over `rank` dims; no axes reduce them all.
 * Repeated axes are an error. */
static o2m_status mark_axes(o2m_infer_ctx *ctx, const int64_t *axes, int n,
                            int rank, char **reduced) {
  *reduced = o2m_arena_alloc(ctx->arena, (size_t)rank + 1);
  if (!*reduced) return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
  memset(*reduced, n == 0, (size_t)rank);
  for (int i = 0; i < n; i++) {
    int64_t a;
    o2m_status s = o2m_norm_axis(ctx, axes[i], rank, 0, &a);
    if (s) return s;
    if ((*reduced)[a])
      return o2m_infer_error(ctx, "axis %lld is repeated", (long long)axes[i]);
    (*reduced)[a] = 1;
  }
  return O2M_OK;
}

/* The length of the axes input from its type; -1 when unknown. */
static int64_t axes_length(o2m_infer_ctx *ctx) {
  const o2m_type *axes = o2m_in_type(ctx, 1);
  return axes->kind == O2M_TYPE_TENSOR && axes->rank == 1 ? axes->dims[0].size : -1;
}

/* Output of a reduction with unknown (non-empty) axes: with keepdims
 * every dim may become 1 (a known 1 stays 1); without, only the rank may
 * be known, from the length of the axes input. */
static void reduce_unknown_axes(o2m_infer_ctx *ctx, const o2m_type *in,
                                int keepdims) {
  if (keepdims) {
    o2m_type *out = o2m_out_tensor(ctx, 0, in->elem, in->rank);
    for (int k = 0; k < out->rank; k++)
      if (in->dims[k].size == 1) out->dims[k] = in->dims[k];
    return;
  }
  int64_t n = axes_length(ctx);
  o2m_out_tensor(ctx, 0, in->elem, n > 0 && n <= in->rank ? in->rank - (int)n : -1);
}

/* Output 0's value from a known input: each output element accumulates
 * the input elements that map onto it. */
static void fold_reduce(o2m_infer_ctx *ctx, const reduce_op *op,
                        const char *reduced, int keepdims) {
  const o2m_tensor *in = o2m_in_known(ctx, 0);
  if (!op->fold || !o2m_num_readable(in)) return;
  int64_t *dims = o2m_arena_array(ctx->arena, (size_t)in->rank + 1, sizeof(int64_t));
  if (!dims) return;
  int rank = 0;
  for (int k = 0; k < in->rank; k++)
    if (!reduced[k]) dims[rank++] = in->dims[k];
    else if (keepdims) dims[rank++] = 1;
  o2m_tensor *t = o2m_tensor_new(ctx, in->dtype, rank, dims);
  o2m_num *acc = t ? o2m_arena_array(ctx->arena, (size_t)t->count + 1, sizeof(*acc)) : NULL;
  char *seen = t ? o2m_arena_alloc(ctx->arena, (size_t)t->count + 1) : NULL;
  if (!seen || !acc) return;
  o2m_num_kind kind = o2m_num_kind_of(in->dtype);
  for (int64_t o = 0; o < t->count && op->identity != NO_IDENTITY; o++) {
    acc[o] = o2m_num_to((o2m_num){O2M_NUM_INT, 0, op->identity}, kind);
    seen[o] = 1;
  }
  for (int64_t e = 0; e < in->count; e++) {
    int64_t rest = e, o = 0, stride = 1;
    for (int k = in->rank - 1; k >= 0; k--) {
      int64_t coord = rest % in->dims[k];
      rest /= in->dims[k];
      if (reduced[k]) continue;
      o += coord * stride;
      stride *= in->dims[k];
    }
    o2m_num v = o2m_num_get(in, e);
    if (!seen[o]) acc[o] = v;
    else if (!op->fold(acc[o], v, &acc[o])) return;
    seen[o] = 1;
  }
  for (int64_t o = 0; o < t->count; o++) {
    if (!seen[o]) return; /* Max/Min over nothing */
    o2m_num_set(t, o, acc[o]);
  }
  o2m_out_known(ctx, 0, t);
}

o2m_status o2m_infer_reduce(o2m_infer_ctx *ctx) {
  const reduce_op *op = NULL;
  for (size_t i = 0; i < sizeof(reduce_ops) / sizeof(reduce_ops[0]); i++)
    if (strcmp(reduce_ops[i].name, ctx->node->op_type) == 0) op = &reduce_ops[i];
  if (!op) return o2m_infer_unsupported(ctx, "no reduction rule for this op");
  o2m_status s = o2m_in_check_tensor(ctx, 0);
  if (s) return s;
  const o2m_type *in = o2m_in_type(ctx, 0);
  int keepdims = o2m_attr_int(ctx, "keepdims", 1) != 0;
  int axes_input = ctx->op_version >= op->axes_input_since;
  int noop = axes_input && o2m_attr_int(ctx, "noop_with_empty_axes", 0) != 0;

  const int64_t *axes = NULL;
  int n_axes = 0; /* -1: given, but not known */
  if (axes_input && o2m_in_present(ctx, 1)) {
    int64_t *values = NULL;
    int64_t n = o2m_in_known_ints(ctx, 1, &values);
    if (n > in->rank && in->kind == O2M_TYPE_TENSOR && in->rank >= 0)
      return o2m_infer_error(ctx, "%lld axes for rank %d", (long long)n, in->rank);
    n_axes = n >= 0 ? (int)n : axes_length(ctx) == 0 ? 0 : -1;
    axes = values;
  } else if (!axes_input) {
    n_axes = o2m_attr_ints(ctx, "axes", &axes);
    if (n_axes < 0) n_axes = 0;
  }

  if (n_axes == 0 && noop) { /* the identity */
    o2m_out_shaped_like(ctx, 0, in->elem, in);
    o2m_out_known(ctx, 0, o2m_in_known(ctx, 0));
    return O2M_OK;
  }
  if (in->kind != O2M_TYPE_TENSOR || in->rank < 0) {
    o2m_out_tensor(ctx, 0, in->elem, -1);
    return O2M_OK;
  }
  if (n_axes < 0) {
    reduce_unknown_axes(ctx, in, keepdims);
    return O2M_OK;
  }
  char *reduced;
  s = mark_axes(ctx, axes, n_axes, in->rank, &reduced);
  if (s) return s;
  int rank = 0;
  for (int k = 0; k < in->rank; k++) rank += keepdims || !reduced[k];
  o2m_type *out = o2m_out_tensor(ctx, 0, in->elem, rank);
  for (int k = 0, j = 0; k < in->rank && out->rank == rank; k++)
    if (!reduced[k]) out->dims[j++] = in->dims[k];
    else if (keepdims) out->dims[j++] = o2m_dim_known(1);
  fold_reduce(ctx, op, reduced, keepdims);
  return O2M_OK;
}

/* ArgMax, ArgMin: int64 indices along `axis`, kept as a 1 with keepdims. */
o2m_status o2m_infer_arg_reduce(o2m_infer_ctx *ctx) {
  o2m_status s = o2m_in_check_tensor(ctx, 0);
  if (s) return s;
  const o2m_type *in = o2m_in_type(ctx, 0);
  int keepdims = o2m_attr_int(ctx, "keepdims", 1) != 0;
  if (in->kind != O2M_TYPE_TENSOR || in->rank < 0) {
    o2m_out_tensor(ctx, 0, O2M_DT_INT64, -1);
    return O2M_OK;
  }
  int64_t axis;
  s = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", 0), in->rank, 0, &axis);
  if (s) return s;
  o2m_type *out = o2m_out_tensor(ctx, 0, O2M_DT_INT64, in->rank - !keepdims);
  for (int k = 0, j = 0; k < in->rank && out->rank == in->rank - !keepdims; k++)
    if (k != axis) out->dims[j++] = in->dims[k];
    else if (keepdims) out->dims[j++] = o2m_dim_known(1);
  return O2M_OK;
}

/* CumSum, CumProd: the input's type; the axis input is a scalar. */
o2m_status o2m_infer_cumulative(o2m_infer_ctx *ctx) {
  o2m_status s = o2m_in_check_tensor(ctx, 0);
  if (!s) s = o2m_in_check_tensor(ctx, 1);
  if (s) return s;
  const o2m_type *in = o2m_in_type(ctx, 0), *axis_type = o2m_in_type(ctx, 1);
  if (axis_type->kind == O2M_TYPE_TENSOR && axis_type->rank > 1)
    return o2m_infer_error(ctx, "axis must be a scalar, not of rank %d", axis_type->rank);
  int64_t axis, normalized;
  if (in->kind == O2M_TYPE_TENSOR && in->rank >= 0 && o2m_in_known_scalar(ctx, 1, &axis)) {
    s = o2m_norm_axis(ctx, axis, in->rank, 0, &normalized);
    if (s) return s;
  }
  o2m_out_shaped_like(ctx, 0, in->elem, in);
  return O2M_OK;
}
