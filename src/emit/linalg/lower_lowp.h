/* lower_lowp.h - scalar conversion between f32 and ONNX's low-precision
 * float formats (float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz/e8m0, float4 e2m1),
 * for lw_scalar_cast (lower_cast.c). See lower_lowp.c. */
#ifndef O2M_LOWER_LOWP_H
#define O2M_LOWER_LOWP_H

#include "emit/linalg/lower_elementwise.h"

/* How a format spells NaN, for decoding. */
enum { NAN_NONE, NAN_MAX_MAG, NAN_ABOVE_INF, NAN_NEG_ZERO };

/* A sign/exponent/mantissa format (every one but e8m0): its layout and
 * how it spells NaN, infinity, overflow and zero. */
typedef struct lw_lowp_format {
  o2m_dtype dtype;
  int bits, man, bias;
  int max_mag;           /* largest finite magnitude code */
  int inf_mag;           /* infinity's magnitude code, -1 when none */
  int nan_mag;           /* the NaN code's magnitude */
  int nan_negative;      /* the NaN code has the sign bit set (input's sign else) */
  int overflow_mag;      /* without saturation: an overflow's magnitude code */
  int overflow_negative; /* ... whose sign bit is set (input's sign else) */
  int always_saturate;   /* ml_dtypes saturates this format regardless */
  int unsigned_zero;     /* no -0: a zero result has no sign */
  int nan_decode;        /* NAN_*: which codes decode to NaN */
} lw_lowp_format;

/* The format of dtype d, or NULL (e8m0, and dtypes that are no such format). */
const lw_lowp_format *lw_lowp_format_of(o2m_dtype d);
/* The exact value of code `code` of float8/float4 dtype d (NaN for NaN codes). */
double lw_lowp_value(o2m_dtype d, unsigned code);

/* Non-zero for a float8/float4 dtype. */
int lw_dtype_is_lowp(o2m_dtype d);
/* A low-precision scalar of dtype `from` as an f32 (exact). */
MlirValue lw_lowp_decode(lw_ctx *cx, MlirValue v, o2m_dtype from);
/* An f32 scalar as dtype `to`: round to nearest even (e8m0: per
 * round_mode "up", "down" or "nearest"); saturate clamps out-of-range
 * values and infinities to the largest finite value. */
MlirValue lw_lowp_encode(lw_ctx *cx, MlirValue x, o2m_dtype to, int saturate,
                         const char *round_mode);

/* Rewrites every arith.truncf to and arith.extf from float8 e4m3fn/e5m2
 * in a module (as upstream lowerings such as tosa-to-linalg make them,
 * and LLVM cannot lower) into this codec's integer arithmetic; truncf
 * rounds to nearest even without saturating, as arith.truncf. */
o2m_status lw_emulate_float8_casts(MlirModule module, o2m_diag *diag);

#endif
