/* threads_compiled.c - calls a model compiled with `--name model` (model.h
 * beside it) on one input from the .npy file given, once alone, then from
 * THREADS threads CALLS times each at once; every output must equal the
 * first call's bytes. Prints "threads ok" or the first difference; exit 1
 * on a difference or a failed call.
 *   usage: threads_compiled INPUT.npy THREADS CALLS   (float32 input)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static onnx2mlir_tensor input;
static onnx2mlir_tensor first[8];
static int n_out, calls, bad;

static long long bytes_of(const onnx2mlir_tensor *t) {
  long long n = 4; /* the example models give float32 outputs */
  for (int k = 0; k < t->rank; k++) n *= t->dims[k];
  return n;
}

static void *work(void *arg) {
  (void)arg;
  for (int i = 0; i < calls; i++) {
    onnx2mlir_tensor out[8];
    if (model_run(&input, 1, out, n_out) != ONNX2MLIR_OK) {
      __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
      return NULL;
    }
    for (int k = 0; k < n_out; k++)
      if (out[k].rank != first[k].rank || memcmp(out[k].data, first[k].data, (size_t)bytes_of(&first[k])) != 0)
        __atomic_store_n(&bad, 2, __ATOMIC_RELAXED);
    model_free_outputs(out, n_out);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) return fprintf(stderr, "usage: threads_compiled INPUT.npy THREADS CALLS\n"), 2;
  FILE *f = fopen(argv[1], "rb");
  char header[1024];
  if (!f || fread(header, 1, 10, f) != 10) return 1;
  unsigned len = (unsigned char)header[8] | (unsigned char)header[9] << 8;
  if (len >= sizeof(header) || fread(header, 1, len, f) != len) return 1;
  header[len] = '\0';
  long long count = 1;
  input.dtype = ONNX2MLIR_FLOAT;
  for (char *p = strchr(strstr(header, "'shape'"), '(') + 1; *p && *p != ')';) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    long long d = strtoll(p, &p, 10);
    input.dims[input.rank++] = d, count *= d;
  }
  float *x = malloc((size_t)count * 4);
  if (fread(x, 4, (size_t)count, f) != (size_t)count) return 1;
  input.data = x;
  fclose(f);
  while (model_output_name(n_out)) n_out++;
  if (n_out > 8 || model_run(&input, 1, first, n_out) != ONNX2MLIR_OK) return fprintf(stderr, "first call failed\n"), 1;
  int n_threads = atoi(argv[2]);
  calls = atoi(argv[3]);
  pthread_t t[64];
  for (int i = 0; i < n_threads && i < 64; i++) pthread_create(&t[i], NULL, work, NULL);
  for (int i = 0; i < n_threads && i < 64; i++) pthread_join(t[i], NULL);
  model_free_outputs(first, n_out);
  free(x);
  if (bad) return fprintf(stderr, bad == 1 ? "a call failed\n" : "an output differs from the first call's\n"), 1;
  puts("threads ok");
  return 0;
}
