/* shlo_elementwise.c - StableHLO lowerings of the elementwise family:
 * unary math, arithmetic, comparisons, logical and bitwise ops, Where,
 * Clip, Cast, Identity and Constant. One table row per op names the
 * StableHLO op and the dtypes it takes; the few ops StableHLO spells in
 * several ops (Reciprocal, Atan/Asin/Acos through atan2, Sign of unsigned
 * integers, IsNaN, IsInf, PRelu, ...) have their own function.
 * Broadcasting is explicit (sh_elementwise: broadcast_in_dim). StableHLO's
 * integers carry their signedness in the type (ui8...), so divide,
 * remainder, maximum, compare and the shifts already follow ONNX's
 * signedness. */
#include <math.h>
#include <string.h>

#include "emit/stablehlo/shlo_kit.h"
#include "infer/infer.h"

typedef enum form {
  UNARY,    /* the op of the one input */
  VARIADIC, /* the op folded over every input (binary ops: two) */
  COMPARE,  /* stablehlo.compare with a direction: an i1 result */
} form;

/* The dtype classes an op takes: floats, signed and unsigned integers,
 * booleans. */
enum { F = 1, I = 2, U = 4, B = 8 };

static const struct {
  const char *onnx, *op; /* op: the StableHLO op, or a compare direction */
  form form;
  int dtypes;
} ops[] = {
    {"Abs", "stablehlo.abs", UNARY, F | I},
    {"Neg", "stablehlo.negate", UNARY, F | I},
    {"Ceil", "stablehlo.ceil", UNARY, F},
    {"Floor", "stablehlo.floor", UNARY, F},
    {"Exp", "stablehlo.exponential", UNARY, F},
    {"Log", "stablehlo.log", UNARY, F},
    {"Tanh", "stablehlo.tanh", UNARY, F},
    {"Sigmoid", "stablehlo.logistic", UNARY, F},
    {"Cos", "stablehlo.cosine", UNARY, F},
    {"Sin", "stablehlo.sine", UNARY, F},
    {"Tan", "stablehlo.tan", UNARY, F},
    {"Sqrt", "stablehlo.sqrt", UNARY, F},
    {"Round", "stablehlo.round_nearest_even", UNARY, F},
    {"Not", "stablehlo.not", UNARY, B},
    {"BitwiseNot", "stablehlo.not", UNARY, I | U},
    {"Add", "stablehlo.add", VARIADIC, F | I | U},
    {"Sum", "stablehlo.add", VARIADIC, F | I | U},
    {"Sub", "stablehlo.subtract", VARIADIC, F | I | U},
    {"Mul", "stablehlo.multiply", VARIADIC, F | I | U},
    {"Div", "stablehlo.divide", VARIADIC, F | I | U},
    {"Max", "stablehlo.maximum", VARIADIC, F | I | U},
    {"Min", "stablehlo.minimum", VARIADIC, F | I | U},
    {"And", "stablehlo.and", VARIADIC, B},
    {"Or", "stablehlo.or", VARIADIC, B},
    {"Xor", "stablehlo.xor", VARIADIC, B},
    {"BitwiseAnd", "stablehlo.and", VARIADIC, I | U},
    {"BitwiseOr", "stablehlo.or", VARIADIC, I | U},
    {"BitwiseXor", "stablehlo.xor", VARIADIC, I | U},
    {"Equal", "EQ", COMPARE, F | I | U | B},
    {"Greater", "GT", COMPARE, F | I | U | B},
    {"GreaterOrEqual", "GE", COMPARE, F | I | U | B},
    {"Less", "LT", COMPARE, F | I | U | B},
    {"LessOrEqual", "LE", COMPARE, F | I | U | B},
};

static int dtype_class(o2m_dtype d) {
  if (d == O2M_DT_BOOL) return B;
  if (lw_dtype_is_float(d)) return F;
  if (lw_dtype_is_unsigned(d)) return U;
  return I;
}

/* Checks the node's types and input 0's dtype against the op's classes. */
static o2m_status check_input_dtype(lw_ctx *cx, int classes) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  o2m_dtype d = lw_in_type(cx, 0)->elem;
  if (!(dtype_class(d) & classes))
    return lw_unsupported(cx, "no StableHLO lowering for %s inputs", o2m_dtype_name(d));
  return O2M_OK;
}

