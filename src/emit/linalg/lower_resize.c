/* lower_resize.c - Linalg lowering of Resize (row in lower_nn.def), in its
 * core form Resize(X, roi?, scales?, sizes?) (src/transform/
 * normalize_resize.c rewrites Upsample and the old Resize versions to it):
 * modes nearest (every nearest_mode), linear (n-linear over the resized
 * axes) and cubic (cubic_coeff_a, exclude_outside), antialias for linear
 * and cubic, every coordinate_transformation_mode (tf_crop_and_resize with
 * roi and extrapolation_value), the axes attribute and
 * keep_aspect_ratio_policy, with scales or sizes.
 *
 * Resize is separable, and the sampling along a resized axis depends only
 * on the output position along it: for every resized axis the lowering
 * computes at import, in double precision as ONNX's reference does
 * (onnx/reference/ops/op_resize.py), the source index of each tap (edge
 * clamped; -1 where tf_crop_and_resize extrapolates) and its weight, and
 * emits them as small constant tables [out, taps]. The output is a
 * linalg.generic over (output dims..., one tap loop per resized axis),
 * the last output dim innermost: its body reads X with tensor.extract at
 * the tap indices (linalg.index for the axes that are not resized) and
 * accumulates weight * value. A weighted resize of several axes is one
 * such generic per axis, the last axis first (emit_separable), as the
 * reference interpolates axis by axis. Nearest
 * sampling has one tap and no accumulation (any dtype, exact). The
 * weighted modes accumulate in f32 (f64 for double and integers);
 * f16/bf16 convert back, integers round half to even and saturate, as
 * the reference.
 *
 * Scales, sizes and roi must be known at import (constants; `run`/`test`
 * specialize small parameter inputs). An axis whose input dim is dynamic
 * (resized by scales) cannot have tables: its taps are computed in the body
 * from linalg.index in f64 scalar arithmetic, with the same formulas, and
 * its output size is floor(scale * dim) at run time. An axis with scale
 * exactly 1 (and no roi crop) is not resized and may be dynamic; sizes and
 * antialiased downscales need static dims.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_window.h"
#include "infer/infer.h"
#include "transform/resize_sampling.h"

enum { RS_MAX_RANK = 16 };

/* Sampling along one axis: taps per output position, as tables. */
typedef struct rs_axis {
  int resized;
  int64_t in, out, n;
  double scale;
  double roi[2];
  int roi_f32;  /* roi arithmetic in float32, as numpy does for a float32 roi */
  int64_t *idx; /* out * n source indices, -1: extrapolated */
  double *w;    /* out * n weights */
  /* A dynamic input dim: the taps are computed in the body (f64) from
   * these (i64, f64 values created before the generic). */
  int dynamic;
  MlirValue in_i64, in_f, out_f, ow, out_ix, scale_v;
} rs_axis;

typedef struct rs_plan {
  MlirValue x;
  o2m_dtype dtype, acc; /* the output's, the sums' */
  o2m_dtype x_dtype;    /* x's: dtype, or acc for a separable pass's sums */
  int r, m, weighted, extrap, n_ins;
  int axis_of[RS_MAX_RANK]; /* j-th resized axis */
  double extrapolation;
  rs_attrs at;
  int idx_arg[RS_MAX_RANK], w_arg[RS_MAX_RANK]; /* per resized axis; -1: none */
  /* the loop of each dim of the generic: output dim k, then tap j at r + j */
  int loop_of[2 * RS_MAX_RANK];
  rs_axis a[RS_MAX_RANK];
} rs_plan;

/* ---- the sampling tables (ONNX reference semantics) ------------------------- */

/* The source coordinate of output position y (resize_sampling.c). */
static double source_coord(const rs_attrs *at, const rs_axis *ax, double y, int *extrap) {
  rs_geometry g = {ax->resized, ax->in, ax->out, ax->scale, {ax->roi[0], ax->roi[1]}, ax->roi_f32};
  return rs_source(at, &g, y, extrap);
}

/* Fills ax->idx/w/n (scratch memory); nearest keeps only the chosen tap
 * unless `weighted`. -1 when the taps are too many. */
static int build_axis(lw_ctx *cx, const rs_attrs *at, rs_axis *ax, int weighted) {
  double c[RS_MAX_TAPS];
  int64_t n = rs_coeffs(at, 1.0, ax->scale, c);
  if (n < 0)
    return -1;
  int64_t keep = at->mode == RS_NEAREST && !weighted ? 1 : n;
  size_t cells = (size_t)(ax->out > 0 ? ax->out : 1) * (size_t)keep;
  ax->idx = o2m_arena_array(&cx->scratch, cells, sizeof(int64_t));
  ax->w = o2m_arena_array(&cx->scratch, cells, sizeof(double));
  if (!ax->idx || !ax->w)
    return -1;
  ax->n = keep;
  for (int64_t o = 0; o < ax->out; o++) {
    int extrap;
    double x = source_coord(at, ax, (double)o, &extrap), xi = floor(x);
    double ratio = x == xi ? 1.0 : x - xi;
    if (rs_coeffs(at, ratio, ax->scale, c) != n)
      return -1;
    int64_t at_i[RS_MAX_TAPS];
    double sum = rs_taps(at, x, n, ax->in, at_i, c);
    if (at->exclude)
      for (int64_t j = 0; j < n; j++)
        c[j] /= sum == 0 ? 1.0 : sum;
    int64_t *ri = ax->idx + o * keep;
    double *rw = ax->w + o * keep;
    if (keep == 1) {
      int64_t pick = c[0] != 0 ? 0 : 1;
      ri[0] = at_i[pick], rw[0] = 1.0;
    } else {
      for (int64_t j = 0; j < n; j++)
        ri[j] = at_i[j], rw[j] = c[j];
    }
    if (extrap)
      for (int64_t j = 0; j < keep; j++)
        ri[j] = -1, rw[j] = j == 0;
  }
  return 0;
}

