/* decompose_dilated_pools.c - MaxPool and AveragePool with dilations,
 * for targets whose pools have none (TOSA; the Linalg target lowers them
 * itself): y[o] = max (or mean) over the kernel taps t of xp[o * s + t * d],
 * xp the input padded (with -inf for max, 0 for mean). Both are separable,
 * so the window is taken one spatial axis at a time: along axis i, k_i
 * strided Slices combined by Max or Add. A mean divides by the same sums
 * over a tensor of ones padded with 1 where ONNX counts pads
 * (count_include_pad: the explicit pads, not ceil_mode's overhang) and 0
 * elsewhere. Static dims; the output sizes (ceil_mode, auto_pad) come
 * from inference. The Indices output of MaxPool is refused.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"

enum { MAX_SPATIAL = 3, MAX_TAPS = 1024 }; /* taps: per axis */

/* An INTS attribute with `n` values, or dflt for each. */
static int ints_attr(o2m_rewriter *rw, const char *name, int n, int64_t dflt, int64_t *out) {
  const o2m_attr *a = o2m_rw_attr(rw, name);
  if (a && a->type == O2M_ATTR_INTS && a->count != n) return 0;
  for (int i = 0; i < n; i++) out[i] = a && a->type == O2M_ATTR_INTS ? a->ints[i] : dflt;
  return 1;
}

static int is_auto_pad(o2m_rewriter *rw, const char *mode) {
  const o2m_attr *a = o2m_rw_attr(rw, "auto_pad");
  return a && a->type == O2M_ATTR_STRING && a->s.len == strlen(mode) && memcmp(a->s.ptr, mode, a->s.len) == 0;
}

/* x[start :: step] along axis, `count` elements. */
static o2m_value *strided(o2m_rewriter *rw, o2m_value *x, int64_t axis, int64_t start, int64_t step, int64_t count) {
  int64_t end = start + (count - 1) * step + 1;
  o2m_value *in[5] = {x, o2m_rw_const_ints(rw, &start, 1), o2m_rw_const_ints(rw, &end, 1),
                      o2m_rw_const_ints(rw, &axis, 1), o2m_rw_const_ints(rw, &step, 1)};
  for (int k = 0; k < 5; k++)
    if (!in[k]) return NULL;
  return o2m_rw_op(rw, "Slice", 5, in, NULL, 0);
}

/* The window along spatial axis i: k taps d apart, stride s, out results. */
static o2m_value *window_axis(o2m_rewriter *rw, o2m_value *x, int i, int64_t k, int64_t d, int64_t s, int64_t out,
                              const char *combine) {
  o2m_value *acc = NULL;
  for (int64_t j = 0; j < k; j++) {
    o2m_value *v = strided(rw, x, 2 + i, j * d, s, out);
    acc = acc ? xk_op2(rw, combine, acc, v) : v;
  }
  return acc;
}

/* x padded by pads (ONNX layout, 2 * rank) with v. */
static o2m_value *padded(o2m_rewriter *rw, o2m_value *x, const int64_t *pads, int rank, double v) {
  o2m_value *in[3] = {x, o2m_rw_const_ints(rw, pads, 2 * rank), xk_scalar_like(rw, x, v)};
  return x && in[1] && in[2] ? o2m_rw_op(rw, "Pad", 3, in, NULL, 0) : NULL;
}

enum { MAX_WINDOW_VALUE = 1 << 30 };

