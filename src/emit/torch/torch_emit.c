/* torch_emit.c - o2m_emit_torch: the torch-form emitter's entry point.
 *
 * Owns: the MLIR context of one emission (unregistered dialects allowed,
 * only func loaded, MLIR's diagnostics captured instead of printed), the
 * module, its verification and its output (src/emit/form). The module and its
 * context are destroyed before returning; blobs view the model's bytes,
 * which the caller keeps alive for the whole call.
 */
#include <stdarg.h>
#include <stdio.h>

#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Func.h>

#include "emit/torch/torch_internal.h"
#include "util/diag.h"

MlirStringRef torch_str(const char *s) { return mlirStringRefCreateFromCString(s); }

o2m_status torch_fail(o2m_torch *em, o2m_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = form_failv(em->diag, em->model, em->mlir_error, status, fmt, ap);
  va_end(ap);
  return s;
}

o2m_status torch_node_fail(o2m_torch *em, const o2m_node *node, o2m_status status, const char *fmt,
                        ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = form_node_failv(em->diag, em->model, em->mlir_error, node, status, fmt, ap);
  va_end(ap);
  return s;
}

static o2m_status write_module(o2m_torch *em, MlirOperation module, FILE *out) {
  if (form_write_module(module, em->model, em->options->bytecode, out) != 0)
    return torch_fail(em, O2M_ERR_IO, "writing the MLIR output failed");
  return O2M_OK;
}

/* ---- entry ------------------------------------------------------------- */

static MlirType builtin_tensor_type(void *em, o2m_dtype dtype, int rank, const int64_t *dims) {
  return torch_builtin_tensor_type(em, dtype, rank, dims);
}

static o2m_status init_context(o2m_torch *em) {
  em->ctx = mlirContextCreateWithThreading(false);
  mlirContextSetAllowUnregisteredDialects(em->ctx, true);
  mlirContextAttachDiagnosticHandler(em->ctx, form_capture_diagnostic, em->mlir_error, NULL);
  MlirDialectHandle func = mlirGetDialectHandle__func__();
  mlirDialectHandleRegisterDialect(func, em->ctx);
  mlirDialectHandleLoadDialect(func, em->ctx);
  em->unknown_loc = mlirLocationUnknownGet(em->ctx);
  em->tensors = (form_tensor_maker){em->ctx, &em->arena, builtin_tensor_type, em};
  em->si64_type = mlirIntegerTypeSignedGet(em->ctx, 64);
  em->f32_type = mlirF32TypeGet(em->ctx);
  em->name_id = mlirIdentifierGet(em->ctx, torch_str("name"));
  em->none_type = torch_parse_type(em, "!torch.none");
  if (mlirTypeIsNull(em->none_type))
    return torch_fail(em, O2M_ERR_INTERNAL, "MLIR cannot parse !torch.none");
  return O2M_OK;
}

o2m_status o2m_emit_torch(const o2m_model *model,
                          const o2m_import_options *options, FILE *out,
                          o2m_diag *diag) {
  static const o2m_import_options defaults = {O2M_TARGET_TORCH};
  if (!model || !model->graph || !out)
    return o2m_fail(diag, O2M_ERR_USAGE, "o2m_emit_torch: no model or output");
  o2m_torch em = {.model = model, .options = options ? options : &defaults,
                  .diag = diag};
  em.nodes_total = torch_count_nodes(model->graph);
  o2m_status status = init_context(&em);
  MlirModule module = mlirModuleCreateEmpty(em.unknown_loc);
  if (status == O2M_OK)
    status = torch_emit_main_function(&em, mlirModuleGetBody(module));
  MlirOperation module_op = mlirModuleGetOperation(module);
  if (status == O2M_OK && !mlirOperationVerify(module_op))
    status = torch_fail(&em, O2M_ERR_INTERNAL,
                        "the emitted torch-form module does not verify");
  if (status == O2M_OK) status = write_module(&em, module_op, out);
  mlirModuleDestroy(module);
  form_values_free(&em.values);
  o2m_arena_free(&em.arena);
  mlirContextDestroy(em.ctx);
  return status;
}
