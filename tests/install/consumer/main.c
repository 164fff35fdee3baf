/* main.c - a program that uses the installed library, as a user's would:
 * loads a model, lists its inputs, imports it to Linalg in memory, runs it
 * on zeros (or on a raw float32 file given as the second argument) and
 * prints every output's values. Usage: consumer MODEL [INPUT.raw] */
#include <onnx2mlir.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [INPUT.raw]\n", argv[0]);
    return 2;
  }
  o2m_diag diag = {0};
  o2m_model *model = NULL;
  if (o2m_model_load(argv[1], NULL, &model, &diag)) {
    fprintf(stderr, "error: %s\n", diag.message);
    return 1;
  }
  printf("onnx2mlir %s\n", o2m_version());
  o2m_value_desc in;
  if (o2m_model_input_count(model) != 1 || o2m_model_input(model, 0, &in, &diag) || in.dtype != 1) {
    fprintf(stderr, "error: this program takes models with one float input%s%s\n", diag.message[0] ? ": " : "",
            diag.message);
    return 1;
  }
  printf("input '%s' %s\n", in.name, in.type);
  size_t count = 1;
  for (int k = 0; k < in.rank; k++) count *= (size_t)(in.dims[k] < 0 ? 1 : in.dims[k]);
  int64_t dims[16];
  for (int k = 0; k < in.rank && k < 16; k++) dims[k] = in.dims[k] < 0 ? 1 : in.dims[k];
  float *x = calloc(count, sizeof(float));
  if (argc > 2) {
    FILE *f = fopen(argv[2], "rb");
    if (!f || fread(x, sizeof(float), count, f) != count) {
      fprintf(stderr, "error: %s does not hold %zu floats\n", argv[2], count);
      return 1;
    }
    fclose(f);
  }

  void *text = NULL;
  size_t size = 0;
  o2m_import_options import = {.target = O2M_TARGET_LINALG};
  if (o2m_model_import_to_buffer(model, &import, &text, &size, &diag)) {
    fprintf(stderr, "error: %s\n", diag.message);
    return 1;
  }
  printf("linalg: %s\n", size > 0 && strstr(text, "func.func @main") ? "has @main" : "NO @main");
  o2m_free(text);
  o2m_model_free(model); /* the import rewrote it (and `in` lived in it): load it again */

  if (o2m_model_load(argv[1], NULL, &model, &diag) || o2m_model_input(model, 0, &in, &diag)) {
    fprintf(stderr, "error: %s\n", diag.message);
    return 1;
  }
  o2m_tensor_data input = {in.name, 1, in.rank, dims, x, count * sizeof(float)};
  o2m_results *results = NULL;
  if (o2m_model_run(model, NULL, 1, &input, &results, &diag)) {
    fprintf(stderr, "error: %s\n", diag.message);
    return 1;
  }
  for (int i = 0; i < o2m_results_count(results); i++) {
    const o2m_tensor_data *t = o2m_results_get(results, i);
    printf("output '%s' dtype %d rank %d:", t->name, t->dtype, t->rank);
    for (size_t j = 0; t->dtype == 1 && j < t->nbytes / sizeof(float); j++) printf(" %.5g", ((const float *)t->data)[j]);
    printf("\n");
  }
  o2m_results_free(results);
  o2m_model_free(model);
  free(x);
  return 0;
}
