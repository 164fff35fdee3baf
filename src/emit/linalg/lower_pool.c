/* lower_pool.c - Linalg lowerings of the sliding-window pools: MaxPool
 * (with the Indices output, storage_order), AveragePool
 * (count_include_pad) and LpPool, over 1 and more spatial axes, with
 * strides, dilations, pads, auto_pad and ceil_mode (lower_window.c).
 *
 * Each pool is one linalg.generic over (n, c, out..., k...) reading the
 * padded input at out*stride + k*dilation; a [k...] window operand binds
 * the kernel loops. The padding value never changes the result: lowest for
 * max, 0 for sums. AveragePool divides by the number of window taps inside
 * the input (count_include_pad = 0) or inside the input and its declared
 * pads (= 1; never the end padding ceil_mode adds), as ONNX's reference
 * does. f16/bf16 accumulate in f32.
 */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_reduce.h"
#include "emit/linalg/lower_window.h"

enum { MAX_LOOPS = 2 + 2 * LW_MAX_SPATIAL };

typedef struct pool_plan {
  lw_window win;
  o2m_dtype dtype, acc;
  float p;             /* LpPool's exponent */
  int include_pad;     /* AveragePool's count_include_pad */
  int storage_order;   /* MaxPool's Indices: 1 = column-major spatial dims */
  lw_ix sizes[2 + LW_MAX_SPATIAL]; /* the input's dims (unpadded) */
} pool_plan;

/* One pooling generic with n_outs accumulators started at inits[]
 * (scalars) over the padded input x. */
static o2m_status pool_generic(lw_ctx *cx, const pool_plan *p, MlirValue x, int n_outs,
                               const MlirValue *inits, lw_body_fn body, MlirValue *results) {
  const lw_window *w = &p->win;
  int s = w->n, n_loops = 2 + 2 * s;
  char iters[MAX_LOOPS + 1];
  for (int l = 0; l < n_loops; l++) iters[l] = l < 2 + s ? 'p' : 'r';
  iters[n_loops] = 0;
  lw_aff xm[2 + LW_MAX_SPATIAL], km[LW_MAX_SPATIAL];
  xm[0] = lw_aff_dim(0), xm[1] = lw_aff_dim(1);
  for (int i = 0; i < s; i++) {
    xm[2 + i] = lw_aff_2(2 + i, w->stride[i], 2 + s + i, w->dilation[i], 0);
    km[i] = lw_aff_dim(2 + s + i);
  }
  MlirValue ins[2] = {x, lw_empty(cx, lw_tensor_type_of(cx, p->dtype, s, w->kernel), NULL)};
  MlirAttribute in_maps[2] = {lw_aff_map(cx, n_loops, 2 + s, xm), lw_aff_map(cx, n_loops, s, km)};
  int out_exprs[2 + LW_MAX_SPATIAL];
  for (int l = 0; l < 2 + s; l++) out_exprs[l] = l;
  MlirAttribute out_map = lw_affine_map(cx, n_loops, 2 + s, out_exprs);
  MlirAttribute out_maps[2] = {out_map, out_map};
  MlirValue outs[2];
  lw_ix dims[2 + LW_MAX_SPATIAL] = {p->sizes[0], p->sizes[1]};
  int64_t sizes[2 + LW_MAX_SPATIAL];
  for (int i = 0; i < s; i++) dims[2 + i] = w->out[i];
  MlirValue dyn[2 + LW_MAX_SPATIAL];
  for (int k = 0; k < 2 + s; k++) {
    sizes[k] = lw_ix_is_const(dims[k]) ? dims[k].c : mlirShapedTypeGetDynamicSize();
    dyn[k] = lw_ix_is_const(dims[k]) ? (MlirValue){NULL} : dims[k].v;
  }
  for (int o = 0; o < n_outs; o++) {
    MlirType type = mlirRankedTensorTypeGet(2 + s, sizes, mlirValueGetType(inits[o]), mlirAttributeGetNull());
    outs[o] = lw_filled(cx, type, dyn, inits[o]);
  }
  lw_generic_spec spec = {n_loops, iters, 2, n_outs, ins, in_maps, outs, out_maps, body, (void *)p};
  return lw_generic(cx, &spec, results);
}

/* ---- MaxPool ------------------------------------------------------------------------ */

static o2m_status max_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const pool_plan *p = user;
  o2m_dtype dts[2] = {p->dtype, p->dtype};
  MlirValue pair[2] = {args[2], args[0]};
  yields[0] = lw_scalar_op(cx, "Max", dts, pair);
  return lw_value_status(cx, yields[0]);
}

/* The flat index into the unpadded input of the element the loops read
 * now: (n*C + c) * prod(D) + the spatial position, row-major or (storage
 * order 1) column-major. */
