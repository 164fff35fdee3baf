/* decompose_ml.c - the numeric ops of the ai.onnx.ml domain written in
 * core ops, for every target:
 *
 *   Binarizer(X)                 Where(X > threshold, 1, 0) in X's type (a NaN
 *                                compares false: 0)
 *   ArrayFeatureExtractor(X, Y)  Gather(X, Y flattened, axis -1): the same
 *                                elements of the last axis of every row; a 1-D
 *                                X gives [1, n]
 */
#include "transform/decompose_kit.h"

o2m_status o2m_decompose_binarizer(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_value *above = xk_op2(rw, "Greater", x, xk_scalar_like(rw, x, o2m_rw_attr_f(rw, "threshold", 0.0f)));
  return xk_bind(rw, 0, xk_where(rw, above, xk_scalar_like(rw, x, 1.0), xk_scalar_like(rw, x, 0.0)));
}

o2m_status o2m_decompose_array_feature_extractor(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  const int64_t flat[1] = {-1};
  o2m_value *in[2] = {x, xk_reshape(rw, xk_cast(rw, o2m_rw_in(rw, 1), O2M_DT_INT64), flat, 1)};
  o2m_attr axis = o2m_rw_attr_int("axis", -1);
  o2m_value *picked = in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis, 1) : NULL;
  if (xk_rank(x) == 1) {
    const int64_t row[2] = {1, -1};
    picked = xk_reshape(rw, picked, row, 2);
  }
  return xk_bind(rw, 0, picked);
}
