/* lower_cast.c - dtype conversion: lw_scalar_cast (lower_elementwise.h)
 * and the Linalg lowerings of Cast and CastLike.
 *
 * Owns: the conversion of a scalar between any two lowerable ONNX dtypes
 * (f16/bf16/f32/f64, signed and unsigned integers, bool) with ONNX Cast
 * semantics; float8/float4 go through f32 (lower_lowp.c), with the node's
 * saturate and round_mode attributes. Strings are not lowered. */
#include "emit/linalg/lower_lowp.h"
#include "emit/linalg/lower_window.h"

static MlirValue conv(lw_ctx *cx, const char *op, MlirValue v, MlirType to) {
  return lw_op1(cx, op, 1, &v, to, NULL);
}

/* v != 0 as i1 (NaN is true, as numpy's bool(nan)) */
static MlirValue nonzero(lw_ctx *cx, MlirValue v, int is_float) {
  MlirValue ops[2] = {v, lw_scalar_const(cx, mlirValueGetType(v), 0)};
  return lw_op1(cx, is_float ? "arith.cmpf" : "arith.cmpi", 2, ops, lw_type(cx, "i1"),
                is_float ? "predicate = 13 : i64" /* une */ : "predicate = 1 : i64" /* ne */);
}

static MlirValue float_to_float(lw_ctx *cx, MlirValue v, int from_bits, int to_bits, MlirType to) {
  if (from_bits == to_bits) /* f16 <-> bf16: through f32 */
    v = conv(cx, "arith.extf", v, lw_type(cx, "f32")), from_bits = 32;
  return conv(cx, from_bits < to_bits ? "arith.extf" : "arith.truncf", v, to);
}

/* float -> integer truncates toward zero. Narrow targets convert to a
 * wider signed integer and wrap, as numpy does on x86 (so -1.0 -> uint8
 * is 255): signed and 8/16-bit targets through i32, uint32 through i64. */
static MlirValue float_to_int(lw_ctx *cx, MlirValue v, o2m_dtype to, MlirType to_type) {
  int bits = o2m_dtype_bits(to);
  if (bits == 64) return conv(cx, lw_dtype_is_signed(to) ? "arith.fptosi" : "arith.fptoui", v, to_type);
  const char *via = lw_dtype_is_unsigned(to) && bits == 32 ? "i64" : "i32";
  MlirValue wide = conv(cx, "arith.fptosi", v, lw_type(cx, via));
  return mlirTypeEqual(mlirValueGetType(wide), to_type) ? wide : conv(cx, "arith.trunci", wide, to_type);
}

static MlirValue int_to_int(lw_ctx *cx, MlirValue v, o2m_dtype from, o2m_dtype to, MlirType to_type) {
  int from_bits = o2m_dtype_bits(from), to_bits = o2m_dtype_bits(to);
  if (from_bits == to_bits) return v;
  if (from_bits > to_bits) return conv(cx, "arith.trunci", v, to_type);
  return conv(cx, lw_dtype_is_signed(from) ? "arith.extsi" : "arith.extui", v, to_type);
}

