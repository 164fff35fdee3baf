/* tosa_kit.h - the TOSA emitter's toolkit: what every TOSA lowering
 * (src/emit/tosa/tosa_<family>.c) is written in, on top of the kit that
 * all emitters share (src/emit/kit/kit.h).
 *
 * Owns: TOSA's operand conventions (shape operands as tosa.const_shape,
 * zero points and the mul shift as one-element constants), rank matching
 * for broadcasting (TOSA broadcasts only size-1 dims of equal ranks),
 * casts with ONNX semantics, transposes, reshapes, splat constants, the
 * dtype checks of the TOSA spec, and the lowering table (tosa_rules.def).
 *
 * Rules for TOSA lowerings (besides kit.h's):
 * - Emit only tosa ops (and func/tensor.cast through the kit); every
 *   result type is a ranked tensor whose element type TOSA allows
 *   (tw_dtype_ok): f64 and unsigned integers are refused with a reason,
 *   except where the op is the same on signless bits.
 * - ONNX signedness lives in the o2m dtype: get it from lw_in_type.
 */
#ifndef O2M_TOSA_KIT_H
#define O2M_TOSA_KIT_H

#include "emit/kit/kit.h"

enum { TW_MAX_RANK = 16 };

/* ---- dtypes ------------------------------------------------------------ */
/* Whether TOSA (with the extensions the target declares) has the dtype as
 * a tensor element: f32 f16 bf16 i1 i8 i16 i32 i64. Unsigned integers
 * count only with `unsigned_ok` (ops that act on bits the same way). */
int tw_dtype_ok(o2m_dtype d, int unsigned_ok);
/* lw_unsupported naming the dtype when !tw_dtype_ok(d, unsigned_ok). */
o2m_status tw_check_dtype(lw_ctx *cx, o2m_dtype d, int unsigned_ok);
/* Checks every present input and output of the node. */
o2m_status tw_check_node_dtypes(lw_ctx *cx, int unsigned_ok);

/* ---- dtypes TOSA lacks, carried in int8 (tosa_carried.c) ---------------- */
/* lw_target.carrier: int4/int2 -> int8; uint4/uint2 and the float8/float4
 * formats TOSA lacks (e4m3fnuz, e5m2fnuz, e8m0, e2m1) -> uint8. */
o2m_dtype tw_carrier(o2m_dtype d);
/* lw_target.narrow: a carried argument's low bits as its dtype. */
MlirValue tw_narrow_argument(lw_ctx *cx, MlirValue arg, o2m_dtype d);
/* Cast/CastLike where either side is a carried dtype. */
o2m_status tw_lower_carried_cast(lw_ctx *cx);

/* ---- types and shapes ---------------------------------------------------- */
/* Rank and sizes (-1 dynamic) of a ranked tensor value. */
int tw_rank(MlirValue v);
int64_t tw_size(MlirValue v, int k);
MlirType tw_elem(MlirValue v);
/* tensor<sizes x elem> (-1 = dynamic). */
MlirType tw_tensor(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes);
/* The value's type with another element type. */
MlirType tw_with_elem(lw_ctx *cx, MlirValue v, MlirType elem);

/* ---- constants ------------------------------------------------------------- */
/* tosa.const_shape of n values: !tosa.shape<n>. */
MlirValue tw_shape(lw_ctx *cx, int n, const int64_t *values);
/* A tosa.const of `rank` dims of size 1 holding v in element type `elem`
 * (float or integer; i1 for booleans). */
MlirValue tw_splat(lw_ctx *cx, MlirType elem, int rank, double v);
/* tensor<1xelem> zero: the zero-point operand of negate, conv, matmul... */
MlirValue tw_zero_point(lw_ctx *cx, MlirType elem);
/* An i32 tosa.const of one dim. */
MlirValue tw_const_i32(lw_ctx *cx, int n, const int32_t *values);
/* An f32 tosa.const of the given sizes holding n values. */
MlirValue tw_const_f32(lw_ctx *cx, int rank, const int64_t *sizes, int64_t n, const float *values);

