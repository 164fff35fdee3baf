/* tosa_nn.c - TOSA lowerings of the neural-net family (rows in
 * tosa_nn.def): MatMul (tosa.matmul for floats, multiply and sum for
 * int32/int64), Conv (1-D, 2-D, 3-D; grouped and depthwise), ConvTranspose
 * (1-D, 2-D, grouped), MaxPool, AveragePool and LpPool (1-D, 2-D, 3-D) and
 * Resize (nearest and linear where TOSA's rational scale and offset give
 * ONNX's sample positions exactly).
 *
 * Layout: ONNX is channels-first, TOSA channels-last: activations are
 * transposed to N,spatial...,C and back; 1-D ops run as 2-D ones over a
 * unit height. Weights known at import are permuted into TOSA's order
 * (OHWI, KH,KW,C,M, ...) as new constants; other weights get a transpose.
 *
 * Window geometry (static sizes only): pads from pads/auto_pad/ceil_mode
 * as ONNX's reference; TOSA wants in + pad_begin + pad_end - extent to be
 * a multiple of the stride, so the end pad is set to exactly what the
 * last window needs (trimmed, grown by ceil_mode, or the input's unused
 * tail sliced off).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit/tosa/tosa_kit.h"
#include "infer/infer.h"

enum { MAX_SPATIAL = LW_FIXED_MAX_SPATIAL };

static MlirValue null_value(void) { return (MlirValue){NULL}; }

/* Refuses a node with a dynamic dim in any present input or output. */
static o2m_status check_static(lw_ctx *cx) {
  for (int i = 0; i < cx->node->n_inputs; i++) {
    const o2m_type *t = lw_in_type(cx, i);
    if (!lw_in_present(cx, i) || t->kind != O2M_TYPE_TENSOR) continue;
    if (t->rank < 0) return lw_unsupported(cx, "input %d has no known rank", i);
    for (int k = 0; k < t->rank; k++)
      if (t->dims[k].size < 0) return lw_unsupported(cx, "dim %d of input %d is dynamic (TOSA lowering needs static shapes)", k, i);
  }
  for (int i = 0; i < cx->node->n_outputs; i++) {
    const o2m_type *t = lw_out_type(cx, i);
    if (!lw_out_present(cx, i) || t->kind != O2M_TYPE_TENSOR) continue;
    for (int k = 0; k < t->rank; k++)
      if (t->dims[k].size < 0) return lw_unsupported(cx, "dim %d of output %d is dynamic (TOSA lowering needs static shapes)", k, i);
  }
  return O2M_OK;
}

/* Input 0 a float (or, with ints_ok, a signed 8/16-bit integer) tensor. */
static o2m_status check_float_input(lw_ctx *cx, int ints_ok) {
  o2m_status s = tw_check_node_dtypes(cx, 0);
  if (s) return s;
  o2m_dtype d = lw_in_type(cx, 0)->elem;
  if (lw_dtype_is_float(d) || (ints_ok && (d == O2M_DT_INT8 || d == O2M_DT_INT16))) return O2M_OK;
  return lw_unsupported(cx, "no TOSA lowering for %s inputs", o2m_dtype_name(d));
}

/* ---- small TOSA builders -------------------------------------------------- */



/* tosa.pad with `value` by begin[k]/end[k] on every dim k. */
static MlirValue pad(lw_ctx *cx, MlirValue v, const int64_t *begin, const int64_t *end, double value) {
  int rank = tw_rank(v), any = 0;
  int64_t pads[2 * TW_MAX_RANK], sizes[TW_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    pads[2 * k] = begin[k], pads[2 * k + 1] = end[k];
    sizes[k] = tw_size(v, k) + begin[k] + end[k];
    any |= begin[k] || end[k];
  }
  if (!any) return v;
  MlirValue ops[3] = {v, tw_shape(cx, 2 * rank, pads), tw_splat(cx, tw_elem(v), 1, value)};
  return lw_op1(cx, "tosa.pad", 3, ops, tw_tensor(cx, tw_elem(v), rank, sizes), NULL);
}

/* tosa.tile of v (already of the target rank) up to sizes. */
static MlirValue tile_to(lw_ctx *cx, MlirValue v, int rank, const int64_t *sizes) {
  int64_t mult[TW_MAX_RANK];
  int any = 0;
  for (int k = 0; k < rank; k++) {
    mult[k] = tw_size(v, k) == sizes[k] ? 1 : sizes[k];
    any |= mult[k] != 1;
  }
  if (!any) return v;
  MlirValue ops[2] = {v, tw_shape(cx, rank, mult)};
  return lw_op1(cx, "tosa.tile", 2, ops, tw_tensor(cx, tw_elem(v), rank, sizes), NULL);
}

/* A tosa.const of zeros of n elements. */
static MlirValue zeros(lw_ctx *cx, MlirType elem, int64_t n) {
  MlirType type = tw_tensor(cx, elem, 1, &n);
  MlirAttribute zero = mlirDenseElementsAttrSplatGet(
      type, mlirTypeIsAFloat(elem) ? mlirFloatAttrDoubleGet(cx->mc, elem, 0) : mlirIntegerAttrGet(elem, 0));
  MlirNamedAttribute attr = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, mlirStringRefCreateFromCString("values")), zero);
  MlirOperation op = lw_op_attrs(cx, "tosa.const", 0, NULL, 1, &type, 1, &attr, 0);
  return mlirOperationIsNull(op) ? null_value() : mlirOperationGetResult(op, 0);
}

/* Channels-first <-> channels-last permutations for `rank` dims. */
static void to_last_perm(int rank, int *perm) {
  perm[0] = 0;
  for (int k = 1; k < rank - 1; k++) perm[k] = k + 1;
  perm[rank - 1] = 1;
}

