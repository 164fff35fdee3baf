/* lower_window.c - the sliding-window helpers of lower_window.h: window
 * geometry from a node's attributes, tensor.pad, affine maps of scaled
 * dims, linalg.index, and whole-tensor dtype conversion.
 *
 * Geometry (per spatial axis, input size `in`, dilated kernel extent E):
 *   SAME_UPPER/LOWER  out = ceil(in / s), total = max(0, (out-1)*s + E - in),
 *                     begin = total/2 (UPPER) or total - total/2 (LOWER)
 *   VALID             out = (in - E) / s + 1, no pads
 *   NOTSET            out = (in + pb + pe - E) / s + 1, rounded up in
 *                     ceil_mode, minus one when the last window would
 *                     start in the end padding; `extra` then pads the end
 *                     so that the last window fits.
 * Sizes may be dynamic: the arithmetic is lw_ix (constants fold).
 */
#include <stdio.h>
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_window.h"

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

/* ---- attributes --------------------------------------------------------- */

/* An INTS attribute of `count` entries >= min, or `dflt` everywhere when
 * absent. */
static o2m_status window_ints(lw_ctx *cx, const char *name, int count, int64_t min,
                              int64_t dflt, int64_t *out) {
  const int64_t *v = NULL;
  int c = lw_attr_ints(cx, name, &v);
  for (int i = 0; i < count; i++) out[i] = dflt;
  if (c < 0) return O2M_OK;
  if (c != count) return lw_error(cx, "attribute %s has %d values, expected %d", name, c, count);
  for (int i = 0; i < c; i++) {
    if (v[i] < min || v[i] > (1ll << 31))
      return lw_error(cx, "attribute %s has value %lld out of range", name, (long long)v[i]);
    out[i] = v[i];
  }
  return O2M_OK;
}

typedef enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID, PAD_MODES } pad_mode;

static const char *const pad_names[PAD_MODES] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

/* The attributes every window op shares; pads[2n] as written. */
static o2m_status read_attrs(lw_ctx *cx, MlirValue x, const int64_t *kernel, lw_window *w,
                             int64_t *pads, pad_mode *mode) {
  MlirType t = mlirValueGetType(x);
  int rank = (int)mlirShapedTypeGetRank(t);
  memset(w, 0, sizeof(*w));
  if (rank < 3 || rank - 2 > LW_MAX_SPATIAL)
    return lw_unsupported(cx, "input of rank %d (1 to %d spatial axes are lowered)", rank, LW_MAX_SPATIAL);
  w->n = rank - 2;
  o2m_status s;
  if ((s = window_ints(cx, "kernel_shape", w->n, 1, 0, w->kernel)) ||
      (s = window_ints(cx, "strides", w->n, 1, 1, w->stride)) ||
      (s = window_ints(cx, "dilations", w->n, 1, 1, w->dilation)) ||
      (s = window_ints(cx, "pads", 2 * w->n, 0, 0, pads)))
    return s;
  for (int i = 0; i < w->n; i++) {
    if (!w->kernel[i] && kernel) w->kernel[i] = kernel[i];
    if (w->kernel[i] <= 0) return lw_unsupported(cx, "the kernel size of spatial axis %d is unknown", i);
    w->in[i] = lw_ix_dim(cx, x, 2 + i);
  }
  const char *ap = lw_attr_string(cx, "auto_pad", "NOTSET");
  for (*mode = PAD_NOTSET; *mode < PAD_MODES && strcmp(ap, pad_names[*mode]); (*mode)++) {}
  if (*mode == PAD_MODES) return lw_error(cx, "unknown auto_pad '%s'", ap);
  return O2M_OK;
}

int64_t lw_window_extent(const lw_window *w, int i) {
  return (w->kernel[i] - 1) * w->dilation[i] + 1;
}

