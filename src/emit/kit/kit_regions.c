/* kit_regions.c - what every emitter's control-flow lowerings share
 * (kit.h): lowering a subgraph into the current block with its inputs
 * bound, joining the types two branches yield, and If (the branch taken
 * inline when the condition is known, else the target's if op whose two
 * regions end in its yield op, each yield cast to the join of the
 * branches' types), and scopes for regions isolated from above. */
#include <stdio.h>
#include <string.h>

#include "emit/kit/kit.h"
#include "util/diag.h"

enum { KIT_MAX_RANK = 64, IF_MAX_OUTPUTS = 64 };

/* ---- types ------------------------------------------------------------------ */

int lw_is_ranked(MlirType t) { return !mlirTypeIsNull(t) && mlirTypeIsARankedTensor(t); }

int lw_loop_carries_tensors(const o2m_node *n) {
  for (int k = 2; k < n->n_inputs; k++)
    if (n->inputs[k] && n->inputs[k]->type.kind != O2M_TYPE_TENSOR && n->inputs[k]->type.kind != O2M_TYPE_UNKNOWN)
      return 0;
  return 1;
}

/* The most static type both a and b cast to (dims that differ dynamic);
 * a when b is null; null when they have different ranks or element types. */
MlirType lw_join_types(MlirType a, MlirType b) {
  if (mlirTypeIsNull(b)) return a;
  if (!lw_is_ranked(a) || !lw_is_ranked(b)) return (MlirType){NULL};
  int rank = (int)mlirShapedTypeGetRank(a);
  if (rank != (int)mlirShapedTypeGetRank(b) || rank > KIT_MAX_RANK ||
      !mlirTypeEqual(mlirShapedTypeGetElementType(a), mlirShapedTypeGetElementType(b)))
    return (MlirType){NULL};
  int64_t shape[KIT_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    int64_t x = mlirShapedTypeGetDimSize(a, k), y = mlirShapedTypeGetDimSize(b, k);
    shape[k] = x == y ? x : mlirShapedTypeGetDynamicSize();
  }
  return mlirRankedTensorTypeGet(rank, shape, mlirShapedTypeGetElementType(a),
                                 mlirAttributeGetNull());
}

/* Whether a tensor.cast between a and b can verify (same rank and element
 * type, no two different static sizes). */
int lw_cast_compatible(MlirType a, MlirType b) {
  if (!lw_is_ranked(a) || !lw_is_ranked(b)) return 0;
  int rank = (int)mlirShapedTypeGetRank(a);
  if (rank != (int)mlirShapedTypeGetRank(b) ||
      !mlirTypeEqual(mlirShapedTypeGetElementType(a), mlirShapedTypeGetElementType(b)))
    return 0;
  for (int k = 0; k < rank; k++) {
    int64_t x = mlirShapedTypeGetDimSize(a, k), y = mlirShapedTypeGetDimSize(b, k);
    if (!mlirShapedTypeIsDynamicSize(x) && !mlirShapedTypeIsDynamicSize(y) && x != y) return 0;
  }
  return 1;
}

/* ---- subgraphs ------------------------------------------------------------------ */

/* Lowers g into cx->block with its inputs bound to args (cast to the
 * inputs' inferred types); yields[i] receives output i. */
o2m_status lw_lower_subgraph(lw_ctx *cx, const o2m_graph *g, int n_args, const MlirValue *args,
                                 MlirValue *yields) {
  const o2m_node *node = cx->node;
  MlirLocation loc = cx->loc;
  if (n_args != g->n_inputs)
    return lw_error(cx, "subgraph '%s' has %d inputs, %d expected", g->name, g->n_inputs, n_args);
  for (int k = 0; k < n_args; k++) {
    const o2m_value *in = g->input_values[k];
    MlirType t = lw_tensor_type(cx, &in->type);
    if (mlirTypeIsNull(t))
      return lw_unsupported(cx, "subgraph input '%s' is not a ranked tensor of a supported dtype",
                            in->name);
    if (!lw_cast_compatible(mlirValueGetType(args[k]), t))
      return lw_unsupported(cx, "subgraph input '%s' does not fit the value given to it", in->name);
    lw_map(cx, in, lw_cast_tensor(cx, args[k], t));
  }
  o2m_status s = lw_lower_graph_nodes(cx, g);
  cx->node = node;
  cx->loc = loc;
  if (s) return s;
  for (int i = 0; i < g->n_outputs; i++) {
    const o2m_value *out = g->output_values[i];
    yields[i] = lw_get(cx, out);
    if (mlirValueIsNull(yields[i]) || !lw_is_ranked(mlirValueGetType(yields[i])))
      return lw_unsupported(cx, "subgraph output '%s' is not a ranked tensor", out->name);
  }
  return O2M_OK;
}

