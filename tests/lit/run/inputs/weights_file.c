/* weights_file.c - calls a model compiled with `compile --weights FILE`
 * (`--name model`) on one 28x28 image: with argv[1] given, maps that file
 * first (model_load_weights), else lets the first run map the file compile
 * wrote. Prints each call's status and the first probabilities. */
#include <stdio.h>

#include "model.h"

int main(int argc, char **argv) {
  if (argc > 1) printf("load_weights: status %d\n", model_load_weights(argv[1]));
  static float image[28 * 28];
  for (int i = 0; i < 28 * 28; i++) image[i] = (float)((i * 37) % 101) / 101.0f;
  onnx2mlir_tensor in = {ONNX2MLIR_FLOAT, 4, {1, 1, 28, 28}, image}, out[1];
  int status = model_run(&in, 1, out, 1);
  printf("run: status %d\n", status);
  if (status != ONNX2MLIR_OK) return 1;
  const float *p = out[0].data;
  printf("probs %.6f %.6f %.6f\n", p[0], p[1], p[2]);
  model_free_outputs(out, 1);
  /* mapped once: another file is refused now */
  if (argc > 1) printf("again: status %d\n", model_load_weights(argv[1]));
  return 0;
}
