/* exec_blas.c - float32 matrix products through BLAS (OpenBLAS's
 * cblas_sgemm, loaded at run time) instead of the JIT's plain loops.
 *
 * Owns: finding BLAS (libopenblas.so.0, one thread; none: the products
 * stay loops), the rewrite of float32 linalg.matmul and
 * linalg.batch_matmul (the Linalg emitter writes them for the JIT, emit.h
 * O2M_JIT_SGEMM; upstream tosa-to-linalg too) into calls once the module
 * is on buffers, and the kernels those calls reach. Such an op computes
 * C += A B on memrefs A [M, K], B [K, N] (or W [N, K] read transposed),
 * C [M, N] (or with a leading batch dim on all three); the call passes
 * them as strided memref descriptors
 * (llvm.emit_c_interface), so any row stride works; a view whose rows are
 * not contiguous goes through cblas's transpose, else a plain loop.
 * A 2-D product whose B is a weight goes to oneDNN's matmul instead when
 * it is there (exec_dnnl.c: B packed once per loaded model).
 * ONNX2MLIR_NO_BLAS=1 in the environment turns BLAS off (for comparison).
 * Loading BLAS may set OPENBLAS_CORETYPE in the process (choose_kernels).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>

#include "emit/emit.h"
#include "exec/exec_internal.h"
#include "util/diag.h"

/* ---- BLAS ------------------------------------------------------------------ */

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a,
                         int lda, const float *b, int ldb, float beta, float *c, int ldc);

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static sgemm_fn sgemm;

/* OpenBLAS picks its kernels by the CPU's model name, which virtual
 * machines often hide ("Intel Xeon Processor"): it then falls back to its
 * SSE3 kernels, 2.5x slower here than its AVX-512 ones. Unless the user
 * chose (OPENBLAS_CORETYPE), the kernel family goes by the features the
 * CPU reports; OpenBLAS reads the variable when it is loaded. */
static void choose_kernels(void) {
  if (getenv("OPENBLAS_CORETYPE")) return;
  __builtin_cpu_init();
  const char *core = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl")
                         ? "SkylakeX"
                     : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "Haswell"
                                                                                      : NULL;
  if (core) setenv("OPENBLAS_CORETYPE", core, 0);
}

static void find_blas(void) {
  const char *off = getenv("ONNX2MLIR_NO_BLAS");
  if (off && *off && strcmp(off, "0") != 0) return;
  choose_kernels();
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  void (*set_threads)(int) = (void (*)(int))(uintptr_t)dlsym(lib, "openblas_set_num_threads");
  if (set_threads) set_threads(1); /* one thread, as the rest of the generated code */
  sgemm = (sgemm_fn)(uintptr_t)dlsym(lib, "cblas_sgemm");
}

int exec_blas_available(void) {
  pthread_once(&blas_once, find_blas);
  return sgemm != NULL;
}

/* ---- the kernels ------------------------------------------------------------- */

#define NBT_CALL "o2m_sgemm_nbt" /* batched A and C, one transposed B */

typedef EXEC_F32_MEMREF(2) memref2;
typedef EXEC_F32_MEMREF(3) memref3;

/* A [m, k] operand's BLAS form: its transpose flag and leading dim, or 0
 * when its rows and columns are both strided. */
static int blas_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, int *trans, int *ld) {
  if (col_stride == 1 && row_stride >= (cols > 1 ? cols : 1) && row_stride <= INT32_MAX) {
    *trans = NO_TRANS, *ld = (int)row_stride;
    return 1;
  }
  if (row_stride == 1 && col_stride >= (rows > 1 ? rows : 1) && col_stride <= INT32_MAX) {
    *trans = TRANS, *ld = (int)col_stride;
    return 1;
  }
  return 0;
}

/* C += A B for one matrix of each (pointers at element 0, strides in
 * elements). */
void exec_blas_gemm(int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa, const float *b,
                    const int64_t *sb, float *c, const int64_t *sc) {
  if (m == 0 || n == 0 || k == 0) return;
  int ta, tb, lda, ldb;
  if (sgemm && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && sc[1] == 1 && sc[0] >= n &&
      sc[0] <= INT32_MAX && blas_layout(m, k, sa[0], sa[1], &ta, &lda) && blas_layout(k, n, sb[0], sb[1], &tb, &ldb)) {
    sgemm(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, 1.0f, a, lda, b, ldb, 1.0f, c, (int)sc[0]);
    return;
  }
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = 0; p < k; p++) {
      float x = a[i * sa[0] + p * sa[1]];
      for (int64_t j = 0; j < n; j++) c[i * sc[0] + j * sc[1]] += x * b[p * sb[0] + j * sb[1]];
    }
}

static void ciface_sgemm(memref2 *a, memref2 *b, memref2 *c) {
  exec_blas_gemm(c->sizes[0], c->sizes[1], a->sizes[1], a->aligned + a->offset, a->strides, b->aligned + b->offset,
       b->strides, c->aligned + c->offset, c->strides);
}

/* C += A W^T: W [N, K] read as B [K, N] through swapped strides. */
static void ciface_sgemm_bt(memref2 *a, memref2 *w, memref2 *c) {
  const int64_t sb[2] = {w->strides[1], w->strides[0]};
  exec_blas_gemm(c->sizes[0], c->sizes[1], a->sizes[1], a->aligned + a->offset, a->strides, w->aligned + w->offset, sb,
       c->aligned + c->offset, c->strides);
}

