/* lower_lowp.c - conversion of scalars between f32 and ONNX's low-precision
 * float formats (float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz, float4 e2m1, float8
 * e8m0), in integer arithmetic on the bits, since LLVM has no such types
 * (their values are stored as i8/i4 and reinterpreted with arith.bitcast).
 *
 * Owns: one table row per format (its layout and how it spells NaN,
 * infinity, overflow and zero) and the encoder/decoder driven by it,
 * matching ONNX's reference (round to nearest even; saturate clamps to the
 * largest finite value; e8m0 rounds up/down/nearest per round_mode). */
#include <math.h>
#include <string.h>

#include "emit/linalg/lower_lowp.h"
#include "util/diag.h"

static const lw_lowp_format formats[] = {
    /* dtype                bits man bias max   inf   nan   nan- ovf   ovf- sat uz  decode */
    {O2M_DT_FLOAT8E4M3FN,   8,   3,  7,   0x7E, -1,   0x7F, 0,   0x7F, 0,   0,  0,  NAN_MAX_MAG},
    {O2M_DT_FLOAT8E4M3FNUZ, 8,   3,  8,   0x7F, -1,   0,    1,   0,    1,   0,  1,  NAN_NEG_ZERO},
    {O2M_DT_FLOAT8E5M2,     8,   2,  15,  0x7B, 0x7C, 0x7E, 0,   0x7C, 0,   0,  0,  NAN_ABOVE_INF},
    {O2M_DT_FLOAT8E5M2FNUZ, 8,   2,  16,  0x7F, -1,   0,    1,   0,    1,   0,  1,  NAN_NEG_ZERO},
    {O2M_DT_FLOAT4E2M1,     4,   1,  1,   0x7,  -1,   0,    1,   0,    1,   1,  0,  NAN_NONE},
};

const lw_lowp_format *lw_lowp_format_of(o2m_dtype d) {
  for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
    if (formats[i].dtype == d) return &formats[i];
  return NULL;
}

double lw_lowp_value(o2m_dtype d, unsigned code) {
  const lw_lowp_format *f = lw_lowp_format_of(d);
  if (!f) return code == 0xFF ? NAN : ldexp(1.0, (int)code - 127); /* e8m0 */
  unsigned sign_bit = 1u << (f->bits - 1), mag = code & (sign_bit - 1);
  unsigned exp = mag >> f->man, m = mag & ((1u << f->man) - 1);
  int nan = f->nan_decode == NAN_MAX_MAG ? mag == sign_bit - 1
            : f->nan_decode == NAN_ABOVE_INF ? (int)mag > f->inf_mag
            : f->nan_decode == NAN_NEG_ZERO ? code == sign_bit : 0;
  if (nan) return NAN;
  double v = f->inf_mag >= 0 && (int)mag == f->inf_mag ? INFINITY
             : exp == 0 ? ldexp((double)m, 1 - f->bias - f->man)
                        : ldexp((double)(m | (1u << f->man)), (int)exp - f->bias - f->man);
  return code & sign_bit ? -v : v;
}

int lw_dtype_is_lowp(o2m_dtype d) { return lw_lowp_format_of(d) || d == O2M_DT_FLOAT8E8M0; }

/* ---- i32 helpers ----------------------------------------------------------------- */

static MlirType i32(lw_ctx *cx) { return lw_type(cx, "i32"); }
static MlirValue c32(lw_ctx *cx, int64_t v) { return lw_const_int(cx, i32(cx), v); }

static MlirValue bin(lw_ctx *cx, const char *op, MlirValue a, MlirValue b) {
  MlirValue ops[2] = {a, b};
  return lw_op1(cx, op, 2, ops, mlirValueGetType(a), NULL);
}

static MlirValue conv(lw_ctx *cx, const char *op, MlirValue v, MlirType to) {
  return lw_op1(cx, op, 1, &v, to, NULL);
}

static MlirValue ieq(lw_ctx *cx, MlirValue a, int64_t b) { return lw_cmpi(cx, LW_I_EQ, a, c32(cx, b)); }
static MlirValue pick(lw_ctx *cx, MlirValue c, MlirValue a, MlirValue b) { return lw_select(cx, c, a, b); }

/* the storage integer of a low-precision value, zero-extended to i32 */
static MlirValue bits_of(lw_ctx *cx, MlirValue v, int bits) {
  MlirValue raw = conv(cx, "arith.bitcast", v, lw_type(cx, bits == 4 ? "i4" : "i8"));
  return conv(cx, "arith.extui", raw, i32(cx));
}

