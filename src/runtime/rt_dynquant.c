/* rt_dynquant.c - ONNX's DynamicQuantizeLinear on float32 (rt_abi.h,
 * O2M_DYNQUANT_CALL), the first step of dynamically quantized products
 * (then MatMulInteger, rt_qmatmul.c), in two passes over x where the
 * Linalg form's full reductions run one element at a time, each split
 * across the call's threads in chunks.
 *
 * Owns: the range [min(x, 0), max(x, 0)] (NaN if x holds one; an all-zero
 * x gets the range 1, as the reference), scale = range / 255, the zero
 * point round(clip(-min / scale, 0, 255)), and y = saturate(round(x /
 * scale) + zero point) in uint8, rounding half to even, in float as the
 * shared layer's decomposition computes it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"
#include "runtime/rt_vector.h"


/* Adding and taking away 1.5 * 2^23 rounds a float of magnitude below 2^22
 * to an integer, half to even (the default rounding mode), in vector
 * lanes where nearbyintf is a call. */
static const float ROUNDER = 12582912.0f;

/* lanes of a where m is set, else of b (a macro: vectors of 64 bytes
 * passed to a function change the ABI between the clones) */
#define PICK(m, a, b) ((v16f)(((m) & (v16i)(a)) | (~(m) & (v16i)(b))))

/* The smallest and largest of x [n] with 0, NaN when x holds a NaN. */
PER_CPU static void range_of(const float *x, int64_t n, float *lo_out, float *hi_out) {
  v16f lo = {0}, hi = {0};
  v16i nan = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v16f v;
    memcpy(&v, x + i, sizeof(v));
    lo = PICK(v < lo, v, lo);
    hi = PICK(v > hi, v, hi);
    nan |= v != v;
  }
  float l = 0, h = 0;
  int any_nan = 0;
  for (int k = 0; k < 16; k++) {
    l = lo[k] < l ? lo[k] : l, h = hi[k] > h ? hi[k] : h;
    any_nan |= nan[k] != 0;
  }
  for (; i < n; i++) {
    l = x[i] < l ? x[i] : l, h = x[i] > h ? x[i] : h;
    any_nan |= x[i] != x[i];
  }
  *lo_out = any_nan ? NAN : l, *hi_out = any_nan ? NAN : h;
}

/* out [i] = saturate(round(x [i] / scale) + zp) (|x / scale| <= 255 here:
 * the range holds every element; NaN gives 0). */
PER_CPU static void quantize(const float *x, int64_t n, float scale, float zp, uint8_t *out) {
  const v16f zero = {0}, top = zero + 255.0f;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v16f v;
    memcpy(&v, x + i, sizeof(v));
    v = (v / scale + ROUNDER) - ROUNDER + zp;
    v = PICK(v < top, v, top);
    v = PICK(v > zero, v, zero);
    v16u8 q = __builtin_convertvector(__builtin_convertvector(v, v16i), v16u8);
    memcpy(out + i, &q, sizeof(q));
  }
  for (; i < n; i++) {
    float v = (x[i] / scale + ROUNDER) - ROUNDER + zp;
    out[i] = (uint8_t)(v > 0 ? (v < 255 ? v : 255) : 0);
  }
}

/* Both passes in chunks of CHUNK elements split across the call's threads
 * (the range of each chunk, then their range: the same at any count). */
enum { CHUNK = 1 << 14 };

typedef struct quant_job {
  const float *x;
  int64_t n;
  float *lo, *hi; /* per chunk */
  float scale, zp;
  uint8_t *y;
} quant_job;

static void range_chunks(void *ctx, int64_t c0, int64_t c1) {
  quant_job *j = ctx;
  for (int64_t c = c0; c < c1; c++) {
    int64_t from = c * CHUNK, to = from + CHUNK < j->n ? from + CHUNK : j->n;
    range_of(j->x + from, to - from, &j->lo[c], &j->hi[c]);
  }
}

static void quantize_chunks(void *ctx, int64_t c0, int64_t c1) {
  quant_job *j = ctx;
  int64_t from = c0 * CHUNK, to = c1 * CHUNK < j->n ? c1 * CHUNK : j->n;
  quantize(j->x + from, to - from, j->scale, j->zp, j->y + from);
}

static void rt_dynamic_quantize(o2m_rt_unranked *x, o2m_rt_unranked *y, o2m_rt_unranked *scale_m,
                                o2m_rt_unranked *zp_m) {
  int64_t n = o2m_rt_count(x);
  if (o2m_rt_count(y) != n || o2m_rt_count(scale_m) != 1 || o2m_rt_count(zp_m) != 1 || !o2m_rt_row_major(y)) return;
  void *owned = NULL;
  const float *xp = o2m_rt_dense(x, 4, &owned);
  int64_t chunks = (n + CHUNK - 1) / CHUNK;
  float *ranges = malloc((size_t)(2 * chunks + 2) * sizeof(float));
  if ((!xp && n) || !ranges) {
    free(ranges);
    free(owned);
    return;
  }
  quant_job job = {xp, n, ranges, ranges + chunks, 0, 0, (uint8_t *)(intptr_t)y->desc[1] + y->desc[2]};
  o2m_rt_parallel_for(range_chunks, &job, 0, chunks, CHUNK / 4);
  float lo = 0, hi = 0;
  for (int64_t c = 0; c < chunks; c++) {
    if (job.lo[c] != job.lo[c] || job.hi[c] != job.hi[c]) lo = hi = NAN;
    if (lo == lo) lo = job.lo[c] < lo ? job.lo[c] : lo, hi = job.hi[c] > hi ? job.hi[c] : hi;
  }
  float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  float zp = -lo / scale;
  zp = nearbyintf(zp > 0 ? (zp < 255 ? zp : 255) : 0); /* NaN: 0 */
  job.scale = scale, job.zp = zp;
  o2m_rt_parallel_for(quantize_chunks, &job, 0, chunks, CHUNK / 2);
  *((float *)(intptr_t)scale_m->desc[1] + scale_m->desc[2]) = scale;
  *((uint8_t *)(intptr_t)zp_m->desc[1] + zp_m->desc[2]) = (uint8_t)zp;
  free(ranges);
  free(owned);
}

o2m_rt_symbol rt_dynquant_symbol(void) {
  return (o2m_rt_symbol){"_mlir_ciface_" O2M_DYNQUANT_CALL, (void *)(uintptr_t)rt_dynamic_quantize};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_dynamic_quantize_f32(o2m_rt_unranked *x, o2m_rt_unranked *y, o2m_rt_unranked *scale,
                                           o2m_rt_unranked *zp) {
  rt_dynamic_quantize(x, y, scale, zp);
}
#endif
