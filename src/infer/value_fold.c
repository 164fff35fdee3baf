/* value_fold.c - element arithmetic for data propagation: one element of a
 * known tensor as a number, and the per-element operations with ONNX's
 * semantics (integer Div truncates toward zero, Mod follows the divisor's
 * sign unless fmod, Round ties to even). See value_fold.h. */
#include "infer/value_fold.h"

#include <math.h>

o2m_num_kind o2m_num_kind_of(o2m_dtype dtype) {
  if (o2m_dtype_is_float(dtype)) return O2M_NUM_FLOAT;
  if (dtype == O2M_DT_UINT64) return O2M_NUM_UINT;
  if (o2m_dtype_is_int(dtype)) return O2M_NUM_INT;
  return O2M_NUM_NONE;
}

int o2m_num_readable(const o2m_tensor *t) {
  return t && o2m_num_kind_of(t->dtype) != O2M_NUM_NONE &&
         t->count <= O2M_KNOWN_MAX && (t->count == 0 || t->data);
}

o2m_num o2m_num_get(const o2m_tensor *t, int64_t index) {
  o2m_num v = {o2m_num_kind_of(t->dtype), 0, 0};
  if (v.kind == O2M_NUM_FLOAT) v.f = o2m_tensor_get_float(t, index);
  else v.i = o2m_tensor_get_int(t, index);
  return v;
}

void o2m_num_set(o2m_tensor *t, int64_t index, o2m_num v) {
  if (v.kind == O2M_NUM_FLOAT) o2m_tensor_set_float(t, index, v.f);
  else if (v.kind == O2M_NUM_UINT && o2m_dtype_is_float(t->dtype))
    o2m_tensor_set_float(t, index, (double)(uint64_t)v.i);
  else o2m_tensor_set_int(t, index, v.i);
}

/* A float as an integer, truncated toward zero and clamped to int64 (NaN
 * reads as 0), the way o2m_tensor_set_float stores it. */
static int64_t float_to_int(double f) {
  if (isnan(f)) return 0;
  if (f >= 9.2e18) return INT64_MAX;
  if (f <= -9.2e18) return INT64_MIN;
  return (int64_t)f;
}

o2m_num o2m_num_to(o2m_num v, o2m_num_kind kind) {
  if (v.kind == kind) return v;
  o2m_num r = {kind, 0, 0};
  if (kind == O2M_NUM_FLOAT)
    r.f = v.kind == O2M_NUM_UINT ? (double)(uint64_t)v.i : (double)v.i;
  else
    r.i = v.kind == O2M_NUM_FLOAT ? float_to_int(v.f) : v.i;
  return r;
}

o2m_num o2m_num_bool(int v) { return (o2m_num){O2M_NUM_INT, 0, v != 0}; }

static o2m_num float_num(double f) { return (o2m_num){O2M_NUM_FLOAT, f, 0}; }
static o2m_num int_num(o2m_num_kind kind, int64_t i) { return (o2m_num){kind, 0, i}; }
/* Wrapping integer arithmetic goes through uint64 (no signed overflow). */
static uint64_t bits(o2m_num a) { return (uint64_t)a.i; }

/* ---- arithmetic -------------------------------------------------------- */

int o2m_num_add(o2m_num a, o2m_num b, o2m_num *out) {
  *out = a.kind == O2M_NUM_FLOAT ? float_num(a.f + b.f)
                                 : int_num(a.kind, (int64_t)(bits(a) + bits(b)));
  return 1;
}

int o2m_num_sub(o2m_num a, o2m_num b, o2m_num *out) {
  *out = a.kind == O2M_NUM_FLOAT ? float_num(a.f - b.f)
                                 : int_num(a.kind, (int64_t)(bits(a) - bits(b)));
  return 1;
}

int o2m_num_mul(o2m_num a, o2m_num b, o2m_num *out) {
  *out = a.kind == O2M_NUM_FLOAT ? float_num(a.f * b.f)
                                 : int_num(a.kind, (int64_t)(bits(a) * bits(b)));
  return 1;
}

int o2m_num_div(o2m_num a, o2m_num b, o2m_num *out) {
  switch (a.kind) {
  case O2M_NUM_FLOAT: *out = float_num(a.f / b.f); return 1;
  case O2M_NUM_UINT:
    if (!b.i) return 0;
    *out = int_num(a.kind, (int64_t)(bits(a) / bits(b)));
    return 1;
  default:
    if (!b.i || (a.i == INT64_MIN && b.i == -1)) return 0;
    *out = int_num(a.kind, a.i / b.i); /* C truncates toward zero, as ONNX */
    return 1;
  }
}

