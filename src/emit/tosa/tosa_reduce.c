/* tosa_reduce.c - TOSA lowerings of the reduction family: ReduceSum/Mean/
 * Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp, ArgMax/ArgMin, Softmax,
 * LogSoftmax, Hardmax, CumSum and TopK.
 *
 * A Reduce* op is one table row: the TOSA reduce op, an op applied to each
 * element before it and one applied to the result. TOSA reduces one axis
 * at a time keeping it as a size-1 dim; keepdims=0 reshapes at the end.
 * f16/bf16 compute in f32 and i8/i16 in i32 (TOSA's sums and products
 * have no narrower accumulators), then cast back once. TOSA takes no
 * tensors without elements: such an input gives a constant (a reduction
 * over a zero-size dim: the op's value on no elements). Shapes must be
 * static. TOSA has no sort: TopK picks its K elements one at a
 * time (argmax of what is not taken yet), for small static K; CumSum is a
 * log-step scan of shifted adds (tosa.slice + tosa.concat). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit/tosa/tosa_kit.h"

enum { F = 1, I = 2, B = 4 }; /* dtype classes: floats, signed integers, bool */
enum { MAX_TOPK = 64 };        /* largest K unrolled by TopK */

static const MlirValue no_value = {NULL};

static int dtype_class(o2m_dtype d) {
  if (d == O2M_DT_BOOL) return B;
  if (lw_dtype_is_float(d)) return F;
  return lw_dtype_is_signed(d) ? I : 0;
}

/* Checks the dtype of input 0 against the op's classes, every dtype of
 * the node against TOSA's, and that input 0 is a static ranked tensor of
 * rank at least min_rank. */
static o2m_status check_input(lw_ctx *cx, int classes, int min_rank) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_unsupported(cx, "input is missing or not a ranked tensor");
  o2m_dtype d = lw_in_type(cx, 0)->elem;
  if (!(dtype_class(d) & classes)) return lw_unsupported(cx, "no TOSA lowering for %s inputs", o2m_dtype_name(d));
  o2m_status s = tw_check_node_dtypes(cx, 0);
  if (s) return s;
  int rank = tw_rank(x);
  if (rank < min_rank) return lw_unsupported(cx, "an input of rank %d", rank);
  if (rank > TW_MAX_RANK) return lw_unsupported(cx, "rank above %d", TW_MAX_RANK);
  for (int k = 0; k < rank; k++)
    if (tw_size(x, k) < 0) return lw_unsupported(cx, "dynamic dim %d of the input (only static shapes are lowered)", k);
  return O2M_OK;
}

/* Whether a static tensor value has no elements (TOSA ops take none such). */
static int has_no_elements(MlirValue x) {
  for (int k = 0; k < tw_rank(x); k++)
    if (tw_size(x, k) == 0) return 1;
  return 0;
}

/* Normalizes an axis attribute (default dflt) of input 0 of rank `rank`. */
static o2m_status node_axis(lw_ctx *cx, int rank, int64_t dflt, int *axis) {
  int64_t a = lw_attr_int(cx, "axis", dflt);
  if (a < -rank || a >= rank) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)a, rank);
  *axis = (int)(a < 0 ? a + rank : a);
  return O2M_OK;
}

/* The dtype computed in: f32 for f16/bf16; i32 for i8/i16 when `widen`. */
static o2m_dtype compute_dtype(o2m_dtype d, int widen) {
  if (d == O2M_DT_FLOAT16 || d == O2M_DT_BFLOAT16) return O2M_DT_FLOAT;
  if (widen && (d == O2M_DT_INT8 || d == O2M_DT_INT16)) return O2M_DT_INT32;
  return d;
}

/* ---- building blocks ------------------------------------------------------------- */

/* A tosa.const of `type` filled with v (infinities clamped to the range of
 * an integer element type; bool: v != 0). */
