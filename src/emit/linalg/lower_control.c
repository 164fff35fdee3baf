/* lower_control.c - Linalg lowerings of the control-flow ops (rows in
 * lower_control.def): If to scf.if, Loop to scf.for or scf.while, Scan to
 * scf.for, with tensors carried as iter_args.
 *
 * Subgraphs are lowered in place with lw_lower_graph_nodes into the
 * regions' blocks: their inputs are mapped to block arguments, values of
 * enclosing graphs (O2M_VALUE_OUTER, the node's captures) resolve through
 * lw_get to the enclosing MLIR values, which scf regions see.
 *
 * - If: a known condition lowers the branch taken inline. Otherwise both
 *   branches are built first, then the scf.if whose result types are the
 *   join of the branches' yields (dims that differ become dynamic); each
 *   yield is tensor.cast to it.
 * - Loop: scf.for over max(M, 0) when nothing else ends the loop, else
 *   scf.while carrying (iteration number i64, condition i1, the
 *   loop-carried tensors, one buffer per scan output). A scan output is
 *   written into a buffer sized by the trip count M (when M bounds the
 *   iterations exactly, or is a small constant, and the per-iteration shape
 *   is static) and sliced to the iterations run; with no such bound, a first
 *   scf.while counts the iterations and a second collects them; with
 *   dynamic per-iteration shapes the buffer grows by one slice per
 *   iteration (tensor.empty + tensor.insert_slice).
 *   Carried tensors are written back into their iter_arg (linalg.copy) when
 *   their shape cannot change, so that one-shot bufferization finds every
 *   yield equivalent to its iter_arg; a carried tensor whose shape changes
 *   (and a growing buffer) needs allow-return-allocs-from-loops.
 * - Scan: scf.for over the scanned length, reading slices (rank-reducing
 *   tensor.extract_slice) and writing them (rank-reducing
 *   tensor.insert_slice), with directions and axes. Scan-8 (batch dim 0,
 *   sequence_lens) runs the same loop inside an scf.for over the batch;
 *   sequence_lens is accepted only when it is known to equal the length.
 *
 * Must not: lower sequences or optionals (the emitter takes tensors only).
 */
#include <stdio.h>
#include <string.h>

#include "emit/linalg/lower_shape.h"

enum { CTL_MAX = 64 }; /* the most carried values / scan values handled */

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

static MlirNamedAttribute named_attr(lw_ctx *cx, const char *name, MlirAttribute a) {
  return mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref(name)), a);
}

/* t with a dim of size `size` (-1: dynamic) inserted at `axis` (or, with
 * insert == 0, its dim at `axis` removed). */
static MlirType with_axis(MlirType t, int axis, int insert, int64_t size) {
  int rank = (int)mlirShapedTypeGetRank(t), n = 0;
  int64_t shape[LW_MAX_RANK + 1];
  for (int k = 0; k <= rank; k++) {
    if (insert && k == axis) shape[n++] = size < 0 ? mlirShapedTypeGetDynamicSize() : size;
    if (k < rank && (insert || k != axis)) shape[n++] = mlirShapedTypeGetDimSize(t, k);
  }
  return mlirRankedTensorTypeGet(n, shape, mlirShapedTypeGetElementType(t), mlirAttributeGetNull());
}

/* ---- slices along one axis ---------------------------------------------------- */

static MlirAttribute mixed(lw_ctx *cx, int rank, const lw_ix *v, MlirValue *ops, int *n_ops,
                           int32_t *count) {
  int64_t s[LW_MAX_RANK + 1];
  *count = 0;
  for (int k = 0; k < rank; k++) {
    s[k] = lw_ix_is_const(v[k]) ? v[k].c : mlirShapedTypeGetDynamicSize();
    if (!lw_ix_is_const(v[k])) ops[(*n_ops)++] = lw_ix_value(cx, v[k]), (*count)++;
  }
  return mlirDenseI64ArrayGet(cx->mc, rank, s);
}

/* Slice `at` of the full tensor along `axis` (size 1 there, the whole of
 * every other dim), the axis dropped: dest null reads it from src
 * (tensor.extract_slice), else src (one rank less) is written into dest
 * (tensor.insert_slice). */