static void to_first_perm(int rank, int *perm) {
  perm[0] = 0, perm[1] = rank - 1;
  for (int k = 2; k < rank; k++) perm[k] = k - 1;
}

static MlirValue channels_last(lw_ctx *cx, MlirValue v) {
  int perm[TW_MAX_RANK];
  to_last_perm(tw_rank(v), perm);
  return tw_transpose(cx, v, perm);
}

static MlirValue channels_first(lw_ctx *cx, MlirValue v) {
  int perm[TW_MAX_RANK];
  if (mlirValueIsNull(v)) return v;
  to_first_perm(tw_rank(v), perm);
  return tw_transpose(cx, v, perm);
}

/* x [N, C, L] as [N, C, 1, L] for a 1-D op (x itself otherwise). */
static MlirValue as_2d(lw_ctx *cx, MlirValue x) {
  if (tw_rank(x) != 3) return x;
  int64_t sizes[4] = {tw_size(x, 0), tw_size(x, 1), 1, tw_size(x, 2)};
  return tw_reshape(cx, x, 4, sizes);
}

/* The op's result for output 0: channels-first again, unit height of a
 * 1-D op dropped. */
static o2m_status set_channels_last_out(lw_ctx *cx, MlirValue y, int onnx_rank) {
  y = channels_first(cx, y);
  if (!mlirValueIsNull(y) && onnx_rank == 3) {
    int64_t sizes[3] = {tw_size(y, 0), tw_size(y, 1), tw_size(y, 3)};
    y = tw_reshape(cx, y, 3, sizes);
  }
  return lw_set_out(cx, 0, y);
}

/* ---- weights ------------------------------------------------------------ */

MlirValue tw_as_int8(lw_ctx *cx, MlirValue v, o2m_dtype d, const tw_conv_io *io) {
  if (!io->quant || d != O2M_DT_UINT8 || mlirValueIsNull(v)) return v;
  v = tw_cast(cx, v, O2M_DT_UINT8, O2M_DT_INT32);
  v = tw_binary(cx, "tosa.add", v, tw_splat(cx, tw_elem(v), tw_rank(v), -128));
  return tw_cast(cx, v, O2M_DT_INT32, O2M_DT_INT8);
}

/* A weight in TOSA's order: input `i` (ONNX layout, first dim sliced to
 * [o_begin, o_begin + o_count)) viewed as `view` dims (same data order),
 * permuted by perm (result dim k = view dim perm[k]) and reshaped to `out`
 * dims. A known weight becomes a new constant; another one gets ops. */
static MlirValue weight(lw_ctx *cx, const tw_conv_io *io, int64_t o_begin, int64_t o_count, int rank,
                        const int64_t *view, const int *perm, const int64_t *out) {
  int i = io->w_input;
  const o2m_tensor *t = lw_in_known(cx, i);
  int64_t vdims[TW_MAX_RANK];
  for (int k = 0; k < rank; k++) vdims[k] = view[k];
  vdims[0] = o_count;
  int relaid = t && t->data && (io->quant ? o2m_dtype_bits(t->dtype) == 8 : lw_dtype_is_float(t->dtype));
  if (!relaid) {
    MlirValue w = tw_slice_axis(cx, tw_as_int8(cx, lw_in(cx, i), lw_in_type(cx, i)->elem, io), 0, o_begin, o_count);
    w = tw_transpose(cx, tw_reshape(cx, w, rank, vdims), perm);
    return tw_reshape(cx, w, rank, out);
  }
  size_t esize = (size_t)o2m_dtype_bits(t->dtype) / 8;
  int64_t count = 1, vstride[TW_MAX_RANK], pdims[TW_MAX_RANK], idx[TW_MAX_RANK];
  for (int k = rank - 1; k >= 0; k--) vstride[k] = count, count *= vdims[k];
  for (int k = 0; k < rank; k++) pdims[k] = vdims[perm[k]], idx[k] = 0;
  uint8_t *data = o2m_arena_alloc(&cx->scratch, (size_t)count * esize + 1);
  o2m_tensor *w = o2m_arena_alloc(&cx->scratch, sizeof(o2m_tensor));
  int64_t *dims = o2m_arena_array(&cx->scratch, (size_t)rank, sizeof(int64_t));
  if (!data || !w || !dims) return null_value();
  const uint8_t *src = t->data + (size_t)(o_begin * vstride[0]) * esize;
  for (int64_t n = 0; n < count; n++) {
    int64_t at = 0;
    for (int k = 0; k < rank; k++) at += idx[k] * vstride[perm[k]];
    memcpy(data + (size_t)n * esize, src + (size_t)at * esize, esize);
    if (io->w_shift) data[n] = (uint8_t)(data[n] + io->w_shift); /* uint8 moved into int8 */
    for (int k = rank - 1; k >= 0 && ++idx[k] == pdims[k]; k--) idx[k] = 0;
  }
  for (int k = 0; k < rank; k++) dims[k] = out[k];
  *w = *t;
  if (io->w_shift) w->dtype = O2M_DT_INT8;
  w->name = NULL, w->rank = rank, w->dims = dims, w->count = count, w->data = data;
  w->nbytes = (size_t)count * esize, w->external = NULL;
  return lw_const_tensor(cx, w);
}

/* The bias sliced to [begin, begin + count), zeros when missing. */
static MlirValue bias(lw_ctx *cx, const tw_conv_io *io, int64_t begin, int64_t count, MlirType elem) {
  if (io->b_input < 0 || !lw_in_present(cx, io->b_input)) return zeros(cx, elem, count);
  return tw_slice_axis(cx, lw_in(cx, io->b_input), 0, begin, count);
}

/* ---- window geometry ----------------------------------------------------- */

typedef lw_fixed_window window;

