/* infer.c - the inference driver: walks each graph in topological order,
 * calls the op table's function per node, fills leftover unknown dims with
 * fresh symbols, infers subgraphs the op function did not, and reconciles
 * inferred types with the types the model declares (value_info, graph
 * outputs), warning on conflicts. */
#include <stdio.h>
#include <string.h>

#include "infer/infer.h"
#include "ir/type_text.h"
#include "util/diag.h"

static o2m_status infer_graph(o2m_model *model, o2m_graph *g, o2m_diag *diag);

/* ---- reconciling declared and inferred types --------------------------- */

/* Non-zero when the two types contradict each other (a known fact of one
 * differs from a known fact of the other). */
static int types_conflict(const o2m_type *a, const o2m_type *b) {
  if (a->kind == O2M_TYPE_UNKNOWN || b->kind == O2M_TYPE_UNKNOWN) return 0;
  if (a->kind != b->kind) return 1;
  if (a->kind == O2M_TYPE_SEQUENCE || a->kind == O2M_TYPE_OPTIONAL)
    return a->inner && b->inner && types_conflict(a->inner, b->inner);
  if (a->elem && b->elem && a->elem != b->elem) return 1;
  if (a->kind != O2M_TYPE_TENSOR || a->rank < 0 || b->rank < 0) return 0;
  if (a->rank != b->rank) return 1;
  for (int k = 0; k < a->rank; k++)
    if (a->dims[k].size >= 0 && b->dims[k].size >= 0 &&
        a->dims[k].size != b->dims[k].size)
      return 1;
  return 0;
}

/* Adds to `t` the facts `declared` knows and `t` does not. */
static void refine_type(o2m_arena *arena, o2m_type *t, const o2m_type *declared) {
  if (t->kind == O2M_TYPE_UNKNOWN) {
    *t = *declared;
    return;
  }
  if (t->kind != declared->kind) return;
  if (!t->elem) t->elem = declared->elem;
  if (t->kind == O2M_TYPE_SEQUENCE || t->kind == O2M_TYPE_OPTIONAL) {
    if (!t->inner) t->inner = declared->inner;
    else if (declared->inner) {
      o2m_type *inner = o2m_arena_alloc(arena, sizeof(*inner));
      if (!inner) return;
      *inner = *t->inner;
      refine_type(arena, inner, declared->inner);
      t->inner = inner;
    }
    return;
  }
  if (t->kind != O2M_TYPE_TENSOR || declared->rank < 0) return;
  if (t->rank < 0) {
    t->rank = declared->rank;
    t->dims = declared->dims;
    return;
  }
  if (t->rank != declared->rank) return;
  o2m_dim *dims = NULL;
  for (int k = 0; k < t->rank; k++) {
    o2m_dim d = t->dims[k], want = declared->dims[k];
    int better = (d.size < 0 && want.size >= 0) ||
                 (d.size < 0 && want.size < 0 && o2m_symbol_is_fresh(d.sym) &&
                  want.sym && !o2m_symbol_is_fresh(want.sym));
    if (!better) continue;
    if (!dims) {
      dims = o2m_arena_array(arena, (size_t)t->rank, sizeof(o2m_dim));
      if (!dims) return;
      memcpy(dims, t->dims, (size_t)t->rank * sizeof(o2m_dim));
    }
    dims[k] = want;
  }
  if (dims) t->dims = dims;
}

/* Merges a declared type into a value's inferred type. On a conflict the
 * declared type wins (the exporter saw real shapes) and a warning names
 * the node. */
static void reconcile(o2m_model *model, o2m_value *v, const o2m_type *declared,
                      o2m_diag *diag) {
  if (!declared || declared->kind == O2M_TYPE_UNKNOWN) return;
  if (types_conflict(&v->type, declared)) {
    char have[512], want[512];
    o2m_type_text(&v->type, have, sizeof(have));
    o2m_type_text(declared, want, sizeof(want));
    const o2m_node *n = v->producer;
    if (v->declared_conflict) {
      v->type = *declared;
      return;
    }
    v->declared_conflict = 1;
    if (n)
      o2m_warn(diag, "%s: node '%s' (%s, opset %lld): output '%s' is declared %s but inferred %s; using the declared type",
               model->path, n->name, n->op_type, (long long)n->opset, v->name, want, have);
    else
      o2m_warn(diag, "%s: value '%s' is declared %s but inferred %s; using the declared type",
               model->path, v->name, want, have);
    v->type = *declared;
    return;
  }
  refine_type(&model->arena, &v->type, declared);
}

