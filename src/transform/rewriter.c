/* rewriter.c - the node-building toolkit rewrite rules are written in (see
 * transform.h): new nodes and constants, inferred as they are made,
 * appended to the graph's new node list; attribute helpers; messages. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "transform/transform.h"
#include "util/diag.h"

#define RW_NOMEM(rw) o2m_fail((rw)->diag, O2M_ERR_NOMEM, "%s: out of memory", (rw)->model->path)

o2m_value *o2m_rw_in(o2m_rewriter *rw, int i) {
  return i >= 0 && i < rw->node->n_inputs ? rw->node->inputs[i] : NULL;
}

o2m_value *o2m_rw_out(o2m_rewriter *rw, int i) {
  return i >= 0 && i < rw->node->n_outputs ? rw->node->outputs[i] : NULL;
}

int o2m_rw_append(o2m_rewriter *rw, o2m_node *n) {
  if (rw->n_out_nodes == rw->cap_out_nodes) {
    int cap = rw->cap_out_nodes ? rw->cap_out_nodes * 2 : 64;
    o2m_node **grown = o2m_arena_grow(&rw->model->arena, rw->out_nodes,
                                      (size_t)rw->n_out_nodes, (size_t)cap, sizeof(*grown));
    if (!grown) return -1;
    rw->out_nodes = grown;
    rw->cap_out_nodes = cap;
  }
  n->index = rw->n_out_nodes;
  rw->out_nodes[rw->n_out_nodes++] = n;
  return 0;
}

/* A node shell: names, inputs, attributes, core opset; outputs not set. */
static o2m_node *new_node(o2m_rewriter *rw, const char *domain, const char *op_type, int n_in,
                          o2m_value *const *inputs, int n_out,
                          const o2m_attr *attrs, int n_attrs) {
  o2m_arena *arena = &rw->model->arena;
  o2m_node *n = o2m_arena_alloc(arena, sizeof(*n));
  if (!n) return NULL;
  n->name = o2m_arena_printf(arena, "%s/%s_%d", rw->node->name, op_type, rw->counter++);
  n->op_type = op_type;
  n->domain = domain;
  n->overload = n->doc = "";
  n->n_inputs = n_in;
  n->n_outputs = n_out;
  n->input_names = o2m_arena_array(arena, (size_t)n_in + 1, sizeof(char *));
  n->inputs = o2m_arena_array(arena, (size_t)n_in + 1, sizeof(o2m_value *));
  n->output_names = o2m_arena_array(arena, (size_t)n_out + 1, sizeof(char *));
  n->outputs = o2m_arena_array(arena, (size_t)n_out + 1, sizeof(o2m_value *));
  n->attrs = o2m_arena_array(arena, (size_t)n_attrs + 1, sizeof(o2m_attr));
  if (!n->name || !n->input_names || !n->inputs || !n->output_names || !n->outputs || !n->attrs)
    return NULL;
  for (int i = 0; i < n_in; i++) {
    n->inputs[i] = inputs[i];
    n->input_names[i] = inputs[i] ? inputs[i]->name : "";
    if (inputs[i]) inputs[i]->use_count++;
  }
  if (n_attrs) memcpy(n->attrs, attrs, (size_t)n_attrs * sizeof(o2m_attr));
  n->n_attrs = n_attrs;
  n->opset = domain[0] ? 1 : O2M_CORE_OPSET;
  n->op = o2m_op_lookup(domain, op_type);
  n->graph = rw->graph;
  return n;
}

static o2m_status infer_new(o2m_rewriter *rw, o2m_node *n) {
  if (!n->op)
    return o2m_fail(rw->diag, O2M_ERR_INTERNAL, "rewrite of node '%s' made an unknown op %s",
                    rw->node->name, n->op_type);
  if (o2m_rw_append(rw, n)) return RW_NOMEM(rw);
  return o2m_infer_node(rw->model, rw->graph, n, rw->diag);
}

