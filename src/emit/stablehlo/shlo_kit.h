/* shlo_kit.h - the StableHLO emitter's toolkit: what every StableHLO
 * lowering (src/emit/stablehlo/shlo_<family>.c) is written in, on top of
 * the kit that all emitters share (src/emit/kit/kit.h).
 *
 * The StableHLO dialect is not part of upstream MLIR: ops are made as
 * unregistered operations (the context allows unregistered dialects) and
 * print in MLIR's generic syntax, with exactly the op names, attribute
 * names and attribute syntax of the StableHLO specification (docs/spec.md
 * of openxla/stablehlo, version 1.13.8, commit 6b4e61fe). Dialect
 * attributes are written in their own syntax and held as opaque
 * attributes: `#stablehlo<comparison_direction GT>`,
 * `#stablehlo.dot<...>`, `#stablehlo.conv<...>`, `#stablehlo.gather<...>`.
 *
 * Owns: types (unsigned integers are MLIR's ui8..ui64, booleans i1),
 * constants, numpy broadcasting (broadcast_in_dim, or
 * dynamic_broadcast_in_dim with a shape tensor where dims are dynamic),
 * elementwise ops, compare/select/convert, reshape (dynamic_reshape when
 * dynamic), transpose, slices, concatenate, iota, reduce with its reducer
 * region, dot_general, shape tensors (get_dimension_size), and the
 * lowering table (shlo_rules.def).
 *
 * Rules for StableHLO lowerings (besides kit.h's):
 * - Emit only stablehlo ops (func.* comes from the kit); every op must
 *   match its row in shlo_spec.def, which the checker enforces on every
 *   emitted module.
 * - A node StableHLO cannot express is refused with lw_unsupported and
 *   its reason, never hidden in a custom_call (the one custom_call is
 *   the host call of an If branch that cannot be built, kit.h).
 */
#ifndef O2M_SHLO_KIT_H
#define O2M_SHLO_KIT_H

#include "emit/kit/kit.h"

enum { SH_MAX_RANK = 16 };

/* ---- types ----------------------------------------------------------------- */
int sh_rank(MlirValue v);
int64_t sh_size(MlirValue v, int k); /* -1: dynamic */
int sh_is_static(MlirValue v);
MlirType sh_elem(MlirValue v);
int sh_elem_is_float(MlirType elem);    /* f16 bf16 f32 f64 (and float8) */
int sh_elem_is_unsigned(MlirType elem); /* ui8.. and i1 */
int sh_elem_is_bool(MlirType elem);
int sh_elem_is_complex(MlirType elem);
/* tensor<sizes x elem> (-1 = dynamic); rank 0: tensor<elem>. */
MlirType sh_tensor(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes);
MlirType sh_with_elem(lw_ctx *cx, MlirValue v, MlirType elem);
MlirType sh_i64(lw_ctx *cx);
MlirType sh_i32(lw_ctx *cx);
MlirType sh_i1(lw_ctx *cx);
/* The StableHLO element type of an ONNX dtype (null when none). */
MlirType sh_elem_of(lw_ctx *cx, o2m_dtype d);
/* "FLOAT", "SIGNED", "UNSIGNED": the compare_type of an element type. */
const char *sh_compare_type(MlirType elem);