static MlirValue axis_slice(lw_ctx *cx, MlirValue src, MlirValue dest, int axis, lw_ix at) {
  int insert = !mlirValueIsNull(dest);
  MlirValue full = insert ? dest : src, part = insert ? src : (MlirValue){NULL};
  int rank = lw_rank(full);
  lw_ix offsets[LW_MAX_RANK + 1], sizes[LW_MAX_RANK + 1], strides[LW_MAX_RANK + 1];
  for (int k = 0; k < rank; k++) {
    offsets[k] = k == axis ? at : lw_ix_c(0);
    strides[k] = lw_ix_c(1);
    sizes[k] = k == axis ? lw_ix_c(1) : insert ? lw_ix_dim(cx, part, k < axis ? k : k - 1)
                                               : lw_ix_dim(cx, full, k);
  }
  MlirType result = insert ? mlirValueGetType(dest) : with_axis(mlirValueGetType(src), axis, 0, 0);
  MlirValue ops[3 * (LW_MAX_RANK + 1) + 2];
  int n = 0, seg = 0;
  int32_t segments[5];
  ops[n++] = src, segments[seg++] = 1;
  if (insert) ops[n++] = dest, segments[seg++] = 1;
  MlirNamedAttribute attrs[4];
  attrs[0] = named_attr(cx, "static_offsets", mixed(cx, rank, offsets, ops, &n, &segments[seg++]));
  attrs[1] = named_attr(cx, "static_sizes", mixed(cx, rank, sizes, ops, &n, &segments[seg++]));
  attrs[2] = named_attr(cx, "static_strides", mixed(cx, rank, strides, ops, &n, &segments[seg++]));
  attrs[3] = named_attr(cx, "operandSegmentSizes", mlirDenseI32ArrayGet(cx->mc, seg, segments));
  MlirOperation op = lw_op_attrs(cx, insert ? "tensor.insert_slice" : "tensor.extract_slice", n,
                                 ops, 1, &result, 4, attrs, 0);
  return mlirOperationIsNull(op) ? (MlirValue){NULL} : mlirOperationGetResult(op, 0);
}

/* The single element of a one-element tensor, as a scalar. */
static MlirValue scalar_of(lw_ctx *cx, MlirValue t) { return lw_extract_at(cx, t, 0); }

/* A rank-0 tensor holding scalar x. */
static MlirValue tensor_of(lw_ctx *cx, MlirValue x) {
  MlirType t = mlirRankedTensorTypeGet(0, NULL, mlirValueGetType(x), mlirAttributeGetNull());
  return lw_op1(cx, "tensor.from_elements", 1, &x, t, NULL);
}

/* The value a loop yields for the carried block argument `arg`: y written
 * into arg's buffer (linalg.copy) when their shapes are equal (`same`, or
 * both static), so that bufferization finds the yield equivalent to the
 * iter_arg; else y itself (a new buffer each iteration, which one-shot
 * bufferization accepts only with allow-return-allocs-from-loops). */
static MlirValue yield_into(lw_ctx *cx, MlirValue y, MlirValue arg, int same) {
  MlirType t = mlirValueGetType(arg);
  y = lw_cast_tensor(cx, y, t);
  if (!same && !mlirShapedTypeHasStaticShape(t)) return y;
  return lw_named(cx, "linalg.copy", 1, &y, arg, NULL);
}

/* Whether two inferred types have equal dims (sizes or symbols). */
static int same_dims(const o2m_type *a, const o2m_type *b) {
  if (a->kind != O2M_TYPE_TENSOR || b->kind != O2M_TYPE_TENSOR || a->rank != b->rank || a->rank < 0)
    return 0;
  for (int k = 0; k < a->rank; k++) {
    o2m_dim x = a->dims[k], y = b->dims[k];
    if (x.sym ? !y.sym || strcmp(x.sym, y.sym) != 0 : y.sym || x.size != y.size) return 0;
  }
  return 1;
}

/* ---- If ---------------------------------------------------------------------------- */

o2m_status lw_lower_if(lw_ctx *cx) { return lw_lower_if_with(cx, "scf.if", "scf.yield", scalar_of); }

/* ---- Loop ---------------------------------------------------------------------------- */

/* Whether the body passes its condition input on unchanged (directly or
 * through Identity), or always yields true. */
static int body_keeps_condition(const o2m_graph *body) {
  const o2m_value *c = body->output_values[0];
  while (c->kind == O2M_VALUE_OUTER && c->outer) c = c->outer;
  if (c->known && c->known->count == 1 && c->known->data) return c->known->data[0] != 0;
  while (c->kind == O2M_VALUE_NODE && c->producer &&
         strcmp(c->producer->op_type, "Identity") == 0 && !c->producer->domain[0] &&
         c->producer->n_inputs == 1 && c->producer->inputs[0])
    c = c->producer->inputs[0];
  return c == body->input_values[1];
}

typedef struct loop_plan {
  const o2m_graph *body;
  int n_carried, n_scan;    /* n_scan: the scan outputs this loop collects */
  int has_m, has_cond;      /* has_cond: the body's condition output is carried on */
  int cond_stops;           /* the carried condition ends the loop */
  MlirValue m;              /* the trip count, i64 (has_m) */
  int prealloc[CTL_MAX];    /* scan output j is written into an M-sized buffer */
  MlirType elem[CTL_MAX];   /* per-iteration type of scan output j */
  MlirType types[2 + 2 * CTL_MAX]; /* the carried state: i, cond, carried, buffers */
  MlirLocation locs[2 + 2 * CTL_MAX];
  int n_state;
} loop_plan;

/* One iteration: runs the body on iteration number i (i64), condition c
 * (i1) and `state` (the carried tensors, then the scan buffers); next gets
 * the next i, c and state. */
