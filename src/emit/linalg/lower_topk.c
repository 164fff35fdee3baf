/* lower_topk.c - the Linalg lowering of TopK (values and int64 indices,
 * `largest`, sorted output).
 *
 * Two linalg.generics: the first gives every element its rank along the
 * axis (how many elements come before it in the sorted order), the second
 * gathers, for each output position p < K, the element of rank p. Order as
 * the reference: larger first (smaller with largest = 0), NaN above every
 * number, ties by lower index. O(n^2) along the axis, O(n K) for the
 * gather. K known at import gives a static output dim; one computed at run
 * time (detection models take min(candidates, top-n) of filtered boxes) a
 * dynamic one. For the JIT (O2M_JIT_KERNELS), a float32 TopK is instead a
 * call of the executor's sorting kernel on buffers (emit.h). */
#include <string.h>

#include "emit/emit.h"
#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_shape.h"

enum { MAX_RANK = 63 };

typedef struct topk_step {
  int axis, rank; /* loop `rank` runs over the input's axis */
  int largest;
  o2m_dtype dt;
} topk_step;

static MlirValue i1_op(lw_ctx *cx, const char *op, MlirValue a, MlirValue b) {
  MlirValue ops[2] = {a, b};
  return lw_op1(cx, op, 2, ops, lw_type(cx, "i1"), NULL);
}

/* a comes strictly before b in the sorted order, ignoring indices */
static MlirValue before(lw_ctx *cx, const topk_step *st, MlirValue a, MlirValue b) {
  if (!lw_dtype_is_float(st->dt)) {
    int is_unsigned = lw_dtype_is_unsigned(st->dt);
    int p = st->largest ? (is_unsigned ? LW_I_UGT : LW_I_SGT) : (is_unsigned ? LW_I_ULT : LW_I_SLT);
    return lw_cmpi(cx, p, a, b);
  }
  if (st->largest) /* a is NaN or greater, and b is not NaN */
    return i1_op(cx, "arith.andi", lw_cmpf(cx, LW_F_UGT, a, b), lw_cmpf(cx, LW_F_ORD, b, b));
  /* a is not NaN, and b is NaN or greater */
  return i1_op(cx, "arith.andi", lw_cmpf(cx, LW_F_ULT, a, b), lw_cmpf(cx, LW_F_ORD, a, a));
}

static MlirValue same(lw_ctx *cx, const topk_step *st, MlirValue a, MlirValue b) {
  if (!lw_dtype_is_float(st->dt)) return lw_cmpi(cx, LW_I_EQ, a, b);
  MlirValue both_nan = i1_op(cx, "arith.andi", lw_cmpf(cx, LW_F_UNO, a, a), lw_cmpf(cx, LW_F_UNO, b, b));
  return i1_op(cx, "arith.ori", lw_cmpf(cx, LW_F_OEQ, a, b), both_nan);
}

/* args: x[i], x[j], the count of elements before x[i] */
static o2m_status rank_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const topk_step *st = user;
  MlirValue xi = args[0], xj = args[1];
  MlirValue j_first = lw_cmpi(cx, LW_I_ULT, lw_loop_index_i64(cx, st->rank), lw_loop_index_i64(cx, st->axis));
  MlirValue counts = i1_op(cx, "arith.ori", before(cx, st, xj, xi),
                           i1_op(cx, "arith.andi", same(cx, st, xj, xi), j_first));
  MlirValue one = lw_op1(cx, "arith.extui", 1, &counts, lw_type(cx, "i64"), NULL);
  MlirValue sum[2] = {args[2], one};
  yields[0] = lw_op1(cx, "arith.addi", 2, sum, lw_type(cx, "i64"), NULL);
  return O2M_OK;
}

/* args: x[j], rank of x[j], the value and index so far; output position p
 * takes the element of rank p */
static o2m_status gather_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const topk_step *st = user;
  MlirValue p = lw_loop_index_i64(cx, st->axis), j = lw_loop_index_i64(cx, st->rank);
  MlirValue hit = lw_cmpi(cx, LW_I_EQ, args[1], p);
  yields[0] = lw_select(cx, hit, args[0], args[2]);
  yields[1] = lw_select(cx, hit, j, args[3]);
  return O2M_OK;
}

/* ---- the JIT's kernel --------------------------------------------------------- */

static const char unranked_f32[] = "memref<*xf32>", unranked_i64[] = "memref<*xi64>";

static o2m_status topk_call(lw_ctx *cx, MlirValue x, const topk_step *st, const int64_t *sizes, const MlirValue *dims) {
  int rank = st->rank;
  MlirType f32 = lw_elem_type(cx, O2M_DT_FLOAT), i64 = lw_type(cx, "i64");
  MlirValue values = lw_kernel_result(cx, f32, rank, sizes, dims), indices = lw_kernel_result(cx, i64, rank, sizes, dims);
  MlirValue args[5] = {
      lw_kernel_operand(cx, x, unranked_f32),
      mlirValueIsNull(values) ? values : lw_op1(cx, "memref.cast", 1, &values, lw_type(cx, unranked_f32), NULL),
      mlirValueIsNull(indices) ? indices : lw_op1(cx, "memref.cast", 1, &indices, lw_type(cx, unranked_i64), NULL),
      lw_const_scalar(cx, O2M_DT_INT64, st->axis), lw_const_scalar(cx, O2M_DT_INT64, st->largest)};
  for (int i = 0; i < 5; i++)
    if (mlirValueIsNull(args[i])) return lw_error(cx, "internal: cannot pass TopK's operands");
  lw_declare_kernel(cx, O2M_TOPK_CALL, "(memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64) -> ()");
  if (mlirOperationIsNull(lw_op(cx, "func.call", 5, args, 0, NULL, "callee = @" O2M_TOPK_CALL, 0)))
    return lw_error(cx, "internal: cannot call the TopK kernel");
  MlirValue out[2] = {values, indices};
  MlirType types[2] = {mlirRankedTensorTypeGet(rank, sizes, f32, mlirAttributeGetNull()),
                       mlirRankedTensorTypeGet(rank, sizes, i64, mlirAttributeGetNull())};
  for (int i = 0; i < 2; i++) {
    MlirValue t = lw_op1(cx, "bufferization.to_tensor", 1, &out[i], types[i], "restrict, writable");
    o2m_status s = mlirValueIsNull(t) ? lw_error(cx, "internal: cannot take TopK's results") : lw_set_out(cx, i, t);
    if (s) return s;
  }
  return O2M_OK;
}

