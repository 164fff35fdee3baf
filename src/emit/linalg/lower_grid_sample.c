/* lower_grid_sample.c - Linalg lowering of GridSample (row in
 * lower_nn.def), opsets 16, 20 and 22: modes nearest, linear ("bilinear"
 * at 16) and cubic ("bicubic" at 16), padding_mode zeros, border and
 * reflection, align_corners, over any number of spatial axes (2-D at 16).
 *
 * One linalg.generic over the output (N, C, O1..Or): its body reads the
 * grid position with tensor.extract (the grid's last dim lists the
 * spatial axes innermost first: x, y, z...), denormalizes and pads it per
 * axis in scalar arithmetic, then sums weight * X over the 1 (nearest), 2^r
 * (linear) or 4^r (cubic) taps, each read with tensor.extract at clamped
 * indices (zeros padding: a tap outside X contributes 0). Semantics and
 * order of operations follow ONNX's reference implementation
 * (onnx/reference/ops/op_grid_sample.py): nearest rounds half to even
 * before padding and truncates after it; reflection reflects by the near
 * border until inside; the cubic kernel has A = -0.75. Arithmetic is in
 * f32 (f64 when X is double); the sum is converted to X's dtype.
 */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_window.h"

enum { GS_MAX_SPATIAL = 6, GS_MAX_TAPS = 4096 };

typedef enum gs_mode { GS_NEAREST, GS_LINEAR, GS_CUBIC } gs_mode;
typedef enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_pad;

typedef struct gs_plan {
  MlirValue x, grid;
  o2m_dtype dtype, gdtype, acc;
  gs_mode mode;
  gs_pad pad;
  int align, r, taps; /* taps per axis */
  lw_ix dims[GS_MAX_SPATIAL];
} gs_plan;

/* ---- scalar helpers --------------------------------------------------------- */

static MlirValue fop(lw_ctx *cx, const char *name, MlirValue a, MlirValue b) {
  MlirValue ab[2] = {a, b};
  return lw_op1(cx, name, mlirValueIsNull(b) ? 1 : 2, ab, mlirValueGetType(a), NULL);
}

static MlirValue fconst(lw_ctx *cx, const gs_plan *p, double v) {
  return lw_const_scalar(cx, p->acc, v);
}

static MlirValue to_i64(lw_ctx *cx, MlirValue f) {
  return lw_op1(cx, "arith.fptosi", 1, &f, lw_type(cx, "i64"), NULL);
}

static MlirValue to_float(lw_ctx *cx, const gs_plan *p, MlirValue i) {
  return lw_op1(cx, "arith.sitofp", 1, &i, lw_elem_type(cx, p->acc), NULL);
}

/* The size of spatial axis i as a float and as an i64. */
static void dim_values(lw_ctx *cx, const gs_plan *p, int i, MlirValue *f, MlirValue *n) {
  if (lw_ix_is_const(p->dims[i])) {
    *f = fconst(cx, p, (double)p->dims[i].c);
    *n = lw_scalar_const(cx, lw_type(cx, "i64"), (double)p->dims[i].c);
    return;
  }
  MlirValue v = p->dims[i].v;
  *n = lw_op1(cx, "arith.index_cast", 1, &v, lw_type(cx, "i64"), NULL);
  *f = to_float(cx, p, *n);
}

/* Reflects v by the near border of [lo, hi] until inside (the reference's
 * _gs_reflect); v itself when inside. */
