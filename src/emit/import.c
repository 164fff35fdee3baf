/* import.c - o2m_model_import: the dispatch from a target to its emitter.
 *
 * Owns: the table from import target to emitter. A target whose emitter
 * does not exist yet has a NULL row and is refused with a clear message.
 * Target names live in src/core/target.c (the CLI needs them without MLIR).
 */
#include <stdlib.h>

#include "emit/emit.h"
#include "util/diag.h"

typedef o2m_status (*o2m_emit_fn)(o2m_model *model,
                                  const o2m_import_options *options, FILE *out,
                                  o2m_diag *diag);

static o2m_status emit_torch(o2m_model *model, const o2m_import_options *options,
                            FILE *out, o2m_diag *diag) {
  return o2m_emit_torch(model, options, out, diag);
}

/* NULL: not implemented yet. */
static const o2m_emit_fn emitters[] = {
    [O2M_TARGET_TORCH] = emit_torch,
    [O2M_TARGET_ONNX] = o2m_emit_onnx,
    [O2M_TARGET_LINALG] = o2m_emit_linalg,
    [O2M_TARGET_TOSA] = o2m_emit_tosa,
    [O2M_TARGET_STABLEHLO] = o2m_emit_stablehlo,
};

enum { TARGET_COUNT = sizeof(emitters) / sizeof(emitters[0]) };

o2m_status o2m_model_import(o2m_model *model,
                            const o2m_import_options *options, FILE *out,
                            o2m_diag *diag) {
  static const o2m_import_options defaults = {O2M_TARGET_TORCH};
  if (!options) options = &defaults;
  if ((unsigned)options->target >= TARGET_COUNT)
    return o2m_fail(diag, O2M_ERR_USAGE, "unknown import target %d",
                    (int)options->target);
  o2m_emit_fn emit = emitters[options->target];
  if (!emit)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED,
                    "target %s is not implemented yet",
                    o2m_target_name(options->target));
  if (!model || !out)
    return o2m_fail(diag, O2M_ERR_USAGE, "o2m_model_import: no model or output");
  return emit(model, options, out, diag);
}

o2m_status o2m_model_import_to_buffer(o2m_model *model, const o2m_import_options *options,
                                      void **out, size_t *size, o2m_diag *diag) {
  if (!out || !size) return o2m_fail(diag, O2M_ERR_USAGE, "o2m_model_import_to_buffer: no output");
  char *buf = NULL;
  *out = NULL;
  *size = 0;
  FILE *f = open_memstream(&buf, size);
  if (!f) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  o2m_status s = o2m_model_import(model, options, f, diag);
  if (fclose(f) != 0 && !s) s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  if (s) {
    free(buf);
    *size = 0;
    return s;
  }
  *out = buf;
  return O2M_OK;
}