/* The window of a 1-D op as a 2-D one with a unit leading axis. */
static void window_2d(window *w) {
  if (w->n != 1) return;
  int64_t *fields[] = {w->in, w->k, w->s, w->d, w->out, w->pb, w->pe, w->reach};
  int64_t unit[] = {1, 1, 1, 1, 1, 0, 0, 0};
  for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) fields[f][1] = fields[f][0], fields[f][0] = unit[f];
  w->n = 2;
}

/* x (channels-last) with the unused tail of every axis whose TOSA end pad
 * is negative sliced off; those end pads become 0. */
static MlirValue fit_input(lw_ctx *cx, MlirValue x, window *w) {
  for (int i = 0; i < w->n; i++) {
    if (w->reach[i] >= 0) continue;
    x = tw_slice_axis(cx, x, 1 + i, 0, w->in[i] + w->reach[i]);
    w->in[i] += w->reach[i], w->reach[i] = 0;
  }
  return x;
}

/* "name = array<i64: v0, v1, ...>" appended to buf. */
static size_t array_attr(char *buf, size_t size, size_t len, const char *name, int n, const int64_t *v) {
  len += (size_t)snprintf(buf + len, size - len, "%s%s = array<i64", len ? ", " : "", name);
  for (int i = 0; i < n; i++) len += (size_t)snprintf(buf + len, size - len, "%s %lld", i ? "," : ":", (long long)v[i]);
  return len + (size_t)snprintf(buf + len, size - len, ">");
}

/* The pads of w in TOSA's order: (begin, end) per axis. */
static void tosa_pads(const window *w, int64_t *pads) {
  for (int i = 0; i < w->n; i++) pads[2 * i] = w->pb[i], pads[2 * i + 1] = w->reach[i];
}

/* ---- MatMul --------------------------------------------------------------- */

/* Integer MatMul (TOSA's matmul is for 8/16-bit quantized integers):
 * a [..., M, K, 1] * b [..., 1, K, N] summed over K. */
static MlirValue int_matmul(lw_ctx *cx, MlirValue a, MlirValue b) {
  int ra = tw_rank(a), rb = tw_rank(b);
  int64_t sa[TW_MAX_RANK], sb[TW_MAX_RANK];
  for (int k = 0; k < ra; k++) sa[k] = tw_size(a, k);
  for (int k = 0; k < rb; k++) sb[k] = tw_size(b, k);
  sa[ra] = 1;
  sb[rb] = sb[rb - 1], sb[rb - 1] = sb[rb - 2], sb[rb - 2] = 1;
  MlirValue p = tw_mul(cx, tw_reshape(cx, a, ra + 1, sa), tw_reshape(cx, b, rb + 1, sb));
  return mlirValueIsNull(p) ? p : tw_reduce(cx, "tosa.reduce_sum", p, tw_rank(p) - 2);
}

o2m_status tw_lower_matmul(lw_ctx *cx) {
  o2m_status s = tw_check_node_dtypes(cx, 0);
  if (s || (s = check_static(cx))) return s;
  o2m_dtype dt = lw_in_type(cx, 0)->elem;
  MlirValue a = lw_in(cx, 0), b = lw_in(cx, 1);
  int ra = tw_rank(a), rb = tw_rank(b);
  if (ra < 1 || rb < 1 || ra + 1 > TW_MAX_RANK || rb + 1 > TW_MAX_RANK) return lw_unsupported(cx, "operands of rank %d and %d", ra, rb);
  /* numpy rules: a 1-D a is a row, a 1-D b a column (dropped afterwards) */
  if (ra == 1) a = tw_to_rank(cx, a, 2), ra = 2;
  if (rb == 1) {
    int64_t col[2] = {tw_size(b, 0), 1};
    b = tw_reshape(cx, b, 2, col), rb = 2;
  }
  int64_t M = tw_size(a, ra - 2), K = tw_size(a, ra - 1), N = tw_size(b, rb - 1);
  if (tw_size(b, rb - 2) != K) return lw_error(cx, "inner dims %lld and %lld differ", (long long)K, (long long)tw_size(b, rb - 2));
  int nb = (ra > rb ? ra : rb) - 2;
  int64_t batch[TW_MAX_RANK], batch_a = 1, batch_b = 1, total = 1;
  for (int k = 0; k < nb; k++) {
    int ka = k - (nb - (ra - 2)), kb = k - (nb - (rb - 2));
    int64_t da = ka >= 0 ? tw_size(a, ka) : 1, db = kb >= 0 ? tw_size(b, kb) : 1;
    if (da != db && da != 1 && db != 1) return lw_error(cx, "batch dims %lld and %lld do not broadcast", (long long)da, (long long)db);
    batch[k] = da == 1 ? db : da;
    batch_a *= da, batch_b *= db, total *= batch[k];
  }
  MlirValue y;
  if (!lw_dtype_is_float(dt)) {
    if (dt != O2M_DT_INT32 && dt != O2M_DT_INT64) return lw_unsupported(cx, "no TOSA lowering for %s MatMul", o2m_dtype_name(dt));
    y = int_matmul(cx, a, b);
  } else {
    MlirValue ops[4];
    int64_t sa[3], sb[3], sy[3];
    if (batch_b == 1) { /* b shared by every batch: fold a's batch into its rows */
      sa[0] = 1, sa[1] = batch_a * M, sa[2] = K, sb[0] = 1;
    } else {
      int64_t full[TW_MAX_RANK];
      for (int k = 0; k < nb; k++) full[k] = batch[k];
      full[nb] = M, full[nb + 1] = K;
      a = tile_to(cx, tw_to_rank(cx, a, nb + 2), nb + 2, full);
      full[nb] = K, full[nb + 1] = N;
      b = tile_to(cx, tw_to_rank(cx, b, nb + 2), nb + 2, full);
      sa[0] = total, sa[1] = M, sa[2] = K, sb[0] = total;
    }
    sb[1] = K, sb[2] = N, sy[0] = sa[0], sy[1] = sa[1], sy[2] = N;
    ops[0] = tw_reshape(cx, a, 3, sa), ops[1] = tw_reshape(cx, b, 3, sb);
    ops[2] = ops[3] = tw_zero_point(cx, tw_elem(a));
    y = lw_op1(cx, "tosa.matmul", 4, ops, tw_tensor(cx, tw_elem(a), 3, sy), NULL);
  }
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: MatMul was not built");
  const o2m_type *out = lw_out_type(cx, 0);
  int64_t sizes[TW_MAX_RANK];
  for (int k = 0; k < out->rank; k++) sizes[k] = out->dims[k].size;
  return lw_set_out(cx, 0, tw_reshape(cx, y, out->rank, sizes));
}

