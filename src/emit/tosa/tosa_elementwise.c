/* tosa_elementwise.c - TOSA lowerings of the elementwise family: unary
 * math, arithmetic, comparisons, logical and bitwise ops, Where, Clip,
 * Cast, Identity and Constant. One table row per op says which TOSA op
 * computes it and how its operands are arranged; the few ops that TOSA
 * spells in several ops (Div, Sqrt, Less, Mean, Sign, ...) have their own
 * function. Broadcasting is explicit: operands are reshaped to one rank
 * (tw_elementwise). */
#include <math.h>
#include <string.h>

#include "emit/tosa/tosa_kit.h"
#include "infer/infer.h"

typedef enum form {
  UNARY,    /* tosa op of the one input */
  VARIADIC, /* the tosa op folded over every input (binary ops: two) */
  SWAPPED,  /* the tosa op of (input 1, input 0): Less, LessOrEqual */
  COMPARE,  /* an i1 result */
} form;

/* Which dtypes the op takes: floats, (signed) integers, booleans,
 * unsigned integers (ops on the same bits); W: TOSA computes it on 32-bit
 * integers only, so 8- and 16-bit operands are widened (and results of
 * wrapping arithmetic narrowed back: the low bits are ONNX's result). */
enum { F = 1, I = 2, B = 4, U = 8, W = 16, V = 32 };
/* V: order-sensitive ops on unsigned integers: with the sign bit flipped
 * (x ^ 0x80..), unsigned order is signed order, so they run as signed
 * ops on the flipped bits (max/min results flipped back). */

static const struct {
  const char *onnx, *tosa;
  form form;
  int dtypes;
} ops[] = {
    {"Abs", "tosa.abs", UNARY, F | I | W},
    {"Ceil", "tosa.ceil", UNARY, F},
    {"Floor", "tosa.floor", UNARY, F},
    {"Exp", "tosa.exp", UNARY, F},
    {"Log", "tosa.log", UNARY, F},
    {"Tanh", "tosa.tanh", UNARY, F},
    {"Sigmoid", "tosa.sigmoid", UNARY, F},
    {"Erf", "tosa.erf", UNARY, F},
    {"Cos", "tosa.cos", UNARY, F},
    {"Sin", "tosa.sin", UNARY, F},
    {"Reciprocal", "tosa.reciprocal", UNARY, F},
    {"Not", "tosa.logical_not", UNARY, B},
    {"BitwiseNot", "tosa.bitwise_not", UNARY, I | U},
    {"Add", "tosa.add", VARIADIC, F | I | U | W},
    {"Sum", "tosa.add", VARIADIC, F | I | U | W},
    {"Sub", "tosa.sub", VARIADIC, F | I | U | W},
    {"Pow", "tosa.pow", VARIADIC, F},
    {"Max", "tosa.maximum", VARIADIC, F | I | U | V | W},
    {"Min", "tosa.minimum", VARIADIC, F | I | U | V | W},
    {"And", "tosa.logical_and", VARIADIC, B},
    {"Or", "tosa.logical_or", VARIADIC, B},
    {"Xor", "tosa.logical_xor", VARIADIC, B},
    {"BitwiseAnd", "tosa.bitwise_and", VARIADIC, I | U},
    {"BitwiseOr", "tosa.bitwise_or", VARIADIC, I | U},
    {"BitwiseXor", "tosa.bitwise_xor", VARIADIC, I | U},
    {"Equal", "tosa.equal", COMPARE, F | I | B | U | W},
    {"Greater", "tosa.greater", COMPARE, F | I | U | V | W},
    {"GreaterOrEqual", "tosa.greater_equal", COMPARE, F | I | U | V | W},
    {"Less", "tosa.greater", SWAPPED, F | I | U | V | W},
    {"LessOrEqual", "tosa.greater_equal", SWAPPED, F | I | U | V | W},
};

static int dtype_class(o2m_dtype d) {
  if (d == O2M_DT_BOOL) return B;
  if (lw_dtype_is_float(d)) return F;
  if (lw_dtype_is_unsigned(d)) return U;
  return I;
}

/* Checks the dtype of input 0 against the op's classes and TOSA's types. */
static o2m_status check_input_dtype(lw_ctx *cx, int classes) {
  o2m_dtype d = lw_in_type(cx, 0)->elem;
  if (!(dtype_class(d) & classes))
    return lw_unsupported(cx, "no TOSA lowering for %s inputs", o2m_dtype_name(d));
  return tw_check_dtype(cx, d, (classes & U) != 0);
}

