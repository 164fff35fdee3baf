/* rt_nbits.c - onnxruntime's MatMulNBits on float32, reading the packed
 * weights where they lie (rt_abi.h, O2M_MATMUL_NBITS_CALL).
 *
 * Owns: Y [..., N] = A [..., K] W^T (+ bias), W [N, K] given as B [N,
 * blocks, block_size * bits / 8]: 2-, 4- or 8-bit values packed low bits
 * first, each block of block_size along K with a float scale s and a zero
 * point z (packed uint8, float, or 2^(bits-1) when absent), w = (q - z) s;
 * with g_idx, k's scale and zero point are those of block g_idx [k] (such
 * calls take the tiles, whatever their rows).
 * No float copy of the whole matrix is ever made:
 *   a few rows (decode): per column and block, the dot product of the
 *     packed values with A's block, scaled once: s (q . a - z sum(a)); A's
 *     row is first split into one plane per value of a byte, so that a
 *     byte's values meet their A elements in vector lanes;
 *   more rows (prefill): columns dequantized a tile at a time (about 1 MiB
 *     of floats) and the tile's product through o2m_rt_gemm (BLAS).
 * Both split their columns across the call's threads (o2m_rt_parallel_for).
 * The scales, float zero points and bias may lie at any address (the JIT
 * passes them where the model's mapping holds them, O2M_WEIGHT_ANY_ALIGN_ATTR):
 * they are read through rt_ufloat.
 * The vector loops are GCC vector extensions, built for AVX-512, AVX2 and
 * the baseline and chosen by the CPU at load (target_clones) on x86-64.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"
#include "runtime/rt_vector.h"

enum { MATVEC_ROWS = 4, TILE_FLOATS = 1 << 18 };

/* A float at any address. */
typedef float rt_ufloat __attribute__((aligned(1)));


/* What the call describes (flags: which optional inputs are there). */
enum { HAS_ZP_PACKED = 1, HAS_ZP_FLOAT = 2, HAS_BIAS = 4, HAS_G_IDX = 8 };

typedef struct nbits_weights {
  const uint8_t *b;         /* [n, blocks * blob] */
  const rt_ufloat *scales;   /* [n, blocks] */
  const uint8_t *zp_packed;  /* [n, zp_row], or NULL */
  const rt_ufloat *zp_float; /* [n, blocks], or NULL */
  const rt_ufloat *bias;     /* [n], or NULL */
  const int32_t *g_idx;      /* [k]: each k's block of scales and zero points, or NULL (k / block) */
  int64_t k, n, blocks, block, bits, blob, zp_row;
} nbits_weights;

/* ---- the operands ------------------------------------------------------------- */

/* The zero point of column c's block j. */
static inline __attribute__((always_inline)) float zero_at(const nbits_weights *w, int64_t c, int64_t j) {
  if (w->zp_float) return w->zp_float[c * w->blocks + j];
  if (!w->zp_packed) return (float)(1 << (w->bits - 1));
  int64_t bit = j * w->bits;
  return (float)((w->zp_packed[c * w->zp_row + bit / 8] >> (bit % 8)) & ((1 << w->bits) - 1));
}

/* ---- a few rows: the packed dot products -------------------------------------- */

/* A's row a [k] as planes: plane t [i] = a [i * per + t] (zero past k), per
 * = 8 / bits values a byte, so byte i's value t meets plane t [i]; and the
 * sum of a over each block. */
static void split_row(const nbits_weights *w, const float *a, float *planes, float *block_sums) {
  int64_t per = 8 / w->bits, bytes = w->blocks * w->blob;
  for (int64_t t = 0; t < per; t++)
    for (int64_t i = 0; i < bytes; i++) {
      int64_t k = i * per + t;
      planes[t * bytes + i] = k < w->k ? a[k] : 0.0f;
    }
  for (int64_t j = 0; j < w->blocks; j++) {
    float sum = 0;
    for (int64_t k = j * w->block; k < (j + 1) * w->block && k < w->k; k++) sum += a[k];
    block_sums[j] = sum;
  }
}

