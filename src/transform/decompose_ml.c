/* decompose_ml.c - the numeric ops of the ai.onnx.ml domain written in
 * core ops, for every target:
 *
 *   Binarizer(X)                 Where(X > threshold, 1, 0) in X's type (a NaN
 *                                compares false: 0)
 *   ArrayFeatureExtractor(X, Y)  Gather(X, Y flattened, axis -1): the same
 *                                elements of the last axis of every row; a 1-D
 *                                X gives [1, n]
 *   TreeEnsemble(X)              every tree walked at once, one level per
 *                                step: the node of each (row, tree) pair is
 *                                an int64 [N, T] tensor; each step gathers
 *                                its feature, split and mode from the
 *                                attribute tables, compares, and moves to the
 *                                true or false child, pairs that reached a
 *                                leaf staying there; as many steps as the
 *                                deepest tree has levels (known from the
 *                                attributes). Then each leaf's weight goes to
 *                                its target: sum, average, min or max over
 *                                the trees (post_transform NONE only, as
 *                                ONNX's reference computes).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer/infer.h"
#include "transform/decompose_kit.h"

o2m_status o2m_decompose_binarizer(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_value *above = xk_op2(rw, "Greater", x, xk_scalar_like(rw, x, o2m_rw_attr_f(rw, "threshold", 0.0f)));
  return xk_bind(rw, 0, xk_where(rw, above, xk_scalar_like(rw, x, 1.0), xk_scalar_like(rw, x, 0.0)));
}

o2m_status o2m_decompose_array_feature_extractor(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  const int64_t flat[1] = {-1};
  o2m_value *in[2] = {x, xk_reshape(rw, xk_cast(rw, o2m_rw_in(rw, 1), O2M_DT_INT64), flat, 1)};
  o2m_attr axis = o2m_rw_attr_int("axis", -1);
  o2m_value *picked = in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis, 1) : NULL;
  if (xk_rank(x) == 1) {
    const int64_t row[2] = {1, -1};
    picked = xk_reshape(rw, picked, row, 2);
  }
  return xk_bind(rw, 0, picked);
}

/* ---- TreeEnsemble --------------------------------------------------------------- */

/* An attribute's values as doubles (a tensor, or a list of ints or
 * floats); *n their count (0 when absent). malloc'd, NULL when absent. */
static double *attr_values(o2m_rewriter *rw, const char *name, int64_t *n) {
  const o2m_attr *a = o2m_rw_attr(rw, name);
  *n = 0;
  if (!a) return NULL;
  int64_t count = a->type == O2M_ATTR_TENSOR && a->t ? a->t->count : a->count;
  double *v = malloc(((size_t)count + 1) * sizeof(double));
  if (!v) return NULL;
  for (int64_t i = 0; i < count; i++)
    v[i] = a->type == O2M_ATTR_TENSOR ? o2m_tensor_get_float(a->t, i)
         : a->type == O2M_ATTR_INTS   ? (double)a->ints[i]
                                      : (double)a->floats[i];
  *n = count;
  return v;
}

enum { TE_LEQ, TE_LT, TE_GTE, TE_GT, TE_EQ, TE_NEQ, TE_MEMBER, TE_MODES };
enum { TE_AVERAGE, TE_SUM, TE_MIN, TE_MAX };

typedef struct tree_tables {
  int64_t n_nodes, n_leaves, n_roots, n_targets, n_members;
  double *feature, *split, *mode, *true_id, *false_id, *true_leaf, *false_leaf, *missing_true;
  double *leaf_target, *leaf_weight, *roots, *members;
} tree_tables;

static void free_tables(tree_tables *t) {
  double *all[] = {t->feature, t->split, t->mode, t->true_id, t->false_id, t->true_leaf, t->false_leaf,
                   t->missing_true, t->leaf_target, t->leaf_weight, t->roots, t->members};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) free(all[i]);
}

/* Whether tree t's root is itself a leaf (both branches the same leaf). */
static int root_is_leaf(const tree_tables *tt, int64_t r) {
  return tt->true_leaf[r] != 0 && tt->false_leaf[r] != 0 && tt->true_id[r] == tt->false_id[r];
}

/* Interior nodes on the longest path from node i; -1 on a bad index or a
 * cycle (deeper than there are nodes). */
static int64_t levels_from(const tree_tables *tt, int64_t i, int64_t depth) {
  if (i < 0 || i >= tt->n_nodes || depth > tt->n_nodes) return -1;
  int64_t best = 0;
  for (int side = 0; side < 2; side++) {
    double leaf = side ? tt->false_leaf[i] : tt->true_leaf[i], id = side ? tt->false_id[i] : tt->true_id[i];
    if (leaf != 0) {
      if (id < 0 || id >= tt->n_leaves) return -1;
      continue;
    }
    int64_t below = levels_from(tt, (int64_t)id, depth + 1);
    if (below < 0) return -1;
    if (below > best) best = below;
  }
  return best + 1;
}

