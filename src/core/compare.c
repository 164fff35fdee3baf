/* compare.c - the tolerance comparison of compare.h.
 *
 * Owns: decoding every ONNX element type to a comparable value (one table
 * row per dtype: its kind, width, and for floats the exponent/mantissa
 * layout, so that f16, bf16, the float8 and float4 variants share one
 * decoder) and the mismatch report.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/compare.h"
#include "util/diag.h"

const o2m_compare_options o2m_compare_defaults = {1e-3, 1e-7, 5};

typedef enum kind { K_NONE, K_FLOAT, K_SINT, K_UINT, K_BOOL, K_STRING } kind;

/* How a float's all-ones patterns are read. */
typedef enum style {
  NATIVE, /* f32 / f64: the C types */
  IEEE,   /* max exponent: inf (mantissa 0) or NaN */
  FN,     /* no inf; exponent and mantissa all ones: NaN */
  FNUZ,   /* no inf, no -0; the sign bit alone: NaN */
  E8M0,   /* unsigned exponent only; all ones: NaN */
  FINITE  /* no inf, no NaN */
} style;

static const struct {
  kind kind;
  int bits;  /* of one part */
  int parts; /* 2 for complex */
  int ebits, mbits, bias;
  style style;
} types[O2M_DT_COUNT] = {
    [O2M_DT_FLOAT] = {K_FLOAT, 32, 1, 8, 23, 127, NATIVE},
    [O2M_DT_DOUBLE] = {K_FLOAT, 64, 1, 11, 52, 1023, NATIVE},
    [O2M_DT_FLOAT16] = {K_FLOAT, 16, 1, 5, 10, 15, IEEE},
    [O2M_DT_BFLOAT16] = {K_FLOAT, 16, 1, 8, 7, 127, IEEE},
    [O2M_DT_FLOAT8E4M3FN] = {K_FLOAT, 8, 1, 4, 3, 7, FN},
    [O2M_DT_FLOAT8E4M3FNUZ] = {K_FLOAT, 8, 1, 4, 3, 8, FNUZ},
    [O2M_DT_FLOAT8E5M2] = {K_FLOAT, 8, 1, 5, 2, 15, IEEE},
    [O2M_DT_FLOAT8E5M2FNUZ] = {K_FLOAT, 8, 1, 5, 2, 16, FNUZ},
    [O2M_DT_FLOAT8E8M0] = {K_FLOAT, 8, 1, 8, 0, 127, E8M0},
    [O2M_DT_FLOAT4E2M1] = {K_FLOAT, 4, 1, 2, 1, 1, FINITE},
    [O2M_DT_COMPLEX64] = {K_FLOAT, 32, 2, 8, 23, 127, NATIVE},
    [O2M_DT_COMPLEX128] = {K_FLOAT, 64, 2, 11, 52, 1023, NATIVE},
    [O2M_DT_INT2] = {K_SINT, 2, 1},   [O2M_DT_INT4] = {K_SINT, 4, 1},
    [O2M_DT_INT8] = {K_SINT, 8, 1},   [O2M_DT_INT16] = {K_SINT, 16, 1},
    [O2M_DT_INT32] = {K_SINT, 32, 1}, [O2M_DT_INT64] = {K_SINT, 64, 1},
    [O2M_DT_UINT2] = {K_UINT, 2, 1},  [O2M_DT_UINT4] = {K_UINT, 4, 1},
    [O2M_DT_UINT8] = {K_UINT, 8, 1},  [O2M_DT_UINT16] = {K_UINT, 16, 1},
    [O2M_DT_UINT32] = {K_UINT, 32, 1}, [O2M_DT_UINT64] = {K_UINT, 64, 1},
    [O2M_DT_BOOL] = {K_BOOL, 8, 1},   [O2M_DT_STRING] = {K_STRING, 0, 1},
};

/* ---- decoding ------------------------------------------------------------- */

/* The `bits`-wide little-endian field number `index` of `data`. */
static uint64_t field(const uint8_t *data, int64_t index, int bits) {
  if (bits < 8) {
    int per_byte = 8 / bits;
    return (uint64_t)(data[index / per_byte] >> ((index % per_byte) * bits)) & ((1u << bits) - 1);
  }
  uint64_t v = 0;
  const uint8_t *p = data + (size_t)index * (size_t)(bits / 8);
  for (int b = bits / 8 - 1; b >= 0; b--) v = v << 8 | p[b];
  return v;
}