o2m_status o2m_decompose_dilated_pool(o2m_rewriter *rw) {
  int max = strcmp(rw->node->op_type, "MaxPool") == 0;
  o2m_value *x = o2m_rw_in(rw, 0), *y = o2m_rw_out(rw, 0);
  int rank = xk_rank(x), r = rank - 2;
  int64_t xd[MAX_SPATIAL + 2], yd[MAX_SPATIAL + 2], k[MAX_SPATIAL], s[MAX_SPATIAL], d[MAX_SPATIAL],
      pads[2 * MAX_SPATIAL];
  if (r < 1 || r > MAX_SPATIAL || !XK_STATIC_DIMS(x, xd) || !y || xk_rank(y) != rank ||
      !XK_STATIC_DIMS(y, yd))
    return o2m_rw_unsupported(rw, "static dims of 1 to %d spatial axes are needed", MAX_SPATIAL);
  if (max && o2m_rw_out(rw, 1)) return o2m_rw_unsupported(rw, "the Indices output");
  if (!ints_attr(rw, "kernel_shape", r, 0, k) || !ints_attr(rw, "strides", r, 1, s) ||
      !ints_attr(rw, "dilations", r, 1, d) || !ints_attr(rw, "pads", 2 * r, 0, pads))
    return o2m_rw_error(rw, "a window attribute has the wrong count");
  int dilated = 0;
  for (int i = 0; i < r; i++) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1) return o2m_rw_error(rw, "bad window on spatial axis %d", i);
    if (k[i] > MAX_TAPS) return o2m_rw_unsupported(rw, "a kernel of %lld along axis %d", (long long)k[i], i);
    /* bounded, so that the extents below cannot overflow */
    if (s[i] > MAX_WINDOW_VALUE || d[i] > MAX_WINDOW_VALUE || yd[2 + i] > MAX_WINDOW_VALUE ||
        pads[i] < 0 || pads[r + i] < 0 || pads[i] > MAX_WINDOW_VALUE || pads[r + i] > MAX_WINDOW_VALUE)
      return o2m_rw_error(rw, "a stride, dilation, pad or output size on spatial axis %d is out of range", i);
    dilated |= d[i] != 1;
  }
  if (!dilated) return o2m_rw_unsupported(rw, "not dilated (the target's own pool applies)");
  int same_upper = is_auto_pad(rw, "SAME_UPPER"), same_lower = is_auto_pad(rw, "SAME_LOWER");
  int explicit_pads = !same_upper && !same_lower && !is_auto_pad(rw, "VALID");
  /* all_pads: what is read (explicit pads and ceil_mode's overhang);
   * counted: the explicit pads only (count_include_pad) */
  int64_t all_pads[2 * (MAX_SPATIAL + 2)] = {0}, counted[2 * (MAX_SPATIAL + 2)] = {0}, extra[2 * (MAX_SPATIAL + 2)] = {0};
  for (int i = 0; i < r; i++) {
    int64_t need = (yd[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1, before = 0; /* the padded extent read */
    if (same_upper || same_lower) {
      int64_t total = need - xd[2 + i] > 0 ? need - xd[2 + i] : 0;
      before = same_upper ? total / 2 : total - total / 2;
    } else if (explicit_pads) {
      before = pads[i];
    }
    int64_t after = need - xd[2 + i] - before; /* < 0: the tail is not read */
    if (after < 0) after = 0;
    all_pads[2 + i] = before, all_pads[rank + 2 + i] = after;
    int64_t counted_after = explicit_pads ? (pads[r + i] < after ? pads[r + i] : after) : after;
    counted[2 + i] = before, counted[rank + 2 + i] = counted_after;
    extra[rank + 2 + i] = after - counted_after;
  }
  o2m_value *acc = padded(rw, x, all_pads, rank, max ? -INFINITY : 0.0), *count = NULL;
  if (!max) { /* ones where the window counts, zeros elsewhere */
    int count_pad = o2m_rw_attr_i(rw, "count_include_pad", 0) != 0;
    o2m_value *ones = xk_op2(rw, "Add", xk_op2(rw, "Mul", x, xk_scalar_like(rw, x, 0)), xk_scalar_like(rw, x, 1));
    count = count_pad ? padded(rw, padded(rw, ones, counted, rank, 1.0), extra, rank, 0.0)
                      : padded(rw, ones, all_pads, rank, 0.0);
  }
  for (int i = 0; i < r; i++) {
    acc = window_axis(rw, acc, i, k[i], d[i], s[i], yd[2 + i], max ? "Max" : "Add");
    if (count) count = window_axis(rw, count, i, k[i], d[i], s[i], yd[2 + i], "Add");
  }
  if (!max) acc = xk_op2(rw, "Div", acc, count);
  return xk_bind(rw, 0, acc);
}