static MlirValue filled(lw_ctx *cx, MlirType type, double v) {
  MlirType elem = mlirShapedTypeGetElementType(type);
  MlirAttribute scalar;
  if (mlirTypeIsAFloat(elem)) {
    scalar = mlirFloatAttrDoubleGet(cx->mc, elem, v);
  } else {
    unsigned w = mlirIntegerTypeGetWidth(elem);
    int64_t hi = w == 1 ? 1 : w >= 64 ? INT64_MAX : (int64_t)((1ull << (w - 1)) - 1);
    int64_t lo = w == 1 ? 0 : -hi - 1;
    int64_t i = isnan(v) ? 0 : v >= (double)hi ? hi : v <= (double)lo ? lo : (int64_t)v;
    scalar = mlirIntegerAttrGet(elem, w == 1 ? i != 0 : i);
  }
  MlirNamedAttribute attr = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, mlirStringRefCreateFromCString("values")),
                                                  mlirDenseElementsAttrSplatGet(type, scalar));
  MlirOperation o = lw_op_attrs(cx, "tosa.const", 0, NULL, 1, &type, 1, &attr, 0);
  return mlirOperationIsNull(o) ? no_value : mlirOperationGetResult(o, 0);
}

/* A tosa.const of x's rank and element type, of size-1 dims, holding v
 * (as `filled`). */
static MlirValue splat_like(lw_ctx *cx, MlirValue x, double v) {
  int64_t ones[TW_MAX_RANK];
  for (int k = 0; k < tw_rank(x); k++) ones[k] = 1;
  return filled(cx, tw_tensor(cx, tw_elem(x), tw_rank(x), ones), v);
}

/* Output i as a constant filled with v (TOSA has no tensors without
 * elements: refused when it has none). */
static o2m_status set_out_filled(lw_ctx *cx, int i, double v) {
  MlirType type = lw_tensor_type(cx, lw_out_type(cx, i));
  if (mlirTypeIsNull(type) || !mlirShapedTypeHasStaticShape(type))
    return lw_unsupported(cx, "output %d has no static shape", i);
  for (intptr_t k = 0; k < mlirShapedTypeGetRank(type); k++)
    if (mlirShapedTypeGetDimSize(type, k) == 0)
      return lw_unsupported(cx, "output %d has no elements (TOSA has no such tensors)", i);
  return lw_set_out(cx, i, filled(cx, type, v));
}

/* The sizes of v with dim `axis` replaced by n (n < 0: removed). */
static int sizes_with(MlirValue v, int axis, int64_t n, int64_t *sizes) {
  int rank = 0;
  for (int k = 0; k < tw_rank(v); k++)
    if (k != axis || n >= 0) sizes[rank++] = k == axis ? n : tw_size(v, k);
  return rank;
}

/* An op with an `axis = K : i32` attribute and one result. */
static MlirValue axis_op(lw_ctx *cx, const char *op, int n, const MlirValue *operands, MlirType result, int axis) {
  char attrs[32];
  snprintf(attrs, sizeof(attrs), "axis = %d : i32", axis);
  for (int i = 0; i < n; i++)
    if (mlirValueIsNull(operands[i])) return no_value;
  return lw_op1(cx, op, n, operands, result, attrs);
}

static MlirValue concat_axis(lw_ctx *cx, MlirValue a, MlirValue b, int axis) {
  MlirValue ops[2] = {a, b};
  return tw_concat(cx, 2, ops, axis);
}

/* tosa.argmax along axis (dim removed), with i32 indices where the spec
 * has them (i8, i16 and float inputs) and i64 otherwise. */
static MlirValue argmax_axis(lw_ctx *cx, MlirValue x, int axis) {
  int64_t sizes[TW_MAX_RANK];
  if (mlirValueIsNull(x)) return x;
  MlirType elem = tw_elem(x);
  int wide = mlirTypeIsAInteger(elem) && mlirIntegerTypeGetWidth(elem) >= 32;
  int rank = sizes_with(x, axis, -1, sizes);
  return axis_op(cx, "tosa.argmax", 1, &x, tw_tensor(cx, mlirIntegerTypeGet(cx->mc, wide ? 64 : 32), rank, sizes),
                 axis);
}

/* The dtype of an argmax_axis result. */
static o2m_dtype index_dtype(MlirValue idx) {
  return mlirIntegerTypeGetWidth(tw_elem(idx)) == 64 ? O2M_DT_INT64 : O2M_DT_INT32;
}