/* ---- Conv ----------------------------------------------------------------- */

/* One (grouped) convolution of channels-last x [N, spatial..., Cg] by
 * output channels [o, o + count) of the weight: conv2d or conv3d. */
static MlirValue conv_group(lw_ctx *cx, const tw_conv_io *io, MlirValue x, const window *w, int64_t o,
                            int64_t count) {
  int rank = w->n + 2;
  int64_t view[TW_MAX_RANK], out[TW_MAX_RANK], y[TW_MAX_RANK], pads[2 * MAX_SPATIAL];
  int perm[TW_MAX_RANK];
  view[0] = count, view[1] = lw_in_type(cx, io->w_input)->dims[1].size;
  for (int i = 0; i < w->n; i++) view[2 + i] = w->k[i];
  to_last_perm(rank, perm);
  for (int k = 0; k < rank; k++) out[k] = view[perm[k]];
  MlirType elem = io->quant ? mlirIntegerTypeGet(cx->mc, 32) : tw_elem(x);
  MlirValue ops[5] = {x, weight(cx, io, o, count, rank, view, perm, out), bias(cx, io, o, count, elem),
                      io->quant ? io->x_zp : tw_zero_point(cx, elem), io->quant ? io->w_zp : tw_zero_point(cx, elem)};
  y[0] = tw_size(x, 0), y[rank - 1] = count;
  for (int i = 0; i < w->n; i++) y[1 + i] = w->out[i];
  tosa_pads(w, pads);
  char attrs[384];
  size_t len = (size_t)snprintf(attrs, sizeof(attrs), "acc_type = %s", io->quant ? "i32" : "f32");
  len = array_attr(attrs, sizeof(attrs), len, "dilation", w->n, w->d);
  len = array_attr(attrs, sizeof(attrs), len, "pad", 2 * w->n, pads);
  array_attr(attrs, sizeof(attrs), len, "stride", w->n, w->s);
  return lw_op1(cx, w->n == 3 ? "tosa.conv3d" : "tosa.conv2d", 5, ops, tw_tensor(cx, elem, rank, y), attrs);
}

/* Depthwise: weight [M, 1, KH, KW] -> [KH, KW, C, M / C]. */
static MlirValue conv_depthwise(lw_ctx *cx, const tw_conv_io *io, MlirValue x, const window *w, int64_t C,
                                int64_t M) {
  int64_t view[4] = {M, 1, w->k[0], w->k[1]}, out[4] = {w->k[0], w->k[1], C, M / C}, y[4], pads[4];
  int perm[4] = {2, 3, 1, 0};
  MlirType elem = io->quant ? mlirIntegerTypeGet(cx->mc, 32) : tw_elem(x);
  MlirValue ops[5] = {x, weight(cx, io, 0, M, 4, view, perm, out), bias(cx, io, 0, M, elem),
                      io->quant ? io->x_zp : tw_zero_point(cx, elem), io->quant ? io->w_zp : tw_zero_point(cx, elem)};
  y[0] = tw_size(x, 0), y[1] = w->out[0], y[2] = w->out[1], y[3] = M;
  tosa_pads(w, pads);
  char attrs[384];
  size_t len = (size_t)snprintf(attrs, sizeof(attrs), "acc_type = %s", io->quant ? "i32" : "f32");
  len = array_attr(attrs, sizeof(attrs), len, "dilation", 2, w->d);
  len = array_attr(attrs, sizeof(attrs), len, "pad", 4, pads);
  array_attr(attrs, sizeof(attrs), len, "stride", 2, w->s);
  return lw_op1(cx, "tosa.depthwise_conv2d", 5, ops, tw_tensor(cx, elem, 4, y), attrs);
}

/* The convolution of input 0 (ONNX layout) as io reads it, channels-last
 * (y [N, spatial..., M]); 1-D convolutions over a unit height. */
o2m_status tw_conv_channels_last(lw_ctx *cx, const tw_conv_io *io, MlirValue x, MlirValue *out) {
  const o2m_type *wv = lw_in_type(cx, io->w_input); /* its value is read by weight() */
  int rank = tw_rank(x);
  if (rank < 3 || rank > 5 || wv->rank != rank) return lw_unsupported(cx, "Conv of rank %d", rank);
  int64_t kernel[MAX_SPATIAL], C = tw_size(x, 1), M = wv->dims[0].size, Cg = wv->dims[1].size;
  int64_t group = lw_attr_int(cx, "group", 1);
  for (int i = 0; i < rank - 2; i++) kernel[i] = wv->dims[2 + i].size;
  if (group < 1 || C != Cg * group || M % group) return lw_error(cx, "group %lld does not divide the channels", (long long)group);
  window w;
  o2m_status s = lw_read_fixed_window(cx, x, kernel, &w);
  if (s) return s;
  window_2d(&w);
  MlirValue xl = fit_input(cx, channels_last(cx, as_2d(cx, x)), &w);
  if (group > 1 && Cg == 1 && w.n == 2) {
    *out = conv_depthwise(cx, io, xl, &w, C, M);
  } else {
    MlirValue *parts = o2m_arena_array(&cx->scratch, (size_t)group, sizeof(MlirValue));
    if (!parts) return lw_error(cx, "out of memory");
    for (int64_t g = 0; g < group; g++) {
      MlirValue xg = group > 1 ? tw_slice_axis(cx, xl, w.n + 1, g * Cg, Cg) : xl;
      parts[g] = conv_group(cx, io, xg, &w, g * (M / group), M / group);
      if (mlirValueIsNull(parts[g])) return lw_error(cx, "internal: Conv was not built");
    }
    *out = tw_concat(cx, (int)group, parts, w.n + 1);
  }
  return mlirValueIsNull(*out) ? lw_error(cx, "internal: Conv was not built") : O2M_OK;
}