/* A constant tensor<out x n x elem> (or tensor<out x elem> when !two_d) of
 * the table, with arith.constant. */
static MlirValue const_table(lw_ctx *cx, const rs_axis *ax, int weights, const char *elem,
                             int two_d) {
  size_t cap = 64 + (size_t)(ax->out * ax->n) * 28 + (size_t)ax->out * 4, len = 0;
  char *text = malloc(cap);
  if (!text) {
    lw_error(cx, "out of memory");
    return (MlirValue){NULL};
  }
  len += (size_t)snprintf(text + len, cap - len, "value = dense<[");
  for (int64_t o = 0; o < ax->out; o++) {
    if (o)
      len += (size_t)snprintf(text + len, cap - len, ", ");
    if (two_d)
      len += (size_t)snprintf(text + len, cap - len, "[");
    for (int64_t j = 0; j < ax->n; j++) {
      int64_t k = o * ax->n + j;
      if (j)
        len += (size_t)snprintf(text + len, cap - len, ", ");
      if (weights)
        len += (size_t)snprintf(text + len, cap - len, "%.17e", ax->w[k]);
      else
        len += (size_t)snprintf(text + len, cap - len, "%lld", (long long)ax->idx[k]);
    }
    if (two_d)
      len += (size_t)snprintf(text + len, cap - len, "]");
  }
  char type[96];
  if (two_d)
    snprintf(type, sizeof(type), "tensor<%lldx%lldx%s>", (long long)ax->out, (long long)ax->n,
             elem);
  else
    snprintf(type, sizeof(type), "tensor<%lldx%s>", (long long)ax->out, elem);
  snprintf(text + len, cap - len, "]> : %s", type);
  MlirValue v = lw_op1(cx, "arith.constant", 0, NULL, lw_type(cx, type), text);
  free(text);
  return v;
}

/* ---- the generic ------------------------------------------------------------ */

/* ---- taps computed in the body (dynamic input dims) ------------------------ */

static MlirValue f2(lw_ctx *cx, const char *op, MlirValue a, MlirValue b) {
  MlirValue ab[2] = {a, b};
  return lw_op1(cx, op, mlirValueIsNull(b) ? 1 : 2, ab, mlirValueGetType(a), NULL);
}

static MlirValue c64(lw_ctx *cx, double v) { return lw_scalar_const(cx, lw_type(cx, "f64"), v); }

static MlirValue i64_to_f64(lw_ctx *cx, MlirValue v) {
  return lw_op1(cx, "arith.sitofp", 1, &v, lw_type(cx, "f64"), NULL);
}

static MlirValue index_to_f64(lw_ctx *cx, MlirValue v) {
  v = lw_op1(cx, "arith.index_cast", 1, &v, lw_type(cx, "i64"), NULL);
  return i64_to_f64(cx, v);
}

/* The values a dynamic axis needs, before the generic: the input size as
 * i64 and f64, the scale (given, or size / in for sizes), scale * in, and
 * the output size (floor(scale * in) for scales) as index and f64. */
static void dynamic_axis_sizes(lw_ctx *cx, rs_plan *p, int k) {
  rs_axis *ax = &p->a[k];
  MlirValue d = lw_dim(cx, p->x, k);
  ax->in_i64 = lw_op1(cx, "arith.index_cast", 1, &d, lw_type(cx, "i64"), NULL);
  ax->in_f = i64_to_f64(cx, ax->in_i64);
  if (ax->out >= 0) { /* sizes */
    ax->out_f = c64(cx, (double)ax->out);
    ax->scale_v = f2(cx, "arith.divf", ax->out_f, ax->in_f);
    ax->ow = f2(cx, "arith.mulf", ax->scale_v, ax->in_f);
    return;
  }
  ax->scale_v = c64(cx, ax->scale);
  ax->ow = f2(cx, "arith.mulf", ax->scale_v, ax->in_f);
  MlirValue o = lw_op1(cx, "arith.fptosi", 1, &ax->ow, lw_type(cx, "i64"), NULL);
  ax->out_f = i64_to_f64(cx, o);
  ax->out_ix = lw_op1(cx, "arith.index_cast", 1, &o, lw_index_type(cx), NULL);
}

/* The tap of dynamic axis k at the current element (the tap loop `tap`
 * when weighted): its source index (i64, -1 where extrapolated) and its
 * weight (*w, of the accumulator type; untouched when not weighted). */
