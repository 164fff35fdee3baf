/* exec_kernels.c - the executor's own C kernels the JIT's code calls
 * (emit.h, O2M_JIT_KERNELS), for ops whose Linalg form is slow.
 *
 * Owns: TopK on float32 (O2M_TOPK_CALL): along `axis` of any rank and
 * strides, each slice's indices sorted by a comparison that orders as the
 * reference does (larger first, or smaller with largest = 0; NaN above
 * every number; ties by lower index), then the first K written out. n log n
 * a slice, where the generic Linalg form compares every pair.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emit/emit.h"
#include "exec/exec_internal.h"

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

static void topk_f32(unranked *xu, unranked *vu, unranked *iu, int64_t axis, int64_t largest) {
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

int exec_kernel_symbols(exec_symbol *out) {
  out[0] = (exec_symbol){"_mlir_ciface_" O2M_TOPK_CALL, (void *)(uintptr_t)topk_f32};
  return 1;
}