static MlirValue input_position(lw_ctx *cx, const pool_plan *p) {
  const lw_window *w = &p->win;
  int s = w->n;
  lw_ix pos[LW_MAX_SPATIAL];
  for (int i = 0; i < s; i++) {
    lw_ix o = lw_ix_v(lw_loop_index(cx, 2 + i)), k = lw_ix_v(lw_loop_index(cx, 2 + s + i));
    lw_ix at = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, o, lw_ix_c(w->stride[i])),
                         lw_ix_bin(cx, LW_IX_MUL, k, lw_ix_c(w->dilation[i])));
    pos[i] = lw_ix_bin(cx, LW_IX_SUB, at, w->pad_begin[i]);
  }
  lw_ix flat = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, lw_ix_v(lw_loop_index(cx, 0)), p->sizes[1]),
                         lw_ix_v(lw_loop_index(cx, 1)));
  for (int i = 0; i < s; i++) flat = lw_ix_bin(cx, LW_IX_MUL, flat, p->sizes[2 + i]);
  lw_ix spatial = lw_ix_c(0);
  for (int j = 0; j < s; j++) {
    int i = p->storage_order ? s - 1 - j : j;
    spatial = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, spatial, p->sizes[2 + i]), pos[i]);
  }
  MlirValue v = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_ADD, flat, spatial));
  return lw_op1(cx, "arith.index_cast", 1, &v, lw_type(cx, "i64"), NULL);
}

/* value and index: the first strictly greater element wins */
static o2m_status argmax_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const pool_plan *p = user;
  o2m_dtype dts[2] = {p->dtype, p->dtype};
  MlirValue pair[2] = {args[0], args[2]};
  MlirValue greater = lw_scalar_op(cx, "Greater", dts, pair);
  if (mlirValueIsNull(greater)) return lw_value_status(cx, greater);
  MlirValue pick_v[3] = {greater, args[0], args[2]};
  MlirValue pick_i[3] = {greater, input_position(cx, p), args[3]};
  yields[0] = lw_op1(cx, "arith.select", 3, pick_v, mlirValueGetType(args[0]), NULL);
  yields[1] = lw_op1(cx, "arith.select", 3, pick_i, mlirValueGetType(args[3]), NULL);
  return O2M_OK;
}

static o2m_status lower_max(lw_ctx *cx, pool_plan *p, MlirValue x) {
  MlirValue lowest = lw_extreme_const(cx, p->dtype, 0);
  if (mlirValueIsNull(lowest)) return lw_unsupported(cx, "MaxPool of %s", o2m_dtype_name(p->dtype));
  x = lw_window_pad(cx, x, &p->win, lowest);
  MlirValue r[2];
  o2m_status s;
  if (!lw_out_present(cx, 1)) {
    s = pool_generic(cx, p, x, 1, &lowest, max_body, r);
    return s ? s : lw_set_out(cx, 0, r[0]);
  }
  p->storage_order = lw_attr_int(cx, "storage_order", 0) != 0;
  MlirValue inits[2] = {lowest, lw_const_scalar(cx, O2M_DT_INT64, -1)};
  s = pool_generic(cx, p, x, 2, inits, argmax_body, r);
  if (!s) s = lw_set_out(cx, 0, r[0]);
  return s ? s : lw_set_out(cx, 1, r[1]);
}

/* ---- AveragePool, LpPool ------------------------------------------------------------ */

static o2m_status sum_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const pool_plan *p = user;
  o2m_dtype dts[2] = {p->acc, p->acc};
  MlirValue v = lw_scalar_cast(cx, args[0], p->dtype, p->acc);
  if (mlirValueIsNull(v)) return lw_value_status(cx, v);
  if (strcmp(cx->node->op_type, "LpPool") == 0) { /* |v|^p */
    v = lw_scalar_op(cx, "Abs", dts, &v);
    MlirValue pw[2] = {v, p->p == 2 ? v : lw_scalar_const(cx, mlirValueGetType(v), p->p)};
    if (p->p != 1) v = lw_scalar_op(cx, p->p == 2 ? "Mul" : "Pow", dts, pw);
  }
  MlirValue sum[2] = {args[2], v};
  yields[0] = lw_scalar_op(cx, "Add", dts, sum);
  return lw_value_status(cx, yields[0]);
}

/* The number of taps of the window at output position o (index) along
 * axis i that fall in [lo, hi) of the padded input. */
static lw_ix taps_inside(lw_ctx *cx, const lw_window *w, int i, lw_ix o, lw_ix lo, lw_ix hi) {
  lw_ix start = lw_ix_bin(cx, LW_IX_MUL, o, lw_ix_c(w->stride[i])), d = lw_ix_c(w->dilation[i]);
  lw_ix first = lw_ix_bin(cx, LW_IX_CEILDIV, lw_ix_bin(cx, LW_IX_SUB, lo, start), d);
  lw_ix end = lw_ix_bin(cx, LW_IX_CEILDIV, lw_ix_bin(cx, LW_IX_SUB, hi, start), d);
  first = lw_ix_bin(cx, LW_IX_MAX, first, lw_ix_c(0));
  end = lw_ix_bin(cx, LW_IX_MIN, end, lw_ix_c(w->kernel[i]));
  return lw_ix_bin(cx, LW_IX_MAX, lw_ix_bin(cx, LW_IX_SUB, end, first), lw_ix_c(0));
}

