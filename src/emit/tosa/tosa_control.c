/* tosa_control.c - TOSA lowerings of the control-flow ops: If to
 * tosa.cond_if, Loop to tosa.while_loop.
 *
 * TOSA's regions are isolated from above (the spec's strict form): every
 * value of an enclosing graph that a body uses (the node's captures) is
 * passed in as an operand and becomes a block argument; constants are
 * made inside the region (lw_scope). A known condition lowers the If
 * branch taken inline, as on every target.
 *
 * Loop carries (iteration number i64, condition, trip count, the
 * loop-carried values, the captures) through tosa.while_loop: the
 * condition region computes i < M && cond, the body region runs the body
 * graph and yields i + 1, its condition and carried values. Carried
 * values must keep their type (TOSA loops cannot change shapes); scan
 * outputs are not lowered (TOSA has no way to write a growing result).
 *
 * Must not: lower sequences or optionals.
 */
#include <string.h>

#include "emit/tosa/tosa_kit.h"
#include "util/diag.h"

enum { CTL_MAX = 64 };

/* The operands a region gets for the node's captures: the enclosing
 * values of those that are not known at import (known ones become
 * constants inside). Returns the count, or -1 when a capture is not a
 * ranked tensor. */
static int capture_operands(lw_ctx *cx, const o2m_value **which, MlirValue *values) {
  int n = 0;
  for (int i = 0; i < cx->node->n_captures && n < CTL_MAX; i++) {
    const o2m_value *v = cx->node->captures[i];
    if (v->known || v->init) continue;
    MlirValue m = lw_get(cx, v);
    if (mlirValueIsNull(m) || !lw_is_ranked(mlirValueGetType(m))) return -1;
    which[n] = v;
    values[n++] = m;
  }
  return n;
}

/* A block whose arguments have the types of values[0..n). */
static MlirBlock block_for(lw_ctx *cx, int n, const MlirValue *values) {
  MlirType types[3 * CTL_MAX];
  MlirLocation locs[3 * CTL_MAX];
  for (int i = 0; i < n; i++) types[i] = mlirValueGetType(values[i]), locs[i] = cx->loc;
  return mlirBlockCreate(n, types, locs);
}

/* ---- If ----------------------------------------------------------------------- */

/* Builds one branch into its block: captures bound to the block's
 * arguments, yields cast to types (NULL: taken as they are). */
typedef struct branch_captures {
  int n;
  const o2m_value **values;
} branch_captures;

static o2m_status build_branch(lw_ctx *cx, const o2m_graph *g, MlirBlock block, MlirValue *yields,
                               void *user) {
  const branch_captures *caps = user;
  lw_scope saved;
  lw_scope_enter(cx, &saved, block);
  for (int k = 0; k < caps->n; k++) lw_map(cx, caps->values[k], mlirBlockGetArgument(block, k));
  o2m_status s = lw_lower_subgraph(cx, g, 0, NULL, yields);
  lw_scope_leave(cx, &saved);
  return s;
}

/* The body of a branch that cannot be built (lw_fail_branch), in its
 * isolated region. */
static o2m_status build_failing_branch(lw_ctx *cx, int else_branch, const char *reason, MlirBlock block,
                                       int n, const MlirValue *other, MlirValue *yields) {
  lw_scope saved;
  lw_scope_enter(cx, &saved, block);
  o2m_status s = lw_fail_branch(cx, else_branch, reason, n, other, yields);
  lw_scope_leave(cx, &saved);
  return s;
}