/* Checks a computed output size against the inferred one. */
static o2m_status check_out(lw_ctx *cx, const lw_window *w) {
  const o2m_type *y = lw_out_type(cx, 0);
  for (int i = 0; i < w->n; i++) {
    if (lw_ix_is_const(w->out[i]) && w->out[i].c <= 0)
      return lw_error(cx, "the window does not fit spatial axis %d", i);
    if (y->kind == O2M_TYPE_TENSOR && y->rank == w->n + 2 && y->dims[2 + i].size >= 0 &&
        lw_ix_is_const(w->out[i]) && y->dims[2 + i].size != w->out[i].c)
      return lw_error(cx, "internal: spatial axis %d has size %lld, inferred %lld", i,
                      (long long)w->out[i].c, (long long)y->dims[2 + i].size);
  }
  return O2M_OK;
}

o2m_status lw_window_read(lw_ctx *cx, MlirValue x, const int64_t *kernel, lw_window *w) {
  int64_t pads[2 * LW_MAX_SPATIAL];
  pad_mode mode;
  o2m_status s = read_attrs(cx, x, kernel, w, pads, &mode);
  if (s) return s;
  int ceil_mode = lw_attr_int(cx, "ceil_mode", 0) != 0;
  for (int i = 0; i < w->n; i++) {
    lw_ix in = w->in[i], st = lw_ix_c(w->stride[i]), ext = lw_ix_c(lw_window_extent(w, i));
    lw_ix pb = lw_ix_c(0), pe = lw_ix_c(0), out;
    if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
      out = lw_ix_bin(cx, LW_IX_CEILDIV, in, st);
      lw_ix total = lw_ix_bin(cx, LW_IX_SUB, lw_ix_bin(cx, LW_IX_MUL, lw_ix_bin(cx, LW_IX_SUB, out, lw_ix_c(1)), st), in);
      total = lw_ix_bin(cx, LW_IX_MAX, lw_ix_bin(cx, LW_IX_ADD, total, ext), lw_ix_c(0));
      lw_ix half = lw_ix_bin(cx, LW_IX_FLOORDIV, total, lw_ix_c(2));
      pb = mode == PAD_SAME_UPPER ? half : lw_ix_bin(cx, LW_IX_SUB, total, half);
      pe = lw_ix_bin(cx, LW_IX_SUB, total, pb);
    } else {
      if (mode == PAD_NOTSET) pb = lw_ix_c(pads[i]), pe = lw_ix_c(pads[w->n + i]);
      lw_ix span = lw_ix_bin(cx, LW_IX_SUB, lw_ix_bin(cx, LW_IX_ADD, in, lw_ix_bin(cx, LW_IX_ADD, pb, pe)), ext);
      out = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, ceil_mode ? LW_IX_CEILDIV : LW_IX_FLOORDIV, span, st), lw_ix_c(1));
      if (ceil_mode) { /* the last window must start inside the input or the begin padding */
        lw_ix last = lw_ix_bin(cx, LW_IX_MUL, lw_ix_bin(cx, LW_IX_SUB, out, lw_ix_c(1)), st);
        lw_ix past = lw_ix_bin(cx, LW_IX_GE, last, lw_ix_bin(cx, LW_IX_ADD, in, pb));
        out = lw_ix_select(cx, past, lw_ix_bin(cx, LW_IX_SUB, out, lw_ix_c(1)), out);
      }
    }
    lw_ix need = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, lw_ix_bin(cx, LW_IX_SUB, out, lw_ix_c(1)), st), ext);
    lw_ix have = lw_ix_bin(cx, LW_IX_ADD, in, lw_ix_bin(cx, LW_IX_ADD, pb, pe));
    w->extra[i] = lw_ix_bin(cx, LW_IX_MAX, lw_ix_bin(cx, LW_IX_SUB, need, have), lw_ix_c(0));
    w->pad_begin[i] = pb;
    w->pad_end[i] = pe;
    w->out[i] = out;
  }
  return check_out(cx, w);
}