/* The channels-last result y of an op on a rank-`onnx_rank` input, as
 * output 0. */
o2m_status tw_set_channels_last_out(lw_ctx *cx, MlirValue y, int onnx_rank) {
  return set_channels_last_out(cx, y, onnx_rank);
}

o2m_status tw_lower_conv(lw_ctx *cx) {
  o2m_status s = check_float_input(cx, 0);
  if (s || (s = check_static(cx))) return s;
  tw_conv_io io = {1, 2, 0, 0, {NULL}, {NULL}};
  MlirValue x = lw_in(cx, 0), y;
  if ((s = tw_conv_channels_last(cx, &io, x, &y))) return s;
  return set_channels_last_out(cx, y, tw_rank(x));
}

/* ---- ConvTranspose -------------------------------------------------------- */

/* tosa.transpose_conv2d computes out[iy * stride + out_pad_begin + ky]
 * (no kernel flip, no dilation): ONNX's crop of the full transposed
 * convolution is a negative begin pad. */
o2m_status tw_lower_conv_transpose(lw_ctx *cx) {
  o2m_status s = check_float_input(cx, 0);
  if (s || (s = check_static(cx))) return s;
  tw_conv_io io = {1, 2, 0, 0, {NULL}, {NULL}};
  MlirValue x = lw_in(cx, 0);
  const o2m_type *wv = lw_in_type(cx, 1); /* its value is read by weight() */
  int rank = tw_rank(x), n = rank - 2, mode;
  if ((rank != 3 && rank != 4) || wv->rank != rank)
    return lw_unsupported(cx, "ConvTranspose of rank %d (TOSA's transpose_conv2d is 2-D)", rank);
  int64_t k[2], st[2], dil[2], pads[4], out_pad[2], C = wv->dims[0].size, M = wv->dims[1].size;
  int64_t group = lw_attr_int(cx, "group", 1);
  if (group < 1 || C % group || tw_size(x, 1) != C) return lw_error(cx, "group %lld does not divide the channels", (long long)group);
  if ((s = lw_window_ints(cx, "kernel_shape", n, 0, k)) || (s = lw_window_ints(cx, "strides", n, 1, st)) ||
      (s = lw_window_ints(cx, "dilations", n, 1, dil)) || (s = lw_window_ints(cx, "pads", 2 * n, 0, pads)) ||
      (s = lw_window_ints(cx, "output_padding", n, 0, out_pad)) || (s = lw_read_auto_pad(cx, &mode)))
    return s;
  const int64_t *shape = NULL;
  int n_shape = lw_attr_ints(cx, "output_shape", &shape);
  if (n_shape >= 0 && n_shape != n && n_shape != n + 2) return lw_error(cx, "output_shape has %d values", n_shape);
  int64_t tk[2] = {1, 1}, ts[2] = {1, 1}, tpad[4] = {0, 0, 0, 0}, y[4] = {tw_size(x, 0), 1, 1, M};
  for (int i = 0; i < n; i++) {
    int a = i + 2 - n; /* the TOSA axis: 1-D runs along width */
    if (dil[i] != 1) return lw_unsupported(cx, "dilated ConvTranspose (TOSA's transpose_conv2d has no dilation)");
    if (!k[i]) k[i] = wv->dims[2 + i].size;
    int64_t in = tw_size(x, 2 + i), full = st[i] * (in - 1) + out_pad[i] + k[i], out, pb;
    out = n_shape >= 0 ? shape[n_shape - n + i] : -1;
    if (mode == LW_SAME_UPPER || mode == LW_SAME_LOWER) {
      if (n_shape < 0) out = in * st[i];
      int64_t total = full - out;
      pb = mode == LW_SAME_UPPER ? total / 2 : total - total / 2;
    } else {
      pb = mode == LW_NOTSET ? pads[i] : 0;
      if (n_shape < 0) out = full - pb - (mode == LW_NOTSET ? pads[n + i] : 0);
    }
    tk[a] = k[i], ts[a] = st[i], y[1 + a] = out;
    tpad[2 * a] = -pb, tpad[2 * a + 1] = out - (in - 1) * st[i] - k[i] + pb;
  }
  const o2m_type *yt = lw_out_type(cx, 0);
  for (int i = 0; i < n; i++)
    if (yt->kind == O2M_TYPE_TENSOR && yt->rank == rank && yt->dims[2 + i].size != y[1 + i + 2 - n])
      return lw_error(cx, "internal: spatial axis %d has size %lld, inferred %lld", i, (long long)y[1 + i + 2 - n],
                      (long long)yt->dims[2 + i].size);
  /* per group of Cg input channels: weight [Cg, M, KH, KW] -> [M, KH, KW, Cg] */
  int64_t Cg = C / group, view[4] = {Cg, M, tk[0], tk[1]}, wout[4] = {M, tk[0], tk[1], Cg};
  int perm[4] = {1, 2, 3, 0};
  MlirValue xl = channels_last(cx, as_2d(cx, x));
  MlirType elem = tw_elem(xl);
  char attrs[256];
  size_t len = (size_t)snprintf(attrs, sizeof(attrs), "acc_type = f32");
  len = array_attr(attrs, sizeof(attrs), len, "out_pad", 4, tpad);
  array_attr(attrs, sizeof(attrs), len, "stride", 2, ts);
  MlirValue *parts = o2m_arena_array(&cx->scratch, (size_t)group, sizeof(MlirValue));
  if (!parts) return lw_error(cx, "out of memory");
  for (int64_t g = 0; g < group; g++) {
    MlirValue ops[5] = {tw_slice_axis(cx, xl, 3, g * Cg, Cg), weight(cx, &io, g * Cg, Cg, 4, view, perm, wout),
                        bias(cx, &io, g * M, M, elem), tw_zero_point(cx, elem), tw_zero_point(cx, elem)};
    parts[g] = lw_op1(cx, "tosa.transpose_conv2d", 5, ops, tw_tensor(cx, elem, 4, y), attrs);
    if (mlirValueIsNull(parts[g])) return lw_error(cx, "internal: ConvTranspose was not built");
  }
  return set_channels_last_out(cx, tw_concat(cx, (int)group, parts, 3), rank);
}