void lw_destroy_blocks(int n, MlirBlock *blocks) {
  for (int i = 0; i < n; i++)
    if (!mlirBlockIsNull(blocks[i])) mlirBlockDestroy(blocks[i]);
}

/* ---- isolated regions ------------------------------------------------------------ */

void lw_scope_enter(lw_ctx *cx, lw_scope *saved, MlirBlock block) {
  *saved = (lw_scope){cx->values, cx->values_cap, cx->values_count, cx->entry, cx->block};
  cx->values = NULL;
  cx->values_cap = cx->values_count = 0;
  cx->entry = cx->block = block;
}

void lw_scope_leave(lw_ctx *cx, const lw_scope *saved) {
  cx->values = saved->values;
  cx->values_cap = saved->values_cap;
  cx->values_count = saved->values_count;
  cx->entry = saved->entry;
  cx->block = saved->block;
}

/* ---- If ------------------------------------------------------------------------- */

/* Zeros of a ranked tensor type in the target's constant op (dynamic dims
 * 1, then cast to the type), or a null value. */
static MlirValue zeros_of(lw_ctx *cx, MlirType type) {
  if (!lw_is_ranked(type)) return (MlirValue){NULL};
  int rank = (int)mlirShapedTypeGetRank(type);
  if (rank > KIT_MAX_RANK) return (MlirValue){NULL};
  int64_t shape[KIT_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    int64_t d = mlirShapedTypeGetDimSize(type, k);
    shape[k] = d == mlirShapedTypeGetDynamicSize() ? 1 : d;
  }
  MlirType elem = mlirShapedTypeGetElementType(type);
  MlirType fixed = mlirRankedTensorTypeGet(rank, shape, elem, mlirAttributeGetNull());
  MlirAttribute zero = mlirTypeIsAFloat(elem) ? mlirFloatAttrDoubleGet(cx->mc, elem, 0)
                       : mlirTypeIsAInteger(elem) ? mlirIntegerAttrGet(elem, 0)
                                                  : mlirAttributeGetNull();
  if (mlirAttributeIsNull(zero)) return (MlirValue){NULL};
  MlirNamedAttribute value = mlirNamedAttributeGet(
      mlirIdentifierGet(cx->mc, mlirStringRefCreateFromCString(cx->target->const_attr)),
      mlirDenseElementsAttrSplatGet(fixed, zero));
  MlirOperation op = lw_op_attrs(cx, cx->target->const_op, 0, NULL, 1, &fixed, 1, &value, 0);
  if (mlirOperationIsNull(op)) return (MlirValue){NULL};
  return lw_cast_tensor(cx, mlirOperationGetResult(op, 0), type);
}

/* Erases every op of `block`, the last first (so that none is still used). */
static void clear_block(MlirBlock block) {
  int n = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    n++;
  while (n-- > 0) {
    MlirOperation op = mlirBlockGetFirstOperation(block);
    for (int k = 0; k < n; k++) op = mlirOperationGetNextInBlock(op);
    mlirOperationDestroy(op);
  }
}

