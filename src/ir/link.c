/* link.c - turns the decoded graph (names) into the graph IR (values):
 * creates a value per graph input, initializer and node output, resolves
 * every node input (through enclosing graphs for subgraphs, recording the
 * owner node's captures), looks up each node's op and opset, and sorts the
 * nodes topologically. Duplicate names, undefined inputs and cycles are
 * errors that name the nodes involved. */
#include "ir/link.h"

#include <stdio.h>
#include <string.h>

#include "ir/arity.h"
#include "ir/optable.h"
#include "util/diag.h"

typedef struct linker {
  o2m_model *model;
  o2m_diag *diag;
} linker;

#define NOMEM(l) o2m_fail((l)->diag, O2M_ERR_NOMEM, "%s: out of memory", (l)->model->path)

static const char *graph_label(const o2m_graph *g) {
  return g->name && g->name[0] ? g->name : "<unnamed>";
}

/* Appends to an arena array that grows by doubling (capacity = next power
 * of two at or above count). */
static int push_value(o2m_arena *arena, o2m_value ***array, int *count, o2m_value *v) {
  int n = *count;
  if ((n & (n - 1)) == 0) {
    o2m_value **grown = o2m_arena_grow(arena, *array, (size_t)n, n ? (size_t)n * 2 : 4, sizeof(*grown));
    if (!grown) return -1;
    *array = grown;
  }
  (*array)[n] = v;
  *count = n + 1;
  return 0;
}

static void type_of_tensor(o2m_arena *arena, const o2m_tensor *t, int rank,
                           const int64_t *dims, o2m_type *out) {
  out->kind = O2M_TYPE_TENSOR;
  out->elem = t->dtype;
  out->rank = rank;
  out->dims = rank > 0 ? o2m_arena_array(arena, (size_t)rank, sizeof(o2m_dim)) : NULL;
  if (rank > 0 && !out->dims) { out->rank = -1; return; }
  for (int k = 0; k < rank; k++) out->dims[k] = (o2m_dim){dims[k], NULL};
}

static o2m_status duplicate(linker *l, o2m_graph *g, const char *name, const char *what) {
  const o2m_value *old = o2m_strmap_get(&g->value_by_name, name);
  const char *first = old && old->producer ? old->producer->name : "";
  return o2m_fail(l->diag, O2M_ERR_INVALID,
                  "%s: graph '%s': the name '%s' is defined twice (%s%s%s%s)",
                  l->model->path, graph_label(g), name, what,
                  first[0] ? "; first by node '" : "", first, first[0] ? "'" : "");
}

