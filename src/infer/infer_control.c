/* infer_control.c - inference for the ops that run subgraphs: If, Loop,
 * Scan, SequenceMap; and the merging of types that meet where control
 * flow joins (declared in infer_data.h).
 *
 * Subgraphs are inferred through o2m_infer_subgraph with the input types
 * the op gives them. Loop bodies are re-inferred until the loop-carried
 * types stop changing, so that a value growing across iterations gets an
 * unknown dim instead of its first iteration's size.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "infer/infer_data.h"
#include "util/diag.h"

/* Loop bodies are inferred at most this many times before the carried
 * types are reduced to element types. */
enum { LOOP_MAX_PASSES = 6 };

/* ---- merging types --------------------------------------------------------- */

/* Symbols made by inference while a loop body was being inferred (numbers
 * from `from` to before `until`) are free: a merge that keeps one counts as
 * no change, and none reaches the loop's outputs. */
static int symbol_is_free(const char *sym, int from, int until) {
  if (!o2m_symbol_is_fresh(sym)) return 0;
  int number = atoi(sym + 1);
  return number >= from && number < until;
}

/* A copy of t with every tensor shape dropped (element types kept). */
static o2m_type *type_relaxed(o2m_infer_ctx *ctx, const o2m_type *t) {
  o2m_type *r = o2m_arena_alloc(ctx->arena, sizeof(*r));
  if (!r) return NULL;
  *r = *t;
  if (t->kind == O2M_TYPE_TENSOR || t->kind == O2M_TYPE_SPARSE_TENSOR) {
    r->rank = -1;
    r->dims = NULL;
  }
  if (t->inner && !(r->inner = type_relaxed(ctx, t->inner))) return NULL;
  return r;
}

static int type_is_relaxed(const o2m_type *t) {
  if ((t->kind == O2M_TYPE_TENSOR || t->kind == O2M_TYPE_SPARSE_TENSOR) && t->rank >= 0)
    return 0;
  return !t->inner || type_is_relaxed(t->inner);
}

static o2m_status merge_types(o2m_infer_ctx *ctx, const o2m_type *a,
                              const o2m_type *b, const char *what, int free_from,
                              o2m_type **out, int *changed);

static o2m_status merge_inner(o2m_infer_ctx *ctx, const o2m_type *a,
                              const o2m_type *b, const char *what, int free_from,
                              o2m_type *out, int *changed) {
  if (!a->inner || !b->inner) {
    /* an element type not known on one side */
    *changed |= a->inner != NULL;
    out->inner = NULL;
    return O2M_OK;
  }
  return merge_types(ctx, a->inner, b->inner, what, free_from, &out->inner, changed);
}

static o2m_status merge_types(o2m_infer_ctx *ctx, const o2m_type *a,
                              const o2m_type *b, const char *what, int free_from,
                              o2m_type **out, int *changed) {
  if (a->kind == O2M_TYPE_UNKNOWN || b->kind == O2M_TYPE_UNKNOWN) {
    const o2m_type *known = a->kind == O2M_TYPE_UNKNOWN ? b : a;
    *out = type_relaxed(ctx, known);
    *changed |= a->kind != O2M_TYPE_UNKNOWN && !type_is_relaxed(a);
    return *out ? O2M_OK : o2m_out_of_memory(ctx);
  }
  if (a->kind != b->kind || a->elem != b->elem)
    return o2m_infer_error(ctx, "%s have different types", what);
  o2m_type *m = o2m_type_copy(ctx, a);
  if (!m) return o2m_out_of_memory(ctx);
  *out = m;
  if (a->kind == O2M_TYPE_SEQUENCE || a->kind == O2M_TYPE_OPTIONAL ||
      a->kind == O2M_TYPE_MAP)
    return merge_inner(ctx, a, b, what, free_from, m, changed);
  if (a->rank < 0) return O2M_OK;
  if (b->rank != a->rank) {
    m->rank = -1;
    m->dims = NULL;
    *changed = 1;
    return O2M_OK;
  }
  for (int d = 0; d < a->rank; d++) {
    if (o2m_dim_equal(a->dims[d], b->dims[d]) || symbol_is_free(a->dims[d].sym, free_from, INT_MAX))
      continue;
    m->dims[d] = o2m_dim_fresh(ctx);
    *changed = 1;
  }
  return O2M_OK;
}