static o2m_status loop_step(lw_ctx *cx, const loop_plan *p, MlirValue i, MlirValue c,
                            const MlirValue *state, MlirValue *next) {
  MlirValue args[2 + CTL_MAX], yields[1 + 2 * CTL_MAX];
  args[0] = tensor_of(cx, i);
  args[1] = tensor_of(cx, c);
  for (int k = 0; k < p->n_carried; k++) args[2 + k] = state[k];
  o2m_status s = lw_lower_subgraph(cx, p->body, 2 + p->n_carried, args, yields);
  if (s) return s;
  next[0] = lw_op1(cx, "arith.addi", 2, (MlirValue[]){i, lw_const_int(cx, lw_type(cx, "i64"), 1)},
                   lw_type(cx, "i64"), NULL);
  next[1] = p->has_cond ? scalar_of(cx, yields[0]) : c;
  if (!mlirTypeEqual(mlirValueGetType(next[1]), lw_type(cx, "i1")))
    return lw_unsupported(cx, "the body's condition output is not a bool");
  MlirValue at = p->n_scan ? lw_op1(cx, "arith.index_cast", 1, &i, lw_index_type(cx), NULL)
                           : (MlirValue){NULL};
  for (int j = 0; j < p->n_scan; j++) {
    MlirValue y = yields[1 + p->n_carried + j], buf = state[p->n_carried + j];
    if (!lw_cast_compatible(mlirValueGetType(y), p->elem[j]))
      return lw_unsupported(cx, "scan output %d changes its shape across iterations", j);
    y = lw_cast_tensor(cx, y, p->elem[j]);
    if (!p->prealloc[j]) { /* grow by one slice: [i, ...] -> [i + 1, ...] */
      int rank = lw_rank(y);
      lw_ix dims[LW_MAX_RANK + 1], zeros[LW_MAX_RANK + 1];
      dims[0] = lw_ix_bin(cx, LW_IX_ADD, lw_ix_v(at), lw_ix_c(1));
      for (int k = 0; k <= rank; k++) zeros[k] = lw_ix_c(0);
      for (int k = 0; k < rank; k++) dims[1 + k] = lw_ix_dim(cx, y, k);
      MlirValue grown = lw_empty_ix(cx, mlirValueGetType(buf), dims);
      buf = lw_insert_slice(cx, buf, grown, zeros);
    }
    next[2 + p->n_carried + j] = axis_slice(cx, y, buf, 0, lw_ix_v(at));
  }
  /* last: the copies into the carried buffers must follow every read of them */
  for (int k = 0; k < p->n_carried; k++) {
    MlirType t = p->types[2 + k];
    if (!lw_cast_compatible(mlirValueGetType(yields[1 + k]), t))
      return lw_unsupported(cx, "loop-carried value %d changes its shape across iterations", k);
    next[2 + k] = yield_into(cx, yields[1 + k], state[k],
                             same_dims(&p->body->input_values[2 + k]->type,
                                       &p->body->output_values[1 + k]->type));
  }
  return O2M_OK;
}

/* The scf.while of plan p from the initial state init (p->n_state values);
 * *op receives it. */
static o2m_status build_while(lw_ctx *cx, loop_plan *p, const MlirValue *init, MlirOperation *op) {
  MlirType i1 = lw_type(cx, "i1");
  p->types[0] = lw_type(cx, "i64"), p->types[1] = i1;
  for (int k = 0; k < p->n_state; k++) p->locs[k] = cx->loc;
  MlirBlock blocks[2] = {mlirBlockCreate(p->n_state, p->types, p->locs),
                         mlirBlockCreate(p->n_state, p->types, p->locs)};
  MlirBlock saved = cx->block;
  /* before: i < M && cond */
  cx->block = blocks[0];
  MlirValue go = mlirBlockGetArgument(blocks[0], 1), forward[1 + 2 + 2 * CTL_MAX];
  if (p->has_m) {
    MlirValue lt = lw_op1(cx, "arith.cmpi", 2, (MlirValue[]){mlirBlockGetArgument(blocks[0], 0), p->m},
                          i1, "predicate = 2 : i64");
    go = p->cond_stops ? lw_op1(cx, "arith.andi", 2, (MlirValue[]){lt, go}, i1, NULL) : lt;
  }
  forward[0] = go;
  for (int k = 0; k < p->n_state; k++) forward[1 + k] = mlirBlockGetArgument(blocks[0], k);
  lw_op(cx, "scf.condition", 1 + p->n_state, forward, 0, NULL, NULL, 0);
  cx->block = blocks[1];
  MlirValue state[2 * CTL_MAX], next[2 + 2 * CTL_MAX];
  for (int k = 2; k < p->n_state; k++) state[k - 2] = mlirBlockGetArgument(blocks[1], k);
  o2m_status s = loop_step(cx, p, mlirBlockGetArgument(blocks[1], 0),
                           mlirBlockGetArgument(blocks[1], 1), state, next);
  if (!s) lw_op(cx, "scf.yield", p->n_state, next, 0, NULL, NULL, 0);
  cx->block = saved;
  if (s) {
    lw_destroy_blocks(2, blocks);
    return s;
  }
  *op = lw_op(cx, "scf.while", p->n_state, init, p->n_state, p->types, NULL, 2);
  if (mlirOperationIsNull(*op)) {
    lw_destroy_blocks(2, blocks);
    return lw_error(cx, "internal: cannot create scf.while");
  }
  for (int b = 0; b < 2; b++) mlirRegionAppendOwnedBlock(mlirOperationGetRegion(*op, b), blocks[b]);
  return O2M_OK;
}

