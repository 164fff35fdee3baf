/* inline.c - inlining of model-local functions (ModelProto.functions).
 *
 * Works on names, before linking: each call node is replaced by copies of
 * the function's body nodes whose value names are renamed apart with a
 * per-call prefix, formal inputs/outputs bound to the call's actual names,
 * attribute references (ref_attr_name) replaced by the caller's attribute
 * or the function's default, and opsets taken from the function's own
 * opset imports. Nested calls are expanded too, to a bounded depth. */
#include <string.h>

#include "ir/link.h"
#include "util/diag.h"

enum { MAX_INLINE_DEPTH = 32 };

typedef struct inliner {
  o2m_model *model;
  o2m_diag *diag;
  int calls; /* counter making prefixes unique */
} inliner;

typedef struct call_scope {
  const o2m_function *fn;
  const o2m_node *call;
  const char *prefix;
} call_scope;

typedef struct node_list {
  o2m_node **items;
  int count, cap;
} node_list;

static int list_push(o2m_arena *arena, node_list *list, o2m_node *n) {
  if (list->count == list->cap) {
    int cap = list->cap ? list->cap * 2 : 16;
    o2m_node **items = o2m_arena_grow(arena, list->items, (size_t)list->count, (size_t)cap, sizeof(*items));
    if (!items) return -1;
    list->items = items;
    list->cap = cap;
  }
  list->items[list->count++] = n;
  return 0;
}

static const o2m_function *find_function(const o2m_model *m, const o2m_node *n) {
  for (int i = 0; i < m->n_functions; i++) {
    const o2m_function *f = &m->functions[i];
    if (strcmp(f->name, n->op_type) == 0 && strcmp(f->domain, n->domain) == 0 &&
        strcmp(f->overload, n->overload) == 0)
      return f;
  }
  return NULL;
}

/* The caller-side name of a function-scope name. */
static const char *rename_in(o2m_arena *arena, const call_scope *sc, const char *name) {
  if (!name[0]) return name;
  for (int i = 0; i < sc->fn->n_inputs; i++)
    if (strcmp(sc->fn->inputs[i], name) == 0)
      return i < sc->call->n_inputs ? sc->call->input_names[i] : "";
  for (int i = 0; i < sc->fn->n_outputs; i++)
    if (strcmp(sc->fn->outputs[i], name) == 0 && i < sc->call->n_outputs &&
        sc->call->output_names[i][0])
      return sc->call->output_names[i];
  return o2m_arena_printf(arena, "%s%s", sc->prefix, name);
}

static const o2m_attr *find_attr(const o2m_attr *attrs, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(attrs[i].name, name) == 0) return &attrs[i];
  return NULL;
}

static o2m_graph *copy_subgraph(inliner *in, const call_scope *sc, const o2m_graph *g);

/* Copies body node attributes, resolving references; returns -1 on OOM. */
static int copy_attrs(inliner *in, const call_scope *sc, const o2m_node *src, o2m_node *dst) {
  o2m_arena *arena = &in->model->arena;
  dst->attrs = o2m_arena_array(arena, (size_t)src->n_attrs + 1, sizeof(o2m_attr));
  if (!dst->attrs) return -1;
  dst->n_attrs = 0;
  for (int a = 0; a < src->n_attrs; a++) {
    const o2m_attr *attr = &src->attrs[a];
    o2m_attr copy = *attr;
    if (attr->ref_attr_name && attr->ref_attr_name[0]) {
      const o2m_attr *bound = find_attr(sc->call->attrs, sc->call->n_attrs, attr->ref_attr_name);
      if (!bound) bound = find_attr(sc->fn->attr_defaults, sc->fn->n_attr_defaults, attr->ref_attr_name);
      if (!bound) continue; /* unset optional attribute: the op's default applies */
      copy = *bound;
      copy.name = attr->name;
      copy.ref_attr_name = "";
    }
    if (copy.type == O2M_ATTR_GRAPH && copy.g) {
      copy.g = copy_subgraph(in, sc, copy.g);
      if (!copy.g) return -1;
    }
    if (copy.type == O2M_ATTR_GRAPHS && copy.count) {
      copy.graphs = o2m_arena_array(arena, (size_t)copy.count, sizeof(o2m_graph *));
      if (!copy.graphs) return -1;
      for (int k = 0; k < copy.count; k++)
        if (!(copy.graphs[k] = copy_subgraph(in, sc, attr->graphs[k]))) return -1;
    }
    dst->attrs[dst->n_attrs++] = copy;
  }
  return 0;
}

/* Non-zero when `name` is defined inside g itself. */
static int defined_in(const o2m_graph *g, const char *name) {
  for (int i = 0; i < g->n_inputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0) return 1;
  for (int i = 0; i < g->n_inits; i++)
    if (strcmp(g->inits[i]->name, name) == 0) return 1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_outputs; k++)
      if (strcmp(g->nodes[i]->output_names[k], name) == 0) return 1;
  return 0;
}

static const char *rename_ref(inliner *in, const call_scope *sc, const o2m_graph *g, const char *name) {
  return name[0] && !defined_in(g, name) ? rename_in(&in->model->arena, sc, name) : name;
}

/* A subgraph inside a function body: its own names stay, references to the
 * function's scope are renamed, attribute references are resolved. */