/* ---- MaxPool, AveragePool ---------------------------------------------------- */

/* tosa.max_pool2d or avg_pool2d of channels-last x [N, H, W, C] with
 * the window of axes i0, i0 + 1 of w. */
static MlirValue pool2d(lw_ctx *cx, int is_max, MlirValue x, const window *w, int i0) {
  int64_t pads[4] = {w->pb[i0], w->reach[i0], w->pb[i0 + 1], w->reach[i0 + 1]};
  int64_t y[4] = {tw_size(x, 0), w->out[i0], w->out[i0 + 1], tw_size(x, 3)};
  MlirType elem = tw_elem(x);
  char attrs[384];
  size_t len = (size_t)snprintf(attrs, sizeof(attrs), "%s", is_max ? "" : "acc_type = f32");
  len = array_attr(attrs, sizeof(attrs), len, "kernel", 2, w->k + i0);
  len = array_attr(attrs, sizeof(attrs), len, "pad", 4, pads);
  array_attr(attrs, sizeof(attrs), len, "stride", 2, w->s + i0);
  MlirValue ops[3] = {x, tw_zero_point(cx, elem), tw_zero_point(cx, elem)};
  return lw_op1(cx, is_max ? "tosa.max_pool2d" : "tosa.avg_pool2d", is_max ? 1 : 3, ops,
                tw_tensor(cx, elem, 4, y), attrs);
}

/* 1-D pools run over a unit height; 3-D ones as a pool over H, W (depth
 * folded into the batch) and then one over D (H, W flattened): max is
 * separable, and so is the average, whose count of valid elements is a
 * product over the axes. */
enum { POOL_MAX, POOL_AVG, POOL_LP };

/* LpPool's |x|^p, and the p-th root of its sums. */
static MlirValue lp_power(lw_ctx *cx, MlirValue x, int64_t p) {
  if (p == 1) return tw_unary(cx, "tosa.abs", x);
  if (p == 2) return tw_mul(cx, x, x);
  return tw_binary(cx, "tosa.pow", tw_unary(cx, "tosa.abs", x), tw_splat(cx, tw_elem(x), tw_rank(x), (double)p));
}

static MlirValue lp_root(lw_ctx *cx, MlirValue sum, int64_t p) {
  if (p == 1) return sum;
  return tw_binary(cx, "tosa.pow", sum, tw_splat(cx, tw_elem(sum), tw_rank(sum), 1.0 / (double)p));
}

static o2m_status lower_pool(lw_ctx *cx, int kind) {
  int is_max = kind == POOL_MAX;
  int64_t p = lw_attr_int(cx, "p", 2);
  if (kind == POOL_LP && p < 1) return lw_error(cx, "LpPool's p is %lld", (long long)p);
  o2m_status s = check_float_input(cx, is_max);
  if (s || (s = check_static(cx))) return s;
  MlirValue x = lw_in(cx, 0);
  int rank = tw_rank(x);
  if (rank < 3 || rank > 5) return lw_unsupported(cx, "pooling over %d spatial axes", rank - 2);
  if (is_max && lw_out_present(cx, 1)) return lw_unsupported(cx, "MaxPool's Indices output");
  window w;
  if ((s = lw_read_fixed_window(cx, x, NULL, &w))) return s;
  for (int i = 0; i < w.n; i++)
    if (w.d[i] != 1) return lw_unsupported(cx, "dilated pooling (TOSA's pools have no dilation)");
  window_2d(&w);
  MlirValue xl = channels_last(cx, as_2d(cx, x));
  if (kind == POOL_LP) xl = lp_power(cx, xl, p);
  if (kind == POOL_LP || (kind == POOL_AVG && lw_attr_int(cx, "count_include_pad", 0))) {
    /* the pads count: explicit zeros; TOSA's own pads only for ceil_mode
     * (LpPool: none, its sums are averages times the kernel size) */
    int64_t begin[5] = {0}, end[5] = {0};
    for (int i = 0; i < w.n; i++) {
      int64_t e = kind == POOL_LP && w.reach[i] > w.pe[i] ? w.reach[i] : w.pe[i];
      begin[1 + i] = w.pb[i], end[1 + i] = e;
      w.in[i] += w.pb[i] + e, w.reach[i] -= e, w.pb[i] = 0;
    }
    xl = pad(cx, xl, begin, end, 0);
  }
  xl = fit_input(cx, xl, &w);
  for (int i = 0; i < w.n; i++)
    if (w.pb[i] >= w.k[i] || w.reach[i] >= w.k[i]) return lw_unsupported(cx, "pads as large as the kernel (TOSA's pools need them smaller)");
  int64_t N = tw_size(xl, 0), C = tw_size(xl, w.n + 1);
  if (w.n == 3) {
    int64_t folded[4] = {N * w.in[0], w.in[1], w.in[2], C};
    MlirValue hw = pool2d(cx, is_max, tw_reshape(cx, xl, 4, folded), &w, 1);
    int64_t flat[4] = {N, w.in[0], w.out[1] * w.out[2], C}, y[5] = {N, w.out[0], w.out[1], w.out[2], C};
    window wd = w; /* the D pool: axes (D, 1) */
    wd.k[1] = wd.s[1] = 1, wd.pb[1] = wd.reach[1] = 0, wd.out[1] = flat[2];
    xl = tw_reshape(cx, pool2d(cx, is_max, tw_reshape(cx, hw, 4, flat), &wd, 0), 5, y);
  } else {
    xl = pool2d(cx, is_max, xl, &w, 0);
  }
  if (kind == POOL_LP) {
    double taps = 1;
    for (int i = 0; i < w.n; i++) taps *= (double)w.k[i];
    xl = lp_root(cx, tw_mul(cx, xl, tw_splat(cx, tw_elem(xl), tw_rank(xl), taps)), p);
  }
  return set_channels_last_out(cx, xl, rank);
}