static MlirValue like(lw_ctx *cx, MlirValue x, double v) { return sh_scalar(cx, sh_elem(x), v); }

o2m_status sh_lower_elementwise(lw_ctx *cx) {
  const char *op_type = cx->node->op_type;
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
    if (strcmp(ops[i].onnx, op_type) != 0) continue;
    o2m_status s = check_input_dtype(cx, ops[i].dtypes);
    if (s) return s;
    MlirValue r = lw_in(cx, 0);
    if (ops[i].form == UNARY) {
      /* |x| of an unsigned integer is x itself */
      int same = strcmp(op_type, "Abs") == 0 && lw_dtype_is_unsigned(lw_in_type(cx, 0)->elem);
      r = same ? r : sh_unary(cx, ops[i].op, r);
    } else if (ops[i].form == COMPARE) {
      r = sh_compare(cx, ops[i].op, r, lw_in(cx, 1));
    } else {
      for (int k = 1; k < cx->node->n_inputs; k++) r = sh_binary(cx, ops[i].op, r, lw_in(cx, k));
    }
    if (mlirValueIsNull(r)) return lw_error(cx, "internal: the operands do not broadcast");
    return lw_set_out(cx, 0, r);
  }
  return lw_unsupported(cx, "no StableHLO lowering");
}

/* ---- ops StableHLO spells in several ops ------------------------------------- */

/* Pow: the exponent converted to the base's type (ONNX allows another). */
o2m_status sh_lower_pow(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  if (s) return s;
  MlirValue x = lw_in(cx, 0), y = sh_convert(cx, lw_in(cx, 1), sh_elem(lw_in(cx, 0)));
  return lw_set_out(cx, 0, sh_binary(cx, "stablehlo.power", x, y));
}

o2m_status sh_lower_reciprocal(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  return lw_set_out(cx, 0, sh_binary(cx, "stablehlo.divide", like(cx, x, 1.0), x));
}

/* atan(x) = atan2(x, 1); asin(x) = atan2(x, sqrt(1 - x^2));
 * acos(x) = atan2(sqrt(1 - x^2), x). */
o2m_status sh_lower_inverse_trig(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue x = lw_in(cx, 0), one = like(cx, x, 1.0);
  const char *op = cx->node->op_type;
  if (strcmp(op, "Atan") == 0) return lw_set_out(cx, 0, sh_binary(cx, "stablehlo.atan2", x, one));
  /* 1 - x^2 as (1 - x)(1 + x): no cancellation near |x| = 1 */
  MlirValue c = sh_binary(cx, "stablehlo.multiply", sh_binary(cx, "stablehlo.subtract", one, x),
                          sh_binary(cx, "stablehlo.add", one, x));
  c = sh_unary(cx, "stablehlo.sqrt", c);
  int asin = strcmp(op, "Asin") == 0;
  return lw_set_out(cx, 0, sh_binary(cx, "stablehlo.atan2", asin ? x : c, asin ? c : x));
}

o2m_status sh_lower_relu(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  return lw_set_out(cx, 0, sh_binary(cx, "stablehlo.maximum", x, like(cx, x, 0)));
}

o2m_status sh_lower_mean(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue r = lw_in(cx, 0);
  for (int k = 1; k < cx->node->n_inputs; k++) r = sh_binary(cx, "stablehlo.add", r, lw_in(cx, k));
  if (mlirValueIsNull(r)) return lw_error(cx, "internal: Mean operands");
  return lw_set_out(cx, 0, sh_binary(cx, "stablehlo.divide", r, like(cx, r, cx->node->n_inputs)));
}

/* stablehlo.sign takes signed integers and floats; unsigned x is x != 0. */
o2m_status sh_lower_sign(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I | U);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (!lw_dtype_is_unsigned(lw_in_type(cx, 0)->elem)) return lw_set_out(cx, 0, sh_unary(cx, "stablehlo.sign", x));
  return lw_set_out(cx, 0, sh_convert(cx, sh_compare(cx, "NE", x, like(cx, x, 0)), sh_elem(x)));
}

o2m_status sh_lower_isnan(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  return lw_set_out(cx, 0, sh_compare(cx, "NE", x, x));
}