/* The divisor of the average at the output position idx. */
static lw_ix tap_count(lw_ctx *cx, const pool_plan *p, const MlirValue *idx) {
  const lw_window *w = &p->win;
  lw_ix count = lw_ix_c(1);
  for (int i = 0; i < w->n; i++) {
    lw_ix in_end = lw_ix_bin(cx, LW_IX_ADD, w->pad_begin[i], w->in[i]);
    lw_ix lo = p->include_pad ? lw_ix_c(0) : w->pad_begin[i];
    lw_ix hi = p->include_pad ? lw_ix_bin(cx, LW_IX_ADD, in_end, w->pad_end[i]) : in_end;
    int whole = lw_ix_is_const(w->extra[i]) && !w->extra[i].c &&
                (p->include_pad || (lw_ix_is_const(w->pad_begin[i]) && lw_ix_is_const(w->pad_end[i]) &&
                                    !w->pad_begin[i].c && !w->pad_end[i].c));
    lw_ix taps = whole ? lw_ix_c(w->kernel[i]) : taps_inside(cx, w, i, lw_ix_v(idx[2 + i]), lo, hi);
    count = lw_ix_bin(cx, LW_IX_MUL, count, taps);
  }
  return count;
}

static o2m_status finish_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                              void *user) {
  const pool_plan *p = user;
  o2m_dtype dts[2] = {p->acc, p->acc};
  MlirValue v = args[0];
  if (strcmp(cx->node->op_type, "AveragePool") == 0) {
    MlirValue count = lw_ix_value(cx, tap_count(cx, p, idx));
    MlirValue n = lw_op1(cx, "arith.index_cast", 1, &count, lw_type(cx, "i64"), NULL);
    MlirValue div[2] = {v, lw_scalar_cast(cx, n, O2M_DT_INT64, p->acc)};
    v = lw_scalar_op(cx, "Div", dts, div);
  } else if (p->p == 2) {
    v = lw_scalar_op(cx, "Sqrt", dts, &v);
  } else if (p->p != 1) {
    MlirValue pw[2] = {v, lw_scalar_const(cx, mlirValueGetType(v), 1.0 / p->p)};
    v = lw_scalar_op(cx, "Pow", dts, pw);
  }
  if (!mlirValueIsNull(v)) v = lw_scalar_cast(cx, v, p->acc, p->dtype);
  *out = v;
  return lw_value_status(cx, v);
}

static o2m_status lower_sum_pool(lw_ctx *cx, pool_plan *p, MlirValue x) {
  if (!lw_dtype_is_float(p->dtype)) return lw_unsupported(cx, "%s of %s", cx->node->op_type, o2m_dtype_name(p->dtype));
  p->include_pad = lw_attr_int(cx, "count_include_pad", 0) != 0;
  p->p = (float)lw_attr_int(cx, "p", 2);
  x = lw_window_pad(cx, x, &p->win, lw_const_scalar(cx, p->dtype, 0));
  MlirValue zero = lw_const_scalar(cx, p->acc, 0), sum, y;
  o2m_status s = pool_generic(cx, p, x, 1, &zero, sum_body, &sum);
  if (s) return s;
  int rank = 2 + p->win.n;
  lw_ix dims[2 + LW_MAX_SPATIAL];
  for (int k = 0; k < rank; k++) dims[k] = lw_ix_dim(cx, sum, k);
  int64_t sizes[2 + LW_MAX_SPATIAL];
  for (int k = 0; k < rank; k++) sizes[k] = lw_ix_is_const(dims[k]) ? dims[k].c : -1;
  MlirType type = lw_tensor_type_of(cx, p->dtype, rank, sizes);
  MlirAttribute map = lw_identity_map(cx, rank);
  s = lw_index_generic(cx, type, dims, 1, &sum, &map, finish_body, p, &y);
  return s ? s : lw_set_out(cx, 0, y);
}

/* ---- the lowerings ------------------------------------------------------------------ */

static o2m_status lower_pool(lw_ctx *cx, o2m_status (*kind)(lw_ctx *, pool_plan *, MlirValue)) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_unsupported(cx, "the input is not a ranked tensor");
  pool_plan p;
  memset(&p, 0, sizeof(p));
  p.dtype = lw_in_type(cx, 0)->elem;
  p.acc = lw_accumulator_dtype(p.dtype);
  if (mlirTypeIsNull(lw_elem_type(cx, p.dtype))) return lw_unsupported(cx, "input of %s", o2m_dtype_name(p.dtype));
  o2m_status s = lw_window_read(cx, x, NULL, &p.win);
  if (s) return s;
  for (int k = 0; k < 2 + p.win.n; k++) p.sizes[k] = lw_ix_dim(cx, x, k);
  return kind(cx, &p, x);
}

o2m_status lw_lower_max_pool(lw_ctx *cx) { return lower_pool(cx, lower_max); }
o2m_status lw_lower_sum_pool(lw_ctx *cx) { return lower_pool(cx, lower_sum_pool); }