o2m_status o2m_type_merge(o2m_infer_ctx *ctx, const o2m_type *a,
                          const o2m_type *b, const char *what, o2m_type **out) {
  int changed = 0;
  return merge_types(ctx, a, b, what, INT_MAX, out, &changed);
}

/* ---- helpers ----------------------------------------------------------------- */

static o2m_status graph_attr(o2m_infer_ctx *ctx, const char *name, o2m_graph **g) {
  const o2m_attr *a = o2m_attr_get(ctx, name);
  if (!a || a->type != O2M_ATTR_GRAPH || !a->g)
    return o2m_infer_error(ctx, "graph attribute '%s' is missing", name);
  *g = a->g;
  return O2M_OK;
}

/* Gives output i the value of a subgraph output when it is known or
 * tracked (the If branch taken, for a known condition). */
static void forward_value(o2m_infer_ctx *ctx, int i, const o2m_value *v) {
  if (v->known)
    o2m_out_known(ctx, i, v->known);
  else if (v->shape_value)
    o2m_shape_value_out(ctx, i, v->shape_value, v->shape_value_len);
}

/* *out = t with one more dim, `dim`, inserted at `axis` (an unknown or
 * unranked t stays as it is). */
static o2m_status insert_dim(o2m_infer_ctx *ctx, const o2m_type *t, int64_t axis,
                             o2m_dim dim, const o2m_type **out) {
  *out = t;
  if (t->kind == O2M_TYPE_UNKNOWN) return O2M_OK;
  if (t->kind != O2M_TYPE_TENSOR)
    return o2m_infer_error(ctx, "scanned outputs must be tensors");
  if (t->rank < 0) return O2M_OK;
  o2m_status st = o2m_norm_axis(ctx, axis, t->rank + 1, 0, &axis);
  if (st) return st;
  o2m_type *r = o2m_type_copy(ctx, t);
  o2m_dim *dims = o2m_arena_array(ctx->arena, (size_t)t->rank + 1, sizeof(*dims));
  if (!r || !dims) return o2m_out_of_memory(ctx);
  for (int d = 0, j = 0; d <= t->rank; d++) dims[d] = d == axis ? dim : t->dims[j++];
  r->rank++;
  r->dims = dims;
  *out = r;
  return O2M_OK;
}

/* t without its dim at `axis` (unknown and unranked types pass through:
 * NULL keeps the subgraph's declared type). */
static o2m_status remove_dim(o2m_infer_ctx *ctx, const o2m_type *t, int64_t axis,
                             const o2m_type **out, o2m_dim *removed) {
  *out = NULL;
  if (t->kind == O2M_TYPE_UNKNOWN) return O2M_OK;
  if (t->kind != O2M_TYPE_TENSOR) return o2m_infer_error(ctx, "scanned inputs must be tensors");
  if (t->rank < 0) {
    *out = t;
    return O2M_OK;
  }
  o2m_status st = o2m_norm_axis(ctx, axis, t->rank, 0, &axis);
  if (st) return st;
  o2m_type *r = o2m_type_copy(ctx, t);
  if (!r) return o2m_out_of_memory(ctx);
  if (removed && (removed->sym || removed->size < 0)) *removed = t->dims[axis];
  memmove(r->dims + axis, r->dims + axis + 1, (size_t)(t->rank - axis - 1) * sizeof(o2m_dim));
  r->rank--;
  *out = r;
  return O2M_OK;
}

/* ---- subgraphs that may never run -------------------------------------------------- */