static void dynamic_tap(lw_ctx *cx, const rs_plan *p, int k, int tap, MlirValue *idx,
                        MlirValue *w) {
  const rs_attrs *at = &p->at;
  const rs_axis *ax = &p->a[k];
  MlirValue y = index_to_f64(cx, lw_loop_index(cx, p->loop_of[k])), in = ax->in_f, x, extrap = {NULL};
  MlirValue one = c64(cx, 1.0), half = c64(cx, 0.5), zero = c64(cx, 0.0);
  MlirValue in1 = f2(cx, "arith.subf", in, one), ow1 = f2(cx, "arith.subf", ax->ow, one);
  MlirValue ow_is_1 = lw_cmpf(cx, LW_F_OEQ, ax->ow, one);
  MlirValue hp =
      f2(cx, "arith.subf", f2(cx, "arith.divf", f2(cx, "arith.addf", y, half), ax->scale_v), half);
  switch (at->coord) {
  case RS_ALIGN_CORNERS:
    x = lw_select(cx, ow_is_1, zero, f2(cx, "arith.divf", f2(cx, "arith.mulf", y, in1), ow1));
    break;
  case RS_ASYMMETRIC:
    x = f2(cx, "arith.divf", y, ax->scale_v);
    break;
  case RS_TF_CROP_AND_RESIZE: {
    /* as numpy: a float32 roi subtracts in float32 */
    MlirValue span = c64(cx, ax->roi_f32 ? (double)((float)ax->roi[1] - (float)ax->roi[0])
                                         : ax->roi[1] - ax->roi[0]);
    MlirValue one_out = f2(cx, "arith.divf", f2(cx, "arith.mulf", span, in1), c64(cx, 2.0));
    MlirValue many =
        f2(cx, "arith.divf", f2(cx, "arith.mulf", f2(cx, "arith.mulf", y, span), in1), ow1);
    MlirValue base = f2(cx, "arith.mulf", c64(cx, ax->roi[0]), in1);
    x = f2(cx, "arith.addf", lw_select(cx, ow_is_1, one_out, many), base);
    extrap = f2(cx, "arith.ori", lw_cmpf(cx, LW_F_OLT, x, zero), lw_cmpf(cx, LW_F_OGT, x, in1));
    break;
  }
  case RS_PYTORCH_HALF_PIXEL:
    x = lw_select(cx, ow_is_1, c64(cx, -0.5), hp);
    break;
  case RS_HALF_PIXEL_SYMMETRIC: {
    MlirValue adjustment = f2(cx, "arith.divf", ax->out_f, ax->ow);
    MlirValue offset = f2(cx, "arith.mulf", f2(cx, "arith.divf", in, c64(cx, 2.0)),
                          f2(cx, "arith.subf", one, adjustment));
    MlirValue q = f2(cx, "arith.divf", f2(cx, "arith.addf", y, half), ax->scale_v);
    x = f2(cx, "arith.subf", f2(cx, "arith.addf", offset, q), half);
    break;
  }
  case RS_HALF_PIXEL:
  default:
    x = hp;
    break;
  }
  MlirValue xi = f2(cx, "math.floor", x, (MlirValue){NULL});
  MlirValue ratio = lw_select(cx, lw_cmpf(cx, LW_F_OEQ, x, xi), one, f2(cx, "arith.subf", x, xi));
  int n = at->mode == RS_CUBIC ? 4 : 2;
  MlirValue xp = f2(cx, "arith.addf", x, c64(cx, n / 2)),
            pp = f2(cx, "math.floor", xp, (MlirValue){NULL});
  MlirValue frac0 = lw_cmpf(cx, LW_F_OEQ, f2(cx, "arith.subf", xp, pp), zero);
  MlirValue start =
      f2(cx, "arith.addf", pp,
         lw_select(cx, frac0, c64(cx, -(n / 2) - n / 2), c64(cx, -(n / 2) + 1 - n / 2)));
  MlirValue c[4];
  if (at->mode == RS_NEAREST) {
    MlirValue ceil_side;
    if (at->nearest == RS_PREFER_FLOOR || at->nearest == RS_PREFER_CEIL)
      ceil_side = lw_cmpf(cx, at->nearest == RS_PREFER_FLOOR ? LW_F_OGT : LW_F_OGE, ratio, half);
    else
      ceil_side = lw_cmpf(cx, at->nearest == RS_CEIL ? LW_F_OLE : LW_F_OGT, zero, one);
    ceil_side = f2(cx, "arith.ori", ceil_side, lw_cmpf(cx, LW_F_OEQ, ratio, one));
    c[0] = lw_select(cx, ceil_side, zero, one), c[1] = lw_select(cx, ceil_side, one, zero);
  } else if (at->mode == RS_LINEAR) {
    c[0] = f2(cx, "arith.subf", one, ratio), c[1] = ratio;
  } else {
    double A = at->a;
    MlirValue q = f2(cx, "arith.subf", one, ratio);
    MlirValue u[4] = {f2(cx, "arith.addf", ratio, one), ratio, q, f2(cx, "arith.addf", q, one)};
    for (int j = 0; j < 4; j++) {
      MlirValue v;
      if (j == 0 || j == 3) { /* ((A*u - 5A)*u + 8A)*u - 4A */
        v = f2(cx, "arith.subf", f2(cx, "arith.mulf", c64(cx, A), u[j]), c64(cx, 5 * A));
        v = f2(cx, "arith.addf", f2(cx, "arith.mulf", v, u[j]), c64(cx, 8 * A));
        v = f2(cx, "arith.subf", f2(cx, "arith.mulf", v, u[j]), c64(cx, 4 * A));
      } else { /* ((A+2)*u - (A+3))*u*u + 1 */
        v = f2(cx, "arith.subf", f2(cx, "arith.mulf", c64(cx, A + 2), u[j]), c64(cx, A + 3));
        v = f2(cx, "arith.addf", f2(cx, "arith.mulf", f2(cx, "arith.mulf", v, u[j]), u[j]), one);
      }
      c[j] = v;
    }
  }
  MlirValue pos;
  if (!p->weighted) {
    pos = f2(cx, "arith.addf", start, c[1]); /* c[1] is 1 on the ceil side */
  } else {
    if (at->exclude) {
      MlirValue sum = zero;
      for (int j = 0; j < n; j++) {
        MlirValue at_j = f2(cx, "arith.addf", start, c64(cx, j));
        MlirValue inside = f2(cx, "arith.andi", lw_cmpf(cx, LW_F_OGE, at_j, zero),
                              lw_cmpf(cx, LW_F_OLT, at_j, in));
        c[j] = lw_select(cx, inside, c[j], zero);
        sum = f2(cx, "arith.addf", sum, c[j]);
      }
      sum = lw_select(cx, lw_cmpf(cx, LW_F_OEQ, sum, zero), one, sum);
      for (int j = 0; j < n; j++)
        c[j] = f2(cx, "arith.divf", c[j], sum);
    }
    MlirValue t = index_to_f64(cx, lw_loop_index(cx, p->loop_of[tap])), wt = c[n - 1];
    for (int j = n - 2; j >= 0; j--)
      wt = lw_select(cx, lw_cmpf(cx, LW_F_OEQ, t, c64(cx, j)), c[j], wt);
    pos = f2(cx, "arith.addf", start, t);
    if (!mlirValueIsNull(extrap))
      wt = lw_select(cx, extrap, lw_select(cx, lw_cmpf(cx, LW_F_OEQ, t, zero), one, zero), wt);
    if (p->acc != O2M_DT_DOUBLE)
      wt = lw_op1(cx, "arith.truncf", 1, &wt, lw_elem_type(cx, p->acc), NULL);
    *w = wt;
  }
  MlirValue i = lw_op1(cx, "arith.fptosi", 1, &pos, lw_type(cx, "i64"), NULL);
  MlirValue i0 = lw_scalar_const(cx, lw_type(cx, "i64"), 0);
  MlirValue last = f2(cx, "arith.subi", ax->in_i64, lw_scalar_const(cx, lw_type(cx, "i64"), 1));
  i = f2(cx, "arith.minsi", f2(cx, "arith.maxsi", i, i0), last);
  if (!mlirValueIsNull(extrap))
    i = lw_select(cx, extrap, lw_scalar_const(cx, lw_type(cx, "i64"), -1), i);
  *idx = i;
}