/* The scf.for of plan p, for a loop that runs exactly max(M, 0) times
 * (`trips`, an index) with the condition c: it carries init[2..] only. */
static o2m_status build_for(lw_ctx *cx, loop_plan *p, MlirValue trips, MlirValue c,
                            const MlirValue *init, MlirOperation *op) {
  int n = p->n_state - 2;
  MlirValue iv, state[2 * CTL_MAX], next[2 + 2 * CTL_MAX];
  lw_for_loop loop;
  o2m_status s = lw_for_begin(cx, &loop, lw_const_index(cx, 0), trips, n, init + 2, &iv, state);
  if (s) return s;
  *op = loop.op;
  MlirValue i = lw_op1(cx, "arith.index_cast", 1, &iv, lw_type(cx, "i64"), NULL);
  s = loop_step(cx, p, i, c, state, next);
  lw_for_end(cx, &loop, s ? NULL : next + 2, NULL);
  return s;
}

/* ---- bodies that cannot be built for these shapes ------------------------------------ */

/* scf.if (go) { the failure call (what, why) } */
static o2m_status fail_if(lw_ctx *cx, MlirValue go, const char *what, const char *why) {
  MlirBlock blocks[2] = {mlirBlockCreate(0, NULL, NULL), mlirBlockCreate(0, NULL, NULL)};
  MlirBlock saved = cx->block;
  cx->block = blocks[0];
  o2m_status s = lw_failure_call(cx, what, why);
  for (int b = 0; b < 2; b++) {
    cx->block = blocks[b];
    lw_op(cx, "scf.yield", 0, NULL, 0, NULL, NULL, 0);
  }
  cx->block = saved;
  MlirOperation op = s ? (MlirOperation){NULL} : lw_op(cx, "scf.if", 1, &go, 0, NULL, NULL, 2);
  if (mlirOperationIsNull(op)) {
    lw_destroy_blocks(2, blocks);
    return s ? s : lw_error(cx, "internal: cannot create scf.if");
  }
  for (int b = 0; b < 2; b++) mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, b), blocks[b]);
  return O2M_OK;
}

/* Output i of a loop that never runs its body: empty (every dim not known
 * from inference 0). */
static o2m_status empty_output(lw_ctx *cx, int i) {
  MlirType t = lw_tensor_type(cx, lw_out_type(cx, i));
  if (mlirTypeIsNull(t) || mlirShapedTypeGetRank(t) > LW_MAX_RANK)
    return lw_unsupported(cx, "output %d of a body that cannot be built has no known rank", i);
  MlirValue zeros[LW_MAX_RANK];
  for (int k = 0; k < mlirShapedTypeGetRank(t); k++) zeros[k] = lw_const_index(cx, 0);
  return lw_set_out(cx, i, lw_empty(cx, t, zeros));
}

/* A Loop whose body cannot be built for these shapes (inference marked
 * it): entered, it stops the call with the reason; else its outputs are
 * the initial values and empty scan outputs. */
static o2m_status loop_never_entered(lw_ctx *cx, const loop_plan *p, const MlirValue *init) {
  MlirType i1 = lw_type(cx, "i1"), i64 = lw_type(cx, "i64");
  MlirValue go = init[1];
  if (p->has_m) { /* 0 < M, and the condition */
    MlirValue some = lw_op1(cx, "arith.cmpi", 2, (MlirValue[]){lw_const_int(cx, i64, 0), p->m}, i1,
                            "predicate = 2 : i64");
    go = p->cond_stops ? lw_op1(cx, "arith.andi", 2, (MlirValue[]){some, go}, i1, NULL) : some;
  }
  o2m_status s = fail_if(cx, go, "the loop was entered", p->body->unbuildable);
  for (int k = 0; k < p->n_carried && !s; k++) s = lw_set_out(cx, k, init[2 + k]);
  for (int j = p->n_carried; j < cx->node->n_outputs && !s; j++) s = empty_output(cx, j);
  return s;
}

