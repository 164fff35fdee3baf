/* tosa_carried.c - the ONNX dtypes TOSA has no type for, carried in int8
 * (kit.h, lw_target.carrier): int4/int2 as their values in i8, uint4/uint2
 * as theirs in (unsigned) i8, and float8 e4m3fnuz/e5m2fnuz/e8m0 and float4
 * e2m1 as their bit patterns in i8.
 *
 * Owns: the carrier table, re-reading @main's carried arguments from their
 * low bits, and Cast/CastLike to and from carried dtypes. Integers convert
 * as the Linalg target's casts do (through i32, wrapped to the narrow
 * width). A float8/float4 code decodes by a tosa.gather from the table of
 * its 2^bits values; a float encodes by counting the rounding thresholds
 * below its magnitude, found by a binary search of gathers (log2 of the
 * table's size steps), which gives round to nearest even (ties to the
 * even code) on the exact f32 value; NaN, overflow (saturate or not), the
 * sign and zero follow the format's row in lower_lowp.h, so both targets
 * give the same codes. */
#include <math.h>
#include <string.h>

#include "emit/linalg/lower_lowp.h"
#include "emit/tosa/tosa_kit.h"

enum { MAX_TABLE = 256 };

static int is_narrow_int(o2m_dtype d) {
  return d == O2M_DT_INT4 || d == O2M_DT_INT2 || d == O2M_DT_UINT4 || d == O2M_DT_UINT2;
}

static int is_bits(o2m_dtype d) {
  return d == O2M_DT_FLOAT8E4M3FNUZ || d == O2M_DT_FLOAT8E5M2FNUZ || d == O2M_DT_FLOAT8E8M0 ||
         d == O2M_DT_FLOAT4E2M1;
}

o2m_dtype tw_carrier(o2m_dtype d) {
  if (d == O2M_DT_INT4 || d == O2M_DT_INT2) return O2M_DT_INT8;
  return is_narrow_int(d) || is_bits(d) ? O2M_DT_UINT8 : d;
}

/* ---- integers ------------------------------------------------------------- */

/* i32 (or i8) x wrapped to the `bits`-wide integer d: its low bits,
 * sign-extended for signed d. */
static MlirValue wrap(lw_ctx *cx, MlirValue x, o2m_dtype d) {
  int bits = o2m_dtype_bits(d), width = (int)mlirIntegerTypeGetWidth(tw_elem(x)), rank = tw_rank(x);
  if (!lw_dtype_is_signed(d)) return tw_binary(cx, "tosa.bitwise_and", x, tw_splat(cx, tw_elem(x), rank, (1 << bits) - 1));
  MlirValue by = tw_splat(cx, tw_elem(x), rank, width - bits);
  MlirValue up = tw_binary(cx, "tosa.logical_left_shift", x, by);
  return tw_elementwise(cx, "tosa.arithmetic_right_shift", 2, (MlirValue[]){up, by}, (MlirType){NULL}, "round = false");
}

MlirValue tw_narrow_argument(lw_ctx *cx, MlirValue arg, o2m_dtype d) {
  int empty = 0; /* TOSA has no ops on empty tensors (CastLike's target may be one) */
  for (int k = 0; k < tw_rank(arg); k++) empty |= tw_size(arg, k) == 0;
  return o2m_dtype_bits(d) < 8 && !empty ? wrap(cx, arg, d) : arg;
}

/* ---- float8 / float4 codes ------------------------------------------------------ */

/* x flattened to [1, n] (static shapes only; 0 when dynamic or too large). */
static int64_t flat_count(MlirValue x) {
  int64_t n = 1;
  for (int k = 0; k < tw_rank(x); k++)
    if (tw_size(x, k) < 0 || __builtin_mul_overflow(n, tw_size(x, k), &n)) return 0;
  return n;
}

/* table[idx] for i32 indices idx [1, n]: [1, n] f32. */
static MlirValue lookup(lw_ctx *cx, MlirValue table, MlirValue idx, int64_t n) {
  MlirValue ops[2] = {table, idx};
  int64_t out[3] = {1, n, 1}, flat[2] = {1, n};
  MlirValue g = lw_op1(cx, "tosa.gather", 2, ops, tw_tensor(cx, mlirF32TypeGet(cx->mc), 3, out), NULL);
  return tw_reshape(cx, g, 2, flat);
}

static MlirValue table_const(lw_ctx *cx, int n, const float *values) {
  int64_t sizes[3] = {1, n, 1};
  return tw_const_f32(cx, 3, sizes, n, values);
}