/* A reversal of the order: -x for floats, ~x (= -x - 1, no overflow) for
 * integers. */
static MlirValue order_reversed(lw_ctx *cx, MlirValue x) {
  return mlirTypeIsAFloat(tw_elem(x)) ? tw_negate(cx, x) : tw_unary(cx, "tosa.bitwise_not", x);
}

/* Inserts a size-1 dim at axis (the kept dim of keepdims). */
static MlirValue keep_dim(lw_ctx *cx, MlirValue v, int axis) {
  int64_t sizes[TW_MAX_RANK];
  int rank = 0;
  for (int k = 0; k <= tw_rank(v); k++) sizes[rank++] = k == axis ? 1 : tw_size(v, k < axis ? k : k - 1);
  return mlirValueIsNull(v) ? v : tw_reshape(cx, v, rank, sizes);
}

/* 0, 1, ..., n-1 (i32) along dim axis of a rank-`rank` tensor of size-1
 * dims elsewhere. */
static MlirValue iota_along(lw_ctx *cx, int rank, int axis, int64_t n) {
  int32_t *values = o2m_arena_alloc(&cx->scratch, (size_t)n * sizeof(int32_t));
  int64_t sizes[TW_MAX_RANK];
  if (!values) return no_value;
  for (int64_t i = 0; i < n; i++) values[i] = (int32_t)i;
  for (int k = 0; k < rank; k++) sizes[k] = k == axis ? n : 1;
  return tw_reshape(cx, tw_const_i32(cx, (int)n, values), rank, sizes);
}

/* ---- Reduce* ------------------------------------------------------------------------ */

enum { PRE_NONE, PRE_ABS, PRE_SQUARE, PRE_EXP_SHIFTED };
enum { POST_NONE, POST_MEAN, POST_SQRT, POST_LOG };

typedef struct reduce_row {
  const char *onnx;
  const char *tosa;      /* the reduce op of floats and integers */
  const char *tosa_bool; /* of booleans (NULL: none) */
  int pre, post;
  int classes;
  double empty; /* the value on no elements */
} reduce_row;

/* ReduceLogSumExp is log(sum(exp(x - m))) + m with m the max of x (0 where
 * it is not finite), which neither overflows nor loses infinities. */
static const reduce_row reduce_rows[] = {
    {"ReduceSum", "tosa.reduce_sum", NULL, PRE_NONE, POST_NONE, F | I, 0},
    {"ReduceMean", "tosa.reduce_sum", NULL, PRE_NONE, POST_MEAN, F | I, NAN},
    {"ReduceMax", "tosa.reduce_max", "tosa.reduce_any", PRE_NONE, POST_NONE, F | I | B, -INFINITY},
    {"ReduceMin", "tosa.reduce_min", "tosa.reduce_all", PRE_NONE, POST_NONE, F | I | B, INFINITY},
    {"ReduceProd", "tosa.reduce_product", NULL, PRE_NONE, POST_NONE, F | I, 1},
    {"ReduceL1", "tosa.reduce_sum", NULL, PRE_ABS, POST_NONE, F | I, 0},
    {"ReduceL2", "tosa.reduce_sum", NULL, PRE_SQUARE, POST_SQRT, F, 0},
    {"ReduceSumSquare", "tosa.reduce_sum", NULL, PRE_SQUARE, POST_NONE, F | I, 0},
    {"ReduceLogSum", "tosa.reduce_sum", NULL, PRE_NONE, POST_LOG, F, -INFINITY},
    {"ReduceLogSumExp", "tosa.reduce_sum", NULL, PRE_EXP_SHIFTED, POST_LOG, F, -INFINITY},
};

/* The reduced dims of input 0: axes from input 1 (known at import); none
 * = all, or none at all with noop_with_empty_axes. */
static o2m_status reduced_dims(lw_ctx *cx, int rank, unsigned char *reduced) {
  int64_t *axes = NULL, n = 0;
  if (lw_in_present(cx, 1)) {
    n = lw_in_known_ints(cx, 1, &axes);
    if (n < 0) return lw_unsupported(cx, "axes that are not known at import time");
  }
  memset(reduced, n == 0 && !lw_attr_int(cx, "noop_with_empty_axes", 0), (size_t)rank);
  for (int64_t i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)axes[i], rank);
    if (reduced[a]) return lw_error(cx, "axis %lld is repeated", (long long)axes[i]);
    reduced[a] = 1;
  }
  return O2M_OK;
}