/* An inference step whose failure does not fail the node (a branch or body
 * that may never run): between trial_begin and trial_end ctx->diag is the
 * trial's own. */
typedef struct trial {
  o2m_diag diag, *saved;
} trial;

static void trial_begin(o2m_infer_ctx *ctx, trial *t) {
  t->saved = ctx->diag;
  t->diag = (o2m_diag){.warn = ctx->diag->warn, .warn_user = ctx->diag->warn_user};
  ctx->diag = &t->diag;
}

/* Ends the trial of a step that returned st: *why gets its failure (a copy
 * in the model's arena) or NULL. Only running out of memory and internal
 * errors fail. */
static o2m_status trial_end(o2m_infer_ctx *ctx, trial *t, o2m_status st, const char **why) {
  ctx->diag = t->saved;
  *why = NULL;
  if (st == O2M_OK) return O2M_OK;
  if (st == O2M_ERR_NOMEM || st == O2M_ERR_INTERNAL) return o2m_fail(t->saved, st, "%s", t->diag.message);
  if (!(*why = o2m_arena_strdup(ctx->arena, t->diag.message))) return o2m_out_of_memory(ctx);
  return O2M_OK;
}

/* ---- If ------------------------------------------------------------------------- */

o2m_status o2m_infer_if(o2m_infer_ctx *ctx) {
  o2m_graph *branch[2] = {NULL, NULL}; /* then, else */
  o2m_status st;
  if ((st = graph_attr(ctx, "then_branch", &branch[0])) ||
      (st = graph_attr(ctx, "else_branch", &branch[1])))
    return st;
  int n_out = o2m_out_count(ctx);
  int64_t *cond;
  int taken = o2m_in_known_ints(ctx, 0, &cond) == 1 ? (cond[0] ? 0 : 1) : -1;
  for (int b = 0; b < 2; b++) {
    branch[b]->unbuildable = NULL;
    if (branch[b]->n_outputs != n_out)
      return o2m_infer_error(ctx, "%s branch has %d outputs, the node %d",
                             b ? "else" : "then", branch[b]->n_outputs, n_out);
    if (taken >= 0 && b != taken) {
      /* a branch that never runs may not fit the known shapes: type what
       * can be typed, ignore its errors */
      o2m_diag ignored = {0}, *saved = ctx->diag;
      ctx->diag = &ignored;
      o2m_infer_subgraph(ctx, branch[b], 0, NULL);
      ctx->diag = saved;
      branch[b]->inferred = 1; /* as far as it goes: not again for the node */
      continue;
    }
    /* the condition is known only at run time: a branch that cannot be
     * built for these shapes is kept, marked, and fails only if taken */
    trial t;
    trial_begin(ctx, &t);
    if ((st = trial_end(ctx, &t, o2m_infer_subgraph(ctx, branch[b], 0, NULL), &branch[b]->unbuildable)))
      return st;
    branch[b]->inferred = 1;
  }
  if (branch[0]->unbuildable && branch[1]->unbuildable)
    return o2m_fail(ctx->diag, O2M_ERR_INVALID, "%s", branch[0]->unbuildable);
  for (int i = 0; i < n_out; i++) {
    const o2m_value *then_v = branch[0]->output_values[i];
    const o2m_value *else_v = branch[1]->output_values[i];
    if (taken < 0 && (branch[0]->unbuildable || branch[1]->unbuildable)) {
      const o2m_value *v = branch[0]->unbuildable ? else_v : then_v;
      o2m_out_set_type(ctx, i, &v->type);
      continue;
    }
    if (taken >= 0) {
      const o2m_value *v = taken ? else_v : then_v;
      o2m_out_set_type(ctx, i, &v->type);
      forward_value(ctx, i, v);
      continue;
    }
    o2m_type *merged;
    if ((st = o2m_type_merge(ctx, &then_v->type, &else_v->type, "the branches' outputs",
                             &merged)))
      return st;
    o2m_out_set_type(ctx, i, merged);
  }
  return O2M_OK;
}