static double decode_float(o2m_dtype dtype, uint64_t raw) {
  int eb = types[dtype].ebits, mb = types[dtype].mbits, bits = types[dtype].bits;
  if (types[dtype].style == NATIVE) {
    if (bits == 32) {
      uint32_t u = (uint32_t)raw;
      float f;
      memcpy(&f, &u, sizeof(f));
      return f;
    }
    double d;
    memcpy(&d, &raw, sizeof(d));
    return d;
  }
  uint64_t emax = (1u << eb) - 1, mmax = (1u << mb) - 1;
  uint64_t e = (raw >> mb) & emax, m = raw & mmax;
  int has_sign = types[dtype].style != E8M0;
  double sign = has_sign && (raw >> (bits - 1)) & 1 ? -1.0 : 1.0;
  switch (types[dtype].style) {
  case IEEE:
    if (e == emax) return m ? NAN : sign * INFINITY;
    break;
  case FN:
    if (e == emax && m == mmax) return NAN;
    break;
  case FNUZ:
    if (raw == (uint64_t)1 << (bits - 1)) return NAN;
    break;
  case E8M0:
    return e == emax ? NAN : ldexp(1.0, (int)e - types[dtype].bias);
  default:
    break;
  }
  int bias = types[dtype].bias;
  if (e == 0) return sign * ldexp((double)m, 1 - bias - mb);
  return sign * ldexp((double)(m | (mmax + 1)), (int)e - bias - mb);
}

static int64_t sign_extend(uint64_t v, int bits) {
  if (bits == 64) return (int64_t)v;
  uint64_t sign = (uint64_t)1 << (bits - 1);
  return (int64_t)((v ^ sign) - sign);
}

/* ---- the report -------------------------------------------------------- */

typedef struct report {
  char text[1536];
  size_t len;
  int64_t mismatches;
  double max_abs, max_rel;
} report;

