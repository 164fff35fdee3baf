/* lower_shape.h - helpers shared by the shape and index family of the
 * Linalg emitter (lower_shape.c, lower_index.c, lower_scatter.c),
 * implemented in lower_shape.c. They are general (index arithmetic that folds constants,
 * integer inputs read as sizes, reshapes between inferred types, slices,
 * "gather-style" linalg.generic ops whose body reads with tensor.extract)
 * and belong in the toolkit (lower.h) once it takes them.
 *
 * Rules: as in lower.h. Every helper returns a null MlirValue (or a
 * non-zero status) after filling the diag through lw_error/lw_unsupported.
 */
#ifndef O2M_LOWER_SHAPE_H
#define O2M_LOWER_SHAPE_H

#include "emit/linalg/lower.h"

/* The largest rank these helpers handle (the toolkit's limit too). */
enum { LW_MAX_RANK = 64 };

/* ---- index arithmetic that folds constants -------------------------------
 * A size or an index: the constant c when v is null, else the MLIR value v
 * (of type index, or i1 for comparisons). Operations on constants give
 * constants, so static shapes emit no arithmetic. */
typedef struct lw_ix {
  MlirValue v;
  int64_t c;
} lw_ix;

typedef enum lw_ix_op {
  LW_IX_ADD,
  LW_IX_SUB,
  LW_IX_MUL,
  LW_IX_FLOORDIV,
  LW_IX_CEILDIV,
  LW_IX_REM, /* the sign of the dividend */
  LW_IX_MIN,
  LW_IX_MAX,
  LW_IX_EQ, /* EQ..GE compare (signed), giving an i1 */
  LW_IX_NE,
  LW_IX_LT,
  LW_IX_LE,
  LW_IX_GT,
  LW_IX_GE,
  LW_IX_AND, /* of two i1 (never materializes a constant) */
  LW_IX_OP_COUNT
} lw_ix_op;

static inline lw_ix lw_ix_c(int64_t c) { return (lw_ix){{NULL}, c}; }
static inline lw_ix lw_ix_v(MlirValue v) { return (lw_ix){v, 0}; }
static inline int lw_ix_is_const(lw_ix a) { return mlirValueIsNull(a.v); }

lw_ix lw_ix_bin(lw_ctx *cx, lw_ix_op op, lw_ix a, lw_ix b);
/* cond ? a : b (cond: a comparison, or a constant). */
lw_ix lw_ix_select(lw_ctx *cx, lw_ix cond, lw_ix a, lw_ix b);
/* v, or v + d when v is negative (a position counted from the end). */
lw_ix lw_ix_from_end(lw_ctx *cx, lw_ix v, lw_ix d);
/* min(max(a, lo), hi) */
lw_ix lw_ix_clamp(lw_ctx *cx, lw_ix a, lw_ix lo, lw_ix hi);
/* The index (or i1) value of a; constants are materialized here. */
MlirValue lw_ix_value(lw_ctx *cx, lw_ix a);
/* Dim k of a ranked tensor value. */
lw_ix lw_ix_dim(lw_ctx *cx, MlirValue tensor, int k);
/* A scalar integer (any width; unsigned per `dtype`) or float (truncated
 * toward zero) as an index. */
MlirValue lw_scalar_to_index(lw_ctx *cx, MlirValue scalar, o2m_dtype dtype);

/* Inputs 0..n-1 of the node into v, all required (lw_error otherwise). */
o2m_status lw_inputs(lw_ctx *cx, int n, MlirValue *v);
/* The rank of a ranked tensor value. */
int lw_rank(MlirValue v);
/* A position read from an index element (integer or float, of dtype dt):
 * negative counts from the end of `dim`; clamped into [0, dim - 1] so that
 * a bad index never reads outside a tensor. */
MlirValue lw_norm_index(lw_ctx *cx, MlirValue elem, o2m_dtype dt, lw_ix dim);

/* Node input i read as n integers (a known value: constants; a runtime
 * tensor of static element count: one tensor.extract each). Returns the
 * count and *out (scratch memory), or -1 when the input is absent, not an
 * integer/float tensor, or of dynamic size. */