o2m_status lw_try_branch(lw_ctx *cx, const o2m_graph *g, MlirBlock block, MlirValue *yields,
                         const char **failure, lw_branch_builder build, void *user) {
  *failure = NULL;
  if (g->unbuildable) {
    *failure = g->unbuildable;
    return O2M_OK;
  }
  o2m_diag attempt = {.warn = cx->diag->warn, .warn_user = cx->diag->warn_user}, *saved = cx->diag;
  const o2m_node *node = cx->node;
  MlirLocation loc = cx->loc;
  MlirBlock at = cx->block;
  cx->diag = &attempt;
  o2m_status s = build(cx, g, block, yields, user);
  cx->diag = saved;
  cx->node = node;
  cx->loc = loc;
  cx->block = at;
  if (s == O2M_OK) return O2M_OK;
  if (s == O2M_ERR_NOMEM || s == O2M_ERR_INTERNAL) return o2m_fail(saved, s, "%s", attempt.message);
  if (!(*failure = o2m_arena_strdup(&cx->model->arena, attempt.message)))
    return o2m_fail(saved, O2M_ERR_NOMEM, "out of memory");
  clear_block(block);
  return O2M_OK;
}

o2m_status lw_failure_call(lw_ctx *cx, const char *what, const char *reason) {
  const o2m_node *nd = cx->node;
  const char *path = cx->model->path;
  size_t len = strlen(path);
  if (strncmp(reason, path, len) == 0 && strncmp(reason + len, ": ", 2) == 0) reason += len + 2;
  size_t cap = strlen(reason) + strlen(what) + len + strlen(nd->name) + strlen(nd->op_type) + 128;
  char *text = o2m_arena_alloc(&cx->scratch, cap);
  const char **grown = o2m_arena_array(&cx->scratch, (size_t)cx->n_branch_failures + 1, sizeof(*grown));
  if (!text || !grown) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  snprintf(text, cap, "%s: node '%s' (%s, opset %lld): %s, but it cannot run for these input shapes: %s", path,
           nd->name, nd->op_type, (long long)nd->opset, what, reason);
  if (cx->n_branch_failures) memcpy(grown, cx->branch_failures, (size_t)cx->n_branch_failures * sizeof(*grown));
  grown[cx->n_branch_failures] = text;
  cx->branch_failures = grown;
  int id = cx->n_branch_failures++;
  if (cx->target->failure_call) return cx->target->failure_call(cx, id);
  MlirValue v = lw_const_int(cx, mlirIntegerTypeGet(cx->mc, 32), id);
  if (mlirOperationIsNull(lw_op(cx, "func.call", 1, &v, 0, NULL, "callee = @" O2M_BRANCH_FAILED_FN, 0)))
    return lw_error(cx, "internal: cannot create the failure call");
  return O2M_OK;
}

o2m_status lw_fail_branch(lw_ctx *cx, int else_branch, const char *reason, int n, const MlirValue *other,
                          MlirValue *yields) {
  o2m_status s = lw_failure_call(cx, else_branch ? "the else branch was taken" : "the then branch was taken", reason);
  if (s) return s;
  for (int i = 0; i < n; i++) {
    yields[i] = zeros_of(cx, mlirValueGetType(other[i]));
    if (mlirValueIsNull(yields[i]))
      return lw_unsupported(cx, "output %d of the branch that can be built has no zero value", i);
  }
  return O2M_OK;
}

void lw_finish_branch_failures(lw_ctx *cx) {
  if (!cx->n_branch_failures) return;
  MlirAttribute *reasons = o2m_arena_array(&cx->scratch, (size_t)cx->n_branch_failures, sizeof(*reasons));
  if (!reasons) return;
  for (int i = 0; i < cx->n_branch_failures; i++)
    reasons[i] = mlirStringAttrGet(cx->mc, mlirStringRefCreateFromCString(cx->branch_failures[i]));
  MlirOperation module = mlirModuleGetOperation(cx->module);
  mlirOperationSetAttributeByName(module, mlirStringRefCreateFromCString(O2M_BRANCH_FAILURES_ATTR),
                                  mlirArrayAttrGet(cx->mc, cx->n_branch_failures, reasons));
  if (cx->target->failure_call) return;
  MlirBlock saved = cx->block;
  cx->block = mlirModuleGetBody(cx->module);
  lw_op(cx, "func.func", 0, NULL, 0, NULL,
        "sym_name = \"" O2M_BRANCH_FAILED_FN "\", sym_visibility = \"private\", function_type = (i32) -> ()", 1);
  cx->block = saved;
}