o2m_status lw_lower_loop(lw_ctx *cx) {
  loop_plan p;
  memset(&p, 0, sizeof(p));
  p.body = lw_attr_graph(cx, "body");
  if (!p.body) return lw_error(cx, "the body is missing");
  p.n_carried = cx->node->n_inputs - 2;
  int n_scan = p.body->n_outputs - 1 - p.n_carried;
  if (p.n_carried < 0 || n_scan < 0 || p.body->n_inputs != p.n_carried + 2)
    return lw_error(cx, "the body does not match the node's inputs");
  if (p.n_carried > CTL_MAX || n_scan > CTL_MAX)
    return lw_unsupported(cx, "more than %d loop-carried or scan values", CTL_MAX);
  p.has_m = lw_in_present(cx, 0);
  p.has_cond = p.cond_stops = lw_in_present(cx, 1);
  MlirType i64 = lw_type(cx, "i64"), i1 = lw_type(cx, "i1");
  /* the initial state */
  MlirValue init[2 + 2 * CTL_MAX];
  init[0] = lw_const_int(cx, i64, 0);
  init[1] = p.has_cond ? scalar_of(cx, lw_in(cx, 1)) : lw_const_int(cx, i1, 1);
  if (p.has_m) p.m = scalar_of(cx, lw_in(cx, 0));
  if ((p.has_m && (mlirValueIsNull(p.m) || !mlirTypeEqual(mlirValueGetType(p.m), i64))) ||
      mlirValueIsNull(init[1]) || !mlirTypeEqual(mlirValueGetType(init[1]), i1))
    return lw_error(cx, "the trip count must be an int64 and the condition a bool");
  for (int k = 0; k < p.n_carried; k++) {
    MlirValue v = lw_in(cx, 2 + k);
    if (mlirValueIsNull(v) || !lw_is_ranked(mlirValueGetType(v)))
      return lw_unsupported(cx, "loop-carried value %d is not a ranked tensor", k);
    MlirType body_t = lw_tensor_type(cx, &p.body->input_values[2 + k]->type);
    MlirType t = lw_join_types(mlirValueGetType(v), body_t);
    if (mlirTypeIsNull(t))
      return lw_unsupported(cx, "loop-carried value %d does not fit the body's input", k);
    p.types[2 + k] = t;
    init[2 + k] = lw_cast_tensor(cx, v, t);
  }
  if (p.body->unbuildable) return loop_never_entered(cx, &p, init);
  /* Scan outputs go into a buffer of M slices when M bounds the loop:
   * exactly, or as an upper bound when the condition never changes, or as
   * a small constant (the buffer is then sliced to the iterations run).
   * Otherwise, with static per-iteration shapes, a first loop counts the
   * iterations (the body runs twice: ONNX bodies have no side effects) and
   * a second collects them; else the buffers grow by a slice an iteration. */
  int64_t *m_known = NULL;
  int m_small = p.has_m && lw_in_known_ints(cx, 0, &m_known) == 1 && m_known[0] <= (1 << 16);
  int bounded = p.has_m && (!p.has_cond || body_keeps_condition(p.body) || m_small);
  int all_static = 1;
  for (int j = 0; j < n_scan; j++) {
    const o2m_value *out = p.body->output_values[1 + p.n_carried + j];
    p.elem[j] = lw_tensor_type(cx, &out->type);
    if (mlirTypeIsNull(p.elem[j]) || mlirShapedTypeGetRank(p.elem[j]) > LW_MAX_RANK - 1)
      return lw_unsupported(cx, "scan output '%s' is not a ranked tensor of a supported dtype",
                            out->name);
    all_static &= mlirShapedTypeHasStaticShape(p.elem[j]);
  }
  o2m_status s = O2M_OK;
  MlirOperation op;
  if (n_scan && !bounded && all_static) { /* the counting loop */
    p.n_state = 2 + p.n_carried;
    if ((s = build_while(cx, &p, init, &op))) return s;
    p.m = mlirOperationGetResult(op, 0);
    p.has_m = bounded = 1;
    p.cond_stops = 0;
  }
  p.n_scan = n_scan;
  /* a for loop when nothing but M ends it */
  int64_t *c_known = NULL;
  int for_loop = p.has_m && (!p.has_cond || (lw_in_known_ints(cx, 1, &c_known) == 1 && c_known[0] &&
                                             body_keeps_condition(p.body)));
  MlirValue m_index = (MlirValue){NULL};
  if (for_loop || (bounded && n_scan)) { /* max(M, 0) */
    MlirValue m = lw_op1(cx, "arith.index_cast", 1, &p.m, lw_index_type(cx), NULL);
    m_index = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_MAX, lw_ix_v(m), lw_ix_c(0)));
  }
  for (int j = 0; j < n_scan; j++) {
    int rank = (int)mlirShapedTypeGetRank(p.elem[j]);
    p.prealloc[j] = bounded && mlirShapedTypeHasStaticShape(p.elem[j]);
    lw_ix dims[LW_MAX_RANK + 1];
    dims[0] = p.prealloc[j] ? lw_ix_v(m_index) : lw_ix_c(0);
    for (int k = 0; k < rank; k++) { /* an unknown size starts at 0: nothing in it yet */
      int64_t d = mlirShapedTypeGetDimSize(p.elem[j], k);
      dims[1 + k] = lw_ix_c(mlirShapedTypeIsDynamicSize(d) ? 0 : d);
    }
    p.types[2 + p.n_carried + j] = with_axis(p.elem[j], 0, 1, -1);
    init[2 + p.n_carried + j] = lw_empty_ix(cx, p.types[2 + p.n_carried + j], dims);
  }
  p.n_state = 2 + p.n_carried + p.n_scan;
  MlirValue count;
  int first; /* the result of the first carried tensor */
  if (for_loop) {
    if ((s = build_for(cx, &p, m_index, init[1], init, &op))) return s;
    count = m_index, first = 0;
  } else {
    if ((s = build_while(cx, &p, init, &op))) return s;
    count = mlirOperationGetResult(op, 0), first = 2;
    count = lw_op1(cx, "arith.index_cast", 1, &count, lw_index_type(cx), NULL);
  }
  for (int k = 0; k < p.n_carried && !s; k++) s = lw_set_out(cx, k, mlirOperationGetResult(op, first + k));
  for (int j = 0; j < p.n_scan && !s; j++) {
    MlirValue buf = mlirOperationGetResult(op, first + p.n_carried + j);
    if (p.prealloc[j] && !for_loop) { /* the iterations run */
      int rank = lw_rank(buf);
      lw_ix zeros[LW_MAX_RANK + 1], sizes[LW_MAX_RANK + 1];
      for (int k = 0; k < rank; k++) zeros[k] = lw_ix_c(0), sizes[k] = lw_ix_dim(cx, buf, k);
      sizes[0] = lw_ix_v(count);
      buf = lw_extract_slice(cx, buf, zeros, sizes, NULL);
    }
    s = lw_set_out(cx, p.n_carried + j, buf);
  }
  return s;
}

