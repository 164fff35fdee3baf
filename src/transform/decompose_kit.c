/* decompose_kit.c - the builders and readers the rewrite rules share (see
 * decompose_kit.h). Everything here goes through the rewriter, so every
 * node it makes is inferred as it is made. */
#include <stdlib.h>
#include <string.h>

#include "transform/decompose_kit.h"
#include "util/diag.h"

/* ---- the replaced node ------------------------------------------------------ */

int xk_version(o2m_rewriter *rw) {
  return rw->node->op ? o2m_op_version(rw->node->op, rw->node->opset) : 0;
}

const o2m_type *xk_type(const o2m_value *v) {
  static const o2m_type unknown = {O2M_TYPE_UNKNOWN, O2M_DT_UNDEFINED, -1, NULL, NULL};
  return v ? &v->type : &unknown;
}

int xk_rank(const o2m_value *v) {
  const o2m_type *t = xk_type(v);
  return t->kind == O2M_TYPE_TENSOR ? t->rank : -1;
}

o2m_dtype xk_elem(const o2m_value *v) { return xk_type(v)->elem; }

int xk_static_dims_in(const o2m_value *v, int64_t *dims, int room) {
  int rank = xk_rank(v);
  if (rank < 0 || rank > room) return 0;
  for (int k = 0; k < rank; k++) {
    if (v->type.dims[k].size < 0) return 0;
    dims[k] = v->type.dims[k].size;
  }
  return 1;
}

int xk_axis(int64_t axis, int rank) {
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? (int)axis : -1;
}

o2m_attr *xk_attrs_except(o2m_rewriter *rw, const char *const *drop,
                          int extra, int *n) {
  const o2m_node *node = rw->node;
  o2m_attr *out = o2m_arena_array(&rw->model->arena, (size_t)(node->n_attrs + extra) + 1,
                                  sizeof(o2m_attr));
  *n = 0;
  if (!out) {
    o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
    return NULL;
  }
  for (int a = 0; a < node->n_attrs; a++) {
    int dropped = 0;
    for (int d = 0; drop && drop[d] && !dropped; d++) dropped = strcmp(drop[d], node->attrs[a].name) == 0;
    if (!dropped) out[(*n)++] = node->attrs[a];
  }
  return out;
}

/* ---- builders ------------------------------------------------------------------ */

o2m_value *xk_op1(o2m_rewriter *rw, const char *op, o2m_value *x) {
  return x ? o2m_rw_op(rw, op, 1, &x, NULL, 0) : NULL;
}

o2m_value *xk_op2(o2m_rewriter *rw, const char *op, o2m_value *a, o2m_value *b) {
  o2m_value *in[2] = {a, b};
  return a && b ? o2m_rw_op(rw, op, 2, in, NULL, 0) : NULL;
}

o2m_value *xk_scalar(o2m_rewriter *rw, o2m_dtype dtype, double v) {
  return o2m_rw_const_scalar(rw, dtype, v);
}

o2m_value *xk_const_nd(o2m_rewriter *rw, o2m_dtype dtype, int rank, const int64_t *dims,
                       const double *v) {
  o2m_tensor *t = o2m_rw_new_tensor(rw, dtype, rank, dims);
  if (!t) return NULL;
  for (int64_t k = 0; k < t->count; k++) o2m_tensor_set_float(t, k, v[k]);
  return o2m_rw_const_tensor(rw, t);
}

o2m_value *xk_const_1d(o2m_rewriter *rw, o2m_dtype dtype, const double *v, int n) {
  int64_t dims[1] = {n};
  return xk_const_nd(rw, dtype, 1, dims, v);
}

o2m_value *xk_scalar_like(o2m_rewriter *rw, const o2m_value *x, double v) {
  return x ? xk_scalar(rw, xk_elem(x), v) : NULL;
}

o2m_value *xk_where(o2m_rewriter *rw, o2m_value *cond, o2m_value *a, o2m_value *b) {
  o2m_value *in[3] = {cond, a, b};
  return cond && a && b ? o2m_rw_op(rw, "Where", 3, in, NULL, 0) : NULL;
}

o2m_value *xk_dim(o2m_rewriter *rw, o2m_value *x, int64_t k) {
  return xk_op2(rw, "Gather", xk_op1(rw, "Shape", x), xk_scalar(rw, O2M_DT_INT64, (double)k));
}

