/* rt_softmax.c - Softmax and LogSoftmax on float32 along the last axis
 * (rt_abi.h, O2M_SOFTMAX_CALL), the Linalg emitter's O2M_JIT_KERNELS form
 * of them: the generic form's sum of exps is a reduction LLVM leaves
 * scalar, here each row is three vector passes.
 *
 * Owns: per row of the last axis, m = max(x), s = sum(exp(x - m)), then
 * y = exp(x - m) / s (Softmax) or x - m - log(s) (LogSoftmax), as the
 * reference computes them. exp is a vector polynomial (2^n by the
 * exponent bits times a degree-6 polynomial on [-ln2/2, ln2/2], relative
 * error about 2e-7) for x - m <= 0, the only arguments there are; a row
 * holding a NaN or an infinity takes libm's expf one value at a time, so
 * that NaNs and infinities come out as the reference's. Rows are split
 * across the call's threads.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"
#include "runtime/rt_vector.h"

/* lanes of a where m is set, else of b (a macro: see rt_vector.h) */
#define PICK(m, a, b) ((v16f)(((m) & (v16i)(a)) | (~(m) & (v16i)(b))))

/* *v = exp(*v) for *v <= 0 in every lane (below -87.3: 0); by pointer,
 * as rt_vector.h says. */
static inline __attribute__((always_inline)) void exp_nonpositive(v16f *v) {
  const v16f zero = {0};
  v16f x = *v;
  v16f lo = zero - 87.3f;
  v16i under = x < lo;
  x = PICK(under, lo, x);
  v16f n = x * 1.44269504f + (zero + 12582912.0f) - 12582912.0f; /* round(x / ln2) */
  v16f r = x - n * 0.693359375f + n * 2.12194440e-4f;            /* x - n ln2, in two parts */
  v16f p = zero + 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  v16i scale = (__builtin_convertvector(n, v16i) + 127) << 23; /* 2^n, n >= -126 */
  v16f e = p * (v16f)scale;
  *v = PICK(under, zero, e);
}

/* The row by libm, as the reference (NaN and infinities). */
static void row_scalar(const float *x, float *y, int64_t n, int log_form) {
  float m = -INFINITY, s = 0;
  for (int64_t i = 0; i < n; i++) m = x[i] > m || x[i] != x[i] ? x[i] : m;
  for (int64_t i = 0; i < n; i++) s += expf(x[i] - m);
  for (int64_t i = 0; i < n; i++) y[i] = log_form ? x[i] - m - logf(s) : expf(x[i] - m) / s;
}

/* The row in vector passes; 0 (nothing written) when it holds a NaN or an
 * infinity (v - v is then not 0). */
PER_CPU static int row_vector(const float *x, float *y, int64_t n, int log_form) {
  const v16f zero = {0};
  v16f mv = zero - INFINITY;
  v16i bad = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v16f v;
    memcpy(&v, x + i, sizeof(v));
    mv = PICK(v > mv, v, mv);
    bad |= (v - v) != zero;
  }
  float m = -INFINITY;
  int special = 0;
  for (int k = 0; k < 16; k++) m = mv[k] > m ? mv[k] : m, special |= bad[k] != 0;
  for (int64_t j = i; j < n; j++) m = x[j] > m ? x[j] : m, special |= x[j] - x[j] != 0;
  if (special) return 0;
  /* the exps, kept in y for Softmax; their sum (the tail's missing lanes
   * are -inf, whose exp adds 0) */
  v16f sv = zero;
  for (i = 0; i + 16 <= n; i += 16) {
    v16f v;
    memcpy(&v, x + i, sizeof(v));
    v16f e = v - m;
    exp_nonpositive(&e);
    sv += e;
    if (!log_form) memcpy(y + i, &e, sizeof(e));
  }
  if (i < n) {
    float tail[16];
    for (int k = 0; k < 16; k++) tail[k] = i + k < n ? x[i + k] : -INFINITY;
    v16f e;
    memcpy(&e, tail, sizeof(e));
    e -= m;
    exp_nonpositive(&e);
    sv += e;
    memcpy(tail, &e, sizeof(e));
    for (int64_t j = i; j < n && !log_form; j++) y[j] = tail[j - i];
  }
  float s = 0;
  for (int k = 0; k < 16; k++) s += sv[k];
  /* y = x - (m + log s), or y = exp / s: whole vectors, then the tail */
  v16f by = zero + (log_form ? m + logf(s) : s);
  for (i = 0; i + 16 <= n; i += 16) {
    v16f v;
    memcpy(&v, (log_form ? x : y) + i, sizeof(v));
    v = log_form ? v - by : v / by;
    memcpy(y + i, &v, sizeof(v));
  }
  for (; i < n; i++) y[i] = log_form ? x[i] - by[0] : y[i] / s;
  return 1;
}

typedef struct softmax_job {
  const float *x;
  float *y;
  int64_t n;
  int log_form;
} softmax_job;

static void rows(void *ctx, int64_t r0, int64_t r1) {
  const softmax_job *j = ctx;
  for (int64_t r = r0; r < r1; r++) {
    const float *x = j->x + r * j->n;
    float *y = j->y + r * j->n;
    if (!row_vector(x, y, j->n, j->log_form)) row_scalar(x, y, j->n, j->log_form);
  }
}

/* y = Softmax (LogSoftmax: log_form 1) of x along its last axis; y is a
 * new row-major buffer of x's dims (the lowering makes it). */
static void rt_softmax(o2m_rt_unranked *x_m, o2m_rt_unranked *y_m, int64_t log_form) {
  int64_t count = o2m_rt_count(x_m);
  if (x_m->rank < 1 || o2m_rt_count(y_m) != count || !o2m_rt_row_major(y_m) || count == 0) return;
  int64_t n = x_m->desc[3 + x_m->rank - 1];
  void *owned = NULL;
  const float *x = o2m_rt_dense(x_m, 4, &owned);
  softmax_job job = {x, (float *)(intptr_t)y_m->desc[1] + y_m->desc[2], n, log_form != 0};
  if (x && n > 0) o2m_rt_parallel_for(rows, &job, 0, count / n, 8 * n);
  free(owned);
}

o2m_rt_symbol rt_softmax_symbol(void) {
  return (o2m_rt_symbol){"_mlir_ciface_" O2M_SOFTMAX_CALL, (void *)(uintptr_t)rt_softmax};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_softmax_f32(o2m_rt_unranked *x, o2m_rt_unranked *y, int64_t log_form) {
  rt_softmax(x, y, log_form);
}
#endif
