/* info.c - the one-screen summary of a model (`onnx2mlir info`): header
 * facts, inputs/outputs with types, op histogram, parameter count and
 * bytes, and what each target supports. Reads dims only, never weights. */
#include <stdlib.h>
#include <string.h>

#include "core/support.h"
#include "ir/optable.h"
#include "ir/type_text.h"
#include "util/diag.h"

typedef struct op_count {
  const char *domain, *op_type;
  int64_t opset;
  int has_infer;
  long count;
} op_count;

typedef struct summary {
  op_count *ops;
  int n_ops, cap_ops;
  long nodes, subgraphs;
  int64_t params, param_bytes, external_bytes, inline_bytes;
} summary;

static int count_op(summary *s, const o2m_node *n) {
  for (int i = 0; i < s->n_ops; i++)
    if (strcmp(s->ops[i].op_type, n->op_type) == 0 &&
        strcmp(s->ops[i].domain, n->domain) == 0) {
      s->ops[i].count++;
      return 0;
    }
  if (s->n_ops == s->cap_ops) {
    int cap = s->cap_ops ? s->cap_ops * 2 : 64;
    op_count *ops = realloc(s->ops, (size_t)cap * sizeof(*ops));
    if (!ops) return -1;
    s->ops = ops;
    s->cap_ops = cap;
  }
  s->ops[s->n_ops++] = (op_count){n->domain, n->op_type, n->opset,
                                  n->op && n->op->infer, 1};
  return 0;
}

static void count_tensor(summary *s, const o2m_tensor *t) {
  s->params += t->count;
  size_t bytes = t->dtype == O2M_DT_STRING ? 0 : o2m_dtype_storage_bytes(t->dtype, t->count);
  if (bytes == SIZE_MAX) return;
  s->param_bytes += (int64_t)bytes;
  if (t->external) s->external_bytes += (int64_t)bytes;
  else s->inline_bytes += (int64_t)bytes;
}

static int walk_graph(summary *s, const o2m_graph *g) {
  for (int i = 0; i < g->n_inits; i++) count_tensor(s, g->inits[i]);
  for (int i = 0; i < g->n_sparse_inits; i++) count_tensor(s, g->sparse_inits[i]->values);
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    s->nodes++;
    if (count_op(s, n)) return -1;
    for (int a = 0; a < n->n_attrs; a++) {
      const o2m_attr *attr = &n->attrs[a];
      if (attr->type == O2M_ATTR_GRAPH && attr->g) {
        s->subgraphs++;
        if (walk_graph(s, attr->g)) return -1;
      }
      for (int k = 0; attr->type == O2M_ATTR_GRAPHS && k < attr->count; k++) {
        s->subgraphs++;
        if (walk_graph(s, attr->graphs[k])) return -1;
      }
    }
  }
  return 0;
}

static int by_count_desc(const void *a, const void *b) {
  const op_count *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return strcmp(x->op_type, y->op_type);
}

static void write_size(FILE *out, int64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  if (u == 0) fprintf(out, "%lld B", (long long)bytes);
  else fprintf(out, "%.1f %s", v, units[u]);
}

static void write_values(FILE *out, const char *title, const o2m_value *const *values,
                         int n, int skip_initializers) {
  char buf[1024];
  int shown = 0;
  for (int i = 0; i < n; i++)
    if (values[i] && !(skip_initializers && values[i]->kind == O2M_VALUE_INITIALIZER)) shown++;
  fprintf(out, "%s (%d):\n", title, shown);
  for (int i = 0; i < n; i++) {
    const o2m_value *v = values[i];
    if (!v || (skip_initializers && v->kind == O2M_VALUE_INITIALIZER)) continue;
    fprintf(out, "  %-32s %s\n", v->name, o2m_type_text(&v->type, buf, sizeof(buf)));
  }
}

static void write_all_types(FILE *out, const o2m_graph *g, int depth) {
  char buf[1024];
  fprintf(out, "%*sgraph '%s':\n", depth * 2, "", g->name);
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k])
        fprintf(out, "%*s  %s = %s(%s) : %s\n", depth * 2, "", n->outputs[k]->name,
                n->op_type, n->name, o2m_type_text(&n->outputs[k]->type, buf, sizeof(buf)));
    for (int a = 0; a < n->n_attrs; a++) {
      if (n->attrs[a].type == O2M_ATTR_GRAPH && n->attrs[a].g)
        write_all_types(out, n->attrs[a].g, depth + 1);
      for (int k = 0; n->attrs[a].type == O2M_ATTR_GRAPHS && k < n->attrs[a].count; k++)
        write_all_types(out, n->attrs[a].graphs[k], depth + 1);
    }
  }
}