/* ---- ops ------------------------------------------------------------------- */
/* tosa.reshape to sizes (at most one -1 = inferred). */
MlirValue tw_reshape(lw_ctx *cx, MlirValue v, int rank, const int64_t *sizes);
/* Reshape to `rank` by prepending size-1 dims (no-op at that rank). */
MlirValue tw_to_rank(lw_ctx *cx, MlirValue v, int rank);
/* tosa.transpose by perm (result dim k = input dim perm[k]). */
MlirValue tw_transpose(lw_ctx *cx, MlirValue v, const int *perm);
/* An elementwise op (tosa.add, ...) of n operands, ranks matched first;
 * the result has the broadcast shape and element type `elem` (null type:
 * the first operand's). */
MlirValue tw_elementwise(lw_ctx *cx, const char *op, int n, const MlirValue *operands,
                         MlirType elem, const char *attrs);
/* Shorthands: a single operand; two operands. */
MlirValue tw_unary(lw_ctx *cx, const char *op, MlirValue x);
MlirValue tw_binary(lw_ctx *cx, const char *op, MlirValue a, MlirValue b);
/* tosa.mul (shift 0). */
MlirValue tw_mul(lw_ctx *cx, MlirValue a, MlirValue b);
/* Comparisons: tosa.equal/greater/greater_equal (i1 result). */
MlirValue tw_compare(lw_ctx *cx, const char *op, MlirValue a, MlirValue b);
/* tosa.select(cond, a, b), ranks matched. */
MlirValue tw_select(lw_ctx *cx, MlirValue cond, MlirValue a, MlirValue b);
/* tosa.negate with zero points. */
MlirValue tw_negate(lw_ctx *cx, MlirValue x);
/* a / b for floats: a * reciprocal(b). */
MlirValue tw_fdiv(lw_ctx *cx, MlirValue a, MlirValue b);
/* tosa.clamp between lo and hi (floats; integers take them rounded). */
MlirValue tw_clamp(lw_ctx *cx, MlirValue x, double lo, double hi);
/* A cast with ONNX's semantics from dtype `from` to `to`: float to integer
 * truncates toward zero (TOSA rounds), bool results compare with zero. */
MlirValue tw_cast(lw_ctx *cx, MlirValue x, o2m_dtype from, o2m_dtype to);
/* tosa.slice of [start, start + len) along axis (v itself when whole). */
MlirValue tw_slice_axis(lw_ctx *cx, MlirValue v, int axis, int64_t start, int64_t len);
/* tosa.concat of n values along axis (vs[0] when n == 1). */
MlirValue tw_concat(lw_ctx *cx, int n, const MlirValue *vs, int axis);
/* tosa.reverse along axis. */
MlirValue tw_reverse(lw_ctx *cx, MlirValue v, int axis);
/* A reduce (tosa.reduce_sum, ...) over one axis, kept as a size-1 dim. */
MlirValue tw_reduce(lw_ctx *cx, const char *op, MlirValue x, int axis);

/* ---- convolutions (tosa_nn.c), for the quantized ops ------------------------ */
/* How a convolution reads its operands: float (zero points 0, f32
 * accumulator) or quantized (8-bit operands as int8 with their zero
 * points, an i32 accumulator and bias). A uint8 operand is moved into
 * int8 by subtracting 128, from its values and its zero point alike. */
typedef struct tw_conv_io {
  int w_input, b_input; /* node inputs of the weight and bias (-1: none) */
  int quant;
  int w_shift;          /* -128 for a uint8 weight, else 0 */
  MlirValue x_zp, w_zp; /* tensor<1xelem> zero points (quant) */
} tw_conv_io;
/* v of dtype d as int8 (a uint8 v moved by -128); v itself otherwise. */
MlirValue tw_as_int8(lw_ctx *cx, MlirValue v, o2m_dtype d, const tw_conv_io *io);
/* The Conv of x (ONNX layout, the node's attributes) channels-last:
 * *out is [N, spatial..., M] (1-D convolutions over a unit height). */
o2m_status tw_conv_channels_last(lw_ctx *cx, const tw_conv_io *io, MlirValue x, MlirValue *out);
/* A channels-last result as output 0 of an op on a rank-`onnx_rank` input. */
o2m_status tw_set_channels_last_out(lw_ctx *cx, MlirValue y, int onnx_rank);

/* ---- the lowering table ---------------------------------------------------- */
#define LOWER(op, fn) o2m_status fn(lw_ctx *cx);
#include "emit/tosa/tosa_rules.def"
#undef LOWER

/* The TOSA lowering of a default-domain op, or NULL. */
lw_lower_fn tw_lowering_for(const char *domain, const char *op_type);

#endif
