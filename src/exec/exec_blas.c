/* exec_blas.c - float32 matrix products as calls of the runtime's kernels
 * (src/runtime/rt_blas.c, rt_dnnl.c) instead of the JIT's plain loops.
 *
 * Owns: the rewrite of float32 linalg.matmul and
 * linalg.batch_matmul (the Linalg emitter writes them for the JIT, emit.h
 * O2M_JIT_SGEMM; upstream tosa-to-linalg too) into calls once the module
 * is on buffers (rt_abi.h's O2M_SGEMM_CALL and kin, strided memref
 * descriptors through llvm.emit_c_interface); a 2-D product whose B is a
 * weight calls oneDNN's packed matmul instead. For the JIT the calls go
 * to the kernels this process found (BLAS, oneDNN); for a library to all
 * of them (EXEC_KERNELS_ALL: its runtime finds its own, loops without).
 * A product right after a zero fill of its C overwrites C instead (the
 * kernels' accumulate argument 0) and the fill goes: one pass less over C
 * and, in oneDNN, no sum.
 * Also upstream's im2col transform of TOSA's NHWC convolutions.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>

#include "emit/emit.h"
#include "exec/exec_internal.h"
#include "runtime/runtime.h"
#include "util/diag.h"

/* ---- the rewrite ------------------------------------------------------------- */

enum { MAX_CALLS = 4096 };

typedef struct products {
  exec_kernels kernels;
  int n;
  MlirOperation ops[MAX_CALLS];
  const char *calls[MAX_CALLS]; /* call_of(ops[i]) */
  MlirOperation fills[MAX_CALLS]; /* the zero fill of ops[i]'s C just before it, or null */
  MlirOperation last_fill;        /* the walk's latest linalg.fill */
} products;

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }


/* The kernel of op: a float32 linalg.matmul (B read as it is, or
 * transposed: the Linalg emitter's Gemm with transB) or linalg.batch_matmul
 * on buffers, when BLAS is there; the Linalg emitter writes them for the
 * JIT (lw_blas_product), upstream tosa-to-linalg too. */
/* Whether op is a float32 generic C (n, m, f) += A (n, m, k) * B (f, k):
 * the contraction convert_conv2d_to_img2col writes, with its body. */
static int is_img2col_product(MlirOperation op) {
  static const char maps_text[] =
      "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, "
      "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]";
  MlirContext ctx = mlirOperationGetContext(op);
  MlirAttribute maps = mlirOperationGetAttributeByName(op, str("indexing_maps"));
  if (mlirOperationGetNumOperands(op) != 3 || mlirAttributeIsNull(maps) ||
      !mlirAttributeEqual(maps, mlirAttributeParseGet(ctx, str(maps_text))))
    return 0;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
  MlirOperation mul = mlirBlockGetFirstOperation(body);
  MlirOperation add = mlirOperationIsNull(mul) ? mul : mlirOperationGetNextInBlock(mul);
  MlirOperation yield = mlirOperationIsNull(add) ? add : mlirOperationGetNextInBlock(add);
  if (mlirOperationIsNull(yield) || !exec_op_named(mul, "arith.mulf") || !exec_op_named(add, "arith.addf") ||
      !exec_op_named(yield, "linalg.yield") || !mlirOperationIsNull(mlirOperationGetNextInBlock(yield)))
    return 0;
  /* mul of the two inputs, add of that and the accumulator */
  MlirValue in0 = mlirBlockGetArgument(body, 0), in1 = mlirBlockGetArgument(body, 1), acc = mlirBlockGetArgument(body, 2);
  MlirValue m0 = mlirOperationGetOperand(mul, 0), m1 = mlirOperationGetOperand(mul, 1);
  MlirValue a0 = mlirOperationGetOperand(add, 0), a1 = mlirOperationGetOperand(add, 1);
  MlirValue product = mlirOperationGetResult(mul, 0);
  int mul_ok = (mlirValueEqual(m0, in0) && mlirValueEqual(m1, in1)) || (mlirValueEqual(m0, in1) && mlirValueEqual(m1, in0));
  int add_ok = (mlirValueEqual(a0, product) && mlirValueEqual(a1, acc)) || (mlirValueEqual(a0, acc) && mlirValueEqual(a1, product));
  return mul_ok && add_ok && mlirValueEqual(mlirOperationGetOperand(yield, 0), mlirOperationGetResult(add, 0));
}

/* Whether buffer v is a weight: an argument of its function that carries
 * an initializer (O2M_WEIGHT_ARG_ATTR) or a global constant, seen through
 * views of it. */