/* The f32 values of the codes [1, n] (bits held in i8). */
static MlirValue decode(lw_ctx *cx, MlirValue codes, o2m_dtype d, int64_t n) {
  int size = 1 << o2m_dtype_bits(d);
  float values[MAX_TABLE];
  for (int c = 0; c < size; c++) values[c] = (float)lw_lowp_value(d, (unsigned)c);
  MlirValue idx = tw_cast(cx, codes, O2M_DT_UINT8, O2M_DT_INT32); /* zero-extended */
  idx = tw_binary(cx, "tosa.bitwise_and", idx, tw_splat(cx, tw_elem(idx), 2, size - 1));
  return lookup(cx, table_const(cx, size, values), idx, n);
}

/* The number of entries of the ascending table t[0..n) below a [1, m]:
 * binary search over a table padded to a power of two with +inf. */
static MlirValue count_below(lw_ctx *cx, MlirValue a, const float *t, int n, int64_t m) {
  int size = 2;
  while (size <= n) size *= 2;
  float padded[2 * MAX_TABLE];
  for (int i = 0; i < size; i++) padded[i] = i < n ? t[i] : INFINITY;
  MlirValue table = table_const(cx, size, padded);
  MlirType i32 = mlirIntegerTypeGet(cx->mc, 32);
  /* the first step probes one entry for all */
  int step = size / 2;
  MlirValue first = tw_compare(cx, "tosa.greater", a, tw_splat(cx, mlirF32TypeGet(cx->mc), 2, padded[step - 1]));
  MlirValue count = tw_select(cx, first, tw_splat(cx, i32, 2, step), tw_splat(cx, i32, 2, 0));
  for (step /= 2; step >= 1; step /= 2) {
    MlirValue probe = lookup(cx, table, tw_binary(cx, "tosa.add", count, tw_splat(cx, i32, 2, step - 1)), m);
    MlirValue above = tw_compare(cx, "tosa.greater", a, probe);
    count = tw_select(cx, above, tw_binary(cx, "tosa.add", count, tw_splat(cx, i32, 2, step)), count);
  }
  return count;
}

/* The largest float below t (t > 0): a threshold that a tie at t passes. */
static float below(float t) { return nextafterf(t, 0.0f); }

/* Rounding thresholds of a sign/exponent/mantissa format: t[k] separates
 * magnitude codes k and k + 1, k = 0..max_mag (the last one the overflow
 * to a code past max_mag), at the midpoint, a tie going to the even code. */
static int format_thresholds(const lw_lowp_format *f, float *t) {
  double prev = lw_lowp_value(f->dtype, 0);
  for (int k = 0; k <= f->max_mag; k++) {
    double v = lw_lowp_value(f->dtype, (unsigned)k);
    double next = k < f->max_mag ? lw_lowp_value(f->dtype, (unsigned)k + 1) : 2 * v - prev;
    float mid = (float)((v + next) / 2);
    t[k] = (k + 1) % 2 == 0 ? below(mid) : mid;
    prev = v;
  }
  return f->max_mag + 1;
}

/* e8m0's thresholds: t[c] separates codes c and c + 1 for round_mode up
 * (any fraction rounds up; a subnormal f32 is code 1), down (the f32's
 * exponent) or nearest (half up, from the f32's exponent field). */
static int e8m0_thresholds(const char *round_mode, float *t) {
  for (int c = 0; c < 255; c++) {
    if (strcmp(round_mode, "down") == 0)
      t[c] = c == 254 ? 3.40282347e38f : below(ldexpf(1.0f, c - 126));
    else if (strcmp(round_mode, "nearest") == 0)
      t[c] = c == 0 ? ldexpf(1.0f, -127) : below(1.5f * ldexpf(1.0f, c - 127));
    else
      t[c] = c == 0 ? 0.0f : ldexpf(1.0f, c - 127);
  }
  return 255;
}

/* i32 [1, m] v with the value `yes` where cond. */
static MlirValue where(lw_ctx *cx, MlirValue cond, double yes, MlirValue v) {
  return tw_select(cx, cond, tw_splat(cx, tw_elem(v), 2, yes), v);
}