static float horizontal_sum(const v16f *v) {
  float s = 0;
  for (int i = 0; i < 16; i++) s += (*v)[i];
  return s;
}

/* acc += (q . a) s over a block of `blob` bytes (a multiple of 16) at row,
 * the planes at the block's first byte; bits a constant once inlined. */
static inline __attribute__((always_inline)) void block_dot(v16f *acc, float s, const uint8_t *row,
                                                           const float *planes, int64_t plane_len, int64_t blob,
                                                           const int bits) {
  const int per = 8 / bits;
  const v16u8 mask = (v16u8){0} + (uint8_t)((1 << bits) - 1);
  v16f d = {0};
  for (int64_t i = 0; i < blob; i += 16) {
    v16u8 x;
    memcpy(&x, row + i, sizeof(x));
    for (int t = 0; t < per; t++) {
      v16f a;
      memcpy(&a, planes + t * plane_len + i, sizeof(a));
      v16u8 q = bits == 8 ? x : (x >> (uint8_t)(t * bits)) & mask;
      /* through int32: GCC widens bytes to floats one at a time */
      d += __builtin_convertvector(__builtin_convertvector(q, v16i), v16f) * a;
    }
  }
  *acc += d * s;
}

/* y [c] for columns [c0, c1) of one row, blocks of 16-byte multiples. */
static inline __attribute__((always_inline)) void columns_vector(const nbits_weights *w, const float *planes,
                                                                const float *block_sums, int64_t c0, int64_t c1,
                                                                float *y, const int bits) {
  int64_t plane_len = w->blocks * w->blob;
  for (int64_t c = c0; c < c1; c++) {
    const uint8_t *row = w->b + c * plane_len;
    const rt_ufloat *s = w->scales + c * w->blocks;
    v16f acc = {0};
    float shift = 0;
    for (int64_t j = 0; j < w->blocks; j++) {
      block_dot(&acc, s[j], row + j * w->blob, planes + j * w->blob, plane_len, w->blob, bits);
      shift += s[j] * zero_at(w, c, j) * block_sums[j];
    }
    y[c] = horizontal_sum(&acc) - shift;
  }
}

/* The same one value at a time, for any block size. */
static void columns_scalar(const nbits_weights *w, const float *planes, const float *block_sums, int64_t c0,
                           int64_t c1, float *y) {
  int64_t plane_len = w->blocks * w->blob, per = 8 / w->bits, mask = (1 << w->bits) - 1;
  for (int64_t c = c0; c < c1; c++) {
    const uint8_t *row = w->b + c * plane_len;
    float total = 0;
    for (int64_t j = 0; j < w->blocks; j++) {
      float d = 0;
      for (int64_t i = j * w->blob; i < (j + 1) * w->blob; i++)
        for (int64_t t = 0; t < per; t++) d += (float)((row[i] >> (t * w->bits)) & mask) * planes[t * plane_len + i];
      float s = w->scales[c * w->blocks + j];
      total += s * d - s * zero_at(w, c, j) * block_sums[j];
    }
    y[c] = total;
  }
}

PER_CPU static void columns_of_row(const nbits_weights *w, const float *planes, const float *block_sums, int64_t c0,
                                   int64_t c1, float *y) {
  if (w->blob % 16) {
    columns_scalar(w, planes, block_sums, c0, c1, y);
    return;
  }
  switch (w->bits) {
  case 2: columns_vector(w, planes, block_sums, c0, c1, y, 2); break;
  case 4: columns_vector(w, planes, block_sums, c0, c1, y, 4); break;
  default: columns_vector(w, planes, block_sums, c0, c1, y, 8); break;
  }
}

typedef struct row_job {
  const nbits_weights *w;
  const float *planes, *block_sums;
  float *y;
} row_job;

static void row_columns(void *ctx, int64_t c0, int64_t c1) {
  const row_job *job = ctx;
  columns_of_row(job->w, job->planes, job->block_sums, c0, c1, job->y);
}