static MlirValue reflect(lw_ctx *cx, const gs_plan *p, MlirValue v, MlirValue lo, MlirValue hi) {
  MlirValue rng = fop(cx, "arith.subf", hi, lo);
  MlirValue below = lw_cmpf(cx, LW_F_OLT, v, lo), above = lw_cmpf(cx, LW_F_OGT, v, hi);
  MlirValue dx = lw_select(cx, below, fop(cx, "arith.subf", lo, v), fop(cx, "arith.subf", v, hi));
  MlirValue n = to_i64(cx, fop(cx, "arith.divf", dx, rng));
  MlirValue r = fop(cx, "arith.subf", dx, fop(cx, "arith.mulf", to_float(cx, p, n), rng));
  MlirValue one = lw_scalar_const(cx, lw_type(cx, "i64"), 1),
            zero = lw_scalar_const(cx, lw_type(cx, "i64"), 0);
  MlirValue even = lw_cmpi(cx, LW_I_EQ, fop(cx, "arith.andi", n, one), zero);
  MlirValue lo_r = fop(cx, "arith.addf", lo, r), hi_r = fop(cx, "arith.subf", hi, r);
  MlirValue from_lo = lw_select(cx, even, lo_r, hi_r), from_hi = lw_select(cx, even, hi_r, lo_r);
  return lw_select(cx, below, from_lo, lw_select(cx, above, from_hi, v));
}

/* One axis: the source index (clamped), validity (i1, zeros padding) and
 * weight of every tap. */
typedef struct gs_taps {
  MlirValue idx[4], valid[4], w[4];
} gs_taps;

static MlirValue clamp_i(lw_ctx *cx, MlirValue i, MlirValue lo, MlirValue hi) {
  return fop(cx, "arith.minsi", fop(cx, "arith.maxsi", i, lo), hi);
}

static void axis_taps(lw_ctx *cx, const gs_plan *p, int i, MlirValue g, gs_taps *t) {
  MlirValue d, dn, one = fconst(cx, p, 1.0), half = fconst(cx, p, 0.5), zero = fconst(cx, p, 0.0);
  dim_values(cx, p, i, &d, &dn);
  int known = lw_ix_is_const(p->dims[i]);
  double dc = (double)p->dims[i].c;
  MlirValue dm1 = known ? fconst(cx, p, dc - 1) : fop(cx, "arith.subf", d, one);
  /* denormalize */
  MlirValue gp1 = fop(cx, "arith.addf", g, one), x;
  if (p->align)
    x = fop(cx, "arith.mulf", fop(cx, "arith.divf", gp1, fconst(cx, p, 2.0)), dm1);
  else
    x = fop(cx, "arith.divf", fop(cx, "arith.subf", fop(cx, "arith.mulf", gp1, d), one),
            fconst(cx, p, 2.0));
  if (p->mode == GS_NEAREST)
    x = fop(cx, "math.roundeven", x, (MlirValue){NULL});
  MlirValue lo = p->align ? zero : fconst(cx, p, -0.5);
  MlirValue hi = p->align ? dm1 : known ? fconst(cx, p, dc - 0.5) : fop(cx, "arith.subf", d, half);
  if (p->pad == GS_BORDER) {
    MlirValue out =
        fop(cx, "arith.ori", lw_cmpf(cx, LW_F_OLT, x, lo), lw_cmpf(cx, LW_F_OGT, x, hi));
    MlirValue c = fop(cx, "arith.minimumf", fop(cx, "arith.maximumf", x, zero), dm1);
    x = lw_select(cx, out, c, x);
  } else if (p->pad == GS_REFLECTION) {
    x = reflect(cx, p, x, lo, hi);
  }
  MlirValue base = x, frac = zero;
  if (p->mode != GS_NEAREST) {
    base = fop(cx, "math.floor", x, (MlirValue){NULL});
    frac = fop(cx, "arith.subf", x, base);
  }
  int first = p->mode == GS_CUBIC ? -1 : 0;
  MlirValue i0 = lw_scalar_const(cx, lw_type(cx, "i64"), 0);
  MlirValue last = known ? lw_scalar_const(cx, lw_type(cx, "i64"), dc - 1)
                         : fop(cx, "arith.subi", dn, lw_scalar_const(cx, lw_type(cx, "i64"), 1));
  for (int j = 0; j < p->taps; j++) {
    MlirValue pos = j + first ? fop(cx, "arith.addf", base, fconst(cx, p, j + first)) : base;
    if (p->pad == GS_REFLECTION)
      pos = reflect(cx, p, pos, lo, hi);
    MlirValue at = to_i64(cx, pos);
    t->valid[j] = p->pad == GS_ZEROS ? fop(cx, "arith.andi", lw_cmpi(cx, LW_I_SGE, at, i0),
                                           lw_cmpi(cx, LW_I_SLT, at, dn))
                                     : (MlirValue){NULL};
    MlirValue c = clamp_i(cx, at, i0, last);
    t->idx[j] = lw_op1(cx, "arith.index_cast", 1, &c, lw_index_type(cx), NULL);
  }
  if (p->mode == GS_LINEAR) {
    t->w[0] = fop(cx, "arith.subf", one, frac), t->w[1] = frac;
  } else if (p->mode == GS_CUBIC) {
    double A = -0.75;
    MlirValue a = fconst(cx, p, A), a2 = fconst(cx, p, A + 2), a3 = fconst(cx, p, A + 3);
    MlirValue a5 = fconst(cx, p, 5 * A), a8 = fconst(cx, p, 8 * A), a4 = fconst(cx, p, 4 * A);
    /* far taps: ((A*u - 5A)*u + 8A)*u - 4A; near taps: ((A+2)*u - (A+3))*u*u + 1 */
    MlirValue us[4] = {fop(cx, "arith.addf", frac, one), frac, fop(cx, "arith.subf", one, frac),
                       fop(cx, "arith.subf", fconst(cx, p, 2.0), frac)};
    for (int j = 0; j < 4; j++) {
      MlirValue u = us[j];
      if (j == 0 || j == 3) {
        MlirValue v = fop(cx, "arith.subf", fop(cx, "arith.mulf", a, u), a5);
        v = fop(cx, "arith.addf", fop(cx, "arith.mulf", v, u), a8);
        t->w[j] = fop(cx, "arith.subf", fop(cx, "arith.mulf", v, u), a4);
      } else {
        MlirValue v = fop(cx, "arith.subf", fop(cx, "arith.mulf", a2, u), a3);
        t->w[j] = fop(cx, "arith.addf", fop(cx, "arith.mulf", fop(cx, "arith.mulf", v, u), u), one);
      }
    }
  }
}

