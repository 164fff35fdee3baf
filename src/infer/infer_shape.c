/* infer_shape.c - inference for the ops that re-shape or move tensor data
 * without computing on it: Shape, Size, Reshape, Flatten, Squeeze,
 * Unsqueeze, Transpose, Concat, Split, Slice, Expand, Tile, Pad,
 * CenterCropPad, Identity, Trilu, ReverseSequence.
 *
 * Besides types, these ops carry data: Shape produces shape values (known
 * integers or symbolic dims, see infer_data.h) and every op here that moves
 * elements carries known values and shape values to its outputs, so that
 * shape computations end in static or symbolic dims. Indexing ops and
 * constants live in infer_index.c.
 */
#include <stdint.h>
#include <string.h>

#include "infer/infer_data.h"

/* Slice bounds at or beyond these mean "to the end" / "from the start",
 * also for a symbolic dim (exporters write INT64_MAX or INT32_MAX). */
enum { SLICE_BIG = INT32_MAX };

static int dim_is_known(o2m_dim d) { return !d.sym && d.size >= 0; }

/* Marks the n axes in `axes`, normalised against `rank`, in `marked`
 * (rank entries, zeroed by the caller); a repeated axis is an error. */
static o2m_status mark_axes(o2m_infer_ctx *ctx, const int64_t *axes, int64_t n,
                            int rank, char *marked, int64_t *normalised) {
  for (int64_t k = 0; k < n; k++) {
    int64_t a;
    o2m_status st = o2m_norm_axis(ctx, axes[k], rank, 0, &a);
    if (st) return st;
    if (marked[a]) return o2m_infer_error(ctx, "axis %lld repeats", (long long)axes[k]);
    marked[a] = 1;
    if (normalised) normalised[k] = a;
  }
  return O2M_OK;
}

/* ---- Shape, Size -------------------------------------------------------- */

o2m_status o2m_infer_shape(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  o2m_type *out = o2m_out_tensor(ctx, 0, O2M_DT_INT64, 1);
  if (x->rank < 0) return O2M_OK;
  int64_t start = 0, end = x->rank;
  if (ctx->op_version >= 15) {
    start = o2m_attr_int(ctx, "start", 0);
    end = o2m_attr_int(ctx, "end", x->rank);
  }
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < start ? start : end > x->rank ? x->rank : end;
  out->dims[0] = o2m_dim_known(end - start);
  o2m_shape_value_out(ctx, 0, x->dims + start, (int)(end - start));
  return O2M_OK;
}

o2m_status o2m_infer_size(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  o2m_out_tensor(ctx, 0, O2M_DT_INT64, 0);
  if (x->rank < 0) return O2M_OK;
  o2m_dim size = o2m_dims_product(ctx, x->dims, x->rank);
  o2m_shape_value_out(ctx, 0, &size, 1);
  return O2M_OK;
}

/* ---- Reshape, Flatten --------------------------------------------------- */

/* The dim at `skip` that makes the product of out's dims equal the product
 * of x's dims: symbols cancel against equal symbols of x. */
static o2m_status reshape_missing_dim(o2m_infer_ctx *ctx, const o2m_type *x,
                                      o2m_dim *out, int n, int skip) {
  const char *syms[x->rank > 0 ? x->rank : 1];
  int n_syms = 0;
  int64_t in_known = 1, out_known = 1;
  int in_zero = 0, overflow = 0;
  for (int d = 0; d < x->rank; d++) {
    if (!dim_is_known(x->dims[d]))
      syms[n_syms++] = x->dims[d].sym;
    else if (x->dims[d].size == 0)
      in_zero = 1;
    else
      overflow |= __builtin_mul_overflow(in_known, x->dims[d].size, &in_known);
  }
  for (int j = 0; j < n; j++) {
    if (j == skip) continue;
    if (dim_is_known(out[j])) {
      if (out[j].size == 0)
        return o2m_infer_error(ctx, "shape has both -1 and a 0-sized dim");
      if (__builtin_mul_overflow(out_known, out[j].size, &out_known))
        return o2m_infer_error(ctx, "the shape's element count overflows");
      continue;
    }
    int found = 0;
    for (int s = 0; s < n_syms && !found && out[j].sym; s++)
      if (syms[s] && strcmp(syms[s], out[j].sym) == 0) syms[s] = NULL, found = 1;
    if (!found) return O2M_OK; /* an unmatched symbol: the dim stays fresh */
  }
  if (in_zero) {
    out[skip] = o2m_dim_known(0);
    return O2M_OK;
  }
  if (overflow) return O2M_OK;
  const char *left = NULL;
  int n_left = 0;
  for (int s = 0; s < n_syms; s++)
    if (syms[s]) left = syms[s], n_left++;
  if (n_left == 0) {
    if (in_known % out_known)
      return o2m_infer_error(ctx, "cannot reshape %lld elements with -1",
                             (long long)in_known);
    out[skip] = o2m_dim_known(in_known / out_known);
  } else if (n_left == 1 && in_known == out_known) {
    out[skip].size = -1;
    out[skip].sym = left;
  }
  return O2M_OK;
}

