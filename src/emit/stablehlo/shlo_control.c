/* shlo_control.c - StableHLO lowerings of control flow: If to
 * stablehlo.if, Loop to stablehlo.while; and the sequence and optional
 * ops, unrolled (kit_sequence.c) with StableHLO's shape ops.
 *
 * StableHLO's regions see the values of enclosing regions, so branch and
 * loop bodies use the graph's captures directly. A known condition lowers
 * the If branch taken inline, as on every target.
 *
 * Loop carries (iteration number i64, condition, trip count, the
 * loop-carried values) through stablehlo.while: the cond region computes
 * i < M && cond, the body region runs the body graph and returns i + 1,
 * its condition and carried values. Carried values keep their type (a
 * while's operands and results have one type); a Loop with scan outputs
 * is left to the transform layer, which unrolls it when its trip count is
 * known (keeps() in shlo_emit.c). */
#include <stdint.h>

#include "emit/stablehlo/shlo_kit.h"

enum { CTL_MAX = 64 };

/* ---- If --------------------------------------------------------------------- */

static MlirValue scalar_condition(lw_ctx *cx, MlirValue cond) {
  MlirValue c = sh_convert(cx, cond, sh_i1(cx));
  return sh_reshape(cx, c, 0, NULL);
}

static o2m_status lower_if(lw_ctx *cx) {
  return lw_lower_if_with(cx, "stablehlo.if", "stablehlo.return", scalar_condition);
}

o2m_status sh_lower_seq_if(lw_ctx *cx) { return lw_lower_seq_if_with(cx, lower_if); }

/* ---- Loop ------------------------------------------------------------------- */

/* The carried state, in order: i (i64), cond (i1), M (i64), the n_v
 * loop-carried values. */
enum { STATE_I, STATE_COND, STATE_M, STATE_V };

/* The cond region: i < M && cond. */
static void build_condition(lw_ctx *cx, MlirBlock block) {
  MlirBlock saved = cx->block;
  cx->block = block;
  MlirValue i = mlirBlockGetArgument(block, STATE_I), m = mlirBlockGetArgument(block, STATE_M);
  MlirValue go = sh_binary(cx, "stablehlo.and", sh_compare(cx, "LT", i, m),
                           mlirBlockGetArgument(block, STATE_COND));
  lw_op(cx, "stablehlo.return", 1, &go, 0, NULL, NULL, 0);
  cx->block = saved;
}

/* The body region: the body graph on (i, cond, v...), returning the next
 * state. */
static o2m_status build_body(lw_ctx *cx, const o2m_graph *body, MlirBlock block, int n_v) {
  MlirBlock saved = cx->block;
  cx->block = block;
  MlirValue args[CTL_MAX + 2], yields[CTL_MAX + 1], next[CTL_MAX + STATE_V];
  args[0] = mlirBlockGetArgument(block, STATE_I);
  args[1] = mlirBlockGetArgument(block, STATE_COND);
  for (int k = 0; k < n_v; k++) args[2 + k] = mlirBlockGetArgument(block, STATE_V + k);
  /* the body's iteration-number and condition inputs may be declared rank 0 or 1 */
  for (int k = 0; k < 2; k++) {
    const o2m_type *t = &body->input_values[k]->type;
    int64_t one[1] = {1};
    if (t->kind == O2M_TYPE_TENSOR && t->rank == 1) args[k] = sh_reshape(cx, args[k], 1, one);
  }
  o2m_status s = lw_lower_subgraph(cx, body, 2 + n_v, args, yields);
  if (!s) {
    next[STATE_I] = sh_binary(cx, "stablehlo.add", mlirBlockGetArgument(block, STATE_I),
                              sh_scalar(cx, sh_i64(cx), 1));
    next[STATE_COND] = scalar_condition(cx, yields[0]);
    next[STATE_M] = mlirBlockGetArgument(block, STATE_M);
    for (int k = 0; k < n_v && !s; k++) {
      MlirType want = mlirValueGetType(mlirBlockGetArgument(block, STATE_V + k));
      next[STATE_V + k] = lw_cast_compatible(mlirValueGetType(yields[1 + k]), want)
                              ? lw_cast_tensor(cx, yields[1 + k], want)
                              : (MlirValue){NULL};
      if (mlirValueIsNull(next[STATE_V + k]))
        s = lw_unsupported(cx, "loop-carried value %d changes its type (a while keeps its operands' types)", k);
    }
    if (!s) lw_op(cx, "stablehlo.return", STATE_V + n_v, next, 0, NULL, NULL, 0);
  }
  cx->block = saved;
  return s;
}

