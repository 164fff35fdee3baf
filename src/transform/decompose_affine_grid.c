/* decompose_affine_grid.c - AffineGrid into Range and broadcasting
 * arithmetic: grid[n, (d,) h, w, j] = theta[n, j, 0] x[w] + theta[n, j, 1]
 * y[h] (+ theta[n, j, 2] z[d]) + theta[n, j, last], with the normalised
 * coordinates of each spatial axis of length m: -1 + 2 i / (m - 1) with
 * align_corners, (2 i + 1) / m - 1 without. The spatial lengths come from
 * the `size` input, so they may be known only at run time.
 */
#include "transform/decompose_kit.h"

/* The coordinates of the spatial axis whose length is size[k], shaped to
 * broadcast at position `at` of the [N, spatial..., j] output (rank
 * `rank`), in x's element type. */
static o2m_value *coordinates(o2m_rewriter *rw, o2m_value *size, int k, int at, int rank,
                              int align, o2m_dtype f) {
  o2m_value *m = xk_op2(rw, "Gather", size, xk_scalar(rw, O2M_DT_INT64, k));
  o2m_value *i = xk_cast(rw, xk_iota(rw, m), f), *mf = xk_cast(rw, m, f);
  o2m_value *one = xk_scalar(rw, f, 1.0), *two = xk_scalar(rw, f, 2.0), *a;
  if (align)
    a = xk_op2(rw, "Sub", xk_op2(rw, "Div", xk_op2(rw, "Mul", i, two), xk_op2(rw, "Sub", mf, one)), one);
  else
    a = xk_op2(rw, "Sub", xk_op2(rw, "Div", xk_op2(rw, "Add", xk_op2(rw, "Mul", i, two), one), mf), one);
  int64_t shape[8];
  for (int d = 0; d < rank; d++) shape[d] = d == at ? -1 : 1;
  return xk_reshape(rw, a, shape, rank);
}

/* theta[:, :, column] as [N, 1, ..., 1, j] of rank `rank`. */
static o2m_value *theta_column(o2m_rewriter *rw, o2m_value *theta, int column, int rank) {
  o2m_value *in[2] = {theta, xk_scalar(rw, O2M_DT_INT64, column)};
  o2m_attr axis2 = o2m_rw_attr_int("axis", 2);
  o2m_value *col = in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis2, 1) : NULL; /* [N, j] */
  int64_t middle[6];
  for (int d = 0; d < rank - 2; d++) middle[d] = d + 1;
  return xk_unsqueeze(rw, col, middle, rank - 2);
}

o2m_status o2m_decompose_affine_grid(o2m_rewriter *rw) {
  o2m_value *theta = o2m_rw_in(rw, 0), *size = o2m_rw_in(rw, 1);
  const o2m_type *st = xk_type(size);
  int spatial = xk_rank(size) == 1 && st->dims[0].size >= 0 ? (int)st->dims[0].size - 2 : -1;
  o2m_dtype f = xk_elem(theta);
  if ((spatial != 2 && spatial != 3) || !o2m_dtype_is_float(f))
    return o2m_rw_unsupported(rw, "size must have 4 or 5 entries and theta a float type");
  int rank = spatial + 2, align = o2m_rw_attr_i(rw, "align_corners", 0) != 0;
  o2m_value *grid = theta_column(rw, theta, spatial, rank); /* the translation */
  for (int j = 0; j < spatial; j++) {
    /* coordinate j (x, y, z) runs along size[rank - 1 - j] at output position rank - 2 - j */
    o2m_value *c = coordinates(rw, size, rank - 1 - j, rank - 2 - j, rank, align, f);
    grid = xk_op2(rw, "Add", grid, xk_op2(rw, "Mul", theta_column(rw, theta, j, rank), c));
  }
  return xk_bind(rw, 0, grid);
}