static o2m_graph *copy_subgraph(inliner *in, const call_scope *sc, const o2m_graph *g) {
  o2m_arena *arena = &in->model->arena;
  o2m_graph *c = o2m_arena_alloc(arena, sizeof(*c));
  if (!c) return NULL;
  *c = *g;
  c->nodes = o2m_arena_array(arena, (size_t)g->n_nodes + 1, sizeof(o2m_node *));
  c->outputs = o2m_arena_array(arena, (size_t)g->n_outputs + 1, sizeof(o2m_value_info));
  if (!c->nodes || !c->outputs) return NULL;
  for (int i = 0; i < g->n_outputs; i++) {
    c->outputs[i] = g->outputs[i];
    if (!(c->outputs[i].name = rename_ref(in, sc, g, g->outputs[i].name))) return NULL;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *src = g->nodes[i];
    o2m_node *n = o2m_arena_alloc(arena, sizeof(*n));
    if (!n) return NULL;
    *n = *src;
    n->input_names = o2m_arena_array(arena, (size_t)src->n_inputs + 1, sizeof(char *));
    if (!n->input_names) return NULL;
    for (int k = 0; k < src->n_inputs; k++)
      if (!(n->input_names[k] = rename_ref(in, sc, g, src->input_names[k]))) return NULL;
    if (copy_attrs(in, sc, src, n)) return NULL;
    c->nodes[i] = n;
  }
  return c;
}

static o2m_status expand_node(inliner *in, o2m_node *n, int depth, node_list *out);

/* Appends the body of `fn` for the call `call` to `out`. */
static o2m_status expand_call(inliner *in, const o2m_function *fn, const o2m_node *call,
                              int depth, node_list *out) {
  o2m_arena *arena = &in->model->arena;
  if (depth >= MAX_INLINE_DEPTH)
    return o2m_fail(in->diag, O2M_ERR_INVALID,
                    "%s: node '%s' calls function '%s' (domain '%s') recursively or nested deeper than %d",
                    in->model->path, call->name, fn->name, fn->domain, MAX_INLINE_DEPTH);
  call_scope sc = {fn, call, o2m_arena_printf(arena, "%s__%s_%d/", call->name[0] ? call->name : fn->name, fn->name, in->calls++)};
  if (!sc.prefix) return o2m_fail(in->diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < fn->n_nodes; i++) {
    const o2m_node *src = fn->nodes[i];
    o2m_node *n = o2m_arena_alloc(arena, sizeof(*n));
    if (!n) return o2m_fail(in->diag, O2M_ERR_NOMEM, "out of memory");
    *n = *src;
    n->name = o2m_arena_printf(arena, "%s%s", sc.prefix, src->name);
    n->input_names = o2m_arena_array(arena, (size_t)src->n_inputs + 1, sizeof(char *));
    n->output_names = o2m_arena_array(arena, (size_t)src->n_outputs + 1, sizeof(char *));
    if (!n->name || !n->input_names || !n->output_names) return o2m_fail(in->diag, O2M_ERR_NOMEM, "out of memory");
    for (int k = 0; k < src->n_inputs; k++)
      if (!(n->input_names[k] = rename_in(arena, &sc, src->input_names[k]))) return o2m_fail(in->diag, O2M_ERR_NOMEM, "out of memory");
    for (int k = 0; k < src->n_outputs; k++)
      if (!(n->output_names[k] = rename_in(arena, &sc, src->output_names[k]))) return o2m_fail(in->diag, O2M_ERR_NOMEM, "out of memory");
    if (copy_attrs(in, &sc, src, n)) return o2m_fail(in->diag, O2M_ERR_NOMEM, "out of memory");
    n->opset = 0;
    for (int k = 0; k < fn->n_opsets; k++)
      if (strcmp(fn->opsets[k].domain, n->domain) == 0) n->opset = fn->opsets[k].version;
    o2m_status s = expand_node(in, n, depth + 1, out);
    if (s) return s;
  }
  return O2M_OK;
}

static o2m_status inline_graph(inliner *in, o2m_graph *g, int depth);

/* Appends n, or its expansion when it calls a function, to `out`. */
static o2m_status expand_node(inliner *in, o2m_node *n, int depth, node_list *out) {
  for (int a = 0; a < n->n_attrs; a++) {
    o2m_attr *attr = &n->attrs[a];
    if (attr->type == O2M_ATTR_GRAPH && attr->g) {
      o2m_status s = inline_graph(in, attr->g, depth);
      if (s) return s;
    }
    for (int k = 0; attr->type == O2M_ATTR_GRAPHS && k < attr->count; k++) {
      o2m_status s = inline_graph(in, attr->graphs[k], depth);
      if (s) return s;
    }
  }
  const o2m_function *fn = find_function(in->model, n);
  if (!fn) {
    if (list_push(&in->model->arena, out, n)) return o2m_fail(in->diag, O2M_ERR_NOMEM, "out of memory");
    return O2M_OK;
  }
  return expand_call(in, fn, n, depth, out);
}

static o2m_status inline_graph(inliner *in, o2m_graph *g, int depth) {
  node_list out = {0};
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_status s = expand_node(in, g->nodes[i], depth, &out);
    if (s) return s;
  }
  g->nodes = out.items;
  g->n_nodes = out.count;
  return O2M_OK;
}

o2m_status o2m_inline_functions(o2m_model *model, o2m_diag *diag) {
  if (!model->n_functions || !model->graph) return O2M_OK;
  inliner in = {model, diag, 0};
  return inline_graph(&in, model->graph, 0);
}
