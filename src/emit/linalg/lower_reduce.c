/* lower_reduce.c - the reduction builders (lower_reduce.h) and the Linalg
 * lowerings of ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/
 * SumSquare and ArgMax/ArgMin.
 *
 * A Reduce* op is one table row: an op applied to each element, the
 * combining op, the start value and an op applied to the result, all
 * scalar ops of lower_scalar.c. f16/bf16 accumulate in f32. Results are
 * built in the reduced shape and expanded back for keepdims. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit/linalg/lower_reduce.h"

enum { MAX_RANK = LW_MAX_REDUCE_RANK, MAX_INPUTS = 15 };

static int rank_of(MlirValue v) { return (int)mlirShapedTypeGetRank(mlirValueGetType(v)); }

static int dim_is_dynamic(MlirValue v, int k) {
  return mlirShapedTypeIsDynamicDim(mlirValueGetType(v), k);
}

static MlirType elem_of(MlirValue v) { return mlirShapedTypeGetElementType(mlirValueGetType(v)); }

/* ---- builders ---------------------------------------------------------------- */

/* A reducing linalg.generic with n_out accumulators (started at the
 * scalars inits[]); `body` yields every accumulator. */
static o2m_status reduce_n(lw_ctx *cx, const lw_reduce_spec *sp, int n_out, const MlirValue *inits,
                           lw_body_fn body, void *user, MlirValue *results) {
  if (sp->rank > MAX_RANK || sp->n_in > MAX_INPUTS || sp->n_in < 1 || n_out > 2)
    return lw_unsupported(cx, "internal: reduction of rank %d with %d inputs", sp->rank, sp->n_in);
  MlirValue full = sp->ins[0];
  int64_t sizes[MAX_RANK];
  MlirValue dims[MAX_RANK];
  int kept[MAX_RANK], n_kept = 0;
  char iterators[MAX_RANK + 1];
  for (int k = 0; k < sp->rank; k++) {
    iterators[k] = sp->reduced[k] ? 'r' : 'p';
    if (sp->reduced[k]) continue;
    sizes[n_kept] = mlirShapedTypeGetDimSize(mlirValueGetType(full), k);
    dims[n_kept] = dim_is_dynamic(full, k) ? lw_dim(cx, full, k) : (MlirValue){NULL};
    kept[n_kept++] = k;
  }
  iterators[sp->rank] = 0;
  MlirValue outs[2];
  MlirAttribute out_maps[2], in_maps[MAX_INPUTS];
  for (int i = 0; i < n_out; i++) {
    MlirType type = mlirRankedTensorTypeGet(n_kept, sizes, mlirValueGetType(inits[i]), mlirAttributeGetNull());
    outs[i] = lw_filled(cx, type, dims, inits[i]);
    out_maps[i] = lw_affine_map(cx, sp->rank, n_kept, kept);
  }
  for (int i = 0; i < sp->n_in; i++)
    in_maps[i] = sp->in_reduced && sp->in_reduced[i] ? out_maps[0] : lw_identity_map(cx, sp->rank);
  lw_generic_spec g = {sp->rank, iterators, sp->n_in, n_out, sp->ins, in_maps, outs, out_maps, body, user};
  return lw_generic(cx, &g, results);
}

typedef struct reduce_body {
  lw_scalar_fn body;
  void *user;
} reduce_body;

static o2m_status call_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const reduce_body *b = user;
  return b->body(cx, args, &yields[0], b->user);
}

o2m_status lw_reduce(lw_ctx *cx, const lw_reduce_spec *sp, MlirValue *result) {
  reduce_body b = {sp->body, sp->user};
  return reduce_n(cx, sp, 1, &sp->init, call_body, &b, result);
}

