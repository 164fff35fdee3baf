/* fuzz_lower.c - libFuzzer target through the whole import: a model is
 * decoded, checked, inferred, then emitted in each of the five forms (the
 * as-written forms torch and onnx from one load, each lowering form from a
 * fresh load, since lowering rewrites the model). Any crash, leak,
 * sanitizer report, or failure without a message is a bug. Mutations are
 * structure-aware (fuzz_mutator.c). */
#include <stdlib.h>

#include "onnx2mlir.h"

static o2m_model *load(const uint8_t *data, size_t size) {
  o2m_diag diag = {0};
  o2m_model *model = NULL;
  /* no base dir: external data is refused, never read from disk */
  if (o2m_model_load_bytes(data, size, "fuzz.onnx", NULL, NULL, &model, &diag) != O2M_OK) {
    if (!diag.message[0]) abort(); /* every failure explains itself */
    return NULL;
  }
  return model;
}

static void import(o2m_model *model, o2m_target target) {
  o2m_diag diag = {0};
  o2m_import_options options = {.target = target};
  void *text = NULL;
  size_t size = 0;
  if (o2m_model_import_to_buffer(model, &options, &text, &size, &diag) != O2M_OK) {
    if (!diag.message[0] || text) abort();
    return;
  }
  if (!text || !size) abort(); /* success brings a module */
  o2m_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  o2m_model *model = load(data, size);
  if (!model) return 0;
  import(model, O2M_TARGET_TORCH);
  import(model, O2M_TARGET_ONNX);
  o2m_model_free(model);
  static const o2m_target LOWERINGS[] = {O2M_TARGET_LINALG, O2M_TARGET_TOSA, O2M_TARGET_STABLEHLO};
  for (size_t i = 0; i < sizeof LOWERINGS / sizeof *LOWERINGS; i++) {
    model = load(data, size);
    if (!model) abort(); /* it loaded a moment ago */
    import(model, LOWERINGS[i]);
    o2m_model_free(model);
  }
  return 0;
}