o2m_status tw_lower_max_pool(lw_ctx *cx) { return lower_pool(cx, POOL_MAX); }
o2m_status tw_lower_average_pool(lw_ctx *cx) { return lower_pool(cx, POOL_AVG); }
o2m_status tw_lower_lp_pool(lw_ctx *cx) { return lower_pool(cx, POOL_LP); }

/* ---- Resize ------------------------------------------------------------------ */

/* TOSA samples output index o of an axis at input position
 * (o * scale_d + offset) / scale_n, rounding halves up in nearest mode and
 * clamping to the edges; ONNX's coordinate transforms of a rational scale
 * n / d are exactly that for asymmetric, half_pixel, pytorch_half_pixel
 * and align_corners, and its nearest modes are shifts of the offset. */
typedef struct resize_axis {
  int64_t scale_n, scale_d, offset, border;
} resize_axis;

static const char *const coord_modes[] = {"asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners"};
enum { CT_ASYMMETRIC, CT_HALF_PIXEL, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_COUNT };
static const char *const nearest_modes[] = {"round_prefer_ceil", "round_prefer_floor", "floor", "ceil"};
enum { NM_PREFER_CEIL, NM_PREFER_FLOOR, NM_FLOOR, NM_CEIL, NM_COUNT };

static int find_name(const char *const *names, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], s) == 0) return i;
  return -1;
}

/* scale as n / d with d <= 1024: exactly, or within `tol` relative. */
static int as_ratio(double scale, double tol, int64_t *n, int64_t *d) {
  for (int64_t q = 1; q <= 1024; q++) {
    double p = round(scale * (double)q);
    if (p >= 1 && fabs(p / (double)q - scale) <= tol * scale) {
      *n = (int64_t)p, *d = q;
      return 1;
    }
  }
  return 0;
}

/* The TOSA sampling of an axis resized by n / d from `in` to `out`. ONNX's
 * align_corners divides by the resized length in * n / d minus 1 (not
 * out - 1), as does pytorch_half_pixel's test for a single sample. */
static void resize_params(int coord, int nearest, int64_t n, int64_t d, int64_t in, int64_t out, resize_axis *a) {
  a->scale_n = n, a->scale_d = d, a->offset = 0;
  if (coord == CT_ALIGN_CORNERS && in * n > d) a->scale_n = in * n - d, a->scale_d = (in - 1) * d;
  if (coord == CT_HALF_PIXEL || (coord == CT_PYTORCH_HALF_PIXEL && in * n > d))
    a->scale_n = 2 * n, a->scale_d = 2 * d, a->offset = d - n;
  if (nearest >= 0 && nearest != NM_PREFER_CEIL) {
    if (a->scale_n % 2) a->scale_n *= 2, a->scale_d *= 2, a->offset *= 2;
    a->offset += nearest == NM_PREFER_FLOOR ? -1 : nearest == NM_FLOOR ? -a->scale_n / 2 : a->scale_n / 2 - 1;
  }
  a->border = (out - 1) * a->scale_d + a->offset - (in - 1) * a->scale_n;
}

/* Whether nearest sampling with `a` picks, for every output index, the
 * input index that ONNX's reference computes in double precision from the
 * scale it was given (ties may round differently once the scale is not
 * exact). */
static int nearest_matches(int coord, int nearest, double scale, int64_t in, int64_t out, const resize_axis *a) {
  double len = scale * (double)in;
  for (int64_t o = 0; o < out; o++) {
    double x = coord == CT_ASYMMETRIC         ? (double)o / scale
               : coord == CT_ALIGN_CORNERS    ? (len > 1 ? (double)o * (double)(in - 1) / (len - 1) : 0)
               : coord == CT_PYTORCH_HALF_PIXEL && len <= 1 ? 0
                                              : ((double)o + 0.5) / scale - 0.5;
    double f = floor(x), r = x - f == 0.5 ? (nearest == NM_PREFER_FLOOR ? f : f + 1) : round(x);
    double want = nearest == NM_FLOOR ? f : nearest == NM_CEIL ? ceil(x) : r;
    int64_t y = o * a->scale_d + a->offset, iy = y >= 0 ? y / a->scale_n : -((-y + a->scale_n - 1) / a->scale_n);
    int64_t got = 2 * (y - iy * a->scale_n) >= a->scale_n ? iy + 1 : iy;
    want = want < 0 ? 0 : want > (double)(in - 1) ? (double)(in - 1) : want;
    got = got < 0 ? 0 : got > in - 1 ? in - 1 : got;
    if ((double)got != want) return 0;
  }
  return 1;
}

