/* form_output.c - what both as-written emitters do around the module they
 * build: MLIR's diagnostics captured instead of printed, and the module
 * written as text (nothing elided, so the dense_resource blobs round-trip)
 * or as MLIR bytecode, with weight blobs copied from the model's file
 * mapping by the kernel.
 */
#include <stdlib.h>
#include <string.h>

#include "emit/form/form.h"
#include "onnx/reader.h"

/* ---- MLIR diagnostics -------------------------------------------------- */

MlirLogicalResult form_capture_diagnostic(MlirDiagnostic d, void *user) {
  char *first = user;
  if (mlirDiagnosticGetSeverity(d) == MlirDiagnosticError && !first[0]) {
    form_text t = {first, FORM_MLIR_ERROR_CAP, 0};
    mlirLocationPrint(mlirDiagnosticGetLocation(d), form_text_append, &t);
    form_text_append(mlirStringRefCreateFromCString(": "), &t);
    mlirDiagnosticPrint(d, form_text_append, &t);
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

int form_write_module(MlirOperation module, const o2m_model *model, int bytecode, FILE *out) {
  file_sink *sink = malloc(sizeof(*sink));
  if (!sink) return -1;
  sink->out = out;
  sink->model = model;
  sink->failed = 0;
  sink->len = 0;
  if (bytecode) {
    mlirOperationWriteBytecode(module, write_to_file, sink);
  } else {
    MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
    mlirOpPrintingFlagsAssumeVerified(flags); /* verified just before */
    mlirOperationPrintWithFlags(module, flags, write_to_file, sink);
    mlirOpPrintingFlagsDestroy(flags);
    write_to_file(mlirStringRefCreateFromCString("\n"), sink);
  }
  flush_sink(sink);
  int failed = sink->failed;
  free(sink);
  return failed || fflush(out) != 0 || ferror(out) ? -1 : 0;
}