enum { COUNT_UNKNOWN = -1, COUNT_OVERFLOWS = -2 };

/* The product of n dims when all are known: 0 when one is 0, else
 * COUNT_OVERFLOWS when it does not fit in int64; COUNT_UNKNOWN when a dim
 * is not known. */
static int64_t known_count(const o2m_dim *dims, int n) {
  int64_t count = 1;
  for (int d = 0; d < n; d++)
    if (!dim_is_known(dims[d])) return COUNT_UNKNOWN;
  for (int d = 0; d < n; d++)
    if (dims[d].size == 0) return 0;
  for (int d = 0; d < n; d++)
    if (__builtin_mul_overflow(count, dims[d].size, &count)) return COUNT_OVERFLOWS;
  return count;
}

/* Checks that a fully known reshape keeps the element count. */
static o2m_status reshape_check_count(o2m_infer_ctx *ctx, const o2m_type *x,
                                      const o2m_dim *out, int n) {
  int64_t in_count = known_count(x->dims, x->rank), out_count = known_count(out, n);
  if (out_count == COUNT_OVERFLOWS) return o2m_infer_error(ctx, "the new shape holds more elements than int64 counts");
  if (in_count >= 0 && out_count >= 0 && in_count != out_count)
    return o2m_infer_error(ctx, "cannot reshape %lld elements into %lld",
                           (long long)in_count, (long long)out_count);
  return O2M_OK;
}

o2m_status o2m_infer_reshape(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const o2m_dim *target;
  int n;
  if (ctx->op_version < 5) {
    const int64_t *ints;
    n = o2m_attr_ints(ctx, "shape", &ints);
    if (n < 0) return o2m_infer_error(ctx, "attribute 'shape' is missing");
    o2m_dim *e = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*e));
    if (!e) return o2m_out_of_memory(ctx);
    for (int j = 0; j < n; j++) e[j].size = ints[j];
    target = e;
  } else {
    n = o2m_shape_value_in(ctx, 1, 1, &target);
  }
  if (n < 0) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  int allowzero = ctx->op_version >= 14 && o2m_attr_int(ctx, "allowzero", 0);
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, n);
  int missing = -1, has_zero = 0;
  for (int j = 0; j < n; j++) {
    o2m_dim e = target[j];
    if (!o2m_entry_known(e)) {
      out->dims[j] = e;
    } else if (e.size == -1) {
      if (missing >= 0) return o2m_infer_error(ctx, "shape has more than one -1");
      missing = j;
    } else if (e.size < -1) {
      return o2m_infer_error(ctx, "shape entry %lld is invalid", (long long)e.size);
    } else if (e.size == 0 && !allowzero) {
      if (x->rank >= 0 && j >= x->rank)
        return o2m_infer_error(ctx, "shape entry %d is 0 but the input has rank %d",
                               j, x->rank);
      if (x->rank >= 0) out->dims[j] = x->dims[j];
    } else {
      has_zero |= e.size == 0;
      out->dims[j] = o2m_dim_known(e.size);
    }
  }
  if (allowzero && has_zero && missing >= 0)
    return o2m_infer_error(ctx, "allowzero shape has both 0 and -1");
  if (x->rank >= 0) {
    o2m_status st = missing >= 0 ? reshape_missing_dim(ctx, x, out->dims, n, missing)
                                 : reshape_check_count(ctx, x, out->dims, n);
    if (st) return st;
  }
  o2m_propagate_same(ctx, 0, 0);
  return O2M_OK;
}

o2m_status o2m_infer_flatten(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, 2);
  if (x->rank < 0) return O2M_OK;
  int64_t axis = o2m_attr_int(ctx, "axis", 1);
  if (ctx->op_version < 11 && axis < 0)
    return o2m_infer_error(ctx, "axis %lld must not be negative before opset 11",
                           (long long)axis);
  if (axis < 0) axis += x->rank; /* [-r, r]: -1 splits before the last dim */
  if (axis < 0 || axis > x->rank)
    return o2m_infer_error(ctx, "axis %lld is out of range for rank %d",
                           (long long)o2m_attr_int(ctx, "axis", 1), x->rank);
  out->dims[0] = o2m_dims_product(ctx, x->dims, (int)axis);
  out->dims[1] = o2m_dims_product(ctx, x->dims + axis, x->rank - (int)axis);
  o2m_propagate_same(ctx, 0, 0);
  return O2M_OK;
}

/* ---- Squeeze, Unsqueeze -------------------------------------------------- */

/* Squeeze with axes whose values are unknown: the rank follows from their
 * count, and the dims too when exactly that many dims can be 1. */