/* ---- Scan ------------------------------------------------------------------------------ */

typedef struct scan_plan {
  const o2m_graph *body;
  int n_state, n_scan_in, n_scan_out;
  int in_axis[CTL_MAX], in_rev[CTL_MAX], out_axis[CTL_MAX], out_rev[CTL_MAX];
} scan_plan;

/* Reads an axis/direction attribute (default 0) into out[n]. */
static o2m_status scan_attr(lw_ctx *cx, const char *name, int n, int *out) {
  const int64_t *v = NULL;
  int count = lw_attr_ints(cx, name, &v);
  if (count >= 0 && count != n) return lw_error(cx, "'%s' has %d entries, %d expected", name, count, n);
  for (int k = 0; k < n; k++) out[k] = count > 0 ? (int)v[k] : 0;
  return O2M_OK;
}

/* The scan over states (body-level types) and scanned inputs xs:
 * results gets the final states, then the stacked scan outputs. */
static o2m_status scan_loop(lw_ctx *cx, const scan_plan *p, const MlirValue *states,
                            const MlirValue *xs, MlirValue *results) {
  const o2m_graph *body = p->body;
  MlirValue xin[CTL_MAX];
  int in_axis[CTL_MAX];
  for (int j = 0; j < p->n_scan_in; j++) {
    xin[j] = xs[j];
    int rank = lw_rank(xs[j]);
    in_axis[j] = lw_norm_axis(cx, p->in_axis[j], rank);
    if (in_axis[j] < 0) return O2M_ERR_INVALID;
  }
  lw_ix len = lw_ix_dim(cx, xin[0], in_axis[0]);
  int n_carry = p->n_state + p->n_scan_out;
  MlirType types[1 + 2 * CTL_MAX], elem[CTL_MAX];
  MlirValue init[2 * CTL_MAX];
  int out_axis[CTL_MAX];
  types[0] = lw_index_type(cx);
  for (int k = 0; k < p->n_state; k++) {
    MlirType t = lw_join_types(mlirValueGetType(states[k]),
                            lw_tensor_type(cx, &body->input_values[k]->type));
    if (mlirTypeIsNull(t)) return lw_unsupported(cx, "state %d does not fit the body's input", k);
    types[1 + k] = t;
    init[k] = lw_cast_tensor(cx, states[k], t);
  }
  for (int j = 0; j < p->n_scan_out; j++) {
    const o2m_value *out = body->output_values[p->n_state + j];
    elem[j] = lw_tensor_type(cx, &out->type);
    if (mlirTypeIsNull(elem[j]) || !mlirShapedTypeHasStaticShape(elem[j]))
      return lw_unsupported(cx, "scan output '%s' has no static per-iteration shape", out->name);
    int rank = (int)mlirShapedTypeGetRank(elem[j]);
    if (rank >= LW_MAX_RANK) return lw_unsupported(cx, "scan output of too high a rank");
    out_axis[j] = lw_norm_axis(cx, p->out_axis[j], rank + 1);
    if (out_axis[j] < 0) return O2M_ERR_INVALID;
    types[1 + p->n_state + j] = with_axis(elem[j], out_axis[j], 1, lw_ix_is_const(len) ? len.c : -1);
    lw_ix dims[LW_MAX_RANK + 1];
    for (int k = 0; k <= rank; k++)
      dims[k] = k == out_axis[j] ? len : lw_ix_c(mlirShapedTypeGetDimSize(elem[j], k < out_axis[j] ? k : k - 1));
    init[p->n_state + j] = lw_empty_ix(cx, types[1 + p->n_state + j], dims);
  }
  lw_for_loop loop;
  MlirValue t, carried[2 * CTL_MAX], args[2 * CTL_MAX], yields[2 * CTL_MAX];
  o2m_status s = lw_for_begin(cx, &loop, lw_const_index(cx, 0), lw_ix_value(cx, len), n_carry, init, &t,
                              carried);
  if (s) return s;
  lw_ix back = {{NULL}, 0};
  if (p->n_scan_in || p->n_scan_out) /* len - 1 - t */
    back = lw_ix_bin(cx, LW_IX_SUB, lw_ix_bin(cx, LW_IX_SUB, len, lw_ix_c(1)), lw_ix_v(t));
  for (int k = 0; k < p->n_state; k++) args[k] = carried[k];
  for (int j = 0; j < p->n_scan_in; j++)
    args[p->n_state + j] = axis_slice(cx, xin[j], (MlirValue){NULL}, in_axis[j],
                                      p->in_rev[j] ? back : lw_ix_v(t));
  s = lw_lower_subgraph(cx, body, p->n_state + p->n_scan_in, args, yields);
  for (int j = 0; j < p->n_scan_out && !s; j++) {
    MlirValue y = yields[p->n_state + j];
    if (!lw_cast_compatible(mlirValueGetType(y), elem[j])) {
      s = lw_unsupported(cx, "scan output %d does not have its inferred shape", j);
      break;
    }
    yields[p->n_state + j] = axis_slice(cx, lw_cast_tensor(cx, y, elem[j]),
                                        carried[p->n_state + j], out_axis[j],
                                        p->out_rev[j] ? back : lw_ix_v(t));
  }
  /* last: the copies into the state buffers must follow every read of them */
  for (int k = 0; k < p->n_state && !s; k++) {
    if (!lw_cast_compatible(mlirValueGetType(yields[k]), types[1 + k]))
      s = lw_unsupported(cx, "state %d changes its shape across iterations", k);
    else
      yields[k] = yield_into(cx, yields[k], carried[k],
                             same_dims(&body->input_values[k]->type, &body->output_values[k]->type));
  }
  lw_for_end(cx, &loop, s ? NULL : yields, s ? NULL : results);
  return s;
}