MlirValue lw_keep_dims(lw_ctx *cx, MlirValue v, int rank, const unsigned char *reduced) {
  int src_rank = rank_of(v);
  if (src_rank == rank || rank > MAX_RANK) return v;
  int64_t sizes[MAX_RANK];
  MlirValue ops[MAX_RANK + 1];
  int n_ops = 0;
  ops[n_ops++] = v;
  /* groups of the reassociation: every unit dim joins the group of the
   * kept dim before it (leading ones join the first group) */
  char assoc[1024] = "", shape[1536] = "";
  size_t na = 0, ns = 0;
  int group = 0, seen = 0;
  for (int k = 0; k < rank; k++) {
    if (reduced[k]) {
      sizes[k] = 1;
    } else {
      sizes[k] = mlirShapedTypeGetDimSize(mlirValueGetType(v), seen);
      if (dim_is_dynamic(v, seen)) ops[n_ops++] = lw_dim(cx, v, seen);
      seen++;
    }
    int g = seen ? seen - 1 : 0;
    if (src_rank)
      na += (size_t)snprintf(assoc + na, sizeof(assoc) - na, "%s%d",
                             k == 0 ? "[" : g != group ? "], [" : ", ", k);
    group = g;
    ns += (size_t)snprintf(shape + ns, sizeof(shape) - ns, "%s%lld", k ? ", " : "", (long long)sizes[k]);
    if (na >= sizeof(assoc) || ns >= sizeof(shape)) return (MlirValue){NULL};
  }
  char attrs[2800];
  snprintf(attrs, sizeof(attrs), "reassociation = [%s%s], static_output_shape = array<i64: %s>", assoc,
           src_rank ? "]" : "", shape);
  MlirType type = mlirRankedTensorTypeGet(rank, sizes, elem_of(v), mlirAttributeGetNull());
  return lw_op1(cx, "tensor.expand_shape", n_ops, ops, type, attrs);
}

o2m_status lw_axes_mask(lw_ctx *cx, int rank, int n_axes, const int64_t *axes, unsigned char *reduced) {
  memset(reduced, 0, (size_t)rank);
  for (int i = 0; i < n_axes; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)axes[i], rank);
    if (reduced[a]) return lw_error(cx, "axis %lld is repeated", (long long)axes[i]);
    reduced[a] = 1;
  }
  return O2M_OK;
}

MlirValue lw_reduced_count(lw_ctx *cx, MlirValue full, const unsigned char *reduced, o2m_dtype dtype) {
  int64_t count = 1;
  MlirValue dynamic = {NULL};
  MlirType index = lw_index_type(cx);
  for (int k = 0; k < rank_of(full); k++) {
    if (!reduced[k]) continue;
    if (!dim_is_dynamic(full, k)) {
      count *= mlirShapedTypeGetDimSize(mlirValueGetType(full), k);
      continue;
    }
    MlirValue d = lw_dim(cx, full, k);
    MlirValue ops[2] = {dynamic, d};
    dynamic = mlirValueIsNull(dynamic) ? d : lw_op1(cx, "arith.muli", 2, ops, index, NULL);
  }
  if (mlirValueIsNull(dynamic)) return lw_const_scalar(cx, dtype, (double)count);
  MlirValue ops[2] = {dynamic, lw_const_index(cx, count)};
  MlirValue n = lw_op1(cx, "arith.muli", 2, ops, index, NULL);
  n = lw_op1(cx, "arith.index_cast", 1, &n, lw_type(cx, "i64"), NULL);
  return lw_scalar_cast(cx, n, O2M_DT_INT64, dtype);
}