/* `op` over every reduced dim, kept as size-1 dims. */
static MlirValue reduce_dims(lw_ctx *cx, const char *op, MlirValue x, const unsigned char *reduced) {
  for (int k = 0; k < tw_rank(x) && !mlirValueIsNull(x); k++)
    if (reduced[k]) x = tw_reduce(cx, op, x, k);
  return x;
}

/* The product along one axis as a tree of tosa.mul of halves (TOSA's
 * reduce_product has no integers). */
static MlirValue product_tree(lw_ctx *cx, MlirValue x, int axis) {
  while (!mlirValueIsNull(x) && tw_size(x, axis) > 1) {
    int64_t n = tw_size(x, axis), half = n / 2;
    MlirValue y = tw_mul(cx, tw_slice_axis(cx, x, axis, 0, half), tw_slice_axis(cx, x, axis, half, half));
    x = n % 2 ? concat_axis(cx, y, tw_slice_axis(cx, x, axis, n - 1, 1), axis) : y;
  }
  return x;
}

/* The number of reduced elements. */
static int64_t reduced_count(MlirValue x, const unsigned char *reduced) {
  int64_t count = 1;
  for (int k = 0; k < tw_rank(x); k++)
    if (reduced[k]) count *= tw_size(x, k);
  return count;
}

/* The max of x over the reduced dims where finite, else 0. */
static MlirValue finite_max(lw_ctx *cx, MlirValue x, const unsigned char *reduced) {
  MlirValue m = reduce_dims(cx, "tosa.reduce_max", x, reduced);
  MlirValue zero = splat_like(cx, x, 0);
  MlirValue finite = tw_compare(cx, "tosa.equal", tw_binary(cx, "tosa.sub", m, m), zero);
  return tw_select(cx, finite, m, zero);
}

o2m_status tw_lower_reduce(lw_ctx *cx) {
  const reduce_row *row = NULL;
  for (size_t i = 0; i < sizeof(reduce_rows) / sizeof(reduce_rows[0]); i++)
    if (strcmp(reduce_rows[i].onnx, cx->node->op_type) == 0) row = &reduce_rows[i];
  if (!row) return lw_unsupported(cx, "no TOSA lowering");
  o2m_status s = check_input(cx, row->classes, 0);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int rank = tw_rank(x);
  unsigned char reduced[TW_MAX_RANK];
  if ((s = reduced_dims(cx, rank, reduced))) return s;
  o2m_dtype in_dt = lw_in_type(cx, 0)->elem, out_dt = lw_out_type(cx, 0)->elem;
  int64_t sizes[TW_MAX_RANK];
  int out_rank = 0, keep = lw_attr_int(cx, "keepdims", 1) != 0;
  for (int k = 0; k < rank; k++)
    if (keep || !reduced[k]) sizes[out_rank++] = reduced[k] ? 1 : tw_size(x, k);
  int64_t count = reduced_count(x, reduced);
  if (has_no_elements(x)) return set_out_filled(cx, 0, row->empty);
  o2m_dtype dt = compute_dtype(in_dt, 1);
  x = tw_cast(cx, x, in_dt, dt);
  MlirValue shift = no_value;
  switch (row->pre) {
  case PRE_ABS: x = tw_unary(cx, "tosa.abs", x); break;
  case PRE_SQUARE: x = tw_mul(cx, x, x); break;
  case PRE_EXP_SHIFTED:
    shift = finite_max(cx, x, reduced);
    x = tw_unary(cx, "tosa.exp", tw_binary(cx, "tosa.sub", x, shift));
    break;
  default: break;
  }
  int is_bool = in_dt == O2M_DT_BOOL, int_product = dt != O2M_DT_FLOAT && strcmp(row->tosa, "tosa.reduce_product") == 0;
  for (int k = 0; k < rank && int_product; k++)
    if (reduced[k]) x = product_tree(cx, x, k);
  MlirValue in = x;
  if (!int_product) x = reduce_dims(cx, is_bool ? row->tosa_bool : row->tosa, x, reduced);
  if (lw_dtype_is_float(dt) && isinf(row->empty) && row->pre == PRE_NONE && row->post == POST_NONE) {
    /* upstream tosa-to-linalg starts reduce_max from -FLT_MAX (reduce_min
     * from FLT_MAX), not from the infinity: a slice of infinities (a fully
     * masked attention row) gets its infinity back here */
    MlirValue inf = splat_like(cx, in, row->empty);
    MlirValue all_inf = reduce_dims(cx, "tosa.reduce_all", tw_compare(cx, "tosa.equal", in, inf), reduced);
    x = tw_select(cx, all_inf, inf, x);
  }
  switch (row->post) {
  case POST_MEAN:
    x = lw_dtype_is_float(dt) ? tw_mul(cx, x, splat_like(cx, x, 1.0 / (double)count))
                              : tw_binary(cx, "tosa.intdiv", x, splat_like(cx, x, (double)count));
    break;
  case POST_SQRT: x = tw_binary(cx, "tosa.pow", x, splat_like(cx, x, 0.5)); break;
  case POST_LOG: x = tw_unary(cx, "tosa.log", x); break;
  default: break;
  }
  if (!mlirValueIsNull(shift)) x = tw_binary(cx, "tosa.add", x, shift);
  x = tw_cast(cx, x, dt, out_dt);
  if (mlirValueIsNull(x)) return lw_error(cx, "internal: the reduction could not be built");
  return lw_set_out(cx, 0, tw_reshape(cx, x, out_rank, sizes));
}

