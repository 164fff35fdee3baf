/* tosa_quant.c - TOSA lowerings of the integer-quantized ops: ConvInteger
 * and MatMulInteger (int32 results) and QLinearConv and QLinearMatMul
 * (requantized), as integer TOSA: 8-bit operands in tosa.conv2d /
 * depthwise_conv2d / conv3d / matmul with their zero points and an i32
 * accumulator, then tosa.rescale by x_scale * w_scale / y_scale (per
 * tensor, or per output channel), the output zero point added and the
 * result saturated to the output type.
 *
 * TOSA has no uint8: a uint8 operand is moved into int8 by subtracting
 * 128 from its values and its zero point (the products are unchanged).
 * Zero points must be known scalars (TOSA's zero points are per tensor);
 * scales must be known. Rescale rounds half away from zero (TOSA's
 * SINGLE_ROUND on the scaled accumulator), where ONNX's reference rounds
 * half to even: results can differ by one step on exact ties.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit/tosa/tosa_kit.h"
#include "infer/infer.h"

enum { MAX_CHANNELS = 1 << 16 };

/* ---- operands -------------------------------------------------------------------- */

static int is_8bit(o2m_dtype d) { return d == O2M_DT_INT8 || d == O2M_DT_UINT8; }

/* The zero point input i of a tensor of dtype d: a known scalar (or a
 * vector of one value), moved like the tensor for uint8; 0 when absent. */
static o2m_status zero_point(lw_ctx *cx, int i, o2m_dtype d, int64_t *zp) {
  *zp = 0;
  if (lw_in_present(cx, i)) {
    int64_t *v;
    int64_t n = lw_in_known_ints(cx, i, &v);
    if (n < 1) return lw_unsupported(cx, "zero point %d is not known at import", i);
    for (int64_t k = 1; k < n; k++)
      if (v[k] != v[0]) return lw_unsupported(cx, "per-channel zero points (TOSA's are per tensor)");
    *zp = v[0];
  }
  if (d == O2M_DT_UINT8) *zp -= 128;
  return O2M_OK;
}

/* A known scale input as doubles: *n values (1 or per channel). */
static o2m_status scales(lw_ctx *cx, int i, double **values, int64_t *n) {
  const o2m_tensor *t = lw_in_known(cx, i);
  if (!t || !t->data || t->count < 1 || t->count > MAX_CHANNELS)
    return lw_unsupported(cx, "scale %d is not known at import", i);
  *values = o2m_arena_array(&cx->scratch, (size_t)t->count, sizeof(double));
  if (!*values) return lw_error(cx, "out of memory");
  for (int64_t k = 0; k < t->count; k++) {
    (*values)[k] = o2m_tensor_get_float(t, k);
    if (!((*values)[k] > 0) || !isfinite((*values)[k])) return lw_error(cx, "scale %d is not positive", i);
  }
  *n = t->count;
  return O2M_OK;
}

static MlirValue zp_tensor(lw_ctx *cx, int64_t zp) {
  return tw_splat(cx, mlirIntegerTypeGet(cx->mc, 8), 1, (double)zp);
}

/* ---- requantization ------------------------------------------------------------------ */

/* scale = multiplier * 2^-shift with a 31-bit multiplier (TOSA's scale32). */
static int multiplier_shift(double scale, int32_t *multiplier, int8_t *shift) {
  int exp;
  double mant = frexp(scale, &exp); /* scale = mant * 2^exp, mant in [0.5, 1) */
  int64_t m = llround(mant * 2147483648.0);
  if (m == 2147483648LL) m /= 2, exp++;
  int s = 31 - exp;
  while (s > 62) m >>= 1, s--;
  if (s < 2 || m <= 0) return 0;
  *multiplier = (int32_t)m;
  *shift = (int8_t)s;
  return 1;
}

/* acc (i32, channels last) * x_scale * w_scale[c] / y_scale + y_zp,
 * saturated to `out` (int8 or uint8), as that type's bits. */
