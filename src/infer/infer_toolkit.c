/* infer_toolkit.c - the helpers per-op inference functions are written in:
 * input/attribute/output access, dims, broadcasting, axes, error messages.
 * The driver that walks graphs lives in infer.c; tensor element access in
 * infer_tensor.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "infer/infer.h"
#include "util/diag.h"

/* ---- errors ------------------------------------------------------------ */

static o2m_status node_fail(o2m_infer_ctx *ctx, o2m_status status,
                            const char *fmt, va_list ap) {
  char reason[1024];
  vsnprintf(reason, sizeof(reason), fmt, ap);
  const o2m_node *n = ctx->node;
  return o2m_fail(ctx->diag, status,
                  "%s: node '%s' (%s, domain '%s', opset %lld): %s",
                  ctx->model->path ? ctx->model->path : "<model>", n->name,
                  n->op_type, n->domain[0] ? n->domain : "ai.onnx",
                  (long long)n->opset, reason);
}

o2m_status o2m_infer_error(o2m_infer_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = node_fail(ctx, O2M_ERR_INVALID, fmt, ap);
  va_end(ap);
  return s;
}

o2m_status o2m_infer_unsupported(o2m_infer_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = node_fail(ctx, O2M_ERR_UNSUPPORTED, fmt, ap);
  va_end(ap);
  return s;
}

/* ---- inputs ------------------------------------------------------------ */

int o2m_in_count(const o2m_infer_ctx *ctx) { return ctx->node->n_inputs; }

int o2m_in_present(const o2m_infer_ctx *ctx, int i) {
  return i >= 0 && i < ctx->node->n_inputs && ctx->node->inputs[i] != NULL;
}

const o2m_type *o2m_in_type(const o2m_infer_ctx *ctx, int i) {
  static const o2m_type missing = {O2M_TYPE_UNKNOWN, O2M_DT_UNDEFINED, -1,
                                   NULL, NULL};
  return o2m_in_present(ctx, i) ? &ctx->node->inputs[i]->type : &missing;
}

const o2m_tensor *o2m_in_known(const o2m_infer_ctx *ctx, int i) {
  return o2m_in_present(ctx, i) ? ctx->node->inputs[i]->known : NULL;
}

int64_t o2m_in_seq_length(const o2m_infer_ctx *ctx, int i) {
  return o2m_in_present(ctx, i) ? ctx->node->inputs[i]->seq_length : -1;
}

int64_t o2m_in_known_ints(o2m_infer_ctx *ctx, int i, int64_t **values) {
  const o2m_tensor *t = o2m_in_known(ctx, i);
  if (!t || !o2m_dtype_is_int(t->dtype) || (t->count && !t->data)) return -1;
  int64_t *out = o2m_arena_array(ctx->arena, (size_t)t->count + 1,
                                 sizeof(int64_t));
  if (!out) return -1;
  for (int64_t k = 0; k < t->count; k++) out[k] = o2m_tensor_get_int(t, k);
  *values = out;
  return t->count;
}

/* ---- attributes -------------------------------------------------------- */

const o2m_attr *o2m_attr_get(const o2m_infer_ctx *ctx, const char *name) {
  return o2m_node_attr(ctx->node, name);
}

int64_t o2m_attr_int(const o2m_infer_ctx *ctx, const char *name, int64_t dflt) {
  const o2m_attr *a = o2m_attr_get(ctx, name);
  return a && a->type == O2M_ATTR_INT ? a->i : dflt;
}

float o2m_attr_float(const o2m_infer_ctx *ctx, const char *name, float dflt) {
  const o2m_attr *a = o2m_attr_get(ctx, name);
  if (!a) return dflt;
  if (a->type == O2M_ATTR_FLOAT) return a->f;
  if (a->type == O2M_ATTR_INT) return (float)a->i;
  return dflt;
}

const char *o2m_attr_string(o2m_infer_ctx *ctx, const char *name,
                            const char *dflt) {
  const o2m_attr *a = o2m_attr_get(ctx, name);
  if (!a || a->type != O2M_ATTR_STRING) return dflt;
  const char *s = o2m_arena_strndup(ctx->arena, (const char *)a->s.ptr, a->s.len);
  return s ? s : dflt;
}

