/* emit.h - the MLIR emitters, one per target.
 *
 * Owns: the entry point of each emitter. Emitters read a loaded, linked and
 * inferred model and write MLIR text or bytecode to a FILE through the
 * MLIR C API; the lowering emitters first rewrite the model to the core
 * form. They are the only code, with
 * src/exec, that links against MLIR.
 */
#ifndef O2M_EMIT_H
#define O2M_EMIT_H

#include <stdio.h>

#include <mlir-c/IR.h>

#include "ir/ir.h"
#include "runtime/rt_abi.h" /* the names of the runtime functions the code calls */

/* A lowering target's module may call `void O2M_BRANCH_FAILED_FN(i32 id)`
 * (rt_abi.h; declared private in it): an If branch taken at run time that
 * cannot be built for the module's shapes. The module's array attribute
 * O2M_BRANCH_FAILURES_ATTR holds the message of each id. The runtime
 * provides the function: it stops the call, and the caller reports the
 * message. */
#define O2M_BRANCH_FAILURES_ATTR "onnx2mlir.branch_failures"

/* torch-mlir's ONNX import form, as DESIGN.md section 4 specifies. */
o2m_status o2m_emit_torch(const o2m_model *model,
                          const o2m_import_options *options, FILE *out,
                          o2m_diag *diag);

/* onnx-mlir's ONNX dialect, the form `onnx-mlir --EmitONNXBasic` writes
 * (src/emit/onnx). Nodes of ops onnx-mlir lacks are first written in ops
 * it has by the shared layer (src/transform), so the model may change. */
o2m_status o2m_emit_onnx(o2m_model *model, const o2m_import_options *options, FILE *out,
                         o2m_diag *diag);

/* Linalg-on-tensors (+ tensor/arith/math/scf). Rewrites the model to the
 * core form first (src/transform), so the model is changed. */
o2m_status o2m_emit_linalg(o2m_model *model, const o2m_import_options *options,
                           FILE *out, o2m_diag *diag);

/* `for_jit` of the Linalg module builders: 0 for `import`, else O2M_JIT
 * for the JIT's (and `compile`'s) lowering (lw_ctx.for_jit), with these
 * routes into the runtime's kernels (src/runtime; rt_abi.h names them):
 *   O2M_JIT_SGEMM   float32 matrix products (2-D, 3-D with one batch
 *                   size; convolutions as im2col and a product) are
 *                   linalg.matmul / linalg.batch_matmul, which the
 *                   executor turns into calls of O2M_SGEMM_CALL and kin
 *                   (a MatMul whose B is a 2-D Transpose, Gemm's transB,
 *                   reads B in place: O2M_SGEMM_BT_CALL);
 *   O2M_JIT_DNNL    the float32 2-D convolutions of the main graph run
 *                   channels last (o2m_layout_channels_last) as
 *                   com.microsoft NhwcFusedConv nodes, each a call of
 *                   O2M_DNNL_CONV_CALL on buffers (lower_dnnl.c); max
 *                   pools O2M_DNNL_POOL_CALL;
 *   O2M_JIT_KERNELS the runtime's own kernels for ops whose Linalg form is
 *                   slow: a float32 TopK is one call of O2M_TOPK_CALL (n
 *                   log n along the axis instead of the generics' n^2), a
 *                   float32 NonMaxSuppression one of O2M_NMS_CALL;
 *   O2M_JIT_PROFILE @main calls `void O2M_PROFILE_FN(i32 i)` before its
 *                   first node (i = -1) and after the code of each node i
 *                   of the main graph (its index in the graph's node
 *                   list), so that each node is timed (`run --profile`);
 *   O2M_JIT_WEIGHT_ARGS the main graph's large initializers are not
 *                   constants but trailing arguments of @main, each with
 *                   the argument attributes {O2M_WEIGHT_ARG_ATTR =
 *                   "<initializer name>", bufferization.writable = false};
 *                   the caller passes the model's own data for them, so
 *                   weights are never compiled into the code; a weight
 *                   read only by kernels that take any address (their
 *                   operands made by lw_kernel_operand_any_align) also
 *                   has O2M_WEIGHT_ANY_ALIGN_ATTR, and the caller may pass
 *                   it where it lies, not aligned to its element;
 *   O2M_JIT_QUANT   quantized ops through the runtime's quantized kernels,
 *                   left as written by the transform layer: a
 *                   com.microsoft MatMulNBits on float32 is one call of
 *                   O2M_MATMUL_NBITS_CALL that reads the packed weights
 *                   (lower_quant.c); without the flag, its float
 *                   decomposition. */