static MlirValue requantize(lw_ctx *cx, MlirValue acc, double x_scale, const double *w_scale, int64_t n_w,
                            double y_scale, int64_t y_zp, o2m_dtype out) {
  int64_t channels = tw_size(acc, tw_rank(acc) - 1), n = n_w > 1 ? channels : 1;
  if (n_w > 1 && n_w != channels) return (MlirValue){NULL};
  int32_t *mult = o2m_arena_array(&cx->scratch, (size_t)n, sizeof(int32_t));
  int8_t *shift = o2m_arena_array(&cx->scratch, (size_t)n, sizeof(int8_t));
  if (!mult || !shift) return (MlirValue){NULL};
  for (int64_t c = 0; c < n; c++)
    if (!multiplier_shift(x_scale * w_scale[n_w > 1 ? c : 0] / y_scale, &mult[c], &shift[c])) return (MlirValue){NULL};
  int64_t dim[1] = {n};
  MlirType i8 = mlirIntegerTypeGet(cx->mc, 8), i32 = mlirIntegerTypeGet(cx->mc, 32);
  MlirType shift_type = tw_tensor(cx, i8, 1, dim);
  MlirNamedAttribute values = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, mlirStringRefCreateFromCString("values")),
                                                    mlirDenseElementsAttrInt8Get(shift_type, n, shift));
  MlirOperation shift_op = lw_op_attrs(cx, "tosa.const", 0, NULL, 1, &shift_type, 1, &values, 0);
  if (mlirOperationIsNull(shift_op)) return (MlirValue){NULL};
  MlirValue zero = tw_splat(cx, i32, 1, 0);
  MlirValue ops[5] = {acc, tw_const_i32(cx, (int)n, mult), mlirOperationGetResult(shift_op, 0), zero, zero};
  char attrs[256];
  snprintf(attrs, sizeof(attrs),
           "scale32 = true, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, per_channel = %s, "
           "input_unsigned = false, output_unsigned = false",
           n > 1 ? "true" : "false");
  MlirValue r = lw_op1(cx, "tosa.rescale", 5, ops, mlirValueGetType(acc), attrs);
  if (mlirValueIsNull(r)) return r;
  r = tw_binary(cx, "tosa.add", r, tw_splat(cx, i32, tw_rank(r), (double)y_zp));
  double lo = out == O2M_DT_UINT8 ? 0 : -128, hi = out == O2M_DT_UINT8 ? 255 : 127;
  r = tw_binary(cx, "tosa.maximum", r, tw_splat(cx, i32, tw_rank(r), lo));
  r = tw_binary(cx, "tosa.minimum", r, tw_splat(cx, i32, tw_rank(r), hi));
  return tw_cast(cx, r, O2M_DT_INT32, out);
}

/* ---- Conv ---------------------------------------------------------------------------- */

/* The quantized convolution of the node: x, its zero point and the
 * weight's at inputs x_i, xzp_i, w_i, wzp_i, bias b_i (-1: none). */
static o2m_status int_conv(lw_ctx *cx, int x_i, int xzp_i, int w_i, int wzp_i, int b_i, MlirValue *acc) {
  o2m_dtype xd = lw_in_type(cx, x_i)->elem, wd = lw_in_type(cx, w_i)->elem;
  if (!is_8bit(xd) || !is_8bit(wd))
    return lw_unsupported(cx, "%s x %s convolution (TOSA's are 8-bit)", o2m_dtype_name(xd), o2m_dtype_name(wd));
  int64_t xzp, wzp;
  o2m_status s = zero_point(cx, xzp_i, xd, &xzp);
  if (s || (s = zero_point(cx, wzp_i, wd, &wzp))) return s;
  tw_conv_io io = {w_i, b_i, 1, wd == O2M_DT_UINT8 ? -128 : 0, zp_tensor(cx, xzp), zp_tensor(cx, wzp)};
  MlirValue x = tw_as_int8(cx, lw_in(cx, x_i), xd, &io);
  return tw_conv_channels_last(cx, &io, x, acc);
}

o2m_status tw_lower_conv_integer(lw_ctx *cx) {
  MlirValue acc;
  o2m_status s = int_conv(cx, 0, 2, 1, 3, -1, &acc);
  return s ? s : tw_set_channels_last_out(cx, acc, tw_rank(lw_in(cx, 0)));
}

/* The requantization of QLinearConv / QLinearMatMul: scales at inputs 1
 * (per tensor), 4 (per tensor or output channel) and 6 (per tensor), the
 * output zero point at 7 (0 when absent and !zp_required). */
typedef struct qlinear {
  double *xs, *ws, *ys;
  int64_t nw, yzp;
  o2m_dtype yd;
} qlinear;

static o2m_status qlinear_params(lw_ctx *cx, int zp_required, qlinear *q) {
  int64_t nx, ny, *yzp_v;
  q->yd = lw_out_type(cx, 0)->elem;
  o2m_status s = scales(cx, 1, &q->xs, &nx);
  if (s || (s = scales(cx, 4, &q->ws, &q->nw)) || (s = scales(cx, 6, &q->ys, &ny))) return s;
  if (nx != 1 || ny != 1) return lw_unsupported(cx, "per-channel input or output scales");
  if (!is_8bit(q->yd)) return lw_unsupported(cx, "a %s output", o2m_dtype_name(q->yd));
  q->yzp = 0;
  if (!zp_required && !lw_in_present(cx, 7)) return O2M_OK;
  if (lw_in_known_ints(cx, 7, &yzp_v) != 1) return lw_unsupported(cx, "the output zero point is not a known scalar");
  q->yzp = yzp_v[0];
  return O2M_OK;
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B). */
o2m_status tw_lower_qlinear_conv(lw_ctx *cx) {
  qlinear q;
  o2m_status s = qlinear_params(cx, 0, &q);
  if (s) return s;
  MlirValue acc;
  if ((s = int_conv(cx, 0, 2, 3, 5, 8, &acc))) return s;
  MlirValue y = requantize(cx, acc, q.xs[0], q.ws, q.nw, q.ys[0], q.yzp, q.yd);
  if (mlirValueIsNull(y)) return lw_unsupported(cx, "a scale TOSA's rescale cannot express");
  return tw_set_channels_last_out(cx, y, tw_rank(lw_in(cx, 0)));
}

