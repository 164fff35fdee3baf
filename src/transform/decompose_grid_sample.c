/* decompose_grid_sample.c - GridSample (opsets 16, 20, 22) in elementwise
 * ops and GatherElements, for targets that do not lower it (the Linalg
 * target lowers it itself, lower_grid_sample.c, with the same formulas):
 * modes nearest, linear and cubic, padding zeros, border and reflection,
 * align_corners, any number of spatial axes; static spatial dims of X and
 * of the grid.
 *
 * Per spatial axis, the grid coordinate (the grid's last dim lists the
 * axes innermost first) is denormalized, rounded half to even for
 * nearest, padded (border: clamped when outside; reflection: reflected by
 * the near border until inside) and split into 1, 2 or 4 taps with their
 * weights (cubic: A = -0.75). Every combination of taps reads X through a
 * GatherElements on X flattened to [N, C, spatial] at the taps' flat
 * index (clamped; zeros padding drops taps outside X) and adds weight *
 * value. As ONNX's reference: f32 arithmetic, the sum cast to X's dtype.
 */
#include <string.h>

#include "transform/decompose_kit.h"

enum { MAX_SPATIAL = 3, MAX_COMBOS = 64 };

typedef enum gs_mode { GS_NEAREST, GS_LINEAR, GS_CUBIC } gs_mode;
typedef enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_pad;

typedef struct gs_axis {
  o2m_value *idx[4], *valid[4], *w[4]; /* per tap: clamped int64 index, bool, f32 weight */
} gs_axis;

static o2m_value *f32(o2m_rewriter *rw, double v) { return xk_scalar(rw, O2M_DT_FLOAT, v); }
static o2m_value *i64(o2m_rewriter *rw, double v) { return xk_scalar(rw, O2M_DT_INT64, v); }

/* v reflected by the near border of [lo, hi] until inside. */
static o2m_value *reflect(o2m_rewriter *rw, o2m_value *v, double lo, double hi) {
  o2m_value *below = xk_op2(rw, "Less", v, f32(rw, lo)), *above = xk_op2(rw, "Greater", v, f32(rw, hi));
  o2m_value *dx = xk_where(rw, below, xk_op2(rw, "Sub", f32(rw, lo), v), xk_op2(rw, "Sub", v, f32(rw, hi)));
  o2m_value *n = xk_cast(rw, xk_op2(rw, "Div", dx, f32(rw, hi - lo)), O2M_DT_INT64);
  o2m_value *r = xk_op2(rw, "Sub", dx, xk_op2(rw, "Mul", xk_cast(rw, n, O2M_DT_FLOAT), f32(rw, hi - lo)));
  o2m_value *even = xk_op2(rw, "Equal", xk_op2(rw, "BitwiseAnd", n, i64(rw, 1)), i64(rw, 0));
  o2m_value *lo_r = xk_op2(rw, "Add", f32(rw, lo), r), *hi_r = xk_op2(rw, "Sub", f32(rw, hi), r);
  return xk_where(rw, below, xk_where(rw, even, lo_r, hi_r), xk_where(rw, above, xk_where(rw, even, hi_r, lo_r), v));
}