o2m_status lw_window_read_transposed(lw_ctx *cx, MlirValue x, const int64_t *kernel, lw_window *w) {
  int64_t pads[2 * LW_MAX_SPATIAL], out_pad[LW_MAX_SPATIAL];
  pad_mode mode;
  o2m_status s = read_attrs(cx, x, kernel, w, pads, &mode);
  if (s || (s = window_ints(cx, "output_padding", w->n, 0, 0, out_pad))) return s;
  const int64_t *shape = NULL;
  int n_shape = lw_attr_ints(cx, "output_shape", &shape);
  if (n_shape >= 0 && n_shape != w->n && n_shape != w->n + 2)
    return lw_error(cx, "output_shape has %d values for %d spatial axes", n_shape, w->n);
  for (int i = 0; i < w->n; i++) {
    lw_ix st = lw_ix_c(w->stride[i]);
    /* the size of the full (uncropped) transposed convolution */
    lw_ix full = lw_ix_bin(cx, LW_IX_MUL, st, lw_ix_bin(cx, LW_IX_SUB, w->in[i], lw_ix_c(1)));
    full = lw_ix_bin(cx, LW_IX_ADD, full, lw_ix_c(out_pad[i] + lw_window_extent(w, i)));
    lw_ix out = n_shape >= 0 ? lw_ix_c(shape[n_shape - w->n + i]) : lw_ix_c(-1);
    lw_ix pb;
    if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
      if (n_shape < 0) out = lw_ix_bin(cx, LW_IX_MUL, w->in[i], st);
      lw_ix total = lw_ix_bin(cx, LW_IX_SUB, full, out);
      lw_ix half = lw_ix_bin(cx, LW_IX_FLOORDIV, total, lw_ix_c(2));
      pb = mode == PAD_SAME_UPPER ? half : lw_ix_bin(cx, LW_IX_SUB, total, half);
    } else {
      int64_t b = mode == PAD_NOTSET ? pads[i] : 0, e = mode == PAD_NOTSET ? pads[w->n + i] : 0;
      pb = lw_ix_c(b);
      if (n_shape < 0) out = lw_ix_bin(cx, LW_IX_SUB, full, lw_ix_c(b + e));
    }
    w->pad_begin[i] = pb;
    w->pad_end[i] = w->extra[i] = lw_ix_c(0);
    w->out[i] = out;
  }
  return check_out(cx, w);
}

/* ---- padding ---------------------------------------------------------------- */

static MlirAttribute mixed_sizes(lw_ctx *cx, int rank, const lw_ix *v, MlirValue *ops, int *n) {
  int64_t s[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    s[k] = lw_ix_is_const(v[k]) ? v[k].c : mlirShapedTypeGetDynamicSize();
    if (!lw_ix_is_const(v[k])) ops[(*n)++] = v[k].v;
  }
  return mlirDenseI64ArrayGet(cx->mc, rank, s);
}