static o2m_status build_in_block(lw_ctx *cx, const o2m_graph *g, MlirBlock block, MlirValue *yields,
                                 void *user) {
  (void)user;
  cx->block = block;
  return lw_lower_subgraph(cx, g, 0, NULL, yields);
}

o2m_status lw_lower_if_with(lw_ctx *cx, const char *if_op, const char *yield_op,
                            MlirValue (*condition)(lw_ctx *cx, MlirValue cond)) {
  const o2m_graph *branch[2] = {lw_attr_graph(cx, "then_branch"), lw_attr_graph(cx, "else_branch")};
  if (!branch[0] || !branch[1]) return lw_error(cx, "a branch is missing");
  int n = cx->node->n_outputs;
  if (n > IF_MAX_OUTPUTS) return lw_unsupported(cx, "more than %d outputs", IF_MAX_OUTPUTS);
  for (int b = 0; b < 2; b++)
    if (branch[b]->n_outputs != n)
      return lw_error(cx, "a branch has %d outputs, the node %d", branch[b]->n_outputs, n);
  MlirValue yields[2][IF_MAX_OUTPUTS];
  int64_t *known;
  if (lw_in_known_ints(cx, 0, &known) >= 1) { /* the branch taken, inline */
    o2m_status s = lw_lower_subgraph(cx, branch[known[0] ? 0 : 1], 0, NULL, yields[0]);
    for (int i = 0; i < n && !s; i++) s = lw_set_out(cx, i, yields[0][i]);
    return s;
  }
  MlirValue cond = lw_in(cx, 0);
  if (mlirValueIsNull(cond)) return lw_error(cx, "the condition is missing");
  cond = condition(cx, cond);
  if (mlirValueIsNull(cond)) return lw_unsupported(cx, "the condition cannot be read");
  MlirBlock blocks[2] = {mlirBlockCreate(0, NULL, NULL), mlirBlockCreate(0, NULL, NULL)};
  MlirBlock saved = cx->block;
  o2m_status s = O2M_OK;
  const char *failure[2] = {NULL, NULL};
  for (int b = 0; b < 2 && !s; b++)
    s = lw_try_branch(cx, branch[b], blocks[b], yields[b], &failure[b], build_in_block, NULL);
  if (!s && failure[0] && failure[1]) s = o2m_fail(cx->diag, O2M_ERR_INVALID, "%s", failure[0]);
  for (int b = 0; b < 2 && !s; b++)
    if (failure[b]) {
      cx->block = blocks[b];
      s = lw_fail_branch(cx, b, failure[b], n, yields[1 - b], yields[b]);
    }
  MlirType types[IF_MAX_OUTPUTS];
  for (int i = 0; i < n && !s; i++) {
    types[i] = lw_join_types(mlirValueGetType(yields[0][i]), mlirValueGetType(yields[1][i]));
    if (mlirTypeIsNull(types[i]))
      s = lw_unsupported(cx, "the branches' output %d have different ranks or element types", i);
  }
  for (int b = 0; b < 2 && !s; b++) {
    cx->block = blocks[b];
    for (int i = 0; i < n; i++) yields[b][i] = lw_cast_tensor(cx, yields[b][i], types[i]);
    lw_op(cx, yield_op, n, yields[b], 0, NULL, NULL, 0);
  }
  cx->block = saved;
  if (s) {
    lw_destroy_blocks(2, blocks);
    return s;
  }
  MlirOperation op = lw_op(cx, if_op, 1, &cond, n, types, NULL, 2);
  if (mlirOperationIsNull(op)) {
    lw_destroy_blocks(2, blocks);
    return lw_error(cx, "internal: cannot create %s", if_op);
  }
  for (int b = 0; b < 2; b++) mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, b), blocks[b]);
  for (int i = 0; i < n && !s; i++) s = lw_set_out(cx, i, mlirOperationGetResult(op, i));
  return s;
}
