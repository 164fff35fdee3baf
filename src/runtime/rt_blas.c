/* rt_blas.c - float32 matrix products through BLAS (OpenBLAS's
 * cblas_sgemm, loaded at run time), plain loops without it.
 *
 * Owns: finding BLAS (libopenblas.so.0, one thread; ONNX2MLIR_NO_BLAS=1
 * turns it off, for comparison) and the kernels the calls of float32
 * products reach (rt_abi.h: O2M_SGEMM_CALL and its kin). Such a call
 * computes C += A B on memrefs A [M, K], B [K, N] (or W [N, K] read
 * transposed), C [M, N] (or with a leading batch dim on all three), passed
 * as strided memref descriptors, so any row stride works; a view whose rows
 * are not contiguous goes through cblas's transpose, else a plain loop.
 * Loading BLAS may set OPENBLAS_CORETYPE in the process (choose_kernels).
 * The rewrite of products into these calls is the compiler's
 * (src/exec/exec_blas.c).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* ---- BLAS ------------------------------------------------------------------ */

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a,
                         int lda, const float *b, int ldb, float beta, float *c, int ldc);

typedef void (*sgemv_fn)(int order, int trans, int m, int n, float alpha, const float *a, int lda, const float *x,
                         int inc_x, float beta, float *y, int inc_y);

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static sgemm_fn sgemm;
static sgemv_fn sgemv; /* a one-row product: OpenBLAS's sgemm would pack all of B for it */

/* OpenBLAS picks its kernels by the CPU's model name, which virtual
 * machines often hide ("Intel Xeon Processor"): it then falls back to its
 * SSE3 kernels, 2.5x slower here than its AVX-512 ones. Unless the user
 * chose (OPENBLAS_CORETYPE), the kernel family goes by the features the
 * CPU reports; OpenBLAS reads the variable when it is loaded. */
static void choose_kernels(void) {
  if (getenv("OPENBLAS_CORETYPE")) return;
  __builtin_cpu_init();
  const char *core = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl")
                         ? "SkylakeX"
                     : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "Haswell"
                                                                                      : NULL;
  if (core) setenv("OPENBLAS_CORETYPE", core, 0);
}

static void find_blas(void) {
  const char *off = getenv("ONNX2MLIR_NO_BLAS");
  if (off && *off && strcmp(off, "0") != 0) return;
  choose_kernels();
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  void (*set_threads)(int) = (void (*)(int))(uintptr_t)dlsym(lib, "openblas_set_num_threads");
  if (set_threads) set_threads(1); /* one thread, as the rest of the generated code */
  sgemm = (sgemm_fn)(uintptr_t)dlsym(lib, "cblas_sgemm");
  sgemv = (sgemv_fn)(uintptr_t)dlsym(lib, "cblas_sgemv");
}

int o2m_rt_blas_available(void) {
  pthread_once(&blas_once, find_blas);
  return sgemm != NULL;
}

/* ---- the kernels ------------------------------------------------------------- */

typedef RT_F32_MEMREF(2) memref2;
typedef RT_F32_MEMREF(3) memref3;

/* A [m, k] operand's BLAS form: its transpose flag and leading dim, or 0
 * when its rows and columns are both strided. */
static int blas_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, int *trans, int *ld) {
  if (col_stride == 1 && row_stride >= (cols > 1 ? cols : 1) && row_stride <= INT32_MAX) {
    *trans = NO_TRANS, *ld = (int)row_stride;
    return 1;
  }
  if (row_stride == 1 && col_stride >= (rows > 1 ? rows : 1) && col_stride <= INT32_MAX) {
    *trans = TRANS, *ld = (int)col_stride;
    return 1;
  }
  return 0;
}

enum { PARALLEL_MACS = 1 << 18 }; /* below, one thread does it faster than a fork */

/* C = beta C + A B for one matrix of each (pointers at element 0, strides
 * in elements; beta 1, or 0: C's old values are not read). */
void o2m_rt_gemm(int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa, const float *b,
                 const int64_t *sb, float beta, float *c, const int64_t *sc) {
  if (m == 0 || n == 0) return;
  /* a large product on several threads: oneDNN's sgemm, on the OpenMP pool (K = 0: the loops
   * below write beta C) */
  if (m * n * k >= PARALLEL_MACS && o2m_rt_call_threads() > 1 && rt_dnnl_gemm(m, n, k, a, sa, b, sb, beta, c, sc))
    return;
  o2m_rt_blas_available(); /* finds BLAS at the first product (a library's first call) */
  int ta, tb, lda, ldb;
  if (sgemm && k > 0 && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && sc[1] == 1 && sc[0] >= n &&
      sc[0] <= INT32_MAX && blas_layout(m, k, sa[0], sa[1], &ta, &lda) && blas_layout(k, n, sb[0], sb[1], &tb, &ldb)) {
    if (m == 1 && sgemv && sa[1] >= 1 && sa[1] <= INT32_MAX) /* c = B^T a: B [k, n], or W [n, k] read as is */
      sgemv(ROW_MAJOR, tb == NO_TRANS ? TRANS : NO_TRANS, tb == NO_TRANS ? (int)k : (int)n,
            tb == NO_TRANS ? (int)n : (int)k, 1.0f, b, ldb, a, (int)sa[1], beta, c, 1);
    else
      sgemm(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, 1.0f, a, lda, b, ldb, beta, c, (int)sc[0]);
    return;
  }
  for (int64_t i = 0; i < m; i++) {
    if (beta == 0)
      for (int64_t j = 0; j < n; j++) c[i * sc[0] + j * sc[1]] = 0;
    for (int64_t p = 0; p < k; p++) {
      float x = a[i * sa[0] + p * sa[1]];
      for (int64_t j = 0; j < n; j++) c[i * sc[0] + j * sc[1]] += x * b[p * sb[0] + j * sb[1]];
    }
  }
}

