/* infer_index.c - inference for indexing ops and for ops that make
 * tensors from attributes or shapes: Gather, GatherElements, GatherND,
 * Scatter, ScatterElements, ScatterND, Compress, NonZero, OneHot, Unique,
 * Range, ConstantOfShape, Constant, EyeLike, DepthToSpace, SpaceToDepth.
 *
 * Known values are computed here for Constant (the attribute itself),
 * small ConstantOfShape and Range results, NonZero of a small known input,
 * and Gather/GatherElements of known or shape-valued data with known
 * indices (infer_data.h). Moves without indexing live in infer_shape.c.
 */
#include <math.h>
#include <string.h>

#include "infer/infer_data.h"

static int dim_is_known(o2m_dim d) { return !d.sym && d.size >= 0; }

/* The product of n sizes when it is at most O2M_KNOWN_MAX, else -1. */
static int64_t small_product(const int64_t *sizes, int n) {
  int64_t count = 1;
  for (int d = 0; d < n; d++)
    if (sizes[d] < 0 || __builtin_mul_overflow(count, sizes[d], &count) ||
        count > O2M_KNOWN_MAX)
      return -1;
  return count;
}

/* Reads known integer input i (int32/int64 indices) normalised against
 * `dim` when that dim is known: negatives count from the back, and an
 * index outside [-dim, dim) is an error. Returns the count or -1. */
static int64_t known_indices(o2m_infer_ctx *ctx, int i, o2m_dim dim,
                             int64_t **values, o2m_status *st) {
  *st = O2M_OK;
  int64_t n = o2m_in_known_ints(ctx, i, values);
  if (n < 0 || !dim_is_known(dim)) return -1;
  for (int64_t k = 0; k < n; k++) {
    int64_t v = (*values)[k];
    if (v < -dim.size || v >= dim.size) {
      *st = o2m_infer_error(ctx, "index %lld is out of range for a dim of %lld",
                            (long long)v, (long long)dim.size);
      return -1;
    }
    if (v < 0) (*values)[k] = v + dim.size;
  }
  return n;
}

/* ---- Gather, GatherElements, GatherND ------------------------------------ */

typedef struct gather_state {
  int axis, data_rank, indices_rank;
  const int64_t *data_dims, *indices_dims, *indices;
  int elements; /* GatherElements: indices replace the axis coordinate */
} gather_state;

static int64_t gather_source(const void *state, const int64_t *out_index,
                             int *input) {
  const gather_state *s = state;
  int64_t in_index[s->data_rank];
  *input = 0;
  if (s->elements) {
    memcpy(in_index, out_index, sizeof(in_index));
    in_index[s->axis] =
        s->indices[o2m_linear_index(out_index, s->indices_dims, s->data_rank)];
    return o2m_linear_index(in_index, s->data_dims, s->data_rank);
  }
  int q = s->indices_rank;
  for (int d = 0; d < s->axis; d++) in_index[d] = out_index[d];
  in_index[s->axis] =
      s->indices[o2m_linear_index(out_index + s->axis, s->indices_dims, q)];
  for (int d = s->axis + 1; d < s->data_rank; d++)
    in_index[d] = out_index[d - 1 + q];
  return o2m_linear_index(in_index, s->data_dims, s->data_rank);
}

/* Carries known or shape-valued data through a gather with known indices. */
static o2m_status propagate_gather(o2m_infer_ctx *ctx, const o2m_type *data,
                                   const o2m_type *indices, int axis,
                                   int elements) {
  int64_t data_dims[data->rank], indices_dims[indices->rank > 0 ? indices->rank : 1];
  if (!o2m_type_known_dims(data, data_dims) ||
      !o2m_type_known_dims(indices, indices_dims))
    return O2M_OK;
  int64_t *values;
  o2m_status st;
  if (known_indices(ctx, 1, data->dims[axis], &values, &st) < 0) return st;
  gather_state s = {axis,         data->rank, indices->rank, data_dims,
                    indices_dims, values,     elements};
  o2m_propagate_elements(ctx, 0, &s, gather_source);
  return O2M_OK;
}