/* Dims left unknown by an inference function get fresh symbols. */
static o2m_status fill_unknown_dims(o2m_model *model, o2m_type *t, o2m_diag *diag) {
  for (; t; t = t->inner) {
    if (t->kind != O2M_TYPE_TENSOR && t->kind != O2M_TYPE_SPARSE_TENSOR) continue;
    for (int k = 0; k < t->rank; k++)
      if (t->dims[k].size < 0 && !t->dims[k].sym) {
        t->dims[k].sym = o2m_model_fresh_symbol(model);
        if (!t->dims[k].sym) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
      }
    if (t->kind == O2M_TYPE_TENSOR) break;
  }
  return O2M_OK;
}

/* ---- graphs ------------------------------------------------------------- */

static o2m_status infer_node_subgraphs(o2m_model *model, o2m_node *n, o2m_diag *diag) {
  for (int a = 0; a < n->n_attrs; a++) {
    const o2m_attr *attr = &n->attrs[a];
    if (attr->type == O2M_ATTR_GRAPH && attr->g && !attr->g->inferred) {
      o2m_status s = infer_graph(model, attr->g, diag);
      if (s) return s;
    }
    for (int k = 0; attr->type == O2M_ATTR_GRAPHS && k < attr->count; k++)
      if (!attr->graphs[k]->inferred) {
        o2m_status s = infer_graph(model, attr->graphs[k], diag);
        if (s) return s;
      }
  }
  return O2M_OK;
}

static o2m_status infer_node(o2m_model *model, o2m_graph *g, o2m_node *n,
                             o2m_diag *diag) {
  o2m_infer_ctx ctx = {model, &model->arena, diag, g, n, 0};
  for (int i = 0; i < n->n_outputs; i++) /* a subgraph may be inferred twice */
    if (n->outputs[i]) {
      n->outputs[i]->known = NULL;
      n->outputs[i]->shape_value = NULL;
      n->outputs[i]->shape_value_len = 0;
      n->outputs[i]->seq_length = -1;
    }
  if (n->op && n->op->infer) {
    ctx.op_version = o2m_op_version(n->op, n->opset);
    o2m_status s = n->op->infer(&ctx);
    if (s) return s;
  }
  o2m_status s = infer_node_subgraphs(model, n, diag);
  if (s) return s;
  for (int i = 0; i < n->n_outputs; i++) {
    o2m_value *v = n->outputs[i];
    if (!v) continue;
    reconcile(model, v, v->declared, diag);
    s = fill_unknown_dims(model, &v->type, diag);
    if (s) return s;
  }
  return O2M_OK;
}

o2m_status o2m_infer_node(o2m_model *model, o2m_graph *graph, o2m_node *node,
                          o2m_diag *diag) {
  return infer_node(model, graph, node, diag);
}

static void adopt_outer_values(o2m_graph *g) {
  for (int i = 0; i < g->n_values; i++) {
    o2m_value *v = g->values[i];
    if (v->kind != O2M_VALUE_OUTER || !v->outer) continue;
    v->type = v->outer->type;
    v->known = v->outer->known;
    v->shape_value = v->outer->shape_value;
    v->shape_value_len = v->outer->shape_value_len;
    v->seq_length = v->outer->seq_length;
  }
}

static o2m_status infer_graph(o2m_model *model, o2m_graph *g, o2m_diag *diag) {
  adopt_outer_values(g);
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_status s = infer_node(model, g, g->nodes[i], diag);
    if (s) return s;
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (g->output_values[i] && g->output_values[i]->kind == O2M_VALUE_NODE)
      reconcile(model, g->output_values[i], &g->outputs[i].type, diag);
  g->inferred = 1;
  return O2M_OK;
}

o2m_status o2m_infer_subgraph(o2m_infer_ctx *ctx, o2m_graph *g, int n_in,
                              const o2m_type *const *in_types) {
  if (n_in > g->n_inputs) n_in = g->n_inputs;
  for (int i = 0; i < n_in; i++) {
    o2m_value *v = g->input_values[i];
    if (!v || !in_types[i]) continue;
    v->type = g->inputs[i].type;
    refine_type(ctx->arena, &v->type, in_types[i]);
    if (v->type.kind == O2M_TYPE_UNKNOWN) v->type = *in_types[i];
  }
  o2m_node *saved = ctx->node;
  o2m_status s = infer_graph(ctx->model, g, ctx->diag);
  ctx->node = saved;
  return s;
}

o2m_status o2m_infer_model(o2m_model *model, o2m_diag *diag) {
  if (!model->graph) return o2m_fail(diag, O2M_ERR_INVALID, "%s: the model has no graph", model->path);
  return infer_graph(model, model->graph, diag);
}