static int is_weight_buffer(MlirValue v) {
  static const char *const views[] = {"memref.cast", "memref.subview", "memref.collapse_shape",
                                      "memref.expand_shape", "memref.reinterpret_cast", NULL};
  for (int depth = 0; depth < 16 && mlirValueIsAOpResult(v); depth++) {
    MlirOperation def = mlirOpResultGetOwner(v);
    if (exec_op_named(def, "memref.get_global")) return 1;
    int view = 0;
    for (int i = 0; views[i] && !view; i++) view = exec_op_named(def, views[i]);
    if (!view || mlirOperationGetNumOperands(def) < 1) return 0;
    v = mlirOperationGetOperand(def, 0);
  }
  if (!mlirValueIsABlockArgument(v)) return 0;
  MlirOperation fn = mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
  if (mlirOperationIsNull(fn) || !exec_op_named(fn, "func.func")) return 0;
  MlirAttribute attrs = mlirOperationGetInherentAttributeByName(fn, str("arg_attrs"));
  intptr_t i = mlirBlockArgumentGetArgNumber(v);
  if (mlirAttributeIsNull(attrs) || !mlirAttributeIsAArray(attrs) || i >= mlirArrayAttrGetNumElements(attrs)) return 0;
  MlirAttribute dict = mlirArrayAttrGetElement(attrs, i);
  return mlirAttributeIsADictionary(dict) &&
         !mlirAttributeIsNull(mlirDictionaryAttrGetElementByName(dict, str(O2M_WEIGHT_ARG_ATTR)));
}

static const char *call_of(MlirOperation op, exec_kernels kernels) {
  int blas = kernels == EXEC_KERNELS_ALL || o2m_rt_blas_available();
  int dnnl = kernels == EXEC_KERNELS_ALL ? o2m_rt_dnnl_built() : o2m_rt_dnnl_available();
  if (exec_op_named(op, "linalg.generic") && blas && is_img2col_product(op)) {
    for (int k = 0; k < 3; k++) {
      MlirType t = mlirValueGetType(mlirOperationGetOperand(op, k));
      if (!mlirTypeIsAMemRef(t) || !mlirTypeIsAF32(mlirShapedTypeGetElementType(t))) return NULL;
    }
    return O2M_SGEMM_NBT_CALL;
  }
  int plain = exec_op_named(op, "linalg.matmul"), batched = exec_op_named(op, "linalg.batch_matmul");
  if ((!plain && !batched) || !blas || mlirOperationGetNumOperands(op) != 3) return NULL;
  static const char *const maps_of[3] = {
      "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
      "affine_map<(d0, d1, d2) -> (d0, d1)>]",
      "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
      "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
      "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, "
      "affine_map<(d0, d1, d2) -> (d0, d1)>]"};
  for (int k = 0; k < 3; k++) {
    MlirType t = mlirValueGetType(mlirOperationGetOperand(op, k));
    if (!mlirTypeIsAMemRef(t) || !mlirTypeIsAF32(mlirShapedTypeGetElementType(t))) return NULL;
  }
  MlirAttribute maps = mlirOperationGetAttributeByName(op, str("indexing_maps"));
  MlirContext ctx = mlirOperationGetContext(op);
  /* a weight B goes to oneDNN, packed once (exec_dnnl.c), when A's rows
   * are known: a primitive holds its own packed B per row count */
  MlirType a_type = mlirValueGetType(mlirOperationGetOperand(op, 0));
  int packed = plain && dnnl && is_weight_buffer(mlirOperationGetOperand(op, 1)) &&
               !mlirShapedTypeIsDynamicDim(a_type, 0);
  if (mlirAttributeIsNull(maps) || mlirAttributeEqual(maps, mlirAttributeParseGet(ctx, str(maps_of[batched]))))
    return batched ? O2M_SGEMM_BATCHED_CALL : packed ? O2M_DNNL_SGEMM_CALL : O2M_SGEMM_CALL;
  if (plain && mlirAttributeEqual(maps, mlirAttributeParseGet(ctx, str(maps_of[2]))))
    return packed ? O2M_DNNL_SGEMM_BT_CALL : O2M_SGEMM_BT_CALL;
  return NULL;
}

/* Whether `fill` is a linalg.fill of float +0 into the buffer `c`, the op
 * just before `product` (so nothing reads the zeros but the product). */