MlirValue lw_scalar_cast(lw_ctx *cx, MlirValue v, o2m_dtype from, o2m_dtype to) {
  MlirType to_type = lw_elem_type(cx, to);
  if (mlirTypeIsNull(to_type) || mlirTypeIsNull(lw_elem_type(cx, from))) {
    lw_unsupported(cx, "cast from %s to %s is not lowered", o2m_dtype_name(from), o2m_dtype_name(to));
    return (MlirValue){NULL};
  }
  if (from == to) return v;
  if (lw_dtype_is_lowp(from)) {
    v = lw_lowp_decode(cx, v, from);
    return lw_scalar_cast(cx, v, O2M_DT_FLOAT, to);
  }
  if (lw_dtype_is_lowp(to)) {
    int saturate = cx->node ? lw_attr_int(cx, "saturate", 1) != 0 : 1;
    const char *round_mode = cx->node ? lw_attr_string(cx, "round_mode", "up") : "up";
    v = lw_scalar_cast(cx, v, from, O2M_DT_FLOAT);
    return mlirValueIsNull(v) ? v : lw_lowp_encode(cx, v, to, saturate, round_mode);
  }
  int from_float = lw_dtype_is_float(from), to_float = lw_dtype_is_float(to);
  if (to == O2M_DT_BOOL) return nonzero(cx, v, from_float);
  if (from_float && to_float) return float_to_float(cx, v, o2m_dtype_bits(from), o2m_dtype_bits(to), to_type);
  if (from_float) return float_to_int(cx, v, to, to_type);
  if (to_float) return conv(cx, lw_dtype_is_signed(from) ? "arith.sitofp" : "arith.uitofp", v, to_type);
  if (from == O2M_DT_BOOL) return conv(cx, "arith.extui", v, to_type);
  return int_to_int(cx, v, from, to, to_type);
}

/* ---- Cast, CastLike ------------------------------------------------------ */

typedef struct cast_dtypes {
  o2m_dtype from, to;
} cast_dtypes;


/* Cast and CastLike: input 0 converted to the dtype of output 0 (inferred
 * from `to` or from CastLike's second input) */
o2m_status lw_lower_cast(lw_ctx *cx) {
  cast_dtypes d = {lw_in_type(cx, 0)->elem, lw_out_type(cx, 0)->elem};
  MlirValue x = lw_in(cx, 0);
  MlirType elem = lw_elem_type(cx, d.to);
  if (mlirValueIsNull(x) || mlirTypeIsNull(elem) || mlirTypeIsNull(lw_elem_type(cx, d.from)))
    return lw_unsupported(cx, "cast from %s to %s is not lowered", o2m_dtype_name(d.from),
                          o2m_dtype_name(d.to));
  MlirValue y;
  o2m_status s = lw_convert(cx, x, d.from, d.to, &y);
  return s ? s : lw_set_out(cx, 0, y);
}


/* ---- BitCast -------------------------------------------------------------- */

/* the bits of input 0 read as output 0's dtype (same width); bool, one
 * byte in ONNX, is i1 here: it widens to 0/1 and narrows as != 0 */
static o2m_status bitcast_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const cast_dtypes *d = user;
  MlirType to = lw_elem_type(cx, d->to);
  if (d->from == O2M_DT_BOOL || d->to == O2M_DT_BOOL)
    *result = d->to == O2M_DT_BOOL ? nonzero(cx, args[0], 0) : conv(cx, "arith.extui", args[0], to);
  else
    *result = conv(cx, "arith.bitcast", args[0], to);
  return lw_value_status(cx, *result);
}

o2m_status lw_lower_bitcast(lw_ctx *cx) {
  cast_dtypes d = {lw_in_type(cx, 0)->elem, lw_out_type(cx, 0)->elem};
  MlirValue x = lw_in(cx, 0);
  MlirType from = lw_elem_type(cx, d.from), to = lw_elem_type(cx, d.to);
  if (mlirValueIsNull(x) || mlirTypeIsNull(from) || mlirTypeIsNull(to))
    return lw_unsupported(cx, "bitcast from %s to %s is not lowered", o2m_dtype_name(d.from), o2m_dtype_name(d.to));
  if (o2m_dtype_bits(d.from) != o2m_dtype_bits(d.to))
    return lw_error(cx, "bitcast from %s to %s changes the bit width", o2m_dtype_name(d.from), o2m_dtype_name(d.to));
  if (mlirTypeEqual(from, to)) return lw_set_out(cx, 0, x);
  MlirValue y;
  o2m_status s = lw_broadcast(cx, 1, &x, lw_out_type(cx, 0), to, bitcast_body, &d, &y);
  return s ? s : lw_set_out(cx, 0, y);
}