static o2m_status gs_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                          void *user) {
  (void)args;
  const gs_plan *p = user;
  gs_taps taps[GS_MAX_SPATIAL];
  MlirValue at[GS_MAX_SPATIAL + 2];
  at[0] = idx[0];
  for (int k = 0; k < p->r; k++)
    at[1 + k] = idx[2 + k];
  for (int i = 0; i < p->r; i++) {
    at[1 + p->r] = lw_const_index(cx, p->r - 1 - i);
    MlirValue g = lw_scalar_cast(cx, lw_extract(cx, p->grid, at), p->gdtype, p->acc);
    if (mlirValueIsNull(g))
      return lw_value_status(cx, g);
    axis_taps(cx, p, i, g, &taps[i]);
  }
  int total = 1;
  for (int i = 0; i < p->r; i++)
    total *= p->taps;
  MlirValue sum = {NULL}, src[GS_MAX_SPATIAL + 2], zero_x = lw_const_scalar(cx, p->dtype, 0.0);
  src[0] = idx[0], src[1] = idx[1];
  for (int t = 0; t < total; t++) {
    MlirValue w = {NULL}, valid = {NULL};
    for (int i = p->r - 1, rest = t; i >= 0; i--, rest /= p->taps) {
      int j = rest % p->taps;
      src[2 + i] = taps[i].idx[j];
      if (p->mode != GS_NEAREST)
        w = mlirValueIsNull(w) ? taps[i].w[j] : fop(cx, "arith.mulf", w, taps[i].w[j]);
      if (!mlirValueIsNull(taps[i].valid[j]))
        valid = mlirValueIsNull(valid) ? taps[i].valid[j]
                                       : fop(cx, "arith.andi", valid, taps[i].valid[j]);
    }
    MlirValue v = lw_extract(cx, p->x, src);
    if (!mlirValueIsNull(valid))
      v = lw_select(cx, valid, v, zero_x);
    if (p->mode == GS_NEAREST) {
      *out = v;
      return lw_value_status(cx, v);
    }
    v = fop(cx, "arith.mulf", w, lw_scalar_cast(cx, v, p->dtype, p->acc));
    sum = mlirValueIsNull(sum) ? v : fop(cx, "arith.addf", sum, v);
  }
  *out = lw_scalar_cast(cx, sum, p->acc, p->dtype);
  return lw_value_status(cx, *out);
}