/* Values that a graph defines itself: initializers, inputs, node outputs. */
static o2m_status define_values(linker *l, o2m_graph *g) {
  o2m_arena *arena = &l->model->arena;
  for (int i = 0; i < g->n_inits; i++) {
    o2m_tensor *t = g->inits[i];
    if (o2m_strmap_get(&g->value_by_name, t->name)) return duplicate(l, g, t->name, "initializer");
    o2m_value *v = o2m_graph_new_value(l->model, g, t->name, O2M_VALUE_INITIALIZER);
    if (!v) return NOMEM(l);
    v->init = t;
    v->known = t;
    type_of_tensor(arena, t, t->rank, t->dims, &v->type);
  }
  for (int i = 0; i < g->n_sparse_inits; i++) {
    o2m_sparse_tensor *sp = g->sparse_inits[i];
    const char *name = sp->values->name;
    if (o2m_strmap_get(&g->value_by_name, name)) return duplicate(l, g, name, "sparse initializer");
    o2m_value *v = o2m_graph_new_value(l->model, g, name, O2M_VALUE_INITIALIZER);
    if (!v) return NOMEM(l);
    v->sparse = sp;
    type_of_tensor(arena, sp->values, sp->rank, sp->dims, &v->type);
  }
  g->input_values = o2m_arena_array(arena, (size_t)g->n_inputs + 1, sizeof(o2m_value *));
  if (!g->input_values) return NOMEM(l);
  for (int i = 0; i < g->n_inputs; i++) {
    const o2m_value_info *vi = &g->inputs[i];
    o2m_value *v = o2m_strmap_get(&g->value_by_name, vi->name);
    if (v && v->kind == O2M_VALUE_INITIALIZER) {
      v->declared = &vi->type; /* an input with a default value */
    } else if (v) {
      return duplicate(l, g, vi->name, "graph input");
    } else {
      v = o2m_graph_new_value(l->model, g, vi->name, O2M_VALUE_INPUT);
      if (!v) return NOMEM(l);
      v->type = vi->type;
      v->declared = &vi->type;
    }
    g->input_values[i] = v;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_node *n = g->nodes[i];
    n->graph = g;
    n->index = i;
    n->outputs = o2m_arena_array(arena, (size_t)n->n_outputs + 1, sizeof(o2m_value *));
    if (!n->outputs) return NOMEM(l);
    for (int k = 0; k < n->n_outputs; k++) {
      const char *name = n->output_names[k];
      if (!name[0]) continue;
      if (o2m_strmap_get(&g->value_by_name, name)) {
        char what[512];
        snprintf(what, sizeof(what), "output %d of node '%s' (%s)", k, n->name, n->op_type);
        return duplicate(l, g, name, what);
      }
      o2m_value *v = o2m_graph_new_value(l->model, g, name, O2M_VALUE_NODE);
      if (!v) return NOMEM(l);
      v->producer = n;
      v->producer_output = k;
      n->outputs[k] = v;
    }
  }
  return O2M_OK;
}

static int has_capture(const o2m_node *n, const o2m_value *v) {
  for (int i = 0; i < n->n_captures; i++)
    if (n->captures[i] == v) return 1;
  return 0;
}

/* Finds `name` in g or, for a subgraph, in the enclosing graphs, creating
 * the OUTER values and owner captures on the way. NULL when undefined;
 * sets *oom on allocation failure. */
static o2m_value *resolve(linker *l, o2m_graph *g, const char *name, int *oom) {
  o2m_value *v = o2m_strmap_get(&g->value_by_name, name);
  if (v || !g->parent) return v;
  o2m_value *outer = resolve(l, g->parent, name, oom);
  if (!outer) return NULL;
  o2m_node *owner = g->owner;
  if (!has_capture(owner, outer) &&
      push_value(&l->model->arena, &owner->captures, &owner->n_captures, outer)) {
    *oom = 1;
    return NULL;
  }
  v = o2m_graph_new_value(l->model, g, name, O2M_VALUE_OUTER);
  if (!v) {
    *oom = 1;
    return NULL;
  }
  v->outer = outer;
  return v;
}

static o2m_status link_graph(linker *l, o2m_graph *g);

static o2m_status link_subgraphs(linker *l, o2m_graph *g, o2m_node *n) {
  for (int a = 0; a < n->n_attrs; a++) {
    o2m_attr *attr = &n->attrs[a];
    int count = attr->type == O2M_ATTR_GRAPH ? (attr->g ? 1 : 0)
              : attr->type == O2M_ATTR_GRAPHS ? attr->count : 0;
    for (int k = 0; k < count; k++) {
      o2m_graph *sub = attr->type == O2M_ATTR_GRAPH ? attr->g : attr->graphs[k];
      sub->parent = g;
      sub->owner = n;
      o2m_status s = link_graph(l, sub);
      if (s) return s;
    }
  }
  return O2M_OK;
}

