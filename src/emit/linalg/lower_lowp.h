/* lower_lowp.h - scalar conversion between f32 and ONNX's low-precision
 * float formats (float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz/e8m0, float4 e2m1),
 * for lw_scalar_cast (lower_cast.c). See lower_lowp.c. */
#ifndef O2M_LOWER_LOWP_H
#define O2M_LOWER_LOWP_H

#include "emit/linalg/lower_elementwise.h"

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
