/* infer.h - type and shape inference: the driver and the toolkit that the
 * per-op inference functions (src/infer/infer_<family>.c) are written in.
 *
 * Owns: inference of every value's o2m_type and of small known values
 * (data propagation of shape computations) on the ops as written, in any
 * opset. A per-op function reads its node's inputs and attributes through
 * the ctx and sets each present output's type; it never allocates outside
 * the model arena, never prints, and reports problems with
 * o2m_infer_error (bad model) or o2m_infer_unsupported.
 *
 * Rules for inference functions:
 * - An input whose type is unknown (kind O2M_TYPE_UNKNOWN) or unranked
 *   (rank -1) must not be an error: produce the most precise output you
 *   can (e.g. known dtype, unranked) or leave the output unknown.
 * - Dims that cannot be computed get fresh symbols (o2m_dim_fresh).
 * - Where an input's value is known (o2m_in_known) and the output is small
 *   (<= O2M_KNOWN_MAX elements) and cheap to compute, set the output's
 *   known value too (o2m_out_known): this is how Shape -> Gather ->
 *   Concat -> Reshape chains end in static shapes.
 * - Broadcasting, axis normalisation and subgraph inference go through the
 *   helpers below, so that every op family agrees.
 */
#ifndef O2M_INFER_H
#define O2M_INFER_H

#include "ir/ir.h"
#include "ir/optable.h"

enum { O2M_KNOWN_MAX = 4096 };

struct o2m_infer_ctx {
  o2m_model *model;
  o2m_arena *arena; /* == &model->arena */
  o2m_diag *diag;
  o2m_graph *graph; /* the graph holding node */
  o2m_node *node;
  int op_version; /* o2m_op_version(node->op, node->opset) */
};

/* Infers every value of the model's main graph (and, recursively, of
 * every subgraph), then cross-checks declared value_info types. */
o2m_status o2m_infer_model(o2m_model *model, o2m_diag *diag);

/* Infers one node (its subgraphs too) whose inputs are typed: used by the
 * rewriter for nodes it creates. */
o2m_status o2m_infer_node(o2m_model *model, o2m_graph *graph, o2m_node *node,
                          o2m_diag *diag);

/* Infers a subgraph (If branch, Loop/Scan body, SequenceMap body) given
 * types for its inputs (`in_types[i]` may be NULL to keep the declared
 * type). Afterwards read g->output_values[i]->type. */
o2m_status o2m_infer_subgraph(o2m_infer_ctx *ctx, o2m_graph *g, int n_in,
                              const o2m_type *const *in_types);