static o2m_status resolve_node(linker *l, o2m_graph *g, o2m_node *n) {
  o2m_arena *arena = &l->model->arena;
  n->inputs = o2m_arena_array(arena, (size_t)n->n_inputs + 1, sizeof(o2m_value *));
  if (!n->inputs) return NOMEM(l);
  for (int k = 0; k < n->n_inputs; k++) {
    const char *name = n->input_names[k];
    if (!name[0]) continue;
    int oom = 0;
    o2m_value *v = resolve(l, g, name, &oom);
    if (oom) return NOMEM(l);
    if (!v)
      return o2m_fail(l->diag, O2M_ERR_INVALID,
                      "%s: graph '%s': node '%s' (%s) input %d '%s' is not produced by any node, graph input or initializer",
                      l->model->path, graph_label(g), n->name, n->op_type, k, name);
    v->use_count++;
    n->inputs[k] = v;
  }
  if (!n->opset) {
    n->opset = o2m_model_opset(l->model, n->domain);
    if (!n->opset)
      return o2m_fail(l->diag, O2M_ERR_INVALID,
                      "%s: node '%s' (%s): the model imports no opset for domain '%s'",
                      l->model->path, n->name, n->op_type, n->domain[0] ? n->domain : "ai.onnx");
  }
  n->op = o2m_op_lookup(n->domain, n->op_type);
  char why[256];
  if (n->op && o2m_arity_check(n, o2m_op_version(n->op, n->opset), why, sizeof(why)) != 0)
    return o2m_fail(l->diag, O2M_ERR_INVALID, "%s: graph '%s': node '%s' (%s, domain '%s', opset %lld): %s",
                    l->model->path, graph_label(g), n->name, n->op_type, n->domain[0] ? n->domain : "ai.onnx",
                    (long long)n->opset, why);
  return O2M_OK;
}

/* ---- topological order -------------------------------------------------- */

/* A min-heap of node indices, so that an already sorted graph keeps its
 * order. */
typedef struct heap { int *items, count; } heap;

static void heap_push(heap *h, int x) {
  int i = h->count++;
  h->items[i] = x;
  while (i > 0 && h->items[(i - 1) / 2] > h->items[i]) {
    int p = (i - 1) / 2, t = h->items[p];
    h->items[p] = h->items[i];
    h->items[i] = t;
    i = p;
  }
}

static int heap_pop(heap *h) {
  int top = h->items[0], i = 0;
  h->items[0] = h->items[--h->count];
  for (;;) {
    int c = 2 * i + 1;
    if (c >= h->count) break;
    if (c + 1 < h->count && h->items[c + 1] < h->items[c]) c++;
    if (h->items[i] <= h->items[c]) break;
    int t = h->items[c];
    h->items[c] = h->items[i];
    h->items[i] = t;
    i = c;
  }
  return top;
}

/* The node of g that a dependency on v waits for, or NULL. */
static o2m_node *local_producer(const o2m_graph *g, const o2m_value *v) {
  return v && v->kind == O2M_VALUE_NODE && v->graph == g ? v->producer : NULL;
}

static o2m_status report_cycle(linker *l, o2m_graph *g, const int *pending) {
  char names[1024];
  size_t len = 0;
  int listed = 0;
  for (int i = 0; i < g->n_nodes && listed < 8; i++) {
    if (!pending[i]) continue;
    const o2m_node *n = g->nodes[i];
    len += (size_t)snprintf(names + len, sizeof(names) - len, "%s'%s' (%s)",
                            listed ? ", " : "", n->name, n->op_type);
    if (len >= sizeof(names)) break;
    listed++;
  }
  return o2m_fail(l->diag, O2M_ERR_INVALID,
                  "%s: graph '%s': the nodes form a cycle or wait on one: %s",
                  l->model->path, graph_label(g), names);
}