o2m_status tw_lower_if(lw_ctx *cx) {
  int64_t *known;
  if (lw_in_known_ints(cx, 0, &known) >= 1) /* the branch taken, inline */
    return lw_lower_if_with(cx, "tosa.cond_if", "tosa.yield", NULL);
  const o2m_graph *branch[2] = {lw_attr_graph(cx, "then_branch"), lw_attr_graph(cx, "else_branch")};
  int n = cx->node->n_outputs;
  if (!branch[0] || !branch[1]) return lw_error(cx, "a branch is missing");
  if (n > CTL_MAX) return lw_unsupported(cx, "more than %d outputs", CTL_MAX);
  for (int b = 0; b < 2; b++)
    if (branch[b]->n_outputs != n)
      return lw_error(cx, "a branch has %d outputs, the node %d", branch[b]->n_outputs, n);
  MlirValue operands[CTL_MAX + 1], yields[2][CTL_MAX];
  const o2m_value *caps[CTL_MAX];
  int n_caps = capture_operands(cx, caps, operands + 1);
  if (n_caps < 0) return lw_unsupported(cx, "a value the branches use is not a ranked tensor");
  operands[0] = tw_reshape(cx, lw_in(cx, 0), 0, NULL);
  if (mlirValueIsNull(operands[0])) return lw_error(cx, "the condition is missing");
  MlirBlock blocks[2] = {block_for(cx, n_caps, operands + 1), block_for(cx, n_caps, operands + 1)};
  o2m_status s = O2M_OK;
  branch_captures captures = {n_caps, caps};
  const char *failure[2] = {NULL, NULL};
  for (int b = 0; b < 2 && !s; b++)
    s = lw_try_branch(cx, branch[b], blocks[b], yields[b], &failure[b], build_branch, &captures);
  if (!s && failure[0] && failure[1]) s = o2m_fail(cx->diag, O2M_ERR_INVALID, "%s", failure[0]);
  for (int b = 0; b < 2 && !s; b++)
    if (failure[b]) s = build_failing_branch(cx, b, failure[b], blocks[b], n, yields[1 - b], yields[b]);
  MlirType types[CTL_MAX];
  for (int i = 0; i < n && !s; i++) {
    types[i] = lw_join_types(mlirValueGetType(yields[0][i]), mlirValueGetType(yields[1][i]));
    if (mlirTypeIsNull(types[i]))
      s = lw_unsupported(cx, "the branches' output %d have different ranks or element types", i);
  }
  MlirBlock saved = cx->block;
  for (int b = 0; b < 2 && !s; b++) {
    cx->block = blocks[b];
    for (int i = 0; i < n; i++) yields[b][i] = lw_cast_tensor(cx, yields[b][i], types[i]);
    lw_op(cx, "tosa.yield", n, yields[b], 0, NULL, NULL, 0);
  }
  cx->block = saved;
  MlirOperation op = s ? (MlirOperation){NULL}
                       : lw_op(cx, "tosa.cond_if", n_caps + 1, operands, n, types, NULL, 2);
  if (mlirOperationIsNull(op)) {
    lw_destroy_blocks(2, blocks);
    return s ? s : lw_error(cx, "internal: cannot create tosa.cond_if");
  }
  for (int b = 0; b < 2; b++) mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, b), blocks[b]);
  for (int i = 0; i < n && !s; i++) s = lw_set_out(cx, i, mlirOperationGetResult(op, i));
  return s;
}

/* ---- Loop ----------------------------------------------------------------------- */

/* The carried state, in order: i (i64), cond (i1), M (i64), the n_v
 * loop-carried values, the captures. */
enum { STATE_I, STATE_COND, STATE_M, STATE_V };

static MlirValue scalar_i64(lw_ctx *cx, int64_t v) {
  return tw_splat(cx, mlirIntegerTypeGet(cx->mc, 64), 0, (double)v);
}

/* The condition region: i < M && cond. */
static void build_condition(lw_ctx *cx, MlirBlock block) {
  lw_scope saved;
  lw_scope_enter(cx, &saved, block);
  MlirValue i = mlirBlockGetArgument(block, STATE_I), m = mlirBlockGetArgument(block, STATE_M);
  MlirValue go = tw_binary(cx, "tosa.logical_and", tw_compare(cx, "tosa.greater", m, i),
                           mlirBlockGetArgument(block, STATE_COND));
  lw_op(cx, "tosa.yield", 1, &go, 0, NULL, NULL, 0);
  lw_scope_leave(cx, &saved);
}

/* The body region: the body graph on (i, cond, v...), yielding the next
 * state. */
