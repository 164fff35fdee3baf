/* infer_cast_random.c - type inference for the ops that choose their
 * output element type: Cast, CastLike, BitCast (with data propagation of
 * known values and shape values) and the random generators
 * (RandomNormal/Uniform, their *Like forms, Bernoulli, Multinomial). */
#include <strings.h>

#include "infer/infer.h"
#include "infer/infer_data.h"
#include "infer/value_fold.h"

/* ---- Cast, CastLike ---------------------------------------------------- */

/* Cast's `to`: a TensorProto.DataType number since opset 6; in opset 1 the
 * enum's name ("FLOAT", "INT64", ...). */
static o2m_status cast_target(o2m_infer_ctx *ctx, o2m_dtype *to) {
  const o2m_attr *a = o2m_attr_get(ctx, "to");
  if (a && a->type == O2M_ATTR_STRING) {
    const char *name = o2m_attr_string(ctx, "to", "");
    for (int d = 1; d < O2M_DT_COUNT; d++)
      if (strcasecmp(name, o2m_dtype_name((o2m_dtype)d)) == 0) {
        *to = (o2m_dtype)d;
        return O2M_OK;
      }
    return o2m_infer_error(ctx, "'to' names no element type: '%s'", name);
  }
  return o2m_attr_dtype(ctx, "to", O2M_DT_UNDEFINED, to);
}

/* Output 0 = input 0 converted to `to`: its shape, and its value when
 * known (numbers) or tracked as a shape value (integer targets). */
static o2m_status cast_to(o2m_infer_ctx *ctx, o2m_dtype to) {
  const o2m_type *in = o2m_in_type(ctx, 0);
  o2m_out_shaped_like(ctx, 0, to, in);
  const o2m_tensor *known = o2m_in_known(ctx, 0);
  if (o2m_num_readable(known) && o2m_num_kind_of(to) != O2M_NUM_NONE) {
    o2m_tensor *t = o2m_tensor_new(ctx, to, known->rank, known->dims);
    if (!t) return O2M_OK;
    for (int64_t e = 0; e < known->count; e++)
      o2m_num_set(t, e, o2m_num_get(known, e));
    o2m_out_known(ctx, 0, t);
    return O2M_OK;
  }
  if (o2m_dtype_is_int(to) && to != O2M_DT_BOOL && in->kind == O2M_TYPE_TENSOR &&
      in->rank >= 0 && in->rank <= 1) {
    const o2m_dim *entries;
    int n = o2m_shape_value_in(ctx, 0, 0, &entries);
    if (n >= 0) o2m_shape_value_out(ctx, 0, entries, n);
  }
  return O2M_OK;
}

o2m_status o2m_infer_cast(o2m_infer_ctx *ctx) {
  o2m_dtype to = O2M_DT_UNDEFINED;
  o2m_status s = o2m_in_check_tensor(ctx, 0);
  if (!s) s = cast_target(ctx, &to);
  return s ? s : cast_to(ctx, to);
}

o2m_status o2m_infer_cast_like(o2m_infer_ctx *ctx) {
  o2m_status s = o2m_in_check_tensor(ctx, 0);
  if (!s) s = o2m_in_check_tensor(ctx, 1);
  return s ? s : cast_to(ctx, o2m_in_type(ctx, 1)->elem);
}

/* ---- BitCast ----------------------------------------------------------- */

