/* lower_elementwise.c - the broadcasting elementwise builder (lw_broadcast,
 * lower_elementwise.h) and the Linalg lowerings of the elementwise family:
 * every op of the scalar table (lower_scalar.c) with numpy broadcasting,
 * the variadic Max/Min/Sum/Mean, Clip, Identity and Constant.
 *
 * Each lowering builds one linalg.generic whose body applies the op to
 * scalars; it must not re-derive ONNX semantics that lower_scalar.c owns. */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"

enum { MAX_INPUTS = 15, MAX_RANK = 64 };

/* ---- the builder ------------------------------------------------------------ */

static int rank_of(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  return mlirTypeIsAShaped(t) ? (int)mlirShapedTypeGetRank(t) : 0;
}

/* static size of dim k of v, -1 when dynamic */
static int64_t static_dim(MlirValue v, int k) {
  int64_t s = mlirShapedTypeGetDimSize(mlirValueGetType(v), k);
  return mlirShapedTypeIsDynamicSize(s) ? -1 : s;
}

typedef struct broadcast_body {
  lw_scalar_fn body;
  void *user;
} broadcast_body;

static o2m_status call_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const broadcast_body *b = user;
  return b->body(cx, args, &yields[0], b->user);
}

o2m_status lw_broadcast(lw_ctx *cx, int n_in, const MlirValue *ins, const o2m_type *shape,
                        MlirType elem, lw_scalar_fn body, void *user, MlirValue *result) {
  if (n_in > MAX_INPUTS) return lw_unsupported(cx, "more than %d elementwise inputs", MAX_INPUTS);
  if (shape && (shape->kind != O2M_TYPE_TENSOR || shape->rank < 0)) shape = NULL;
  int rank = shape ? shape->rank : 0, in_rank[MAX_INPUTS], off[MAX_INPUTS];
  for (int i = 0; i < n_in; i++) {
    if (mlirValueIsNull(ins[i])) return lw_error(cx, "internal: missing elementwise input %d", i);
    in_rank[i] = rank_of(ins[i]);
    if (!shape && in_rank[i] > rank) rank = in_rank[i];
  }
  if (rank > MAX_RANK) return lw_unsupported(cx, "rank above %d", MAX_RANK);
  /* input i's dims are output dims off[i]... (aligned right) */
  for (int i = 0; i < n_in; i++) {
    off[i] = rank - in_rank[i];
    if (off[i] < 0) return lw_error(cx, "input %d of rank %d does not broadcast to rank %d", i, in_rank[i], rank);
  }
  /* the output's sizes (-1 dynamic) and, for dynamic dims, their values */
  int64_t sizes[MAX_RANK];
  MlirValue dims[MAX_RANK];
  for (int k = 0; k < rank; k++) {
    int64_t from_inputs = 1;
    int src = -1, src_dim = 0;
    for (int i = 0; i < n_in; i++) {
      int j = k - off[i];
      if (j < 0 || j >= in_rank[i]) continue;
      int64_t s = static_dim(ins[i], j);
      if (s == 1) continue;
      if (src < 0 || (from_inputs < 0 && s >= 0)) from_inputs = s, src = i, src_dim = j;
    }
    sizes[k] = shape ? (shape->dims[k].size >= 0 ? shape->dims[k].size : -1) : from_inputs;
    dims[k] = (MlirValue){NULL};
    if (sizes[k] < 0) dims[k] = src >= 0 ? lw_dim(cx, ins[src], src_dim) : lw_const_index(cx, 1);
  }
  MlirAttribute maps[MAX_INPUTS + 1];
  for (int i = 0; i < n_in; i++) {
    int exprs[MAX_RANK];
    for (int j = 0; j < in_rank[i]; j++) {
      int kk = off[i] + j;
      exprs[j] = static_dim(ins[i], j) == 1 && sizes[kk] != 1 ? -1 : kk;
    }
    maps[i] = lw_affine_map(cx, rank, in_rank[i], exprs);
  }
  maps[n_in] = lw_identity_map(cx, rank);
  int64_t shape_sizes[MAX_RANK];
  for (int k = 0; k < rank; k++) shape_sizes[k] = sizes[k] < 0 ? mlirShapedTypeGetDynamicSize() : sizes[k];
  MlirType out_type = mlirRankedTensorTypeGet(rank, shape_sizes, elem, mlirAttributeGetNull());
  MlirValue init = lw_empty(cx, out_type, dims);
  char iterators[MAX_RANK + 1];
  memset(iterators, 'p', (size_t)rank);
  iterators[rank] = 0;
  broadcast_body b = {body, user};
  lw_generic_spec spec = {rank, iterators, n_in, 1, ins, maps, &init, &maps[n_in], call_body, &b};
  return lw_generic(cx, &spec, result);
}

