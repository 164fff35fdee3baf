/* lower_det.c - Linalg lowering of Det (opset 11; row in lower_nn.def):
 * the determinant of every [M, M] matrix of a float input [..., M, M].
 *
 * One scf.for nest over the batch dims carries the output tensor; per
 * matrix, a linalg.generic copies it into an f64 working tensor, and LU
 * decomposition with partial pivoting (as LAPACK's getrf, which numpy's
 * reference np.linalg.det uses) runs in scf.for loops carrying the
 * working tensor and the determinant: for each column k the row with the
 * largest |a[i][k]| (i >= k) is swapped in (negating the determinant),
 * the pivot multiplies the determinant and the rows below are
 * eliminated. A zero pivot gives 0 (its elimination is skipped). The
 * determinant converts back to the input dtype.
 */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_window.h"

enum { DET_MAX_CARRIED = 4 };

static MlirValue bin(lw_ctx *cx, const char *name, MlirValue a, MlirValue b) {
  MlirValue ops[2] = {a, b};
  return lw_op1(cx, name, 2, ops, mlirValueGetType(a), NULL);
}

static MlirValue at(lw_ctx *cx, MlirValue m, MlirValue i, MlirValue j) {
  MlirValue idx[2] = {i, j};
  return lw_extract(cx, m, idx);
}

static MlirValue put(lw_ctx *cx, MlirValue v, MlirValue m, MlirValue i, MlirValue j) {
  MlirValue ops[4] = {v, m, i, j};
  return lw_op1(cx, "tensor.insert", 4, ops, mlirValueGetType(m), NULL);
}

typedef struct det_plan {
  MlirValue x;
  int batch;
  int64_t m;
  o2m_dtype dtype;
  MlirValue ivs[LW_MAX_RANK];
} det_plan;

static o2m_status copy_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                            void *user) {
  (void)args;
  const det_plan *p = user;
  MlirValue full[LW_MAX_RANK];
  for (int k = 0; k < p->batch; k++) full[k] = p->ivs[k];
  full[p->batch] = idx[0], full[p->batch + 1] = idx[1];
  *out = lw_scalar_cast(cx, lw_extract(cx, p->x, full), p->dtype, O2M_DT_DOUBLE);
  return lw_value_status(cx, *out);
}

static MlirValue absf(lw_ctx *cx, MlirValue v) {
  return lw_op1(cx, "math.absf", 1, &v, mlirValueGetType(v), NULL);
}

/* The determinant (f64 scalar) of the matrix at p->ivs. */
static o2m_status det_of(lw_ctx *cx, det_plan *p, MlirValue *det) {
  MlirType f64 = lw_elem_type(cx, O2M_DT_DOUBLE);
  int64_t mm[2] = {p->m, p->m};
  lw_ix dims[2] = {lw_ix_c(p->m), lw_ix_c(p->m)};
  MlirValue a;
  o2m_status s = lw_index_generic(cx, lw_tensor_type_of(cx, O2M_DT_DOUBLE, 2, mm), dims, 0, NULL,
                                  NULL, copy_body, p, &a);
  if (s) return s;
  MlirValue zero_ix = lw_const_index(cx, 0), one_ix = lw_const_index(cx, 1);
  MlirValue m_ix = lw_const_index(cx, p->m);
  lw_for_loop lk, lp, ls, li, lj;
  MlirValue k, i, j, init[DET_MAX_CARRIED], car[DET_MAX_CARRIED], next[DET_MAX_CARRIED];
  MlirValue res[DET_MAX_CARRIED];
  init[0] = a, init[1] = lw_scalar_const(cx, f64, 1.0);
  if ((s = lw_for_begin(cx, &lk, zero_ix, m_ix, 2, init, &k, car))) return s;
  MlirValue A = car[0], d = car[1];
  MlirValue k1 = bin(cx, "arith.addi", k, one_ix);
  /* the pivot: the first row of largest |a[i][k]|, i >= k */
  init[0] = k, init[1] = absf(cx, at(cx, A, k, k));
  if ((s = lw_for_begin(cx, &lp, k1, m_ix, 2, init, &i, car))) return s;
  MlirValue v = absf(cx, at(cx, A, i, k));
  MlirValue better = lw_cmpf(cx, LW_F_OGT, v, car[1]);
  next[0] = lw_select(cx, better, i, car[0]);
  next[1] = lw_select(cx, better, v, car[1]);
  lw_for_end(cx, &lp, next, res);
  MlirValue piv_row = res[0];
  /* swap rows k and piv_row */
  init[0] = A;
  if ((s = lw_for_begin(cx, &ls, zero_ix, m_ix, 1, init, &j, car))) return s;
  MlirValue rk = at(cx, car[0], k, j), rp = at(cx, car[0], piv_row, j);
  MlirValue B = put(cx, rp, car[0], k, j);
  next[0] = put(cx, rk, B, piv_row, j);
  lw_for_end(cx, &ls, next, res);
  A = res[0];
  MlirValue swapped = lw_cmpi(cx, LW_I_NE, piv_row, k);
  d = lw_select(cx, swapped, lw_op1(cx, "arith.negf", 1, &d, f64, NULL), d);
  MlirValue piv = at(cx, A, k, k);
  d = bin(cx, "arith.mulf", d, piv);
  MlirValue is_zero = lw_cmpf(cx, LW_F_OEQ, piv, lw_scalar_const(cx, f64, 0.0));
  MlirValue safe = lw_select(cx, is_zero, lw_scalar_const(cx, f64, 1.0), piv);
  /* eliminate below the pivot */
  init[0] = A;
  if ((s = lw_for_begin(cx, &li, k1, m_ix, 1, init, &i, car))) return s;
  MlirValue f = bin(cx, "arith.divf", at(cx, car[0], i, k), safe);
  f = lw_select(cx, is_zero, lw_scalar_const(cx, f64, 0.0), f);
  init[0] = car[0];
  if ((s = lw_for_begin(cx, &lj, k1, m_ix, 1, init, &j, car + 1))) return s;
  MlirValue Aj = car[1];
  MlirValue upd = bin(cx, "arith.subf", at(cx, Aj, i, j), bin(cx, "arith.mulf", f, at(cx, Aj, k, j)));
  next[0] = put(cx, upd, Aj, i, j);
  lw_for_end(cx, &lj, next, res);
  next[0] = res[0];
  lw_for_end(cx, &li, next, res);
  next[0] = res[0], next[1] = d;
  lw_for_end(cx, &lk, next, res);
  *det = res[1];
  return lw_value_status(cx, *det);
}