/* C [n] += A [n] W^T for each n: A [N, M, K], W [F, K], C [N, M, F] (the
 * product upstream's convert_conv2d_to_img2col makes of an NHWC
 * convolution). */
static void ciface_sgemm_nbt(memref3 *a, memref2 *w, memref3 *c) {
  const int64_t sb[2] = {w->strides[1], w->strides[0]};
  for (int64_t i = 0; i < c->sizes[0]; i++)
    exec_blas_gemm(c->sizes[1], c->sizes[2], a->sizes[2], a->aligned + a->offset + i * a->strides[0], a->strides + 1,
         w->aligned + w->offset, sb, c->aligned + c->offset + i * c->strides[0], c->strides + 1);
}

static void ciface_sgemm_batched(memref3 *a, memref3 *b, memref3 *c) {
  for (int64_t i = 0; i < c->sizes[0]; i++)
    exec_blas_gemm(c->sizes[1], c->sizes[2], a->sizes[2], a->aligned + a->offset + i * a->strides[0], a->strides + 1,
         b->aligned + b->offset + i * b->strides[0], b->strides + 1, c->aligned + c->offset + i * c->strides[0],
         c->strides + 1);
}

int exec_blas_symbols(exec_symbol *out) {
  out[0] = (exec_symbol){"_mlir_ciface_" O2M_SGEMM_CALL, (void *)(uintptr_t)ciface_sgemm};
  out[1] = (exec_symbol){"_mlir_ciface_" O2M_SGEMM_BATCHED_CALL, (void *)(uintptr_t)ciface_sgemm_batched};
  out[2] = (exec_symbol){"_mlir_ciface_" O2M_SGEMM_BT_CALL, (void *)(uintptr_t)ciface_sgemm_bt};
  out[3] = (exec_symbol){"_mlir_ciface_" NBT_CALL, (void *)(uintptr_t)ciface_sgemm_nbt};
  return 4;
}

/* ---- the rewrite ------------------------------------------------------------- */

enum { MAX_CALLS = 4096 };

typedef struct products {
  int n;
  MlirOperation ops[MAX_CALLS];
  const char *calls[MAX_CALLS]; /* call_of(ops[i]) */
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

static const char *call_of(MlirOperation op) {
  if (exec_op_named(op, "linalg.generic") && exec_blas_available() && is_img2col_product(op)) {
    for (int k = 0; k < 3; k++) {
      MlirType t = mlirValueGetType(mlirOperationGetOperand(op, k));
      if (!mlirTypeIsAMemRef(t) || !mlirTypeIsAF32(mlirShapedTypeGetElementType(t))) return NULL;
    }
    return NBT_CALL;
  }
  int plain = exec_op_named(op, "linalg.matmul"), batched = exec_op_named(op, "linalg.batch_matmul");
  if ((!plain && !batched) || !exec_blas_available() || mlirOperationGetNumOperands(op) != 3) return NULL;
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
  /* a weight B goes to oneDNN, packed once (exec_dnnl.c) */
  int packed = plain && exec_dnnl_available() && is_weight_buffer(mlirOperationGetOperand(op, 1));
  if (mlirAttributeIsNull(maps) || mlirAttributeEqual(maps, mlirAttributeParseGet(ctx, str(maps_of[batched]))))
    return batched ? O2M_SGEMM_BATCHED_CALL : packed ? EXEC_DNNL_SGEMM_CALL : O2M_SGEMM_CALL;
  if (plain && mlirAttributeEqual(maps, mlirAttributeParseGet(ctx, str(maps_of[2]))))
    return packed ? EXEC_DNNL_SGEMM_BT_CALL : O2M_SGEMM_BT_CALL;
  return NULL;
}

static MlirWalkResult find_products(MlirOperation op, void *user) {
  products *t = user;
  const char *call = t->n < MAX_CALLS ? call_of(op) : NULL;
  if (call) t->ops[t->n] = op, t->calls[t->n++] = call;
  return MlirWalkResultAdvance;
}

/* Declares `func.func private @name(types) {llvm.emit_c_interface}` once. */
/* `declared` lists the names declared so far (MAX_KERNELS at most). */
enum { MAX_KERNELS = 8 };
static void declare(MlirModule module, const char *name, MlirType *types, const char **declared) {
  int n = 0;
  while (n < MAX_KERNELS && declared[n] && strcmp(declared[n], name) != 0) n++;
  if (n == MAX_KERNELS || declared[n]) return;
  declared[n] = name;
  MlirContext ctx = mlirModuleGetContext(module);
  MlirType fn = mlirFunctionTypeGet(ctx, 3, types, 0, NULL);
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

o2m_status exec_convs_to_products(MlirModule module, o2m_diag *diag) {
  int any = 0;
  if (!exec_blas_available()) return O2M_OK;
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

o2m_status exec_lower_blas_calls(MlirModule module, int *count, o2m_diag *diag) {
  *count = 0;
  products *t = calloc(1, sizeof(*t));
  if (!t) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
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
    MlirValue args[3];
    MlirType types[3];
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
    declare(module, fn, types, declared);
    MlirNamedAttribute callee =
        mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("callee")), mlirFlatSymbolRefAttrGet(ctx, str(fn)));
    MlirOperationState st = mlirOperationStateGet(str("func.call"), loc);
    mlirOperationStateAddOperands(&st, 3, args);
    mlirOperationStateAddAttributes(&st, 1, &callee);
    mlirBlockInsertOwnedOperationBefore(block, op, mlirOperationCreate(&st));
    mlirOperationDestroy(op);
    ++*count;
  }
  free(t);
  return s;
}