MlirValue lw_pad(lw_ctx *cx, MlirValue x, const lw_ix *low, const lw_ix *high, MlirValue value) {
  MlirType t = mlirValueGetType(x);
  int rank = (int)mlirShapedTypeGetRank(t);
  int64_t shape[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    int64_t d = mlirShapedTypeGetDimSize(t, k);
    int known = !mlirShapedTypeIsDynamicDim(t, k) && lw_ix_is_const(low[k]) && lw_ix_is_const(high[k]);
    shape[k] = known ? d + low[k].c + high[k].c : mlirShapedTypeGetDynamicSize();
  }
  MlirType result = mlirRankedTensorTypeGet(rank, shape, mlirShapedTypeGetElementType(t), mlirAttributeGetNull());
  MlirValue ops[2 * LW_MAX_RANK + 1];
  int n = 0;
  ops[n++] = x;
  MlirAttribute static_low = mixed_sizes(cx, rank, low, ops, &n);
  int n_low = n - 1;
  MlirAttribute static_high = mixed_sizes(cx, rank, high, ops, &n);
  int32_t segments[3] = {1, n_low, n - 1 - n_low};
  MlirNamedAttribute attrs[3] = {
      mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref("static_low")), static_low),
      mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref("static_high")), static_high),
      mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref("operandSegmentSizes")),
                            mlirDenseI32ArrayGet(cx->mc, 3, segments)),
  };
  MlirOperation op = lw_op_attrs(cx, "tensor.pad", n, ops, 1, &result, 3, attrs, 1);
  if (mlirOperationIsNull(op)) return (MlirValue){NULL};
  MlirType index[LW_MAX_RANK];
  MlirLocation locs[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) index[k] = lw_index_type(cx), locs[k] = cx->loc;
  MlirBlock body = mlirBlockCreate(rank, index, locs);
  mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, 0), body);
  MlirBlock saved = cx->block;
  cx->block = body;
  lw_op(cx, "tensor.yield", 1, &value, 0, NULL, NULL, 0);
  cx->block = saved;
  return mlirOperationGetResult(op, 0);
}

/* x padded, for the JIT: a filled buffer with x inserted, so that
 * bufferization (after the pipeline's eliminate-empty-tensors) lets x's
 * producer write straight into the padded buffer instead of a buffer of its
 * own that tensor.pad copies in. (Filling only the borders, slab by slab,
 * measured no faster and compiled 50% slower.) Static shapes and pads
 * only; NULL otherwise. */
static MlirValue pad_into_filled(lw_ctx *cx, MlirValue x, const lw_ix *low, const lw_ix *high, MlirValue value) {
  MlirType t = mlirValueGetType(x);
  int rank = (int)mlirShapedTypeGetRank(t);
  if (!mlirShapedTypeHasStaticShape(t) || rank > LW_MAX_RANK) return (MlirValue){NULL};
  int64_t in[LW_MAX_RANK], out[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    if (!lw_ix_is_const(low[k]) || !lw_ix_is_const(high[k]) || low[k].c < 0 || high[k].c < 0) return (MlirValue){NULL};
    in[k] = mlirShapedTypeGetDimSize(t, k);
    out[k] = in[k] + low[k].c + high[k].c;
  }
  MlirValue dest = lw_empty(cx, mlirRankedTensorTypeGet(rank, out, mlirShapedTypeGetElementType(t), mlirAttributeGetNull()),
                            NULL);
  dest = mlirValueIsNull(dest) ? dest : lw_named(cx, "linalg.fill", 1, &value, dest, NULL);
  return mlirValueIsNull(dest) ? dest : lw_insert_slice(cx, x, dest, low);
}

MlirValue lw_window_pad(lw_ctx *cx, MlirValue x, const lw_window *w, MlirValue value) {
  lw_ix low[LW_MAX_SPATIAL + 2], high[LW_MAX_SPATIAL + 2];
  int any = 0;
  low[0] = low[1] = high[0] = high[1] = lw_ix_c(0);
  for (int i = 0; i < w->n; i++) {
    low[2 + i] = w->pad_begin[i];
    high[2 + i] = lw_ix_bin(cx, LW_IX_ADD, w->pad_end[i], w->extra[i]);
    any |= !lw_ix_is_const(low[2 + i]) || !lw_ix_is_const(high[2 + i]) || low[2 + i].c || high[2 + i].c;
  }
  if (!any) return x;
  MlirValue padded = cx->for_jit ? pad_into_filled(cx, x, low, high, value) : (MlirValue){NULL};
  return mlirValueIsNull(padded) ? lw_pad(cx, x, low, high, value) : padded;
}