o2m_status lw_lower_topk(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_unsupported(cx, "input is missing or not a tensor");
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(x));
  lw_ix *k_ix = NULL;
  if (lw_in_ixs(cx, 1, &k_ix) != 1) return lw_unsupported(cx, "K is not a 1-element tensor");
  int64_t axis = lw_attr_int(cx, "axis", -1), k = lw_ix_is_const(k_ix[0]) ? k_ix[0].c : 0;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)lw_attr_int(cx, "axis", -1), rank);
  if (rank > MAX_RANK) return lw_unsupported(cx, "rank above %d", MAX_RANK);
  int64_t n = mlirShapedTypeGetDimSize(mlirValueGetType(x), (intptr_t)axis);
  if (k < 0 || (!mlirShapedTypeIsDynamicSize(n) && k > n)) return lw_error(cx, "K = %lld is out of range", (long long)k);
  topk_step st = {(int)axis, rank, lw_attr_int(cx, "largest", 1) != 0, lw_in_type(cx, 0)->elem};
  MlirType elem = lw_elem_type(cx, st.dt);
  if (mlirTypeIsNull(elem)) return lw_unsupported(cx, "dtype %s is not lowered", o2m_dtype_name(st.dt));
  /* loops: the dims of the (input or output) shape, then j over the input's axis */
  int ident[MAX_RANK], at_j[MAX_RANK];
  MlirValue dims[MAX_RANK];
  int64_t sizes[MAX_RANK];
  for (int d = 0; d < rank; d++) {
    ident[d] = d;
    at_j[d] = d == axis ? rank : d;
    dims[d] = lw_dim(cx, x, d);
    sizes[d] = mlirShapedTypeGetDimSize(mlirValueGetType(x), d);
  }
  char iterators[MAX_RANK + 2];
  memset(iterators, 'p', (size_t)rank);
  iterators[rank] = 'r';
  iterators[rank + 1] = 0;
  if ((cx->for_jit & O2M_JIT_KERNELS) && st.dt == O2M_DT_FLOAT) {
    int64_t out_sizes[MAX_RANK];
    MlirValue out_dims[MAX_RANK];
    memcpy(out_sizes, sizes, sizeof(int64_t) * (size_t)rank);
    memcpy(out_dims, dims, sizeof(MlirValue) * (size_t)rank);
    out_sizes[axis] = lw_ix_is_const(k_ix[0]) ? k : mlirShapedTypeGetDynamicSize();
    out_dims[axis] = lw_ix_value(cx, k_ix[0]);
    return topk_call(cx, x, &st, out_sizes, out_dims);
  }
  MlirAttribute m_ident = lw_affine_map(cx, rank + 1, rank, ident);
  MlirAttribute m_at_j = lw_affine_map(cx, rank + 1, rank, at_j);
  MlirType i64 = lw_type(cx, "i64");
  MlirValue zero64 = lw_const_scalar(cx, O2M_DT_INT64, 0);
  MlirType rank_type = mlirRankedTensorTypeGet(rank, sizes, i64, mlirAttributeGetNull());
  MlirValue ranks_init = lw_filled(cx, rank_type, dims, zero64);
  MlirValue rank_ins[2] = {x, x};
  MlirAttribute rank_maps[2] = {m_ident, m_at_j};
  lw_generic_spec first = {rank + 1, iterators, 2, 1, rank_ins, rank_maps, &ranks_init, &m_ident, rank_body, &st};
  MlirValue ranks;
  o2m_status s = lw_generic(cx, &first, &ranks);
  if (s) return s;
  if (lw_ix_is_const(k_ix[0])) {
    sizes[axis] = k;
  } else { /* K of the run: a dynamic dim */
    sizes[axis] = mlirShapedTypeGetDynamicSize();
    dims[axis] = lw_ix_value(cx, k_ix[0]);
  }
  MlirValue outs[2] = {
      lw_filled(cx, mlirRankedTensorTypeGet(rank, sizes, elem, mlirAttributeGetNull()), dims,
                lw_const_scalar(cx, st.dt, 0)),
      lw_filled(cx, mlirRankedTensorTypeGet(rank, sizes, i64, mlirAttributeGetNull()), dims, zero64)};
  MlirValue gather_ins[2] = {x, ranks};
  MlirAttribute gather_maps[2] = {m_at_j, m_at_j}, out_maps[2] = {m_ident, m_ident};
  lw_generic_spec second = {rank + 1, iterators, 2, 2, gather_ins, gather_maps, outs, out_maps, gather_body, &st};
  MlirValue results[2];
  if ((s = lw_generic(cx, &second, results))) return s;
  if ((s = lw_set_out(cx, 0, results[0]))) return s;
  return lw_set_out(cx, 1, results[1]);
}