/* ---- ops --------------------------------------------------------------------- */
/* lw_op1 with printf-style attribute text (NULL: none). */
MlirValue sh_op(lw_ctx *cx, const char *name, int n, const MlirValue *operands, MlirType result,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Writes "array<i64: a, b, ...>" into buf (returns buf). */
char *sh_array(char *buf, size_t size, int n, const int64_t *values);
/* Writes "[a, b, ...]" into buf (returns buf). */
char *sh_list(char *buf, size_t size, int n, const int64_t *values);
/* A block of n arguments appended to region `index` of op. */
MlirBlock sh_region_block(lw_ctx *cx, MlirOperation op, int index, int n, const MlirType *types);

/* ---- constants ----------------------------------------------------------------- */
/* stablehlo.constant of type tensor<sizes x elem> filled with v. */
MlirValue sh_const_splat(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes, double v);
/* A 0-d constant. */
MlirValue sh_scalar(lw_ctx *cx, MlirType elem, double v);
/* v (any value) filled into the shape of `like` (broadcast when dynamic). */
MlirValue sh_fill_like(lw_ctx *cx, MlirType elem, double v, MlirValue like);
/* 1-D i64 constant. */
MlirValue sh_const_i64s(lw_ctx *cx, int n, const int64_t *values);

/* ---- shapes ---------------------------------------------------------------------- */
/* Dim k of v as a 0-d i64 tensor (constant when static). */
MlirValue sh_dim(lw_ctx *cx, MlirValue v, int k);
/* A shape tensor tensor<n x i64> from 0-d i64 dims. */
MlirValue sh_shape_from_dims(lw_ctx *cx, int n, const MlirValue *dims);
/* The shape of v as tensor<rank x i64>. */
MlirValue sh_shape_of(lw_ctx *cx, MlirValue v);
/* stablehlo.reshape to sizes (static), or dynamic_reshape by `shape`
 * (tensor<rank x i64>) to `type` when type has dynamic dims. */
MlirValue sh_reshape(lw_ctx *cx, MlirValue v, int rank, const int64_t *sizes);
MlirValue sh_reshape_dynamic(lw_ctx *cx, MlirValue v, MlirValue shape, MlirType type);
/* v broadcast into `type` with broadcast_dimensions dims; shape (may be
 * null when type is static) gives the dynamic result shape. */
MlirValue sh_broadcast_in_dim(lw_ctx *cx, MlirValue v, MlirType type, MlirValue shape,
                              const int64_t *dims);
/* numpy broadcasting of n values to one shape (in place); their element
 * types stay. Returns 0 when shapes do not broadcast. */
int sh_broadcast_all(lw_ctx *cx, int n, MlirValue *values);
/* v broadcast numpy-style to the shape of `like` (element type kept). */
MlirValue sh_broadcast_like(lw_ctx *cx, MlirValue v, MlirValue like);

/* ---- elementwise --------------------------------------------------------------- */
/* op over n operands broadcast to one shape; result element type `elem`
 * (null: the first operand's). */
MlirValue sh_elementwise(lw_ctx *cx, const char *op, int n, const MlirValue *operands,
                         MlirType elem, const char *attrs);
MlirValue sh_unary(lw_ctx *cx, const char *op, MlirValue x);
MlirValue sh_binary(lw_ctx *cx, const char *op, MlirValue a, MlirValue b);
/* stablehlo.compare (direction EQ NE GE GT LE LT), compare_type from the
 * operands' element type. */
MlirValue sh_compare(lw_ctx *cx, const char *direction, MlirValue a, MlirValue b);
MlirValue sh_select(lw_ctx *cx, MlirValue pred, MlirValue a, MlirValue b);
/* stablehlo.convert to elem (v itself when equal). */
MlirValue sh_convert(lw_ctx *cx, MlirValue v, MlirType elem);
/* clamp(lo, x, hi) with lo/hi scalars of x's element type (0-d values). */
MlirValue sh_clamp(lw_ctx *cx, MlirValue lo, MlirValue x, MlirValue hi);

/* ---- data movement ------------------------------------------------------------- */
MlirValue sh_transpose(lw_ctx *cx, MlirValue v, const int64_t *perm);
/* stablehlo.slice (static shapes). */
MlirValue sh_slice(lw_ctx *cx, MlirValue v, const int64_t *start, const int64_t *limit,
                   const int64_t *stride);
/* [start, start + len) along axis, stride 1 (v when whole). */
MlirValue sh_slice_axis(lw_ctx *cx, MlirValue v, int axis, int64_t start, int64_t len);
MlirValue sh_concat(lw_ctx *cx, int n, const MlirValue *vs, int axis);
/* stablehlo.iota along dim of a static type. */
MlirValue sh_iota(lw_ctx *cx, MlirType type, int dim);
MlirValue sh_reverse(lw_ctx *cx, MlirValue v, int n, const int64_t *dims);

/* ---- reductions and contractions -------------------------------------------------- */
/* stablehlo.reduce of x over dims with init value `init` (a 0-d value of
 * x's element type) and the reducer `body_op` (stablehlo.add, ...); the
 * reduced dims are removed. */
MlirValue sh_reduce(lw_ctx *cx, MlirValue x, MlirValue init, const char *body_op, int n_dims,
                    const int64_t *dims);
/* The type f16 and bf16 contractions accumulate in (f32, as ONNX's
 * reference does); elem itself for the others. */
MlirType sh_accumulator(lw_ctx *cx, MlirType elem);
/* stablehlo.dot_general; the result type is batch dims, lhs free dims,
 * rhs free dims with element type `elem` (f16/bf16 operands computed in
 * f32, then rounded once). */
MlirValue sh_dot_general(lw_ctx *cx, MlirValue lhs, MlirValue rhs, int n_batch,
                         const int64_t *lhs_batch, const int64_t *rhs_batch, int n_contract,
                         const int64_t *lhs_contract, const int64_t *rhs_contract, MlirType elem);

/* ---- node helpers ------------------------------------------------------------------ */
/* The inferred type of output i as a StableHLO type (null when none). */
MlirType sh_out_type(lw_ctx *cx, int i);
/* lw_unsupported unless every present input and output is a ranked
 * tensor of a StableHLO element type. */
o2m_status sh_check_node(lw_ctx *cx);
/* An axis attribute normalized into [0, rank) (-1 when out of range). */
int sh_axis(int64_t axis, int rank);

/* ---- the lowering table ---------------------------------------------------------- */
#define LOWER(op, fn) o2m_status fn(lw_ctx *cx);
#include "emit/stablehlo/shlo_rules.def"
#undef LOWER

lw_lower_fn sh_lowering_for(const char *domain, const char *op_type);
/* Whether DequantizeLinear node n has a quantized-type form (shlo_quant.c). */
int sh_dequantize_kept(const o2m_node *n);

#endif