/* ---- Loop ----------------------------------------------------------------------- */

/* Whether the body passes its condition input through unchanged (directly
 * or through Identity), or always yields true. */
static int body_keeps_condition(const o2m_graph *body) {
  const o2m_value *c = body->output_values[0];
  if (c->known && c->known->count == 1 && c->known->data)
    return o2m_tensor_get_int(c->known, 0) != 0;
  while (c->kind == O2M_VALUE_NODE && c->producer &&
         strcmp(c->producer->op_type, "Identity") == 0 && !c->producer->domain[0] &&
         c->producer->n_inputs == 1 && c->producer->inputs[0])
    c = c->producer->inputs[0];
  return c == body->input_values[1];
}

/* The number of iterations: M when given and the loop cannot stop early. */
static o2m_dim loop_trip_count(o2m_infer_ctx *ctx, const o2m_graph *body) {
  int64_t *m, *cond;
  if (o2m_in_known_ints(ctx, 0, &m) != 1 || m[0] < 0) return o2m_dim_fresh(ctx);
  if (!o2m_in_present(ctx, 1)) return o2m_dim_known(m[0]);
  if (o2m_in_known_ints(ctx, 1, &cond) == 1 && cond[0] && body_keeps_condition(body))
    return o2m_dim_known(m[0]);
  return o2m_dim_fresh(ctx);
}

/* Drops the values that an earlier pass recorded on a graph's node outputs
 * (and in its nested graphs), so that a re-inferred body cannot read a
 * value computed from its earlier, narrower input types. */
static void forget_values(o2m_graph *g) {
  for (int i = 0; i < g->n_values; i++) {
    o2m_value *v = g->values[i];
    if (v->kind != O2M_VALUE_NODE) continue;
    v->known = NULL;
    v->shape_value = NULL;
    v->shape_value_len = 0;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    for (int a = 0; a < n->n_attrs; a++) {
      if (n->attrs[a].type == O2M_ATTR_GRAPH && n->attrs[a].g) forget_values(n->attrs[a].g);
      for (int k = 0; n->attrs[a].type == O2M_ATTR_GRAPHS && k < n->attrs[a].count; k++)
        forget_values(n->attrs[a].graphs[k]);
    }
  }
}

/* Sets output i to t with every free symbol (a dim that varies across
 * iterations) replaced by a fresh one: the loop's outputs must not claim
 * equalities that hold only inside one iteration. */
static o2m_status out_without_free_symbols(o2m_infer_ctx *ctx, int i, const o2m_type *t,
                                           int free_from, int free_until) {
  o2m_type *copy = o2m_type_copy(ctx, t);
  if (!copy) return o2m_out_of_memory(ctx);
  for (o2m_type *u = copy; u; u = u->inner)
    for (int d = 0; d < u->rank; d++)
      if (symbol_is_free(u->dims[d].sym, free_from, free_until)) u->dims[d] = o2m_dim_fresh(ctx);
  o2m_out_set_type(ctx, i, copy);
  return O2M_OK;
}

/* The type the body's k-th loop-carried input gets. */
static const o2m_type *carried_input(const o2m_graph *body, const o2m_type **in_types, int k) {
  return in_types[2 + k] ? in_types[2 + k] : &body->input_values[2 + k]->type;
}

/* Infers the body until the carried types are a fixed point; `carried`
 * holds the types the body's carried inputs get (NULL: as declared) and
 * ends as the carried outputs' types. */