int o2m_attr_ints(const o2m_infer_ctx *ctx, const char *name,
                  const int64_t **values) {
  const o2m_attr *a = o2m_attr_get(ctx, name);
  if (!a || a->type != O2M_ATTR_INTS) return -1;
  *values = a->ints;
  return a->count;
}

/* ---- outputs ----------------------------------------------------------- */

int o2m_out_count(const o2m_infer_ctx *ctx) { return ctx->node->n_outputs; }

int o2m_out_present(const o2m_infer_ctx *ctx, int i) {
  return i >= 0 && i < ctx->node->n_outputs && ctx->node->outputs[i] != NULL;
}

static o2m_type *out_slot(o2m_infer_ctx *ctx, int i) {
  if (o2m_out_present(ctx, i)) return &ctx->node->outputs[i]->type;
  o2m_type *scratch = o2m_arena_alloc(ctx->arena, sizeof(*scratch));
  return scratch;
}

o2m_type *o2m_out_tensor(o2m_infer_ctx *ctx, int i, o2m_dtype dtype, int rank) {
  o2m_type *t = out_slot(ctx, i);
  static o2m_type oom_scratch;
  if (!t) return &oom_scratch;
  memset(t, 0, sizeof(*t));
  t->kind = O2M_TYPE_TENSOR;
  t->elem = dtype;
  t->rank = rank < 0 ? -1 : rank;
  if (rank > 0) {
    t->dims = o2m_arena_array(ctx->arena, (size_t)rank, sizeof(o2m_dim));
    if (!t->dims) {
      t->rank = -1;
      return t;
    }
    for (int k = 0; k < rank; k++) t->dims[k] = (o2m_dim){-1, NULL};
  }
  return t;
}

void o2m_out_set_type(o2m_infer_ctx *ctx, int i, const o2m_type *type) {
  o2m_type *t = out_slot(ctx, i);
  if (!t) return;
  *t = *type;
  if (type->rank > 0 && type->dims) {
    t->dims = o2m_arena_array(ctx->arena, (size_t)type->rank, sizeof(o2m_dim));
    if (!t->dims) {
      t->rank = -1;
      return;
    }
    memcpy(t->dims, type->dims, (size_t)type->rank * sizeof(o2m_dim));
  }
}

void o2m_out_known(o2m_infer_ctx *ctx, int i, const o2m_tensor *value) {
  if (o2m_out_present(ctx, i)) ctx->node->outputs[i]->known = value;
}

void o2m_out_seq_length(o2m_infer_ctx *ctx, int i, int64_t n) {
  if (o2m_out_present(ctx, i)) ctx->node->outputs[i]->seq_length = n < 0 ? -1 : n;
}

/* ---- dims and types ---------------------------------------------------- */

o2m_dim o2m_dim_known(int64_t size) { return (o2m_dim){size, NULL}; }

o2m_dim o2m_dim_fresh(o2m_infer_ctx *ctx) {
  return (o2m_dim){-1, o2m_model_fresh_symbol(ctx->model)};
}

int o2m_dim_equal(o2m_dim a, o2m_dim b) {
  if (a.size >= 0 || b.size >= 0) return a.size == b.size;
  return a.sym && b.sym && strcmp(a.sym, b.sym) == 0;
}

o2m_dim o2m_dim_mul(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b) {
  if (a.size == 1) return b;
  if (b.size == 1) return a;
  if (a.size == 0 || b.size == 0) return o2m_dim_known(0);
  if (a.size > 0 && b.size > 0 && a.size <= INT64_MAX / b.size)
    return o2m_dim_known(a.size * b.size);
  return o2m_dim_fresh(ctx);
}

o2m_dim o2m_dim_add(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b) {
  if (a.size == 0) return b;
  if (b.size == 0) return a;
  if (a.size > 0 && b.size > 0 && a.size <= INT64_MAX - b.size)
    return o2m_dim_known(a.size + b.size);
  return o2m_dim_fresh(ctx);
}