static o2m_status squeeze_unknown_axes(o2m_infer_ctx *ctx, const o2m_type *x) {
  const o2m_dim *axes;
  int n = o2m_shape_value_in(ctx, 1, 1, &axes);
  int n_ones = 0, n_maybe = 0;
  for (int d = 0; d < x->rank; d++) {
    n_ones += dim_is_known(x->dims[d]) && x->dims[d].size == 1;
    n_maybe += !dim_is_known(x->dims[d]);
  }
  if (n < 0 || n > n_ones + n_maybe) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, x->rank - n);
  if (n_maybe || n != n_ones) return O2M_OK;
  for (int d = 0, j = 0; d < x->rank; d++)
    if (x->dims[d].size != 1) out->dims[j++] = x->dims[d];
  o2m_propagate_same(ctx, 0, 0);
  return O2M_OK;
}

o2m_status o2m_infer_squeeze(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const int64_t *axes;
  int64_t n_axes = o2m_ints_operand(ctx, "axes", 1, 13, &axes);
  if (x->rank < 0) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  if (n_axes == O2M_INTS_UNKNOWN) return squeeze_unknown_axes(ctx, x);
  char drop[x->rank > 0 ? x->rank : 1];
  memset(drop, 0, sizeof(drop));
  if (n_axes == O2M_INTS_ABSENT) {
    /* squeeze every 1; a symbolic dim might be 1, so the rank is unknown */
    for (int d = 0; d < x->rank; d++) {
      if (!dim_is_known(x->dims[d])) {
        o2m_out_tensor(ctx, 0, x->elem, -1);
        return O2M_OK;
      }
      drop[d] = x->dims[d].size == 1;
    }
  } else {
    o2m_status st = mark_axes(ctx, axes, n_axes, x->rank, drop, NULL);
    if (st) return st;
  }
  int rank = 0;
  for (int d = 0; d < x->rank; d++) rank += !drop[d];
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, rank);
  for (int d = 0, j = 0; d < x->rank; d++) {
    if (!drop[d]) {
      out->dims[j++] = x->dims[d];
    } else if (dim_is_known(x->dims[d]) && x->dims[d].size != 1) {
      return o2m_infer_error(ctx, "cannot squeeze axis %d of size %lld", d,
                             (long long)x->dims[d].size);
    }
  }
  o2m_propagate_same(ctx, 0, 0);
  return O2M_OK;
}

o2m_status o2m_infer_unsqueeze(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const int64_t *axes;
  int64_t n_axes = o2m_ints_operand(ctx, "axes", 1, 13, &axes);
  if (n_axes == O2M_INTS_ABSENT)
    return o2m_infer_error(ctx, "axes are missing");
  if (x->rank < 0) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  if (n_axes == O2M_INTS_UNKNOWN) {
    /* the rank follows from the count of axes, the dims do not */
    const o2m_dim *unknown;
    int n = o2m_shape_value_in(ctx, 1, 1, &unknown);
    o2m_out_tensor(ctx, 0, x->elem, n < 0 ? -1 : x->rank + n);
    return O2M_OK;
  }
  if (n_axes > INT32_MAX - x->rank) return o2m_infer_error(ctx, "too many axes");
  int rank = x->rank + (int)n_axes;
  char added[rank > 0 ? rank : 1];
  memset(added, 0, sizeof(added));
  o2m_status st = mark_axes(ctx, axes, n_axes, rank, added, NULL);
  if (st) return st;
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, rank);
  for (int d = 0, j = 0; d < rank; d++)
    out->dims[d] = added[d] ? o2m_dim_known(1) : x->dims[j++];
  o2m_propagate_same(ctx, 0, 0);
  return O2M_OK;
}

/* ---- Transpose ----------------------------------------------------------- */

typedef struct transpose_state {
  int rank;
  const int64_t *perm;
  const int64_t *in_dims;
} transpose_state;

static int64_t transpose_source(const void *state, const int64_t *out_index,
                                int *input) {
  const transpose_state *s = state;
  int64_t in_index[s->rank > 0 ? s->rank : 1];
  for (int d = 0; d < s->rank; d++) in_index[s->perm[d]] = out_index[d];
  *input = 0;
  return o2m_linear_index(in_index, s->in_dims, s->rank);
}

o2m_status o2m_infer_transpose(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const int64_t *perm;
  int n = o2m_attr_ints(ctx, "perm", &perm);
  if (x->rank < 0) {
    o2m_out_tensor(ctx, 0, x->elem, n);
    return O2M_OK;
  }
  if (n >= 0 && n != x->rank)
    return o2m_infer_error(ctx, "perm has %d entries for rank %d", n, x->rank);
  int64_t *p = o2m_arena_array(ctx->arena, (size_t)x->rank, sizeof(*p));
  if (!p) return o2m_out_of_memory(ctx);
  char seen[x->rank > 0 ? x->rank : 1];
  memset(seen, 0, sizeof(seen));
  for (int d = 0; d < x->rank; d++) {
    p[d] = n >= 0 ? perm[d] : x->rank - 1 - d;
    if (p[d] < 0 || p[d] >= x->rank || seen[p[d]])
      return o2m_infer_error(ctx, "perm is not a permutation of 0..%d", x->rank - 1);
    seen[p[d]] = 1;
  }
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, x->rank);
  for (int d = 0; d < x->rank; d++) out->dims[d] = x->dims[p[d]];
  int64_t in_dims[x->rank > 0 ? x->rank : 1];
  if (o2m_type_known_dims(x, in_dims)) {
    transpose_state s = {x->rank, p, in_dims};
    o2m_propagate_elements(ctx, 0, &s, transpose_source);
  }
  return O2M_OK;
}

