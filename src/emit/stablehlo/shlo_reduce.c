/* shlo_reduce.c - StableHLO lowerings of the reduce family (rows in
 * shlo_reduce.def): ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/
 * LogSumExp, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax (opset-13
 * semantics: one axis), CumSum/CumProd and TopK.
 *
 * A Reduce* op is one table row: an op applied to each element before the
 * stablehlo.reduce, its reducer and init value, and an op applied after.
 * f16/bf16 compute in f32. A reduction over no elements gives the init
 * value (then the post op: ReduceMean 0/0 = NaN, ReduceLogSum log 0).
 * Axes known at import reduce directly; axes that are a runtime input
 * (1-D, static length) reduce every dim where a runtime mask says so,
 * keeping static shapes (the reduced value broadcast back), and cut the
 * result to its runtime shape with a dynamic_pad of negative high padding.
 *
 * ArgMax/ArgMin are a two-operand reduce over (value, iota index) whose
 * reducer keeps the better pair: NaN beats every number (numpy's argmax),
 * ties go to the lower index (the higher with select_last_index). TopK is
 * a stable stablehlo.sort of (value, iota index) then a slice: ties keep
 * the lower index first, NaNs sort last; a runtime K cuts with a
 * dynamic_pad. CumSum/CumProd are a reduce_window of the whole axis,
 * padded before it (after it with reverse), of the input shifted by one
 * (a pad with a negative edge) when exclusive; a runtime axis computes the
 * scan along every axis and selects. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "emit/stablehlo/shlo_kit.h"

enum { F = 1, I = 2, U = 4, B = 8 }; /* dtype classes */

static const MlirValue no_value = {NULL};

static int dtype_class(o2m_dtype d) {
  if (d == O2M_DT_BOOL) return B;
  if (lw_dtype_is_float(d)) return F;
  return lw_dtype_is_unsigned(d) ? U : I;
}

/* sh_check_node, input 0's dtype in `classes`, its rank at least
 * min_rank. */
static o2m_status check_input(lw_ctx *cx, int classes, int min_rank) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  o2m_dtype d = lw_in_type(cx, 0)->elem;
  if (!(dtype_class(d) & classes))
    return lw_unsupported(cx, "no StableHLO lowering for %s inputs", o2m_dtype_name(d));
  if (mlirValueIsNull(lw_in(cx, 0))) return lw_unsupported(cx, "input 0 is missing");
  if (sh_rank(lw_in(cx, 0)) < min_rank)
    return lw_unsupported(cx, "an input of rank %d", sh_rank(lw_in(cx, 0)));
  return O2M_OK;
}

/* The axis attribute (default dflt) normalized for rank. */
static o2m_status node_axis(lw_ctx *cx, int rank, int64_t dflt, int *axis) {
  int64_t a = lw_attr_int(cx, "axis", dflt);
  *axis = sh_axis(a, rank);
  if (*axis < 0) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)a, rank);
  return O2M_OK;
}

/* ---- element values ------------------------------------------------------------ */

/* The lowest and highest values of an element type (floats: infinities). */
static double lowest_of(MlirType e) {
  if (mlirTypeIsAFloat(e)) return -INFINITY;
  unsigned w = mlirIntegerTypeGetWidth(e);
  if (w == 1 || mlirIntegerTypeIsUnsigned(e)) return 0;
  return -ldexp(1.0, (int)w - 1);
}

static double highest_of(MlirType e) {
  if (mlirTypeIsAFloat(e)) return INFINITY;
  unsigned w = mlirIntegerTypeGetWidth(e);
  if (w == 1) return 1;
  return mlirIntegerTypeIsUnsigned(e) ? ldexp(1.0, (int)w) - 1 : ldexp(1.0, (int)w - 1) - 1;
}

static MlirValue like(lw_ctx *cx, MlirValue x, double v) { return sh_scalar(cx, sh_elem(x), v); }

/* The element type computed in: f32 for f16/bf16. */
static MlirType compute_elem(lw_ctx *cx, MlirType e) {
  if (mlirTypeIsAF16(e) || mlirTypeIsABF16(e)) return mlirF32TypeGet(cx->mc);
  return e;
}

/* ---- shapes ------------------------------------------------------------------- */

/* The sizes of v without the dims where drop[k]; returns their count. */
static int kept_sizes(MlirValue v, const unsigned char *drop, int64_t *sizes) {
  int m = 0;
  for (int k = 0; k < sh_rank(v); k++)
    if (!drop[k]) sizes[m++] = sh_size(v, k);
  return m;
}

/* r (v reduced over the dims where drop[k], removed) broadcast back to the
 * shape of v. */
static MlirValue expand_back(lw_ctx *cx, MlirValue r, MlirValue v, const unsigned char *drop) {
  if (mlirValueIsNull(r)) return r;
  int64_t dims[SH_MAX_RANK];
  int m = 0;
  for (int k = 0; k < sh_rank(v); k++)
    if (!drop[k]) dims[m++] = k;
  MlirType t = sh_with_elem(cx, v, sh_elem(r));
  return sh_broadcast_in_dim(cx, r, t, sh_is_static(v) ? no_value : sh_shape_of(cx, v), dims);
}