MlirValue lw_extreme_const(lw_ctx *cx, o2m_dtype dtype, int highest) {
  MlirType t = lw_elem_type(cx, dtype);
  if (mlirTypeIsNull(t)) return (MlirValue){NULL};
  if (lw_dtype_is_float(dtype)) return lw_scalar_const(cx, t, highest ? INFINITY : -INFINITY);
  int bits = o2m_dtype_bits(dtype);
  if (dtype == O2M_DT_BOOL) return lw_const_int(cx, t, highest);
  if (lw_dtype_is_unsigned(dtype)) return lw_const_int(cx, t, highest ? -1 : 0);
  int64_t max = (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
  return lw_const_int(cx, t, highest ? max : -max - 1);
}

/* ---- Reduce* ----------------------------------------------------------------- */

enum { PRE_NONE, PRE_ABS, PRE_SQUARE, PRE_NO_INF, PRE_EXP_SHIFTED };
enum { POST_NONE, POST_MEAN, POST_SQRT, POST_LOG, POST_LOG_PLUS_MAX };
enum { INIT_ZERO, INIT_ONE, INIT_LOWEST, INIT_HIGHEST };

typedef struct reduce_row {
  const char *op;
  int pre;             /* applied to each element (in the accumulator's dtype) */
  const char *combine; /* the scalar op folding an element into the accumulator */
  int init;
  int post;            /* applied to the result */
} reduce_row;

/* ReduceLogSumExp is log(sum(exp(x - m))) + m with m the max of x (infinities
 * left out), as the reference computes it: a first Max pass gives m. */
static const reduce_row reduce_rows[] = {
    {"ReduceSum", PRE_NONE, "Add", INIT_ZERO, POST_NONE},
    {"ReduceMean", PRE_NONE, "Add", INIT_ZERO, POST_MEAN},
    {"ReduceMax", PRE_NONE, "Max", INIT_LOWEST, POST_NONE},
    {"ReduceMin", PRE_NONE, "Min", INIT_HIGHEST, POST_NONE},
    {"ReduceProd", PRE_NONE, "Mul", INIT_ONE, POST_NONE},
    {"ReduceL1", PRE_ABS, "Add", INIT_ZERO, POST_NONE},
    {"ReduceL2", PRE_SQUARE, "Add", INIT_ZERO, POST_SQRT},
    {"ReduceSumSquare", PRE_SQUARE, "Add", INIT_ZERO, POST_NONE},
    {"ReduceLogSum", PRE_NONE, "Add", INIT_ZERO, POST_LOG},
    {"ReduceLogSumExp", PRE_EXP_SHIFTED, "Add", INIT_ZERO, POST_LOG_PLUS_MAX},
};

static const reduce_row max_pass = {"ReduceLogSumExp", PRE_NO_INF, "Max", INIT_LOWEST, POST_NONE};

typedef struct reduce_step {
  const reduce_row *row;
  o2m_dtype in_dt, acc_dt, out_dt;
  MlirValue count; /* POST_MEAN: the divisor */
} reduce_step;

/* args: x, [the max of LogSumExp], the accumulator */
static o2m_status reduce_elem(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const reduce_step *st = user;
  o2m_dtype dt = st->acc_dt;
  int shifted = st->row->pre == PRE_EXP_SHIFTED;
  MlirValue x = lw_scalar_cast(cx, args[0], st->in_dt, dt), acc = args[shifted ? 2 : 1];
  if (mlirValueIsNull(x)) return lw_value_status(cx, x);
  switch (st->row->pre) {
  case PRE_ABS: x = lw_scalar_op1(cx, "Abs", dt, x); break;
  case PRE_SQUARE: x = lw_scalar_op2(cx, "Mul", dt, x, x); break;
  case PRE_NO_INF:
    if (lw_dtype_is_float(dt)) x = lw_select(cx, lw_scalar_op1(cx, "IsInf", dt, x), lw_extreme_const(cx, dt, 0), x);
    break;
  case PRE_EXP_SHIFTED: x = lw_scalar_op1(cx, "Exp", dt, lw_scalar_op2(cx, "Sub", dt, x, args[1])); break;
  default: break;
  }
  *result = lw_scalar_op2(cx, st->row->combine, dt, acc, x);
  return lw_value_status(cx, *result);
}

/* args: the accumulator, [the max of LogSumExp] */
static o2m_status reduce_post(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const reduce_step *st = user;
  o2m_dtype dt = st->acc_dt;
  MlirValue v = args[0];
  switch (st->row->post) {
  case POST_MEAN: v = lw_scalar_op2(cx, "Div", dt, v, st->count); break;
  case POST_SQRT: v = lw_scalar_op1(cx, "Sqrt", dt, v); break;
  case POST_LOG: v = lw_scalar_op1(cx, "Log", dt, v); break;
  case POST_LOG_PLUS_MAX: v = lw_scalar_op2(cx, "Add", dt, lw_scalar_op1(cx, "Log", dt, v), args[1]); break;
  default: break;
  }
  *result = mlirValueIsNull(v) ? v : lw_scalar_cast(cx, v, dt, st->out_dt);
  return lw_value_status(cx, *result);
}

/* f16/bf16 accumulate in f32; integers in f64 when the op needs exp, log
 * or sqrt; otherwise the input's dtype */
static o2m_dtype accumulator_dtype(const reduce_row *r, o2m_dtype in) {
  if (in == O2M_DT_FLOAT16 || in == O2M_DT_BFLOAT16) return O2M_DT_FLOAT;
  int float_math = r->pre == PRE_EXP_SHIFTED || r->post == POST_SQRT || r->post == POST_LOG;
  return float_math && !lw_dtype_is_float(in) ? O2M_DT_DOUBLE : in;
}

static MlirValue init_value(lw_ctx *cx, int init, o2m_dtype dt) {
  if (init == INIT_LOWEST || init == INIT_HIGHEST) return lw_extreme_const(cx, dt, init == INIT_HIGHEST);
  return lw_const_scalar(cx, dt, init == INIT_ONE);
}

/* The reduced dims of input 0: axes from input 1 (known at import) or the
 * attribute of older opsets; none given = all, or none at all with
 * noop_with_empty_axes. */
static o2m_status node_axes(lw_ctx *cx, int rank, unsigned char *reduced) {
  int64_t *from_input = NULL;
  const int64_t *axes = NULL;
  int64_t n = 0;
  if (lw_in_present(cx, 1)) {
    n = lw_in_known_ints(cx, 1, &from_input);
    if (n < 0) return lw_unsupported(cx, "axes that are not known at import time");
    axes = from_input;
  } else {
    n = lw_attr_ints(cx, "axes", &axes);
    if (n < 0) n = 0;
  }
  if (n > 0) return lw_axes_mask(cx, rank, (int)n, axes, reduced);
  memset(reduced, lw_attr_int(cx, "noop_with_empty_axes", 0) ? 0 : 1, (size_t)rank);
  return O2M_OK;
}

o2m_status lw_lower_reduce(lw_ctx *cx) {
  const reduce_row *row = NULL;
  for (size_t i = 0; i < sizeof(reduce_rows) / sizeof(reduce_rows[0]); i++)
    if (strcmp(reduce_rows[i].op, cx->node->op_type) == 0) row = &reduce_rows[i];
  MlirValue x = lw_in(cx, 0);
  if (!row || mlirValueIsNull(x)) return lw_unsupported(cx, "input is missing or not a tensor");
  int rank = rank_of(x);
  if (rank > MAX_RANK) return lw_unsupported(cx, "rank above %d", MAX_RANK);
  unsigned char reduced[MAX_RANK];
  o2m_status s = node_axes(cx, rank, reduced);
  if (s) return s;
  reduce_step st = {row, lw_in_type(cx, 0)->elem, O2M_DT_UNDEFINED, lw_out_type(cx, 0)->elem, {NULL}};
  st.acc_dt = accumulator_dtype(row, st.in_dt);
  if (mlirTypeIsNull(lw_elem_type(cx, st.in_dt)) || mlirTypeIsNull(lw_elem_type(cx, st.out_dt)))
    return lw_unsupported(cx, "dtype %s is not lowered", o2m_dtype_name(st.in_dt));
  MlirValue ins[2] = {x, {NULL}}, acc;
  unsigned char in_reduced[2] = {0, 1};
  lw_reduce_spec spec = {rank, reduced, 1, ins, in_reduced, {NULL}, reduce_elem, &st};
  if (row->pre == PRE_EXP_SHIFTED) {
    reduce_step first = st;
    first.row = &max_pass;
    spec.init = init_value(cx, max_pass.init, st.acc_dt);
    spec.user = &first;
    if ((s = lw_reduce(cx, &spec, &ins[1]))) return s;
    spec.n_in = 2;
    spec.user = &st;
  }
  spec.init = init_value(cx, row->init, st.acc_dt);
  if ((s = lw_reduce(cx, &spec, &acc))) return s;
  if (row->post != POST_NONE || st.acc_dt != st.out_dt) {
    if (row->post == POST_MEAN) st.count = lw_reduced_count(cx, x, reduced, st.acc_dt);
    ins[0] = acc;
    s = lw_broadcast(cx, spec.n_in, ins, NULL, lw_elem_type(cx, st.out_dt), reduce_post, &st, &acc);
    if (s) return s;
  }
  if (lw_attr_int(cx, "keepdims", 1)) acc = lw_keep_dims(cx, acc, rank, reduced);
  return lw_set_out(cx, 0, acc);
}

/* ---- ArgMax, ArgMin ------------------------------------------------------------ */

typedef struct arg_step {
  int axis, max, last;
  o2m_dtype dt;
} arg_step;

/* args: x, the best value so far, its index; yields both updated. Ties go
 * to the first index (the last with select_last_index); NaN wins, as in
 * numpy's argmax/argmin. */
static o2m_status arg_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const arg_step *st = user;
  MlirValue x = args[0], best = args[1];
  MlirValue i = lw_loop_index_i64(cx, st->axis);
  MlirValue take;
  if (lw_dtype_is_float(st->dt)) {
    if (st->last) /* x is NaN, or x >= best (false once best is NaN) */
      take = lw_op1(cx, "arith.ori", 2, (MlirValue[]){lw_cmpf(cx, LW_F_UNO, x, x),
                                                       lw_cmpf(cx, st->max ? LW_F_OGE : LW_F_OLE, x, best)},
                    lw_type(cx, "i1"), NULL);
    else /* best is not NaN, and x is NaN or beats it */
      take = lw_op1(cx, "arith.andi", 2, (MlirValue[]){lw_cmpf(cx, LW_F_ORD, best, best),
                                                        lw_cmpf(cx, st->max ? LW_F_UGT : LW_F_ULT, x, best)},
                    lw_type(cx, "i1"), NULL);
  } else {
    static const int predicates[2][2][2] = {/* [unsigned][max][last] */
                                            {{LW_I_SLT, LW_I_SLE}, {LW_I_SGT, LW_I_SGE}},
                                            {{LW_I_ULT, LW_I_ULE}, {LW_I_UGT, LW_I_UGE}}};
    take = lw_cmpi(cx, predicates[lw_dtype_is_unsigned(st->dt)][st->max][st->last], x, best);
  }
  yields[0] = lw_select(cx, take, x, best);
  yields[1] = lw_select(cx, take, i, args[2]);
  return O2M_OK;
}