/* ---- Concat -------------------------------------------------------------- */

typedef struct concat_state {
  int rank, axis, n_inputs;
  const int64_t *out_dims;
  const int64_t *axis_sizes; /* per input */
} concat_state;

static int64_t concat_source(const void *state, const int64_t *out_index,
                             int *input) {
  const concat_state *s = state;
  int64_t in_index[s->rank], in_dims[s->rank];
  memcpy(in_index, out_index, sizeof(in_index));
  memcpy(in_dims, s->out_dims, sizeof(in_dims));
  int i = 0;
  while (i < s->n_inputs && in_index[s->axis] >= s->axis_sizes[i])
    in_index[s->axis] -= s->axis_sizes[i++];
  if (i == s->n_inputs) return -1;
  in_dims[s->axis] = s->axis_sizes[i];
  *input = i;
  return o2m_linear_index(in_index, in_dims, s->rank);
}

/* Output dim d (not the axis) from the inputs that must all agree on it. */
static o2m_status concat_common_dim(o2m_infer_ctx *ctx, int d, o2m_dim *out) {
  int have = 0;
  for (int i = 0; i < o2m_in_count(ctx); i++) {
    const o2m_type *t = o2m_in_type(ctx, i);
    if (t->kind != O2M_TYPE_TENSOR || t->rank <= d) continue;
    o2m_dim dim = t->dims[d];
    if (dim_is_known(dim) && dim_is_known(*out) && have && dim.size != out->size)
      return o2m_infer_error(ctx, "inputs differ in dim %d: %lld vs %lld", d,
                             (long long)out->size, (long long)dim.size);
    /* prefer a known size, then a model's symbol over an inferred one */
    if (!have || (dim_is_known(dim) && !dim_is_known(*out)) ||
        (!dim_is_known(dim) && !dim_is_known(*out) && o2m_symbol_is_fresh(out->sym) &&
         !o2m_symbol_is_fresh(dim.sym)))
      *out = dim;
    have = 1;
  }
  return O2M_OK;
}

o2m_status o2m_infer_concat(o2m_infer_ctx *ctx) {
  int n = o2m_in_count(ctx);
  const o2m_type *first = NULL;
  int rank = -1;
  for (int i = 0; i < n; i++) {
    const o2m_type *t = o2m_in_type(ctx, i);
    if (t->kind != O2M_TYPE_TENSOR) {
      if (t->kind != O2M_TYPE_UNKNOWN || !o2m_in_present(ctx, i))
        return o2m_infer_error(ctx, "input %d must be a tensor", i);
      continue;
    }
    if (!first) first = t;
    if (t->elem != first->elem)
      return o2m_infer_error(ctx, "inputs differ in element type");
    if (t->rank >= 0 && rank >= 0 && t->rank != rank)
      return o2m_infer_error(ctx, "inputs differ in rank: %d vs %d", rank, t->rank);
    if (t->rank >= 0) rank = t->rank;
  }
  if (!first) return O2M_OK;
  const o2m_attr *axis_attr = o2m_attr_get(ctx, "axis");
  if (!axis_attr && ctx->op_version >= 4)
    return o2m_infer_error(ctx, "attribute 'axis' is missing");
  o2m_type *out = o2m_out_tensor(ctx, 0, first->elem, rank);
  if (rank < 0) return O2M_OK;
  int64_t axis;
  o2m_status st = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", 1), rank, 0, &axis);
  if (st) return st;
  for (int d = 0; d < rank; d++)
    if (d != axis && (st = concat_common_dim(ctx, d, &out->dims[d]))) return st;
  /* the axis: a sum of known sizes, or one symbol plus zeros */
  int64_t sum = 0;
  int n_sym = 0, all_ranked = 1;
  o2m_dim sym = {0};
  int64_t axis_sizes[n > 0 ? n : 1];
  for (int i = 0; i < n; i++) {
    const o2m_type *t = o2m_in_type(ctx, i);
    if (t->kind != O2M_TYPE_TENSOR || t->rank < 0) {
      all_ranked = 0;
      continue;
    }
    o2m_dim dim = t->dims[axis];
    if (dim_is_known(dim)) {
      axis_sizes[i] = dim.size;
      if (__builtin_add_overflow(sum, dim.size, &sum))
        return o2m_infer_error(ctx, "concatenated dim overflows");
    } else {
      sym = dim;
      n_sym++;
    }
  }
  if (!all_ranked) return O2M_OK;
  if (n_sym == 0) {
    out->dims[axis] = o2m_dim_known(sum);
  } else if (n_sym == 1 && sum == 0) {
    out->dims[axis] = sym;
    return O2M_OK;
  } else {
    return O2M_OK;
  }
  int64_t out_dims[rank];
  if (o2m_type_known_dims(out, out_dims)) {
    concat_state s = {rank, (int)axis, n, out_dims, axis_sizes};
    o2m_propagate_elements(ctx, 0, &s, concat_source);
  }
  return O2M_OK;
}