/* stablehlo.iota of elem along dim, in the shape of x (dynamic_iota when
 * x has dynamic dims). */
static MlirValue iota_like(lw_ctx *cx, MlirValue x, MlirType elem, int dim) {
  MlirType t = sh_with_elem(cx, x, elem);
  if (sh_is_static(x)) return sh_iota(cx, t, dim);
  MlirValue shape = sh_shape_of(cx, x);
  return sh_op(cx, "stablehlo.dynamic_iota", 1, &shape, t, "iota_dimension = %d : i64", dim);
}

/* v reshaped to `sizes` (-1: dynamic) whose dims come from v's, or are 1:
 * from[k] the dim of v giving result dim k (-1: size 1). */
static MlirValue reshape_to(lw_ctx *cx, MlirValue v, int rank, const int64_t *sizes,
                            const int *from) {
  int dynamic = 0;
  for (int k = 0; k < rank; k++) dynamic |= sizes[k] < 0;
  if (!dynamic) return sh_reshape(cx, v, rank, sizes);
  MlirValue dims[SH_MAX_RANK];
  for (int k = 0; k < rank; k++)
    dims[k] = from[k] < 0 ? sh_scalar(cx, sh_i64(cx), 1) : sh_dim(cx, v, from[k]);
  return sh_reshape_dynamic(cx, v, sh_shape_from_dims(cx, rank, dims),
                            sh_tensor(cx, sh_elem(v), rank, sizes));
}

/* v with dim `axis` cut to its first `len` entries (len a 0-d i64 value;
 * `size` its value when known, else -1): a dynamic_pad with a negative
 * high edge. */
static MlirValue cut_axis(lw_ctx *cx, MlirValue v, int axis, MlirValue len, int64_t size) {
  int rank = sh_rank(v);
  MlirValue zero = sh_scalar(cx, sh_i64(cx), 0), dims[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) dims[k] = zero;
  dims[axis] = sh_binary(cx, "stablehlo.subtract", len, sh_dim(cx, v, axis));
  MlirValue high = sh_shape_from_dims(cx, rank, dims);
  for (int k = 0; k < rank; k++) dims[k] = zero;
  MlirValue none = sh_shape_from_dims(cx, rank, dims);
  int64_t sizes[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) sizes[k] = k == axis ? size : sh_size(v, k);
  MlirValue ops[5] = {v, like(cx, v, 0), none, high, none};
  return sh_op(cx, "stablehlo.dynamic_pad", 5, ops, sh_tensor(cx, sh_elem(v), rank, sizes), NULL);
}

/* A 0-d i64 value from a runtime integer input of one element. */
static MlirValue runtime_scalar(lw_ctx *cx, int i) {
  MlirValue v = lw_in(cx, i);
  if (mlirValueIsNull(v) || !sh_is_static(v)) return no_value;
  int64_t n = 1;
  for (int k = 0; k < sh_rank(v); k++) n *= sh_size(v, k);
  if (n != 1) return no_value;
  return sh_convert(cx, sh_reshape(cx, v, 0, NULL), sh_i64(cx));
}

/* a normalized for rank (a + rank where negative). */
static MlirValue normalized_axis(lw_ctx *cx, MlirValue a, int rank) {
  MlirValue negative = sh_compare(cx, "LT", a, like(cx, a, 0));
  return sh_select(cx, negative, sh_binary(cx, "stablehlo.add", a, like(cx, a, rank)), a);
}

/* ---- regions ------------------------------------------------------------------ */

/* The ops of a region body go to `body` while building it. */
typedef struct body_scope {
  MlirBlock saved;
} body_scope;

static MlirBlock body_enter(lw_ctx *cx, body_scope *s, MlirOperation op, int n,
                            const MlirType *types) {
  MlirBlock b = sh_region_block(cx, op, 0, n, types);
  s->saved = cx->block;
  cx->block = b;
  return b;
}

static void body_leave(lw_ctx *cx, body_scope *s, int n, const MlirValue *results) {
  lw_op(cx, "stablehlo.return", n, results, 0, NULL, NULL, 0);
  cx->block = s->saved;
}

/* x != x (floats), or no value for other types. */
static MlirValue is_nan(lw_ctx *cx, MlirValue x) {
  return sh_elem_is_float(sh_elem(x)) ? sh_compare(cx, "NE", x, x) : no_value;
}

static MlirValue logical_and(lw_ctx *cx, MlirValue a, MlirValue b) {
  return sh_binary(cx, "stablehlo.and", a, b);
}
static MlirValue logical_or(lw_ctx *cx, MlirValue a, MlirValue b) {
  return sh_binary(cx, "stablehlo.or", a, b);
}
static MlirValue logical_not(lw_ctx *cx, MlirValue a) { return sh_unary(cx, "stablehlo.not", a); }

/* ---- Reduce* ------------------------------------------------------------------- */

