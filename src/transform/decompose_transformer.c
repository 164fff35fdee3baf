/* decompose_transformer.c - transformer building blocks other than
 * Attention (decompose_attention.c):
 *  RotaryEmbedding  the input as [B, S, H, D] (from [B, H, S, D] by a
 *                   Transpose, or from [B, S, H*D] by a Reshape), its
 *                   first rotary_embedding_dim channels split into halves
 *                   (x1, x2) or into even/odd channels (interleaved),
 *                   rotated with cos/sin (gathered at position_ids when
 *                   given): (cos x1 - sin x2, sin x1 + cos x2), the rest
 *                   passed through, then back to the input's layout.
 *  SwiGLU           A * Sigmoid(alpha * A) * B.
 *  TensorScatter    a KV-cache update as one ScatterElements.
 */
#include <stdint.h>
#include <string.h>

#include "transform/decompose_kit.h"

/* x[..., start:end:step] on the last axis. */
static o2m_value *last_slice(o2m_rewriter *rw, o2m_value *x, int64_t start, int64_t end, int64_t step) {
  static const int64_t last[1] = {-1};
  o2m_value *in[5] = {x, o2m_rw_const_ints(rw, &start, 1), o2m_rw_const_ints(rw, &end, 1),
                      o2m_rw_const_ints(rw, last, 1), o2m_rw_const_ints(rw, &step, 1)};
  return x && in[1] && in[2] && in[3] && in[4] ? o2m_rw_op(rw, "Slice", 5, in, NULL, 0) : NULL;
}

static o2m_value *concat_last(o2m_rewriter *rw, o2m_value *a, o2m_value *b) {
  o2m_value *in[2] = {a, b};
  o2m_attr axis = o2m_rw_attr_int("axis", -1);
  return a && b ? o2m_rw_op(rw, "Concat", 2, in, &axis, 1) : NULL;
}

o2m_status o2m_decompose_rotary_embedding(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *cos = o2m_rw_in(rw, 1), *sin = o2m_rw_in(rw, 2);
  o2m_value *ids = o2m_rw_in(rw, 3);
  int rank = xk_rank(x);
  int64_t heads = o2m_rw_attr_i(rw, "num_heads", 0), rd = o2m_rw_attr_i(rw, "rotary_embedding_dim", 0);
  if ((rank != 3 && rank != 4) || (rank == 3 && heads <= 0))
    return o2m_rw_unsupported(rw, "the input must be 4-D, or 3-D with num_heads");
  int64_t hidden = x->type.dims[rank - 1].size;
  int64_t head_size = rank == 4 ? hidden : hidden >= 0 ? hidden / heads : -1;
  if (rd <= 0) rd = head_size;
  if (rd <= 0 || rd % 2) return o2m_rw_unsupported(rw, "the rotary dim is unknown or odd");
  static const int64_t swap12[4] = {0, 2, 1, 3}, third[1] = {2};
  const int64_t split[4] = {0, 0, heads, -1};
  o2m_value *bshd = rank == 4 ? xk_transpose(rw, x, swap12, 4) : xk_reshape(rw, x, split, 4);
  if (ids) {
    cos = xk_op2(rw, "Gather", cos, ids);
    sin = xk_op2(rw, "Gather", sin, ids);
  }
  cos = xk_unsqueeze(rw, cos, third, 1); /* [B, S, 1, rd/2] */
  sin = xk_unsqueeze(rw, sin, third, 1);
  int interleaved = o2m_rw_attr_i(rw, "interleaved", 0) != 0;
  o2m_value *x1 = interleaved ? last_slice(rw, bshd, 0, rd, 2) : last_slice(rw, bshd, 0, rd / 2, 1);
  o2m_value *x2 = interleaved ? last_slice(rw, bshd, 1, rd, 2) : last_slice(rw, bshd, rd / 2, rd, 1);
  o2m_value *real = xk_op2(rw, "Sub", xk_op2(rw, "Mul", cos, x1), xk_op2(rw, "Mul", sin, x2));
  o2m_value *imag = xk_op2(rw, "Add", xk_op2(rw, "Mul", sin, x1), xk_op2(rw, "Mul", cos, x2));
  o2m_value *rotated;
  if (interleaved) { /* pairs (real, imag) back in place: [..., rd/2, 2] -> [..., rd] */
    static const int64_t pair[1] = {-1};
    const int64_t flat[4] = {0, 0, 0, rd};
    o2m_value *pairs = concat_last(rw, xk_unsqueeze(rw, real, pair, 1), xk_unsqueeze(rw, imag, pair, 1));
    rotated = xk_reshape(rw, pairs, flat, 4);
  } else {
    rotated = concat_last(rw, real, imag);
  }
  if (head_size < 0 || rd < head_size) rotated = concat_last(rw, rotated, last_slice(rw, bshd, rd, INT64_MAX, 1));
  o2m_value *y = rank == 4 ? xk_transpose(rw, rotated, swap12, 4) : xk_op2(rw, "Reshape", rotated, xk_op1(rw, "Shape", x));
  return xk_bind(rw, 0, y);
}

