/* infer_data.c - data propagation shared by the shape, index, control and
 * sequence families: reading and recording shape values (see
 * infer_data.h), computing the known values of element-moving ops, and dim
 * products. Never reports errors: when a value cannot be computed it is
 * simply left untracked. */
#include "infer/infer_data.h"

#include <string.h>

#include "util/diag.h"

/* The value behind input i (a subgraph's reference to an enclosing value
 * carries that value's shape value); NULL when absent. */
static const o2m_value *tracked_input(const o2m_infer_ctx *ctx, int i) {
  return o2m_in_present(ctx, i) ? ctx->node->inputs[i] : NULL;
}

/* The element count of a tensor type whose dims are all known and whose
 * count is at most O2M_KNOWN_MAX; -1 otherwise. */
static int64_t small_count(const o2m_type *t) {
  if (t->kind != O2M_TYPE_TENSOR || t->rank < 0) return -1;
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) {
    if (t->dims[d].sym || t->dims[d].size < 0) return -1;
    if (t->dims[d].size > O2M_KNOWN_MAX) return -1;
    n *= t->dims[d].size;
    if (n > O2M_KNOWN_MAX) return -1;
  }
  return n;
}

static o2m_value *output_value(const o2m_infer_ctx *ctx, int i) {
  return o2m_out_present(ctx, i) ? ctx->node->outputs[i] : NULL;
}

int o2m_shape_value_in(o2m_infer_ctx *ctx, int i, int fill_unknown,
                       const o2m_dim **entries) {
  *entries = NULL;
  if (!o2m_in_present(ctx, i)) return -1;
  int64_t *ints;
  int64_t n = o2m_in_known_ints(ctx, i, &ints);
  if (n > O2M_KNOWN_MAX) return -1;
  if (n >= 0) {
    o2m_dim *e = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*e));
    if (!e) return -1;
    for (int64_t k = 0; k < n; k++) e[k].size = ints[k];
    *entries = e;
    return (int)n;
  }
  const o2m_value *v = tracked_input(ctx, i);
  if (v && v->shape_value) {
    *entries = v->shape_value;
    return v->shape_value_len;
  }
  const o2m_type *t = o2m_in_type(ctx, i);
  n = small_count(t);
  if (!fill_unknown || n < 0 || !o2m_dtype_is_int(t->elem)) return -1;
  o2m_dim *e = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*e));
  if (!e) return -1;
  for (int64_t k = 0; k < n; k++) e[k] = o2m_dim_fresh(ctx);
  *entries = e;
  return (int)n;
}

void o2m_shape_value_out(o2m_infer_ctx *ctx, int i, const o2m_dim *entries,
                         int n) {
  o2m_value *v = output_value(ctx, i);
  if (!v || small_count(&v->type) != n || !o2m_dtype_is_int(v->type.elem))
    return;
  int all_known = 1;
  for (int k = 0; k < n; k++) all_known &= o2m_entry_known(entries[k]);
  if (all_known) {
    int64_t dims[v->type.rank > 0 ? v->type.rank : 1];
    for (int d = 0; d < v->type.rank; d++) dims[d] = v->type.dims[d].size;
    o2m_tensor *t = o2m_tensor_new(ctx, v->type.elem, v->type.rank, dims);
    if (!t) return;
    for (int k = 0; k < n; k++) o2m_tensor_set_int(t, k, entries[k].size);
    o2m_out_known(ctx, i, t);
    return;
  }
  o2m_dim *copy = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*copy));
  if (!copy) return;
  memcpy(copy, entries, (size_t)n * sizeof(*copy));
  v->shape_value = copy;
  v->shape_value_len = n;
}

/* ---- element-moving ops ------------------------------------------------- */

/* Bytes per element for a copyable known tensor: 0 for strings (copied as
 * o2m_bytes), -1 when elements are not byte-aligned or the payload is not
 * mapped in. */
static int element_bytes(const o2m_tensor *t) {
  if (t->dtype == O2M_DT_STRING) return t->strings || !t->count ? 0 : -1;
  int bits = o2m_dtype_bits(t->dtype);
  if (bits <= 0 || bits % 8 || (!t->data && t->count)) return -1;
  return bits / 8;
}

