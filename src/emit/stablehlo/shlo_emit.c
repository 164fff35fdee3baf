/* shlo_emit.c - the StableHLO target: its entry in the emitter kit (name,
 * lowering table, unsigned integer types, dense constants as
 * stablehlo.constant), the forms it leaves to the transform layer, the
 * spec check every emitted module passes (shlo_check.c), and
 * `import --to stablehlo`.
 *
 * The StableHLO dialect is not registered in MLIR's C API: the context
 * allows unregistered dialects, so stablehlo ops are built and printed in
 * MLIR's generic syntax, which stablehlo-opt parses as its own ops. */
#include <stdio.h>
#include <string.h>

#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/Quant.h>

#include "emit/emit.h"
#include "emit/stablehlo/shlo_check.h"
#include "emit/stablehlo/shlo_kit.h"
#include "util/diag.h"

static void load_dialects(MlirContext mc) {
  mlirContextSetAllowUnregisteredDialects(mc, 1);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__func__(), mc);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__quant__(), mc); /* !quant.uniform types */
}

/* Forms of ops in the table that StableHLO cannot express, left to the
 * transform layer: a Loop with scan outputs (unrolled when its trip count
 * is known; a while keeps its operands' shapes), DequantizeLinear forms
 * without a quantized type (shlo_quant.c). */
static int keeps(const o2m_node *n) {
  if (strcmp(n->op_type, "DequantizeLinear") == 0) return sh_dequantize_kept(n);
  if (strcmp(n->op_type, "Loop") == 0) return n->n_outputs <= n->n_inputs - 2;
  return 1;
}

/* A branch that cannot be built calls the host through a custom_call
 * (kit.h), its id a tensor<i32> operand. */
static o2m_status failure_call(lw_ctx *cx, int id) {
  int32_t value = id;
  MlirType t = mlirRankedTensorTypeGet(0, NULL, mlirIntegerTypeGet(cx->mc, 32), mlirAttributeGetNull());
  MlirNamedAttribute attr = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, mlirStringRefCreateFromCString("value")),
                                                  mlirDenseElementsAttrInt32Get(t, 1, &value));
  MlirOperation c = lw_op_attrs(cx, "stablehlo.constant", 0, NULL, 1, &t, 1, &attr, 0);
  MlirValue v = mlirOperationIsNull(c) ? (MlirValue){NULL} : mlirOperationGetResult(c, 0);
  if (mlirValueIsNull(v) ||
      mlirOperationIsNull(lw_op(cx, "stablehlo.custom_call", 1, &v, 0, NULL,
                                "call_target_name = \"" O2M_BRANCH_FAILED_FN "\", has_side_effect = true", 0)))
    return lw_error(cx, "internal: cannot create the failure call");
  return O2M_OK;
}

static const lw_target stablehlo_target = {
    .name = "StableHLO",
    .lowering_for = sh_lowering_for,
    .load_dialects = load_dialects,
    .const_op = "stablehlo.constant",
    .const_attr = "value",
    .keeps = keeps,
    .unsigned_types = 1,
    .dense_constants = 1,
    .cast_op = "stablehlo.convert",
    .failure_call = failure_call,
};

/* The functions of the module lose llvm.emit_c_interface (for the JIT
 * only): VHLO serialization refuses attributes outside StableHLO. */
static void drop_c_interface(MlirModule module) {
  MlirBlock body = mlirModuleGetBody(module);
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    mlirOperationRemoveAttributeByName(op, mlirStringRefCreateFromCString("llvm.emit_c_interface"));
}

o2m_status o2m_emit_stablehlo_module(o2m_model *model, MlirContext mc, MlirModule *out,
                                     o2m_diag *diag) {
  o2m_status s = lw_emit_module(&stablehlo_target, model, mc, 0, NULL, NULL, out, diag);
  if (s) return s;
  drop_c_interface(*out);
  s = o2m_shlo_check_module(*out, diag);
  if (!s) return O2M_OK;
  char why[sizeof(diag->message)];
  snprintf(why, sizeof(why), "%s", diag->message);
  diag->status = O2M_OK; /* the checker's message, restated with the model */
  mlirModuleDestroy(*out);
  return o2m_fail(diag, s, "%s: the module breaks the StableHLO spec: %s", model->path, why);
}

o2m_status o2m_emit_stablehlo(o2m_model *model, const o2m_import_options *options, FILE *out,
                              o2m_diag *diag) {
  MlirContext mc = mlirContextCreate();
  MlirModule module;
  o2m_status s = o2m_emit_stablehlo_module(model, mc, &module, diag);
  if (!s) {
    lw_print_module(module, options && options->bytecode, out);
    mlirModuleDestroy(module);
  }
  mlirContextDestroy(mc);
  return s;
}