/* Scan-8: dim 0 of every input and output is a batch dim; the scan runs
 * once per batch entry. */
static o2m_status scan_batched(lw_ctx *cx, const scan_plan *p, const MlirValue *ins,
                               MlirValue *results) {
  int n_in = p->n_state + p->n_scan_in, n_out = p->n_state + p->n_scan_out;
  lw_ix batch = lw_ix_dim(cx, ins[0], 0);
  MlirValue init[2 * CTL_MAX];
  for (int i = 0; i < n_out; i++) {
    MlirType t = lw_tensor_type(cx, lw_out_type(cx, i));
    if (mlirTypeIsNull(t) || !lw_out_present(cx, i)) {
      /* an unused output: sized from the body's output, as inferred */
      const o2m_type *bt = &p->body->output_values[i]->type;
      t = lw_tensor_type(cx, bt);
      if (mlirTypeIsNull(t)) return lw_unsupported(cx, "output %d is not a ranked tensor", i);
      t = with_axis(t, 0, 1, -1);
      if (i >= p->n_state) t = with_axis(t, 1, 1, -1);
    }
    int rank = (int)mlirShapedTypeGetRank(t);
    lw_ix dims[LW_MAX_RANK];
    for (int k = 0; k < rank && k < LW_MAX_RANK; k++) {
      int64_t d = mlirShapedTypeGetDimSize(t, k);
      if (!mlirShapedTypeIsDynamicSize(d)) dims[k] = lw_ix_c(d);
      else if (k == 0) dims[k] = batch;
      else if (i < p->n_state && lw_rank(ins[i]) == rank) dims[k] = lw_ix_dim(cx, ins[i], k);
      else if (i >= p->n_state && k == 1) dims[k] = lw_ix_dim(cx, ins[p->n_state], 1);
      else return lw_unsupported(cx, "output %d has a dynamic dim %d of unknown size", i, k);
    }
    init[i] = lw_empty_ix(cx, t, dims);
  }
  lw_for_loop loop;
  MlirValue iv, dests[2 * CTL_MAX];
  o2m_status s = lw_for_begin(cx, &loop, lw_const_index(cx, 0), lw_ix_value(cx, batch), n_out, init, &iv,
                              dests);
  if (s) return s;
  lw_ix b = lw_ix_v(iv);
  MlirValue parts[2 * CTL_MAX], done[2 * CTL_MAX], yields[2 * CTL_MAX];
  for (int i = 0; i < n_in; i++) parts[i] = axis_slice(cx, ins[i], (MlirValue){NULL}, 0, b);
  s = scan_loop(cx, p, parts, parts + p->n_state, done);
  for (int i = 0; i < n_out && !s; i++) {
    MlirValue dest = dests[i];
    MlirType want = with_axis(mlirValueGetType(dest), 0, 0, 0);
    if (!lw_cast_compatible(mlirValueGetType(done[i]), want)) {
      s = lw_unsupported(cx, "output %d does not have its inferred shape", i);
      break;
    }
    yields[i] = axis_slice(cx, lw_cast_tensor(cx, done[i], want), dest, 0, b);
  }
  lw_for_end(cx, &loop, s ? NULL : yields, s ? NULL : results);
  return s;
}