/* ---- ArgMax, ArgMin ----------------------------------------------------------------- */

/* The first index of the max along axis (dim removed; ArgMin: of the
 * order reversed); with `last`, the last one: the first of the reversed
 * axis, counted from the end. */
static MlirValue arg_extreme(lw_ctx *cx, MlirValue x, int axis, int min, int last) {
  if (min) x = order_reversed(cx, x);
  if (last) x = tw_reverse(cx, x, axis);
  MlirValue idx = argmax_axis(cx, x, axis);
  if (last && !mlirValueIsNull(idx))
    idx = tw_binary(cx, "tosa.sub", splat_like(cx, idx, (double)(tw_size(x, axis) - 1)), idx);
  return idx;
}

o2m_status tw_lower_arg_extreme(lw_ctx *cx) {
  o2m_status s = check_input(cx, F | I, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int axis = 0;
  if ((s = node_axis(cx, tw_rank(x), 0, &axis))) return s;
  if (tw_size(x, axis) == 0) return lw_error(cx, "ArgMax/ArgMin along an empty axis");
  if (has_no_elements(x)) return lw_unsupported(cx, "an output without elements (TOSA has no such tensors)");
  int min = strcmp(cx->node->op_type, "ArgMin") == 0, last = lw_attr_int(cx, "select_last_index", 0) != 0;
  MlirValue idx = arg_extreme(cx, x, axis, min, last);
  if (mlirValueIsNull(idx)) return lw_error(cx, "internal: the arg-reduction could not be built");
  idx = tw_cast(cx, idx, index_dtype(idx), O2M_DT_INT64);
  if (lw_attr_int(cx, "keepdims", 1)) idx = keep_dim(cx, idx, axis);
  return lw_set_out(cx, 0, idx);
}

/* ---- Softmax, LogSoftmax, Hardmax --------------------------------------------------- */

/* Softmax is exp(x - max) / sum(exp(x - max)) and LogSoftmax (x - max) -
 * log(sum(exp(x - max))), along one axis (opset 13 on, default -1). */
static o2m_status lower_softmax(lw_ctx *cx, int log) {
  o2m_status s = check_input(cx, F, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int axis = 0;
  if ((s = node_axis(cx, tw_rank(x), -1, &axis))) return s;
  if (has_no_elements(x)) return lw_set_out(cx, 0, x);
  o2m_dtype in_dt = lw_in_type(cx, 0)->elem, dt = compute_dtype(in_dt, 0);
  x = tw_cast(cx, x, in_dt, dt);
  MlirValue shifted = tw_binary(cx, "tosa.sub", x, tw_reduce(cx, "tosa.reduce_max", x, axis));
  MlirValue e = tw_unary(cx, "tosa.exp", shifted);
  MlirValue sum = tw_reduce(cx, "tosa.reduce_sum", e, axis);
  MlirValue y = log ? tw_binary(cx, "tosa.sub", shifted, tw_unary(cx, "tosa.log", sum)) : tw_fdiv(cx, e, sum);
  y = tw_cast(cx, y, dt, in_dt);
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: the softmax could not be built");
  return lw_set_out(cx, 0, y);
}

o2m_status tw_lower_softmax(lw_ctx *cx) { return lower_softmax(cx, 0); }
o2m_status tw_lower_log_softmax(lw_ctx *cx) { return lower_softmax(cx, 1); }

/* 1 at the first max along the axis, 0 elsewhere. */
o2m_status tw_lower_hardmax(lw_ctx *cx) {
  o2m_status s = check_input(cx, F, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int axis = 0, rank = tw_rank(x);
  if ((s = node_axis(cx, rank, -1, &axis))) return s;
  if (has_no_elements(x)) return lw_set_out(cx, 0, x);
  MlirValue idx = keep_dim(cx, argmax_axis(cx, x, axis), axis);
  if (mlirValueIsNull(idx)) return lw_error(cx, "internal: the arg-reduction could not be built");
  MlirValue hit = tw_compare(cx, "tosa.equal", idx, iota_along(cx, rank, axis, tw_size(x, axis)));
  return lw_set_out(cx, 0, tw_select(cx, hit, splat_like(cx, x, 1), splat_like(cx, x, 0)));
}

/* ---- CumSum, CumProd ------------------------------------------------------------------------- */

/* x moved `by` places along axis, the first `by` filled with `fill`. */
static MlirValue shifted_in(lw_ctx *cx, MlirValue x, int axis, int64_t by, double fill) {
  int64_t sizes[TW_MAX_RANK];
  int rank = sizes_with(x, axis, by, sizes);
  MlirValue zeros = filled(cx, tw_tensor(cx, tw_elem(x), rank, sizes), fill);
  return concat_axis(cx, zeros, tw_slice_axis(cx, x, axis, 0, tw_size(x, axis) - by), axis);
}

/* A log-step scan: after step s, element i holds the sum (CumProd: the
 * product) of the 2^s elements ending at i. */
o2m_status tw_lower_cumsum(lw_ctx *cx) {
  o2m_status s = check_input(cx, F | I, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int rank = tw_rank(x);
  int64_t *axis_value = NULL;
  if (lw_in_known_ints(cx, 1, &axis_value) != 1) return lw_unsupported(cx, "an axis that is not known at import time");
  int64_t axis = axis_value[0] < 0 ? axis_value[0] + rank : axis_value[0];
  if (axis < 0 || axis >= rank) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)axis_value[0], rank);
  int reverse = lw_attr_int(cx, "reverse", 0) != 0, exclusive = lw_attr_int(cx, "exclusive", 0) != 0;
  int64_t n = tw_size(x, (int)axis);
  if (has_no_elements(x)) return lw_set_out(cx, 0, x);
  o2m_dtype in_dt = lw_in_type(cx, 0)->elem, dt = compute_dtype(in_dt, 1);
  x = tw_cast(cx, x, in_dt, dt);
  if (reverse) x = tw_reverse(cx, x, (int)axis);
  int product = strcmp(cx->node->op_type, "CumProd") == 0;
  double identity = product ? 1 : 0;
  if (exclusive) x = shifted_in(cx, x, (int)axis, 1, identity);
  for (int64_t by = 1; by < n && !mlirValueIsNull(x); by *= 2) {
    MlirValue shifted = shifted_in(cx, x, (int)axis, by, identity);
    x = product ? tw_mul(cx, x, shifted) : tw_binary(cx, "tosa.add", x, shifted);
  }
  if (reverse) x = tw_reverse(cx, x, (int)axis);
  x = tw_cast(cx, x, dt, in_dt);
  if (mlirValueIsNull(x)) return lw_error(cx, "internal: the scan could not be built");
  return lw_set_out(cx, 0, x);
}

/* ---- TopK --------------------------------------------------------------------------- */

/* Step j takes the first position of the max among those not taken yet:
 * m = max(select(taken, lowest, v)), then the first untaken position
 * holding m (argmax of a 0/1 i8 mask), whose value is gathered as the sum
 * of x there and zeros elsewhere. Ties go to the lower index, as in the
 * reference; the smallest K take the order reversed (order_reversed) and
 * reverse it back. Floats rank -inf as the lowest finite value (TOSA's
 * reduce_max may start from that, not from -inf; -inf and -FLT_MAX then
 * tie) and do not order NaNs. */
o2m_status tw_lower_topk(lw_ctx *cx) {
  o2m_status s = check_input(cx, F | I, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int axis = 0, rank = tw_rank(x);
  if ((s = node_axis(cx, rank, -1, &axis))) return s;
  int64_t *k_value = NULL;
  if (lw_in_known_ints(cx, 1, &k_value) != 1) return lw_unsupported(cx, "a K that is not known at import time");
  int64_t k = k_value[0], n = tw_size(x, axis);
  if (k < 0 || k > n) return lw_error(cx, "K = %lld is out of range for a dim of %lld", (long long)k, (long long)n);
  if (k == 0 || has_no_elements(x))
    return lw_unsupported(cx, "outputs without elements (TOSA has no such tensors)");
  if (k > MAX_TOPK)
    return lw_unsupported(cx, "K = %lld (TOSA has no sort: TopK is unrolled for K <= %d)", (long long)k, MAX_TOPK);
  int smallest = lw_attr_int(cx, "largest", 1) == 0;
  o2m_dtype in_dt = lw_in_type(cx, 0)->elem, dt = compute_dtype(in_dt, 1);
  MlirValue x_ordered = tw_cast(cx, x, in_dt, dt);
  if (smallest) x_ordered = order_reversed(cx, x_ordered);
  if (mlirValueIsNull(x_ordered)) return lw_error(cx, "internal: TopK could not be built");
  MlirValue v = x_ordered;
  if (lw_dtype_is_float(dt)) v = tw_binary(cx, "tosa.maximum", v, splat_like(cx, v, -3.4028234663852886e38));
  MlirType i8 = mlirIntegerTypeGet(cx->mc, 8);
  MlirValue lowest = splat_like(cx, v, -INFINITY), zero = splat_like(cx, v, 0), iota = iota_along(cx, rank, axis, n);
  MlirValue taken = filled(cx, tw_with_elem(cx, v, mlirIntegerTypeGet(cx->mc, 1)), 0);
  MlirValue values = no_value, indices = no_value;
  for (int64_t j = 0; j < k; j++) {
    MlirValue m = tw_reduce(cx, "tosa.reduce_max", tw_select(cx, taken, lowest, v), axis);
    MlirValue free = tw_unary(cx, "tosa.logical_not", taken);
    MlirValue candidate = tw_binary(cx, "tosa.logical_and", free, tw_compare(cx, "tosa.equal", v, m));
    MlirValue mask = lw_op1(cx, "tosa.cast", 1, &candidate, tw_with_elem(cx, candidate, i8), NULL);
    MlirValue idx = keep_dim(cx, argmax_axis(cx, mask, axis), axis);
    MlirValue hit = tw_compare(cx, "tosa.equal", idx, iota);
    taken = tw_binary(cx, "tosa.logical_or", taken, hit);
    MlirValue value = tw_reduce(cx, "tosa.reduce_sum", tw_select(cx, hit, x_ordered, zero), axis);
    values = j ? concat_axis(cx, values, value, axis) : value;
    indices = j ? concat_axis(cx, indices, idx, axis) : idx;
    if (mlirValueIsNull(values) || mlirValueIsNull(indices)) return lw_error(cx, "internal: TopK could not be built");
  }
  if (smallest) values = order_reversed(cx, values);
  values = tw_cast(cx, values, dt, in_dt);
  s = lw_set_out(cx, 0, values);
  if (!s && lw_out_present(cx, 1)) s = lw_set_out(cx, 1, tw_cast(cx, indices, O2M_DT_INT32, O2M_DT_INT64));
  return s;
}