/* The source indices of the current element: taps of the resized axes
 * (from the tables or computed, clamped above -1), linalg.index elsewhere;
 * w[j]: the weight of resized axis j (weighted); *any_out: an i1 that is set
 * where some axis extrapolates (null when none can). */
static void source_indices(lw_ctx *cx, const rs_plan *p, const MlirValue *args, MlirValue *src,
                           MlirValue *w, MlirValue *any_out) {
  MlirValue zero = lw_scalar_const(cx, lw_type(cx, "i64"), 0), any = {NULL};
  int j = 0;
  for (int k = 0; k < p->r; k++) {
    if (!p->a[k].resized) {
      src[k] = lw_loop_index(cx, p->loop_of[k]);
      continue;
    }
    MlirValue t;
    if (p->a[k].dynamic) {
      dynamic_tap(cx, p, k, p->r + j, &t, &w[j]);
    } else {
      t = args[p->idx_arg[j]];
      if (p->weighted)
        w[j] = args[p->w_arg[j]];
    }
    j++;
    if (p->extrap) {
      MlirValue neg = lw_cmpi(cx, LW_I_SLT, t, zero);
      MlirValue both[2] = {any, neg};
      any = mlirValueIsNull(any) ? neg : lw_op1(cx, "arith.ori", 2, both, lw_type(cx, "i1"), NULL);
      MlirValue mx[2] = {t, zero};
      t = lw_op1(cx, "arith.maxsi", 2, mx, lw_type(cx, "i64"), NULL);
    }
    src[k] = lw_op1(cx, "arith.index_cast", 1, &t, lw_index_type(cx), NULL);
  }
  *any_out = any;
}