static float beta_of(int64_t accumulate) { return accumulate ? 1.0f : 0.0f; }

static void rt_sgemm(memref2 *a, memref2 *b, memref2 *c, int64_t accumulate) {
  o2m_rt_gemm(c->sizes[0], c->sizes[1], a->sizes[1], a->aligned + a->offset, a->strides, b->aligned + b->offset,
              b->strides, beta_of(accumulate), c->aligned + c->offset, c->strides);
}

/* C (+)= A W^T: W [N, K] read as B [K, N] through swapped strides. */
static void rt_sgemm_bt(memref2 *a, memref2 *w, memref2 *c, int64_t accumulate) {
  const int64_t sb[2] = {w->strides[1], w->strides[0]};
  o2m_rt_gemm(c->sizes[0], c->sizes[1], a->sizes[1], a->aligned + a->offset, a->strides, w->aligned + w->offset, sb,
              beta_of(accumulate), c->aligned + c->offset, c->strides);
}

/* C [n] (+)= A [n] W^T for each n: A [N, M, K], W [F, K], C [N, M, F] (the
 * product upstream's convert_conv2d_to_img2col makes of an NHWC
 * convolution). */
static void rt_sgemm_nbt(memref3 *a, memref2 *w, memref3 *c, int64_t accumulate) {
  const int64_t sb[2] = {w->strides[1], w->strides[0]};
  for (int64_t i = 0; i < c->sizes[0]; i++)
    o2m_rt_gemm(c->sizes[1], c->sizes[2], a->sizes[2], a->aligned + a->offset + i * a->strides[0], a->strides + 1,
                w->aligned + w->offset, sb, beta_of(accumulate), c->aligned + c->offset + i * c->strides[0],
                c->strides + 1);
}

/* C [i] (+)= A [i] B [i]: oneDNN's batched matmul where it is, else one
 * product per batch. */
static void rt_sgemm_batched(memref3 *a, memref3 *b, memref3 *c, int64_t accumulate) {
  if (rt_dnnl_batched_gemm(c->sizes[0], c->sizes[1], c->sizes[2], a->sizes[2], a->aligned + a->offset, a->strides,
                           b->aligned + b->offset, b->strides, beta_of(accumulate), c->aligned + c->offset,
                           c->strides))
    return;
  for (int64_t i = 0; i < c->sizes[0]; i++)
    o2m_rt_gemm(c->sizes[1], c->sizes[2], a->sizes[2], a->aligned + a->offset + i * a->strides[0], a->strides + 1,
                b->aligned + b->offset + i * b->strides[0], b->strides + 1, beta_of(accumulate),
                c->aligned + c->offset + i * c->strides[0], c->strides + 1);
}

int rt_blas_symbols(o2m_rt_symbol *out) {
  out[0] = (o2m_rt_symbol){"_mlir_ciface_" O2M_SGEMM_CALL, (void *)(uintptr_t)rt_sgemm};
  out[1] = (o2m_rt_symbol){"_mlir_ciface_" O2M_SGEMM_BATCHED_CALL, (void *)(uintptr_t)rt_sgemm_batched};
  out[2] = (o2m_rt_symbol){"_mlir_ciface_" O2M_SGEMM_BT_CALL, (void *)(uintptr_t)rt_sgemm_bt};
  out[3] = (o2m_rt_symbol){"_mlir_ciface_" O2M_SGEMM_NBT_CALL, (void *)(uintptr_t)rt_sgemm_nbt};
  return 4;
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the names the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_sgemm(memref2 *a, memref2 *b, memref2 *c, int64_t acc) { rt_sgemm(a, b, c, acc); }
void _mlir_ciface_o2m_sgemm_bt(memref2 *a, memref2 *w, memref2 *c, int64_t acc) { rt_sgemm_bt(a, w, c, acc); }
void _mlir_ciface_o2m_sgemm_nbt(memref3 *a, memref2 *w, memref3 *c, int64_t acc) { rt_sgemm_nbt(a, w, c, acc); }
void _mlir_ciface_o2m_sgemm_batched(memref3 *a, memref3 *b, memref3 *c, int64_t acc) {
  rt_sgemm_batched(a, b, c, acc);
}
#endif
