/* run_compiled.c - calls a model compiled by `onnx2mlir compile --name model`
 * on inputs read from .npy files and writes its outputs as .npy files.
 *
 *   onnx2mlir compile examples/small_cnn.onnx -o libmodel.so --header model.h
 *   cc -I. examples/compiled/run_compiled.c -L. -lmodel -Wl,-rpath,'$ORIGIN' -o run_compiled
 *   ./run_compiled OUTDIR input0.npy [input1.npy ...]
 *
 * writes OUTDIR/output_<i>.npy (the folder must exist). Any batch size the
 * model leaves dynamic works: the library checks dtypes, ranks and fixed
 * dims and returns ONNX2MLIR_ERR_ARGUMENT for a mismatch. The .npy reader
 * takes little-endian C-order arrays of the dtypes below (NumPy's default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* NumPy's dtype strings and ONNX's dtype codes. */
static const struct {
  const char *descr;
  int dtype, bytes;
} dtypes[] = {
    {"<f4", ONNX2MLIR_FLOAT, 4},  {"<f8", ONNX2MLIR_DOUBLE, 8}, {"<f2", ONNX2MLIR_FLOAT16, 2},
    {"<i8", ONNX2MLIR_INT64, 8},  {"<i4", ONNX2MLIR_INT32, 4},  {"<i2", ONNX2MLIR_INT16, 2},
    {"|i1", ONNX2MLIR_INT8, 1},   {"|u1", ONNX2MLIR_UINT8, 1},  {"<u2", ONNX2MLIR_UINT16, 2},
    {"<u4", ONNX2MLIR_UINT32, 4}, {"<u8", ONNX2MLIR_UINT64, 8}, {"|b1", ONNX2MLIR_BOOL, 1},
};
enum { N_DTYPES = sizeof(dtypes) / sizeof(dtypes[0]) };

static int dtype_index(int dtype) {
  for (int i = 0; i < N_DTYPES; i++)
    if (dtypes[i].dtype == dtype) return i;
  return -1;
}

static long long element_count(const onnx2mlir_tensor *t) {
  long long n = 1;
  for (int k = 0; k < t->rank; k++) n *= t->dims[k];
  return n;
}

/* Reads a .npy file (format 1.0 or 2.0) into t; returns 0 on success. */
static int read_npy(const char *path, onnx2mlir_tensor *t) {
  FILE *f = fopen(path, "rb");
  unsigned char head[10];
  if (!f || fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not a .npy file\n", path);
    if (f) fclose(f);
    return -1;
  }
  size_t len = head[6] == 1 ? (size_t)head[8] | (size_t)head[9] << 8 : 0;
  if (head[6] >= 2) {
    unsigned char more[2];
    if (fread(more, 1, 2, f) != 2) len = 0;
    len = (size_t)head[8] | (size_t)head[9] << 8 | (size_t)more[0] << 16 | (size_t)more[1] << 24;
  }
  char *dict = calloc(len + 1, 1);
  int bad = !dict || !len || fread(dict, 1, len, f) != len;
  const char *descr = bad ? NULL : strstr(dict, "'descr': '");
  const char *shape = bad ? NULL : strstr(dict, "'shape': (");
  int d = -1;
  for (int i = 0; descr && i < N_DTYPES; i++)
    if (strncmp(descr + 10, dtypes[i].descr, 3) == 0) d = i;
  if (bad || d < 0 || !shape || strstr(dict, "'fortran_order': True")) {
    fprintf(stderr, "%s: unsupported .npy header: %s\n", path, dict ? dict : "");
    free(dict);
    fclose(f);
    return -1;
  }
  t->dtype = dtypes[d].dtype;
  t->rank = 0;
  for (char *p = (char *)shape + 10; *p && *p != ')' && t->rank < ONNX2MLIR_MAX_RANK;) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p) break;
    t->dims[t->rank++] = v;
    p = end;
    while (*p == ',' || *p == ' ') p++;
  }
  free(dict);
  size_t bytes = (size_t)element_count(t) * (size_t)dtypes[d].bytes;
  t->data = malloc(bytes ? bytes : 1);
  if (!t->data || fread(t->data, 1, bytes, f) != bytes) {
    fprintf(stderr, "%s: truncated data\n", path);
    fclose(f);
    return -1;
  }
  fclose(f);
  return 0;
}

static int write_npy(const char *path, const onnx2mlir_tensor *t) {
  int d = dtype_index(t->dtype);
  FILE *f = fopen(path, "wb");
  if (d < 0 || !f) {
    fprintf(stderr, "%s: cannot write (dtype %d)\n", path, t->dtype);
    if (f) fclose(f);
    return -1;
  }
  char dict[512];
  int n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (", dtypes[d].descr);
  for (int k = 0; k < t->rank; k++) n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%lld,", (long long)t->dims[k]);
  n += snprintf(dict + n, sizeof(dict) - (size_t)n, "), }");
  while ((10 + n + 1) % 64) dict[n++] = ' '; /* header padded to 64 bytes, ending in a newline */
  dict[n++] = '\n';
  unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255), (unsigned char)(n >> 8)};
  size_t bytes = (size_t)element_count(t) * (size_t)dtypes[d].bytes;
  int bad = fwrite(head, 1, 10, f) != 10 || fwrite(dict, 1, (size_t)n, f) != (size_t)n ||
            (bytes && fwrite(t->data, 1, bytes, f) != bytes);
  return fclose(f) != 0 || bad ? -1 : 0;
}

int main(int argc, char **argv) {
  if (argc != 2 + model_INPUT_COUNT) {
    fprintf(stderr, "usage: %s OUTDIR", argv[0]);
    for (int i = 0; i < model_INPUT_COUNT; i++) fprintf(stderr, " %s.npy", model_input_name(i));
    fprintf(stderr, "\n");
    return 2;
  }
  onnx2mlir_tensor inputs[model_INPUT_COUNT + 1], outputs[model_OUTPUT_COUNT + 1];
  for (int i = 0; i < model_INPUT_COUNT; i++)
    if (read_npy(argv[2 + i], &inputs[i]) != 0) return 1;
  int status = model_run(inputs, model_INPUT_COUNT, outputs, model_OUTPUT_COUNT);
  for (int i = 0; i < model_INPUT_COUNT; i++) free(inputs[i].data);
  if (status != ONNX2MLIR_OK) {
    fprintf(stderr, "model_run failed: status %d\n", status);
    return 1;
  }
  int failed = 0;
  for (int i = 0; i < model_OUTPUT_COUNT; i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/output_%d.npy", argv[1], i);
    if (write_npy(path, &outputs[i]) != 0) failed = 1;
    printf("output %d '%s': dtype %d [", i, model_output_name(i), outputs[i].dtype);
    for (int k = 0; k < outputs[i].rank; k++) printf("%s%lld", k ? "," : "", (long long)outputs[i].dims[k]);
    printf("]\n");
  }
  model_free_outputs(outputs, model_OUTPUT_COUNT);
  return failed;
}