static o2m_status nearest_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const rs_plan *p = user;
  MlirValue src[RS_MAX_RANK], w[RS_MAX_RANK], any;
  source_indices(cx, p, args, src, w, &any);
  MlirValue v = lw_extract(cx, p->x, src);
  if (!mlirValueIsNull(any))
    v = lw_select(cx, any, lw_const_scalar(cx, p->dtype, p->extrapolation), v);
  yields[0] = v;
  return lw_value_status(cx, v);
}

static o2m_status weighted_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const rs_plan *p = user;
  MlirValue src[RS_MAX_RANK], w[RS_MAX_RANK], any;
  source_indices(cx, p, args, src, w, &any);
  MlirValue v = lw_scalar_cast(cx, lw_extract(cx, p->x, src), p->x_dtype, p->acc);
  if (mlirValueIsNull(v))
    return lw_value_status(cx, v);
  if (!mlirValueIsNull(any))
    v = lw_select(cx, any, lw_const_scalar(cx, p->acc, p->extrapolation), v);
  MlirValue wt = w[0];
  for (int j = 1; j < p->m; j++)
    wt = lw_scalar_op2(cx, "Mul", p->acc, wt, w[j]);
  yields[0] =
      lw_scalar_op2(cx, "Add", p->acc, args[p->n_ins], lw_scalar_op2(cx, "Mul", p->acc, wt, v));
  return lw_value_status(cx, yields[0]);
}

/* Integer results of the weighted modes: round half to even, saturate. */
static o2m_status round_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const rs_plan *p = user;
  int bits = o2m_dtype_bits(p->dtype), sgn = lw_dtype_is_signed(p->dtype);
  double lo = sgn ? -ldexp(1.0, bits - 1) : 0,
         hi = sgn ? ldexp(1.0, bits - 1) - 1 : ldexp(1.0, bits) - 1;
  MlirValue v = lw_scalar_op1(cx, "Round", p->acc, args[0]);
  v = lw_scalar_op2(cx, "Max", p->acc, v, lw_const_scalar(cx, p->acc, lo));
  v = lw_scalar_op2(cx, "Min", p->acc, v, lw_const_scalar(cx, p->acc, hi));
  *result = mlirValueIsNull(v) ? v : lw_scalar_cast(cx, v, p->acc, p->dtype);
  return lw_value_status(cx, *result);
}

/* The resize of p->x as one generic; into *partial (in the accumulator's
 * type) when given, else converted and set as the node's output. */
