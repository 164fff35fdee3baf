/* decompose_det.c - Det of matrices up to 5x5 in core ops, for the
 * targets that do not lower it (TOSA, StableHLO): the Leibniz sum over
 * the n! permutations p, det = sum of sign(p) * prod_i X[i, p(i)]. X
 * [..., n, n] is flattened to [..., n*n]; one Gather (constant positions
 * [n!, n]) picks each permutation's factors, ReduceProd multiplies them,
 * and the signs weight the ReduceSum. Larger matrices stay refused
 * (n! terms grow past what a sum of products should hold).
 */
#include <stdlib.h>

#include "infer/infer.h"
#include "transform/decompose_kit.h"

enum { MAX_N = 5, MAX_RANK = 8 };

/* Writes the permutations of 0..n-1 from position k on into rows of
 * `at` (row-major [n!, n], as flat positions i*n + p(i)) and their signs;
 * returns the row count. */
static int permutations(int *p, int k, int n, double sign, double *at, double *signs, int row) {
  if (k == n) {
    for (int i = 0; i < n; i++) at[row * n + i] = (double)(i * n + p[i]);
    signs[row] = sign;
    return row + 1;
  }
  for (int j = k; j < n; j++) {
    int t = p[k];
    p[k] = p[j], p[j] = t;
    row = permutations(p, k + 1, n, j == k ? sign : -sign, at, signs, row);
    t = p[k];
    p[k] = p[j], p[j] = t;
  }
  return row;
}

o2m_status o2m_decompose_det(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  int rank = xk_rank(x);
  int64_t dims[MAX_RANK];
  if (rank < 2 || rank > MAX_RANK || !XK_STATIC_DIMS(x, dims) || dims[rank - 1] != dims[rank - 2])
    return o2m_rw_unsupported(rw, "its input's shape is not static");
  int n = (int)dims[rank - 1];
  if (n < 1 || n > MAX_N) return o2m_rw_unsupported(rw, "%d x %d matrices (the decomposition takes up to 5 x 5)", n, n);
  int count = 1, p[MAX_N];
  for (int i = 2; i <= n; i++) count *= i;
  for (int i = 0; i < n; i++) p[i] = i;
  double *at = malloc((size_t)(count * n) * sizeof(double)), *signs = malloc((size_t)count * sizeof(double));
  if (!at || !signs) {
    free(at), free(signs);
    return o2m_rw_error(rw, "out of memory");
  }
  permutations(p, 0, n, 1.0, at, signs, 0);
  int64_t flat[MAX_RANK];
  for (int k = 0; k < rank - 2; k++) flat[k] = dims[k];
  flat[rank - 2] = (int64_t)n * n;
  const int64_t at_dims[2] = {count, n}, last[1] = {-1};
  o2m_value *in[2] = {xk_reshape(rw, x, flat, rank - 1), xk_const_nd(rw, O2M_DT_INT64, 2, at_dims, at)};
  o2m_value *sign = xk_const_1d(rw, xk_elem(x), signs, count);
  free(at), free(signs);
  o2m_attr axis = o2m_rw_attr_int("axis", -1);
  o2m_value *factors = in[0] && in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis, 1) : NULL; /* [..., n!, n] */
  o2m_value *terms = xk_reduce(rw, "ReduceProd", factors, last, 1, 0);
  return xk_bind(rw, 0, xk_reduce(rw, "ReduceSum", xk_op2(rw, "Mul", terms, sign), last, 1, 0));
}