static o2m_status loop_fixed_point(o2m_infer_ctx *ctx, o2m_graph *body, int n_carried,
                                   const o2m_type **in_types, const o2m_type **carried,
                                   int free_from) {
  for (int pass = 0;; pass++) {
    if (pass) forget_values(body);
    o2m_status st = o2m_infer_subgraph(ctx, body, n_carried + 2, in_types);
    if (st) return st;
    int changed = 0;
    for (int k = 0; k < n_carried; k++) {
      const o2m_type *in = carried_input(body, in_types, k);
      const o2m_type *out = &body->output_values[1 + k]->type;
      o2m_type *merged = NULL;
      if (in->kind != out->kind && (in->kind == O2M_TYPE_OPTIONAL || out->kind == O2M_TYPE_OPTIONAL) &&
          in->kind != O2M_TYPE_UNKNOWN && out->kind != O2M_TYPE_UNKNOWN) {
        /* an optional carried on as its element, or the reverse: the body's
         * input keeps its type, the loop's output gets the body's */
        if (!(merged = type_relaxed(ctx, out))) return o2m_out_of_memory(ctx);
      } else if ((st = merge_types(ctx, in, out, "loop-carried values", free_from, &merged,
                                   &changed))) {
        return st;
      }
      carried[k] = merged;
    }
    if (!changed) return O2M_OK;
    for (int k = 0; k < n_carried; k++) {
      const o2m_type *in = carried_input(body, in_types, k);
      if (in->kind != carried[k]->kind) continue;
      in_types[2 + k] = carried[k];
      if (pass == LOOP_MAX_PASSES - 2 && !(in_types[2 + k] = type_relaxed(ctx, carried[k])))
        return o2m_out_of_memory(ctx);
    }
    if (pass == LOOP_MAX_PASSES - 1) return O2M_OK;
  }
}

/* Whether the loop may run its body no time at all: the trip count is not
 * known to be positive, or the condition not known to be true. */
static int loop_may_skip_body(o2m_infer_ctx *ctx) {
  int64_t *m, *cond;
  if (o2m_in_present(ctx, 0) && (o2m_in_known_ints(ctx, 0, &m) != 1 || m[0] < 1)) return 1;
  return o2m_in_present(ctx, 1) && (o2m_in_known_ints(ctx, 1, &cond) != 1 || !cond[0]);
}

/* The outputs of a loop whose body cannot be built (`why`), which can
 * only succeed without entering it: the carried values keep their initial
 * types, the scan outputs are empty: the body's declared output types
 * with a leading dim of 0 (unknown when the body declares none). */
static o2m_status never_entered_loop(o2m_infer_ctx *ctx, o2m_graph *body, int n_carried, int n_scan,
                                     const char *why) {
  body->unbuildable = why;
  body->inferred = 1;
  for (int k = 0; k < n_carried; k++) o2m_out_set_type(ctx, k, o2m_in_type(ctx, 2 + k));
  for (int j = 0; j < n_scan; j++) {
    const o2m_type *t;
    o2m_status st = insert_dim(ctx, &body->outputs[1 + n_carried + j].type, 0, o2m_dim_known(0), &t);
    if (st) return st;
    o2m_out_set_type(ctx, n_carried + j, t);
  }
  return O2M_OK;
}