o2m_value *xk_iota(o2m_rewriter *rw, o2m_value *n) {
  o2m_value *in[3] = {xk_scalar(rw, O2M_DT_INT64, 0), n, xk_scalar(rw, O2M_DT_INT64, 1)};
  return in[0] && in[1] && in[2] ? o2m_rw_op(rw, "Range", 3, in, NULL, 0) : NULL;
}

o2m_value *xk_cast(o2m_rewriter *rw, o2m_value *x, o2m_dtype dtype) {
  if (!x || xk_elem(x) == dtype) return x;
  o2m_attr to = o2m_rw_attr_int("to", dtype);
  return o2m_rw_op(rw, "Cast", 1, &x, &to, 1);
}

/* op(x, constant ints) with the given attributes. */
static o2m_value *with_ints(o2m_rewriter *rw, const char *op, o2m_value *x,
                            const int64_t *ints, int n, const o2m_attr *attrs,
                            int n_attrs) {
  if (!x) return NULL;
  o2m_value *in[2] = {x, o2m_rw_const_ints(rw, ints, n)};
  return in[1] ? o2m_rw_op(rw, op, 2, in, attrs, n_attrs) : NULL;
}

o2m_value *xk_reduce(o2m_rewriter *rw, const char *op, o2m_value *x,
                     const int64_t *axes, int n, int keepdims) {
  o2m_attr keep = o2m_rw_attr_int("keepdims", keepdims);
  if (n == 0) return x ? o2m_rw_op(rw, op, 1, &x, &keep, 1) : NULL;
  return with_ints(rw, op, x, axes, n, &keep, 1);
}

o2m_value *xk_reshape(o2m_rewriter *rw, o2m_value *x, const int64_t *shape, int n) {
  return with_ints(rw, "Reshape", x, shape, n, NULL, 0);
}

o2m_value *xk_transpose(o2m_rewriter *rw, o2m_value *x, const int64_t *perm, int n) {
  o2m_attr p = o2m_rw_attr_ints(rw, "perm", perm, n);
  return x && p.ints ? o2m_rw_op(rw, "Transpose", 1, &x, &p, 1) : NULL;
}

o2m_value *xk_slice(o2m_rewriter *rw, o2m_value *x, int64_t axis, int64_t start, int64_t end) {
  o2m_value *in[4] = {x, o2m_rw_const_ints(rw, &start, 1), o2m_rw_const_ints(rw, &end, 1),
                      o2m_rw_const_ints(rw, &axis, 1)};
  return x && in[1] && in[2] && in[3] ? o2m_rw_op(rw, "Slice", 4, in, NULL, 0) : NULL;
}

o2m_value *xk_unsqueeze(o2m_rewriter *rw, o2m_value *x, const int64_t *axes, int n) {
  return with_ints(rw, "Unsqueeze", x, axes, n, NULL, 0);
}

o2m_value *xk_squeeze(o2m_rewriter *rw, o2m_value *x, const int64_t *axes, int n) {
  return with_ints(rw, "Squeeze", x, axes, n, NULL, 0);
}

o2m_value *xk_along_axis(o2m_rewriter *rw, o2m_value *v, int axis, int rank) {
  int ones = rank - axis - 1;
  if (!v || ones <= 0 || xk_rank(v) == 0) return v;
  int64_t shape[ones + 1];
  shape[0] = -1;
  for (int k = 1; k <= ones; k++) shape[k] = 1;
  return xk_reshape(rw, v, shape, ones + 1);
}

/* ---- finishing ------------------------------------------------------------------ */

o2m_status xk_failed(o2m_rewriter *rw) {
  return rw->diag->status ? rw->diag->status
                          : o2m_rw_error(rw, "internal: a rewrite step failed without a message");
}

o2m_status xk_bind(o2m_rewriter *rw, int k, o2m_value *v) {
  o2m_value *out = o2m_rw_out(rw, k);
  if (!v) return xk_failed(rw);
  if (!out || v == out) return O2M_OK;
  o2m_node *maker = v->kind == O2M_VALUE_NODE ? v->producer : NULL;
  if (!maker || maker == rw->node || v->use_count != 0)
    return o2m_rw_node_into(rw, "Identity", 1, &v, 1, &out, NULL, 0);
  /* v is fresh and unused: its maker produces `out` instead */
  int j = v->producer_output;
  maker->outputs[j] = out;
  maker->output_names[j] = out->name;
  out->producer = maker;
  out->producer_output = j;
  out->type = v->type;
  out->known = v->known;
  out->shape_value = v->shape_value;
  out->shape_value_len = v->shape_value_len;
  v->producer = NULL;
  return O2M_OK;
}