MlirValue lw_insert_slice_at(lw_ctx *cx, MlirValue src, MlirValue dest, const lw_ix *offsets,
                             const lw_ix *sizes, const lw_ix *strides) {
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(dest));
  lw_ix own_sizes[LW_MAX_RANK], ones[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    if (!sizes) own_sizes[k] = lw_ix_dim(cx, src, k);
    ones[k] = lw_ix_c(1);
  }
  if (!sizes) sizes = own_sizes;
  if (!strides) strides = ones;
  MlirValue ops[3 * LW_MAX_RANK + 2] = {src, dest};
  int n = 2, before;
  int32_t segments[5] = {1, 1, 0, 0, 0};
  MlirAttribute parts[3];
  const lw_ix *lists[3] = {offsets, sizes, strides};
  for (int p = 0; p < 3; p++) {
    before = n;
    parts[p] = mixed_sizes(cx, rank, lists[p], ops, &n);
    segments[2 + p] = n - before;
  }
  static const char *const names[4] = {"static_offsets", "static_sizes", "static_strides",
                                       "operandSegmentSizes"};
  MlirAttribute values[4] = {parts[0], parts[1], parts[2], mlirDenseI32ArrayGet(cx->mc, 5, segments)};
  MlirNamedAttribute attrs[4];
  for (int a = 0; a < 4; a++)
    attrs[a] = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref(names[a])), values[a]);
  MlirType result = mlirValueGetType(dest);
  MlirOperation op = lw_op_attrs(cx, "tensor.insert_slice", n, ops, 1, &result, 4, attrs, 0);
  return mlirOperationIsNull(op) ? (MlirValue){NULL} : mlirOperationGetResult(op, 0);
}

/* ---- affine maps and loop indices ---------------------------------------------- */

MlirAttribute lw_aff_map(lw_ctx *cx, int n_dims, int n_results, const lw_aff *results) {
  MlirAffineExpr e[LW_MAX_RANK];
  if (n_results > LW_MAX_RANK) n_results = LW_MAX_RANK;
  for (int r = 0; r < n_results; r++) {
    MlirAffineExpr sum = mlirAffineConstantExprGet(cx->mc, results[r].c);
    int plain = results[r].c == 0;
    for (int t = 0; t < LW_AFF_TERMS && results[r].dim[t] >= 0; t++) {
      MlirAffineExpr term = mlirAffineDimExprGet(cx->mc, results[r].dim[t]);
      if (results[r].coef[t] != 1)
        term = mlirAffineMulExprGet(term, mlirAffineConstantExprGet(cx->mc, results[r].coef[t]));
      sum = plain ? term : mlirAffineAddExprGet(sum, term);
      plain = 0;
    }
    e[r] = sum;
  }
  return mlirAffineMapAttrGet(mlirAffineMapGet(cx->mc, n_dims, 0, n_results, e));
}

MlirValue lw_loop_index(lw_ctx *cx, int dim) {
  char attrs[32];
  snprintf(attrs, sizeof(attrs), "dim = %d : i64", dim);
  return lw_op1(cx, "linalg.index", 0, NULL, lw_index_type(cx), attrs);
}

/* ---- dtypes ------------------------------------------------------------------- */

o2m_dtype lw_accumulator_dtype(o2m_dtype dtype) {
  return dtype == O2M_DT_FLOAT16 || dtype == O2M_DT_BFLOAT16 ? O2M_DT_FLOAT : dtype;
}

typedef struct convert_dtypes {
  o2m_dtype from, to;
} convert_dtypes;

static o2m_status convert_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const convert_dtypes *d = user;
  *result = lw_scalar_cast(cx, args[0], d->from, d->to);
  return lw_value_status(cx, *result);
}

o2m_status lw_convert(lw_ctx *cx, MlirValue x, o2m_dtype from, o2m_dtype to, MlirValue *out) {
  if (from == to) {
    *out = x;
    return O2M_OK;
  }
  convert_dtypes d = {from, to};
  return lw_broadcast(cx, 1, &x, NULL, lw_elem_type(cx, to), convert_body, &d, out);
}