/* an i32 code truncated to the format's storage and reinterpreted */
static MlirValue from_bits(lw_ctx *cx, MlirValue code, int bits, o2m_dtype to) {
  MlirValue raw = conv(cx, "arith.trunci", code, lw_type(cx, bits == 4 ? "i4" : "i8"));
  return conv(cx, "arith.bitcast", raw, lw_elem_type(cx, to));
}

static MlirValue f32_from_bits(lw_ctx *cx, MlirValue u) { return conv(cx, "arith.bitcast", u, lw_type(cx, "f32")); }

/* ---- e8m0: a biased exponent, no sign, 0xFF is NaN ------------------------------- */

static MlirValue e8m0_decode(lw_ctx *cx, MlirValue v) {
  MlirValue e = bits_of(cx, v, 8);
  /* 2^(e - 127): the exponent field of an f32; e = 0 is the subnormal 2^-127 */
  MlirValue u = pick(cx, ieq(cx, e, 0), c32(cx, 0x00400000), bin(cx, "arith.shli", e, c32(cx, 23)));
  return pick(cx, ieq(cx, e, 0xFF), lw_scalar_const(cx, lw_type(cx, "f32"), NAN), f32_from_bits(cx, u));
}

static MlirValue e8m0_encode(lw_ctx *cx, MlirValue x, int saturate, const char *round_mode) {
  MlirValue u = conv(cx, "arith.bitcast", x, i32(cx));
  MlirValue e = bin(cx, "arith.andi", bin(cx, "arith.shrui", u, c32(cx, 23)), c32(cx, 0xFF));
  MlirValue frac = bin(cx, "arith.andi", u, c32(cx, 0x7FFFFF));
  MlirValue zero = c32(cx, 0), up;
  if (strcmp(round_mode, "down") == 0) {
    up = lw_scalar_const(cx, lw_type(cx, "i1"), 0);
  } else if (strcmp(round_mode, "nearest") == 0) {
    /* guard && (round || sticky || exponent > 0), as the reference */
    MlirValue g = lw_cmpi(cx, LW_I_NE, bin(cx, "arith.andi", frac, c32(cx, 0x400000)), zero);
    MlirValue rest = lw_cmpi(cx, LW_I_NE, bin(cx, "arith.andi", frac, c32(cx, 0x3FFFFF)), zero);
    MlirValue lsb = lw_cmpi(cx, LW_I_UGT, e, zero);
    up = bin(cx, "arith.andi", g, bin(cx, "arith.ori", rest, lsb));
  } else {
    up = lw_cmpi(cx, LW_I_NE, frac, zero);
  }
  if (saturate) up = bin(cx, "arith.andi", up, lw_cmpi(cx, LW_I_NE, e, c32(cx, 0xFE)));
  MlirValue rounded = bin(cx, "arith.addi", e, conv(cx, "arith.extui", up, i32(cx)));
  return from_bits(cx, pick(cx, ieq(cx, e, 0xFF), c32(cx, 0xFF), rounded), 8, O2M_DT_FLOAT8E8M0);
}

/* ---- sign/exponent/mantissa formats ---------------------------------------------- */