enum {
  O2M_JIT = 1,
  O2M_JIT_SGEMM = 2,
  O2M_JIT_WEIGHT_ARGS = 4,
  O2M_JIT_PROFILE = 8,
  O2M_JIT_DNNL = 16,
  O2M_JIT_KERNELS = 32,
  O2M_JIT_QUANT = 64
};
#define O2M_WEIGHT_ARG_ATTR "onnx2mlir.weight"
#define O2M_WEIGHT_ANY_ALIGN_ATTR "onnx2mlir.any_align"
/* On an argument or result of @main whose ONNX dtype the target has no
 * type for and carries in a wider one (TOSA: int4 in i8, float8e4m3fnuz as
 * its bits in i8): the ONNX dtype's name, "int4". Each element takes one
 * byte; the code reads only its low bits (any extension may be passed)
 * and writes sub-byte results sign-extended (int4, int2) or zero-extended. */
#define O2M_CARRIED_DTYPE_ATTR "onnx2mlir.dtype"

/* Builds the Linalg module in `mc` (whose dialects it loads) without
 * printing it: `func.func @main` takes the runtime inputs and returns the
 * graph outputs, with llvm.emit_c_interface; for_jit as above. */
o2m_status o2m_emit_linalg_module(o2m_model *model, MlirContext mc,
                                  int for_jit, MlirModule *out,
                                  o2m_diag *diag);

/* TOSA (tosa + func, MLIR 22's TOSA dialect), declared for and validated
 * against TOSA 1.1.draft (options->tosa_spec "1.0": TOSA 1.0) with the
 * pro_int and pro_fp profiles and the extensions it uses. Rewrites the
 * model to the core form first, as o2m_emit_linalg. */
o2m_status o2m_emit_tosa(o2m_model *model, const o2m_import_options *options,
                         FILE *out, o2m_diag *diag);

/* The TOSA module for run/test, validated, then lowered to Linalg by
 * upstream MLIR's TOSA conversions (arguments as
 * o2m_emit_linalg_module_io). */
struct o2m_io_value;
o2m_status o2m_emit_tosa_module_io(o2m_model *model, MlirContext mc,
                                   const struct o2m_io_value *inputs,
                                   struct o2m_io_value *outputs,
                                   MlirModule *out, o2m_diag *diag);

/* Rewrites the model to TOSA's op set and checks that every node can be
 * lowered (else O2M_ERR_UNSUPPORTED listing them all), as the module
 * builder does first; nothing is emitted. (Linalg's: lower.h.) */
o2m_status o2m_tosa_prepare(o2m_model *model, o2m_diag *diag);

/* Lowers a TOSA module to Linalg/tensor/arith/scf with upstream MLIR's
 * conversions (what `run` does to a TOSA module or .mlir file). */
o2m_status o2m_tosa_to_linalg(MlirModule module, o2m_diag *diag);

/* StableHLO (version 1.13.8 of the spec) in MLIR's generic syntax, its
 * dialect unregistered; checked against the spec table (shlo_check.c).
 * Rewrites the model to the core form first, as o2m_emit_linalg. */
o2m_status o2m_emit_stablehlo(o2m_model *model, const o2m_import_options *options,
                              FILE *out, o2m_diag *diag);
/* The same module built in `mc` without printing it. */
o2m_status o2m_emit_stablehlo_module(o2m_model *model, MlirContext mc, MlirModule *out,
                                     o2m_diag *diag);

#endif