/* f32 x [1, m] as codes of d (i32 [1, m]). */
static MlirValue encode(lw_ctx *cx, MlirValue x, o2m_dtype d, int saturate, const char *round_mode, int64_t m) {
  MlirType i32 = mlirIntegerTypeGet(cx->mc, 32), i1 = mlirIntegerTypeGet(cx->mc, 1);
  MlirValue a = tw_unary(cx, "tosa.abs", x);
  MlirValue is_nan = tw_unary(cx, "tosa.logical_not", tw_compare(cx, "tosa.equal", x, x));
  float t[MAX_TABLE];
  const lw_lowp_format *f = lw_lowp_format_of(d);
  if (!f) { /* e8m0: the count is the code; no sign */
    MlirValue code = count_below(cx, a, t, e8m0_thresholds(round_mode, t), m);
    if (saturate) {
      MlirValue finite = tw_compare(cx, "tosa.greater", tw_splat(cx, mlirF32TypeGet(cx->mc), 2, INFINITY), a);
      code = tw_select(cx, finite, tw_binary(cx, "tosa.minimum", code, tw_splat(cx, i32, 2, 254)), code);
    }
    return where(cx, is_nan, 0xFF, code);
  }
  saturate = saturate || f->always_saturate;
  MlirValue mag = count_below(cx, a, t, format_thresholds(f, t), m);
  MlirValue zero = tw_splat(cx, mlirF32TypeGet(cx->mc), 2, 0);
  MlirValue sign = tw_compare(cx, "tosa.greater", zero, x);
  if (!f->unsigned_zero) /* -0 keeps its sign: 1 / -0 is -inf */
    sign = tw_select(cx, tw_compare(cx, "tosa.equal", x, zero),
                     tw_compare(cx, "tosa.greater", zero, tw_unary(cx, "tosa.reciprocal", x)), sign);
  else
    sign = tw_select(cx, tw_compare(cx, "tosa.equal", mag, tw_splat(cx, i32, 2, 0)), tw_splat(cx, i1, 2, 0), sign);
  MlirValue overflow = tw_compare(cx, "tosa.greater", mag, tw_splat(cx, i32, 2, f->max_mag));
  mag = where(cx, overflow, saturate ? f->max_mag : f->overflow_mag, mag);
  if (!saturate && f->overflow_negative) sign = tw_select(cx, overflow, tw_splat(cx, i1, 2, 1), sign);
  mag = where(cx, is_nan, f->nan_mag, mag);
  if (f->nan_negative) sign = tw_select(cx, is_nan, tw_splat(cx, i1, 2, 1), sign);
  MlirValue sign_code = tw_select(cx, sign, tw_splat(cx, i32, 2, 1 << (f->bits - 1)), tw_splat(cx, i32, 2, 0));
  return tw_binary(cx, "tosa.bitwise_or", sign_code, mag);
}

/* ---- Cast ------------------------------------------------------------------------ */

o2m_status tw_lower_carried_cast(lw_ctx *cx) {
  o2m_dtype from = lw_in_type(cx, 0)->elem, to = lw_out_type(cx, 0)->elem;
  MlirValue x = lw_in(cx, 0);
  int native_fp8 = from == O2M_DT_FLOAT8E4M3FN || from == O2M_DT_FLOAT8E5M2 || to == O2M_DT_FLOAT8E4M3FN ||
                   to == O2M_DT_FLOAT8E5M2;
  if (native_fp8 || from == O2M_DT_DOUBLE || to == O2M_DT_DOUBLE || from == O2M_DT_STRING || to == O2M_DT_STRING)
    return lw_unsupported(cx, "a cast between %s and %s", o2m_dtype_name(from), o2m_dtype_name(to));
  int rank = tw_rank(x);
  int64_t sizes[TW_MAX_RANK], m = flat_count(x), flat[2] = {1, m};
  for (int k = 0; k < rank; k++) sizes[k] = tw_size(x, k);
  if ((is_bits(from) || is_bits(to)) && !m)
    return lw_unsupported(cx, "a %s cast of a tensor without a static, non-empty shape", o2m_dtype_name(is_bits(from) ? from : to));
  if (is_bits(from)) {
    x = decode(cx, tw_reshape(cx, x, 2, flat), from, m);
    x = tw_reshape(cx, x, rank, sizes);
    from = O2M_DT_FLOAT;
  } else if (is_narrow_int(from)) {
    from = tw_carrier(from); /* its value, in the carrier */
  }
  MlirValue y;
  if (is_bits(to)) {
    x = tw_reshape(cx, tw_cast(cx, x, from, O2M_DT_FLOAT), 2, flat);
    MlirValue code = encode(cx, x, to, lw_attr_int(cx, "saturate", 1) != 0, lw_attr_string(cx, "round_mode", "up"), m);
    y = tw_reshape(cx, tw_cast(cx, code, O2M_DT_INT32, tw_carrier(to)), rank, sizes);
  } else if (is_narrow_int(to)) {
    y = tw_cast(cx, wrap(cx, tw_cast(cx, x, from, O2M_DT_INT32), to), O2M_DT_INT32, tw_carrier(to));
  } else {
    y = tw_cast(cx, x, from, to);
  }
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: the cast from %s to %s could not be built",
                                          o2m_dtype_name(lw_in_type(cx, 0)->elem), o2m_dtype_name(to));
  return lw_set_out(cx, 0, y);
}
