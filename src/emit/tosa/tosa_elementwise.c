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

/* Which dtypes the op takes: floats, (signed) integers, booleans. */
enum { F = 1, I = 2, B = 4, U = 8 /* unsigned integers: the same bits */ };

static const struct {
  const char *onnx, *tosa;
  form form;
  int dtypes;
} ops[] = {
    {"Abs", "tosa.abs", UNARY, F | I},
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
    {"Add", "tosa.add", VARIADIC, F | I | U},
    {"Sum", "tosa.add", VARIADIC, F | I | U},
    {"Sub", "tosa.sub", VARIADIC, F | I | U},
    {"Pow", "tosa.pow", VARIADIC, F},
    {"Max", "tosa.maximum", VARIADIC, F | I},
    {"Min", "tosa.minimum", VARIADIC, F | I},
    {"And", "tosa.logical_and", VARIADIC, B},
    {"Or", "tosa.logical_or", VARIADIC, B},
    {"Xor", "tosa.logical_xor", VARIADIC, B},
    {"BitwiseAnd", "tosa.bitwise_and", VARIADIC, I | U},
    {"BitwiseOr", "tosa.bitwise_or", VARIADIC, I | U},
    {"BitwiseXor", "tosa.bitwise_xor", VARIADIC, I | U},
    {"Equal", "tosa.equal", COMPARE, F | I | B | U},
    {"Greater", "tosa.greater", COMPARE, F | I},
    {"GreaterOrEqual", "tosa.greater_equal", COMPARE, F | I},
    {"Less", "tosa.greater", SWAPPED, F | I},
    {"LessOrEqual", "tosa.greater_equal", SWAPPED, F | I},
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

o2m_status tw_lower_elementwise(lw_ctx *cx) {
  const char *op_type = cx->node->op_type;
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
    if (strcmp(ops[i].onnx, op_type) != 0) continue;
    o2m_status s = check_input_dtype(cx, ops[i].dtypes);
    if (s) return s;
    MlirValue r = lw_in(cx, 0);
    switch (ops[i].form) {
    case UNARY:
      r = tw_unary(cx, ops[i].tosa, r);
      break;
    case VARIADIC:
      for (int k = 1; k < cx->node->n_inputs; k++) r = tw_binary(cx, ops[i].tosa, r, lw_in(cx, k));
      break;
    case COMPARE:
      r = tw_compare(cx, ops[i].tosa, r, lw_in(cx, 1));
      break;
    case SWAPPED:
      r = tw_compare(cx, ops[i].tosa, lw_in(cx, 1), r);
      break;
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
  return s ? s : lw_set_out(cx, 0, tw_mul(cx, lw_in(cx, 0), lw_in(cx, 1)));
}

o2m_status tw_lower_div(lw_ctx *cx) {
  o2m_status s = check_input_dtype(cx, F | I);
  if (s) return s;
  MlirValue a = lw_in(cx, 0), b = lw_in(cx, 1);
  if (lw_dtype_is_float(lw_in_type(cx, 0)->elem)) return lw_set_out(cx, 0, tw_fdiv(cx, a, b));
  return lw_set_out(cx, 0, tw_binary(cx, "tosa.intdiv", a, b)); /* truncates, as ONNX */
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
  if (lo_known && hi_known && lw_dtype_is_float(lw_in_type(cx, 0)->elem)) {
    double lo = -INFINITY, hi = INFINITY;
    if (lo_t) lo = o2m_tensor_get_float(lo_t, 0);
    if (hi_t) hi = o2m_tensor_get_float(hi_t, 0);
    if (lo <= hi) return lw_set_out(cx, 0, tw_clamp(cx, x, lo, hi));
  }
  if (lw_in_present(cx, 1)) x = tw_binary(cx, "tosa.maximum", x, lw_in(cx, 1));
  if (lw_in_present(cx, 2)) x = tw_binary(cx, "tosa.minimum", x, lw_in(cx, 2));
  return lw_set_out(cx, 0, x);
}

o2m_status tw_lower_cast(lw_ctx *cx) {
  o2m_dtype from = lw_in_type(cx, 0)->elem, to = lw_out_type(cx, 0)->elem;
  o2m_status s = tw_check_dtype(cx, from, 0);
  if (!s) s = tw_check_dtype(cx, to, 0);
  if (s) return s;
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