o2m_status lw_lower_grid_sample(lw_ctx *cx) {
  gs_plan p;
  memset(&p, 0, sizeof(p));
  MlirValue in[2];
  o2m_status s = lw_inputs(cx, 2, in);
  if (s)
    return s;
  p.x = in[0], p.grid = in[1];
  p.dtype = lw_in_type(cx, 0)->elem, p.gdtype = lw_in_type(cx, 1)->elem;
  int rank = lw_rank(p.x);
  p.r = rank - 2;
  if (p.r < 1 || lw_rank(p.grid) != rank)
    return lw_error(cx, "X of rank %d and grid of rank %d", rank, lw_rank(p.grid));
  if (p.r > GS_MAX_SPATIAL)
    return lw_unsupported(cx, "more than %d spatial axes", GS_MAX_SPATIAL);
  const char *mode = lw_attr_string(cx, "mode", "linear");
  const char *pad = lw_attr_string(cx, "padding_mode", "zeros");
  if (!mode || !pad)
    return lw_error(cx, "out of memory");
  if (strcmp(mode, "nearest") == 0)
    p.mode = GS_NEAREST, p.taps = 1;
  else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0)
    p.mode = GS_LINEAR, p.taps = 2;
  else if (strcmp(mode, "cubic") == 0 || strcmp(mode, "bicubic") == 0)
    p.mode = GS_CUBIC, p.taps = 4;
  else
    return lw_error(cx, "unknown mode '%s'", mode);
  if (strcmp(pad, "zeros") == 0)
    p.pad = GS_ZEROS;
  else if (strcmp(pad, "border") == 0)
    p.pad = GS_BORDER;
  else if (strcmp(pad, "reflection") == 0)
    p.pad = GS_REFLECTION;
  else
    return lw_error(cx, "unknown padding_mode '%s'", pad);
  p.align = lw_attr_int(cx, "align_corners", 0) != 0;
  if (!lw_dtype_is_float(p.gdtype))
    return lw_error(cx, "grid of %s", o2m_dtype_name(p.gdtype));
  if (p.mode != GS_NEAREST && !lw_dtype_is_float(p.dtype))
    return lw_unsupported(cx, "%s GridSample of %s", mode, o2m_dtype_name(p.dtype));
  if (mlirTypeIsNull(lw_elem_type(cx, p.dtype)))
    return lw_unsupported(cx, "GridSample of %s", o2m_dtype_name(p.dtype));
  p.acc = p.dtype == O2M_DT_DOUBLE ? O2M_DT_DOUBLE : O2M_DT_FLOAT;
  int total = 1;
  for (int i = 0; i < p.r; i++)
    total *= p.taps;
  if (total > GS_MAX_TAPS)
    return lw_unsupported(cx, "%s GridSample over %d axes", mode, p.r);
  lw_ix dims[GS_MAX_SPATIAL + 2];
  dims[0] = lw_ix_dim(cx, p.x, 0), dims[1] = lw_ix_dim(cx, p.x, 1);
  for (int i = 0; i < p.r; i++) {
    p.dims[i] = lw_ix_dim(cx, p.x, 2 + i);
    dims[2 + i] = lw_ix_dim(cx, p.grid, 1 + i);
  }
  MlirType type = lw_out_type_with(cx, 0, rank, dims);
  if (mlirTypeIsNull(type))
    return lw_unsupported(cx, "the output type is not known");
  MlirValue result;
  s = lw_index_generic(cx, type, dims, 0, NULL, NULL, gs_body, &p, &result);
  return s ? s : lw_set_out(cx, 0, result);
}