o2m_status o2m_infer_loop(o2m_infer_ctx *ctx) {
  o2m_graph *body = NULL;
  o2m_status st = graph_attr(ctx, "body", &body);
  if (st) return st;
  int n_carried = o2m_in_count(ctx) - 2;
  int n_scan = body->n_outputs - 1 - n_carried;
  if (n_carried < 0 || body->n_inputs != n_carried + 2 || n_scan < 0 ||
      o2m_out_count(ctx) != n_carried + n_scan)
    return o2m_infer_error(ctx, "body has %d inputs and %d outputs for %d loop-carried "
                           "values and %d outputs", body->n_inputs, body->n_outputs,
                           n_carried, o2m_out_count(ctx));
  const o2m_type *in_types[n_carried + 2], *carried[n_carried > 0 ? n_carried : 1];
  in_types[0] = o2m_type_tensor(ctx, O2M_DT_INT64, 0, NULL);
  in_types[1] = o2m_type_tensor(ctx, O2M_DT_BOOL, 0, NULL);
  if (!in_types[0] || !in_types[1]) return o2m_out_of_memory(ctx);
  for (int k = 0; k < n_carried; k++) {
    const o2m_type *t = o2m_in_type(ctx, 2 + k);
    in_types[2 + k] = t->kind == O2M_TYPE_UNKNOWN ? NULL : t;
  }
  int free_from = ctx->model->next_symbol;
  body->unbuildable = NULL;
  if (loop_may_skip_body(ctx)) {
    /* a body that cannot be built for these shapes is kept, marked, and
     * fails only if the loop is entered at run time */
    trial t;
    const char *why;
    trial_begin(ctx, &t);
    st = loop_fixed_point(ctx, body, n_carried, in_types, carried, free_from);
    if ((st = trial_end(ctx, &t, st, &why))) return st;
    if (why) return never_entered_loop(ctx, body, n_carried, n_scan, why);
  } else if ((st = loop_fixed_point(ctx, body, n_carried, in_types, carried, free_from))) {
    return st;
  }
  int free_until = ctx->model->next_symbol;
  for (int k = 0; k < n_carried; k++)
    if ((st = out_without_free_symbols(ctx, k, carried[k], free_from, free_until))) return st;
  o2m_dim trips = loop_trip_count(ctx, body);
  for (int j = 0; j < n_scan; j++) {
    const o2m_type *t;
    if ((st = insert_dim(ctx, &body->output_values[1 + n_carried + j]->type, 0, trips, &t)) ||
        (st = out_without_free_symbols(ctx, n_carried + j, t, free_from, free_until)))
      return st;
  }
  return O2M_OK;
}

/* ---- Scan ------------------------------------------------------------------------- */

/* The outputs of a Scan (opset 9 and later) whose body cannot be built
 * (`why`), which can only succeed when the scan is empty: the states keep
 * their initial types, the scan outputs are the body's declared output
 * types with a dim of 0 at their axis (unknown when it declares none). */
static o2m_status never_entered_scan(o2m_infer_ctx *ctx, o2m_graph *body, int n_state, int n_out,
                                     const int64_t *out_axes, const char *why) {
  body->unbuildable = why;
  body->inferred = 1;
  for (int i = 0; i < n_out; i++) {
    const o2m_type *t = o2m_in_type(ctx, i);
    if (i >= n_state) {
      o2m_status st = insert_dim(ctx, &body->outputs[i].type, out_axes ? out_axes[i - n_state] : 0,
                                 o2m_dim_known(0), &t);
      if (st) return st;
    }
    o2m_out_set_type(ctx, i, t);
  }
  return O2M_OK;
}