enum { PRE_NONE, PRE_ABS, PRE_SQUARE, PRE_EXP_SHIFTED };
enum { POST_NONE, POST_MEAN, POST_SQRT, POST_LOG };
enum { INIT_ZERO, INIT_ONE, INIT_LOWEST, INIT_HIGHEST };

typedef struct reduce_row {
  const char *onnx;
  const char *body, *body_bool; /* the reducer; of booleans (NULL: none) */
  int init, pre, post, classes;
} reduce_row;

/* ReduceLogSumExp is log(sum(exp(x - m))) + m with m the max of x (0 where
 * it is not finite), which neither overflows nor loses infinities. */
static const reduce_row reduce_rows[] = {
    {"ReduceSum", "stablehlo.add", NULL, INIT_ZERO, PRE_NONE, POST_NONE, F | I | U},
    {"ReduceMean", "stablehlo.add", NULL, INIT_ZERO, PRE_NONE, POST_MEAN, F | I | U},
    {"ReduceMax", "stablehlo.maximum", "stablehlo.or", INIT_LOWEST, PRE_NONE, POST_NONE,
     F | I | U | B},
    {"ReduceMin", "stablehlo.minimum", "stablehlo.and", INIT_HIGHEST, PRE_NONE, POST_NONE,
     F | I | U | B},
    {"ReduceProd", "stablehlo.multiply", NULL, INIT_ONE, PRE_NONE, POST_NONE, F | I | U},
    {"ReduceL1", "stablehlo.add", NULL, INIT_ZERO, PRE_ABS, POST_NONE, F | I | U},
    {"ReduceL2", "stablehlo.add", NULL, INIT_ZERO, PRE_SQUARE, POST_SQRT, F},
    {"ReduceSumSquare", "stablehlo.add", NULL, INIT_ZERO, PRE_SQUARE, POST_NONE, F | I | U},
    {"ReduceLogSum", "stablehlo.add", NULL, INIT_ZERO, PRE_NONE, POST_LOG, F},
    {"ReduceLogSumExp", "stablehlo.add", NULL, INIT_ZERO, PRE_EXP_SHIFTED, POST_LOG, F},
};

static double init_value(int init, MlirType elem) {
  switch (init) {
  case INIT_ONE: return 1;
  case INIT_LOWEST: return lowest_of(elem);
  case INIT_HIGHEST: return highest_of(elem);
  default: return 0;
  }
}

/* How a reduction is done: over the dims known at import (`reduced`), or
 * over those a runtime mask selects (mask[k]: a 0-d i1, null where the dim
 * cannot be reduced). */
typedef struct reduction {
  int runtime;
  unsigned char reduced[SH_MAX_RANK];
  MlirValue mask[SH_MAX_RANK];
} reduction;

/* op (with its init) of x over the reduced dims. Known dims: removed.
 * Runtime dims: kept, each of size max(n, 1), the reduced value broadcast
 * along it where its mask is set (x unchanged, a zero-size dim padded to
 * 1, where not). */
static MlirValue reduce_by(lw_ctx *cx, const reduction *rd, MlirValue x, const char *op,
                           double init) {
  MlirValue init_v = like(cx, x, init);
  if (!rd->runtime) {
    int64_t dims[SH_MAX_RANK];
    int n = 0;
    for (int k = 0; k < sh_rank(x); k++)
      if (rd->reduced[k]) dims[n++] = k;
    return n ? sh_reduce(cx, x, init_v, op, n, dims) : x;
  }
  for (int k = 0; k < sh_rank(x) && !mlirValueIsNull(x); k++) {
    if (mlirValueIsNull(rd->mask[k])) continue;
    int64_t dim = k;
    unsigned char drop[SH_MAX_RANK] = {0};
    drop[k] = 1;
    MlirValue r = sh_reduce(cx, x, init_v, op, 1, &dim);
    if (sh_size(x, k) == 0) { /* pad the dim to 1 (the value there is cut away at the end) */
      int64_t lo[SH_MAX_RANK] = {0}, hi[SH_MAX_RANK] = {0}, in[SH_MAX_RANK] = {0},
              sizes[SH_MAX_RANK];
      char a[256], b[256], c[256];
      hi[k] = 1;
      for (int j = 0; j < sh_rank(x); j++) sizes[j] = j == k ? 1 : sh_size(x, j);
      MlirValue ops[2] = {x, init_v};
      x = sh_op(cx, "stablehlo.pad", 2, ops, sh_tensor(cx, sh_elem(x), sh_rank(x), sizes),
                "edge_padding_low = %s, edge_padding_high = %s, interior_padding = %s",
                sh_array(a, sizeof(a), sh_rank(x), lo), sh_array(b, sizeof(b), sh_rank(x), hi),
                sh_array(c, sizeof(c), sh_rank(x), in));
    }
    x = sh_select(cx, rd->mask[k], expand_back(cx, r, x, drop), x);
  }
  return x;
}