/* ---- Split --------------------------------------------------------------- */

typedef struct split_state {
  int rank, axis;
  int64_t offset;
  const int64_t *in_dims;
} split_state;

static int64_t split_source(const void *state, const int64_t *out_index,
                            int *input) {
  const split_state *s = state;
  int64_t in_index[s->rank];
  memcpy(in_index, out_index, sizeof(in_index));
  in_index[s->axis] += s->offset;
  *input = 0;
  return o2m_linear_index(in_index, s->in_dims, s->rank);
}

/* The split sizes: from the attribute or input, or equal parts of `dim`
 * (uneven with num_outputs from opset 18). Returns the count of sizes
 * known (n_out) or 0 when they cannot be known. */
static o2m_status split_sizes(o2m_infer_ctx *ctx, o2m_dim dim, int n_out,
                              int64_t *sizes, int *known) {
  *known = 0;
  const int64_t *split = NULL;
  int64_t n_split = O2M_INTS_ABSENT;
  if (ctx->op_version == 1 && o2m_in_present(ctx, 1))
    n_split = o2m_ints_operand(ctx, "split", 1, 1, &split);
  else
    n_split = o2m_ints_operand(ctx, "split", 1, 13, &split);
  if (n_split == O2M_INTS_UNKNOWN) return O2M_OK;
  if (n_split >= 0) {
    if (n_split != n_out)
      return o2m_infer_error(ctx, "split has %lld sizes for %d outputs",
                             (long long)n_split, n_out);
    int64_t sum = 0;
    for (int k = 0; k < n_out; k++) {
      if (split[k] < 0 || __builtin_add_overflow(sum, split[k], &sum))
        return o2m_infer_error(ctx, "split size %lld is invalid", (long long)split[k]);
      sizes[k] = split[k];
    }
    if (dim_is_known(dim) && sum != dim.size)
      return o2m_infer_error(ctx, "split sizes sum to %lld, not %lld",
                             (long long)sum, (long long)dim.size);
    *known = 1;
    return O2M_OK;
  }
  int64_t num_outputs = ctx->op_version >= 18
                            ? o2m_attr_int(ctx, "num_outputs", n_out) : n_out;
  if (num_outputs != n_out)
    return o2m_infer_error(ctx, "num_outputs is %lld but the node has %d outputs",
                           (long long)num_outputs, n_out);
  if (!dim_is_known(dim)) return O2M_OK;
  int64_t part = dim.size / n_out;
  if (dim.size % n_out) {
    if (ctx->op_version < 18)
      return o2m_infer_error(ctx, "dim %lld does not split into %d equal parts",
                             (long long)dim.size, n_out);
    part++;
  }
  for (int k = 0; k < n_out; k++) {
    int64_t left = dim.size - part * k;
    sizes[k] = left < 0 ? 0 : left < part ? left : part;
  }
  *known = 1;
  return O2M_OK;
}

o2m_status o2m_infer_split(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  int n_out = o2m_out_count(ctx);
  if (n_out < 1) return o2m_infer_error(ctx, "Split needs at least one output");
  if (x->rank < 0) {
    for (int k = 0; k < n_out; k++) o2m_out_tensor(ctx, k, x->elem, -1);
    return O2M_OK;
  }
  int64_t axis;
  o2m_status st = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", 0), x->rank, 0, &axis);
  if (st) return st;
  int64_t sizes[n_out];
  int known;
  if ((st = split_sizes(ctx, x->dims[axis], n_out, sizes, &known))) return st;
  int64_t in_dims[x->rank];
  int in_known = o2m_type_known_dims(x, in_dims);
  int64_t offset = 0;
  for (int k = 0; k < n_out; k++) {
    o2m_type *out = o2m_out_tensor(ctx, k, x->elem, x->rank);
    for (int d = 0; d < x->rank; d++)
      if (d != axis) out->dims[d] = x->dims[d];
    if (known)
      out->dims[axis] = o2m_dim_known(sizes[k]);
    else if (n_out == 1)
      out->dims[axis] = x->dims[axis];
    if (known && in_known) {
      split_state s = {x->rank, (int)axis, offset, in_dims};
      o2m_propagate_elements(ctx, k, &s, split_source);
      offset += sizes[k];
    }
  }
  return O2M_OK;
}

/* ---- Slice --------------------------------------------------------------- */

typedef struct slice_state {
  int rank;
  const int64_t *in_dims, *start, *step; /* per dim */
} slice_state;

