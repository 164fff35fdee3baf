/* decompose_selection.c - ops whose output places or picks elements by
 * indices, written in core ops for the targets that do not lower them
 * (TOSA, StableHLO: static shapes):
 *
 *   Compress(X, condition, axis?)  with the condition known at import (a
 *                                  constant, or an input given by
 *                                  `--inputs`): Gather(X, the positions
 *                                  where it holds, axis), X flattened
 *                                  without an axis; positions past the
 *                                  condition's end are dropped, as ONNX says
 *   MaxUnpool(X, I, output_shape?) ScatterElements of X's elements into
 *                                  zeros at I's flat positions in the
 *                                  size the pool's output inverts ((in - 1)
 *                                  * stride + kernel - pads: MaxPool's
 *                                  Indices count over N, C and those dims),
 *                                  then zeros after it up to output_shape
 *                                  (ONNX's reference places it at the start)
 */
#include <stdlib.h>

#include "infer/infer.h"
#include "transform/decompose_kit.h"

enum { MAX_RANK = 8 };

o2m_status o2m_decompose_compress(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *cond = o2m_rw_in(rw, 1);
  const o2m_tensor *c = cond ? cond->known : NULL;
  if (!c || !c->data) return o2m_rw_unsupported(rw, "its condition is not known at import");
  const o2m_attr *axis_attr = o2m_rw_attr(rw, "axis");
  int rank = xk_rank(x), axis = axis_attr ? xk_axis(axis_attr->i, rank) : 0;
  int64_t dims[MAX_RANK], length = 1;
  if (rank < 0 || rank > MAX_RANK || !XK_STATIC_DIMS(x, dims) || axis < 0)
    return o2m_rw_unsupported(rw, "its input's shape is not static");
  if (axis_attr) {
    length = dims[axis];
  } else {
    for (int k = 0; k < rank; k++) length *= dims[k];
  }
  double *kept = malloc(((size_t)c->count + 1) * sizeof(double));
  if (!kept) return o2m_rw_error(rw, "out of memory");
  int n = 0;
  for (int64_t i = 0; i < c->count && i < length; i++)
    if (o2m_tensor_get_int(c, i)) kept[n++] = (double)i;
  const int64_t flat[1] = {-1};
  o2m_value *in[2] = {axis_attr ? x : xk_reshape(rw, x, flat, 1), xk_const_1d(rw, O2M_DT_INT64, kept, n)};
  free(kept);
  o2m_attr at = o2m_rw_attr_int("axis", axis);
  return xk_bind(rw, 0, in[0] && in[1] ? o2m_rw_op(rw, "Gather", 2, in, &at, 1) : NULL);
}

o2m_status o2m_decompose_max_unpool(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *indices = o2m_rw_in(rw, 1), *y = o2m_rw_out(rw, 0);
  int64_t x_dims[MAX_RANK], dims[MAX_RANK], inferred[MAX_RANK], total = 1;
  int rank = y ? xk_rank(y) : -1;
  if (rank < 3 || rank > MAX_RANK || xk_rank(x) != rank || !XK_STATIC_DIMS(y, dims) || !XK_STATIC_DIMS(x, x_dims))
    return o2m_rw_unsupported(rw, "its output's shape is not known at import");
  const o2m_attr *kernel = o2m_rw_attr(rw, "kernel_shape"), *strides = o2m_rw_attr(rw, "strides");
  const o2m_attr *pads = o2m_rw_attr(rw, "pads");
  int s = rank - 2;
  if (!kernel || kernel->count != s || (strides && strides->count != s) || (pads && pads->count != 2 * s))
    return o2m_rw_unsupported(rw, "kernel_shape, strides or pads do not match the input's rank");
  /* the size the pool's indices count in; output_shape's extra elements follow it */
  inferred[0] = x_dims[0], inferred[1] = x_dims[1];
  for (int i = 0; i < s; i++)
    inferred[2 + i] = (x_dims[2 + i] - 1) * (strides ? strides->ints[i] : 1) + kernel->ints[i] -
                      (pads ? pads->ints[i] + pads->ints[s + i] : 0);
  for (int k = 0; k < rank; k++) total *= inferred[k];
  const int64_t flat[1] = {-1};
  o2m_value *zeros_in[2] = {xk_scalar_like(rw, x, 0.0), xk_const_1d(rw, O2M_DT_INT64, (double[]){(double)total}, 1)};
  o2m_value *in[3] = {zeros_in[0] && zeros_in[1] ? o2m_rw_op(rw, "Expand", 2, zeros_in, NULL, 0) : NULL,
                      xk_reshape(rw, xk_cast(rw, indices, O2M_DT_INT64), flat, 1), xk_reshape(rw, x, flat, 1)};
  if (!in[0] || !in[1] || !in[2]) return xk_failed(rw);
  o2m_attr at = o2m_rw_attr_int("axis", 0);
  o2m_value *placed = xk_reshape(rw, o2m_rw_op(rw, "ScatterElements", 3, in, &at, 1), inferred, rank);
  /* zeros after it up to output_shape (a smaller one keeps its start) */
  double grow[2 * MAX_RANK] = {0};
  int grows = 0;
  for (int k = 0; k < rank; k++) {
    grow[rank + k] = (double)(dims[k] > inferred[k] ? dims[k] - inferred[k] : 0);
    grows |= dims[k] > inferred[k];
  }
  if (grows && placed) {
    o2m_value *pad_in[2] = {placed, xk_const_1d(rw, O2M_DT_INT64, grow, 2 * rank)};
    placed = pad_in[1] ? o2m_rw_op(rw, "Pad", 2, pad_in, NULL, 0) : NULL;
  }
  for (int k = 0; k < rank && placed; k++)
    if (dims[k] < inferred[k]) placed = xk_slice(rw, placed, k, 0, dims[k]);
  return xk_bind(rw, 0, placed);
}