/* The taps of one axis of size d from the grid coordinate g (f32). */
static void axis_taps(o2m_rewriter *rw, gs_mode mode, gs_pad pad, int align, int taps, int64_t d, o2m_value *g,
                      gs_axis *t) {
  double dd = (double)d;
  o2m_value *gp1 = xk_op2(rw, "Add", g, f32(rw, 1));
  o2m_value *x = align ? xk_op2(rw, "Mul", xk_op2(rw, "Div", gp1, f32(rw, 2)), f32(rw, dd - 1))
                       : xk_op2(rw, "Div", xk_op2(rw, "Sub", xk_op2(rw, "Mul", gp1, f32(rw, dd)), f32(rw, 1)), f32(rw, 2));
  if (mode == GS_NEAREST) x = xk_op1(rw, "Round", x);
  double lo = align ? 0 : -0.5, hi = align ? dd - 1 : dd - 0.5;
  if (pad == GS_BORDER) {
    o2m_value *out = xk_op2(rw, "Or", xk_op2(rw, "Less", x, f32(rw, lo)), xk_op2(rw, "Greater", x, f32(rw, hi)));
    x = xk_where(rw, out, xk_op2(rw, "Min", xk_op2(rw, "Max", x, f32(rw, 0)), f32(rw, dd - 1)), x);
  } else if (pad == GS_REFLECTION) {
    x = reflect(rw, x, lo, hi);
  }
  o2m_value *base = mode == GS_NEAREST ? x : xk_op1(rw, "Floor", x), *frac = xk_op2(rw, "Sub", x, base);
  int first = mode == GS_CUBIC ? -1 : 0;
  for (int j = 0; j < taps; j++) {
    o2m_value *pos = j + first ? xk_op2(rw, "Add", base, f32(rw, j + first)) : base;
    if (pad == GS_REFLECTION) pos = reflect(rw, pos, lo, hi);
    o2m_value *at = xk_cast(rw, pos, O2M_DT_INT64);
    t->valid[j] = pad == GS_ZEROS ? xk_op2(rw, "And", xk_op2(rw, "GreaterOrEqual", at, i64(rw, 0)),
                                           xk_op2(rw, "Less", at, i64(rw, dd)))
                                  : NULL;
    t->idx[j] = xk_op2(rw, "Min", xk_op2(rw, "Max", at, i64(rw, 0)), i64(rw, dd - 1));
  }
  if (mode == GS_LINEAR) {
    t->w[0] = xk_op2(rw, "Sub", f32(rw, 1), frac), t->w[1] = frac;
  } else if (mode == GS_CUBIC) {
    const double A = -0.75;
    o2m_value *us[4] = {xk_op2(rw, "Add", frac, f32(rw, 1)), frac, xk_op2(rw, "Sub", f32(rw, 1), frac),
                        xk_op2(rw, "Sub", f32(rw, 2), frac)};
    for (int j = 0; j < 4; j++) { /* far taps: ((A u - 5A) u + 8A) u - 4A; near: ((A+2) u - (A+3)) u u + 1 */
      o2m_value *u = us[j], *v;
      if (j == 0 || j == 3) {
        v = xk_op2(rw, "Add", xk_op2(rw, "Mul", xk_op2(rw, "Sub", xk_op2(rw, "Mul", f32(rw, A), u), f32(rw, 5 * A)), u),
                   f32(rw, 8 * A));
        t->w[j] = xk_op2(rw, "Sub", xk_op2(rw, "Mul", v, u), f32(rw, 4 * A));
      } else {
        v = xk_op2(rw, "Sub", xk_op2(rw, "Mul", f32(rw, A + 2), u), f32(rw, A + 3));
        t->w[j] = xk_op2(rw, "Add", xk_op2(rw, "Mul", xk_op2(rw, "Mul", v, u), u), f32(rw, 1));
      }
    }
  }
}

static int pick(const char *s, size_t len, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) return i;
  return -1;
}