static int64_t slice_source(const void *state, const int64_t *out_index,
                            int *input) {
  const slice_state *s = state;
  int64_t in_index[s->rank > 0 ? s->rank : 1];
  for (int d = 0; d < s->rank; d++)
    in_index[d] = s->start[d] + out_index[d] * s->step[d];
  *input = 0;
  return o2m_linear_index(in_index, s->in_dims, s->rank);
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* The slice of a known dim: the element count, and *start made the first
 * index taken. */
static int64_t slice_known_dim(int64_t dim, int64_t *start, int64_t end,
                               int64_t step) {
  if (dim == 0) return 0;
  int64_t s = *start < 0 ? *start + dim : *start;
  int64_t e = end < 0 ? end + dim : end;
  uint64_t stride = step > 0 ? (uint64_t)step : -(uint64_t)step;
  int64_t count;
  if (step > 0) {
    s = clamp(s, 0, dim);
    e = clamp(e, 0, dim);
    count = e > s ? (int64_t)((uint64_t)(e - s - 1) / stride) + 1 : 0;
  } else {
    s = clamp(s, 0, dim - 1);
    e = clamp(e, -1, dim - 1);
    count = s > e ? (int64_t)((uint64_t)(s - e - 1) / stride) + 1 : 0;
  }
  *start = s;
  return count;
}

/* Whether a slice takes a whole dim of unknown size, forwards or reversed. */
static int slice_takes_all(int64_t start, int64_t end, int64_t step) {
  if (step == 1) return (start == 0 || start <= -SLICE_BIG) && end >= SLICE_BIG;
  if (step == -1) return (start == -1 || start >= SLICE_BIG) && end <= -SLICE_BIG;
  return 0;
}

o2m_status o2m_infer_slice(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  if (x->rank < 0) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  int rank = x->rank;
  const int64_t *starts, *ends, *axes, *steps;
  int64_t n = o2m_ints_operand(ctx, "starts", 1, 10, &starts);
  int64_t n_ends = o2m_ints_operand(ctx, "ends", 2, 10, &ends);
  int64_t n_axes = o2m_ints_operand(ctx, "axes", 3, 10, &axes);
  int64_t n_steps = ctx->op_version >= 10 ? o2m_ints_operand(ctx, "steps", 4, 10, &steps)
                                          : O2M_INTS_ABSENT;
  if (n == O2M_INTS_ABSENT || n_ends == O2M_INTS_ABSENT)
    return o2m_infer_error(ctx, "starts and ends are required");
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, rank);
  char sliced[rank > 0 ? rank : 1];
  memset(sliced, 0, sizeof(sliced));
  int64_t axis_of[n > 0 ? n : 1];
  o2m_status st;
  if (n_axes >= 0) {
    if (n >= 0 && n_axes != n)
      return o2m_infer_error(ctx, "axes and starts differ in length");
    if ((st = mark_axes(ctx, axes, n_axes, rank, sliced, n >= 0 ? axis_of : NULL)))
      return st;
  }
  if (n < 0 || n_ends < 0 || n_steps == O2M_INTS_UNKNOWN || n_axes == O2M_INTS_UNKNOWN) {
    /* unknown bounds: the sliced dims are unknown, the others stay */
    for (int d = 0; d < rank; d++)
      if (n_axes >= 0 && !sliced[d]) out->dims[d] = x->dims[d];
    return O2M_OK;
  }
  if (n_ends != n || (n_steps >= 0 && n_steps != n))
    return o2m_infer_error(ctx, "starts, ends and steps differ in length");
  if (n_axes < 0) {
    if (n > rank) return o2m_infer_error(ctx, "more starts than dims");
    for (int64_t k = 0; k < n; k++) axis_of[k] = k;
  }
  int64_t start_at[rank > 0 ? rank : 1], step_at[rank > 0 ? rank : 1];
  for (int d = 0; d < rank; d++) {
    out->dims[d] = x->dims[d];
    start_at[d] = 0;
    step_at[d] = 1;
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t d = axis_of[k], step = n_steps >= 0 ? steps[k] : 1;
    if (step == 0) return o2m_infer_error(ctx, "slice step is 0");
    start_at[d] = starts[k];
    step_at[d] = step;
    if (dim_is_known(x->dims[d]))
      out->dims[d] = o2m_dim_known(slice_known_dim(x->dims[d].size, &start_at[d],
                                                   ends[k], step));
    else if (!slice_takes_all(starts[k], ends[k], step))
      out->dims[d] = o2m_dim_fresh(ctx);
  }
  int64_t in_dims[rank > 0 ? rank : 1];
  if (o2m_type_known_dims(x, in_dims)) {
    slice_state s = {rank, in_dims, start_at, step_at};
    o2m_propagate_elements(ctx, 0, &s, slice_source);
  }
  return O2M_OK;
}

/* ---- Expand, Tile -------------------------------------------------------- */

/* Expand and Tile both read each output element from input 0 at an index
 * derived per dim: Expand broadcasts (a dim of 1 reads index 0), Tile
 * wraps around. */
typedef struct repeat_state {
  int out_rank, in_rank;
  const int64_t *in_dims;
  int wrap; /* Tile: index modulo the input dim */
} repeat_state;

