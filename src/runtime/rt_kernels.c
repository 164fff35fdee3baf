/* rt_kernels.c - the runtime's own C kernels generated code calls (the
 * Linalg emitter's O2M_JIT_KERNELS), for ops whose Linalg form is slow.
 *
 * Owns: TopK on float32 (O2M_TOPK_CALL): along `axis` of any rank and
 * strides, each slice's indices sorted by a comparison that orders as the
 * reference does (larger first, or smaller with largest = 0; NaN above
 * every number; ties by lower index), then the first K written out. n log n
 * a slice, where the generic Linalg form compares every pair.
 * NonMaxSuppression on float32 (O2M_NMS_CALL): per batch and class, the
 * candidates above the score threshold sorted by score (ties by lower
 * index), each kept unless it overlaps a kept one by IoU above the
 * threshold (the reference's suppress_by_iou), until max_output_boxes_per_class:
 * n log n + n x kept, where the Linalg form scans all boxes for each pick.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* What MLIR passes for a memref<*x...>: the rank and the ranked
 * descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}. */
typedef struct unranked {
  int64_t rank;
  int64_t *desc;
} unranked;

enum { MAX_RANK = 16 };

typedef struct slice {
  const float *x; /* element 0 of the slice */
  int64_t stride; /* along the axis */
  int largest;
} slice;

/* qsort has no user pointer: the slice being sorted, per thread */
static _Thread_local const slice *sorting;

static int nan_of(float v) { return v != v; }

/* a before b: NaN first when largest (last otherwise: NaN counts as the
 * largest value), then by value, then by index */
static int compare(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  float va = sorting->x[a * sorting->stride], vb = sorting->x[b * sorting->stride];
  int na = nan_of(va), nb = nan_of(vb);
  int order = 0;
  if (na || nb) order = na && nb ? 0 : na ? -1 : 1; /* NaN as the largest */
  else order = va > vb ? -1 : va < vb ? 1 : 0;
  if (!sorting->largest) order = -order;
  return order ? order : (a > b) - (a < b);
}

static void rt_topk_f32(unranked *xu, unranked *vu, unranked *iu, int64_t axis, int64_t largest) {
  int64_t rank = xu->rank;
  if (rank < 1 || rank > MAX_RANK || vu->rank != rank || iu->rank != rank || axis < 0 || axis >= rank) return;
  const int64_t *xd = xu->desc, *vd = vu->desc, *id = iu->desc;
  const int64_t *sizes = xd + 3, *xs = xd + 3 + rank, *out_sizes = vd + 3, *vs = vd + 3 + rank, *is = id + 3 + rank;
  const float *x = (const float *)(intptr_t)xd[1] + xd[2];
  float *values = (float *)(intptr_t)vd[1] + vd[2];
  int64_t *indices = (int64_t *)(intptr_t)id[1] + id[2];
  int64_t n = sizes[axis], k = out_sizes[axis], slices = 1;
  for (int64_t d = 0; d < rank; d++)
    if (d != axis) slices *= sizes[d];
  int64_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof(*order));
  if (!order || slices == 0) {
    free(order);
    return;
  }
  slice s = {NULL, xs[axis], largest != 0};
  const slice *saved = sorting;
  sorting = &s;
  for (int64_t r = 0; r < slices; r++) {
    /* the slice's position: r decomposed over the dims other than the axis */
    int64_t rest = r, xo = 0, vo = 0, io = 0;
    for (int64_t d = rank - 1; d >= 0; d--) {
      if (d == axis) continue;
      int64_t i = rest % sizes[d];
      rest /= sizes[d];
      xo += i * xs[d], vo += i * vs[d], io += i * is[d];
    }
    s.x = x + xo;
    for (int64_t j = 0; j < n; j++) order[j] = j;
    qsort(order, (size_t)n, sizeof(*order), compare);
    for (int64_t p = 0; p < k; p++) { /* K above n (not valid ONNX): zeros past the end */
      values[vo + p * vs[axis]] = p < n ? s.x[order[p] * s.stride] : 0.0f;
      indices[io + p * is[axis]] = p < n ? order[p] : 0;
    }
  }
  sorting = saved;
  free(order);
}

/* ---- NonMaxSuppression ---------------------------------------------------------- */

typedef struct box {
  float xlo, xhi, ylo, yhi;
} box;

/* Box j of batch b: corners in any order ([y1, x1, y2, x2]), or centre
 * and size ([xc, yc, w, h]) when center. */