/* The dtype TOSA computes a W op of dtype d in. */
static o2m_dtype widened(o2m_dtype d) {
  switch (d) {
  case O2M_DT_INT8: case O2M_DT_INT16: case O2M_DT_UINT8: case O2M_DT_UINT16: return O2M_DT_INT32;
  default: return d;
  }
}

static o2m_dtype signed_of(o2m_dtype d) {
  switch (d) {
  case O2M_DT_UINT8: return O2M_DT_INT8;
  case O2M_DT_UINT16: return O2M_DT_INT16;
  case O2M_DT_UINT32: return O2M_DT_INT32;
  case O2M_DT_UINT64: return O2M_DT_INT64;
  default: return d;
  }
}

/* x ^ the sign bit (x's element type is a signless integer). */
static MlirValue flip_sign(lw_ctx *cx, MlirValue x) {
  if (mlirValueIsNull(x)) return x;
  unsigned width = mlirIntegerTypeGetWidth(tw_elem(x));
  double sign = -ldexp(1, (int)width - 1);
  return tw_binary(cx, "tosa.bitwise_xor", x, tw_splat(cx, tw_elem(x), tw_rank(x), sign));
}

o2m_status tw_lower_elementwise(lw_ctx *cx) {
  const char *op_type = cx->node->op_type;
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
    if (strcmp(ops[i].onnx, op_type) != 0) continue;
    o2m_status s = check_input_dtype(cx, ops[i].dtypes);
    if (s) return s;
    o2m_dtype d = lw_in_type(cx, 0)->elem;
    int flip = (ops[i].dtypes & V) && lw_dtype_is_unsigned(d) && d != O2M_DT_BOOL;
    if (flip) d = signed_of(d);
    o2m_dtype wide = (ops[i].dtypes & W) ? widened(d) : d;
    MlirValue in[8];
    int n = cx->node->n_inputs < 8 ? cx->node->n_inputs : 8;
    for (int k = 0; k < n; k++)
      in[k] = tw_cast(cx, flip ? flip_sign(cx, lw_in(cx, k)) : lw_in(cx, k), d, wide);
    MlirValue r = in[0];
    switch (ops[i].form) {
    case UNARY:
      r = tw_unary(cx, ops[i].tosa, r);
      break;
    case VARIADIC:
      for (int k = 1; k < n; k++) r = tw_binary(cx, ops[i].tosa, r, in[k]);
      break;
    case COMPARE:
      r = tw_compare(cx, ops[i].tosa, r, in[1]);
      break;
    case SWAPPED:
      r = tw_compare(cx, ops[i].tosa, in[1], r);
      break;
    }
    if (ops[i].form != COMPARE && ops[i].form != SWAPPED) {
      r = tw_cast(cx, r, wide, d);
      if (flip) r = flip_sign(cx, r);
    }
    return lw_set_out(cx, 0, r);
  }
  return lw_unsupported(cx, "no TOSA lowering");
}

/* ---- ops TOSA spells in several ops ------------------------------------------ */

static MlirValue splat_like(lw_ctx *cx, MlirValue x, double v) {
  return tw_splat(cx, tw_elem(x), tw_rank(x), v);
}

o2m_status tw_lower_neg(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  return s ? s : lw_set_out(cx, 0, tw_negate(cx, lw_in(cx, 0)));
}

o2m_status tw_lower_mul(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I | U);
  if (s) return s;
  o2m_dtype d = lw_in_type(cx, 0)->elem, wide = widened(d);
  MlirValue r = tw_mul(cx, tw_cast(cx, lw_in(cx, 0), d, wide), tw_cast(cx, lw_in(cx, 1), d, wide));
  return lw_set_out(cx, 0, tw_cast(cx, r, wide, d));
}

/* An 8- or 16-bit unsigned x zero-extended to i32. */
static MlirValue zero_extend(lw_ctx *cx, MlirValue x, o2m_dtype d) {
  x = tw_cast(cx, x, d, O2M_DT_INT32);
  if (mlirValueIsNull(x)) return x;
  double mask = d == O2M_DT_UINT8 ? 0xff : 0xffff;
  return tw_binary(cx, "tosa.bitwise_and", x, tw_splat(cx, tw_elem(x), tw_rank(x), mask));
}

