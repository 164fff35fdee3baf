/* om_emit.c - o2m_emit_onnx: the entry point of the emitter of onnx-mlir's
 * ONNX dialect, the form `onnx-mlir --EmitONNXBasic` writes.
 *
 * Owns: the order of one emission: onnx-mlir's op table read; the nodes
 * of ops onnx-mlir lacks written in ops it has by the shared layer
 * (src/transform, as onnx-mlir's importer inlines an op's ONNX function
 * body), every other node left exactly as the model has it; the module
 * built (om_graph.c) in a context that allows unregistered dialects (the
 * onnx dialect is not upstream MLIR's) with func loaded; verification;
 * the structural check against the table (om_check.c); output as text or
 * bytecode (src/emit/form). The module and its context are destroyed
 * before returning; blobs view the model's bytes.
 */
#include <stdarg.h>
#include <stdio.h>

#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Func.h>

#include "emit/onnx/om_check.h"
#include "emit/onnx/om_internal.h"
#include "transform/transform.h"
#include "util/diag.h"

MlirStringRef om_str(const char *s) { return mlirStringRefCreateFromCString(s); }

MlirNamedAttribute om_named(om_emitter *em, const char *name, MlirAttribute value) {
  return mlirNamedAttributeGet(mlirIdentifierGet(em->ctx, om_str(name)), value);
}

void om_abandon_state(MlirOperationState *state) {
  MlirOperation op = mlirOperationCreate(state);
  if (!mlirOperationIsNull(op)) mlirOperationDestroy(op);
}

o2m_status om_fail(om_emitter *em, o2m_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = form_failv(em->diag, em->model, em->mlir_error, status, fmt, ap);
  va_end(ap);
  return s;
}

o2m_status om_node_fail(om_emitter *em, const o2m_node *node, o2m_status status, const char *fmt,
                        ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = form_node_failv(em->diag, em->model, em->mlir_error, node, status, fmt, ap);
  va_end(ap);
  return s;
}

static MlirType constant_tensor_type(void *em, o2m_dtype dtype, int rank, const int64_t *dims) {
  return om_tensor_type(em, dtype, rank, dims);
}

static o2m_status init_context(om_emitter *em) {
  em->ctx = mlirContextCreateWithThreading(false);
  mlirContextSetAllowUnregisteredDialects(em->ctx, true);
  mlirContextAttachDiagnosticHandler(em->ctx, form_capture_diagnostic, em->mlir_error, NULL);
  MlirDialectHandle func = mlirGetDialectHandle__func__();
  mlirDialectHandleRegisterDialect(func, em->ctx);
  mlirDialectHandleLoadDialect(func, em->ctx);
  em->unknown_loc = mlirLocationUnknownGet(em->ctx);
  em->si64_type = mlirIntegerTypeSignedGet(em->ctx, 64);
  em->i64_type = mlirIntegerTypeGet(em->ctx, 64);
  em->f32_type = mlirF32TypeGet(em->ctx);
  em->none_type = mlirNoneTypeGet(em->ctx);
  em->tensors = (form_tensor_maker){em->ctx, &em->arena, constant_tensor_type, em};
  return O2M_OK;
}

static o2m_status write_module(om_emitter *em, MlirOperation module, FILE *out) {
  if (form_write_module(module, em->model, em->options->bytecode, out) != 0)
    return om_fail(em, O2M_ERR_IO, "writing the MLIR output failed");
  return O2M_OK;
}

o2m_status o2m_emit_onnx(o2m_model *model, const o2m_import_options *options, FILE *out,
                         o2m_diag *diag) {
  static const o2m_import_options defaults = {O2M_TARGET_ONNX};
  if (!model || !model->graph || !out)
    return o2m_fail(diag, O2M_ERR_USAGE, "o2m_emit_onnx: no model or output");
  om_emitter em = {.model = model, .options = options ? options : &defaults, .diag = diag};
  o2m_status status = O2M_OK;
  if (om_table_init(&em.table, &em.arena) != 0)
    status = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory reading onnx-mlir's op table");
  if (status == O2M_OK) status = o2m_transform_missing_ops(model, om_keeps_node, &em, diag);
  if (status != O2M_OK) {
    o2m_arena_free(&em.arena);
    return status;
  }
  em.nodes_total = om_count_nodes(model->graph);
  init_context(&em);
  MlirModule module = mlirModuleCreateEmpty(em.unknown_loc);
  status = om_emit_main_function(&em, mlirModuleGetBody(module));
  MlirOperation module_op = mlirModuleGetOperation(module);
  if (status == O2M_OK && !mlirOperationVerify(module_op))
    status = om_fail(&em, O2M_ERR_INTERNAL, "the emitted onnx-mlir module does not verify");
  if (status == O2M_OK) status = om_check_module(module, &em.table, diag);
  if (status == O2M_OK) status = write_module(&em, module_op, out);
  mlirModuleDestroy(module);
  form_values_free(&em.values);
  o2m_arena_free(&em.arena);
  mlirContextDestroy(em.ctx);
  return status;
}
