/* decompose_gemm.c - Gemm into the core ops MatMul, Transpose, Mul, Add:
 * Y = alpha * op(A) @ op(B) + beta * C, op = transpose when transA/transB.
 * C is optional since 11 and broadcasts to [M, N] (numpy rules cover both
 * the unidirectional broadcast of 7+ and the `broadcast` attribute of
 * 1..6, which only allowed shapes numpy also accepts). */
#include <math.h>

#include "transform/decompose_kit.h"

/* x transposed when `flag`, else x. */
static o2m_value *maybe_transpose(o2m_rewriter *rw, o2m_value *x, int64_t flag) {
  static const int64_t swap[2] = {1, 0};
  return flag ? xk_transpose(rw, x, swap, 2) : x;
}

/* x * factor, skipping a factor of 1. */
static o2m_value *scaled(o2m_rewriter *rw, o2m_value *x, double factor) {
  return factor == 1.0 ? x : xk_op2(rw, "Mul", x, xk_scalar_like(rw, x, factor));
}

o2m_status o2m_decompose_gemm(o2m_rewriter *rw) {
  o2m_value *a = o2m_rw_in(rw, 0), *b = o2m_rw_in(rw, 1), *c = o2m_rw_in(rw, 2);
  double alpha = o2m_rw_attr_f(rw, "alpha", 1.0f), beta = o2m_rw_attr_f(rw, "beta", 1.0f);
  o2m_dtype elem = xk_elem(a);
  if (!elem) return o2m_rw_unsupported(rw, "the element type of A is unknown");
  if (!o2m_dtype_is_float(elem) && (alpha != floor(alpha) || beta != floor(beta)))
    return o2m_rw_unsupported(rw, "fractional alpha or beta on integers");
  o2m_value *ab = xk_op2(rw, "MatMul", maybe_transpose(rw, a, o2m_rw_attr_i(rw, "transA", 0)),
                         maybe_transpose(rw, b, o2m_rw_attr_i(rw, "transB", 0)));
  o2m_value *y = scaled(rw, ab, alpha);
  if (c && beta != 0.0) y = xk_op2(rw, "Add", y, scaled(rw, c, beta));
  return xk_bind(rw, 0, y);
}