/* ---- ops of the scalar table ---------------------------------------------------- */

/* Variadic ops fold a binary scalar op over their inputs; Mean divides
 * the sum by the input count. */
static const struct {
  const char *op, *fold;
} variadic[] = {{"Max", "Max"}, {"Min", "Min"}, {"Sum", "Add"}, {"Mean", "Add"}};

typedef struct scalar_node {
  const char *op;     /* the scalar op (the fold op of a variadic node) */
  int n_in;
  int mean;           /* divide by n_in at the end */
  o2m_dtype dtypes[MAX_INPUTS];
} scalar_node;

static o2m_status scalar_node_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const scalar_node *sn = user;
  int arity = lw_scalar_op_arity(sn->op);
  MlirValue r = lw_scalar_op(cx, sn->op, sn->dtypes, args);
  /* folds the remaining inputs of a variadic node */
  for (int i = arity; i < sn->n_in && !mlirValueIsNull(r); i++) {
    MlirValue pair[2] = {r, args[i]};
    o2m_dtype pair_dt[2] = {sn->dtypes[0], sn->dtypes[i]};
    r = lw_scalar_op(cx, sn->op, pair_dt, pair);
  }
  if (sn->mean && !mlirValueIsNull(r)) {
    MlirValue pair[2] = {r, lw_scalar_const(cx, mlirValueGetType(r), sn->n_in)};
    r = lw_scalar_op(cx, "Div", sn->dtypes, pair);
  }
  *result = r;
  return lw_value_status(cx, r);
}

/* Every op of the scalar table, with numpy broadcasting of its inputs
 * into the inferred output type. */
o2m_status lw_lower_elementwise(lw_ctx *cx) {
  scalar_node sn = {cx->node->op_type, cx->node->n_inputs, 0, {0}};
  int is_variadic = 0;
  for (size_t i = 0; i < sizeof(variadic) / sizeof(variadic[0]); i++)
    if (strcmp(sn.op, variadic[i].op) == 0) {
      sn.op = variadic[i].fold;
      sn.mean = strcmp(variadic[i].op, "Mean") == 0;
      is_variadic = 1;
      break;
    }
  int arity = lw_scalar_op_arity(sn.op);
  if (!arity) return lw_unsupported(cx, "no scalar lowering");
  if (is_variadic ? sn.n_in < 1 : sn.n_in != arity)
    return lw_error(cx, "expected %d inputs, got %d", arity, sn.n_in);
  if (sn.n_in > MAX_INPUTS) return lw_unsupported(cx, "more than %d inputs", MAX_INPUTS);
  if (cx->node->opset < 7 && lw_attr_int(cx, "broadcast", 0))
    return lw_unsupported(cx, "opset < 7 broadcasting (the transform layer normalizes it)");
  MlirValue ins[MAX_INPUTS];
  for (int i = 0; i < sn.n_in; i++) {
    ins[i] = lw_in(cx, i);
    sn.dtypes[i] = lw_in_type(cx, i)->elem;
    if (mlirValueIsNull(ins[i])) return lw_unsupported(cx, "input %d is missing or not a tensor", i);
  }
  if (is_variadic && sn.n_in == 1) return lw_set_out(cx, 0, ins[0]);
  MlirType elem = lw_elem_type(cx, lw_out_type(cx, 0)->elem);
  if (mlirTypeIsNull(elem)) return lw_unsupported(cx, "output dtype %s is not lowered", o2m_dtype_name(lw_out_type(cx, 0)->elem));
  MlirValue y;
  o2m_status s = lw_broadcast(cx, sn.n_in, ins, lw_out_type(cx, 0), elem, scalar_node_body, &sn, &y);
  return s ? s : lw_set_out(cx, 0, y);
}