static int zero_fill_of(MlirOperation fill, MlirOperation product, MlirValue c) {
  if (mlirOperationIsNull(fill) || mlirOperationGetNumOperands(fill) != 2 ||
      !mlirOperationEqual(mlirOperationGetNextInBlock(fill), product) ||
      !mlirValueEqual(mlirOperationGetOperand(fill, 1), c))
    return 0;
  MlirValue value = mlirOperationGetOperand(fill, 0);
  if (!mlirValueIsAOpResult(value) || !exec_op_named(mlirOpResultGetOwner(value), "arith.constant")) return 0;
  MlirAttribute zero = mlirOperationGetAttributeByName(mlirOpResultGetOwner(value), str("value"));
  return !mlirAttributeIsNull(zero) && mlirAttributeIsAFloat(zero) && mlirFloatAttrGetValueDouble(zero) == 0.0 &&
         !signbit(mlirFloatAttrGetValueDouble(zero));
}

static MlirWalkResult find_products(MlirOperation op, void *user) {
  products *t = user;
  if (exec_op_named(op, "linalg.fill")) t->last_fill = op;
  const char *call = t->n < MAX_CALLS ? call_of(op, t->kernels) : NULL;
  if (call) {
    int zeroed = zero_fill_of(t->last_fill, op, mlirOperationGetOperand(op, 2));
    t->fills[t->n] = zeroed ? t->last_fill : (MlirOperation){NULL};
    t->ops[t->n] = op, t->calls[t->n++] = call;
  }
  return MlirWalkResultAdvance;
}

/* Declares `func.func private @name(types) {llvm.emit_c_interface}` (A, B,
 * C and the accumulate flag) once. `declared` lists the names declared so
 * far (MAX_KERNELS at most). */
enum { MAX_KERNELS = 8, KERNEL_ARGS = 4 };
static void declare(MlirModule module, const char *name, MlirType *types, const char **declared) {
  int n = 0;
  while (n < MAX_KERNELS && declared[n] && strcmp(declared[n], name) != 0) n++;
  if (n == MAX_KERNELS || declared[n]) return;
  declared[n] = name;
  MlirContext ctx = mlirModuleGetContext(module);
  MlirType fn = mlirFunctionTypeGet(ctx, KERNEL_ARGS, types, 0, NULL);
  MlirNamedAttribute attrs[4] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("sym_name")), mlirStringAttrGet(ctx, str(name))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("sym_visibility")), mlirStringAttrGet(ctx, str("private"))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("function_type")), mlirTypeAttrGet(fn)),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("llvm.emit_c_interface")), mlirUnitAttrGet(ctx))};
  MlirOperationState st = mlirOperationStateGet(str("func.func"), mlirLocationUnknownGet(ctx));
  mlirOperationStateAddAttributes(&st, 4, attrs);
  MlirRegion body = mlirRegionCreate();
  mlirOperationStateAddOwnedRegions(&st, 1, &body);
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(module), mlirOperationCreate(&st));
}

/* ---- NHWC convolutions as im2col and a product (the TOSA target) ------------------ */

/* Upstream's transform: every linalg.conv_2d_nhwc_fhwc (what tosa-to-linalg
 * makes of tosa.conv2d) into an im2col gather and a contraction, which the
 * rewrite below hands to BLAS; one the transform does not take (it refuses
 * some forms) stays as it is. */
static const char img2col_script[] =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
    "    %convs = transform.structured.match ops{[\"linalg.conv_2d_nhwc_fhwc\"]} in %root\n"
    "      : (!transform.any_op) -> !transform.any_op\n"
    "    transform.foreach %convs : !transform.any_op {\n"
    "    ^bb0(%conv: !transform.any_op):\n"
    "      transform.sequence %conv : !transform.any_op failures(suppress) {\n"
    "      ^bb1(%one: !transform.any_op):\n"
    "        %cols, %product = transform.structured.convert_conv2d_to_img2col %one\n"
    "          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
    "      }\n"
    "    }\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

static MlirWalkResult find_nhwc_conv(MlirOperation op, void *user) {
  if (!exec_op_named(op, "linalg.conv_2d_nhwc_fhwc")) return MlirWalkResultAdvance;
  *(int *)user = 1;
  return MlirWalkResultInterrupt;
}