static o2m_status sort_nodes(linker *l, o2m_graph *g) {
  int n = g->n_nodes;
  if (n == 0) return O2M_OK;
  o2m_arena *arena = &l->model->arena;
  int *pending = o2m_arena_array(arena, (size_t)n, sizeof(int));
  int *first_user = o2m_arena_array(arena, (size_t)n, sizeof(int));
  int *heap_items = o2m_arena_array(arena, (size_t)n, sizeof(int));
  o2m_node **sorted = o2m_arena_array(arena, (size_t)n, sizeof(o2m_node *));
  if (!pending || !first_user || !heap_items || !sorted) return NOMEM(l);
  /* edges producer -> user, as a linked list per producer in an array */
  int edge_cap = 0;
  for (int i = 0; i < n; i++) edge_cap += g->nodes[i]->n_inputs + g->nodes[i]->n_captures;
  int *edge_to = o2m_arena_array(arena, (size_t)edge_cap + 1, sizeof(int));
  int *edge_next = o2m_arena_array(arena, (size_t)edge_cap + 1, sizeof(int));
  if (!edge_to || !edge_next) return NOMEM(l);
  for (int i = 0; i < n; i++) first_user[i] = -1;
  int edges = 0;
  for (int i = 0; i < n; i++) {
    o2m_node *user = g->nodes[i];
    int deps = user->n_inputs + user->n_captures;
    for (int k = 0; k < deps; k++) {
      o2m_value *v = k < user->n_inputs ? user->inputs[k] : user->captures[k - user->n_inputs];
      o2m_node *p = local_producer(g, v);
      if (!p) continue;
      edge_to[edges] = i;
      edge_next[edges] = first_user[p->index];
      first_user[p->index] = edges++;
      pending[i]++;
    }
  }
  heap h = {heap_items, 0};
  for (int i = 0; i < n; i++)
    if (!pending[i]) heap_push(&h, i);
  int done = 0;
  while (h.count) {
    int i = heap_pop(&h);
    sorted[done++] = g->nodes[i];
    for (int e = first_user[i]; e >= 0; e = edge_next[e])
      if (--pending[edge_to[e]] == 0) heap_push(&h, edge_to[e]);
  }
  if (done < n) return report_cycle(l, g, pending);
  g->nodes = sorted;
  for (int i = 0; i < n; i++) sorted[i]->index = i;
  return O2M_OK;
}

/* ---- graphs ------------------------------------------------------------- */

static o2m_status bind_declared_types(linker *l, o2m_graph *g) {
  for (int i = 0; i < g->n_value_infos; i++) {
    o2m_value *v = o2m_strmap_get(&g->value_by_name, g->value_infos[i].name);
    if (v && !v->declared) v->declared = &g->value_infos[i].type;
  }
  g->output_values = o2m_arena_array(&l->model->arena, (size_t)g->n_outputs + 1, sizeof(o2m_value *));
  if (!g->output_values) return NOMEM(l);
  for (int i = 0; i < g->n_outputs; i++) {
    int oom = 0;
    o2m_value *v = resolve(l, g, g->outputs[i].name, &oom);
    if (oom) return NOMEM(l);
    if (!v)
      return o2m_fail(l->diag, O2M_ERR_INVALID,
                      "%s: graph '%s': output '%s' is not produced by any node, graph input or initializer",
                      l->model->path, graph_label(g), g->outputs[i].name);
    if (v->kind == O2M_VALUE_NODE && !v->declared) v->declared = &g->outputs[i].type;
    v->use_count++;
    g->output_values[i] = v;
  }
  return O2M_OK;
}

static o2m_status link_graph(linker *l, o2m_graph *g) {
  o2m_status s = define_values(l, g);
  for (int i = 0; !s && i < g->n_nodes; i++) s = link_subgraphs(l, g, g->nodes[i]);
  for (int i = 0; !s && i < g->n_nodes; i++) s = resolve_node(l, g, g->nodes[i]);
  if (!s) s = bind_declared_types(l, g);
  if (!s) s = sort_nodes(l, g);
  return s;
}

o2m_status o2m_link_model(o2m_model *model, o2m_diag *diag) {
  linker l = {model, diag};
  if (!model->graph)
    return o2m_fail(diag, O2M_ERR_INVALID, "%s: the model has no graph", model->path);
  return link_graph(&l, model->graph);
}