o2m_value **o2m_rw_node(o2m_rewriter *rw, const char *op_type, int n_in,
                        o2m_value *const *inputs, int n_out,
                        const o2m_attr *attrs, int n_attrs) {
  o2m_node *n = new_node(rw, "", op_type, n_in, inputs, n_out, attrs, n_attrs);
  if (!n) {
    RW_NOMEM(rw);
    return NULL;
  }
  for (int k = 0; k < n_out; k++) {
    const char *name = o2m_arena_printf(&rw->model->arena, "%s:%d", n->name, k);
    o2m_value *v = name ? o2m_graph_new_value(rw->model, rw->graph, name, O2M_VALUE_NODE) : NULL;
    if (!v) {
      RW_NOMEM(rw);
      return NULL;
    }
    v->producer = n;
    v->producer_output = k;
    n->outputs[k] = v;
    n->output_names[k] = name;
  }
  return infer_new(rw, n) ? NULL : n->outputs;
}

o2m_value *o2m_rw_op(o2m_rewriter *rw, const char *op_type, int n_in,
                     o2m_value *const *inputs, const o2m_attr *attrs,
                     int n_attrs) {
  o2m_value **out = o2m_rw_node(rw, op_type, n_in, inputs, 1, attrs, n_attrs);
  return out ? out[0] : NULL;
}

o2m_status o2m_rw_node_into(o2m_rewriter *rw, const char *op_type, int n_in,
                            o2m_value *const *inputs, int n_out,
                            o2m_value *const *outputs, const o2m_attr *attrs,
                            int n_attrs) {
  return o2m_rw_domain_node_into(rw, "", op_type, n_in, inputs, n_out, outputs, attrs, n_attrs);
}

o2m_status o2m_rw_domain_node_into(o2m_rewriter *rw, const char *domain, const char *op_type, int n_in,
                                   o2m_value *const *inputs, int n_out, o2m_value *const *outputs,
                                   const o2m_attr *attrs, int n_attrs) {
  o2m_node *n = new_node(rw, domain, op_type, n_in, inputs, n_out, attrs, n_attrs);
  if (!n) return RW_NOMEM(rw);
  for (int k = 0; k < n_out; k++) {
    o2m_value *v = outputs[k];
    n->outputs[k] = v;
    n->output_names[k] = v ? v->name : "";
    if (!v) continue;
    v->producer = n;
    v->producer_output = k;
  }
  return infer_new(rw, n);
}

o2m_status o2m_rw_update(o2m_rewriter *rw, int n_in, o2m_value *const *inputs,
                         const o2m_attr *attrs, int n_attrs) {
  o2m_node *old = rw->node;
  o2m_node *n = new_node(rw, "", old->op_type, n_in, inputs, old->n_outputs, attrs, n_attrs);
  if (!n) return RW_NOMEM(rw);
  n->name = old->name;
  n->domain = old->domain;
  n->op = old->op;
  for (int k = 0; k < old->n_outputs; k++) {
    n->outputs[k] = old->outputs[k];
    n->output_names[k] = old->output_names[k];
    if (n->outputs[k]) n->outputs[k]->producer = n;
  }
  return infer_new(rw, n);
}

/* ---- constants ---------------------------------------------------------- */

o2m_value *o2m_rw_const_tensor(o2m_rewriter *rw, const o2m_tensor *t) {
  o2m_attr value = {0};
  value.name = "value";
  value.type = O2M_ATTR_TENSOR;
  value.t = (o2m_tensor *)t;
  value.ref_attr_name = value.doc = "";
  return o2m_rw_op(rw, "Constant", 0, NULL, &value, 1);
}

o2m_tensor *o2m_rw_new_tensor(o2m_rewriter *rw, o2m_dtype dtype, int rank, const int64_t *dims) {
  o2m_infer_ctx ctx = {rw->model, &rw->model->arena, rw->diag, rw->graph, rw->node, 0};
  o2m_tensor *t = o2m_tensor_new(&ctx, dtype, rank, dims);
  if (!t) RW_NOMEM(rw);
  return t;
}