o2m_status tw_lower_div(lw_ctx *cx) {
  o2m_dtype d = lw_in_type(cx, 0)->elem, wide = widened(d);
  int narrow_unsigned = d == O2M_DT_UINT8 || d == O2M_DT_UINT16;
  o2m_status s = narrow_unsigned ? O2M_OK : check_input_dtype(cx, F | I);
  if (s) return s;
  MlirValue a = lw_in(cx, 0), b = lw_in(cx, 1);
  if (lw_dtype_is_float(d)) return lw_set_out(cx, 0, tw_fdiv(cx, a, b));
  /* tosa.intdiv truncates toward zero, as ONNX; unsigned 8/16-bit values
   * divide exactly as non-negative i32 */
  a = narrow_unsigned ? zero_extend(cx, a, d) : tw_cast(cx, a, d, wide);
  b = narrow_unsigned ? zero_extend(cx, b, d) : tw_cast(cx, b, d, wide);
  return lw_set_out(cx, 0, tw_cast(cx, tw_binary(cx, "tosa.intdiv", a, b), wide, d));
}

o2m_status tw_lower_sqrt(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  return lw_set_out(cx, 0, tw_binary(cx, "tosa.pow", x, splat_like(cx, x, 0.5)));
}

o2m_status tw_lower_relu(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  return s ? s : lw_set_out(cx, 0, tw_clamp(cx, lw_in(cx, 0), 0, INFINITY));
}

o2m_status tw_lower_mean(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue r = lw_in(cx, 0);
  for (int k = 1; k < cx->node->n_inputs; k++) r = tw_binary(cx, "tosa.add", r, lw_in(cx, k));
  if (mlirValueIsNull(r)) return lw_error(cx, "internal: Mean operands");
  return lw_set_out(cx, 0, tw_mul(cx, r, splat_like(cx, r, 1.0 / cx->node->n_inputs)));
}

o2m_status tw_lower_sign(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  MlirValue zero = splat_like(cx, x, 0), one = splat_like(cx, x, 1), minus = splat_like(cx, x, -1);
  MlirValue neg = tw_select(cx, tw_compare(cx, "tosa.greater", zero, x), minus, zero);
  return lw_set_out(cx, 0, tw_select(cx, tw_compare(cx, "tosa.greater", x, zero), one, neg));
}

o2m_status tw_lower_isnan(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  return lw_set_out(cx, 0, tw_unary(cx, "tosa.logical_not", tw_compare(cx, "tosa.equal", x, x)));
}

o2m_status tw_lower_isinf(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int pos = (int)lw_attr_int(cx, "detect_positive", 1), neg = (int)lw_attr_int(cx, "detect_negative", 1);
  MlirValue is_pos = tw_compare(cx, "tosa.equal", x, splat_like(cx, x, INFINITY));
  MlirValue is_neg = tw_compare(cx, "tosa.equal", x, splat_like(cx, x, -INFINITY));
  MlirValue r = pos && neg ? tw_binary(cx, "tosa.logical_or", is_pos, is_neg)
                : pos      ? is_pos
                : neg      ? is_neg
                           : tw_compare(cx, "tosa.greater", x, x);
  return lw_set_out(cx, 0, r);
}

o2m_status tw_lower_prelu(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  MlirValue negative = tw_compare(cx, "tosa.greater", splat_like(cx, x, 0), x);
  return lw_set_out(cx, 0, tw_select(cx, negative, tw_mul(cx, x, lw_in(cx, 1)), x));
}

/* BitShift on unsigned integers: TOSA's logical shifts act on the same
 * bits. A shift by the width or more gives 0, as ONNX's reference
 * (numpy) does; TOSA leaves it undefined, so it is selected away. */
o2m_status tw_lower_bitshift(lw_ctx *cx) {
  o2m_dtype d = lw_in_type(cx, 0)->elem;
  if (!lw_dtype_is_unsigned(d) || d == O2M_DT_BOOL) return lw_unsupported(cx, "BitShift of %s", o2m_dtype_name(d));
  const char *dir = lw_attr_string(cx, "direction", "");
  int left = strcmp(dir, "LEFT") == 0;
  if (!left && strcmp(dir, "RIGHT") != 0) return lw_error(cx, "direction '%s'", dir);
  MlirValue x = lw_in(cx, 0), n = lw_in(cx, 1);
  if (mlirValueIsNull(x) || mlirValueIsNull(n)) return lw_error(cx, "an input is missing");
  MlirValue shifted = tw_binary(cx, left ? "tosa.logical_left_shift" : "tosa.logical_right_shift", x, n);
  /* n >= width (a power of two, 2^k) exactly when n >> k is not 0 */
  int k = 0;
  while ((1 << k) < o2m_dtype_bits(d)) k++;
  MlirValue high = tw_binary(cx, "tosa.logical_right_shift", n, tw_splat(cx, tw_elem(n), tw_rank(n), k));
  high = tw_cast(cx, high, signed_of(d), widened(signed_of(d))); /* small, non-negative */
  MlirValue too_far = tw_unary(cx, "tosa.logical_not",
                               tw_compare(cx, "tosa.equal", high, tw_splat(cx, tw_elem(high), tw_rank(high), 0)));
  return lw_set_out(cx, 0, tw_select(cx, too_far, tw_splat(cx, tw_elem(x), tw_rank(x), 0), shifted));
}