/* ---- Clip ---------------------------------------------------------------------- */

typedef struct clip_bounds {
  o2m_dtype dtype;
  int lo_arg, hi_arg; /* argument index of min / max, -1 when absent */
} clip_bounds;

/* bound on one side: x beyond the bound ("Less" than min, "Greater" than
 * max) takes the bound; NaN stays NaN */
static MlirValue clamp_side(lw_ctx *cx, const char *beyond, o2m_dtype dt, MlirValue x, MlirValue bound) {
  MlirValue c = lw_scalar_op2(cx, beyond, dt, x, bound);
  return mlirValueIsNull(c) ? c : lw_select(cx, c, bound, x);
}

static o2m_status clip_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const clip_bounds *b = user;
  MlirValue x = args[0];
  if (b->lo_arg >= 0) x = clamp_side(cx, "Less", b->dtype, x, args[b->lo_arg]);
  if (!mlirValueIsNull(x) && b->hi_arg >= 0) x = clamp_side(cx, "Greater", b->dtype, x, args[b->hi_arg]);
  *result = x;
  return lw_value_status(cx, x);
}

o2m_status lw_lower_clip(lw_ctx *cx) {
  clip_bounds b = {lw_in_type(cx, 0)->elem, -1, -1};
  MlirValue ins[3] = {lw_in(cx, 0)};
  int n = 1;
  if (mlirValueIsNull(ins[0])) return lw_unsupported(cx, "input is missing or not a tensor");
  if (cx->node->opset < 11) return lw_unsupported(cx, "opset < 11 bounds (the transform layer normalizes them)");
  for (int i = 1; i <= 2; i++) {
    if (!lw_in_present(cx, i)) continue;
    ins[n] = lw_in(cx, i);
    if (mlirValueIsNull(ins[n])) return lw_unsupported(cx, "input %d is not a tensor", i);
    *(i == 1 ? &b.lo_arg : &b.hi_arg) = n++;
  }
  MlirType elem = lw_elem_type(cx, b.dtype);
  if (mlirTypeIsNull(elem)) return lw_unsupported(cx, "dtype %s is not lowered", o2m_dtype_name(b.dtype));
  MlirValue y;
  o2m_status s = lw_broadcast(cx, n, ins, lw_out_type(cx, 0), elem, clip_body, &b, &y);
  return s ? s : lw_set_out(cx, 0, y);
}

/* ---- Identity, Constant -------------------------------------------------------- */

o2m_status lw_lower_identity(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_unsupported(cx, "input is missing or not a tensor");
  return lw_set_out(cx, 0, x);
}

/* A Constant whose value was not made known at import (the emitter skips
 * the known ones): its tensor attribute is materialized. */
o2m_status lw_lower_constant(lw_ctx *cx) {
  const o2m_attr *a = lw_attr(cx, "value");
  if (!a || a->type != O2M_ATTR_TENSOR || !a->t)
    return lw_unsupported(cx, "only a Constant with a dense 'value' tensor is lowered");
  MlirValue c = lw_const_tensor(cx, a->t);
  if (mlirValueIsNull(c)) return lw_unsupported(cx, "the constant's dtype %s is not lowered", o2m_dtype_name(a->t->dtype));
  return lw_set_out(cx, 0, c);
}
