/* compiled_call.c - bench/compiled_bench.sh's C harness: loads a library
 * that `onnx2mlir compile --name model` wrote, calls model_run N times on
 * one float32 input read from a .npy file, prints one line
 * "median MS min MS" over the N calls (the first included, as `run
 * --repeat`), and writes the first output as float32 .npy.
 *   usage: compiled_call LIB.so INPUT.npy OUTPUT.npy N
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct onnx2mlir_tensor { /* the compiled header's struct */
  int32_t dtype, rank;
  int64_t dims[16];
  void *data;
} onnx2mlir_tensor;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: compiled_call LIB.so INPUT.npy OUTPUT.npy N\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  int (*run)(const onnx2mlir_tensor *, int, onnx2mlir_tensor *, int) = lib ? (int (*)(const onnx2mlir_tensor *, int, onnx2mlir_tensor *, int))(uintptr_t)dlsym(lib, "model_run") : NULL;
  void (*free_outputs)(onnx2mlir_tensor *, int) = lib ? (void (*)(onnx2mlir_tensor *, int))(uintptr_t)dlsym(lib, "model_free_outputs") : NULL;
  const char *(*output_name)(int) = lib ? (const char *(*)(int))(uintptr_t)dlsym(lib, "model_output_name") : NULL;
  if (!run || !free_outputs || !output_name) {
    fprintf(stderr, "%s: %s\n", argv[1], dlerror());
    return 1;
  }
  FILE *f = fopen(argv[2], "rb");
  char header[4096];
  if (!f || fread(header, 1, 10, f) != 10) return fprintf(stderr, "cannot read %s\n", argv[2]), 1;
  unsigned len = (unsigned char)header[8] | (unsigned char)header[9] << 8;
  if (len >= sizeof(header) || fread(header, 1, len, f) != len) return 1;
  header[len] = '\0';
  if (!strstr(header, "'<f4'")) return fprintf(stderr, "%s: float32 only\n", argv[2]), 1;
  onnx2mlir_tensor in = {1, 0, {0}, NULL};
  long long count = 1;
  for (char *p = strchr(strstr(header, "'shape'"), '(') + 1; *p && *p != ')';) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    long long d = strtoll(p, &p, 10);
    in.dims[in.rank++] = d, count *= d;
  }
  in.data = malloc((size_t)count * 4);
  if (fread(in.data, 4, (size_t)count, f) != (size_t)count) return 1;
  fclose(f);
  int n = atoi(argv[4]) > 0 ? atoi(argv[4]) : 1, n_out = 0;
  while (output_name(n_out)) n_out++;
  double *ms = calloc((size_t)n, sizeof(double));
  onnx2mlir_tensor *out = calloc((size_t)n_out + 1, sizeof(onnx2mlir_tensor));
  for (int i = 0; i < n; i++) {
    double t0 = now_ms();
    int status = run(&in, 1, out, n_out);
    ms[i] = now_ms() - t0;
    if (status) return fprintf(stderr, "model_run returned %d\n", status), 1;
    if (i + 1 < n) free_outputs(out, n_out);
  }
  qsort(ms, (size_t)n, sizeof(double), by_value);
  printf("median %.3f min %.3f\n", n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, ms[0]);
  FILE *o = fopen(argv[3], "wb");
  char shape[256] = "";
  long long total = 1;
  for (int k = 0; k < out[0].rank; k++) {
    snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape), "%lld,%s", (long long)out[0].dims[k],
             k + 1 < out[0].rank ? " " : "");
    total *= out[0].dims[k];
  }
  char h[256];
  int hl = snprintf(h, sizeof(h), "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
  while ((10 + hl + 1) % 64) h[hl++] = ' ';
  h[hl++] = '\n';
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 255), (unsigned char)(hl >> 8)};
  if (!o || fwrite(pre, 1, 10, o) != 10 || fwrite(h, 1, (size_t)hl, o) != (size_t)hl ||
      fwrite(out[0].data, 4, (size_t)total, o) != (size_t)total)
    return 1;
  fclose(o);
  free_outputs(out, n_out);
  return 0;
}