/* The number of reduced elements as a 0-d value of elem. */
static MlirValue reduced_count(lw_ctx *cx, const reduction *rd, MlirValue x, MlirType elem) {
  MlirValue count = sh_scalar(cx, sh_i64(cx), 1), one = count;
  for (int k = 0; k < sh_rank(x); k++) {
    int runtime = rd->runtime && !mlirValueIsNull(rd->mask[k]);
    if (!runtime && !(!rd->runtime && rd->reduced[k])) continue;
    MlirValue n = sh_dim(cx, x, k);
    if (runtime) n = sh_select(cx, rd->mask[k], n, one);
    count = sh_binary(cx, "stablehlo.multiply", count, n);
  }
  return sh_convert(cx, count, elem);
}

/* The reduction of input 0 as axes (input 1) and noop_with_empty_axes say. */
static o2m_status reduction_of(lw_ctx *cx, int rank, reduction *rd) {
  memset(rd, 0, sizeof(*rd));
  int noop = lw_attr_int(cx, "noop_with_empty_axes", 0) != 0;
  int64_t *axes = NULL, n = 0;
  if (lw_in_present(cx, 1)) {
    MlirValue a = lw_in(cx, 1);
    n = lw_in_known_ints(cx, 1, &axes);
    if (n < 0 && !mlirValueIsNull(a) && sh_rank(a) == 1 && sh_size(a, 0) == 0) n = 0;
    if (n < 0) {
      if (mlirValueIsNull(a) || sh_rank(a) != 1 || sh_size(a, 0) < 0)
        return lw_unsupported(cx, "runtime axes that are not a 1-D tensor of static length");
      /* mask[k]: some axis is k (scalar ops, which StableHLO's folder folds
       * when the axes are constants) */
      rd->runtime = 1;
      a = sh_convert(cx, a, sh_i64(cx));
      for (int64_t j = 0; j < sh_size(a, 0); j++) {
        MlirValue aj =
            normalized_axis(cx, sh_reshape(cx, sh_slice_axis(cx, a, 0, j, 1), 0, NULL), rank);
        for (int k = 0; k < rank; k++) {
          MlirValue hit = sh_compare(cx, "EQ", aj, sh_scalar(cx, sh_i64(cx), k));
          rd->mask[k] = j ? logical_or(cx, rd->mask[k], hit) : hit;
        }
      }
      return O2M_OK;
    }
  }
  memset(rd->reduced, n == 0 && !noop, (size_t)rank);
  for (int64_t i = 0; i < n; i++) {
    int a = sh_axis(axes[i], rank);
    if (a < 0)
      return lw_error(cx, "axis %lld is out of range for rank %d", (long long)axes[i], rank);
    if (rd->reduced[a]) return lw_error(cx, "axis %lld is repeated", (long long)axes[i]);
    rd->reduced[a] = 1;
  }
  return O2M_OK;
}

/* The max of x over the reduced dims where finite, else 0, in x's shape. */
static MlirValue finite_max(lw_ctx *cx, const reduction *rd, MlirValue x) {
  MlirValue m = reduce_by(cx, rd, x, "stablehlo.maximum", -INFINITY);
  if (!rd->runtime) m = expand_back(cx, m, x, rd->reduced);
  MlirValue zero = like(cx, m, 0);
  MlirValue finite = sh_compare(cx, "EQ", sh_binary(cx, "stablehlo.subtract", m, m), zero);
  return sh_select(cx, finite, m, zero);
}

/* The result of a runtime-mask reduction: each dim cut to 1 where its mask
 * is set, to its size where not; with keepdims=0, the reduced dims
 * dropped: result dim j is the size of the kept dim k that is the
 * (j+1)-th kept one (scalar ops, which StableHLO's folder folds when the
 * axes are constants). */
static MlirValue runtime_result(lw_ctx *cx, const reduction *rd, MlirValue r, MlirValue x,
                                int keep) {
  int rank = sh_rank(x);
  MlirType i64 = sh_i64(cx);
  MlirValue zero = sh_scalar(cx, i64, 0), one = sh_scalar(cx, i64, 1);
  MlirValue high[SH_MAX_RANK], zeros[SH_MAX_RANK], kept_n[SH_MAX_RANK], rank_of[SH_MAX_RANK];
  int64_t sizes[SH_MAX_RANK];
  MlirValue count = zero;
  for (int k = 0; k < rank; k++) {
    MlirValue n = sh_dim(cx, x, k), size = sh_select(cx, rd->mask[k], one, n);
    high[k] = sh_binary(cx, "stablehlo.subtract", size, sh_dim(cx, r, k));
    zeros[k] = zero;
    sizes[k] = sh_size(x, k) == 1 ? 1 : -1;
    kept_n[k] = n;
    count = sh_binary(cx, "stablehlo.add", count, sh_select(cx, rd->mask[k], zero, one));
    rank_of[k] = sh_select(cx, rd->mask[k], zero, count); /* 1 + its place among the kept dims */
  }
  MlirValue none = sh_shape_from_dims(cx, rank, zeros);
  MlirValue ops[5] = {r, like(cx, r, 0), none, sh_shape_from_dims(cx, rank, high), none};
  MlirValue y =
      sh_op(cx, "stablehlo.dynamic_pad", 5, ops, sh_tensor(cx, sh_elem(r), rank, sizes), NULL);
  if (keep || mlirValueIsNull(y)) return y;
  MlirType out = sh_out_type(cx, 0);
  if (mlirTypeIsNull(out)) return no_value;
  int out_rank = (int)mlirShapedTypeGetRank(out);
  MlirValue dims[SH_MAX_RANK];
  for (int j = 0; j < out_rank; j++) {
    int64_t size = mlirShapedTypeIsDynamicDim(out, j) ? -1 : mlirShapedTypeGetDimSize(out, j);
    dims[j] = size >= 0 ? sh_scalar(cx, i64, (double)size) : zero;
    for (int k = 0; size < 0 && k < rank; k++) {
      MlirValue here = sh_compare(cx, "EQ", rank_of[k], sh_scalar(cx, i64, j + 1));
      dims[j] = sh_binary(cx, "stablehlo.add", dims[j], sh_select(cx, here, kept_n[k], zero));
    }
  }
  MlirValue reshape_ops[2] = {y, sh_shape_from_dims(cx, out_rank, dims)};
  return sh_op(cx, "stablehlo.dynamic_reshape", 2, reshape_ops, out, NULL);
}