static MlirValue decode(lw_ctx *cx, const lw_lowp_format *f, MlirValue v) {
  MlirType f32 = lw_type(cx, "f32");
  MlirValue c = bits_of(cx, v, f->bits);
  int sign_shift = f->bits - 1, mag_mask = (1 << sign_shift) - 1;
  MlirValue mag = bin(cx, "arith.andi", c, c32(cx, mag_mask));
  MlirValue exp = bin(cx, "arith.shrui", mag, c32(cx, f->man));
  MlirValue m = bin(cx, "arith.andi", mag, c32(cx, (1 << f->man) - 1));
  /* normal: the f32 with the exponent rebiased and the mantissa aligned */
  MlirValue normal = bin(cx, "arith.ori",
                         bin(cx, "arith.shli", bin(cx, "arith.addi", exp, c32(cx, 127 - f->bias)), c32(cx, 23)),
                         bin(cx, "arith.shli", m, c32(cx, 23 - f->man)));
  /* subnormal: m * 2^(1 - bias - man), exact in f32 */
  MlirValue sub = bin(cx, "arith.mulf", conv(cx, "arith.uitofp", m, f32),
                      lw_scalar_const(cx, f32, ldexp(1.0, 1 - f->bias - f->man)));
  MlirValue value = pick(cx, ieq(cx, exp, 0), sub, f32_from_bits(cx, normal));
  if (f->inf_mag >= 0) value = pick(cx, ieq(cx, mag, f->inf_mag), lw_scalar_const(cx, f32, INFINITY), value);
  MlirValue negative = lw_cmpi(cx, LW_I_NE, bin(cx, "arith.shrui", c, c32(cx, sign_shift)), c32(cx, 0));
  value = pick(cx, negative, conv(cx, "arith.negf", value, f32), value);
  MlirValue is_nan;
  switch (f->nan_decode) {
  case NAN_MAX_MAG: is_nan = ieq(cx, mag, mag_mask); break;
  case NAN_ABOVE_INF: is_nan = lw_cmpi(cx, LW_I_UGT, mag, c32(cx, f->inf_mag)); break;
  case NAN_NEG_ZERO: is_nan = ieq(cx, c, 1 << sign_shift); break;
  default: return value;
  }
  return pick(cx, is_nan, lw_scalar_const(cx, f32, NAN), value);
}

/* the sign bit for a special code: set, or the input's */
static MlirValue special_sign(lw_ctx *cx, int negative, MlirValue sign) { return negative ? c32(cx, 1) : sign; }

static MlirValue encode(lw_ctx *cx, const lw_lowp_format *f, MlirValue x, int saturate) {
  MlirType f32 = lw_type(cx, "f32");
  saturate = saturate || f->always_saturate;
  MlirValue u = conv(cx, "arith.bitcast", x, i32(cx));
  MlirValue sign = bin(cx, "arith.shrui", u, c32(cx, 31));
  MlirValue a = bin(cx, "arith.andi", u, c32(cx, 0x7FFFFFFF));
  /* normal in the target: drop 23 - man mantissa bits, rounding to nearest
   * even, then rebias the exponent (a carry moves into it correctly) */
  int drop = 23 - f->man;
  MlirValue lsb = bin(cx, "arith.andi", bin(cx, "arith.shrui", a, c32(cx, drop)), c32(cx, 1));
  MlirValue r = bin(cx, "arith.addi", bin(cx, "arith.addi", a, c32(cx, (1 << (drop - 1)) - 1)), lsb);
  r = bin(cx, "arith.subi", bin(cx, "arith.shrui", r, c32(cx, drop)), c32(cx, (int64_t)(127 - f->bias) << f->man));
  /* subnormal in the target: |x| / 2^(1 - bias - man) rounded to even, exact */
  MlirValue scaled = bin(cx, "arith.mulf", f32_from_bits(cx, a), lw_scalar_const(cx, f32, ldexp(1.0, f->man - 1 + f->bias)));
  MlirValue q = conv(cx, "arith.fptoui", conv(cx, "math.roundeven", scaled, f32), i32(cx));
  MlirValue is_sub = lw_cmpi(cx, LW_I_ULT, a, c32(cx, (int64_t)(128 - f->bias) << 23));
  MlirValue mag = pick(cx, is_sub, q, r);
  /* no -0: a zero drops its sign (before special codes, which may be 0x80) */
  MlirValue s = f->unsigned_zero ? pick(cx, ieq(cx, mag, 0), c32(cx, 0), sign) : sign;
  MlirValue is_inf = ieq(cx, a, 0x7F800000), is_nan = lw_cmpi(cx, LW_I_UGT, a, c32(cx, 0x7F800000));
  MlirValue overflow = bin(cx, "arith.ori", lw_cmpi(cx, LW_I_SGT, mag, c32(cx, f->max_mag)), is_inf);
  MlirValue over_mag = c32(cx, saturate ? f->max_mag : f->overflow_mag);
  MlirValue over_sign = saturate ? sign : special_sign(cx, f->overflow_negative, sign);
  mag = pick(cx, overflow, over_mag, mag);
  s = pick(cx, overflow, over_sign, s);
  mag = pick(cx, is_nan, c32(cx, f->nan_mag), mag);
  s = pick(cx, is_nan, special_sign(cx, f->nan_negative, sign), s);
  MlirValue code = bin(cx, "arith.ori", bin(cx, "arith.shli", s, c32(cx, f->bits - 1)), mag);
  return from_bits(cx, code, f->bits, f->dtype);
}