int o2m_num_mod_trunc(o2m_num a, o2m_num b, o2m_num *out) {
  switch (a.kind) {
  case O2M_NUM_FLOAT: *out = float_num(fmod(a.f, b.f)); return 1;
  case O2M_NUM_UINT:
    if (!b.i) return 0;
    *out = int_num(a.kind, (int64_t)(bits(a) % bits(b)));
    return 1;
  default:
    if (!b.i) return 0;
    *out = int_num(a.kind, b.i == -1 ? 0 : a.i % b.i);
    return 1;
  }
}

int o2m_num_mod_floor(o2m_num a, o2m_num b, o2m_num *out) {
  if (!o2m_num_mod_trunc(a, b, out)) return 0;
  if (a.kind == O2M_NUM_FLOAT) {
    if (out->f != 0 && (out->f < 0) != (b.f < 0)) out->f += b.f;
  } else if (a.kind == O2M_NUM_INT) {
    if (out->i != 0 && (out->i < 0) != (b.i < 0)) out->i += b.i;
  }
  return 1;
}

/* Integer power by squaring (wrapping); a negative exponent gives the
 * truncated real result: 0 unless the base is 1 or -1. */
static int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = (uint64_t)base;
  for (uint64_t e = (uint64_t)exp; e; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return (int64_t)result;
}

/* Pow's exponent may have another dtype than the base: callers pass it
 * unconverted and the result has the base's kind. */
int o2m_num_pow(o2m_num a, o2m_num b, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) {
    *out = float_num(pow(a.f, o2m_num_to(b, O2M_NUM_FLOAT).f));
    return 1;
  }
  if (b.kind == O2M_NUM_FLOAT) {
    double r = pow(o2m_num_to(a, O2M_NUM_FLOAT).f, b.f);
    if (!isfinite(r)) return 0;
    *out = int_num(a.kind, float_to_int(r));
    return 1;
  }
  *out = int_num(a.kind, int_pow(a.i, b.kind == O2M_NUM_UINT && b.i < 0 ? INT64_MAX : b.i));
  return 1;
}

/* -1, 0 or 1 for a < b, a == b, a > b; 2 when unordered (NaN). */
static int compare(o2m_num a, o2m_num b) {
  switch (a.kind) {
  case O2M_NUM_FLOAT:
    if (isnan(a.f) || isnan(b.f)) return 2;
    return (a.f > b.f) - (a.f < b.f);
  case O2M_NUM_UINT: return (bits(a) > bits(b)) - (bits(a) < bits(b));
  default: return (a.i > b.i) - (a.i < b.i);
  }
}

int o2m_num_max(o2m_num a, o2m_num b, o2m_num *out) {
  int c = compare(a, b);
  *out = c == 2 ? (isnan(a.f) ? a : b) : c >= 0 ? a : b; /* NaN propagates */
  return 1;
}

int o2m_num_min(o2m_num a, o2m_num b, o2m_num *out) {
  int c = compare(a, b);
  *out = c == 2 ? (isnan(a.f) ? a : b) : c <= 0 ? a : b;
  return 1;
}

/* ---- bits and logic ---------------------------------------------------- */

int o2m_num_bit_and(o2m_num a, o2m_num b, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) return 0;
  *out = int_num(a.kind, (int64_t)(bits(a) & bits(b)));
  return 1;
}

int o2m_num_bit_or(o2m_num a, o2m_num b, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) return 0;
  *out = int_num(a.kind, (int64_t)(bits(a) | bits(b)));
  return 1;
}

int o2m_num_bit_xor(o2m_num a, o2m_num b, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) return 0;
  *out = int_num(a.kind, (int64_t)(bits(a) ^ bits(b)));
  return 1;
}

/* BitShift is defined on unsigned types; a shift by the width or more
 * leaves 0. */
int o2m_num_shift_left(o2m_num a, o2m_num b, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) return 0;
  *out = int_num(a.kind, bits(b) >= 64 ? 0 : (int64_t)(bits(a) << bits(b)));
  return 1;
}

