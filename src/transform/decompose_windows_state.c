/* decompose_windows_state.c - two ops that are a window over their input
 * plus bookkeeping, written in core ops for targets that do not lower
 * them (TOSA; the Linalg target lowers both itself):
 *  CenterCropPad        per axis, a crop from (d - s) / 2 or a zero pad
 *                       from (s - d) / 2: one Pad by signed amounts (a
 *                       negative pad crops); needs static dims and a known
 *                       shape input.
 *  CausalConvWithState  the depthwise convolution (group = C) of
 *                       [past_state or zeros, input] along L, an optional
 *                       SiLU (x * sigmoid(x)); present_state is the last
 *                       K-1 steps of that sequence.
 */
#include <string.h>

#include "transform/decompose_kit.h"

enum { MAX_RANK = 16 };

/* ---- CenterCropPad --------------------------------------------------------- */

o2m_status o2m_decompose_center_crop_pad(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *shape = o2m_rw_in(rw, 1);
  int rank = xk_rank(x);
  int64_t dims[MAX_RANK], pads[2 * MAX_RANK] = {0};
  if (rank < 0 || rank > MAX_RANK || !XK_STATIC_DIMS(x, dims))
    return o2m_rw_unsupported(rw, "the input needs static dims");
  const o2m_tensor *want = shape ? (shape->known ? shape->known : shape->init) : NULL;
  if (!want || !want->data) return o2m_rw_unsupported(rw, "the shape is not known at import");
  const o2m_attr *axes = o2m_rw_attr(rw, "axes");
  int n = axes && axes->type == O2M_ATTR_INTS ? axes->count : rank;
  if (want->count != n) return o2m_rw_error(rw, "shape has %lld entries for %d axes", (long long)want->count, n);
  for (int i = 0; i < n; i++) {
    int a = axes && axes->type == O2M_ATTR_INTS ? xk_axis(axes->ints[i], rank) : i;
    if (a < 0) return o2m_rw_error(rw, "axis %lld is out of range", (long long)axes->ints[i]);
    int64_t d = dims[a], s = (int64_t)o2m_tensor_get_float(want, i);
    if (d >= s) { /* crop (d - s) / 2 first, the rest at the end */
      pads[a] = -((d - s) / 2);
      pads[a + rank] = -(d - s - (d - s) / 2);
    } else {
      pads[a] = (s - d) / 2;
      pads[a + rank] = s - d - (s - d) / 2;
    }
  }
  o2m_value *in[3] = {x, o2m_rw_const_ints(rw, pads, 2 * rank), xk_scalar_like(rw, x, 0)};
  o2m_value *y = in[1] && in[2] ? o2m_rw_op(rw, "Pad", 3, in, NULL, 0) : NULL;
  return xk_bind(rw, 0, y);
}

/* ---- CausalConvWithState -------------------------------------------------- */

o2m_status o2m_decompose_causal_conv(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *w = o2m_rw_in(rw, 1), *b = o2m_rw_in(rw, 2), *past = o2m_rw_in(rw, 3);
  int64_t xd[3], wd[3];
  if (xk_rank(x) != 3 || !XK_STATIC_DIMS(x, xd) || xk_rank(w) != 3 || !XK_STATIC_DIMS(w, wd))
    return o2m_rw_unsupported(rw, "input and weight need static (B, C, L) and (C, 1, K) dims");
  int64_t c = wd[0], k = wd[2];
  if (wd[1] != 1 || k < 1 || xd[1] != c) return o2m_rw_error(rw, "the weight is not (C, 1, K) for C = %lld", (long long)xd[1]);
  const o2m_attr *act = o2m_rw_attr(rw, "activation");
  int silu = act && act->type == O2M_ATTR_STRING &&
             ((act->s.len == 4 && memcmp(act->s.ptr, "silu", 4) == 0) ||
              (act->s.len == 5 && memcmp(act->s.ptr, "swish", 5) == 0));
  if (act && !silu && !(act->s.len == 4 && memcmp(act->s.ptr, "none", 4) == 0))
    return o2m_rw_error(rw, "unknown activation '%.*s'", (int)act->s.len, act->s.ptr);
  if (k == 1 && o2m_rw_out(rw, 1)) return o2m_rw_unsupported(rw, "an empty present_state (kernel size 1)");
  o2m_value *seq = x;
  if (k > 1) {
    o2m_value *head = past;
    if (!head) { /* K-1 zero steps in front */
      int64_t pads[6] = {0, 0, k - 1, 0, 0, 0};
      o2m_value *in[3] = {x, o2m_rw_const_ints(rw, pads, 6), xk_scalar_like(rw, x, 0)};
      seq = in[1] && in[2] ? o2m_rw_op(rw, "Pad", 3, in, NULL, 0) : NULL;
    } else {
      o2m_value *parts[2] = {head, x};
      o2m_attr axis = o2m_rw_attr_int("axis", 2);
      seq = o2m_rw_op(rw, "Concat", 2, parts, &axis, 1);
    }
  }
  o2m_attr group = o2m_rw_attr_int("group", c);
  o2m_value *conv_in[3] = {seq, w, b};
  o2m_value *y = seq ? o2m_rw_op(rw, "Conv", b ? 3 : 2, conv_in, &group, 1) : NULL;
  if (silu) {
    /* computed in float32 as ONNX's reference does */
    o2m_dtype t = xk_elem(x);
    o2m_value *f = xk_cast(rw, y, O2M_DT_FLOAT);
    y = xk_cast(rw, xk_op2(rw, "Mul", f, xk_op1(rw, "Sigmoid", f)), t);
  }
  o2m_status s = xk_bind(rw, 0, y);
  if (s || !o2m_rw_out(rw, 1)) return s;
  return xk_bind(rw, 1, xk_slice(rw, seq, 2, xd[2], xd[2] + k - 1));
}
