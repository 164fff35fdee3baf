/* exec_fusion.c - exec_fuse_elementwise: the JIT's fusion of elementwise
 * Linalg ops on tensors, before bufferization.
 *
 * Owns: upstream's linalg-fuse-elementwise-ops (a producer with one use
 * fused into its consumer, so a chain of elementwise ops is one loop nest
 * and one buffer), and what keeps the products the kernels take
 * (exec_blas.c) out of it: that pass also folds tensor.collapse_shape /
 * expand_shape into the Linalg ops beside them, which turns a named
 * linalg.matmul or batch_matmul into a linalg.generic no kernel matches.
 * So every static reshape is first rewritten as a tensor.reshape with a
 * constant shape, which the pass leaves alone (reshapes moved next to a
 * product by the pass itself would reach it too); bufferization makes it
 * a view where the layout allows, else a copy.
 */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "exec/exec_internal.h"
#include "util/diag.h"

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

static int is_reshape(MlirOperation op) {
  return exec_op_named(op, "tensor.collapse_shape") || exec_op_named(op, "tensor.expand_shape");
}

/* Replaces the static-shaped reshape `op` with tensor.reshape(src, shape). */
static void keep_reshape(MlirOperation op) {
  MlirValue src = mlirOperationGetOperand(op, 0), out = mlirOperationGetResult(op, 0);
  MlirType type = mlirValueGetType(out);
  if (!mlirShapedTypeHasStaticShape(type) || mlirShapedTypeGetRank(type) > 16) return;
  MlirContext ctx = mlirOperationGetContext(op);
  MlirLocation loc = mlirOperationGetLocation(op);
  int64_t rank = mlirShapedTypeGetRank(type), sizes[16];
  for (int64_t k = 0; k < rank; k++) sizes[k] = mlirShapedTypeGetDimSize(type, k);
  MlirType shape_type = mlirRankedTensorTypeGet(1, &rank, mlirIntegerTypeGet(ctx, 64), mlirAttributeGetNull());
  MlirNamedAttribute value = mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("value")),
                                                   mlirDenseElementsAttrInt64Get(shape_type, rank, sizes));
  MlirOperationState cs = mlirOperationStateGet(str("arith.constant"), loc);
  mlirOperationStateAddResults(&cs, 1, &shape_type);
  mlirOperationStateAddAttributes(&cs, 1, &value);
  MlirOperation shape = mlirOperationCreate(&cs);
  MlirBlock block = mlirOperationGetBlock(op);
  mlirBlockInsertOwnedOperationBefore(block, op, shape);
  MlirValue operands[2] = {src, mlirOperationGetResult(shape, 0)};
  MlirOperationState rs = mlirOperationStateGet(str("tensor.reshape"), loc);
  mlirOperationStateAddOperands(&rs, 2, operands);
  mlirOperationStateAddResults(&rs, 1, &type);
  MlirOperation reshape = mlirOperationCreate(&rs);
  mlirBlockInsertOwnedOperationBefore(block, op, reshape);
  mlirValueReplaceAllUsesOfWith(out, mlirOperationGetResult(reshape, 0));
  mlirOperationDestroy(op);
}

/* The static reshapes, found first and rewritten after the walk (which
 * must not see its ops destroyed). */
typedef struct reshapes {
  int n, cap;
  MlirOperation *ops;
} reshapes;

static MlirWalkResult find_reshapes(MlirOperation op, void *user) {
  reshapes *r = user;
  if (!is_reshape(op) || !mlirShapedTypeHasStaticShape(mlirValueGetType(mlirOperationGetResult(op, 0))))
    return MlirWalkResultAdvance;
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 256;
    MlirOperation *grown = realloc(r->ops, (size_t)cap * sizeof(*grown));
    if (!grown) return MlirWalkResultInterrupt;
    r->ops = grown, r->cap = cap;
  }
  r->ops[r->n++] = op;
  return MlirWalkResultAdvance;
}

o2m_status exec_fuse_elementwise(MlirModule module, o2m_diag *diag) {
  const char *off = getenv("ONNX2MLIR_NO_FUSION");
  if (off && *off && strcmp(off, "0") != 0) return O2M_OK;
  reshapes r = {0, 0, NULL};
  mlirOperationWalk(mlirModuleGetOperation(module), find_reshapes, &r, MlirWalkPreOrder);
  for (int i = 0; i < r.n; i++) keep_reshape(r.ops[i]);
  free(r.ops);
  return o2m_exec_run_pass(module, "func.func(linalg-fuse-elementwise-ops)", diag);
}
