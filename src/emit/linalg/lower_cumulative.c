/* lower_cumulative.c - the Linalg lowerings of CumSum and CumProd.
 *
 * One linalg.generic with an extra reduction loop k over the scanned
 * axis: y[.., i, ..] = combine over k of x[.., k, ..] where k <= i
 * (k < i exclusive; k >= i / k > i reverse). That is O(n^2) along the
 * axis, but a single op with no loop-carried state, valid for dynamic
 * dims. The axis input must be known at import. */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"

enum { MAX_RANK = 63 };

typedef struct scan_step {
  int axis, rank; /* loop `rank` is k */
  int predicate;  /* i <pred> k selects the terms of y[i] */
  const char *combine;
  o2m_dtype dt;
  double identity;
} scan_step;

/* args: x at k, the accumulator */
static o2m_status scan_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const scan_step *st = user;
  MlirValue in_range = lw_cmpi(cx, st->predicate, lw_loop_index_i64(cx, st->axis), lw_loop_index_i64(cx, st->rank));
  MlirValue term = lw_select(cx, in_range, args[0], lw_const_scalar(cx, st->dt, st->identity));
  o2m_dtype dts[2] = {st->dt, st->dt};
  MlirValue pair[2] = {args[1], term};
  yields[0] = lw_scalar_op(cx, st->combine, dts, pair);
  return lw_value_status(cx, yields[0]);
}

/* i <pred> k, indexed [reverse][exclusive] */
static const int scan_predicates[2][2] = {{LW_I_SGE, LW_I_SGT}, {LW_I_SLE, LW_I_SLT}};

static o2m_status lower_scan(lw_ctx *cx, const char *combine, double identity) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_unsupported(cx, "input is missing or not a tensor");
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(x));
  int64_t *axis_value = NULL;
  if (lw_in_known_ints(cx, 1, &axis_value) != 1) return lw_unsupported(cx, "an axis that is not known at import time");
  int64_t axis = axis_value[0] < 0 ? axis_value[0] + rank : axis_value[0];
  if (axis < 0 || axis >= rank) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)axis_value[0], rank);
  if (rank > MAX_RANK) return lw_unsupported(cx, "rank above %d", MAX_RANK);
  int reverse = lw_attr_int(cx, "reverse", 0) != 0, exclusive = lw_attr_int(cx, "exclusive", 0) != 0;
  scan_step st = {(int)axis, rank, scan_predicates[reverse][exclusive], combine, lw_in_type(cx, 0)->elem, identity};
  MlirType elem = lw_elem_type(cx, st.dt);
  if (mlirTypeIsNull(elem)) return lw_unsupported(cx, "dtype %s is not lowered", o2m_dtype_name(st.dt));
  int in_exprs[MAX_RANK];
  MlirValue dims[MAX_RANK];
  for (int d = 0; d < rank; d++) {
    in_exprs[d] = d == axis ? rank : d;
    dims[d] = lw_dim(cx, x, d);
  }
  MlirValue init = lw_filled(cx, mlirValueGetType(x), dims, lw_const_scalar(cx, st.dt, identity));
  MlirAttribute in_map = lw_affine_map(cx, rank + 1, rank, in_exprs);
  int out_exprs[MAX_RANK];
  for (int d = 0; d < rank; d++) out_exprs[d] = d;
  MlirAttribute out_map = lw_affine_map(cx, rank + 1, rank, out_exprs);
  char iterators[MAX_RANK + 2];
  memset(iterators, 'p', (size_t)rank);
  iterators[rank] = 'r';
  iterators[rank + 1] = 0;
  lw_generic_spec spec = {rank + 1, iterators, 1, 1, &x, &in_map, &init, &out_map, scan_body, &st};
  MlirValue y;
  o2m_status s = lw_generic(cx, &spec, &y);
  return s ? s : lw_set_out(cx, 0, y);
}

o2m_status lw_lower_cumsum(lw_ctx *cx) { return lower_scan(cx, "Add", 0); }
o2m_status lw_lower_cumprod(lw_ctx *cx) { return lower_scan(cx, "Mul", 1); }