o2m_status sh_lower_reduce(lw_ctx *cx) {
  const reduce_row *row = NULL;
  for (size_t i = 0; i < sizeof(reduce_rows) / sizeof(reduce_rows[0]); i++)
    if (strcmp(reduce_rows[i].onnx, cx->node->op_type) == 0) row = &reduce_rows[i];
  if (!row) return lw_unsupported(cx, "no StableHLO lowering");
  o2m_status s = check_input(cx, row->classes, 0);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int rank = sh_rank(x), keep = lw_attr_int(cx, "keepdims", 1) != 0;
  reduction rd;
  if ((s = reduction_of(cx, rank, &rd))) return s;
  MlirType in_elem = sh_elem(x), elem = compute_elem(cx, in_elem);
  int is_bool = sh_elem_is_bool(in_elem), empty = 0;
  for (int k = 0; k < rank; k++) empty |= sh_size(x, k) == 0;
  x = sh_convert(cx, x, elem);
  MlirValue shift = no_value;
  switch (row->pre) {
  case PRE_ABS: x = sh_elem_is_unsigned(elem) ? x : sh_unary(cx, "stablehlo.abs", x); break;
  case PRE_SQUARE: x = sh_binary(cx, "stablehlo.multiply", x, x); break;
  case PRE_EXP_SHIFTED:
    if (!empty) shift = finite_max(cx, &rd, x);
    x = mlirValueIsNull(shift)
            ? sh_unary(cx, "stablehlo.exponential", x)
            : sh_unary(cx, "stablehlo.exponential", sh_binary(cx, "stablehlo.subtract", x, shift));
    break;
  default: break;
  }
  MlirValue x_in = lw_in(cx, 0);
  MlirValue r =
      reduce_by(cx, &rd, x, is_bool ? row->body_bool : row->body, init_value(row->init, elem));
  switch (row->post) {
  case POST_MEAN: r = sh_binary(cx, "stablehlo.divide", r, reduced_count(cx, &rd, x, elem)); break;
  case POST_SQRT: r = sh_unary(cx, "stablehlo.sqrt", r); break;
  case POST_LOG: r = sh_unary(cx, "stablehlo.log", r); break;
  default: break;
  }
  if (!mlirValueIsNull(shift)) {
    /* the shift in the result's shape: reduced as max (all equal there) */
    MlirValue m = rd.runtime ? shift : reduce_by(cx, &rd, shift, "stablehlo.maximum", -INFINITY);
    r = sh_binary(cx, "stablehlo.add", r, m);
  }
  r = sh_convert(cx, r, in_elem);
  if (mlirValueIsNull(r)) return lw_error(cx, "internal: the reduction could not be built");
  if (rd.runtime) {
    r = runtime_result(cx, &rd, r, x_in, keep);
    if (mlirValueIsNull(r))
      return lw_error(cx, "internal: the runtime-axes reduction could not be built");
    return lw_set_out(cx, 0, r);
  }
  int64_t sizes[SH_MAX_RANK];
  int from[SH_MAX_RANK], out_rank = 0;
  for (int k = 0; k < rank; k++) {
    if (rd.reduced[k] && !keep) continue;
    sizes[out_rank] = rd.reduced[k] ? 1 : sh_size(x_in, k);
    from[out_rank++] = rd.reduced[k] ? -1 : k;
  }
  /* r has the kept dims in order: the reshape takes dims of x by index */
  if (!sh_is_static(r)) {
    int m = 0, map[SH_MAX_RANK];
    for (int k = 0; k < rank; k++) map[k] = rd.reduced[k] ? -1 : m++;
    for (int k = 0; k < out_rank; k++) from[k] = from[k] < 0 ? -1 : map[from[k]];
  }
  return lw_set_out(cx, 0, reshape_to(cx, r, out_rank, sizes, from));
}

/* ---- ArgMax, ArgMin ------------------------------------------------------------- */