static void write_header(FILE *out, const o2m_model *m) {
  fprintf(out, "model:     %s\n", m->path);
  fprintf(out, "ir:        version %lld\n", (long long)m->ir_version);
  fprintf(out, "producer:  %s %s\n", m->producer_name[0] ? m->producer_name : "(none)", m->producer_version);
  if (m->domain[0] || m->model_version)
    fprintf(out, "domain:    %s (model version %lld)\n", m->domain, (long long)m->model_version);
  fprintf(out, "opsets:   ");
  for (int i = 0; i < m->n_opsets; i++)
    fprintf(out, " %s %lld%s", m->opsets[i].domain[0] ? m->opsets[i].domain : "ai.onnx",
            (long long)m->opsets[i].version, i + 1 < m->n_opsets ? "," : "");
  fprintf(out, "\n");
  for (int i = 0; i < m->n_metadata; i++)
    fprintf(out, "metadata:  %s = %s\n", m->metadata[i].key, m->metadata[i].value);
  if (m->n_functions) fprintf(out, "functions: %d model-local (inlined)\n", m->n_functions);
}

/* "NAME  K of N ops; <missing> op op ..." for the ops `support` has
 * nothing for. */
static void write_support(FILE *out, const summary *s, const char *name, const char *missing_label,
                          o2m_op_support (*support)(const char *, const char *)) {
  int missing = 0;
  for (int i = 0; i < s->n_ops; i++)
    missing += support(s->ops[i].domain, s->ops[i].op_type) == O2M_SUPPORT_NONE;
  fprintf(out, "  %-10s %d of %d ops", name, s->n_ops - missing, s->n_ops);
  if (missing) {
    fprintf(out, "; %s:", missing_label);
    for (int i = 0; i < s->n_ops; i++)
      if (support(s->ops[i].domain, s->ops[i].op_type) == O2M_SUPPORT_NONE)
        fprintf(out, " %s", s->ops[i].op_type);
  }
  fprintf(out, "\n");
}

static void write_targets(FILE *out, const summary *s) {
  fprintf(out, "targets:\n  torch      all %d ops (written as they are)\n", s->n_ops);
  write_support(out, s, "linalg", "none for", o2m_linalg_support);
  write_support(out, s, "tosa", "none for", o2m_tosa_support);
  write_support(out, s, "stablehlo", "none for", o2m_stablehlo_support);
  /* onnx-mlir's form writes an op it lacks as an onnx.Custom, as onnx-mlir does */
  write_support(out, s, "onnx", "as onnx.Custom", o2m_onnx_support);
}

o2m_status o2m_model_write_info(const o2m_model *model, unsigned flags,
                                FILE *out, o2m_diag *diag) {
  const o2m_graph *g = model->graph;
  summary s = {0};
  if (walk_graph(&s, g)) {
    free(s.ops);
    return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  }
  write_header(out, model);
  fprintf(out, "graph:     '%s', %ld nodes", g->name, s.nodes);
  if (s.subgraphs) fprintf(out, " (incl. %ld subgraphs)", s.subgraphs);
  fprintf(out, "\n");
  write_values(out, "inputs", (const o2m_value *const *)g->input_values, g->n_inputs, 1);
  write_values(out, "outputs", (const o2m_value *const *)g->output_values, g->n_outputs, 0);
  fprintf(out, "parameters: %lld elements, ", (long long)s.params);
  write_size(out, s.param_bytes);
  if (s.external_bytes) {
    fprintf(out, " (");
    write_size(out, s.external_bytes);
    fprintf(out, " in external data)");
  }
  fprintf(out, "\n");
  if (s.n_ops) qsort(s.ops, (size_t)s.n_ops, sizeof(*s.ops), by_count_desc);
  fprintf(out, "ops (%d distinct):\n", s.n_ops);
  for (int i = 0; i < s.n_ops; i++)
    fprintf(out, "  %-28s %6ld   %s%s opset %lld%s\n", s.ops[i].op_type, s.ops[i].count,
            s.ops[i].domain[0] ? s.ops[i].domain : "ai.onnx", "", (long long)s.ops[i].opset,
            s.ops[i].has_infer ? "" : "   (no shape inference: declared types used)");
  write_targets(out, &s);
  if (flags & O2M_INFO_TYPES) {
    fprintf(out, "types:\n");
    write_all_types(out, g, 0);
  }
  free(s.ops);
  return O2M_OK;
}