MlirValue lw_lowp_decode(lw_ctx *cx, MlirValue v, o2m_dtype from) {
  const lw_lowp_format *f = lw_lowp_format_of(from);
  return f ? decode(cx, f, v) : e8m0_decode(cx, v);
}

MlirValue lw_lowp_encode(lw_ctx *cx, MlirValue x, o2m_dtype to, int saturate, const char *round_mode) {
  const lw_lowp_format *f = lw_lowp_format_of(to);
  return f ? encode(cx, f, x, saturate) : e8m0_encode(cx, x, saturate, round_mode);
}

/* ---- float8 conversions in a built module ------------------------------------------- */

/* The ONNX dtype of a float8 MLIR type this codec takes, or 0. */
static o2m_dtype float8_of(MlirType t) {
  if (mlirTypeIsAFloat8E4M3FN(t)) return O2M_DT_FLOAT8E4M3FN;
  if (mlirTypeIsAFloat8E5M2(t)) return O2M_DT_FLOAT8E5M2;
  return O2M_DT_UNDEFINED;
}

enum { MAX_CASTS = 4096 };

typedef struct cast_list {
  MlirOperation ops[MAX_CASTS];
  int n, overflow;
} cast_list;

static int is_op(MlirOperation op, const char *name) {
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
  return s.length == strlen(name) && memcmp(s.data, name, s.length) == 0;
}

static MlirWalkResult find_casts(MlirOperation op, void *user) {
  cast_list *l = user;
  int trunc = is_op(op, "arith.truncf"), ext = is_op(op, "arith.extf");
  if (!trunc && !ext) return MlirWalkResultAdvance;
  MlirType t = trunc ? mlirValueGetType(mlirOperationGetResult(op, 0)) : mlirValueGetType(mlirOperationGetOperand(op, 0));
  if (!float8_of(t)) return MlirWalkResultAdvance;
  if (l->n == MAX_CASTS) l->overflow = 1;
  else l->ops[l->n++] = op;
  return MlirWalkResultAdvance;
}

/* The replacement of one cast, built at the end of cx->block. */
static MlirValue replacement(lw_ctx *cx, MlirOperation op) {
  MlirValue x = mlirOperationGetOperand(op, 0);
  MlirType result = mlirValueGetType(mlirOperationGetResult(op, 0)), f32 = lw_type(cx, "f32");
  if (is_op(op, "arith.truncf")) {
    if (!mlirTypeEqual(mlirValueGetType(x), f32)) x = conv(cx, "arith.extf", x, f32);
    return lw_lowp_encode(cx, x, float8_of(result), 0, NULL);
  }
  MlirValue y = lw_lowp_decode(cx, x, float8_of(mlirValueGetType(x)));
  return mlirTypeEqual(result, f32) ? y : conv(cx, "arith.truncf", y, result);
}

o2m_status lw_emulate_float8_casts(MlirModule module, o2m_diag *diag) {
  static cast_list list; /* one module at a time (runs are one per process) */
  list.n = list.overflow = 0;
  mlirOperationWalk(mlirModuleGetOperation(module), find_casts, &list, MlirWalkPostOrder);
  if (list.overflow) return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "more than %d float8 conversions", MAX_CASTS);
  lw_ctx cx;
  memset(&cx, 0, sizeof(cx));
  cx.mc = mlirModuleGetContext(module);
  cx.diag = diag;
  for (int i = 0; i < list.n; i++) {
    MlirOperation op = list.ops[i];
    cx.loc = mlirOperationGetLocation(op);
    MlirBlock scratch = mlirBlockCreate(0, NULL, NULL);
    cx.block = scratch;
    MlirValue v = replacement(&cx, op);
    if (mlirValueIsNull(v)) {
      mlirBlockDestroy(scratch);
      o2m_arena_free(&cx.scratch);
      return o2m_fail(diag, O2M_ERR_INTERNAL, "internal: a float8 conversion could not be rewritten");
    }
    for (MlirOperation o = mlirBlockGetFirstOperation(scratch); !mlirOperationIsNull(o);) {
      MlirOperation next = mlirOperationGetNextInBlock(o);
      mlirOperationMoveBefore(o, op);
      o = next;
    }
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), v);
    mlirOperationDestroy(op);
    mlirBlockDestroy(scratch);
  }
  o2m_arena_free(&cx.scratch);
  return O2M_OK;
}