static o2m_status emit_resize(lw_ctx *cx, rs_plan *p, MlirValue *partial) {
  int r = p->r, m = p->m, n_loops = r + (p->weighted ? m : 0);
  lw_ix dims[RS_MAX_RANK];
  memset(dims, 0, sizeof(dims));
  for (int k = 0; k < r; k++) {
    if (p->a[k].dynamic)
      dynamic_axis_sizes(cx, p, k);
    dims[k] = !p->a[k].resized                     ? lw_ix_dim(cx, p->x, k)
              : p->a[k].dynamic && p->a[k].out < 0 ? lw_ix_v(p->a[k].out_ix)
                                                   : lw_ix_c(p->a[k].out);
  }
  MlirType out_type;
  if (partial) { /* a separable pass: the dims resized so far, the others x's (all static) */
    int64_t shape[RS_MAX_RANK];
    for (int k = 0; k < r; k++)
      shape[k] = p->a[k].resized ? p->a[k].out : mlirShapedTypeGetDimSize(mlirValueGetType(p->x), k);
    out_type = mlirRankedTensorTypeGet(r, shape, lw_elem_type(cx, p->acc), mlirAttributeGetNull());
  } else {
    out_type = lw_out_type_with(cx, 0, r, dims);
  }
  if (mlirTypeIsNull(out_type))
    return lw_unsupported(cx, "the output type is not known");
  for (int k = 0; k < r; k++)
    if (p->a[k].resized && !p->a[k].dynamic && !mlirShapedTypeIsDynamicDim(out_type, k) &&
        mlirShapedTypeGetDimSize(out_type, k) != p->a[k].out)
      return lw_error(cx, "output dim %d is %lld, inferred %lld", k, (long long)p->a[k].out,
                      (long long)mlirShapedTypeGetDimSize(out_type, k));
  /* Loops in the order of the dims, but for a weighted resize of rank 2
   * or more the last output dim goes inside the tap loops: its table
   * lookups then change in the innermost loop only, and the row's
   * outputs accumulate each tap in turn along contiguous memory (a
   * bilinear upsample of a [1, 21, 32, 32] map to 256x256 took 4.5 ms with
   * the taps innermost). Every output still sums its taps in the same
   * order. */
  for (int l = 0; l < n_loops; l++)
    p->loop_of[l] = l;
  if (p->weighted && r >= 2)
    for (int l = r - 1; l < n_loops; l++)
      p->loop_of[l] = l == r - 1 ? n_loops - 1 : l - 1;
  char iters[2 * RS_MAX_RANK + 1];
  for (int l = 0; l < n_loops; l++)
    iters[p->loop_of[l]] = l < r ? 'p' : 'r';
  iters[n_loops] = 0;
  MlirValue ins[2 * RS_MAX_RANK];
  MlirAttribute maps[2 * RS_MAX_RANK];
  const char *acc_elem = p->acc == O2M_DT_DOUBLE ? "f64" : "f32";
  int n_ins = 0;
  for (int j = 0; j < m; j++) {
    const rs_axis *ax = &p->a[p->axis_of[j]];
    int exprs[2] = {p->loop_of[p->axis_of[j]], p->loop_of[r + j]};
    p->idx_arg[j] = p->w_arg[j] = -1;
    if (ax->dynamic) {
      if (!p->weighted)
        continue;
      /* binds the tap loop */
      int64_t taps = p->at.mode == RS_CUBIC ? 4 : 2;
      ins[n_ins] = lw_empty(cx, lw_tensor_type_of(cx, O2M_DT_INT8, 1, &taps), NULL);
      maps[n_ins++] = lw_affine_map(cx, n_loops, 1, exprs + 1);
      continue;
    }
    MlirAttribute map = lw_affine_map(cx, n_loops, p->weighted ? 2 : 1, exprs);
    p->idx_arg[j] = n_ins;
    ins[n_ins] = const_table(cx, ax, 0, "i64", p->weighted);
    maps[n_ins++] = map;
    if (p->weighted) {
      p->w_arg[j] = n_ins;
      ins[n_ins] = const_table(cx, ax, 1, acc_elem, 1);
      maps[n_ins++] = map;
    }
    if (mlirValueIsNull(ins[n_ins - 1]) || mlirValueIsNull(ins[p->idx_arg[j]]))
      return lw_value_status(cx, (MlirValue){NULL});
  }
  p->n_ins = n_ins;
  int out_exprs[RS_MAX_RANK];
  for (int k = 0; k < r; k++)
    out_exprs[k] = p->loop_of[k];
  MlirAttribute out_map = lw_affine_map(cx, n_loops, r, out_exprs);
  MlirValue init, result;
  if (!p->weighted) {
    init = lw_empty_ix(cx, out_type, dims);
  } else {
    int64_t shape[RS_MAX_RANK];
    MlirValue dyn[RS_MAX_RANK];
    for (int k = 0; k < r; k++) {
      shape[k] = mlirShapedTypeGetDimSize(out_type, k);
      dyn[k] =
          mlirShapedTypeIsDynamicDim(out_type, k) ? lw_ix_value(cx, dims[k]) : (MlirValue){NULL};
    }
    MlirType acc_type =
        mlirRankedTensorTypeGet(r, shape, lw_elem_type(cx, p->acc), mlirAttributeGetNull());
    init = lw_filled(cx, acc_type, dyn, lw_const_scalar(cx, p->acc, 0.0));
  }
  lw_generic_spec spec = {n_loops, iters,    n_ins,
                          1,       ins,      maps,
                          &init,   &out_map, p->weighted ? weighted_body : nearest_body,
                          p};
  o2m_status s = lw_generic(cx, &spec, &result);
  if (s)
    return s;
  if (partial) {
    *partial = result;
    return O2M_OK;
  }
  if (p->weighted && p->acc != p->dtype) {
    if (lw_dtype_is_float(p->dtype))
      s = lw_convert(cx, result, p->acc, p->dtype, &result);
    else
      s = lw_broadcast(cx, 1, &result, NULL, lw_elem_type(cx, p->dtype), round_body, p, &result);
    if (s)
      return s;
  }
  return lw_set_out(cx, 0, result);
}

/* A weighted resize of several axes as one pass per axis, the last axis
 * first, each summing its own taps over the previous pass's result (kept
 * in the accumulator's type; the last pass converts): 2 + 2 taps an output
 * instead of 2 x 2 for bilinear, and every pass but the last reads its
 * taps' rows whole. ONNX's reference interpolates axis by axis too, so the
 * sums are the reference's (each pass rounds to the accumulator). Not for
 * tf_crop_and_resize's extrapolation (one pass: an extrapolated position
 * of any axis gives the value) nor dynamic axes (taps from the body). */
static o2m_status emit_separable(lw_ctx *cx, const rs_plan *p) {
  rs_plan *pass = malloc(sizeof(*pass));
  if (!pass)
    return lw_error(cx, "out of memory");
  MlirValue x = p->x;
  o2m_status s = O2M_OK;
  for (int j = p->m - 1; j >= 0 && !s; j--) {
    *pass = *p;
    int k = p->axis_of[j];
    for (int i = 0; i < p->r; i++)
      pass->a[i].resized = i == k;
    pass->m = 1, pass->axis_of[0] = k;
    pass->x = x;
    if (j != p->m - 1)
      pass->x_dtype = p->acc; /* reads the previous pass's sums */
    s = emit_resize(cx, pass, j > 0 ? &x : NULL);
  }
  free(pass);
  return s;
}

/* ---- attributes and parameters ---------------------------------------------- */

static int pick(const char *s, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  return -1;
}