static int rows_by_dot(const nbits_weights *w, const float *a, int64_t m, float *y) {
  int64_t bytes = w->blocks * w->blob, per = 8 / w->bits;
  float *planes = o2m_rt_aligned_alloc(64, (size_t)(per * bytes + w->blocks + 16) * sizeof(float));
  if (!planes) return 0;
  float *block_sums = planes + per * bytes;
  for (int64_t r = 0; r < m; r++) {
    split_row(w, a + r * w->k, planes, block_sums);
    row_job job = {w, planes, block_sums, y + r * w->n};
    o2m_rt_parallel_for(row_columns, &job, 0, w->n, w->k);
  }
  o2m_rt_free(planes);
  return 1;
}

/* ---- more rows: tiles of dequantized columns ---------------------------------- */

/* out [k] = (q - z) s for one column's packed row, in k's order, a block at
 * a time; bits a constant once inlined. */
static inline __attribute__((always_inline)) void dequantize_row(const nbits_weights *w, int64_t c,
                                                                const uint8_t *row, float *out, const int bits) {
  const int per = 8 / bits, mask = (1 << bits) - 1;
  for (int64_t j = 0; j < w->blocks; j++) {
    float s = w->scales[c * w->blocks + j], shift = zero_at(w, c, j) * s;
    int64_t first = j * w->block, bytes = w->blob;
    if (first + w->block > w->k) bytes = (w->k - first + per - 1) / per; /* the last block, partial */
    const uint8_t *q = row + j * w->blob;
    float *o = out + first;
    if (first + bytes * per <= w->k) {
      for (int64_t i = 0; i < bytes; i++)
        for (int t = 0; t < per; t++) o[i * per + t] = (float)((q[i] >> (t * bits)) & mask) * s - shift;
    } else {
      for (int64_t k = 0; first + k < w->k; k++) o[k] = (float)((q[k / per] >> ((k % per) * bits)) & mask) * s - shift;
    }
  }
}

/* The same with each k's scale and zero point those of block g_idx [k]
 * (the packed values stay in blocks of k / block). */
static void dequantize_row_groups(const nbits_weights *w, int64_t c, const uint8_t *row, float *out) {
  int64_t per = 8 / w->bits, mask = (1 << w->bits) - 1;
  for (int64_t k = 0; k < w->k; k++) {
    int64_t at = k % w->block, g = w->g_idx[k];
    int64_t q = (row[k / w->block * w->blob + at / per] >> (at % per * w->bits)) & mask;
    float s = w->scales[c * w->blocks + g];
    out[k] = (float)q * s - zero_at(w, c, g) * s;
  }
}

/* Lanes of two vectors x, y (0..15 of x, 16..31 of y) for one round of
 * transpose16, bit b: the pair's first row keeps its lanes whose bit b is
 * 0 and takes the other row's for the rest; the second the converse. */