/* ---- MatMul -------------------------------------------------------------------------- */

/* a [.., M, K] x b [K, N] (or b batched like a) of 8-bit operands: a
 * rank-3 tosa.matmul with their zero points; [B, M, N] i32. */
static o2m_status int_matmul(lw_ctx *cx, int a_i, int azp_i, int b_i, int bzp_i, MlirValue *acc) {
  o2m_dtype ad = lw_in_type(cx, a_i)->elem, bd = lw_in_type(cx, b_i)->elem;
  if (!is_8bit(ad) || !is_8bit(bd))
    return lw_unsupported(cx, "%s x %s products (TOSA's are 8-bit)", o2m_dtype_name(ad), o2m_dtype_name(bd));
  int64_t azp, bzp;
  o2m_status s = zero_point(cx, azp_i, ad, &azp);
  if (s || (s = zero_point(cx, bzp_i, bd, &bzp))) return s;
  tw_conv_io io = {-1, -1, 1, 0, {NULL}, {NULL}};
  MlirValue a = tw_as_int8(cx, lw_in(cx, a_i), ad, &io), b = tw_as_int8(cx, lw_in(cx, b_i), bd, &io);
  int ra = tw_rank(a), rb = tw_rank(b);
  if (ra < 2 || rb < 2 || ra > TW_MAX_RANK || rb > TW_MAX_RANK) return lw_unsupported(cx, "operands of rank %d and %d", ra, rb);
  int64_t M = tw_size(a, ra - 2), K = tw_size(a, ra - 1), N = tw_size(b, rb - 1), batch = 1, b_batch = 1;
  for (int k = 0; k < ra - 2; k++) batch *= tw_size(a, k);
  for (int k = 0; k < rb - 2; k++) b_batch *= tw_size(b, k);
  if (tw_size(b, rb - 2) != K || (b_batch != 1 && b_batch != batch))
    return lw_unsupported(cx, "operands whose batch dims do not line up");
  int64_t sa[3] = {b_batch == 1 ? 1 : batch, b_batch == 1 ? batch * M : M, K}, sb[3] = {b_batch, K, N};
  MlirValue ops[4] = {tw_reshape(cx, a, 3, sa), tw_reshape(cx, b, 3, sb), zp_tensor(cx, azp), zp_tensor(cx, bzp)};
  int64_t sy[3] = {sa[0], sa[1], N};
  *acc = lw_op1(cx, "tosa.matmul", 4, ops, tw_tensor(cx, mlirIntegerTypeGet(cx->mc, 32), 3, sy), NULL);
  return mlirValueIsNull(*acc) ? lw_error(cx, "internal: the matmul was not built") : O2M_OK;
}

/* The [B, M, N] result reshaped to output 0's shape. */
static o2m_status set_matmul_out(lw_ctx *cx, MlirValue y) {
  const o2m_type *out = lw_out_type(cx, 0);
  int64_t sizes[TW_MAX_RANK];
  if (out->rank < 0 || out->rank > TW_MAX_RANK) return lw_unsupported(cx, "the result's rank is not known");
  for (int k = 0; k < out->rank; k++) sizes[k] = out->dims[k].size;
  return lw_set_out(cx, 0, tw_reshape(cx, y, out->rank, sizes));
}

o2m_status tw_lower_matmul_integer(lw_ctx *cx) {
  MlirValue acc;
  o2m_status s = int_matmul(cx, 0, 2, 1, 3, &acc);
  return s ? s : set_matmul_out(cx, acc);
}

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp). */
o2m_status tw_lower_qlinear_matmul(lw_ctx *cx) {
  qlinear q;
  o2m_status s = qlinear_params(cx, 1, &q);
  if (s) return s;
  MlirValue acc;
  if ((s = int_matmul(cx, 0, 2, 3, 5, &acc))) return s;
  MlirValue y = requantize(cx, acc, q.xs[0], q.ws, q.nw, q.ys[0], q.yzp, q.yd);
  if (mlirValueIsNull(y)) return lw_unsupported(cx, "a scale TOSA's rescale cannot express");
  return set_matmul_out(cx, y);
}
