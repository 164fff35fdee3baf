/* two_models.c - links two models compiled as objects (`compile --name a`
 * and `--name b`) into one program: their internal symbols must not clash.
 * Calls both on one batch-2 image and checks that they agree, then that
 * bad calls return ONNX2MLIR_ERR_ARGUMENT instead of crashing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a.h"
#include "b.h"

static int expect(int got, int want, const char *what) {
  if (got == want) return 0;
  printf("FAIL %s: status %d, want %d\n", what, got, want);
  return 1;
}

int main(void) {
  static float image[2 * 1 * 28 * 28];
  for (int i = 0; i < 2 * 28 * 28; i++) image[i] = (float)((i * 37) % 101) / 101.0f;
  onnx2mlir_tensor in = {ONNX2MLIR_FLOAT, 4, {2, 1, 28, 28}, image}, out_a[1], out_b[1];
  int failed = expect(a_run(&in, 1, out_a, 1), ONNX2MLIR_OK, "a_run");
  failed |= expect(b_run(&in, 1, out_b, 1), ONNX2MLIR_OK, "b_run");
  if (failed) return 1;
  if (out_a[0].rank != 2 || out_a[0].dims[0] != 2 || out_a[0].dims[1] != 10 ||
      memcmp(out_a[0].data, out_b[0].data, 20 * sizeof(float)) != 0) {
    printf("FAIL: the two models disagree\n");
    return 1;
  }
  const float *p = out_a[0].data;
  float sum = 0;
  for (int i = 0; i < 10; i++) sum += p[i];
  printf("batch 2: %s %s, row 0 sums to %.4f\n", a_input_name(0), a_output_name(0), sum);
  a_free_outputs(out_a, 1);
  b_free_outputs(out_b, 1);

  onnx2mlir_tensor bad = in;
  failed |= expect(a_run(&in, 2, out_a, 1), ONNX2MLIR_ERR_ARGUMENT, "two inputs");
  failed |= expect(a_run(&in, 1, out_a, 2), ONNX2MLIR_ERR_ARGUMENT, "two outputs");
  bad.dtype = ONNX2MLIR_DOUBLE;
  failed |= expect(a_run(&bad, 1, out_a, 1), ONNX2MLIR_ERR_ARGUMENT, "double input");
  bad = in, bad.rank = 3;
  failed |= expect(a_run(&bad, 1, out_a, 1), ONNX2MLIR_ERR_ARGUMENT, "rank 3");
  bad = in, bad.dims[2] = 27;
  failed |= expect(a_run(&bad, 1, out_a, 1), ONNX2MLIR_ERR_ARGUMENT, "27 rows");
  bad = in, bad.dims[0] = -1;
  failed |= expect(a_run(&bad, 1, out_a, 1), ONNX2MLIR_ERR_ARGUMENT, "negative batch");
  bad = in, bad.data = NULL;
  failed |= expect(a_run(&bad, 1, out_a, 1), ONNX2MLIR_ERR_ARGUMENT, "no data");
  failed |= expect(a_run(NULL, 1, out_a, 1), ONNX2MLIR_ERR_ARGUMENT, "no inputs");
  if (!failed) printf("bad calls refused\n");
  return failed;
}