o2m_status tw_lower_resize(lw_ctx *cx) {
  const char *mode = lw_attr_string(cx, "mode", "nearest");
  int linear = strcmp(mode, "linear") == 0;
  if (!linear && strcmp(mode, "nearest") != 0) return lw_unsupported(cx, "%s mode (TOSA resizes nearest or bilinear)", mode);
  o2m_status s = check_float_input(cx, !linear);
  if (s || (s = check_static(cx))) return s;
  MlirValue x = lw_in(cx, 0);
  if (tw_rank(x) != 4) return lw_unsupported(cx, "Resize of rank %d (TOSA resizes the two spatial axes of NCHW)", tw_rank(x));
  const char *ct = lw_attr_string(cx, "coordinate_transformation_mode", "half_pixel");
  const char *nm = lw_attr_string(cx, "nearest_mode", "round_prefer_floor");
  const char *policy = lw_attr_string(cx, "keep_aspect_ratio_policy", "stretch");
  int coord = find_name(coord_modes, CT_COUNT, ct), nearest = linear ? -1 : find_name(nearest_modes, NM_COUNT, nm);
  if (coord < 0) return lw_unsupported(cx, "coordinate_transformation_mode %s", ct);
  if (!linear && nearest < 0) return lw_error(cx, "unknown nearest_mode '%s'", nm);
  int64_t in[4], out[4], n[4], d[4], *sizes = NULL;
  double sc[4] = {1, 1, 1, 1}; /* the scales as ONNX's reference sees them */
  const o2m_type *yt = lw_out_type(cx, 0);
  for (int k = 0; k < 4; k++) in[k] = tw_size(x, k), out[k] = yt->dims[k].size, n[k] = d[k] = 1;
  int axes[4] = {0, 1, 2, 3}, n_axes = 4;
  const int64_t *av;
  int na = lw_attr_ints(cx, "axes", &av);
  if (na > 4) return lw_error(cx, "%d axes for rank 4", na);
  if (na >= 0) n_axes = na;
  for (int i = 0; i < na; i++) axes[i] = (int)(av[i] < 0 ? av[i] + 4 : av[i]);
  if (lw_in_present(cx, 3)) {
    if (lw_in_known_ints(cx, 3, &sizes) != n_axes) return lw_unsupported(cx, "sizes are not known at import");
    int pick = -1, not_larger = strcmp(policy, "not_larger") == 0;
    if (strcmp(policy, "stretch") != 0) /* one scale for every axis: the smallest or largest */
      for (int i = 0; i < n_axes; i++) {
        double r = (double)sizes[i] / (double)in[axes[i]];
        if (pick < 0 || (not_larger ? r < (double)sizes[pick] / (double)in[axes[pick]] : r > (double)sizes[pick] / (double)in[axes[pick]])) pick = i;
      }
    for (int i = 0; i < n_axes; i++) {
      int j = pick < 0 ? i : pick;
      n[axes[i]] = sizes[j], d[axes[i]] = in[axes[j]];
      sc[axes[i]] = (double)sizes[j] / (double)in[axes[j]];
    }
  } else {
    const o2m_tensor *t = lw_in_known(cx, 2);
    if (!t) return lw_unsupported(cx, "scales are not known at import");
    if (t->count != n_axes) return lw_error(cx, "scales has %lld entries for %d axes", (long long)t->count, n_axes);
    for (int i = 0; i < n_axes; i++)
      if (!as_ratio(sc[axes[i]] = o2m_tensor_get_float(t, i), 1e-6, &n[axes[i]], &d[axes[i]]))
        return lw_unsupported(cx, "scale %g is not a ratio of small integers", sc[axes[i]]);
  }
  if (lw_attr_int(cx, "antialias", 0) && linear && (n[2] < d[2] || n[3] < d[3]))
    return lw_unsupported(cx, "antialiased downscaling");
  for (int k = 0; k < 2; k++)
    if (n[k] != d[k] || out[k] != in[k]) return lw_unsupported(cx, "resizing axis %d (TOSA resizes H and W only)", k);
  resize_axis a[2];
  for (int i = 0; i < 2; i++) {
    if (coord == CT_ALIGN_CORNERS && in[2 + i] == 1 && out[2 + i] > 1)
      return lw_unsupported(cx, "align_corners from a single row");
    resize_params(coord, nearest, n[2 + i], d[2 + i], in[2 + i], out[2 + i], &a[i]);
    if (!linear && !nearest_matches(coord, nearest, sc[2 + i], in[2 + i], out[2 + i], &a[i]))
      return lw_unsupported(cx, "nearest sampling of axis %d at a scale TOSA cannot express exactly", 2 + i);
  }
  int64_t scale[4] = {a[0].scale_n, a[0].scale_d, a[1].scale_n, a[1].scale_d};
  int64_t offset[2] = {a[0].offset, a[1].offset}, border[2] = {a[0].border, a[1].border};
  int64_t y[4] = {in[0], out[2], out[3], in[1]};
  MlirValue ops[4] = {channels_last(cx, x), tw_shape(cx, 4, scale), tw_shape(cx, 2, offset), tw_shape(cx, 2, border)};
  MlirValue r = lw_op1(cx, "tosa.resize", 4, ops, tw_tensor(cx, tw_elem(x), 4, y),
                       linear ? "mode = #tosa.resize_mode<BILINEAR>" : "mode = #tosa.resize_mode<NEAREST_NEIGHBOR>");
  return set_channels_last_out(cx, r, 4);
}