/* The index (i64) of the max (min) along axis, dim removed: a reduce over
 * (x, iota) keeping the better pair; NaN is better than any number; equal
 * values keep the lower index (the higher with `last`). */
static MlirValue arg_reduce(lw_ctx *cx, MlirValue x, int axis, int min, int last) {
  MlirType elem = sh_elem(x), i64 = sh_i64(cx);
  MlirValue idx = iota_like(cx, x, i64, axis);
  MlirValue ops[4] = {x, idx, like(cx, x, min ? highest_of(elem) : lowest_of(elem)),
                      sh_scalar(cx, i64, last ? -1 : 9.3e18)};
  for (int i = 0; i < 4; i++)
    if (mlirValueIsNull(ops[i])) return no_value;
  unsigned char drop[SH_MAX_RANK] = {0};
  drop[axis] = 1;
  int64_t sizes[SH_MAX_RANK];
  int m = kept_sizes(x, drop, sizes);
  MlirType results[2] = {sh_tensor(cx, elem, m, sizes), sh_tensor(cx, i64, m, sizes)};
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "dimensions = array<i64: %d>", axis);
  MlirOperation op = lw_op(cx, "stablehlo.reduce", 4, ops, 2, results, attrs, 1);
  if (mlirOperationIsNull(op)) return no_value;
  MlirType sv = sh_tensor(cx, elem, 0, NULL), si = sh_tensor(cx, i64, 0, NULL);
  MlirType args[4] = {sv, si, sv, si};
  body_scope bs;
  MlirBlock b = body_enter(cx, &bs, op, 4, args);
  MlirValue av = mlirBlockGetArgument(b, 0), ai = mlirBlockGetArgument(b, 1);
  MlirValue bv = mlirBlockGetArgument(b, 2), bi = mlirBlockGetArgument(b, 3);
  MlirValue better = sh_compare(cx, min ? "LT" : "GT", av, bv),
            equal = sh_compare(cx, "EQ", av, bv);
  MlirValue an = is_nan(cx, av);
  if (!mlirValueIsNull(an)) {
    MlirValue bn = is_nan(cx, bv);
    better = logical_or(cx, better, logical_and(cx, an, logical_not(cx, bn)));
    equal = logical_or(cx, equal, logical_and(cx, an, bn));
  }
  MlirValue pick =
      logical_or(cx, better, logical_and(cx, equal, sh_compare(cx, last ? "GT" : "LT", ai, bi)));
  MlirValue res[2] = {sh_select(cx, pick, av, bv), sh_select(cx, pick, ai, bi)};
  body_leave(cx, &bs, 2, res);
  return mlirOperationGetResult(op, 1);
}

/* idx (axis removed) with a size-1 dim inserted at axis. */
static MlirValue keep_axis(lw_ctx *cx, MlirValue idx, MlirValue x, int axis) {
  int64_t sizes[SH_MAX_RANK];
  int from[SH_MAX_RANK], rank = sh_rank(x);
  for (int k = 0; k < rank; k++) {
    sizes[k] = k == axis ? 1 : sh_size(x, k);
    from[k] = k == axis ? -1 : k < axis ? k : k - 1;
  }
  return reshape_to(cx, idx, rank, sizes, from);
}