o2m_status tw_lower_where(lw_ctx *cx) {
  o2m_status s = tw_check_dtype(cx, lw_in_type(cx, 1)->elem, 1);
  return s ? s : lw_set_out(cx, 0, tw_select(cx, lw_in(cx, 0), lw_in(cx, 1), lw_in(cx, 2)));
}

/* Clip: tosa.clamp when the bounds are known scalars, else max/min. */
o2m_status tw_lower_clip(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  const o2m_tensor *lo_t = lw_in_known(cx, 1), *hi_t = lw_in_known(cx, 2);
  int lo_known = !lw_in_present(cx, 1) || (lo_t && lo_t->count == 1);
  int hi_known = !lw_in_present(cx, 2) || (hi_t && hi_t->count == 1);
  if (lo_known && hi_known) {
    double lo = -INFINITY, hi = INFINITY;
    if (lo_t) lo = o2m_tensor_get_float(lo_t, 0);
    if (hi_t) hi = o2m_tensor_get_float(hi_t, 0);
    if (lo <= hi) return lw_set_out(cx, 0, tw_clamp(cx, x, lo, hi));
  }
  o2m_dtype d = lw_in_type(cx, 0)->elem, wide = widened(d);
  x = tw_cast(cx, x, d, wide);
  if (lw_in_present(cx, 1)) x = tw_binary(cx, "tosa.maximum", x, tw_cast(cx, lw_in(cx, 1), d, wide));
  if (lw_in_present(cx, 2)) x = tw_binary(cx, "tosa.minimum", x, tw_cast(cx, lw_in(cx, 2), d, wide));
  return lw_set_out(cx, 0, tw_cast(cx, x, wide, d));
}

static int is_float8(o2m_dtype d) { return d == O2M_DT_FLOAT8E4M3FN || d == O2M_DT_FLOAT8E5M2; }

o2m_status tw_lower_cast(lw_ctx *cx) {
  o2m_dtype from = lw_in_type(cx, 0)->elem, to = lw_out_type(cx, 0)->elem;
  if (tw_carrier(from) != from || tw_carrier(to) != to) return tw_lower_carried_cast(cx);
  o2m_status s = tw_check_dtype(cx, from, 1);
  if (!s) s = tw_check_dtype(cx, to, 1);
  if (s) return s;
  if (from == O2M_DT_UINT64 && to != O2M_DT_INT64 && to != O2M_DT_UINT64)
    return lw_unsupported(cx, "a uint64 source (TOSA has no 64-bit unsigned integers)");
  int f8_from = is_float8(from), f8_to = is_float8(to);
  if (f8_from || f8_to) { /* TOSA casts fp8 to and from f16/bf16/f32 */
    o2m_dtype other = f8_from ? to : from;
    if (!lw_dtype_is_float(other) || (f8_from && f8_to))
      return lw_unsupported(cx, "a cast between %s and %s (TOSA's fp8 casts are to and from floats)",
                            o2m_dtype_name(from), o2m_dtype_name(to));
    MlirValue x = lw_in(cx, 0);
    if (f8_to && lw_attr_int(cx, "saturate", 1)) { /* ONNX: out-of-range values and inf saturate */
      double max = to == O2M_DT_FLOAT8E4M3FN ? 448.0 : 57344.0;
      x = tw_clamp(cx, x, -max, max);
    }
    return lw_set_out(cx, 0, lw_op1(cx, "tosa.cast", 1, &x, lw_tensor_type(cx, lw_out_type(cx, 0)), NULL));
  }
  return lw_set_out(cx, 0, tw_cast(cx, lw_in(cx, 0), from, to));
}

o2m_status tw_lower_identity(lw_ctx *cx) {
  o2m_status s = tw_check_dtype(cx, lw_in_type(cx, 0)->elem, 1);
  return s ? s : lw_set_out(cx, 0, lw_in(cx, 0));
}

o2m_status tw_lower_constant(lw_ctx *cx) {
  o2m_status s = tw_check_dtype(cx, lw_out_type(cx, 0)->elem, 1);
  if (s) return s;
  MlirValue v = lw_get(cx, cx->node->outputs[0]);
  if (mlirValueIsNull(v)) return lw_unsupported(cx, "the constant's value is not known");
  return lw_set_out(cx, 0, v);
}