/* The tables of the node's attributes, checked; an error status when they
 * do not describe trees. */
static o2m_status read_tables(o2m_rewriter *rw, tree_tables *tt, int64_t *levels) {
  int64_t n[12];
  tt->feature = attr_values(rw, "nodes_featureids", &n[0]);
  tt->split = attr_values(rw, "nodes_splits", &n[1]);
  tt->mode = attr_values(rw, "nodes_modes", &n[2]);
  tt->true_id = attr_values(rw, "nodes_truenodeids", &n[3]);
  tt->false_id = attr_values(rw, "nodes_falsenodeids", &n[4]);
  tt->true_leaf = attr_values(rw, "nodes_trueleafs", &n[5]);
  tt->false_leaf = attr_values(rw, "nodes_falseleafs", &n[6]);
  tt->missing_true = attr_values(rw, "nodes_missing_value_tracks_true", &n[7]);
  tt->leaf_target = attr_values(rw, "leaf_targetids", &n[8]);
  tt->leaf_weight = attr_values(rw, "leaf_weights", &n[9]);
  tt->roots = attr_values(rw, "tree_roots", &n[10]);
  tt->members = attr_values(rw, "membership_values", &n[11]);
  tt->n_nodes = n[0], tt->n_leaves = n[8], tt->n_roots = n[10], tt->n_members = n[11];
  tt->n_targets = o2m_rw_attr_i(rw, "n_targets", 0);
  for (int k = 1; k <= 6; k++)
    if (n[k] != tt->n_nodes) return o2m_rw_error(rw, "the nodes_* attributes differ in length");
  if (n[7] && n[7] != tt->n_nodes) return o2m_rw_error(rw, "nodes_missing_value_tracks_true differs in length");
  if (!tt->n_nodes || !tt->n_roots || !tt->n_leaves || n[9] != tt->n_leaves || tt->n_targets < 1)
    return o2m_rw_error(rw, "the trees are empty, or the leaf_* attributes differ in length, or n_targets < 1");
  for (int64_t i = 0; i < tt->n_leaves; i++)
    if (tt->leaf_target[i] < 0 || tt->leaf_target[i] >= (double)tt->n_targets)
      return o2m_rw_error(rw, "leaf %lld's target %g is not below n_targets %lld", (long long)i, tt->leaf_target[i],
                          (long long)tt->n_targets);
  int64_t member_nodes = 0, sets = 0;
  for (int64_t i = 0; i < tt->n_nodes; i++) {
    if (tt->mode[i] < 0 || tt->mode[i] >= TE_MODES) return o2m_rw_error(rw, "node %lld has mode %g", (long long)i, tt->mode[i]);
    member_nodes += tt->mode[i] == TE_MEMBER;
  }
  for (int64_t i = 0; i < tt->n_members; i++) sets += isnan(tt->members[i]);
  if (sets != member_nodes)
    return o2m_rw_error(rw, "%lld set-membership nodes but %lld sets in membership_values", (long long)member_nodes,
                        (long long)sets);
  *levels = 0;
  for (int64_t t = 0; t < tt->n_roots; t++) {
    int64_t r = (int64_t)tt->roots[t];
    if (r < 0 || r >= tt->n_nodes) return o2m_rw_error(rw, "tree %lld's root %lld is not a node", (long long)t, (long long)r);
    if (root_is_leaf(tt, r)) continue;
    int64_t l = levels_from(tt, r, 0);
    if (l < 0) return o2m_rw_error(rw, "tree %lld has a child index out of range or a cycle", (long long)t);
    if (l > *levels) *levels = l;
  }
  return O2M_OK;
}

/* The comparison of mode `mode` between x and the node's split s (or its
 * member set, [N, T, S] rows of `set`). */
static o2m_value *compare(o2m_rewriter *rw, int mode, o2m_value *x, o2m_value *s, o2m_value *set) {
  static const char *const ops[] = {"LessOrEqual", "Less", "GreaterOrEqual", "Greater", "Equal", "Equal"};
  if (mode == TE_NEQ) return xk_op1(rw, "Not", xk_op2(rw, "Equal", x, s));
  if (mode != TE_MEMBER) return xk_op2(rw, ops[mode], x, s);
  const int64_t last[1] = {-1};
  o2m_value *hit = xk_cast(rw, xk_op2(rw, "Equal", xk_unsqueeze(rw, x, last, 1), set), O2M_DT_INT32);
  return xk_cast(rw, xk_reduce(rw, "ReduceMax", hit, last, 1, 0), O2M_DT_BOOL);
}