int lw_in_ixs(lw_ctx *cx, int i, lw_ix **out);
/* The single element of node input i (a scalar or one-element tensor), as a
 * scalar of its element type; null when absent. */
MlirValue lw_in_scalar(lw_ctx *cx, int i);

/* ---- data movement ------------------------------------------------------ */

/* tensor.extract of `tensor` at `idx` (rank values of type index). */
MlirValue lw_extract(lw_ctx *cx, MlirValue tensor, const MlirValue *idx);
/* Element k of a 0-D or 1-D tensor (of the last dim for higher ranks). */
MlirValue lw_extract_at(lw_ctx *cx, MlirValue tensor, int64_t k);

/* Reshapes x (whose inferred type is `in_t`) to the inferred type `out_t`
 * with tensor.collapse_shape/expand_shape, grouping dims whose products
 * match (symbols of equal name cancel). `dims` (out_t->rank entries, may be
 * NULL) gives dynamic output sizes the caller knows; an entry that is the
 * constant -1 is unknown and is taken from an input dim of the same symbol,
 * or, for a single remaining one, from the element count. */
MlirValue lw_reshape(lw_ctx *cx, MlirValue x, const o2m_type *in_t, const o2m_type *out_t,
                     const lw_ix *dims);

/* tensor.reshape of x to `type`, its sizes `dims` (one per dim of type):
 * a reshape the elementwise fusion leaves alone (exec_fusion.c), even of
 * dynamic dims. */
MlirValue lw_reshape_op(lw_ctx *cx, MlirValue x, MlirType type, const lw_ix *dims);

/* lw_reshape of a statically shaped x to `shape` (rank entries, same
 * dtype `dtype`). */
MlirValue lw_reshape_static(lw_ctx *cx, MlirValue x, o2m_dtype dtype, int rank, const int64_t *shape);

/* tensor.extract_slice of src with offsets, sizes and strides given per
 * dim (rank entries each; strides NULL = all 1); the result is static
 * where the size is a constant. */
MlirValue lw_extract_slice(lw_ctx *cx, MlirValue src, const lw_ix *offsets, const lw_ix *sizes,
                           const lw_ix *strides);
/* tensor.insert_slice of all of src into dest at `offsets`. */
MlirValue lw_insert_slice(lw_ctx *cx, MlirValue src, MlirValue dest, const lw_ix *offsets);

/* The result type for the inferred type of output i, whose rank must be
 * n, with sizes in `dims` (n entries): a constant entry makes the dim
 * static where the inferred dim is symbolic. Null when the inferred type
 * is not a ranked tensor of rank n. */
MlirType lw_out_type_with(lw_ctx *cx, int i, int n, const lw_ix *dims);

/* tensor.empty of `type` with the dynamic sizes in dims (rank entries). */
MlirValue lw_empty_ix(lw_ctx *cx, MlirType type, const lw_ix *dims);

/* A linalg.generic over every element of a new tensor of `type` (dynamic
 * sizes in dims: rank entries, constants ignored), whose body `body`
 * computes each element from the loop indices `idx` (linalg.index) and the
 * block arguments `args` of the `n_ins` inputs read through `in_maps`
 * (typically tensors read with lw_extract at computed indices instead). */
typedef o2m_status (*lw_index_body_fn)(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                                       MlirValue *out, void *user);
o2m_status lw_index_generic(lw_ctx *cx, MlirType type, const lw_ix *dims, int n_ins,
                            const MlirValue *ins, const MlirAttribute *in_maps,
                            lw_index_body_fn body, void *user, MlirValue *result);

/* A body that yields its first input's element (with in_maps doing the
 * moving: transposes, broadcasts). */
o2m_status lw_copy_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                        void *user);

/* Normalises an ONNX axis attribute against rank (negative counts from the
 * end); -1 after lw_error when out of range. */
int lw_norm_axis(lw_ctx *cx, int64_t axis, int rank);

#endif
