/* infer_helpers.h - small helpers shared by the elementwise, reduce,
 * signal, text/ml and training inference files: input checks, an output
 * shaped like a given type, a known integer scalar input, a dtype
 * attribute. Candidates for infer.h. */
#ifndef O2M_INFER_HELPERS_H
#define O2M_INFER_HELPERS_H

#include "infer/infer.h"

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

#endif