static int isclose(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

o2m_status lw_lower_resize(lw_ctx *cx) {
  rs_plan p;
  memset(&p, 0, sizeof(p));
  p.x = lw_in(cx, 0);
  if (mlirValueIsNull(p.x))
    return lw_error(cx, "input X is missing");
  p.r = lw_rank(p.x);
  p.dtype = p.x_dtype = lw_in_type(cx, 0)->elem;
  if (p.r > RS_MAX_RANK)
    return lw_unsupported(cx, "rank above %d", RS_MAX_RANK);
  rs_attrs at = {0};
  const char *mode = lw_attr_string(cx, "mode", "nearest");
  const char *coord = lw_attr_string(cx, "coordinate_transformation_mode", "half_pixel");
  const char *nearest = lw_attr_string(cx, "nearest_mode", "round_prefer_floor");
  const char *policy = lw_attr_string(cx, "keep_aspect_ratio_policy", "stretch");
  if (!mode || !coord || !nearest || !policy)
    return lw_error(cx, "out of memory");
  at.mode = strcmp(mode, "nearest") == 0  ? RS_NEAREST
            : strcmp(mode, "linear") == 0 ? RS_LINEAR
            : strcmp(mode, "cubic") == 0  ? RS_CUBIC
                                          : (rs_mode)-1;
  if ((int)at.mode < 0)
    return lw_error(cx, "unknown mode '%s'", mode);
  int c = pick(coord, rs_coords, RS_COORD_COUNT), nm = pick(nearest, rs_rounds, RS_ROUND_COUNT);
  if (c < 0)
    return lw_unsupported(cx, "coordinate_transformation_mode '%s'", coord);
  if (nm < 0)
    return lw_error(cx, "unknown nearest_mode '%s'", nearest);
  at.coord = (rs_coord)c, at.nearest = (rs_round)nm;
  at.antialias = at.mode != RS_NEAREST && lw_attr_int(cx, "antialias", 0) != 0;
  at.exclude = lw_attr_int(cx, "exclude_outside", 0) != 0;
  at.a = lw_attr_float(cx, "cubic_coeff_a", -0.75f);
  p.extrapolation = lw_attr_float(cx, "extrapolation_value", 0.0f);
  int stretch = strcmp(policy, "stretch") == 0, not_larger = strcmp(policy, "not_larger") == 0;
  if (!stretch && !not_larger && strcmp(policy, "not_smaller") != 0)
    return lw_error(cx, "unknown keep_aspect_ratio_policy '%s'", policy);

  /* axes */
  int axes[RS_MAX_RANK], n_axes = p.r, seen[RS_MAX_RANK] = {0};
  const int64_t *av;
  int na = lw_attr_ints(cx, "axes", &av);
  if (na >= 0) {
    if (na > p.r)
      return lw_error(cx, "%d axes for rank %d", na, p.r);
    n_axes = na;
    for (int i = 0; i < na; i++) {
      int k = lw_norm_axis(cx, av[i], p.r);
      if (k < 0)
        return O2M_ERR_INVALID;
      if (seen[k]++)
        return lw_error(cx, "axis %d repeats", k);
      axes[i] = k;
    }
  } else {
    for (int k = 0; k < p.r; k++)
      axes[k] = k;
  }

  /* scales, sizes, roi */
  for (int k = 0; k < p.r; k++) {
    rs_axis *ax = &p.a[k];
    ax->in = lw_static_dim(p.x, k), ax->out = ax->in, ax->scale = 1.0;
    ax->roi[0] = 0.0, ax->roi[1] = 1.0;
  }
  int has_scales = lw_in_present(cx, 2), has_sizes = lw_in_present(cx, 3);
  if (has_scales == has_sizes)
    return lw_error(cx, "exactly one of scales and sizes must be given");
  if (has_scales) {
    const o2m_tensor *t = lw_in_known(cx, 2);
    if (!t)
      return lw_unsupported(cx, "scales are not known at import (not a constant)");
    if (t->count != n_axes || !o2m_dtype_is_float(t->dtype))
      return lw_error(cx, "scales has %lld entries for %d axes", (long long)t->count, n_axes);
    for (int i = 0; i < n_axes; i++) {
      double s = o2m_tensor_get_float(t, i);
      if (!(s > 0))
        return lw_error(cx, "scale %g is not positive", s);
      p.a[axes[i]].scale = s;
    }
  }
  int64_t *sizes = NULL;
  if (has_sizes) {
    if (lw_in_known_ints(cx, 3, &sizes) != n_axes)
      return lw_unsupported(cx, "sizes are not known at import (not a constant of %d entries)",
                            n_axes);
  }
  if (at.coord == RS_TF_CROP_AND_RESIZE) {
    const o2m_tensor *t = lw_in_present(cx, 1) ? lw_in_known(cx, 1) : NULL;
    if (!lw_in_present(cx, 1))
      return lw_error(cx, "tf_crop_and_resize needs roi");
    if (!t)
      return lw_unsupported(cx, "roi is not known at import (not a constant)");
    if (t->count != 2 * n_axes || !o2m_dtype_is_float(t->dtype))
      return lw_error(cx, "roi has %lld entries for %d axes", (long long)t->count, n_axes);
    for (int i = 0; i < n_axes; i++) {
      rs_axis *ax = &p.a[axes[i]];
      ax->roi[0] = o2m_tensor_get_float(t, i), ax->roi[1] = o2m_tensor_get_float(t, n_axes + i);
      ax->roi_f32 = t->dtype == O2M_DT_FLOAT;
    }
  }
  for (int i = 0; i < n_axes; i++) {
    rs_axis *ax = &p.a[axes[i]];
    int trivial = !has_sizes && ax->scale == 1.0 && ax->roi[0] == 0.0 && ax->roi[1] == 1.0;
    if (ax->in < 0 && !trivial) {
      /* taps computed at run time; antialias is plain sampling when upscaling */
      if (has_sizes ? !stretch || at.antialias : at.antialias && ax->scale < 1)
        return lw_unsupported(cx, "dim %d of X is dynamic and resized by %s", axes[i],
                              !has_sizes     ? "an antialiased downscale"
                              : at.antialias ? "antialiased sizes"
                                             : "sizes with keep_aspect_ratio_policy");
      ax->dynamic = 1;
    }
    if (ax->in == 0)
      return lw_unsupported(cx, "dim %d of X is empty", axes[i]);
  }
  if (has_sizes) {
    for (int i = 0; i < n_axes; i++) {
      rs_axis *ax = &p.a[axes[i]];
      if (sizes[i] < 0)
        return lw_error(cx, "size %lld is negative", (long long)sizes[i]);
      ax->out = sizes[i];
      ax->scale = ax->dynamic ? NAN : (double)sizes[i] / (double)ax->in; /* NAN: at run time */
    }
    if (!stretch) {
      double s = p.a[axes[0]].scale;
      for (int i = 1; i < n_axes; i++) {
        double t = p.a[axes[i]].scale;
        s = not_larger ? fmin(s, t) : fmax(s, t);
      }
      for (int i = 0; i < n_axes; i++) {
        rs_axis *ax = &p.a[axes[i]];
        ax->scale = s, ax->out = (int64_t)(s * (double)ax->in + 0.5);
      }
    }
  } else {
    for (int i = 0; i < n_axes; i++) {
      rs_axis *ax = &p.a[axes[i]];
      if (ax->in >= 0)
        ax->out = (int64_t)(ax->scale * (double)ax->in);
    }
  }

  /* which axes resample */
  int any_big = 0;
  for (int i = 0; i < n_axes; i++) {
    int k = axes[i];
    rs_axis *ax = &p.a[k];
    int identity = isclose(ax->scale, 1.0) && ax->out == ax->in &&
                   (at.coord != RS_TF_CROP_AND_RESIZE ||
                    (fabs(ax->roi[0]) <= 1e-9 && isclose(ax->roi[1], 1.0)));
    if (identity)
      continue;
    ax->resized = 1;
    p.extrap |= at.coord == RS_TF_CROP_AND_RESIZE;
  }
  for (int k = 0; k < p.r; k++)
    if (p.a[k].resized)
      p.axis_of[p.m++] = k;
  if (p.m == 0)
    return lw_set_out(cx, 0, p.x);
  for (int j = 0; j < p.m; j++)
    if (p.a[p.axis_of[j]].out == 0) { /* an empty output: nothing to sample */
      lw_ix dims[RS_MAX_RANK];
      for (int k = 0; k < p.r; k++)
        dims[k] = p.a[k].resized ? lw_ix_c(p.a[k].out) : lw_ix_dim(cx, p.x, k);
      MlirType type = lw_out_type_with(cx, 0, p.r, dims);
      if (mlirTypeIsNull(type))
        return lw_unsupported(cx, "the output type is not known");
      return lw_set_out(cx, 0, lw_empty_ix(cx, type, dims));
    }
  p.weighted = at.mode != RS_NEAREST || at.exclude;
  /* integers accumulate in f64 so that halves round as the reference's */
  p.acc = p.dtype == O2M_DT_DOUBLE || !lw_dtype_is_float(p.dtype) ? O2M_DT_DOUBLE : O2M_DT_FLOAT;
  if (p.weighted && !lw_dtype_is_float(p.dtype) &&
      !(lw_dtype_is_signed(p.dtype) || (lw_dtype_is_unsigned(p.dtype) && p.dtype != O2M_DT_BOOL)))
    return lw_unsupported(cx, "%s resize of %s", mode, o2m_dtype_name(p.dtype));
  if (p.weighted && (p.dtype == O2M_DT_INT64 || p.dtype == O2M_DT_UINT64))
    return lw_unsupported(cx, "%s resize of %s", mode, o2m_dtype_name(p.dtype));
  p.at = at;
  for (int j = 0; j < p.m; j++) {
    rs_axis *ax = &p.a[p.axis_of[j]];
    if (ax->dynamic)
      continue;
    if (build_axis(cx, &at, ax, p.weighted))
      return lw_unsupported(cx, "antialiased scale %g of axis %d needs over %d taps", ax->scale,
                            p.axis_of[j], RS_MAX_TAPS);
    any_big |= ax->out * ax->n > (1 << 22);
  }
  if (any_big)
    return lw_unsupported(cx, "sampling tables over 4M entries");
  int separable = p.weighted && !p.extrap && p.m > 1;
  for (int j = 0; j < p.m; j++)
    separable &= !p.a[p.axis_of[j]].dynamic;
  return separable ? emit_separable(cx, &p) : emit_resize(cx, &p, NULL);
}