o2m_value *o2m_rw_const_ints(o2m_rewriter *rw, const int64_t *values, int n) {
  int64_t dims[1] = {n};
  o2m_tensor *t = o2m_rw_new_tensor(rw, O2M_DT_INT64, 1, dims);
  if (!t) return NULL;
  for (int i = 0; i < n; i++) o2m_tensor_set_int(t, i, values[i]);
  return o2m_rw_const_tensor(rw, t);
}

o2m_value *o2m_rw_const_scalar(o2m_rewriter *rw, o2m_dtype dtype, double v) {
  o2m_tensor *t = o2m_rw_new_tensor(rw, dtype, 0, NULL);
  if (!t) return NULL;
  o2m_tensor_set_float(t, 0, v);
  return o2m_rw_const_tensor(rw, t);
}

/* ---- attributes --------------------------------------------------------- */

o2m_attr o2m_rw_attr_int(const char *name, int64_t v) {
  o2m_attr a = {0};
  a.name = name;
  a.type = O2M_ATTR_INT;
  a.ref_attr_name = a.doc = "";
  a.i = v;
  return a;
}

o2m_attr o2m_rw_attr_float(const char *name, float v) {
  o2m_attr a = o2m_rw_attr_int(name, 0);
  a.type = O2M_ATTR_FLOAT;
  a.f = v;
  return a;
}

o2m_attr o2m_rw_attr_ints(o2m_rewriter *rw, const char *name,
                          const int64_t *v, int n) {
  o2m_attr a = o2m_rw_attr_int(name, 0);
  a.type = O2M_ATTR_INTS;
  a.count = n;
  a.ints = o2m_arena_array(&rw->model->arena, (size_t)n + 1, sizeof(int64_t));
  if (a.ints && n) memcpy(a.ints, v, (size_t)n * sizeof(int64_t));
  return a;
}

o2m_attr o2m_rw_attr_string(o2m_rewriter *rw, const char *name, const char *s) {
  o2m_attr a = o2m_rw_attr_int(name, 0);
  a.type = O2M_ATTR_STRING;
  const char *copy = o2m_arena_strdup(&rw->model->arena, s);
  a.s = (o2m_bytes){(const uint8_t *)copy, copy ? strlen(copy) : 0};
  return a;
}

const o2m_attr *o2m_rw_attr(o2m_rewriter *rw, const char *name) {
  return o2m_node_attr(rw->node, name);
}

int64_t o2m_rw_attr_i(o2m_rewriter *rw, const char *name, int64_t dflt) {
  const o2m_attr *a = o2m_rw_attr(rw, name);
  return a && a->type == O2M_ATTR_INT ? a->i : dflt;
}

float o2m_rw_attr_f(o2m_rewriter *rw, const char *name, float dflt) {
  const o2m_attr *a = o2m_rw_attr(rw, name);
  if (a && a->type == O2M_ATTR_FLOAT) return a->f;
  return a && a->type == O2M_ATTR_INT ? (float)a->i : dflt;
}

/* ---- messages ------------------------------------------------------------ */

static o2m_status rw_fail(o2m_rewriter *rw, o2m_status status, const char *fmt, va_list ap) {
  char reason[1024];
  vsnprintf(reason, sizeof(reason), fmt, ap);
  const o2m_node *n = rw->node;
  return o2m_fail(rw->diag, status, "%s: node '%s' (%s, domain '%s', opset %lld): %s",
                  rw->model->path, n->name, n->op_type, n->domain[0] ? n->domain : "ai.onnx",
                  (long long)n->opset, reason);
}

o2m_status o2m_rw_unsupported(o2m_rewriter *rw, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = rw_fail(rw, O2M_ERR_UNSUPPORTED, fmt, ap);
  va_end(ap);
  return s;
}

o2m_status o2m_rw_error(o2m_rewriter *rw, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = rw_fail(rw, O2M_ERR_INVALID, fmt, ap);
  va_end(ap);
  return s;
}