/* ---- errors: the message gets node name, op, domain and opset ---------- */
o2m_status o2m_infer_error(o2m_infer_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
o2m_status o2m_infer_unsupported(o2m_infer_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- inputs ------------------------------------------------------------ */
int o2m_in_count(const o2m_infer_ctx *ctx);
int o2m_in_present(const o2m_infer_ctx *ctx, int i);
/* Never NULL: a missing input reads as a static type of kind UNKNOWN. */
const o2m_type *o2m_in_type(const o2m_infer_ctx *ctx, int i);
/* The input's value when known at import time, else NULL. */
const o2m_tensor *o2m_in_known(const o2m_infer_ctx *ctx, int i);
/* A known scale of input i that is NaN or infinite, or 0 where the op
 * divides by it (`divides`), fails with the input's name `what`; an
 * unknown one passes. */
o2m_status o2m_check_scale(o2m_infer_ctx *ctx, int i, const char *what, int divides);
/* A known integer (int8..uint64, bool) input as int64 values in the arena:
 * returns the element count, or -1 when unknown or not integral. */
int64_t o2m_in_known_ints(o2m_infer_ctx *ctx, int i, int64_t **values);

/* Sequence input i's element count when known, else -1. */
int64_t o2m_in_seq_length(const o2m_infer_ctx *ctx, int i);

/* ---- attributes -------------------------------------------------------- */
const o2m_attr *o2m_attr_get(const o2m_infer_ctx *ctx, const char *name);
int64_t o2m_attr_int(const o2m_infer_ctx *ctx, const char *name, int64_t dflt);
float o2m_attr_float(const o2m_infer_ctx *ctx, const char *name, float dflt);
/* A NUL-terminated arena copy; `dflt` when absent. */
const char *o2m_attr_string(o2m_infer_ctx *ctx, const char *name,
                            const char *dflt);
/* INTS attribute: the count and *values; -1 when absent. */
int o2m_attr_ints(const o2m_infer_ctx *ctx, const char *name,
                  const int64_t **values);

/* ---- outputs ----------------------------------------------------------- */
int o2m_out_count(const o2m_infer_ctx *ctx);
int o2m_out_present(const o2m_infer_ctx *ctx, int i);
/* Makes output i a tensor of `dtype` and `rank` (-1: unranked) and returns
 * its type for filling dims. Dims start unknown ({-1, NULL}); any still
 * unknown when the function returns get fresh symbols. For an absent
 * output it returns scratch storage, so callers need no checks. */
o2m_type *o2m_out_tensor(o2m_infer_ctx *ctx, int i, o2m_dtype dtype, int rank);
/* Sets output i to a copy of `type` (dims copied, inner types shared). */
void o2m_out_set_type(o2m_infer_ctx *ctx, int i, const o2m_type *type);
/* Records the known value of output i (the tensor must live in the arena
 * or a mapping and is not copied). */
void o2m_out_known(o2m_infer_ctx *ctx, int i, const o2m_tensor *value);
/* Records sequence output i's element count (negative: unknown). */
void o2m_out_seq_length(o2m_infer_ctx *ctx, int i, int64_t n);

/* ---- dims, types, tensors ---------------------------------------------- */
o2m_dim o2m_dim_known(int64_t size);
o2m_dim o2m_dim_fresh(o2m_infer_ctx *ctx);
/* Same known size, or same symbol. */
int o2m_dim_equal(o2m_dim a, o2m_dim b);
/* a*b, a+b etc. when both known; a fresh symbol otherwise. */
o2m_dim o2m_dim_mul(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b);
o2m_dim o2m_dim_add(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b);

/* Numpy-style multidirectional broadcast of n tensor types into out (a
 * tensor type whose elem the caller sets). Unranked in -> unranked out.
 * Incompatible known dims are an error. */
o2m_status o2m_broadcast(o2m_infer_ctx *ctx, const o2m_type *const *types,
                         int n, o2m_type *out);
/* numpy matmul of tensor types a and b into output 0 (1-D operands
 * promoted, leading dims broadcast); unranked when either is. */
o2m_status o2m_matmul_shape_of(o2m_infer_ctx *ctx, const o2m_type *a, const o2m_type *b,
                               o2m_dtype dtype);
/* Normalises a possibly negative axis into [0, rank) (or [0, rank] when
 * `inclusive`); an out-of-range axis is an error. */
o2m_status o2m_norm_axis(o2m_infer_ctx *ctx, int64_t axis, int rank,
                         int inclusive, int64_t *out);
/* A deep copy of a type into the arena. */
o2m_type *o2m_type_copy(o2m_infer_ctx *ctx, const o2m_type *t);
/* A tensor type with all dims known (sizes), rank n. */
o2m_type *o2m_type_tensor(o2m_infer_ctx *ctx, o2m_dtype dtype, int rank,
                          const int64_t *sizes);

/* A new zero-filled tensor (origin COMPUTED) in the arena. */
o2m_tensor *o2m_tensor_new(o2m_infer_ctx *ctx, o2m_dtype dtype, int rank,
                           const int64_t *dims);
/* Element access for numeric tensors (any numeric dtype but complex and
 * the float8/4-bit/2-bit families, which read as 0 / are not written). */
int64_t o2m_tensor_get_int(const o2m_tensor *t, int64_t index);
double o2m_tensor_get_float(const o2m_tensor *t, int64_t index);
void o2m_tensor_set_int(o2m_tensor *t, int64_t index, int64_t v);
void o2m_tensor_set_float(o2m_tensor *t, int64_t index, double v);
int o2m_dtype_is_float(o2m_dtype d);
int o2m_dtype_is_int(o2m_dtype d); /* integral incl. bool */

/* ---- small checks and accessors shared by the families -------------------- */

/* Input i must be present and a tensor (or of a type not known yet). */
static inline o2m_status o2m_in_check_tensor(o2m_infer_ctx *ctx, int i) {
  if (!o2m_in_present(ctx, i))
    return o2m_infer_error(ctx, "input %d is missing", i);
  o2m_type_kind kind = o2m_in_type(ctx, i)->kind;
  if (kind != O2M_TYPE_TENSOR && kind != O2M_TYPE_UNKNOWN)
    return o2m_infer_error(ctx, "input %d is not a tensor", i);
  return O2M_OK;
}

/* Input i's type when it is a ranked tensor, else NULL. */
static inline const o2m_type *o2m_in_ranked(const o2m_infer_ctx *ctx, int i) {
  const o2m_type *t = o2m_in_type(ctx, i);
  return t->kind == O2M_TYPE_TENSOR && t->rank >= 0 ? t : NULL;
}

/* Output i becomes a tensor of `dtype` with the shape of `like` (unranked
 * when `like` is not a ranked tensor). Returns the output's type. */
static inline o2m_type *o2m_out_shaped_like(o2m_infer_ctx *ctx, int i,
                                            o2m_dtype dtype,
                                            const o2m_type *like) {
  int ranked = like->kind == O2M_TYPE_TENSOR && like->rank >= 0;
  o2m_type *t = o2m_out_tensor(ctx, i, dtype, ranked ? like->rank : -1);
  for (int k = 0; ranked && k < t->rank; k++) t->dims[k] = like->dims[k];
  return t;
}

/* Non-zero when input i is a known integer tensor of exactly one element
 * (a scalar, or a 1-element 1-D tensor); its value goes to *value. */
static inline int o2m_in_known_scalar(o2m_infer_ctx *ctx, int i,
                                      int64_t *value) {
  int64_t *values;
  if (o2m_in_known_ints(ctx, i, &values) != 1) return 0;
  *value = values[0];
  return 1;
}

/* Reads attribute `name` as an element type (a TensorProto.DataType
 * number) into *out; `dflt` when absent, where O2M_DT_UNDEFINED makes the
 * attribute required. */
static inline o2m_status o2m_attr_dtype(o2m_infer_ctx *ctx, const char *name,
                                        o2m_dtype dflt, o2m_dtype *out) {
  const o2m_attr *a = o2m_attr_get(ctx, name);
  if (!a) {
    *out = dflt;
    return dflt ? O2M_OK
                : o2m_infer_error(ctx, "the '%s' attribute is missing", name);
  }
  if (a->type != O2M_ATTR_INT || a->i <= 0 || a->i >= O2M_DT_COUNT)
    return o2m_infer_error(ctx, "attribute '%s' is not an element type", name);
  *out = (o2m_dtype)a->i;
  return O2M_OK;
}

/* ---- inference functions, by family ------------------------------------ */
#define OP(domain, name, fn, ...) o2m_status fn(o2m_infer_ctx *ctx);
#include "infer/ops_all.def"
#undef OP

#endif