/* Table v[0..n) as a 1-D constant of `dtype`. */
static o2m_value *table(o2m_rewriter *rw, o2m_dtype dtype, const double *v, int64_t n) {
  return xk_const_1d(rw, dtype, v, (int)n);
}

/* One level: (node, leaf) of every (row, tree) pair moved to the child
 * its comparison picks, unless at a leaf already. */
static void step(o2m_rewriter *rw, const tree_tables *tt, o2m_value *x, o2m_dtype dt, o2m_value *member_sets,
                 const int *has_mode, o2m_value **node, o2m_value **leaf) {
  o2m_value *at = xk_where(rw, *leaf, xk_scalar(rw, O2M_DT_INT64, 0), *node); /* a node index, also for leaves */
  o2m_value *in[2] = {x, xk_op2(rw, "Gather", table(rw, O2M_DT_INT64, tt->feature, tt->n_nodes), at)};
  o2m_attr axis = o2m_rw_attr_int("axis", 1);
  o2m_value *xv = in[1] ? o2m_rw_op(rw, "GatherElements", 2, in, &axis, 1) : NULL;
  o2m_value *s = xk_op2(rw, "Gather", table(rw, dt, tt->split, tt->n_nodes), at);
  o2m_value *set = has_mode[TE_MEMBER] ? xk_op2(rw, "Gather", member_sets, at) : NULL;
  o2m_value *mode = NULL, *cond = NULL;
  int modes = 0;
  for (int m = 0; m < TE_MODES; m++) modes += has_mode[m];
  if (modes > 1) mode = xk_op2(rw, "Gather", table(rw, O2M_DT_INT64, tt->mode, tt->n_nodes), at);
  for (int m = 0; m < TE_MODES; m++) {
    if (!has_mode[m]) continue;
    o2m_value *c = compare(rw, m, xv, s, set);
    cond = !cond ? c : xk_where(rw, xk_op2(rw, "Equal", mode, xk_scalar(rw, O2M_DT_INT64, m)), c, cond);
  }
  if (tt->missing_true) {
    o2m_value *tracks = xk_cast(rw, xk_op2(rw, "Gather", table(rw, O2M_DT_INT64, tt->missing_true, tt->n_nodes), at),
                                O2M_DT_BOOL);
    cond = xk_op2(rw, "Or", cond, xk_op2(rw, "And", xk_op1(rw, "IsNaN", xv), tracks));
  }
  o2m_value *next = xk_where(rw, cond, xk_op2(rw, "Gather", table(rw, O2M_DT_INT64, tt->true_id, tt->n_nodes), at),
                             xk_op2(rw, "Gather", table(rw, O2M_DT_INT64, tt->false_id, tt->n_nodes), at));
  o2m_value *next_leaf =
      xk_cast(rw,
              xk_where(rw, cond, xk_op2(rw, "Gather", table(rw, O2M_DT_INT64, tt->true_leaf, tt->n_nodes), at),
                       xk_op2(rw, "Gather", table(rw, O2M_DT_INT64, tt->false_leaf, tt->n_nodes), at)),
              O2M_DT_BOOL);
  *node = xk_where(rw, *leaf, *node, next);
  *leaf = xk_op2(rw, "Or", *leaf, next_leaf);
}

/* The member sets as a [nodes, S] constant (NaN-padded; NaN equals
 * nothing), row i the set of node i when it is a set-membership node. */
static o2m_value *member_table(o2m_rewriter *rw, const tree_tables *tt, o2m_dtype dt) {
  int64_t widest = 1, len = 0;
  for (int64_t i = 0; i < tt->n_members; i++) {
    if (!isnan(tt->members[i])) len++;
    else len = 0;
    if (len > widest) widest = len;
  }
  double *rows = malloc((size_t)(tt->n_nodes * widest) * sizeof(double));
  if (!rows) return NULL;
  for (int64_t i = 0; i < tt->n_nodes * widest; i++) rows[i] = NAN;
  int64_t next = 0;
  for (int64_t i = 0; i < tt->n_nodes; i++) {
    if (tt->mode[i] != TE_MEMBER) continue;
    for (int64_t k = 0; next < tt->n_members && !isnan(tt->members[next]); next++, k++) rows[i * widest + k] = tt->members[next];
    next++; /* the NaN that ends the set */
  }
  const int64_t dims[2] = {tt->n_nodes, widest};
  o2m_value *v = xk_const_nd(rw, dt, 2, dims, rows);
  free(rows);
  return v;
}