/* A Scan whose body cannot be built for these shapes (inference marked it
 * where the scanned length may be 0): a non-empty scan stops the call with
 * the reason; else the states pass through and the scan outputs are empty. */
static o2m_status scan_never_entered(lw_ctx *cx, const scan_plan *p, const MlirValue *ins) {
  MlirValue length = lw_dim(cx, ins[p->n_state], p->in_axis[0]);
  MlirValue go = lw_op1(cx, "arith.cmpi", 2, (MlirValue[]){lw_const_index(cx, 0), length}, lw_type(cx, "i1"),
                        "predicate = 2 : i64");
  o2m_status s = fail_if(cx, go, "the scan is not empty", p->body->unbuildable);
  for (int i = 0; i < p->n_state && !s; i++) s = lw_set_out(cx, i, ins[i]);
  for (int j = p->n_state; j < cx->node->n_outputs && !s; j++) s = empty_output(cx, j);
  return s;
}

o2m_status lw_lower_scan(lw_ctx *cx) {
  scan_plan p;
  memset(&p, 0, sizeof(p));
  p.body = lw_attr_graph(cx, "body");
  if (!p.body) return lw_error(cx, "the body is missing");
  int batched = cx->node->opset < 9, first = batched;
  int n_in = cx->node->n_inputs - first;
  p.n_scan_in = (int)lw_attr_int(cx, "num_scan_inputs", -1);
  p.n_state = n_in - p.n_scan_in;
  p.n_scan_out = p.body->n_outputs - p.n_state;
  if (p.n_scan_in < 1 || p.n_state < 0 || p.n_scan_out < 0 || p.body->n_inputs != n_in ||
      cx->node->n_outputs != p.body->n_outputs)
    return lw_error(cx, "the body does not match the node's inputs and outputs");
  if (n_in > CTL_MAX || p.n_scan_out > CTL_MAX)
    return lw_unsupported(cx, "more than %d states or scanned values", CTL_MAX);
  o2m_status s;
  if (batched) {
    if ((s = scan_attr(cx, "directions", p.n_scan_in, p.in_rev))) return s;
  } else if ((s = scan_attr(cx, "scan_input_axes", p.n_scan_in, p.in_axis)) ||
             (s = scan_attr(cx, "scan_input_directions", p.n_scan_in, p.in_rev)) ||
             (s = scan_attr(cx, "scan_output_axes", p.n_scan_out, p.out_axis)) ||
             (s = scan_attr(cx, "scan_output_directions", p.n_scan_out, p.out_rev))) {
    return s;
  }
  MlirValue ins[2 * CTL_MAX], results[2 * CTL_MAX];
  for (int i = 0; i < n_in; i++) {
    ins[i] = lw_in(cx, first + i);
    if (mlirValueIsNull(ins[i]) || !lw_is_ranked(mlirValueGetType(ins[i])))
      return lw_unsupported(cx, "input %d is not a ranked tensor", first + i);
  }
  if (batched && lw_in_present(cx, 0)) { /* sequence_lens: only the full length */
    int64_t *lens = NULL;
    int64_t n = lw_in_known_ints(cx, 0, &lens);
    MlirType x = mlirValueGetType(ins[p.n_state]);
    int64_t len = mlirShapedTypeGetRank(x) > 1 ? mlirShapedTypeGetDimSize(x, 1) : -1;
    for (int64_t k = 0; k < n; k++)
      if (mlirShapedTypeIsDynamicSize(len) || lens[k] != len) n = -1;
    if (n < 0)
      return lw_unsupported(cx, "sequence_lens other than a known full length for every batch entry");
  }
  if (p.body->unbuildable) return scan_never_entered(cx, &p, ins);
  s = batched ? scan_batched(cx, &p, ins, results) : scan_loop(cx, &p, ins, ins + p.n_state, results);
  for (int i = 0; i < cx->node->n_outputs && !s; i++) s = lw_set_out(cx, i, results[i]);
  return s;
}