#define PAIR_FIRST_1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define PAIR_SECOND_1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#define PAIR_FIRST_2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define PAIR_SECOND_2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define PAIR_FIRST_4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define PAIR_SECOND_4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define PAIR_FIRST_8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define PAIR_SECOND_8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define TRANSPOSE_ROUND(r, b)                                                  \
  for (int i = 0; i < 16; i++) {                                               \
    if (i & b) continue;                                                       \
    v16f x = r[i], y = r[i + b];                                               \
    r[i] = __builtin_shufflevector(x, y, PAIR_FIRST_##b);                      \
    r[i + b] = __builtin_shufflevector(x, y, PAIR_SECOND_##b);                 \
  }

/* The 16 x 16 floats r [i] [j] as r [j] [i]: four rounds, each swapping
 * one bit of the row index with the same bit of the column index. */
static inline __attribute__((always_inline)) void transpose16(v16f *r) {
#pragma GCC unroll 16
  TRANSPOSE_ROUND(r, 1)
#pragma GCC unroll 16
  TRANSPOSE_ROUND(r, 2)
#pragma GCC unroll 16
  TRANSPOSE_ROUND(r, 4)
#pragma GCC unroll 16
  TRANSPOSE_ROUND(r, 8)
}

/* tile [p, c - c0] (row stride ld) = w [c, k] for columns [c0, c1), p the
 * position of k in chunk order: within each 16 bytes of a packed row (16 *
 * per values) value t of byte i at 16 t + i, so that a chunk's values
 * unpack as per plain vectors (A's rows are permuted alike, chunk_order).
 * Blocks of 16-byte multiples. 16 columns at a time, turned into rows of
 * the tile by transpose16: the tile is B [K, N] for the product. */
static inline __attribute__((always_inline)) void dequantize_chunks(const nbits_weights *w, int64_t c0, int64_t c1,
                                                                   float *tile, int64_t ld, const int bits) {
  const int per = 8 / bits;
  const v16u8 mask = (v16u8){0} + (uint8_t)((1 << bits) - 1);
  int64_t row_bytes = w->blocks * w->blob;
  for (int64_t g = c0; g < c1; g += 16) {
    int lanes = c1 - g < 16 ? (int)(c1 - g) : 16;
    for (int64_t j = 0; j < w->blocks; j++) {
      float scale[16], shift[16];
      for (int q = 0; q < lanes; q++) {
        scale[q] = w->scales[(g + q) * w->blocks + j];
        shift[q] = zero_at(w, g + q, j) * scale[q];
      }
      for (int64_t i = j * w->blob; i < (j + 1) * w->blob; i += 16)
        for (int t = 0; t < per; t++) {
          v16f v[16];
#pragma GCC unroll 16
          for (int q = 0; q < 16; q++) {
            v16u8 x = {0};
            if (q < lanes) memcpy(&x, w->b + (g + q) * row_bytes + i, sizeof(x));
            v16u8 u = bits == 8 ? x : (x >> (uint8_t)(t * bits)) & mask;
            v[q] = q < lanes ? __builtin_convertvector(__builtin_convertvector(u, v16i), v16f) * scale[q] - shift[q]
                             : (v16f){0};
          }
          transpose16(v);
          float *out = tile + (i * per + 16 * t) * ld + (g - c0);
#pragma GCC unroll 16
          for (int q = 0; q < 16; q++) memcpy(out + q * ld, &v[q], sizeof(v[q]));
        }
    }
  }
}

/* The tile of columns [c0, c1): W's rows [c - c0, k] in k's order (row
 * stride ld), or with chunks B [p, c - c0] (dequantize_chunks). */
PER_CPU static void dequantize_columns(const nbits_weights *w, int64_t c0, int64_t c1, int chunks, float *tile,
                                       int64_t ld) {
  if (chunks) {
    switch (w->bits) {
    case 2: dequantize_chunks(w, c0, c1, tile, ld, 2); break;
    case 4: dequantize_chunks(w, c0, c1, tile, ld, 4); break;
    default: dequantize_chunks(w, c0, c1, tile, ld, 8); break;
    }
    return;
  }
  int64_t row_bytes = w->blocks * w->blob;
  for (int64_t c = c0; c < c1; c++) {
    const uint8_t *row = w->b + c * row_bytes;
    float *out = tile + (c - c0) * ld;
    if (w->g_idx) {
      dequantize_row_groups(w, c, row, out);
      continue;
    }
    switch (w->bits) {
    case 2: dequantize_row(w, c, row, out, 2); break;
    case 4: dequantize_row(w, c, row, out, 4); break;
    default: dequantize_row(w, c, row, out, 8); break;
    }
  }
}

/* dequantize_columns for groups [g0, g1) of 16 columns of the tile of
 * columns [c0, c1), each group into its own columns of the tile. */
typedef struct tile_job {
  const nbits_weights *w;
  int64_t c0, c1;
  int chunks;
  float *tile;
  int64_t ld;
} tile_job;

static void tile_columns(void *ctx, int64_t g0, int64_t g1) {
  const tile_job *job = ctx;
  int64_t from = job->c0 + 16 * g0, to = job->c0 + 16 * g1 < job->c1 ? job->c0 + 16 * g1 : job->c1;
  float *at = job->tile + (from - job->c0) * (job->chunks ? 1 : job->ld);
  dequantize_columns(job->w, from, to, job->chunks, at, job->ld);
}

/* A's rows [m, k] in chunk order, zero past k: [m, blocks * block_size]. */
static void chunk_order(const nbits_weights *w, const float *a, int64_t m, float *out) {
  int64_t per = 8 / w->bits, len = w->blocks * w->block;
  for (int64_t r = 0; r < m; r++)
    for (int64_t k0 = 0; k0 < len; k0 += 16 * per)
      for (int64_t t = 0; t < per; t++)
        for (int64_t i = 0; i < 16; i++) {
          int64_t k = k0 + i * per + t;
          out[r * len + k0 + 16 * t + i] = k < w->k ? a[r * w->k + k] : 0.0f;
        }
}

static int rows_by_tiles(const nbits_weights *w, const float *a, int64_t m, float *y) {
  int chunks = w->blob % 16 == 0 && !w->g_idx;
  int64_t len = chunks ? w->blocks * w->block : w->k;
  int64_t cols = (TILE_FLOATS / len + 15) / 16 * 16;
  if (cols > (w->n + 15) / 16 * 16) cols = (w->n + 15) / 16 * 16;
  float *tile = o2m_rt_aligned_alloc(64, (size_t)(cols * len + (chunks ? m * len : 0)) * sizeof(float));
  if (!tile) return 0;
  if (chunks) {
    float *a_chunks = tile + cols * len;
    chunk_order(w, a, m, a_chunks);
    a = a_chunks;
  }
  memset(y, 0, (size_t)(m * w->n) * sizeof(float));
  /* B: the tile as [len, cols] with chunks, else W's rows [cols, len] read
   * transposed */
  const int64_t sa[2] = {len, 1}, sc[2] = {w->n, 1};
  const int64_t sb[2] = {chunks ? cols : 1, chunks ? 1 : len};
  for (int64_t c0 = 0; c0 < w->n; c0 += cols) {
    int64_t c1 = c0 + cols < w->n ? c0 + cols : w->n;
    tile_job job = {w, c0, c1, chunks, tile, chunks ? cols : len};
    o2m_rt_parallel_for(tile_columns, &job, 0, (c1 - c0 + 15) / 16, 16 * len);
    /* oneDNN's sgemm where it is: it picks its kernels by the CPU's
     * features, OpenBLAS by its model name or OPENBLAS_CORETYPE */
    if (!rt_dnnl_gemm(m, c1 - c0, len, a, sa, tile, sb, 1.0f, y + c0, sc))
      o2m_rt_gemm(m, c1 - c0, len, a, sa, tile, sb, 1.0f, y + c0, sc);
  }
  o2m_rt_free(tile);
  return 1;
}

/* ---- the call ------------------------------------------------------------------ */

/* Y = A W^T + bias. Absent optional operands are passed as any buffer and
 * flagged off. The sizes were checked when the call was written; a call
 * whose buffers disagree with them, or whose Y is not a row-major buffer,
 * writes nothing (the lowering never makes one). */
/* g_idx [k] when every entry is a block, NULL when it is k's own (k /
 * block: the fast paths) or out of range (nothing written). */
static const int32_t *groups_of(o2m_rt_unranked *g_m, const nbits_weights *w, int *bad, void **owned) {
  const int32_t *g = o2m_rt_count(g_m) == w->k ? o2m_rt_dense(g_m, 4, owned) : NULL;
  int trivial = 1;
  *bad = !g;
  for (int64_t k = 0; g && k < w->k; k++) {
    if (g[k] < 0 || g[k] >= w->blocks) *bad = 1;
    trivial &= g[k] == k / w->block;
  }
  return *bad || trivial ? NULL : g;
}

static void rt_matmul_nbits(o2m_rt_unranked *a_m, o2m_rt_unranked *b_m, o2m_rt_unranked *s_m,
                            o2m_rt_unranked *zp_packed_m, o2m_rt_unranked *zp_float_m, o2m_rt_unranked *bias_m,
                            o2m_rt_unranked *g_idx_m, o2m_rt_unranked *y_m, int64_t k, int64_t n, int64_t bits,
                            int64_t block, int64_t flags) {
  nbits_weights w = {.k = k, .n = n, .bits = bits, .block = block};
  if (k <= 0 || n <= 0 || (bits != 2 && bits != 4 && bits != 8) || block < 16 || (block & (block - 1))) return;
  w.blocks = (k + block - 1) / block;
  w.blob = block * bits / 8;
  w.zp_row = (w.blocks * bits + 7) / 8;
  int64_t a_count = o2m_rt_count(a_m), y_count = o2m_rt_count(y_m);
  if (a_m->rank < 1 || a_m->desc[3 + a_m->rank - 1] != k || a_count / k * n != y_count ||
      o2m_rt_count(b_m) != n * w.blocks * w.blob || o2m_rt_count(s_m) != n * w.blocks ||
      ((flags & HAS_ZP_PACKED) && o2m_rt_count(zp_packed_m) != n * w.zp_row) ||
      ((flags & HAS_ZP_FLOAT) && o2m_rt_count(zp_float_m) != n * w.blocks) ||
      ((flags & HAS_BIAS) && o2m_rt_count(bias_m) != n) || !o2m_rt_row_major(y_m))
    return;
  int64_t m = a_count / k;
  void *owned[7] = {0};
  int bad_groups = 0;
  if (flags & HAS_G_IDX) w.g_idx = groups_of(g_idx_m, &w, &bad_groups, &owned[6]);
  const float *a_rows = o2m_rt_dense(a_m, 4, &owned[0]);
  w.b = o2m_rt_dense(b_m, 1, &owned[1]);
  w.scales = o2m_rt_dense(s_m, 4, &owned[2]);
  w.zp_packed = flags & HAS_ZP_PACKED ? o2m_rt_dense(zp_packed_m, 1, &owned[3]) : NULL;
  w.zp_float = flags & HAS_ZP_FLOAT ? o2m_rt_dense(zp_float_m, 4, &owned[4]) : NULL;
  w.bias = flags & HAS_BIAS ? o2m_rt_dense(bias_m, 4, &owned[5]) : NULL;
  float *out = (float *)(intptr_t)y_m->desc[1] + y_m->desc[2];
  int ok = !bad_groups && a_rows && w.b && w.scales && (!(flags & HAS_ZP_PACKED) || w.zp_packed) &&
           (!(flags & HAS_ZP_FLOAT) || w.zp_float) && (!(flags & HAS_BIAS) || w.bias);
  if (ok && m > 0)
    ok = m < MATVEC_ROWS && !w.g_idx ? rows_by_dot(&w, a_rows, m, out) : rows_by_tiles(&w, a_rows, m, out);
  if (ok && w.bias)
    for (int64_t r = 0; r < m; r++)
      for (int64_t c = 0; c < n; c++) out[r * n + c] += w.bias[c];
  for (int i = 0; i < 7; i++) free(owned[i]);
}

o2m_rt_symbol rt_nbits_symbol(void) {
  return (o2m_rt_symbol){"_mlir_ciface_" O2M_MATMUL_NBITS_CALL, (void *)(uintptr_t)rt_matmul_nbits};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_matmul_nbits_f32(o2m_rt_unranked *a, o2m_rt_unranked *b, o2m_rt_unranked *s,
                                       o2m_rt_unranked *zp_packed, o2m_rt_unranked *zp_float, o2m_rt_unranked *bias,
                                       o2m_rt_unranked *g_idx, o2m_rt_unranked *y, int64_t k, int64_t n, int64_t bits,
                                       int64_t block, int64_t flags) {
  rt_matmul_nbits(a, b, s, zp_packed, zp_float, bias, g_idx, y, k, n, bits, block, flags);
}
#endif