o2m_status o2m_decompose_tree_ensemble(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_dtype dt = xk_elem(x);
  if (xk_rank(x) != 2 || (dt != O2M_DT_FLOAT && dt != O2M_DT_DOUBLE))
    return o2m_rw_unsupported(rw, "X is not a 2-D float or double tensor");
  if (o2m_rw_attr_i(rw, "post_transform", 0) != 0)
    return o2m_rw_unsupported(rw, "post_transform other than NONE");
  int aggregate = (int)o2m_rw_attr_i(rw, "aggregate_function", TE_SUM);
  if (aggregate < TE_AVERAGE || aggregate > TE_MAX) return o2m_rw_error(rw, "aggregate_function %d", aggregate);
  tree_tables tt;
  memset(&tt, 0, sizeof(tt));
  int64_t levels = 0;
  o2m_status st = read_tables(rw, &tt, &levels);
  if (st) {
    free_tables(&tt);
    return st;
  }
  int has_mode[TE_MODES] = {0};
  for (int64_t i = 0; i < tt.n_nodes; i++) has_mode[(int)tt.mode[i]] = 1;
  /* the start: each tree's root, or its leaf for a tree that is one */
  double *start = malloc((size_t)tt.n_roots * sizeof(double)), *start_leaf = malloc((size_t)tt.n_roots * sizeof(double));
  if (!start || !start_leaf) {
    free(start), free(start_leaf), free_tables(&tt);
    return o2m_rw_error(rw, "out of memory");
  }
  for (int64_t t = 0; t < tt.n_roots; t++) {
    int64_t r = (int64_t)tt.roots[t];
    start_leaf[t] = root_is_leaf(&tt, r);
    start[t] = start_leaf[t] ? tt.true_id[r] : (double)r;
  }
  const int64_t zero[1] = {0};
  o2m_value *cat[2] = {xk_unsqueeze(rw, xk_dim(rw, x, 0), zero, 1), table(rw, O2M_DT_INT64, (double[]){(double)tt.n_roots}, 1)};
  o2m_attr axis0 = o2m_rw_attr_int("axis", 0);
  o2m_value *shape = cat[0] && cat[1] ? o2m_rw_op(rw, "Concat", 2, cat, &axis0, 1) : NULL;
  o2m_value *node = xk_op2(rw, "Expand", table(rw, O2M_DT_INT64, start, tt.n_roots), shape);
  o2m_value *leaf = xk_cast(rw, xk_op2(rw, "Expand", table(rw, O2M_DT_INT64, start_leaf, tt.n_roots), shape), O2M_DT_BOOL);
  free(start), free(start_leaf);
  o2m_value *sets = has_mode[TE_MEMBER] ? member_table(rw, &tt, dt) : NULL;
  for (int64_t l = 0; l < levels; l++) step(rw, &tt, x, dt, sets, has_mode, &node, &leaf);
  /* each (row, tree)'s leaf: its weight to its target */
  const int64_t last[1] = {-1}, trees[1] = {1};
  o2m_value *w = xk_op2(rw, "Gather", table(rw, dt, tt.leaf_weight, tt.n_leaves), node);
  o2m_value *target = xk_op2(rw, "Gather", table(rw, O2M_DT_INT64, tt.leaf_target, tt.n_leaves), node);
  double *ids = malloc((size_t)tt.n_targets * sizeof(double));
  for (int64_t k = 0; ids && k < tt.n_targets; k++) ids[k] = (double)k;
  o2m_value *hit = ids ? xk_op2(rw, "Equal", xk_unsqueeze(rw, target, last, 1), table(rw, O2M_DT_INT64, ids, tt.n_targets)) : NULL;
  free(ids);
  if (aggregate == TE_AVERAGE) w = xk_op2(rw, "Div", w, xk_scalar(rw, dt, (double)tt.n_roots));
  double none = aggregate == TE_MIN ? (dt == O2M_DT_FLOAT ? FLT_MAX : DBL_MAX)
              : aggregate == TE_MAX ? (dt == O2M_DT_FLOAT ? -FLT_MAX : -DBL_MAX)
                                    : 0.0;
  static const char *const reduce[] = {"ReduceSum", "ReduceSum", "ReduceMin", "ReduceMax"};
  o2m_value *spread = xk_where(rw, hit, xk_unsqueeze(rw, w, last, 1), xk_scalar(rw, dt, none));
  free_tables(&tt);
  return xk_bind(rw, 0, xk_reduce(rw, reduce[aggregate], spread, trees, 1, 0));
}