o2m_status sh_lower_arg_extreme(lw_ctx *cx) {
  o2m_status s = check_input(cx, F | I | U | B, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int axis = 0;
  if ((s = node_axis(cx, sh_rank(x), 0, &axis))) return s;
  int min = strcmp(cx->node->op_type, "ArgMin") == 0,
      last = lw_attr_int(cx, "select_last_index", 0) != 0;
  MlirValue idx = arg_reduce(cx, x, axis, min, last);
  if (!mlirValueIsNull(idx) && lw_attr_int(cx, "keepdims", 1)) idx = keep_axis(cx, idx, x, axis);
  if (mlirValueIsNull(idx)) return lw_error(cx, "internal: the arg-reduction could not be built");
  return lw_set_out(cx, 0, idx);
}

/* ---- Softmax, LogSoftmax, Hardmax --------------------------------------------- */

/* Softmax is exp(x - max) / sum(exp(x - max)) and LogSoftmax (x - max) -
 * log(sum(exp(x - max))), along one axis (opset 13 on, default -1). */
static o2m_status lower_softmax(lw_ctx *cx, int log) {
  o2m_status s = check_input(cx, F, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int axis = 0;
  if ((s = node_axis(cx, sh_rank(x), -1, &axis))) return s;
  MlirType in_elem = sh_elem(x);
  x = sh_convert(cx, x, compute_elem(cx, in_elem));
  reduction rd = {0};
  rd.reduced[axis] = 1;
  MlirValue m =
      expand_back(cx, reduce_by(cx, &rd, x, "stablehlo.maximum", -INFINITY), x, rd.reduced);
  MlirValue shifted = sh_binary(cx, "stablehlo.subtract", x, m);
  MlirValue e = sh_unary(cx, "stablehlo.exponential", shifted);
  MlirValue sum = expand_back(cx, reduce_by(cx, &rd, e, "stablehlo.add", 0), x, rd.reduced);
  MlirValue y =
      log ? sh_binary(cx, "stablehlo.subtract", shifted, sh_unary(cx, "stablehlo.log", sum))
          : sh_binary(cx, "stablehlo.divide", e, sum);
  y = sh_convert(cx, y, in_elem);
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: the softmax could not be built");
  return lw_set_out(cx, 0, y);
}

o2m_status sh_lower_softmax(lw_ctx *cx) { return lower_softmax(cx, 0); }
o2m_status sh_lower_log_softmax(lw_ctx *cx) { return lower_softmax(cx, 1); }

/* 1 at the first max along the axis (numpy's argmax: a NaN first), 0
 * elsewhere. */
o2m_status sh_lower_hardmax(lw_ctx *cx) {
  o2m_status s = check_input(cx, F, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int axis = 0;
  if ((s = node_axis(cx, sh_rank(x), -1, &axis))) return s;
  unsigned char drop[SH_MAX_RANK] = {0};
  drop[axis] = 1;
  MlirValue idx = expand_back(cx, arg_reduce(cx, x, axis, 0, 0), x, drop);
  MlirValue hit = sh_compare(cx, "EQ", idx, iota_like(cx, x, sh_i64(cx), axis));
  MlirValue y =
      sh_select(cx, hit, sh_fill_like(cx, sh_elem(x), 1, x), sh_fill_like(cx, sh_elem(x), 0, x));
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: the hardmax could not be built");
  return lw_set_out(cx, 0, y);
}

/* ---- CumSum, CumProd ------------------------------------------------------------ */

/* stablehlo.pad of x with v: low/high edges along axis (may be negative). */
static MlirValue pad_axis(lw_ctx *cx, MlirValue x, MlirValue v, int axis, int64_t low,
                          int64_t high) {
  int rank = sh_rank(x);
  int64_t lo[SH_MAX_RANK] = {0}, hi[SH_MAX_RANK] = {0}, in[SH_MAX_RANK] = {0}, sizes[SH_MAX_RANK];
  lo[axis] = low;
  hi[axis] = high;
  for (int k = 0; k < rank; k++) sizes[k] = k == axis ? sh_size(x, k) + low + high : sh_size(x, k);
  char a[256], b[256], c[256];
  MlirValue ops[2] = {x, v};
  return sh_op(cx, "stablehlo.pad", 2, ops, sh_tensor(cx, sh_elem(x), rank, sizes),
               "edge_padding_low = %s, edge_padding_high = %s, interior_padding = %s",
               sh_array(a, sizeof(a), rank, lo), sh_array(b, sizeof(b), rank, hi),
               sh_array(c, sizeof(c), rank, in));
}

/* The inclusive scan of x along axis (from the end with `reverse`): a
 * reduce_window of the whole axis over x padded by n - 1 identities. */
static MlirValue scan_axis(lw_ctx *cx, MlirValue x, int axis, const char *op, double identity,
                           int reverse, int exclusive) {
  int rank = sh_rank(x);
  int64_t n = sh_size(x, axis);
  if (n <= 0) return x;
  MlirValue id = like(cx, x, identity);
  if (exclusive) x = pad_axis(cx, x, id, axis, reverse ? -1 : 1, reverse ? 1 : -1);
  int64_t window[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) window[k] = k == axis ? n : 1;
  char w[256], pad[1024];
  size_t len = (size_t)snprintf(pad, sizeof(pad), "dense<[");
  for (int k = 0; k < rank && len < sizeof(pad); k++)
    len += (size_t)snprintf(pad + len, sizeof(pad) - len, "%s[%lld, %lld]", k ? ", " : "",
                            (long long)(k == axis && !reverse ? n - 1 : 0),
                            (long long)(k == axis && reverse ? n - 1 : 0));
  if (len < sizeof(pad)) snprintf(pad + len, sizeof(pad) - len, "]> : tensor<%dx2xi64>", rank);
  char attrs[1400];
  snprintf(attrs, sizeof(attrs), "window_dimensions = %s, padding = %s",
           sh_array(w, sizeof(w), rank, window), pad);
  MlirValue ops[2] = {x, id};
  if (mlirValueIsNull(x) || mlirValueIsNull(id)) return no_value;
  MlirType type = mlirValueGetType(x);
  MlirOperation rw = lw_op(cx, "stablehlo.reduce_window", 2, ops, 1, &type, attrs, 1);
  if (mlirOperationIsNull(rw)) return no_value;
  MlirType s = sh_tensor(cx, sh_elem(x), 0, NULL), args[2] = {s, s};
  body_scope bs;
  MlirBlock b = body_enter(cx, &bs, rw, 2, args);
  MlirValue in[2] = {mlirBlockGetArgument(b, 0), mlirBlockGetArgument(b, 1)};
  MlirValue r = lw_op1(cx, op, 2, in, s, NULL);
  body_leave(cx, &bs, 1, &r);
  return mlirOperationGetResult(rw, 0);
}

o2m_status sh_lower_cumulative(lw_ctx *cx) {
  o2m_status s = check_input(cx, F | I | U, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (!sh_is_static(x)) return lw_unsupported(cx, "an input with dynamic dims");
  int rank = sh_rank(x), product = strcmp(cx->node->op_type, "CumProd") == 0;
  int reverse = lw_attr_int(cx, "reverse", 0) != 0,
      exclusive = lw_attr_int(cx, "exclusive", 0) != 0;
  const char *op = product ? "stablehlo.multiply" : "stablehlo.add";
  double identity = product ? 1 : 0;
  MlirType in_elem = sh_elem(x);
  x = sh_convert(cx, x, compute_elem(cx, in_elem));
  int64_t *axis_value = NULL;
  MlirValue y;
  if (lw_in_known_ints(cx, 1, &axis_value) == 1) {
    int axis = sh_axis(axis_value[0], rank);
    if (axis < 0)
      return lw_error(cx, "axis %lld is out of range for rank %d", (long long)axis_value[0], rank);
    y = scan_axis(cx, x, axis, op, identity, reverse, exclusive);
  } else {
    /* a runtime axis: the scan along every axis, the one named selected */
    MlirValue a = runtime_scalar(cx, 1);
    if (mlirValueIsNull(a))
      return lw_unsupported(cx, "a runtime axis that is not one static element");
    a = normalized_axis(cx, a, rank);
    y = scan_axis(cx, x, 0, op, identity, reverse, exclusive);
    for (int k = 1; k < rank; k++)
      y = sh_select(cx, sh_compare(cx, "EQ", a, sh_scalar(cx, sh_i64(cx), k)),
                    scan_axis(cx, x, k, op, identity, reverse, exclusive), y);
  }
  y = sh_convert(cx, y, in_elem);
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: the scan could not be built");
  return lw_set_out(cx, 0, y);
}

/* ---- TopK ------------------------------------------------------------------------ */

/* A stable sort of (x, iota) along axis: the largest (smallest) first,
 * NaNs last; ties keep the lower index first. */
o2m_status sh_lower_topk(lw_ctx *cx) {
  o2m_status s = check_input(cx, F | I | U, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int axis = 0;
  if ((s = node_axis(cx, sh_rank(x), -1, &axis))) return s;
  int smallest = lw_attr_int(cx, "largest", 1) == 0;
  int64_t *k_value = NULL, n = sh_size(x, axis);
  MlirValue k_runtime = no_value;
  int64_t k = -1;
  if (lw_in_known_ints(cx, 1, &k_value) == 1) {
    k = k_value[0];
    if (k < 0 || (n >= 0 && k > n))
      return lw_error(cx, "K = %lld is out of range for a dim of %lld", (long long)k, (long long)n);
  } else if (mlirValueIsNull(k_runtime = runtime_scalar(cx, 1))) {
    return lw_unsupported(cx, "a runtime K that is not one static element");
  }
  MlirType i64 = sh_i64(cx), elem = sh_elem(x);
  MlirValue ops[2] = {x, iota_like(cx, x, i64, axis)};
  if (mlirValueIsNull(ops[1])) return lw_error(cx, "internal: TopK's indices");
  MlirType types[2] = {mlirValueGetType(x), mlirValueGetType(ops[1])};
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "dimension = %d : i64, is_stable = true", axis);
  MlirOperation sort = lw_op(cx, "stablehlo.sort", 2, ops, 2, types, attrs, 1);
  if (mlirOperationIsNull(sort)) return lw_error(cx, "internal: TopK's sort");
  MlirType sv = sh_tensor(cx, elem, 0, NULL), si = sh_tensor(cx, i64, 0, NULL);
  MlirType args[4] = {sv, sv, si, si};
  body_scope bs;
  MlirBlock b = body_enter(cx, &bs, sort, 4, args);
  MlirValue lhs = mlirBlockGetArgument(b, 0), rhs = mlirBlockGetArgument(b, 1);
  MlirValue before = sh_compare(cx, smallest ? "LT" : "GT", lhs, rhs), ln = is_nan(cx, lhs);
  if (!mlirValueIsNull(ln))
    before = logical_or(cx, before, logical_and(cx, logical_not(cx, ln), is_nan(cx, rhs)));
  body_leave(cx, &bs, 1, &before);
  MlirValue values = mlirOperationGetResult(sort, 0), indices = mlirOperationGetResult(sort, 1);
  if (k >= 0 && sh_is_static(x)) {
    values = sh_slice_axis(cx, values, axis, 0, k);
    indices = sh_slice_axis(cx, indices, axis, 0, k);
  } else {
    if (k >= 0) k_runtime = sh_scalar(cx, i64, (double)k);
    values = cut_axis(cx, values, axis, k_runtime, k);
    indices = cut_axis(cx, indices, axis, k_runtime, k);
  }
  if (mlirValueIsNull(values) || mlirValueIsNull(indices))
    return lw_error(cx, "internal: TopK could not be built");
  s = lw_set_out(cx, 0, values);
  if (!s && lw_out_present(cx, 1)) s = lw_set_out(cx, 1, indices);
  return s;
}