o2m_status sh_lower_isinf(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  int pos = (int)lw_attr_int(cx, "detect_positive", 1), neg = (int)lw_attr_int(cx, "detect_negative", 1);
  MlirValue is_pos = sh_compare(cx, "EQ", x, like(cx, x, INFINITY));
  MlirValue is_neg = sh_compare(cx, "EQ", x, like(cx, x, -INFINITY));
  MlirValue r = pos && neg ? sh_binary(cx, "stablehlo.or", is_pos, is_neg)
                : pos      ? is_pos
                : neg      ? is_neg
                           : sh_fill_like(cx, sh_i1(cx), 0, x);
  return lw_set_out(cx, 0, r);
}

o2m_status sh_lower_prelu(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  MlirValue negative = sh_compare(cx, "LT", x, like(cx, x, 0));
  return lw_set_out(cx, 0, sh_select(cx, negative, sh_binary(cx, "stablehlo.multiply", x, lw_in(cx, 1)), x));
}

/* BitShift (unsigned integers): StableHLO's shifts by the width or more
 * give 0, as ONNX's reference (numpy) does. */
o2m_status sh_lower_bitshift(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, U);
  if (s) return s;
  const char *dir = lw_attr_string(cx, "direction", "");
  int left = strcmp(dir, "LEFT") == 0;
  if (!left && strcmp(dir, "RIGHT") != 0) return lw_error(cx, "direction '%s'", dir);
  MlirValue r = sh_binary(cx, left ? "stablehlo.shift_left" : "stablehlo.shift_right_logical", lw_in(cx, 0),
                          lw_in(cx, 1));
  return lw_set_out(cx, 0, r);
}

o2m_status sh_lower_where(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  return s ? s : lw_set_out(cx, 0, sh_select(cx, lw_in(cx, 0), lw_in(cx, 1), lw_in(cx, 2)));
}

/* Clip: maximum with the lower bound, then minimum with the upper one
 * (ONNX's order: a lower bound above the upper one gives the upper). */
o2m_status sh_lower_clip(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I | U);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (lw_in_present(cx, 1)) x = sh_binary(cx, "stablehlo.maximum", x, lw_in(cx, 1));
  if (lw_in_present(cx, 2)) x = sh_binary(cx, "stablehlo.minimum", x, lw_in(cx, 2));
  return lw_set_out(cx, 0, x);
}

/* The largest finite value of a small float type a saturating cast
 * clamps to (0: not one). */
static double saturation_max(o2m_dtype d) {
  switch (d) {
  case O2M_DT_FLOAT8E4M3FN: return 448.0;
  case O2M_DT_FLOAT8E4M3FNUZ: return 240.0;
  case O2M_DT_FLOAT8E5M2: case O2M_DT_FLOAT8E5M2FNUZ: return 57344.0;
  case O2M_DT_FLOAT4E2M1: return 6.0;
  default: return 0.0;
  }
}

static int is_sub_byte_int(o2m_dtype d) {
  return d == O2M_DT_INT4 || d == O2M_DT_UINT4 || d == O2M_DT_INT2 || d == O2M_DT_UINT2;
}

static MlirValue k32(lw_ctx *cx, double v) { return sh_scalar(cx, lw_elem_type(cx, O2M_DT_UINT32), v); }

/* A float to float8e8m0 (a power of two, 2^(e - 127)): the exponent bits
 * of |x| as float32, moved up by one when the significand is not zero
 * (round_mode "up"), when it is at least half (ties up: "nearest"), or
 * never ("down"); inf and values that round past the largest finite
 * power become 2^127 when saturating, NaN stays NaN (0xFF). */
