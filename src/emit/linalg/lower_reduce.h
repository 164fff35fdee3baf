/* lower_reduce.h - the reduction building blocks of the Linalg emitter,
 * shared by the reduce family (Reduce*, ArgMax/ArgMin, Softmax, ...) and
 * by any family that reduces (normalizations, pooling over a whole dim).
 *
 * Owns nothing: these only create ops at cx->block (see lower.h). */
#ifndef O2M_LOWER_REDUCE_H
#define O2M_LOWER_REDUCE_H

#include "emit/linalg/lower_elementwise.h"

enum { LW_MAX_REDUCE_RANK = 64 };

/* One reducing linalg.generic over a "full" shape of `rank` dims; the
 * dims k with reduced[k] != 0 are reduced. */
typedef struct lw_reduce_spec {
  int rank;
  const unsigned char *reduced;
  int n_in;
  const MlirValue *ins;            /* ins[0] must have the full shape */
  const unsigned char *in_reduced; /* per input: 1 = has the reduced shape
                                      (reduced dims dropped); NULL = all full */
  MlirValue init;                  /* scalar: the accumulator's start value
                                      and element type */
  lw_scalar_fn body;               /* args: the ins' scalars, then the
                                      accumulator; result: the new one */
  void *user;
} lw_reduce_spec;

/* The reduction's result, of the reduced shape (reduced dims dropped;
 * dynamic dims from ins[0]). */
o2m_status lw_reduce(lw_ctx *cx, const lw_reduce_spec *spec, MlirValue *result);

/* A tensor of the reduced shape expanded (tensor.expand_shape) to the
 * full rank with size-1 dims where reduced[k] (ONNX's keepdims form). */
MlirValue lw_keep_dims(lw_ctx *cx, MlirValue v, int rank, const unsigned char *reduced);

/* Normalizes ONNX axes (negative count from the end) into reduced[rank];
 * lw_error for an axis out of range or repeated. */
o2m_status lw_axes_mask(lw_ctx *cx, int rank, int n_axes, const int64_t *axes,
                        unsigned char *reduced);

/* The product of the reduced dims of `full` as a scalar of `dtype`, e.g.
 * the divisor of a mean. */
MlirValue lw_reduced_count(lw_ctx *cx, MlirValue full, const unsigned char *reduced,
                           o2m_dtype dtype);

/* The identity of a Max (lowest) or Min (highest) reduction in dtype:
 * -inf/+inf for floats, the integer type's bounds, false/true for bool. */
MlirValue lw_extreme_const(lw_ctx *cx, o2m_dtype dtype, int highest);

/* The int64 index of the max (max != 0) or min of x along `axis`, in the
 * reduced shape: the first one, or the last with `last`; NaN counts as the
 * extreme (numpy's argmax/argmin). */
o2m_status lw_arg_reduce(lw_ctx *cx, MlirValue x, o2m_dtype dtype, int axis, int max, int last,
                         MlirValue *indices);

#endif