/* The same bytes read as `to`, which must have the input's bit width. */
o2m_status o2m_infer_bitcast(o2m_infer_ctx *ctx) {
  o2m_dtype to = O2M_DT_UNDEFINED;
  o2m_status s = o2m_in_check_tensor(ctx, 0);
  if (!s) s = o2m_attr_dtype(ctx, "to", O2M_DT_UNDEFINED, &to);
  if (s) return s;
  const o2m_type *in = o2m_in_type(ctx, 0);
  if (to == O2M_DT_STRING || in->elem == O2M_DT_STRING)
    return o2m_infer_error(ctx, "cannot bitcast strings");
  if (in->elem && o2m_dtype_bits(in->elem) != o2m_dtype_bits(to))
    return o2m_infer_error(ctx, "%s (%d bits) cannot be bitcast to %s (%d bits)",
                           o2m_dtype_name(in->elem), o2m_dtype_bits(in->elem),
                           o2m_dtype_name(to), o2m_dtype_bits(to));
  o2m_out_shaped_like(ctx, 0, to, in);
  const o2m_tensor *known = o2m_in_known(ctx, 0);
  if (known && known->dtype != O2M_DT_STRING && (known->data || !known->count)) {
    o2m_tensor *t = o2m_arena_alloc(ctx->arena, sizeof(*t));
    if (!t) return O2M_OK;
    *t = *known;
    t->name = "";
    t->dtype = to;
    t->origin = O2M_DATA_COMPUTED;
    t->external = NULL;
    o2m_out_known(ctx, 0, t);
  }
  return O2M_OK;
}

/* ---- random generators ------------------------------------------------- */

/* RandomNormal, RandomUniform: `dtype` (default float) and `shape`. */
o2m_status o2m_infer_random(o2m_infer_ctx *ctx) {
  o2m_dtype dtype = O2M_DT_UNDEFINED;
  o2m_status s = o2m_attr_dtype(ctx, "dtype", O2M_DT_FLOAT, &dtype);
  if (s) return s;
  const int64_t *shape;
  int rank = o2m_attr_ints(ctx, "shape", &shape);
  if (rank < 0) return o2m_infer_error(ctx, "the 'shape' attribute is missing");
  o2m_type *out = o2m_out_tensor(ctx, 0, dtype, rank);
  for (int k = 0; k < out->rank; k++) {
    if (shape[k] < 0)
      return o2m_infer_error(ctx, "shape[%d] is negative: %lld", k, (long long)shape[k]);
    out->dims[k] = o2m_dim_known(shape[k]);
  }
  return O2M_OK;
}

/* RandomNormalLike, RandomUniformLike, Bernoulli: the input's shape, and
 * `dtype` or else the input's element type. */
o2m_status o2m_infer_random_like(o2m_infer_ctx *ctx) {
  o2m_dtype dtype = o2m_in_type(ctx, 0)->elem;
  o2m_status s = o2m_in_check_tensor(ctx, 0);
  if (!s && o2m_attr_get(ctx, "dtype"))
    s = o2m_attr_dtype(ctx, "dtype", O2M_DT_UNDEFINED, &dtype);
  if (s) return s;
  o2m_out_shaped_like(ctx, 0, dtype, o2m_in_type(ctx, 0));
  return O2M_OK;
}

/* Multinomial: [batch_size, sample_size] of int32 or int64 from
 * [batch_size, class_size] probabilities. */
o2m_status o2m_infer_multinomial(o2m_infer_ctx *ctx) {
  o2m_dtype dtype = O2M_DT_UNDEFINED;
  o2m_status s = o2m_in_check_tensor(ctx, 0);
  if (!s) s = o2m_attr_dtype(ctx, "dtype", O2M_DT_INT32, &dtype);
  if (s) return s;
  if (dtype != O2M_DT_INT32 && dtype != O2M_DT_INT64)
    return o2m_infer_error(ctx, "dtype must be int32 or int64, not %s", o2m_dtype_name(dtype));
  int64_t samples = o2m_attr_int(ctx, "sample_size", 1);
  if (samples < 0)
    return o2m_infer_error(ctx, "sample_size is negative: %lld", (long long)samples);
  const o2m_type *in = o2m_in_type(ctx, 0);
  if (in->kind == O2M_TYPE_TENSOR && in->rank >= 0 && in->rank != 2)
    return o2m_infer_error(ctx, "the input must have rank 2, not %d", in->rank);
  o2m_type *out = o2m_out_tensor(ctx, 0, dtype, 2);
  if (out->rank != 2) return O2M_OK;
  if (in->kind == O2M_TYPE_TENSOR && in->rank == 2) out->dims[0] = in->dims[0];
  out->dims[1] = o2m_dim_known(samples);
  return O2M_OK;
}