/* Where one input's elements come from: its known tensor, or its shape
 * value entries. */
typedef struct element_input {
  int resolved;
  const o2m_tensor *known;
  const o2m_dim *entries;
  int64_t count; /* -1: neither known nor tracked */
} element_input;

static void resolve_input(o2m_infer_ctx *ctx, int i, element_input *in) {
  in->resolved = 1;
  in->count = -1;
  const o2m_tensor *t = o2m_in_known(ctx, i);
  if (t && element_bytes(t) >= 0) {
    in->known = t;
    in->count = t->count;
    return;
  }
  const o2m_value *v = tracked_input(ctx, i);
  if (v && v->shape_value) {
    in->entries = v->shape_value;
    in->count = v->shape_value_len;
  }
}

static o2m_dim entry_of(const element_input *in, int64_t index) {
  if (in->entries) return in->entries[index];
  o2m_dim e = {o2m_tensor_get_int(in->known, index), NULL};
  return e;
}

/* Builds output `v`'s known tensor from the sources (every one known). */
static void copy_known_elements(o2m_infer_ctx *ctx, int out, o2m_value *v,
                                const element_input *inputs,
                                const int *src_input, const int64_t *src_index,
                                int64_t count) {
  int64_t dims[v->type.rank > 0 ? v->type.rank : 1];
  for (int d = 0; d < v->type.rank; d++) dims[d] = v->type.dims[d].size;
  o2m_tensor *t = o2m_tensor_new(ctx, v->type.elem, v->type.rank, dims);
  if (!t) return;
  int width = 0;
  if (v->type.elem == O2M_DT_STRING) {
    t->strings = o2m_arena_array(ctx->arena, (size_t)count, sizeof(o2m_bytes));
    if (!t->strings) return;
  } else if ((width = element_bytes(t)) <= 0) {
    return;
  }
  for (int64_t k = 0; k < count; k++) {
    const o2m_tensor *src = inputs[src_input[k]].known;
    if (src->dtype != t->dtype) return;
    if (t->dtype == O2M_DT_STRING)
      t->strings[k] = src->strings[src_index[k]];
    else
      memcpy((uint8_t *)t->data + k * width, src->data + src_index[k] * width,
             (size_t)width);
  }
  o2m_out_known(ctx, out, t);
}

void o2m_propagate_elements(o2m_infer_ctx *ctx, int out, const void *state,
                            o2m_elem_source_fn source) {
  o2m_value *v = output_value(ctx, out);
  int64_t count = v ? small_count(&v->type) : -1;
  int n_in = o2m_in_count(ctx), any_tracked = 0;
  for (int i = 0; i < n_in && !any_tracked; i++) {
    const o2m_value *in = tracked_input(ctx, i);
    any_tracked = in && (in->known || in->shape_value);
  }
  if (count < 0 || !any_tracked) return;
  element_input inputs[n_in];
  memset(inputs, 0, sizeof(inputs));
  int *src_input = o2m_arena_array(ctx->arena, (size_t)count, sizeof(int));
  int64_t *src_index =
      o2m_arena_array(ctx->arena, (size_t)count, sizeof(int64_t));
  int rank = v->type.rank;
  int64_t index[rank > 0 ? rank : 1];
  memset(index, 0, sizeof(index));
  if (!src_input || !src_index) return;
  int all_known = 1;
  for (int64_t k = 0; k < count; k++) {
    int input = -1;
    int64_t at = source(state, index, &input);
    if (at < 0 || input < 0 || input >= n_in) return;
    element_input *in = &inputs[input];
    if (!in->resolved) resolve_input(ctx, input, in);
    if (at >= in->count) return;
    all_known &= in->known != NULL;
    src_input[k] = input;
    src_index[k] = at;
    for (int d = rank - 1; d >= 0 && ++index[d] == v->type.dims[d].size; d--)
      index[d] = 0;
  }
  if (all_known) {
    copy_known_elements(ctx, out, v, inputs, src_input, src_index, count);
    return;
  }
  o2m_dim *entries = o2m_arena_array(ctx->arena, (size_t)count, sizeof(*entries));
  if (!entries) return;
  for (int64_t k = 0; k < count; k++)
    entries[k] = entry_of(&inputs[src_input[k]], src_index[k]);
  o2m_shape_value_out(ctx, out, entries, (int)count);
}