o2m_status o2m_decompose_grid_sample(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *grid = o2m_rw_in(rw, 1);
  int rank = xk_rank(x), r = rank - 2;
  int64_t xd[MAX_SPATIAL + 2], gd[MAX_SPATIAL + 3];
  if (r < 1 || r > MAX_SPATIAL || xk_rank(grid) != rank || !XK_STATIC_DIMS(x, xd) || !XK_STATIC_DIMS(grid, gd))
    return o2m_rw_unsupported(rw, "X and the grid need static dims (1 to %d spatial axes)", MAX_SPATIAL);
  static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear", "bicubic"};
  static const char *const pads[] = {"zeros", "border", "reflection"};
  const o2m_attr *ma = o2m_rw_attr(rw, "mode"), *pa = o2m_rw_attr(rw, "padding_mode");
  int m = ma ? pick((const char *)ma->s.ptr, ma->s.len, modes, 5) : 1;
  int pd = pa ? pick((const char *)pa->s.ptr, pa->s.len, pads, 3) : 0;
  if (m < 0 || pd < 0) return o2m_rw_error(rw, "unknown mode or padding_mode");
  gs_mode mode = m == 3 ? GS_LINEAR : m == 4 ? GS_CUBIC : (gs_mode)m;
  int taps = mode == GS_NEAREST ? 1 : mode == GS_LINEAR ? 2 : 4, combos = 1;
  for (int i = 0; i < r; i++) combos *= taps;
  if (combos > MAX_COMBOS) return o2m_rw_unsupported(rw, "%d taps", combos);
  o2m_dtype dt = xk_elem(x);
  if (!o2m_dtype_is_float(xk_elem(grid)) || (mode != GS_NEAREST && !o2m_dtype_is_float(dt)))
    return o2m_rw_unsupported(rw, "GridSample of %s on a %s grid", o2m_dtype_name(dt), o2m_dtype_name(xk_elem(grid)));
  int align = o2m_rw_attr_i(rw, "align_corners", 0) != 0;
  int64_t n = xd[0], c = xd[1], p = 1, q = 1, strides[MAX_SPATIAL];
  for (int i = r - 1; i >= 0; i--) strides[i] = p, p *= xd[2 + i];
  for (int i = 0; i < r; i++) q *= gd[1 + i];
  gs_axis axes[MAX_SPATIAL];
  o2m_value *g32 = xk_cast(rw, grid, O2M_DT_FLOAT);
  for (int i = 0; i < r; i++) {
    o2m_value *in[2] = {g32, i64(rw, r - 1 - i)}; /* a scalar index: the axis goes */
    o2m_attr axis = o2m_rw_attr_int("axis", -1);
    o2m_value *g = g32 && in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis, 1) : NULL;
    axis_taps(rw, mode, (gs_pad)pd, align, taps, xd[2 + i], g, &axes[i]);
  }
  int64_t flat_x[3] = {n, c, p}, flat_i[3] = {n, 1, q}, full[3] = {n, c, q};
  o2m_value *xf = xk_reshape(rw, x, flat_x, 3), *sum = NULL, *shape = o2m_rw_const_ints(rw, full, 3);
  for (int t = 0; t < combos; t++) {
    o2m_value *idx = NULL, *w = NULL, *valid = NULL;
    for (int i = r - 1, rest = t; i >= 0; i--, rest /= taps) {
      int j = rest % taps;
      o2m_value *part = strides[i] == 1 ? axes[i].idx[j] : xk_op2(rw, "Mul", axes[i].idx[j], i64(rw, (double)strides[i]));
      idx = idx ? xk_op2(rw, "Add", idx, part) : part;
      if (mode != GS_NEAREST) w = w ? xk_op2(rw, "Mul", w, axes[i].w[j]) : axes[i].w[j];
      if (axes[i].valid[j]) valid = valid ? xk_op2(rw, "And", valid, axes[i].valid[j]) : axes[i].valid[j];
    }
    o2m_value *ge[2] = {xf, xk_reshape(rw, idx, flat_i, 3)};
    o2m_value *ex[2] = {ge[1], shape};
    ge[1] = ge[1] && shape ? o2m_rw_op(rw, "Expand", 2, ex, NULL, 0) : NULL;
    o2m_attr axis2 = o2m_rw_attr_int("axis", 2);
    o2m_value *v = xf && ge[1] ? o2m_rw_op(rw, "GatherElements", 2, ge, &axis2, 1) : NULL;
    if (mode != GS_NEAREST) v = xk_op2(rw, "Mul", xk_cast(rw, v, O2M_DT_FLOAT), xk_reshape(rw, w, flat_i, 3));
    if (valid) v = xk_where(rw, xk_reshape(rw, valid, flat_i, 3), v, xk_scalar_like(rw, v, 0));
    sum = sum ? xk_op2(rw, "Add", sum, v) : v;
  }
  int64_t out[MAX_SPATIAL + 2] = {n, c};
  for (int i = 0; i < r; i++) out[2 + i] = gd[1 + i];
  return xk_bind(rw, 0, xk_cast(rw, xk_reshape(rw, sum, out, rank), dt));
}