static o2m_status build_body(lw_ctx *cx, const o2m_graph *body, MlirBlock block, int n_state,
                             int n_v, int n_caps, const o2m_value **caps) {
  lw_scope saved;
  lw_scope_enter(cx, &saved, block);
  for (int k = 0; k < n_caps; k++) lw_map(cx, caps[k], mlirBlockGetArgument(block, STATE_V + n_v + k));
  MlirValue args[CTL_MAX + 2], yields[CTL_MAX + 1], next[3 * CTL_MAX];
  args[0] = mlirBlockGetArgument(block, STATE_I);
  args[1] = mlirBlockGetArgument(block, STATE_COND);
  for (int k = 0; k < n_v; k++) args[2 + k] = mlirBlockGetArgument(block, STATE_V + k);
  /* the body's iteration-number and condition inputs may be declared rank 0 or 1 */
  for (int k = 0; k < 2; k++) {
    const o2m_type *t = &body->input_values[k]->type;
    int64_t one[1] = {1};
    if (t->kind == O2M_TYPE_TENSOR && t->rank == 1) args[k] = tw_reshape(cx, args[k], 1, one);
  }
  o2m_status s;
  if (body->unbuildable) { /* stops the call when entered; the state as it came */
    s = lw_failure_call(cx, "the loop was entered", body->unbuildable);
    yields[0] = args[1];
    for (int k = 0; k < n_v; k++) yields[1 + k] = args[2 + k];
  } else {
    s = lw_lower_subgraph(cx, body, 2 + n_v, args, yields);
  }
  if (!s) {
    next[STATE_I] = tw_binary(cx, "tosa.add", mlirBlockGetArgument(block, STATE_I), scalar_i64(cx, 1));
    next[STATE_COND] = tw_reshape(cx, yields[0], 0, NULL);
    next[STATE_M] = mlirBlockGetArgument(block, STATE_M);
    for (int k = 0; k < n_v && !s; k++) {
      MlirType want = mlirValueGetType(mlirBlockGetArgument(block, STATE_V + k));
      if (!mlirTypeEqual(mlirValueGetType(yields[1 + k]), want))
        s = lw_unsupported(cx, "loop-carried value %d changes its type (TOSA loops keep shapes)", k);
      next[STATE_V + k] = yields[1 + k];
    }
    for (int k = 0; k < n_caps; k++) next[STATE_V + n_v + k] = mlirBlockGetArgument(block, STATE_V + n_v + k);
    if (!s) lw_op(cx, "tosa.yield", n_state, next, 0, NULL, NULL, 0);
  }
  lw_scope_leave(cx, &saved);
  return s;
}

o2m_status tw_lower_loop(lw_ctx *cx) {
  const o2m_graph *body = lw_attr_graph(cx, "body");
  if (!body) return lw_error(cx, "the body is missing");
  int n_v = cx->node->n_inputs - 2;
  if (n_v < 0 || n_v > CTL_MAX) return lw_unsupported(cx, "%d loop-carried values", n_v);
  if (cx->node->n_outputs > n_v) return lw_unsupported(cx, "scan outputs (TOSA loops cannot build a growing result)");
  if (body->n_inputs != n_v + 2 || body->n_outputs != n_v + 1)
    return lw_error(cx, "the body has %d inputs and %d outputs for %d carried values", body->n_inputs,
                    body->n_outputs, n_v);
  MlirValue state[3 * CTL_MAX];
  const o2m_value *caps[CTL_MAX];
  int n_caps = capture_operands(cx, caps, state + STATE_V + n_v);
  if (n_caps < 0) return lw_unsupported(cx, "a value the body uses is not a ranked tensor");
  MlirValue m = lw_in(cx, 0), c = lw_in(cx, 1);
  state[STATE_I] = scalar_i64(cx, 0);
  state[STATE_M] = mlirValueIsNull(m) ? scalar_i64(cx, INT64_MAX)
                                      : tw_reshape(cx, tw_cast(cx, m, lw_in_type(cx, 0)->elem, O2M_DT_INT64), 0, NULL);
  state[STATE_COND] = mlirValueIsNull(c) ? tw_splat(cx, mlirIntegerTypeGet(cx->mc, 1), 0, 1)
                                         : tw_reshape(cx, c, 0, NULL);
  for (int k = 0; k < n_v; k++) {
    state[STATE_V + k] = lw_in(cx, 2 + k);
    if (mlirValueIsNull(state[STATE_V + k]) || !lw_is_ranked(mlirValueGetType(state[STATE_V + k])))
      return lw_unsupported(cx, "loop-carried value %d is not a ranked tensor", k);
  }
  int n_state = STATE_V + n_v + n_caps;
  MlirBlock blocks[2] = {block_for(cx, n_state, state), block_for(cx, n_state, state)};
  build_condition(cx, blocks[0]);
  o2m_status s = build_body(cx, body, blocks[1], n_state, n_v, n_caps, caps);
  MlirType types[3 * CTL_MAX];
  for (int k = 0; k < n_state; k++) types[k] = mlirValueGetType(state[k]);
  MlirOperation op = s ? (MlirOperation){NULL} : lw_op(cx, "tosa.while_loop", n_state, state, n_state, types, NULL, 2);
  if (mlirOperationIsNull(op)) {
    lw_destroy_blocks(2, blocks);
    return s ? s : lw_error(cx, "internal: cannot create tosa.while_loop");
  }
  for (int b = 0; b < 2; b++) mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, b), blocks[b]);
  for (int k = 0; k < n_v && !s; k++) s = lw_set_out(cx, k, mlirOperationGetResult(op, STATE_V + k));
  return s;
}