static void say(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(report *r, const char *fmt, ...) {
  if (r->len >= sizeof(r->text) - 1) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(r->text + r->len, sizeof(r->text) - r->len, fmt, ap);
  va_end(ap);
  if (n > 0) r->len += (size_t)n;
  if (r->len > sizeof(r->text) - 1) r->len = sizeof(r->text) - 1;
}

/* "[1,0,2]" for element `flat` of `t`. */
static void say_index(report *r, const o2m_tensor *t, int64_t flat) {
  int64_t rest = flat, idx[64];
  int rank = t->rank < 64 ? t->rank : 64;
  for (int k = rank - 1; k >= 0; k--) {
    idx[k] = t->dims[k] ? rest % t->dims[k] : 0;
    rest = t->dims[k] ? rest / t->dims[k] : 0;
  }
  say(r, "[");
  for (int k = 0; k < rank; k++) say(r, "%s%" PRId64, k ? "," : "", idx[k]);
  say(r, "]");
}

static void say_shape(report *r, const o2m_tensor *t) {
  say(r, "%s [", o2m_dtype_name(t->dtype));
  for (int k = 0; k < t->rank; k++) say(r, "%s%" PRId64, k ? "," : "", t->dims[k]);
  say(r, "]");
}

/* ---- matching one element ------------------------------------------------ */

/* Every part of float element i within tolerance; tracks the errors. */
static int floats_match(const o2m_tensor *a, const o2m_tensor *e, int64_t i, const o2m_compare_options *o,
                        report *r) {
  int bits = types[e->dtype].bits, parts = types[e->dtype].parts, ok = 1;
  for (int p = 0; p < parts; p++) {
    double x = decode_float(e->dtype, field(a->data, i * parts + p, bits));
    double y = decode_float(e->dtype, field(e->data, i * parts + p, bits));
    if (isnan(x) || isnan(y)) {
      ok &= isnan(x) && isnan(y);
    } else if (isinf(x) || isinf(y)) {
      ok &= x == y;
    } else {
      double diff = fabs(x - y);
      if (diff > r->max_abs) r->max_abs = diff;
      if (y != 0 && diff / fabs(y) > r->max_rel) r->max_rel = diff / fabs(y);
      ok &= diff <= o->atol + o->rtol * fabs(y);
    }
  }
  return ok;
}

static int element_matches(const o2m_tensor *a, const o2m_tensor *e, int64_t i, const o2m_compare_options *o,
                           report *r) {
  int bits = types[e->dtype].bits;
  switch (types[e->dtype].kind) {
  case K_FLOAT:
    return floats_match(a, e, i, o, r);
  case K_STRING:
    return a->strings[i].len == e->strings[i].len &&
           (!e->strings[i].len || memcmp(a->strings[i].ptr, e->strings[i].ptr, e->strings[i].len) == 0);
  case K_BOOL:
    return (field(a->data, i, bits) != 0) == (field(e->data, i, bits) != 0);
  default:
    return field(a->data, i, bits) == field(e->data, i, bits);
  }
}

/* ---- formatting --------------------------------------------------------- */

void o2m_format_element(const o2m_tensor *t, int64_t i, char *buf, size_t cap) {
  kind k = o2m_dtype_valid((int)t->dtype) ? types[t->dtype].kind : K_NONE;
  int bits = k == K_NONE ? 0 : types[t->dtype].bits;
  if (k == K_NONE || (k == K_STRING ? !t->strings : !t->data) || i < 0 || i >= t->count) {
    snprintf(buf, cap, "?");
  } else if (k == K_FLOAT && types[t->dtype].parts == 2) {
    double re = decode_float(t->dtype, field(t->data, 2 * i, bits));
    double im = decode_float(t->dtype, field(t->data, 2 * i + 1, bits));
    snprintf(buf, cap, "%.9g%+.9gj", re, im);
  } else if (k == K_FLOAT) {
    snprintf(buf, cap, "%.9g", decode_float(t->dtype, field(t->data, i, bits)));
  } else if (k == K_SINT) {
    snprintf(buf, cap, "%" PRId64, sign_extend(field(t->data, i, bits), bits));
  } else if (k == K_UINT) {
    snprintf(buf, cap, "%" PRIu64, field(t->data, i, bits));
  } else if (k == K_BOOL) {
    snprintf(buf, cap, "%s", field(t->data, i, bits) ? "true" : "false");
  } else {
    o2m_bytes s = t->strings[i];
    snprintf(buf, cap, "\"%.*s\"", s.len > 40 ? 40 : (int)s.len, (const char *)s.ptr);
  }
}

/* ---- entry -------------------------------------------------------------- */

static int same_shape(const o2m_tensor *a, const o2m_tensor *e) {
  if (a->rank != e->rank || a->dtype != e->dtype) return 0;
  for (int k = 0; k < a->rank; k++)
    if (a->dims[k] != e->dims[k]) return 0;
  return 1;
}

static int has_payload(const o2m_tensor *t) {
  if (!t->count) return 1;
  if (t->dtype == O2M_DT_STRING) return t->strings != NULL;
  return t->data && t->nbytes >= o2m_dtype_storage_bytes(t->dtype, t->count);
}

o2m_status o2m_compare_tensors(const o2m_tensor *actual, const o2m_tensor *expected,
                               const o2m_compare_options *options, const char *what, o2m_diag *diag) {
  const o2m_compare_options *o = options ? options : &o2m_compare_defaults;
  report r = {.len = 0};
  say(&r, "%s: ", what ? what : "tensor");
  if (!same_shape(actual, expected)) {
    say(&r, "got ");
    say_shape(&r, actual);
    say(&r, ", expected ");
    say_shape(&r, expected);
    return o2m_fail(diag, O2M_ERR_INVALID, "%s", r.text);
  }
  if (!o2m_dtype_valid((int)expected->dtype) || types[expected->dtype].kind == K_NONE)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%scannot compare dtype %s", r.text,
                    o2m_dtype_name(expected->dtype));
  if (!has_payload(actual) || !has_payload(expected))
    return o2m_fail(diag, O2M_ERR_INVALID, "%sa tensor has no data", r.text);
  int is_float = types[expected->dtype].kind == K_FLOAT;
  report shown = {.len = 0};
  for (int64_t i = 0; i < expected->count; i++) {
    if (element_matches(actual, expected, i, o, &r)) continue;
    if (r.mismatches++ >= o->max_report) continue;
    char x[64], y[64];
    o2m_format_element(actual, i, x, sizeof(x));
    o2m_format_element(expected, i, y, sizeof(y));
    say(&shown, "%s", r.mismatches > 1 ? "; " : ": ");
    say_index(&shown, expected, i);
    say(&shown, " %s, expected %s", x, y);
  }
  if (!r.mismatches) return O2M_OK;
  say(&r, "%" PRId64 " of %" PRId64 " values differ", r.mismatches, expected->count);
  if (is_float) say(&r, " (rtol %g, atol %g)", o->rtol, o->atol);
  say(&r, "%s%s", shown.text, r.mismatches > o->max_report ? "; ..." : "");
  if (is_float) say(&r, "; max abs error %.3g, max rel error %.3g", r.max_abs, r.max_rel);
  return o2m_fail(diag, O2M_ERR_INVALID, "%s", r.text);
}