/* One output dim of a broadcast from the dims that line up at a position. */
static o2m_status broadcast_dim(o2m_infer_ctx *ctx, const o2m_dim *dims,
                                int n, o2m_dim *out) {
  int64_t known = 1;
  const char *sym = NULL;
  int several_syms = 0;
  for (int i = 0; i < n; i++) {
    const o2m_dim d = dims[i];
    if (d.size >= 0) {
      if (d.size == 1) continue;
      if (known != 1 && known != d.size)
        return o2m_infer_error(ctx, "cannot broadcast dims %lld and %lld",
                               (long long)known, (long long)d.size);
      known = d.size;
    } else if (!sym) {
      sym = d.sym;
    } else if (!d.sym || strcmp(sym, d.sym) != 0) {
      several_syms = 1;
    }
  }
  if (known != 1 || !sym) *out = o2m_dim_known(known);
  else if (several_syms) *out = o2m_dim_fresh(ctx);
  else *out = (o2m_dim){-1, sym};
  return O2M_OK;
}

o2m_status o2m_broadcast(o2m_infer_ctx *ctx, const o2m_type *const *types,
                         int n, o2m_type *out) {
  int rank = 0;
  out->kind = O2M_TYPE_TENSOR;
  out->dims = NULL;
  for (int i = 0; i < n; i++) {
    if (types[i]->kind != O2M_TYPE_TENSOR || types[i]->rank < 0) {
      out->rank = -1;
      return O2M_OK;
    }
    if (types[i]->rank > rank) rank = types[i]->rank;
  }
  out->rank = rank;
  if (rank == 0) return O2M_OK;
  out->dims = o2m_arena_array(ctx->arena, (size_t)rank, sizeof(o2m_dim));
  o2m_dim *column = o2m_arena_array(ctx->arena, (size_t)n, sizeof(o2m_dim));
  if (!out->dims || !column) return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int k = 0; k < rank; k++) {
    int m = 0;
    for (int i = 0; i < n; i++) {
      int offset = rank - types[i]->rank;
      if (k >= offset) column[m++] = types[i]->dims[k - offset];
    }
    o2m_status s = broadcast_dim(ctx, column, m, &out->dims[k]);
    if (s) return s;
  }
  return O2M_OK;
}

o2m_status o2m_norm_axis(o2m_infer_ctx *ctx, int64_t axis, int rank,
                         int inclusive, int64_t *out) {
  int64_t limit = rank + (inclusive ? 1 : 0);
  int64_t a = axis < 0 ? axis + limit : axis;
  if (a < 0 || a >= limit)
    return o2m_infer_error(ctx, "axis %lld is out of range for rank %d",
                           (long long)axis, rank);
  *out = a;
  return O2M_OK;
}

o2m_type *o2m_type_copy(o2m_infer_ctx *ctx, const o2m_type *t) {
  o2m_type *c = o2m_arena_alloc(ctx->arena, sizeof(*c));
  if (!c) return NULL;
  *c = *t;
  if (t->rank > 0 && t->dims) {
    c->dims = o2m_arena_array(ctx->arena, (size_t)t->rank, sizeof(o2m_dim));
    if (!c->dims) return NULL;
    memcpy(c->dims, t->dims, (size_t)t->rank * sizeof(o2m_dim));
  }
  if (t->inner) c->inner = o2m_type_copy(ctx, t->inner);
  return c;
}

o2m_type *o2m_type_tensor(o2m_infer_ctx *ctx, o2m_dtype dtype, int rank,
                          const int64_t *sizes) {
  o2m_type *t = o2m_arena_alloc(ctx->arena, sizeof(*t));
  if (!t) return NULL;
  t->kind = O2M_TYPE_TENSOR;
  t->elem = dtype;
  t->rank = rank;
  if (rank > 0) {
    t->dims = o2m_arena_array(ctx->arena, (size_t)rank, sizeof(o2m_dim));
    if (!t->dims) return NULL;
    for (int k = 0; k < rank; k++) t->dims[k] = o2m_dim_known(sizes[k]);
  }
  return t;
}