int o2m_num_shift_right(o2m_num a, o2m_num b, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) return 0;
  *out = int_num(a.kind, bits(b) >= 64 ? 0 : (int64_t)(bits(a) >> bits(b)));
  return 1;
}

static int truth(o2m_num a) { return a.kind == O2M_NUM_FLOAT ? a.f != 0 : a.i != 0; }

int o2m_num_and(o2m_num a, o2m_num b, o2m_num *out) {
  *out = o2m_num_bool(truth(a) && truth(b));
  return 1;
}

int o2m_num_or(o2m_num a, o2m_num b, o2m_num *out) {
  *out = o2m_num_bool(truth(a) || truth(b));
  return 1;
}

int o2m_num_xor(o2m_num a, o2m_num b, o2m_num *out) {
  *out = o2m_num_bool(truth(a) != truth(b));
  return 1;
}

int o2m_num_equal(o2m_num a, o2m_num b, o2m_num *out) {
  *out = o2m_num_bool(compare(a, b) == 0);
  return 1;
}

int o2m_num_less(o2m_num a, o2m_num b, o2m_num *out) {
  *out = o2m_num_bool(compare(a, b) == -1);
  return 1;
}

int o2m_num_less_equal(o2m_num a, o2m_num b, o2m_num *out) {
  int c = compare(a, b);
  *out = o2m_num_bool(c == -1 || c == 0);
  return 1;
}

int o2m_num_greater(o2m_num a, o2m_num b, o2m_num *out) {
  *out = o2m_num_bool(compare(a, b) == 1);
  return 1;
}

int o2m_num_greater_equal(o2m_num a, o2m_num b, o2m_num *out) {
  int c = compare(a, b);
  *out = o2m_num_bool(c == 1 || c == 0);
  return 1;
}

/* ---- unary ------------------------------------------------------------- */

int o2m_num_neg(o2m_num a, o2m_num *out) {
  *out = a.kind == O2M_NUM_FLOAT ? float_num(-a.f)
                                 : int_num(a.kind, (int64_t)(0 - bits(a)));
  return 1;
}

int o2m_num_abs(o2m_num a, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) *out = float_num(fabs(a.f));
  else if (a.kind == O2M_NUM_INT && a.i < 0) *out = int_num(a.kind, (int64_t)(0 - bits(a)));
  else *out = a;
  return 1;
}

int o2m_num_sign(o2m_num a, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT)
    *out = float_num(isnan(a.f) ? a.f : (a.f > 0) - (a.f < 0));
  else if (a.kind == O2M_NUM_UINT) *out = int_num(a.kind, a.i != 0);
  else *out = int_num(a.kind, (a.i > 0) - (a.i < 0));
  return 1;
}

int o2m_num_relu(o2m_num a, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) *out = float_num(a.f < 0 ? 0 : a.f);
  else if (a.kind == O2M_NUM_INT && a.i < 0) *out = int_num(a.kind, 0);
  else *out = a;
  return 1;
}

int o2m_num_not(o2m_num a, o2m_num *out) {
  *out = o2m_num_bool(!truth(a));
  return 1;
}

int o2m_num_bit_not(o2m_num a, o2m_num *out) {
  if (a.kind == O2M_NUM_FLOAT) return 0;
  *out = int_num(a.kind, (int64_t)~bits(a));
  return 1;
}

int o2m_num_sqrt(o2m_num a, o2m_num *out) {
  if (a.kind != O2M_NUM_FLOAT) return 0;
  *out = float_num(sqrt(a.f));
  return 1;
}

int o2m_num_ceil(o2m_num a, o2m_num *out) {
  if (a.kind != O2M_NUM_FLOAT) return 0;
  *out = float_num(ceil(a.f));
  return 1;
}

int o2m_num_floor(o2m_num a, o2m_num *out) {
  if (a.kind != O2M_NUM_FLOAT) return 0;
  *out = float_num(floor(a.f));
  return 1;
}

int o2m_num_round(o2m_num a, o2m_num *out) {
  if (a.kind != O2M_NUM_FLOAT) return 0;
  double r = floor(a.f), frac = a.f - r;
  if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) != 0)) r += 1;
  *out = float_num(isfinite(a.f) ? r : a.f);
  return 1;
}

int o2m_num_reciprocal(o2m_num a, o2m_num *out) {
  if (a.kind != O2M_NUM_FLOAT) return 0;
  *out = float_num(1.0 / a.f);
  return 1;
}