o2m_status o2m_infer_gather(o2m_infer_ctx *ctx) {
  const o2m_type *data = o2m_in_type(ctx, 0), *indices = o2m_in_type(ctx, 1);
  if (data->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  if (indices->kind != O2M_TYPE_TENSOR && indices->kind != O2M_TYPE_UNKNOWN)
    return o2m_input_not_tensor(ctx, 1);
  if (data->rank < 0 || indices->kind != O2M_TYPE_TENSOR || indices->rank < 0) {
    o2m_out_tensor(ctx, 0, data->elem, -1);
    return O2M_OK;
  }
  int64_t axis;
  o2m_status st = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", 0), data->rank, 0, &axis);
  if (st) return st;
  int q = indices->rank;
  o2m_type *out = o2m_out_tensor(ctx, 0, data->elem, data->rank - 1 + q);
  for (int d = 0; d < axis; d++) out->dims[d] = data->dims[d];
  for (int d = 0; d < q; d++) out->dims[axis + d] = indices->dims[d];
  for (int d = (int)axis + 1; d < data->rank; d++) out->dims[d - 1 + q] = data->dims[d];
  return propagate_gather(ctx, data, indices, (int)axis, 0);
}

o2m_status o2m_infer_gather_elements(o2m_infer_ctx *ctx) {
  const o2m_type *data = o2m_in_type(ctx, 0), *indices = o2m_in_type(ctx, 1);
  if (data->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  if (indices->kind != O2M_TYPE_TENSOR) {
    o2m_status st = o2m_input_not_tensor(ctx, 1);
    if (!st) o2m_out_tensor(ctx, 0, data->elem, data->rank);
    return st;
  }
  if (data->rank >= 0 && indices->rank >= 0 && data->rank != indices->rank)
    return o2m_infer_error(ctx, "data has rank %d but indices rank %d", data->rank,
                           indices->rank);
  o2m_type *out = o2m_out_tensor(ctx, 0, data->elem, indices->rank);
  for (int d = 0; d < indices->rank; d++) out->dims[d] = indices->dims[d];
  if (data->rank < 0) return O2M_OK;
  int64_t axis;
  o2m_status st = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", 0), data->rank, 0, &axis);
  if (st) return st;
  return propagate_gather(ctx, data, indices, (int)axis, 1);
}

o2m_status o2m_infer_gather_nd(o2m_infer_ctx *ctx) {
  const o2m_type *data = o2m_in_type(ctx, 0), *indices = o2m_in_type(ctx, 1);
  if (data->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  int64_t b = ctx->op_version >= 12 ? o2m_attr_int(ctx, "batch_dims", 0) : 0;
  if (indices->kind != O2M_TYPE_TENSOR) {
    o2m_status st = o2m_input_not_tensor(ctx, 1);
    if (!st) o2m_out_tensor(ctx, 0, data->elem, -1);
    return st;
  }
  int r = data->rank, q = indices->rank;
  if ((r >= 0 && r < 1) || (q >= 0 && q < 1))
    return o2m_infer_error(ctx, "data and indices need rank >= 1");
  if (r < 0 || q < 0 || !dim_is_known(indices->dims[q - 1])) {
    o2m_out_tensor(ctx, 0, data->elem, -1);
    return O2M_OK;
  }
  int64_t last = indices->dims[q - 1].size;
  if (b < 0 || b >= q || b >= r)
    return o2m_infer_error(ctx, "batch_dims %lld is out of range", (long long)b);
  if (last < 1 || last > r - b)
    return o2m_infer_error(ctx, "indices' last dim %lld exceeds data rank %d - %lld",
                           (long long)last, r, (long long)b);
  o2m_type *out = o2m_out_tensor(ctx, 0, data->elem, q - 1 + r - (int)(b + last));
  for (int d = 0; d < q - 1; d++) {
    o2m_dim dim = indices->dims[d];
    if (d < b && !dim_is_known(dim)) dim = data->dims[d];
    out->dims[d] = dim;
  }
  for (int d = (int)(b + last); d < r; d++) out->dims[q - 1 + d - b - last] = data->dims[d];
  return O2M_OK;
}

/* ---- Scatter, ScatterElements, ScatterND --------------------------------- */

/* The reduction modes of ScatterElements/ScatterND, with their opsets. */
static const struct {
  const char *name;
  int since;
} scatter_reductions[] = {
    {"none", 16}, {"add", 16}, {"mul", 16}, {"max", 18}, {"min", 18}};

o2m_status o2m_infer_scatter(o2m_infer_ctx *ctx) {
  const o2m_attr *reduction = o2m_attr_get(ctx, "reduction");
  if (reduction) {
    const char *mode = o2m_attr_string(ctx, "reduction", "none");
    size_t k = 0, n = sizeof(scatter_reductions) / sizeof(scatter_reductions[0]);
    while (k < n && (strcmp(mode, scatter_reductions[k].name) != 0 ||
                     ctx->op_version < scatter_reductions[k].since))
      k++;
    if (k == n) return o2m_infer_error(ctx, "reduction '%s' is not supported here", mode);
  }
  const o2m_type *data = o2m_in_type(ctx, 0);
  if (data->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  o2m_out_set_type(ctx, 0, data);
  return O2M_OK;
}

/* ---- Compress, NonZero ----------------------------------------------------- */

o2m_status o2m_infer_compress(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const o2m_type *cond = o2m_in_type(ctx, 1);
  if (cond->kind == O2M_TYPE_TENSOR && cond->rank >= 0 && cond->rank != 1)
    return o2m_infer_error(ctx, "condition must be 1-D");
  const o2m_attr *axis_attr = o2m_attr_get(ctx, "axis");
  o2m_type *out;
  o2m_dim selected; /* the dim being selected from */
  int64_t axis = 0;
  if (!axis_attr) {
    out = o2m_out_tensor(ctx, 0, x->elem, 1);
    selected = x->rank >= 0 ? o2m_dims_product(ctx, x->dims, x->rank)
                            : o2m_dim_fresh(ctx);
  } else {
    out = o2m_out_tensor(ctx, 0, x->elem, x->rank);
    if (x->rank < 0) return O2M_OK;
    o2m_status st = o2m_norm_axis(ctx, axis_attr->i, x->rank, 0, &axis);
    if (st) return st;
    for (int d = 0; d < x->rank; d++) out->dims[d] = x->dims[d];
    selected = x->dims[axis];
  }
  int64_t *flags;
  int64_t n = o2m_in_known_ints(ctx, 1, &flags);
  if (n < 0 || !dim_is_known(selected)) {
    out->dims[axis] = o2m_dim_fresh(ctx);
    return O2M_OK;
  }
  int64_t count = 0;
  for (int64_t k = 0; k < n && k < selected.size; k++) count += flags[k] != 0;
  out->dims[axis] = o2m_dim_known(count);
  return O2M_OK;
}

/* Computes NonZero's output for a small known input. */
static void propagate_nonzero(o2m_infer_ctx *ctx, const o2m_type *x) {
  const o2m_tensor *t = o2m_in_known(ctx, 0);
  int64_t dims[x->rank];
  if (!t || t->count > O2M_KNOWN_MAX || t->dtype == O2M_DT_STRING ||
      !o2m_type_known_dims(x, dims) || (!t->data && t->count))
    return;
  int64_t count = 0;
  for (int64_t k = 0; k < t->count; k++) count += o2m_tensor_get_float(t, k) != 0;
  int64_t out_dims[2] = {x->rank, count};
  o2m_tensor *out = o2m_tensor_new(ctx, O2M_DT_INT64, 2, out_dims);
  if (!out) return;
  int64_t index[x->rank];
  memset(index, 0, sizeof(index));
  for (int64_t k = 0, j = 0; k < t->count; k++) {
    if (o2m_tensor_get_float(t, k) != 0) {
      for (int d = 0; d < x->rank; d++) o2m_tensor_set_int(out, d * count + j, index[d]);
      j++;
    }
    for (int d = x->rank - 1; d >= 0 && ++index[d] == dims[d]; d--) index[d] = 0;
  }
  o2m_type *type = o2m_out_tensor(ctx, 0, O2M_DT_INT64, 2);
  type->dims[0] = o2m_dim_known(x->rank);
  type->dims[1] = o2m_dim_known(count);
  o2m_out_known(ctx, 0, out);
}

o2m_status o2m_infer_nonzero(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  o2m_type *out = o2m_out_tensor(ctx, 0, O2M_DT_INT64, 2);
  if (x->rank <= 0) return O2M_OK; /* a scalar's row count is not settled */
  out->dims[0] = o2m_dim_known(x->rank);
  propagate_nonzero(ctx, x);
  return O2M_OK;
}

/* ---- OneHot, Unique ------------------------------------------------------- */

o2m_status o2m_infer_onehot(o2m_infer_ctx *ctx) {
  const o2m_type *indices = o2m_in_type(ctx, 0), *values = o2m_in_type(ctx, 2);
  if (values->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 2);
  if (indices->kind != O2M_TYPE_TENSOR) {
    o2m_status st = o2m_input_not_tensor(ctx, 0);
    if (!st) o2m_out_tensor(ctx, 0, values->elem, -1);
    return st;
  }
  if (values->rank >= 0 && (values->rank != 1 || (dim_is_known(values->dims[0]) &&
                                                  values->dims[0].size != 2)))
    return o2m_infer_error(ctx, "values must hold exactly 2 elements");
  if (indices->rank < 0) {
    o2m_out_tensor(ctx, 0, values->elem, -1);
    return O2M_OK;
  }
  int rank = indices->rank + 1;
  int64_t axis;
  o2m_status st = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", -1), rank, 0, &axis);
  if (st) return st;
  o2m_type *out = o2m_out_tensor(ctx, 0, values->elem, rank);
  for (int d = 0, j = 0; d < rank; d++)
    if (d != axis) out->dims[d] = indices->dims[j++];
  const o2m_tensor *depth = o2m_in_known(ctx, 1);
  if (depth && depth->count == 1 && depth->data) {
    double v = o2m_dtype_is_float(depth->dtype) ? o2m_tensor_get_float(depth, 0)
                                                : (double)o2m_tensor_get_int(depth, 0);
    if (!(v >= 1) || v > (double)INT64_MAX)
      return o2m_infer_error(ctx, "depth %g must be positive", v);
    out->dims[axis] = o2m_dim_known((int64_t)v);
  }
  return O2M_OK;
}

o2m_status o2m_infer_unique(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  o2m_dim unique = o2m_dim_fresh(ctx); /* the count of unique entries */
  const o2m_attr *axis_attr = o2m_attr_get(ctx, "axis");
  o2m_dim scanned; /* the length of inverse_indices */
  if (!axis_attr) {
    o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, 1);
    y->dims[0] = unique;
    scanned = x->rank >= 0 ? o2m_dims_product(ctx, x->dims, x->rank)
                           : o2m_dim_fresh(ctx);
  } else if (x->rank < 0) {
    o2m_out_tensor(ctx, 0, x->elem, -1);
    scanned = o2m_dim_fresh(ctx);
  } else {
    int64_t axis;
    o2m_status st = o2m_norm_axis(ctx, axis_attr->i, x->rank, 0, &axis);
    if (st) return st;
    o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, x->rank);
    for (int d = 0; d < x->rank; d++) y->dims[d] = d == axis ? unique : x->dims[d];
    scanned = x->dims[axis];
  }
  o2m_out_tensor(ctx, 1, O2M_DT_INT64, 1)->dims[0] = unique;
  o2m_out_tensor(ctx, 2, O2M_DT_INT64, 1)->dims[0] = scanned;
  o2m_out_tensor(ctx, 3, O2M_DT_INT64, 1)->dims[0] = unique;
  return O2M_OK;
}

/* ---- Range ----------------------------------------------------------------- */

/* Range's length and, when small, its values from known scalars. */
static o2m_status range_known(o2m_infer_ctx *ctx, o2m_dtype dtype, o2m_type *out) {
  const o2m_tensor *in[3];
  for (int i = 0; i < 3; i++) {
    in[i] = o2m_in_known(ctx, i);
    if (!in[i] || in[i]->count != 1 || !in[i]->data) return O2M_OK;
  }
  int64_t n;
  int is_float = o2m_dtype_is_float(dtype);
  if (is_float) {
    double start = o2m_tensor_get_float(in[0], 0), limit = o2m_tensor_get_float(in[1], 0),
           delta = o2m_tensor_get_float(in[2], 0);
    double steps = ceil((limit - start) / delta);
    if (delta == 0 || isnan(steps) || steps > (double)INT64_MAX)
      return o2m_infer_error(ctx, "Range of %g to %g by %g is invalid", start, limit, delta);
    n = steps > 0 ? (int64_t)steps : 0;
  } else {
    int64_t start = o2m_tensor_get_int(in[0], 0), limit = o2m_tensor_get_int(in[1], 0),
            delta = o2m_tensor_get_int(in[2], 0);
    if (delta == 0) return o2m_infer_error(ctx, "Range delta is 0");
    /* count with a ceiling division in 128 bits: limit - start may not
     * fit in 64 */
    __int128 span = (__int128)limit - start;
    __int128 q = span / delta;
    if (q * delta != span && ((span > 0) == (delta > 0))) q++;
    if (q > INT64_MAX) return o2m_infer_error(ctx, "Range has too many elements");
    n = q > 0 ? (int64_t)q : 0;
  }
  out->dims[0] = o2m_dim_known(n);
  if (n > O2M_KNOWN_MAX) return O2M_OK;
  o2m_tensor *t = o2m_tensor_new(ctx, dtype, 1, &n);
  if (!t) return o2m_out_of_memory(ctx);
  for (int64_t k = 0; k < n; k++) {
    if (is_float)
      o2m_tensor_set_float(t, k, o2m_tensor_get_float(in[0], 0) +
                                     (double)k * o2m_tensor_get_float(in[2], 0));
    else
      o2m_tensor_set_int(t, k, o2m_tensor_get_int(in[0], 0) +
                                   k * o2m_tensor_get_int(in[2], 0));
  }
  o2m_out_known(ctx, 0, t);
  return O2M_OK;
}

o2m_status o2m_infer_range(o2m_infer_ctx *ctx) {
  o2m_dtype dtype = O2M_DT_UNDEFINED;
  for (int i = 0; i < 3; i++) {
    const o2m_type *t = o2m_in_type(ctx, i);
    if (t->kind == O2M_TYPE_UNKNOWN) continue;
    if (t->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, i);
    if (t->rank > 0 && !(t->rank == 1 && dim_is_known(t->dims[0]) && t->dims[0].size == 1))
      return o2m_infer_error(ctx, "input %d must be a scalar", i);
    if (dtype && t->elem != dtype)
      return o2m_infer_error(ctx, "start, limit and delta differ in type");
    dtype = t->elem;
  }
  if (!dtype) return O2M_OK;
  o2m_type *out = o2m_out_tensor(ctx, 0, dtype, 1);
  if (o2m_in_known(ctx, 0) && o2m_in_known(ctx, 1) && o2m_in_known(ctx, 2))
    return range_known(ctx, dtype, out);
  /* Range(0, n, 1) over a symbolic n (arange of a dim) has n elements */
  const o2m_dim *start, *limit, *delta;
  if (o2m_shape_value_in(ctx, 0, 0, &start) == 1 && o2m_shape_value_in(ctx, 1, 0, &limit) == 1 &&
      o2m_shape_value_in(ctx, 2, 0, &delta) == 1 && o2m_entry_known(start[0]) &&
      start[0].size == 0 && o2m_entry_known(delta[0]) && delta[0].size == 1 &&
      !o2m_entry_known(limit[0]))
    out->dims[0] = limit[0];
  return O2M_OK;
}

/* ---- ConstantOfShape, EyeLike --------------------------------------------- */

o2m_status o2m_infer_constant_of_shape(o2m_infer_ctx *ctx) {
  const o2m_attr *value = o2m_attr_get(ctx, "value");
  if (value && (value->type != O2M_ATTR_TENSOR || !value->t || value->t->count != 1))
    return o2m_infer_error(ctx, "attribute 'value' must be a one-element tensor");
  o2m_dtype dtype = value ? value->t->dtype : O2M_DT_FLOAT;
  const o2m_dim *shape;
  int n = o2m_shape_value_in(ctx, 0, 1, &shape);
  o2m_type *out = o2m_out_tensor(ctx, 0, dtype, n);
  int64_t sizes[n > 0 ? n : 1];
  for (int j = 0; j < n; j++) {
    if (o2m_entry_known(shape[j]) && shape[j].size < 0)
      return o2m_infer_error(ctx, "shape entry %lld is negative", (long long)shape[j].size);
    out->dims[j] = shape[j];
    sizes[j] = shape[j].size; /* -1 for a symbol */
  }
  int64_t count = n < 0 ? -1 : small_product(sizes, n);
  int bits = o2m_dtype_bits(dtype);
  if (count < 0 || bits <= 0 || bits % 8 ||
      (value && !value->t->data))
    return O2M_OK;
  o2m_tensor *t = o2m_tensor_new(ctx, dtype, n, sizes);
  if (!t) return o2m_out_of_memory(ctx);
  if (value)
    for (int64_t k = 0; k < count; k++)
      memcpy((uint8_t *)t->data + k * (bits / 8), value->t->data, (size_t)bits / 8);
  o2m_out_known(ctx, 0, t);
  return O2M_OK;
}

o2m_status o2m_infer_eye_like(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  if (x->rank >= 0 && x->rank != 2) return o2m_infer_error(ctx, "input must be 2-D");
  int64_t dtype = o2m_attr_int(ctx, "dtype", x->elem);
  if (!o2m_dtype_valid((int)dtype) || dtype == O2M_DT_UNDEFINED || dtype == O2M_DT_STRING)
    return o2m_infer_error(ctx, "dtype %lld is not valid here", (long long)dtype);
  o2m_type *out = o2m_out_tensor(ctx, 0, (o2m_dtype)dtype, 2);
  for (int d = 0; d < x->rank; d++) out->dims[d] = x->dims[d];
  return O2M_OK;
}

/* ---- Constant -------------------------------------------------------------- */

/* Builds a small tensor from a scalar or list attribute. */
typedef o2m_tensor *(*constant_builder)(o2m_infer_ctx *ctx, const o2m_attr *a);

static o2m_tensor *constant_floats(o2m_infer_ctx *ctx, const o2m_attr *a) {
  int scalar = a->type == O2M_ATTR_FLOAT;
  int64_t n = scalar ? 1 : a->count;
  o2m_tensor *t = o2m_tensor_new(ctx, O2M_DT_FLOAT, scalar ? 0 : 1, &n);
  for (int64_t k = 0; t && k < n; k++)
    o2m_tensor_set_float(t, k, scalar ? a->f : a->floats[k]);
  return t;
}

static o2m_tensor *constant_ints(o2m_infer_ctx *ctx, const o2m_attr *a) {
  int scalar = a->type == O2M_ATTR_INT;
  int64_t n = scalar ? 1 : a->count;
  o2m_tensor *t = o2m_tensor_new(ctx, O2M_DT_INT64, scalar ? 0 : 1, &n);
  for (int64_t k = 0; t && k < n; k++) o2m_tensor_set_int(t, k, scalar ? a->i : a->ints[k]);
  return t;
}

static o2m_tensor *constant_strings(o2m_infer_ctx *ctx, const o2m_attr *a) {
  int scalar = a->type == O2M_ATTR_STRING;
  int64_t n = scalar ? 1 : a->count;
  o2m_tensor *t = o2m_tensor_new(ctx, O2M_DT_STRING, scalar ? 0 : 1, &n);
  if (!t) return NULL;
  t->strings = scalar ? o2m_arena_array(ctx->arena, 1, sizeof(o2m_bytes)) : a->strings;
  if (scalar && t->strings) t->strings[0] = a->s;
  return t->strings || n == 0 ? t : NULL;
}

static o2m_tensor *constant_tensor(o2m_infer_ctx *ctx, const o2m_attr *a) {
  return a->t;
}

/* A sparse tensor made dense, when small; its type either way. */
static o2m_tensor *constant_sparse(o2m_infer_ctx *ctx, const o2m_attr *a) {
  const o2m_sparse_tensor *sp = a->sparse;
  if (!sp || !sp->values) return NULL;
  o2m_type *type = o2m_type_tensor(ctx, sp->values->dtype, sp->rank, sp->dims);
  if (!type) return NULL;
  o2m_out_set_type(ctx, 0, type);
  int64_t count = small_product(sp->dims, sp->rank);
  int bits = o2m_dtype_bits(sp->values->dtype), width = bits / 8;
  const o2m_tensor *idx = sp->indices, *val = sp->values;
  if (count < 0 || bits <= 0 || bits % 8 || !idx || (!val->data && val->count))
    return NULL;
  int coords = idx->rank == 2;
  int64_t nnz = val->count;
  if (idx->count != (coords ? nnz * sp->rank : nnz)) return NULL;
  o2m_tensor *t = o2m_tensor_new(ctx, val->dtype, sp->rank, sp->dims);
  for (int64_t k = 0; t && k < nnz; k++) {
    int64_t at = 0;
    if (!coords) {
      at = o2m_tensor_get_int(idx, k);
    } else {
      for (int d = 0; d < sp->rank; d++) {
        int64_t c = o2m_tensor_get_int(idx, k * sp->rank + d);
        if (c < 0 || c >= sp->dims[d]) return NULL;
        at = at * sp->dims[d] + c;
      }
    }
    if (at < 0 || at >= count) return NULL;
    memcpy((uint8_t *)t->data + at * width, val->data + k * width, (size_t)width);
  }
  return t;
}

static const struct {
  const char *attr;
  o2m_attr_type type;
  int since;
  constant_builder build;
} constant_forms[] = {
    {"value", O2M_ATTR_TENSOR, 1, constant_tensor},
    {"sparse_value", O2M_ATTR_SPARSE_TENSOR, 11, constant_sparse},
    {"value_float", O2M_ATTR_FLOAT, 12, constant_floats},
    {"value_floats", O2M_ATTR_FLOATS, 12, constant_floats},
    {"value_int", O2M_ATTR_INT, 12, constant_ints},
    {"value_ints", O2M_ATTR_INTS, 12, constant_ints},
    {"value_string", O2M_ATTR_STRING, 12, constant_strings},
    {"value_strings", O2M_ATTR_STRINGS, 12, constant_strings},
};

o2m_status o2m_infer_constant(o2m_infer_ctx *ctx) {
  const o2m_attr *found = NULL;
  size_t form = 0;
  for (size_t k = 0; k < sizeof(constant_forms) / sizeof(constant_forms[0]); k++) {
    const o2m_attr *a = o2m_attr_get(ctx, constant_forms[k].attr);
    if (!a) continue;
    if (found) return o2m_infer_error(ctx, "more than one value attribute");
    if (a->type != constant_forms[k].type || ctx->op_version < constant_forms[k].since)
      return o2m_infer_error(ctx, "attribute '%s' is not valid here", a->name);
    found = a;
    form = k;
  }
  if (!found) return o2m_infer_error(ctx, "no value attribute");
  if ((found->type == O2M_ATTR_TENSOR && !found->t) ||
      (found->type == O2M_ATTR_SPARSE_TENSOR && (!found->sparse || !found->sparse->values)))
    return o2m_infer_error(ctx, "attribute '%s' holds no tensor", found->name);
  o2m_tensor *t = constant_forms[form].build(ctx, found);
  if (found->type != O2M_ATTR_SPARSE_TENSOR) { /* sparse: typed by its builder */
    if (!t) return o2m_out_of_memory(ctx);
    o2m_type *type = o2m_type_tensor(ctx, t->dtype, t->rank, t->dims);
    if (!type) return o2m_out_of_memory(ctx);
    o2m_out_set_type(ctx, 0, type);
  }
  if (t) o2m_out_known(ctx, 0, t);
  return O2M_OK;
}

/* ---- DepthToSpace, SpaceToDepth -------------------------------------------- */

/* Moves blocks between the channel dim and the two spatial dims:
 * `to_space` divides channels by b*b and multiplies H and W by b. */
static o2m_status block_move(o2m_infer_ctx *ctx, int to_space) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const o2m_attr *attr = o2m_attr_get(ctx, "blocksize");
  if (!attr || attr->i <= 0 || attr->i > INT32_MAX)
    return o2m_infer_error(ctx, "blocksize must be a positive integer");
  if (to_space && ctx->op_version >= 11) {
    const char *mode = o2m_attr_string(ctx, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
      return o2m_infer_error(ctx, "mode '%s' is neither DCR nor CRD", mode);
  }
  int64_t b = attr->i;
  if (x->rank >= 0 && x->rank != 4) return o2m_infer_error(ctx, "input must be 4-D");
  o2m_type *out = o2m_out_tensor(ctx, 0, x->elem, 4);
  if (x->rank < 0) return O2M_OK;
  out->dims[0] = x->dims[0];
  o2m_dim block = o2m_dim_known(b), block2 = o2m_dim_known(b * b);
  /* the dims that get divided: C for DepthToSpace, H and W otherwise */
  for (int d = 1; d < 4; d++) {
    o2m_dim dim = x->dims[d];
    int divide = to_space ? d == 1 : d > 1;
    int64_t by = d == 1 ? b * b : b;
    if (!divide) {
      out->dims[d] = o2m_dim_mul(ctx, dim, d == 1 ? block2 : block);
    } else if (dim_is_known(dim)) {
      if (dim.size % by)
        return o2m_infer_error(ctx, "dim %d of size %lld is not a multiple of %lld", d,
                               (long long)dim.size, (long long)by);
      out->dims[d] = o2m_dim_known(dim.size / by);
    }
  }
  return O2M_OK;
}

o2m_status o2m_infer_depth_to_space(o2m_infer_ctx *ctx) { return block_move(ctx, 1); }

o2m_status o2m_infer_space_to_depth(o2m_infer_ctx *ctx) { return block_move(ctx, 0); }