int64_t o2m_linear_index(const int64_t *index, const int64_t *dims, int rank) {
  int64_t at = 0;
  for (int d = 0; d < rank; d++) at = at * dims[d] + index[d];
  return at;
}

int o2m_type_known_dims(const o2m_type *t, int64_t *sizes) {
  if (t->kind != O2M_TYPE_TENSOR || t->rank < 0) return 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->dims[d].sym || t->dims[d].size < 0) return 0;
    sizes[d] = t->dims[d].size;
  }
  return 1;
}

void o2m_propagate_same(o2m_infer_ctx *ctx, int in, int out) {
  o2m_value *v = output_value(ctx, out);
  if (!v || v->type.kind != O2M_TYPE_TENSOR || v->type.rank < 0) return;
  const o2m_tensor *known = o2m_in_known(ctx, in);
  if (known) {
    /* a new header over the same payload: nothing is copied, so any size */
    int64_t count = 1;
    for (int d = 0; d < v->type.rank; d++) {
      int64_t size = v->type.dims[d].size;
      if (v->type.dims[d].sym || size < 0 || (size && count > known->count / size)) return;
      count *= size;
    }
    if (count != known->count || known->dtype != v->type.elem) return;
    o2m_tensor *t = o2m_arena_alloc(ctx->arena, sizeof(*t));
    int64_t *dims =
        o2m_arena_array(ctx->arena, (size_t)v->type.rank, sizeof(int64_t));
    if (!t || !dims) return;
    *t = *known;
    for (int d = 0; d < v->type.rank; d++) dims[d] = v->type.dims[d].size;
    t->rank = v->type.rank;
    t->dims = dims;
    o2m_out_known(ctx, out, t);
    return;
  }
  const o2m_value *src = tracked_input(ctx, in);
  if (src && src->shape_value)
    o2m_shape_value_out(ctx, out, src->shape_value, src->shape_value_len);
}

o2m_status o2m_input_not_tensor(o2m_infer_ctx *ctx, int i) {
  const o2m_type *t = o2m_in_type(ctx, i);
  if (t->kind == O2M_TYPE_UNKNOWN) return O2M_OK;
  return o2m_infer_error(ctx, "input %d must be a tensor", i);
}

int64_t o2m_ints_operand(o2m_infer_ctx *ctx, const char *attr, int input,
                         int input_since, const int64_t **values) {
  *values = NULL;
  if (ctx->op_version < input_since) {
    int n = o2m_attr_ints(ctx, attr, values);
    return n < 0 ? O2M_INTS_ABSENT : n;
  }
  if (!o2m_in_present(ctx, input)) return O2M_INTS_ABSENT;
  int64_t *ints;
  int64_t n = o2m_in_known_ints(ctx, input, &ints);
  if (n < 0) return O2M_INTS_UNKNOWN;
  *values = ints;
  return n;
}

o2m_status o2m_out_of_memory(o2m_infer_ctx *ctx) {
  return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
}

/* ---- dims ---------------------------------------------------------------- */

o2m_dim o2m_dims_product(o2m_infer_ctx *ctx, const o2m_dim *dims, int n) {
  int64_t known = 1;
  int n_sym = 0, sym_at = -1;
  for (int d = 0; d < n; d++) {
    if (dims[d].sym || dims[d].size < 0) {
      n_sym++;
      sym_at = d;
    } else if (dims[d].size == 0) {
      return o2m_dim_known(0);
    } else if (__builtin_mul_overflow(known, dims[d].size, &known)) {
      return o2m_dim_fresh(ctx);
    }
  }
  if (n_sym == 0) return o2m_dim_known(known);
  if (n_sym == 1 && known == 1) return dims[sym_at];
  return o2m_dim_fresh(ctx);
}
