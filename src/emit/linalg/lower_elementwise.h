/* lower_elementwise.h - the elementwise building blocks of the Linalg
 * emitter, shared by every op family: the broadcasting elementwise builder
 * (N tensors -> one linalg.generic), ONNX elementwise ops applied to
 * scalars inside a body, and scalar dtype conversion with Cast semantics.
 *
 * Owns nothing: these only create ops at cx->block (see lower.h). */
#ifndef O2M_LOWER_ELEMENTWISE_H
#define O2M_LOWER_ELEMENTWISE_H

#include "emit/linalg/lower.h"

/* The scalar body of an elementwise op or of a reduction: `args` are the
 * scalars the generic hands over (see each builder), `*result` receives
 * the one value to yield, created in cx->block. */
typedef o2m_status (*lw_scalar_fn)(lw_ctx *cx, const MlirValue *args,
                                   MlirValue *result, void *user);

/* One linalg.generic applying `body` to n_in ranked tensors broadcast the
 * numpy way (dims aligned from the right; a static 1 stretches to the
 * output's size; missing leading dims are broadcast). The result is a
 * tensor of element type `elem`:
 * - shape NULL: its shape is the broadcast of the inputs' MLIR shapes (a
 *   dim is static when some input has it static and != 1, dynamic when
 *   some input has it dynamic, else 1);
 * - shape given (normally an inferred o2m_type, only its rank and dims are
 *   read): its static dims are used as they are, each dynamic dim is
 *   taken (tensor.dim) from an input whose dim there is not a static 1.
 * A dynamic input dim is assumed to be the output's size (never a runtime
 * 1 broadcast). An input that is not a tensor (a scalar value) is handed
 * to every iteration. `body` receives the n_in input scalars. */
o2m_status lw_broadcast(lw_ctx *cx, int n_in, const MlirValue *ins,
                        const o2m_type *shape, MlirType elem,
                        lw_scalar_fn body, void *user, MlirValue *result);

/* Applies the ONNX elementwise op `op` ("Add", "Relu", "Greater", "Mod",
 * "Where", ...; see the table in lower_scalar.c) to scalars: args[i] has
 * ONNX dtype dtypes[i]. The result has the op's ONNX result dtype (bool
 * for comparisons, dtypes[0] for arithmetic, dtypes[1] for Where).
 * Attributes (alpha, fmod, direction, ...) are read from the node being
 * lowered (cx->node), defaults when absent. Null value on failure, with
 * the diag filled (lw_unsupported for a dtype the op does not take). */
MlirValue lw_scalar_op(lw_ctx *cx, const char *op, const o2m_dtype *dtypes,
                       const MlirValue *args);
/* lw_scalar_op with every operand of dtype dt; a null operand gives a
 * null result (so calls nest). */
MlirValue lw_scalar_op1(lw_ctx *cx, const char *op, o2m_dtype dt, MlirValue a);
MlirValue lw_scalar_op2(lw_ctx *cx, const char *op, o2m_dtype dt, MlirValue a,
                        MlirValue b);
/* The number of operands of a scalar op of that table (0: not in it). */
int lw_scalar_op_arity(const char *op);

/* Converts a scalar between ONNX dtypes with Cast semantics (float->int
 * truncates toward zero, ->bool is != 0, bool->number is 0/1). Null
 * value, diag filled, for a pair it does not convert. */
MlirValue lw_scalar_cast(lw_ctx *cx, MlirValue v, o2m_dtype from,
                         o2m_dtype to);

/* Scalar comparisons (i1 results) and select, for bodies. */
enum { LW_F_OEQ = 1, LW_F_OGT = 2, LW_F_OGE = 3, LW_F_OLT = 4, LW_F_OLE = 5,
       LW_F_ORD = 7, LW_F_UGT = 9, LW_F_ULT = 11, LW_F_UNE = 13, LW_F_UNO = 14 };
enum { LW_I_EQ = 0, LW_I_NE = 1, LW_I_SLT = 2, LW_I_SLE = 3, LW_I_SGT = 4,
       LW_I_SGE = 5, LW_I_ULT = 6, LW_I_ULE = 7, LW_I_UGT = 8, LW_I_UGE = 9 };
MlirValue lw_cmpf(lw_ctx *cx, int predicate, MlirValue a, MlirValue b);
MlirValue lw_cmpi(lw_ctx *cx, int predicate, MlirValue a, MlirValue b);
MlirValue lw_select(lw_ctx *cx, MlirValue cond, MlirValue a, MlirValue b);

/* linalg.index of loop `dim` inside a linalg.generic body, as an i64
 * (arith.index_cast). */
MlirValue lw_loop_index_i64(lw_ctx *cx, int dim);

/* A scalar constant of an MLIR element type (float or integer). */
MlirValue lw_scalar_const(lw_ctx *cx, MlirType type, double v);

/* O2M_OK for a value, else the failure the diag holds (scalar builders
 * return a null value after filling it). */
static inline o2m_status lw_value_status(lw_ctx *cx, MlirValue v) {
  if (!mlirValueIsNull(v)) return O2M_OK;
  return cx->diag && cx->diag->status ? cx->diag->status : O2M_ERR_INTERNAL;
}

#endif