/* Batch loops (levels >= p->batch: the matrix) carrying the output. */
static o2m_status batch_level(lw_ctx *cx, det_plan *p, int level, MlirValue out, MlirValue *result) {
  o2m_status s;
  if (level == p->batch) {
    MlirValue det;
    if ((s = det_of(cx, p, &det))) return s;
    MlirValue v = lw_scalar_cast(cx, det, O2M_DT_DOUBLE, p->dtype);
    if (mlirValueIsNull(v)) return lw_value_status(cx, v);
    MlirValue ops[2 + LW_MAX_RANK] = {v, out};
    for (int k = 0; k < p->batch; k++) ops[2 + k] = p->ivs[k];
    *result = lw_op1(cx, "tensor.insert", 2 + p->batch, ops, mlirValueGetType(out), NULL);
    return lw_value_status(cx, *result);
  }
  lw_for_loop l;
  MlirValue iv, car, next;
  if ((s = lw_for_begin(cx, &l, lw_const_index(cx, 0), lw_dim(cx, p->x, level), 1, &out, &iv, &car)))
    return s;
  p->ivs[level] = iv;
  if ((s = batch_level(cx, p, level + 1, car, &next))) {
    cx->block = l.saved;
    return s;
  }
  lw_for_end(cx, &l, &next, result);
  return O2M_OK;
}

o2m_status lw_lower_det(lw_ctx *cx) {
  det_plan p;
  memset(&p, 0, sizeof(p));
  p.x = lw_in(cx, 0);
  if (mlirValueIsNull(p.x)) return lw_error(cx, "the input is missing");
  p.dtype = lw_in_type(cx, 0)->elem;
  if (p.dtype != O2M_DT_FLOAT && p.dtype != O2M_DT_DOUBLE && p.dtype != O2M_DT_FLOAT16 &&
      p.dtype != O2M_DT_BFLOAT16)
    return lw_unsupported(cx, "a Det of dtype %d", (int)p.dtype);
  int rank = lw_rank(p.x);
  if (rank < 2 || rank > LW_MAX_RANK) return lw_error(cx, "the input must have rank >= 2");
  p.batch = rank - 2;
  p.m = lw_static_dim(p.x, rank - 1);
  if (p.m < 0 || lw_static_dim(p.x, rank - 2) != p.m)
    return lw_unsupported(cx, "matrices that are not of a static square size");
  int64_t sizes[LW_MAX_RANK];
  MlirValue dyn[LW_MAX_RANK];
  for (int k = 0; k < p.batch; k++) {
    sizes[k] = lw_static_dim(p.x, k);
    dyn[k] = (MlirValue){NULL};
    if (sizes[k] < 0) sizes[k] = mlirShapedTypeGetDynamicSize(), dyn[k] = lw_dim(cx, p.x, k);
  }
  MlirType type = mlirRankedTensorTypeGet(p.batch, sizes, lw_elem_type(cx, p.dtype), mlirAttributeGetNull());
  MlirValue out = lw_empty(cx, type, dyn), result;
  if (p.m == 0) { /* the determinant of an empty matrix is 1 */
    return lw_set_out(cx, 0, lw_filled(cx, type, dyn, lw_scalar_const(cx, lw_elem_type(cx, p.dtype), 1.0)));
  }
  o2m_status s = batch_level(cx, &p, 0, out, &result);
  if (s) return s;
  return lw_set_out(cx, 0, result);
}
