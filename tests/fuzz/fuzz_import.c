/* fuzz_import.c - libFuzzer target for the reader and the importer's
 * MLIR-free phases: decode, arity, function inlining, linking and inference,
 * then the info summary. Built without MLIR, so it runs many times faster
 * than the emitter targets. Any crash, leak, sanitizer report or non-O2M
 * status without a message is a bug. Mutations are structure-aware
 * (fuzz_mutator.c; one mutant in 16 byte-level, for the decoder). */
#include <stdio.h>
#include <stdlib.h>

#include "onnx2mlir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  o2m_diag diag = {0};
  o2m_model *model = NULL;
  /* no base dir: external data is refused, never read from disk */
  o2m_status s = o2m_model_load_bytes(data, size, "fuzz.onnx", NULL, NULL, &model, &diag);
  if (s != O2M_OK) {
    if (!diag.message[0]) abort(); /* every failure must explain itself */
    return 0;
  }
  FILE *sink = fopen("/dev/null", "w");
  if (sink) {
    o2m_model_write_info(model, O2M_INFO_TYPES, sink, &diag);
    fclose(sink);
  }
  o2m_model_free(model);
  return 0;
}
