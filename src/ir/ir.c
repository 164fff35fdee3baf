/* ir.c - small queries on the structures of ir.h that every phase uses:
 * opset lookup, attribute lookup, fresh symbols. */
#include "ir/ir.h"

#include <stdio.h>
#include <string.h>

static int same_domain(const char *a, const char *b) {
  if (strcmp(a, "ai.onnx") == 0) a = "";
  if (strcmp(b, "ai.onnx") == 0) b = "";
  return strcmp(a, b) == 0;
}

int64_t o2m_model_opset(const o2m_model *model, const char *domain) {
  for (int i = 0; i < model->n_opsets; i++)
    if (same_domain(model->opsets[i].domain, domain))
      return model->opsets[i].version;
  return 0;
}

const o2m_attr *o2m_node_attr(const o2m_node *node, const char *name) {
  for (int i = 0; i < node->n_attrs; i++)
    if (strcmp(node->attrs[i].name, name) == 0) return &node->attrs[i];
  return NULL;
}

const o2m_tensor *o2m_value_stored(const o2m_value *v) {
  if (!v) return NULL;
  if (v->init) return v->init;
  const o2m_node *n = v->kind == O2M_VALUE_NODE ? v->producer : NULL;
  if (!n || n->domain[0] || strcmp(n->op_type, "Constant") != 0 || n->n_outputs != 1) return NULL;
  const o2m_attr *a = o2m_node_attr(n, "value");
  return a && a->type == O2M_ATTR_TENSOR && a->t == v->known ? a->t : NULL;
}

const char *o2m_model_fresh_symbol(o2m_model *model) {
  return o2m_arena_printf(&model->arena, "?%d", model->next_symbol++);
}

int o2m_symbol_is_fresh(const char *sym) { return sym && sym[0] == '?'; }

o2m_value *o2m_graph_new_value(o2m_model *model, o2m_graph *g,
                               const char *name, o2m_value_kind kind) {
  o2m_arena *arena = &model->arena;
  o2m_value *v = o2m_arena_alloc(arena, sizeof(*v));
  if (!v) return NULL;
  v->name = name;
  v->kind = kind;
  v->graph = g;
  v->type.rank = -1;
  v->seq_length = -1;
  if (o2m_strmap_put(&g->value_by_name, arena, name, v)) return NULL;
  int n = g->n_values;
  if ((n & (n - 1)) == 0) { /* capacity: the next power of two */
    o2m_value **grown = o2m_arena_grow(arena, g->values, (size_t)n,
                                       n ? (size_t)n * 2 : 4, sizeof(*grown));
    if (!grown) return NULL;
    g->values = grown;
  }
  g->values[n] = v;
  g->n_values = n + 1;
  return v;
}