o2m_status lw_arg_reduce(lw_ctx *cx, MlirValue x, o2m_dtype dtype, int axis, int max, int last,
                         MlirValue *indices) {
  int rank = rank_of(x);
  if (rank > MAX_RANK || axis < 0 || axis >= rank) return lw_error(cx, "internal: arg-reduction axis %d of rank %d", axis, rank);
  unsigned char reduced[MAX_RANK] = {0};
  reduced[axis] = 1;
  arg_step st = {axis, max, last, dtype};
  MlirValue inits[2] = {lw_extreme_const(cx, dtype, !max), lw_const_scalar(cx, O2M_DT_INT64, 0)};
  if (mlirValueIsNull(inits[0])) return lw_unsupported(cx, "dtype %s is not lowered", o2m_dtype_name(dtype));
  lw_reduce_spec spec = {rank, reduced, 1, &x, NULL, {NULL}, NULL, NULL};
  MlirValue results[2];
  o2m_status s = reduce_n(cx, &spec, 2, inits, arg_body, &st, results);
  if (!s) *indices = results[1];
  return s;
}

o2m_status lw_lower_arg_extreme(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_unsupported(cx, "input is missing or not a tensor");
  int rank = rank_of(x);
  if (rank > MAX_RANK || rank < 1) return lw_unsupported(cx, "input of rank %d", rank);
  int64_t axis = lw_attr_int(cx, "axis", 0);
  unsigned char reduced[MAX_RANK];
  o2m_status s = lw_axes_mask(cx, rank, 1, &axis, reduced);
  if (s) return s;
  MlirValue y;
  s = lw_arg_reduce(cx, x, lw_in_type(cx, 0)->elem, (int)(axis < 0 ? axis + rank : axis),
                    strcmp(cx->node->op_type, "ArgMax") == 0, lw_attr_int(cx, "select_last_index", 0) != 0, &y);
  if (s) return s;
  if (lw_attr_int(cx, "keepdims", 1)) y = lw_keep_dims(cx, y, rank, reduced);
  return lw_set_out(cx, 0, y);
}