o2m_status exec_convs_to_products(MlirModule module, exec_kernels kernels, o2m_diag *diag) {
  int any = 0;
  if (kernels != EXEC_KERNELS_ALL && !o2m_rt_blas_available()) return O2M_OK;
  mlirOperationWalk(mlirModuleGetOperation(module), find_nhwc_conv, &any, MlirWalkPreOrder);
  if (!any) return O2M_OK;
  MlirContext ctx = mlirModuleGetContext(module);
  exec_errors errors;
  exec_capture_begin(&errors, ctx);
  MlirModule script = mlirModuleCreateParse(ctx, str(img2col_script));
  o2m_status s = O2M_OK;
  if (mlirModuleIsNull(script)) {
    s = o2m_fail(diag, O2M_ERR_INTERNAL, "the im2col transform does not parse: %s", errors.text);
  } else {
    MlirOperation main = mlirBlockGetFirstOperation(mlirModuleGetBody(script));
    MlirTransformOptions options = mlirTransformOptionsCreate();
    if (mlirLogicalResultIsFailure(mlirTransformApplyNamedSequence(mlirModuleGetOperation(module), main,
                                                                   mlirModuleGetOperation(script), options)))
      s = o2m_fail(diag, O2M_ERR_UNSUPPORTED, "the im2col transform failed: %s",
                   errors.text[0] ? errors.text : "(no message)");
    mlirTransformOptionsDestroy(options);
    mlirModuleDestroy(script);
  }
  exec_capture_end(&errors);
  return s;
}

o2m_status exec_lower_blas_calls(MlirModule module, exec_kernels kernels, int *count, o2m_diag *diag) {
  *count = 0;
  products *t = calloc(1, sizeof(*t));
  if (!t) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  t->kernels = kernels;
  mlirOperationWalk(mlirModuleGetOperation(module), find_products, t, MlirWalkPreOrder);
  MlirContext ctx = mlirModuleGetContext(module);
  MlirType strided[4] = {{NULL}, {NULL},
                         mlirTypeParseGet(ctx, str("memref<?x?xf32, strided<[?, ?], offset: ?>>")),
                         mlirTypeParseGet(ctx, str("memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>"))};
  const char *declared[MAX_KERNELS] = {NULL};
  o2m_status s = O2M_OK;
  for (int i = 0; i < t->n && !s; i++) {
    MlirOperation op = t->ops[i];
    const char *fn = t->calls[i];
    int rank = mlirOperationGetNumOperands(op) == 3 ? (int)mlirShapedTypeGetRank(mlirValueGetType(
                                                           mlirOperationGetOperand(op, 2)))
                                                     : 0;
    if (mlirOperationGetNumResults(op) != 0 || (rank != 2 && rank != 3)) {
      s = o2m_fail(diag, O2M_ERR_INTERNAL, "a matrix product is not on buffers of rank 2 or 3");
      break;
    }
    MlirLocation loc = mlirOperationGetLocation(op);
    MlirBlock block = mlirOperationGetBlock(op);
    MlirValue args[KERNEL_ARGS];
    MlirType types[KERNEL_ARGS];
    for (int k = 0; k < 3; k++) {
      MlirValue v = mlirOperationGetOperand(op, k);
      int rank_k = (int)mlirShapedTypeGetRank(mlirValueGetType(v));
      if (rank_k != 2 && rank_k != 3) rank_k = rank; /* not reached: the kinds above fix them */
      types[k] = strided[rank_k];
      MlirOperationState st = mlirOperationStateGet(str("memref.cast"), loc);
      mlirOperationStateAddOperands(&st, 1, &v);
      mlirOperationStateAddResults(&st, 1, &types[k]);
      MlirOperation cast = mlirOperationCreate(&st);
      mlirBlockInsertOwnedOperationBefore(block, op, cast);
      args[k] = mlirOperationGetResult(cast, 0);
    }
    /* accumulate: 0 when a zero fill just before is all C held (the fill goes) */
    types[3] = mlirIntegerTypeGet(ctx, 64);
    MlirAttribute flag = mlirIntegerAttrGet(types[3], mlirOperationIsNull(t->fills[i]) ? 1 : 0);
    MlirNamedAttribute value = mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("value")), flag);
    MlirOperationState cst = mlirOperationStateGet(str("arith.constant"), loc);
    mlirOperationStateAddAttributes(&cst, 1, &value);
    mlirOperationStateAddResults(&cst, 1, &types[3]);
    MlirOperation constant = mlirOperationCreate(&cst);
    mlirBlockInsertOwnedOperationBefore(block, op, constant);
    args[3] = mlirOperationGetResult(constant, 0);
    if (!mlirOperationIsNull(t->fills[i])) mlirOperationDestroy(t->fills[i]);
    declare(module, fn, types, declared);
    MlirNamedAttribute callee =
        mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("callee")), mlirFlatSymbolRefAttrGet(ctx, str(fn)));
    MlirOperationState st = mlirOperationStateGet(str("func.call"), loc);
    mlirOperationStateAddOperands(&st, KERNEL_ARGS, args);
    mlirOperationStateAddAttributes(&st, 1, &callee);
    mlirBlockInsertOwnedOperationBefore(block, op, mlirOperationCreate(&st));
    mlirOperationDestroy(op);
    ++*count;
  }
  free(t);
  return s;
}