o2m_status sh_lower_loop(lw_ctx *cx) {
  const o2m_graph *body = lw_attr_graph(cx, "body");
  if (!body) return lw_error(cx, "the body is missing");
  int n_v = cx->node->n_inputs - 2;
  if (n_v < 0 || n_v > CTL_MAX) return lw_unsupported(cx, "%d loop-carried values", n_v);
  if (cx->node->n_outputs > n_v)
    return lw_unsupported(cx, "scan outputs (a while cannot build a growing result)");
  if (body->n_inputs != n_v + 2 || body->n_outputs != n_v + 1)
    return lw_error(cx, "the body has %d inputs and %d outputs for %d carried values", body->n_inputs,
                    body->n_outputs, n_v);
  MlirValue state[CTL_MAX + STATE_V];
  MlirValue m = lw_in(cx, 0), c = lw_in(cx, 1);
  state[STATE_I] = sh_scalar(cx, sh_i64(cx), 0);
  state[STATE_M] = mlirValueIsNull(m) ? sh_scalar(cx, sh_i64(cx), (double)INT64_MAX)
                                      : sh_reshape(cx, sh_convert(cx, m, sh_i64(cx)), 0, NULL);
  state[STATE_COND] = mlirValueIsNull(c) ? sh_scalar(cx, sh_i1(cx), 1) : scalar_condition(cx, c);
  for (int k = 0; k < n_v; k++) {
    state[STATE_V + k] = lw_in(cx, 2 + k);
    if (mlirValueIsNull(state[STATE_V + k]) || !lw_is_ranked(mlirValueGetType(state[STATE_V + k])))
      return lw_unsupported(cx, "loop-carried value %d is not a ranked tensor", k);
  }
  int n_state = STATE_V + n_v;
  MlirType types[CTL_MAX + STATE_V];
  for (int k = 0; k < n_state; k++) types[k] = mlirValueGetType(state[k]);
  MlirOperation op = lw_op(cx, "stablehlo.while", n_state, state, n_state, types, NULL, 2);
  if (mlirOperationIsNull(op)) return lw_error(cx, "internal: cannot create stablehlo.while");
  build_condition(cx, sh_region_block(cx, op, 0, n_state, types));
  o2m_status s = build_body(cx, body, sh_region_block(cx, op, 1, n_state, types), n_v);
  if (s) {
    mlirOperationDestroy(op);
    return s;
  }
  for (int k = 0; k < n_v && !s; k++) s = lw_set_out(cx, k, mlirOperationGetResult(op, STATE_V + k));
  return s;
}

/* ---- sequences and optionals ---------------------------------------------------- */

o2m_status sh_lower_seq_identity(lw_ctx *cx) { return lw_lower_seq_identity_with(cx, sh_lower_identity); }

o2m_status sh_lower_optional_get_element(lw_ctx *cx) {
  return lw_lower_optional_get_element_with(cx, sh_lower_identity);
}

static const lw_shape_ops shlo_shape_ops = {sh_reshape, sh_concat, sh_slice_axis, 1};

o2m_status sh_lower_concat_from_sequence(lw_ctx *cx) {
  return lw_lower_concat_from_sequence_with(cx, &shlo_shape_ops);
}

o2m_status sh_lower_split_to_sequence(lw_ctx *cx) {
  return lw_lower_split_to_sequence_with(cx, &shlo_shape_ops);
}
