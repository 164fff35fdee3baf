/* decompose_pools.c - the global pools into reductions over the spatial
 * axes [2, rank) with kept dims: GlobalAveragePool -> ReduceMean,
 * GlobalMaxPool -> ReduceMax, GlobalLpPool -> ReduceL1/ReduceL2 for p 1
 * and 2, else (sum |x|^p)^(1/p). */
#include <string.h>

#include "transform/decompose_kit.h"

typedef struct global_pool {
  const char *op, *reduce;
} global_pool;

static const global_pool global_pools[] = {
    {"GlobalAveragePool", "ReduceMean"},
    {"GlobalMaxPool", "ReduceMax"},
};

enum { MAX_SPATIAL = 64 };

/* The spatial axes [2, rank) of input 0 into axes (MAX_SPATIAL entries);
 * their count, 0 when the rank is unknown, below 3 or too large. */
static int spatial_axes(o2m_rewriter *rw, int64_t *axes) {
  int rank = xk_rank(o2m_rw_in(rw, 0));
  if (rank < 3 || rank - 2 > MAX_SPATIAL) return 0;
  for (int a = 2; a < rank; a++) axes[a - 2] = a;
  return rank - 2;
}

o2m_status o2m_decompose_global_pool(o2m_rewriter *rw) {
  int64_t axes[MAX_SPATIAL];
  int n = spatial_axes(rw, axes);
  if (!n) return o2m_rw_unsupported(rw, "the input rank is unknown or below 3");
  for (size_t i = 0; i < sizeof(global_pools) / sizeof(global_pools[0]); i++)
    if (strcmp(global_pools[i].op, rw->node->op_type) == 0)
      return xk_bind(rw, 0, xk_reduce(rw, global_pools[i].reduce, o2m_rw_in(rw, 0), axes, n, 1));
  return o2m_rw_unsupported(rw, "not a global pool");
}

o2m_status o2m_decompose_global_lp_pool(o2m_rewriter *rw) {
  int64_t axes[MAX_SPATIAL];
  int n = spatial_axes(rw, axes);
  if (!n) return o2m_rw_unsupported(rw, "the input rank is unknown or below 3");
  double p = o2m_rw_attr_f(rw, "p", 2.0f);
  o2m_value *x = o2m_rw_in(rw, 0);
  if (p == 1.0 || p == 2.0)
    return xk_bind(rw, 0, xk_reduce(rw, p == 1.0 ? "ReduceL1" : "ReduceL2", x, axes, n, 1));
  o2m_value *powered = xk_op2(rw, "Pow", xk_op1(rw, "Abs", x), xk_scalar_like(rw, x, p));
  o2m_value *sum = xk_reduce(rw, "ReduceSum", powered, axes, n, 1);
  return xk_bind(rw, 0, xk_op2(rw, "Pow", sum, xk_scalar_like(rw, x, 1.0 / p)));
}