/* ---- subgraphs ---------------------------------------------------------------- */

int xk_inlinable(const o2m_graph *g) {
  if (g->n_sparse_inits) return 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    if (n->domain[0] || n->n_captures) return 0;
    for (int a = 0; a < n->n_attrs; a++)
      if (n->attrs[a].type == O2M_ATTR_GRAPH || n->attrs[a].type == O2M_ATTR_GRAPHS) return 0;
  }
  return 1;
}

typedef struct value_map {
  int n, cap;
  const o2m_value **from;
  o2m_value **to;
} value_map;

static void map_put(value_map *m, const o2m_value *from, o2m_value *to) {
  if (m->n < m->cap) {
    m->from[m->n] = from;
    m->to[m->n++] = to;
  }
}

/* The value in the graph being rewritten for g's value v. */
static o2m_value *mapped(o2m_rewriter *rw, value_map *m, const o2m_value *v) {
  for (int i = 0; i < m->n; i++)
    if (m->from[i] == v) return m->to[i];
  if (v->kind == O2M_VALUE_OUTER) {
    o2m_value *o = v->outer;
    while (o && o->kind == O2M_VALUE_OUTER && o->graph != rw->graph) o = o->outer;
    return o;
  }
  if (v->kind == O2M_VALUE_INITIALIZER) {
    o2m_value *c = v->init ? o2m_rw_const_tensor(rw, v->init) : NULL;
    if (c) map_put(m, v, c);
    return c;
  }
  return NULL; /* an input not bound, or a node output not made yet */
}

o2m_status xk_inline(o2m_rewriter *rw, const o2m_graph *g, int n_args, o2m_value *const *args,
                     o2m_value **outs) {
  value_map m = {0};
  m.cap = g->n_inputs + g->n_inits + 1;
  for (int i = 0; i < g->n_nodes; i++) m.cap += g->nodes[i]->n_outputs;
  m.from = calloc((size_t)m.cap, sizeof *m.from);
  m.to = calloc((size_t)m.cap, sizeof *m.to);
  o2m_status s = m.from && m.to ? O2M_OK : o2m_rw_error(rw, "out of memory");
  for (int i = 0, a = 0; !s && i < g->n_inputs; i++) {
    const o2m_value *in = g->input_values[i];
    if (in->kind == O2M_VALUE_INITIALIZER) continue;
    if (a >= n_args || !args[a]) s = o2m_rw_error(rw, "subgraph '%s': input '%s' is not given", g->name, in->name);
    else map_put(&m, in, args[a++]);
  }
  for (int i = 0; !s && i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    o2m_value *in[n->n_inputs + 1];
    for (int k = 0; !s && k < n->n_inputs; k++) {
      in[k] = n->inputs[k] ? mapped(rw, &m, n->inputs[k]) : NULL;
      if (n->inputs[k] && !in[k]) s = xk_failed(rw);
    }
    o2m_value **made = s ? NULL : o2m_rw_node(rw, n->op_type, n->n_inputs, in, n->n_outputs, n->attrs, n->n_attrs);
    for (int k = 0; made && k < n->n_outputs; k++)
      if (n->outputs[k]) map_put(&m, n->outputs[k], made[k]);
    if (!s && !made) s = xk_failed(rw);
  }
  for (int i = 0; !s && i < g->n_outputs; i++) {
    outs[i] = mapped(rw, &m, g->output_values[i]);
    if (!outs[i]) s = o2m_rw_error(rw, "subgraph '%s': output '%s' is not made by its nodes", g->name, g->outputs[i].name);
  }
  free(m.from);
  free(m.to);
  return s;
}

o2m_value *xk_channels(o2m_rewriter *rw, o2m_value *x, int rank, int to_first) {
  int64_t perm[16];
  if (rank < 2 || rank > 16) return NULL;
  perm[0] = 0;
  for (int k = 1; k < rank; k++) perm[k] = to_first ? (k == 1 ? rank - 1 : k - 1) : (k == rank - 1 ? 1 : k + 1);
  return xk_transpose(rw, x, perm, rank);
}