static int64_t repeat_source(const void *state, const int64_t *out_index,
                             int *input) {
  const repeat_state *s = state;
  int lead = s->out_rank - s->in_rank;
  int64_t in_index[s->in_rank > 0 ? s->in_rank : 1];
  for (int d = 0; d < s->in_rank; d++) {
    int64_t i = out_index[lead + d];
    in_index[d] = s->wrap ? i % s->in_dims[d] : s->in_dims[d] == 1 ? 0 : i;
  }
  *input = 0;
  return o2m_linear_index(in_index, s->in_dims, s->in_rank);
}

static void propagate_repeat(o2m_infer_ctx *ctx, const o2m_type *x,
                             const o2m_type *out, int wrap) {
  int64_t in_dims[x->rank > 0 ? x->rank : 1];
  if (out->rank < 0 || !o2m_type_known_dims(x, in_dims)) return;
  for (int d = 0; d < x->rank; d++)
    if (in_dims[d] == 0) return;
  repeat_state s = {out->rank, x->rank, in_dims, wrap};
  o2m_propagate_elements(ctx, 0, &s, repeat_source);
}

o2m_status o2m_infer_expand(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const o2m_dim *shape;
  int n = o2m_shape_value_in(ctx, 1, 1, &shape);
  if (n < 0) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  o2m_type target = {O2M_TYPE_TENSOR, x->elem, n, (o2m_dim *)shape, NULL};
  for (int j = 0; j < n; j++)
    if (o2m_entry_known(shape[j]) && shape[j].size < 0)
      return o2m_infer_error(ctx, "shape entry %lld is negative", (long long)shape[j].size);
  const o2m_type *both[2] = {x, &target};
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, -1);
  o2m_status st = o2m_broadcast(ctx, both, 2, out);
  if (st) return st;
  out->elem = x->elem;
  if (x->rank >= 0) propagate_repeat(ctx, x, out, 0);
  return O2M_OK;
}

o2m_status o2m_infer_tile(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  if (x->rank < 0) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, x->rank);
  o2m_dim *repeats = o2m_arena_array(ctx->arena, (size_t)x->rank, sizeof(*repeats));
  if (!repeats) return o2m_out_of_memory(ctx);
  for (int d = 0; d < x->rank; d++) repeats[d] = o2m_dim_known(1);
  if (ctx->op_version < 6) {
    /* Tile-1: a scalar count of tiles along a scalar axis */
    const o2m_dim *tiles, *axis;
    int64_t a;
    if (o2m_shape_value_in(ctx, 1, 0, &tiles) != 1 ||
        o2m_shape_value_in(ctx, 2, 0, &axis) != 1 || !o2m_entry_known(axis[0]))
      return O2M_OK;
    o2m_status st = o2m_norm_axis(ctx, axis[0].size, x->rank, 0, &a);
    if (st) return st;
    repeats[a] = tiles[0];
  } else {
    const o2m_dim *given;
    int n = o2m_shape_value_in(ctx, 1, 0, &given);
    if (n < 0) return O2M_OK;
    if (n != x->rank)
      return o2m_infer_error(ctx, "repeats has %d entries for rank %d", n, x->rank);
    memcpy(repeats, given, (size_t)n * sizeof(*repeats));
  }
  for (int d = 0; d < x->rank; d++) {
    if (o2m_entry_known(repeats[d]) && repeats[d].size < 0)
      return o2m_infer_error(ctx, "repeat count %lld is negative",
                             (long long)repeats[d].size);
    o2m_dim pair[2] = {x->dims[d], repeats[d]};
    out->dims[d] = o2m_dims_product(ctx, pair, 2);
  }
  propagate_repeat(ctx, x, out, 1);
  return O2M_OK;
}

/* ---- Pad, CenterCropPad -------------------------------------------------- */

/* Pad's modes, with the opset that introduced each. */
static const struct {
  const char *name;
  int since;
} pad_modes[] = {{"constant", 1}, {"reflect", 1}, {"edge", 1}, {"wrap", 19}};

static o2m_status check_pad_mode(o2m_infer_ctx *ctx) {
  const char *mode = o2m_attr_string(ctx, "mode", "constant");
  for (size_t k = 0; k < sizeof(pad_modes) / sizeof(pad_modes[0]); k++)
    if (strcmp(mode, pad_modes[k].name) == 0 && ctx->op_version >= pad_modes[k].since)
      return O2M_OK;
  return o2m_infer_error(ctx, "mode '%s' is not a Pad mode", mode);
}

