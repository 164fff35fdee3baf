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

const char *o2m_model_fresh_symbol(o2m_model *model) {
  return o2m_arena_printf(&model->arena, "?%d", model->next_symbol++);
}

int o2m_symbol_is_fresh(const char *sym) { return sym && sym[0] == '?'; }