o2m_status o2m_decompose_swiglu(o2m_rewriter *rw) {
  o2m_value *a = o2m_rw_in(rw, 0), *b = o2m_rw_in(rw, 1);
  double alpha = o2m_rw_attr_f(rw, "alpha", 1.0f);
  o2m_value *gate_in = alpha == 1.0 ? a : xk_op2(rw, "Mul", a, xk_scalar_like(rw, a, alpha));
  o2m_value *swish = xk_op2(rw, "Mul", a, xk_op1(rw, "Sigmoid", gate_in));
  return xk_bind(rw, 0, xk_op2(rw, "Mul", swish, b));
}

/* TensorScatter: present = past with update written along `axis` from
 * write_indices[b] (0 when absent) on, modulo the cache length in circular
 * mode: a ScatterElements whose indices, shaped like the update, are
 * write_indices[b] + s at sequence position s. */
o2m_status o2m_decompose_tensor_scatter(o2m_rewriter *rw) {
  o2m_value *past = o2m_rw_in(rw, 0), *update = o2m_rw_in(rw, 1), *start = o2m_rw_in(rw, 2);
  int rank = xk_rank(past);
  int axis = rank > 0 ? xk_axis(o2m_rw_attr_i(rw, "axis", -2), rank) : -1;
  const o2m_attr *mode = o2m_rw_attr(rw, "mode");
  int circular = mode && mode->type == O2M_ATTR_STRING && mode->s.len == 8 && !memcmp(mode->s.ptr, "circular", 8);
  if (rank < 2 || axis < 1 || rank > 64) return o2m_rw_unsupported(rw, "the cache rank is unknown or the axis is 0");
  int64_t along[64], per_batch[64];
  along[0] = -1;
  per_batch[0] = -1;
  for (int k = 1; k < rank - axis; k++) along[k] = 1;
  for (int k = 1; k < rank; k++) per_batch[k] = 1;
  o2m_value *pos = xk_reshape(rw, xk_iota(rw, xk_dim(rw, update, axis)), along, rank - axis);
  if (start) pos = xk_op2(rw, "Add", pos, xk_reshape(rw, xk_cast(rw, start, O2M_DT_INT64), per_batch, rank));
  if (circular) pos = xk_op2(rw, "Mod", pos, xk_dim(rw, past, axis));
  o2m_value *index = xk_op2(rw, "Expand", pos, xk_op1(rw, "Shape", update));
  o2m_value *in[3] = {past, index, update};
  o2m_attr at = o2m_rw_attr_int("axis", axis);
  return xk_bind(rw, 0, index ? o2m_rw_op(rw, "ScatterElements", 3, in, &at, 1) : NULL);
}