o2m_status o2m_infer_pad(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  o2m_status st = check_pad_mode(ctx);
  if (st) return st;
  if (x->rank < 0) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  int rank = x->rank;
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, rank);
  const int64_t *pads, *axes;
  int64_t n_pads = o2m_ints_operand(ctx, ctx->op_version < 2 ? "paddings" : "pads",
                                    1, 11, &pads);
  int64_t n_axes = ctx->op_version >= 18 ? o2m_ints_operand(ctx, "axes", 3, 18, &axes)
                                         : O2M_INTS_ABSENT;
  if (n_pads == O2M_INTS_ABSENT) return o2m_infer_error(ctx, "pads are missing");
  if (n_axes == O2M_INTS_UNKNOWN) return O2M_OK; /* any dim may change */
  if (n_axes > rank) return o2m_infer_error(ctx, "more axes than dims");
  char padded[rank > 0 ? rank : 1];
  int64_t axis_of[rank > 0 ? rank : 1];
  memset(padded, 0, sizeof(padded));
  if (n_axes >= 0 && (st = mark_axes(ctx, axes, n_axes, rank, padded, axis_of)))
    return st;
  if (n_axes < 0) {
    n_axes = rank;
    for (int d = 0; d < rank; d++) axis_of[d] = d, padded[d] = 1;
  }
  for (int d = 0; d < rank; d++)
    if (!padded[d] || n_pads >= 0) out->dims[d] = x->dims[d];
  if (n_pads < 0) return O2M_OK; /* the padded dims stay unknown */
  if (n_pads != 2 * n_axes)
    return o2m_infer_error(ctx, "pads has %lld entries for %lld axes",
                           (long long)n_pads, (long long)n_axes);
  for (int64_t k = 0; k < n_axes; k++) {
    int64_t d = axis_of[k], grow;
    if (__builtin_add_overflow(pads[k], pads[k + n_axes], &grow))
      return o2m_infer_error(ctx, "pads overflow");
    if (grow == 0) continue;
    if (!dim_is_known(x->dims[d])) {
      out->dims[d] = o2m_dim_fresh(ctx);
      continue;
    }
    int64_t size;
    if (__builtin_add_overflow(x->dims[d].size, grow, &size) || size < 0)
      return o2m_infer_error(ctx, "padding axis %lld gives a negative size",
                             (long long)d);
    out->dims[d] = o2m_dim_known(size);
  }
  return O2M_OK;
}

o2m_status o2m_infer_center_crop_pad(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const o2m_dim *shape;
  int n = o2m_shape_value_in(ctx, 1, 1, &shape);
  const int64_t *axes;
  int n_axes = o2m_attr_ints(ctx, "axes", &axes);
  if (x->rank < 0) {
    o2m_out_tensor(ctx, 0, x->elem, n_axes < 0 && n >= 0 ? n : -1);
    return O2M_OK;
  }
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, x->rank);
  char chosen[x->rank > 0 ? x->rank : 1];
  int64_t axis_of[x->rank > 0 ? x->rank : 1];
  memset(chosen, 0, sizeof(chosen));
  if (n_axes > x->rank) return o2m_infer_error(ctx, "more axes than dims");
  o2m_status st;
  if (n_axes >= 0 && (st = mark_axes(ctx, axes, n_axes, x->rank, chosen, axis_of)))
    return st;
  if (n_axes < 0) {
    n_axes = x->rank;
    for (int d = 0; d < x->rank; d++) axis_of[d] = d, chosen[d] = 1;
  }
  for (int d = 0; d < x->rank; d++)
    if (!chosen[d]) out->dims[d] = x->dims[d];
  if (n < 0) return O2M_OK;
  if (n != n_axes)
    return o2m_infer_error(ctx, "shape has %d entries for %d axes", n, n_axes);
  for (int k = 0; k < n; k++) {
    if (o2m_entry_known(shape[k]) && shape[k].size < 0)
      return o2m_infer_error(ctx, "shape entry %lld is negative", (long long)shape[k].size);
    out->dims[axis_of[k]] = shape[k];
  }
  return O2M_OK;
}

/* ---- Identity, Trilu, ReverseSequence ------------------------------------ */

o2m_status o2m_infer_identity(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind == O2M_TYPE_UNKNOWN) return O2M_OK;
  o2m_out_set_type(ctx, 0, x);
  o2m_propagate_same(ctx, 0, 0);
  return O2M_OK;
}

/* Output 0 has input 0's type, which must have at least `min_rank` dims. */
static o2m_status same_type_min_rank(o2m_infer_ctx *ctx, int min_rank) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  if (x->rank >= 0 && x->rank < min_rank)
    return o2m_infer_error(ctx, "input has rank %d, needs at least %d", x->rank,
                           min_rank);
  o2m_out_set_type(ctx, 0, x);
  return O2M_OK;
}

o2m_status o2m_infer_trilu(o2m_infer_ctx *ctx) {
  return same_type_min_rank(ctx, 2);
}

o2m_status o2m_infer_reverse_sequence(o2m_infer_ctx *ctx) {
  int64_t batch_axis = o2m_attr_int(ctx, "batch_axis", 1);
  int64_t time_axis = o2m_attr_int(ctx, "time_axis", 0);
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) ||
      batch_axis == time_axis)
    return o2m_infer_error(ctx, "batch_axis and time_axis must be 0 and 1");
  const o2m_type *lens = o2m_in_type(ctx, 1);
  if (lens->kind == O2M_TYPE_TENSOR && lens->rank >= 0 && lens->rank != 1)
    return o2m_infer_error(ctx, "sequence_lens must be 1-D");
  return same_type_min_rank(ctx, 2);
}