o2m_status o2m_infer_scan(o2m_infer_ctx *ctx) {
  o2m_graph *body = NULL;
  o2m_status st = graph_attr(ctx, "body", &body);
  if (st) return st;
  int batched = ctx->op_version < 9; /* Scan-8: dim 0 is a batch dim */
  int first = batched;                /* Scan-8: input 0 is sequence_lens */
  int64_t n_scan_in = o2m_attr_int(ctx, "num_scan_inputs", -1);
  int n_in = o2m_in_count(ctx) - first, n_out = o2m_out_count(ctx);
  if (n_scan_in < 1 || n_scan_in > n_in)
    return o2m_infer_error(ctx, "num_scan_inputs %lld is invalid", (long long)n_scan_in);
  int n_state = n_in - (int)n_scan_in;
  if (body->n_inputs != n_in || body->n_outputs != n_out || n_out < n_state)
    return o2m_infer_error(ctx, "body has %d inputs and %d outputs for %d and %d",
                           body->n_inputs, body->n_outputs, n_in, n_out);
  const int64_t *in_axes = NULL, *out_axes = NULL;
  int n_in_axes = batched ? -1 : o2m_attr_ints(ctx, "scan_input_axes", &in_axes);
  int n_out_axes = batched ? -1 : o2m_attr_ints(ctx, "scan_output_axes", &out_axes);
  if ((n_in_axes >= 0 && n_in_axes != n_scan_in) ||
      (n_out_axes >= 0 && n_out_axes != n_out - n_state))
    return o2m_infer_error(ctx, "scan axes do not match the scanned values");
  const o2m_type *in_types[n_in > 0 ? n_in : 1];
  o2m_dim batch = {-1, NULL}, length = {-1, NULL};
  for (int i = 0; i < n_in; i++) {
    const o2m_type *t = o2m_in_type(ctx, first + i);
    int scanned = i >= n_state;
    if (batched && (st = remove_dim(ctx, t, 0, &t, &batch))) return st;
    if (scanned) {
      int64_t axis = batched ? 0 : n_in_axes >= 0 ? in_axes[i - n_state] : 0;
      if (t && (st = remove_dim(ctx, t, axis, &t, &length))) return st;
    }
    in_types[i] = t;
  }
  body->unbuildable = NULL;
  if (!batched && length.size < 1) {
    /* the scan may be empty, and then never runs its body: one that cannot
     * be built for these shapes is kept, marked, and fails only if run */
    trial t;
    const char *why;
    trial_begin(ctx, &t);
    if ((st = trial_end(ctx, &t, o2m_infer_subgraph(ctx, body, n_in, in_types), &why))) return st;
    if (why) return never_entered_scan(ctx, body, n_state, n_out, n_out_axes >= 0 ? out_axes : NULL, why);
  } else if ((st = o2m_infer_subgraph(ctx, body, n_in, in_types))) {
    return st;
  }
  if (batch.size < 0 && !batch.sym) batch = o2m_dim_fresh(ctx);
  if (length.size < 0 && !length.sym) length = o2m_dim_fresh(ctx);
  for (int i = 0; i < n_out; i++) {
    const o2m_type *t = &body->output_values[i]->type;
    if (i >= n_state &&
        (st = insert_dim(ctx, t, n_out_axes >= 0 ? out_axes[i - n_state] : 0, length, &t)))
      return st;
    /* Scan-8: every output gets the batch dim in front */
    if (batched && (st = insert_dim(ctx, t, 0, batch, &t))) return st;
    o2m_out_set_type(ctx, i, t);
  }
  return O2M_OK;
}

/* ---- SequenceMap -------------------------------------------------------------------- */

o2m_status o2m_infer_sequence_map(o2m_infer_ctx *ctx) {
  o2m_graph *body = NULL;
  o2m_status st = graph_attr(ctx, "body", &body);
  if (st) return st;
  int n_in = o2m_in_count(ctx), n_out = o2m_out_count(ctx);
  if (body->n_inputs != n_in || body->n_outputs != n_out)
    return o2m_infer_error(ctx, "body has %d inputs and %d outputs for %d and %d",
                           body->n_inputs, body->n_outputs, n_in, n_out);
  if (o2m_in_type(ctx, 0)->kind != O2M_TYPE_SEQUENCE &&
      o2m_in_type(ctx, 0)->kind != O2M_TYPE_UNKNOWN)
    return o2m_infer_error(ctx, "input 0 must be a sequence");
  const o2m_type *in_types[n_in > 0 ? n_in : 1];
  for (int i = 0; i < n_in; i++) {
    const o2m_type *t = o2m_in_type(ctx, i);
    in_types[i] = t->kind == O2M_TYPE_SEQUENCE ? t->inner
                  : t->kind == O2M_TYPE_UNKNOWN ? NULL : t;
  }
  if ((st = o2m_infer_subgraph(ctx, body, n_in, in_types))) return st;
  for (int i = 0; i < n_out; i++) {
    const o2m_type *elem = &body->output_values[i]->type;
    o2m_type seq = {O2M_TYPE_SEQUENCE, O2M_DT_UNDEFINED, 0, NULL, NULL};
    if (elem->kind != O2M_TYPE_UNKNOWN && !(seq.inner = o2m_type_copy(ctx, elem)))
      return o2m_out_of_memory(ctx);
    o2m_out_set_type(ctx, i, &seq);
  }
  return O2M_OK;
}