static MlirValue to_e8m0(lw_ctx *cx, MlirValue x, const char *mode, int saturate) {
  MlirType u32 = lw_elem_type(cx, O2M_DT_UINT32), u8 = lw_elem_type(cx, O2M_DT_UINT8);
  x = sh_convert(cx, x, mlirF32TypeGet(cx->mc));
  MlirValue bits = sh_op(cx, "stablehlo.bitcast_convert", 1, &x, sh_with_elem(cx, x, u32), NULL);
  bits = sh_binary(cx, "stablehlo.and", bits, k32(cx, 0x7fffffff));
  MlirValue e = sh_binary(cx, "stablehlo.shift_right_logical", bits, k32(cx, 23));
  MlirValue m = sh_binary(cx, "stablehlo.and", bits, k32(cx, 0x7fffff));
  MlirValue up = strcmp(mode, "down") == 0    ? sh_fill_like(cx, sh_i1(cx), 0, m)
                 : strcmp(mode, "nearest") == 0 ? sh_compare(cx, "GE", m, k32(cx, 0x400000))
                                                : sh_compare(cx, "NE", m, k32(cx, 0));
  MlirValue special = sh_compare(cx, "EQ", e, k32(cx, 255)); /* inf, NaN */
  MlirValue r = sh_select(cx, sh_binary(cx, "stablehlo.and", up, sh_unary(cx, "stablehlo.not", special)),
                          sh_binary(cx, "stablehlo.add", e, k32(cx, 1)), e);
  if (saturate) { /* past 2^127, and inf (not NaN), clamp to 254 */
    MlirValue nan = sh_binary(cx, "stablehlo.and", special, sh_compare(cx, "NE", m, k32(cx, 0)));
    MlirValue big = sh_binary(cx, "stablehlo.minimum", r, k32(cx, 254));
    r = sh_select(cx, nan, r, big);
  } else {
    r = sh_binary(cx, "stablehlo.minimum", r, k32(cx, 255));
  }
  r = sh_convert(cx, r, u8);
  return sh_op(cx, "stablehlo.bitcast_convert", 1, &r, sh_with_elem(cx, r, lw_elem_type(cx, O2M_DT_FLOAT8E8M0)),
               NULL);
}

/* Cast: stablehlo.convert has ONNX's semantics (float to integer
 * truncates toward zero; to bool: non-zero is true), except where ONNX
 * says otherwise:
 * - casts to float8 and float4 saturate when asked (ONNX's default; the
 *   4-bit float always): out-of-range values and infinities become the
 *   largest finite value of their sign;
 * - floats to 4- and 2-bit integers wrap modulo 2^bits (through int32,
 *   whose narrowing keeps the low bits), as the reference does;
 * - float8e8m0 rounds by round_mode (to_e8m0). */
o2m_status sh_lower_cast(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  o2m_dtype from = lw_in_type(cx, 0)->elem, to = lw_out_type(cx, 0)->elem;
  MlirValue x = lw_in(cx, 0);
  int saturate = lw_attr_int(cx, "saturate", 1) != 0;
  double max = saturation_max(to);
  if (lw_dtype_is_float(from) && to == O2M_DT_FLOAT8E8M0)
    return lw_set_out(cx, 0, to_e8m0(cx, x, lw_attr_string(cx, "round_mode", "up"), saturate));
  if (max > 0 && lw_dtype_is_float(from) && (saturate || to == O2M_DT_FLOAT4E2M1))
    x = sh_binary(cx, "stablehlo.minimum", sh_binary(cx, "stablehlo.maximum", x, like(cx, x, -max)),
                  like(cx, x, max));
  if (lw_dtype_is_float(from) && is_sub_byte_int(to)) x = sh_convert(cx, x, sh_i32(cx));
  return lw_set_out(cx, 0, sh_convert(cx, x, sh_elem_of(cx, to)));
}

o2m_status sh_lower_bitcast(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  o2m_dtype from = lw_in_type(cx, 0)->elem, to = lw_out_type(cx, 0)->elem;
  MlirValue x = lw_in(cx, 0);
  if (from == O2M_DT_BOOL || to == O2M_DT_BOOL) return lw_set_out(cx, 0, sh_convert(cx, x, sh_elem_of(cx, to)));
  if (o2m_dtype_bits(from) != o2m_dtype_bits(to))
    return lw_unsupported(cx, "a bit cast between %s and %s (widths differ)", o2m_dtype_name(from),
                          o2m_dtype_name(to));
  return lw_set_out(cx, 0, sh_op(cx, "stablehlo.bitcast_convert", 1, &x, sh_out_type(cx, 0), NULL));
}

o2m_status sh_lower_identity(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  return s ? s : lw_set_out(cx, 0, lw_in(cx, 0));
}

o2m_status sh_lower_constant(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  MlirValue v = lw_get(cx, cx->node->outputs[0]);
  if (mlirValueIsNull(v)) return lw_unsupported(cx, "the constant's value is not known");
  return lw_set_out(cx, 0, v);
}