static box box_at(const int64_t *d, int64_t b, int64_t j, int center) {
  const float *p = (const float *)(intptr_t)d[1] + d[2] + b * d[6] + j * d[7];
  float v[4];
  for (int k = 0; k < 4; k++) v[k] = p[k * d[8]];
  if (center)
    return (box){v[0] - v[2] / 2, v[0] + v[2] / 2, v[1] - v[3] / 2, v[1] + v[3] / 2};
  return (box){v[1] < v[3] ? v[1] : v[3], v[1] < v[3] ? v[3] : v[1], v[0] < v[2] ? v[0] : v[2],
               v[0] < v[2] ? v[2] : v[0]};
}

static float maxf(float a, float b) { return a > b ? a : b; }
static float minf(float a, float b) { return a < b ? a : b; }

/* The reference's suppress_by_iou: a positive overlap whose IoU is above iou. */
static int suppresses(const box *a, const box *b, float iou) {
  float ixlo = maxf(a->xlo, b->xlo), ixhi = minf(a->xhi, b->xhi);
  float iylo = maxf(a->ylo, b->ylo), iyhi = minf(a->yhi, b->yhi);
  float inter = (ixhi - ixlo) * (iyhi - iylo);
  float area_a = (a->xhi - a->xlo) * (a->yhi - a->ylo), area_b = (b->xhi - b->xlo) * (b->yhi - b->ylo);
  float uni = area_a + area_b - inter;
  return ixhi > ixlo && iyhi > iylo && inter > 0 && area_a > 0 && area_b > 0 && uni > 0 && inter / uni > iou;
}

/* by score, higher first, then by lower index (sorting: the class's scores) */
static _Thread_local const float *nms_scores;
static _Thread_local int64_t nms_stride;

static int by_score(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  float sa = nms_scores[a * nms_stride], sb = nms_scores[b * nms_stride];
  if (sa != sb) return sa > sb ? -1 : 1;
  return (a > b) - (a < b);
}

/* Writes the selected [batch, class, box] rows into out (room for every
 * box of every class), returns how many. */
static int64_t rt_nms_f32(unranked *boxes, unranked *scores, unranked *out, int64_t max_out, float iou, float thr,
                       int64_t has_thr, int64_t center) {
  if (boxes->rank != 3 || scores->rank != 3 || out->rank != 2 || max_out <= 0) return 0;
  const int64_t *bd = boxes->desc, *sd = scores->desc, *od = out->desc;
  int64_t n_batch = bd[3], n_box = bd[4], n_class = sd[4];
  int64_t *rows = (int64_t *)(intptr_t)od[1] + od[2], row_stride = od[5], col_stride = od[6];
  int64_t *order = malloc((size_t)(n_box > 0 ? n_box : 1) * sizeof(*order));
  box *kept = malloc((size_t)(n_box > 0 ? n_box : 1) * sizeof(*kept));
  int64_t count = 0;
  for (int64_t b = 0; order && kept && b < n_batch; b++)
    for (int64_t c = 0; c < n_class; c++) {
      const float *sc = (const float *)(intptr_t)sd[1] + sd[2] + b * sd[6] + c * sd[7];
      int64_t m = 0, n_kept = 0;
      for (int64_t j = 0; j < n_box; j++)
        if (!has_thr || sc[j * sd[8]] > thr) order[m++] = j;
      nms_scores = sc, nms_stride = sd[8];
      qsort(order, (size_t)m, sizeof(*order), by_score);
      for (int64_t t = 0; t < m && n_kept < max_out; t++) {
        box candidate = box_at(bd, b, order[t], center != 0);
        int drop = 0;
        for (int64_t k = 0; k < n_kept && !drop; k++) drop = suppresses(&candidate, &kept[k], iou);
        if (drop) continue;
        kept[n_kept++] = candidate;
        int64_t *row = rows + count++ * row_stride;
        row[0] = b, row[col_stride] = c, row[2 * col_stride] = order[t];
      }
    }
  free(order);
  free(kept);
  return count;
}

int rt_kernel_symbols(o2m_rt_symbol *out) {
  out[0] = (o2m_rt_symbol){"_mlir_ciface_" O2M_TOPK_CALL, (void *)(uintptr_t)rt_topk_f32};
  out[1] = (o2m_rt_symbol){"_mlir_ciface_" O2M_NMS_CALL, (void *)(uintptr_t)rt_nms_f32};
  return 2;
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the names the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_topk_f32(unranked *x, unranked *values, unranked *indices, int64_t axis, int64_t largest) {
  rt_topk_f32(x, values, indices, axis, largest);
}
int64_t _mlir_ciface_o2m_nms_f32(unranked *boxes, unranked *scores, unranked *out, int64_t max_out, float iou,
                                 float thr, int64_t has_thr, int64_t center) {
  return rt_nms_f32(boxes, scores, out, max_out, iou, thr, has_thr, center);
}
#endif
