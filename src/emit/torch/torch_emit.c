/* torch_emit.c - o2m_emit_torch: the torch-form emitter's entry point.
 *
 * Owns: the MLIR context of one emission (unregistered dialects allowed,
 * only func loaded, MLIR's diagnostics captured instead of printed), the
 * module, its verification and its output: text (nothing elided, so the
 * dense_resource blobs round-trip) or MLIR bytecode. The module and its
 * context are destroyed before returning; blobs view the model's bytes,
 * which the caller keeps alive for the whole call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Func.h>

#include "emit/torch/torch_internal.h"
#include "onnx/reader.h"
#include "util/diag.h"

MlirStringRef torch_str(const char *s) { return mlirStringRefCreateFromCString(s); }

o2m_status torch_fail(o2m_torch *em, o2m_status status, const char *fmt, ...) {
  char reason[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof(reason), fmt, ap);
  va_end(ap);
  const char *path = em->model->path ? em->model->path : "<model>";
  if (status == O2M_ERR_INTERNAL && em->mlir_error[0])
    return o2m_fail(em->diag, status, "%s: %s (MLIR: %s)", path, reason,
                    em->mlir_error);
  return o2m_fail(em->diag, status, "%s: %s", path, reason);
}

o2m_status torch_node_fail(o2m_torch *em, const o2m_node *node,
                           o2m_status status, const char *fmt, ...) {
  char reason[1024], who[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof(reason), fmt, ap);
  va_end(ap);
  if (node->name[0])
    snprintf(who, sizeof(who), "node '%s'", node->name);
  else
    snprintf(who, sizeof(who), "unnamed node %d", node->index);
  return torch_fail(em, status, "graph '%s': %s (%s, domain '%s', opset %lld): %s",
                    node->graph ? node->graph->name : "", who, node->op_type,
                    node->domain[0] ? node->domain : "ai.onnx",
                    (long long)node->opset, reason);
}

/* ---- MLIR diagnostics -------------------------------------------------- */

typedef struct text_sink {
  char *buf;
  size_t cap, len;
} text_sink;

static void append_to_sink(MlirStringRef s, void *user) {
  text_sink *sink = user;
  size_t room = sink->cap - 1 - sink->len;
  size_t n = s.length < room ? s.length : room;
  memcpy(sink->buf + sink->len, s.data, n);
  sink->len += n;
  sink->buf[sink->len] = '\0';
}

/* Keeps the first error as "location: message"; swallows the rest so that
 * nothing reaches stderr. */
static MlirLogicalResult capture_diagnostic(MlirDiagnostic d, void *user) {
  o2m_torch *em = user;
  if (mlirDiagnosticGetSeverity(d) == MlirDiagnosticError &&
      !em->mlir_error[0]) {
    text_sink sink = {em->mlir_error, sizeof(em->mlir_error), 0};
    mlirLocationPrint(mlirDiagnosticGetLocation(d), append_to_sink, &sink);
    append_to_sink(torch_str(": "), &sink);
    mlirDiagnosticPrint(d, append_to_sink, &sink);
  }
  return mlirLogicalResultSuccess();
}

/* ---- output ------------------------------------------------------------ */

/* MLIR hands the printed text over in many small pieces; they are gathered
 * into chunks before they reach the FILE. */
enum { SINK_CHUNK = 1 << 16 };

typedef struct file_sink {
  FILE *out;
  const o2m_model *model; /* its file mappings, for weights (see below) */
  int failed;
  size_t len;
  char buf[SINK_CHUNK];
} file_sink;

static void flush_sink(file_sink *sink) {
  if (!sink->failed && sink->len &&
      fwrite(sink->buf, 1, sink->len, sink->out) != sink->len)
    sink->failed = 1;
  sink->len = 0;
}

static void write_to_file(MlirStringRef s, void *user) {
  file_sink *sink = user;
  if (sink->len + s.length > sizeof(sink->buf)) flush_sink(sink);
  if (s.length >= sizeof(sink->buf)) {
    /* A large piece is a weight blob, handed over where it lies in the
     * model's file mapping: the kernel copies it into the output file
     * without the bytes passing through this process. */
    size_t copied = 0;
    if (!sink->failed && fflush(sink->out) == 0)
      copied = o2m_mapping_copy(sink->model->mappings, sink->model->n_mappings, s.data, s.length,
                                fileno(sink->out));
    size_t rest = s.length - copied;
    if (!sink->failed && rest && fwrite(s.data + copied, 1, rest, sink->out) != rest)
      sink->failed = 1;
    return;
  }
  memcpy(sink->buf + sink->len, s.data, s.length);
  sink->len += s.length;
}

static o2m_status write_module(o2m_torch *em, MlirOperation module, FILE *out) {
  file_sink *sink = malloc(sizeof(*sink));
  if (!sink) return torch_fail(em, O2M_ERR_NOMEM, "out of memory");
  sink->out = out;
  sink->model = em->model;
  sink->failed = 0;
  sink->len = 0;
  if (em->options->bytecode) {
    mlirOperationWriteBytecode(module, write_to_file, sink);
  } else {
    MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
    mlirOpPrintingFlagsAssumeVerified(flags); /* verified just before */
    mlirOperationPrintWithFlags(module, flags, write_to_file, sink);
    mlirOpPrintingFlagsDestroy(flags);
    write_to_file(torch_str("\n"), sink);
  }
  flush_sink(sink);
  int failed = sink->failed;
  free(sink);
  if (failed || fflush(out) != 0 || ferror(out))
    return torch_fail(em, O2M_ERR_IO, "writing the MLIR output failed");
  return O2M_OK;
}

/* ---- entry ------------------------------------------------------------- */

static o2m_status init_context(o2m_torch *em) {
  em->ctx = mlirContextCreateWithThreading(false);
  mlirContextSetAllowUnregisteredDialects(em->ctx, true);
  mlirContextAttachDiagnosticHandler(em->ctx, capture_diagnostic, em, NULL);
  MlirDialectHandle func = mlirGetDialectHandle__func__();
  mlirDialectHandleRegisterDialect(func, em->ctx);
  mlirDialectHandleLoadDialect(func, em->ctx);
  em->unknown_loc = mlirLocationUnknownGet(em->ctx);
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
  torch_values_free(&em.values);
  o2m_arena_free(&em.arena);
  mlirContextDestroy(em.ctx);
  return status;
}
