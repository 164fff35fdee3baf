/* decompose_spectral.c - DFT (opset 17: `axis` attribute; opset 20: `axis`
 * input) and STFT (opset 17) for targets without them, as products with
 * constant twiddle matrices: the transformed axis is moved last, the real
 * and imaginary parts are multiplied (MatMul) by [n, out] matrices of
 * cos and sin computed in double at import, and the parts are put back
 * together as the last dim. The work is the direct O(n^2) transform that
 * the Linalg lowering does too, in ops every target has (Slice, Squeeze,
 * Transpose, MatMul, Gather, Mul, Add, Sub, Unsqueeze, Concat).
 *
 * Semantics follow ONNX's reference (onnx/reference/ops/op_dft.py,
 * op_stft.py), with theta = 2 pi ((k n) mod L) / L:
 * - DFT forward: y[k] = sum_{n < min(N, L)} x[n] e^{-i theta}; onesided
 *   keeps the first L/2 + 1 bins.
 * - DFT inverse: (1/L) sum_k X[k] e^{+i theta}; onesided inverse is
 *   numpy's irfft: bins k < L/2 + 1 stand for a Hermitian spectrum (bins
 *   other than 0 and L/2 count twice) and the result is real.
 * - STFT: frames x[b, f * step + n] (n < frame_length) weighted by the
 *   window (ones without one), each transformed forward (onesided by
 *   default).
 * dft_length, axis, frame_step and frame_length must be known at import
 * (run/test specialize them); the signal's dims must be static.
 */
#include <math.h>
#include <stdlib.h>

#include "transform/decompose_kit.h"
#include "util/diag.h"

o2m_dtype o2m_math_dtype(o2m_dtype t); /* decompose_math.c */

/* The real and imaginary weights of output o from input r. */
typedef struct twiddles {
  double *re_from_re, *re_from_im, *im_from_re, *im_from_im; /* [r][o] */
} twiddles;

/* Fills the [n][out] matrices: forward (sign -1), inverse (+1, scaled by
 * 1/L) or irfft (real output). */
static int make_twiddles(twiddles *t, int64_t n, int64_t out, int64_t L, int inverse, int irfft) {
  size_t count = (size_t)(n * out);
  t->re_from_re = calloc(4 * count + 1, sizeof(double));
  if (!t->re_from_re) return -1;
  t->re_from_im = t->re_from_re + count;
  t->im_from_re = t->re_from_im + count;
  t->im_from_im = t->im_from_re + count;
  double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / (double)L : 1.0;
  for (int64_t r = 0; r < n; r++)
    for (int64_t o = 0; o < out; o++) {
      double theta = 2.0 * M_PI * (double)((r * o) % L) / (double)L;
      double c = cos(theta) * scale, s = sign * sin(theta) * scale;
      size_t at = (size_t)(r * out + o);
      if (irfft) c *= r == 0 || 2 * r == L ? 1.0 : 2.0, s *= r == 0 || 2 * r == L ? 1.0 : 2.0;
      /* (xr + i xi)(c + i s) */
      t->re_from_re[at] = c;
      t->re_from_im[at] = -s;
      t->im_from_re[at] = s;
      t->im_from_im[at] = c;
    }
  return 0;
}

/* v [..., n] times the [n, out] matrix m. */
static o2m_value *times(o2m_rewriter *rw, o2m_value *v, const double *m, int64_t n, int64_t out) {
  int64_t dims[2] = {n, out};
  return xk_op2(rw, "MatMul", v, xk_const_nd(rw, xk_elem(v), 2, dims, m));
}

/* a + b where b may be NULL (no imaginary input). */
static o2m_value *plus(o2m_rewriter *rw, o2m_value *a, o2m_value *b) {
  return b ? xk_op2(rw, "Add", a, b) : a;
}

/* Component c of x's last dim, the last dim dropped. */
static o2m_value *component(o2m_rewriter *rw, o2m_value *x, int rank, int c) {
  int64_t start = c, end = c + 1, axis = rank - 1;
  o2m_value *in[4] = {x, o2m_rw_const_ints(rw, &start, 1), o2m_rw_const_ints(rw, &end, 1),
                      o2m_rw_const_ints(rw, &axis, 1)};
  o2m_value *part = in[1] && in[2] && in[3] ? o2m_rw_op(rw, "Slice", 4, in, NULL, 0) : NULL;
  return xk_squeeze(rw, part, &axis, 1);
}

/* [re, im] (or re alone) as the last dim of the result. */
static o2m_value *join(o2m_rewriter *rw, o2m_value *re, o2m_value *im, int rank) {
  int64_t axis = rank;
  re = xk_unsqueeze(rw, re, &axis, 1);
  if (!im) return re;
  o2m_value *in[2] = {re, xk_unsqueeze(rw, im, &axis, 1)};
  o2m_attr a = o2m_rw_attr_int("axis", axis);
  return in[0] && in[1] ? o2m_rw_op(rw, "Concat", 2, in, &a, 1) : NULL;
}

/* The transform of (xr, xi) [..., n] into [..., out] parts; *im NULL for
 * a real result. */
static int transform(o2m_rewriter *rw, o2m_value *xr, o2m_value *xi, int64_t n, int64_t out,
                     int64_t L, int inverse, int irfft, o2m_value **re, o2m_value **im) {
  twiddles t;
  if (make_twiddles(&t, n, out, L, inverse, irfft)) return -1;
  *re = plus(rw, times(rw, xr, t.re_from_re, n, out), xi ? times(rw, xi, t.re_from_im, n, out) : NULL);
  *im = irfft ? NULL
              : plus(rw, times(rw, xr, t.im_from_re, n, out), xi ? times(rw, xi, t.im_from_im, n, out) : NULL);
  free(t.re_from_re);
  return 0;
}

/* A known integer scalar input, or dflt when absent. */
static int known_int(o2m_rewriter *rw, int i, int64_t dflt, int64_t *out) {
  o2m_value *v = o2m_rw_in(rw, i);
  *out = dflt;
  if (!v) return 0;
  const o2m_tensor *t = v->init ? v->init : v->known;
  if (!t || t->count != 1) return -1;
  *out = (int64_t)o2m_tensor_get_float(t, 0);
  return 0;
}

o2m_status o2m_decompose_dft(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  int rank = xk_rank(x);
  int64_t dims[64];
  o2m_dtype dt = xk_elem(x);
  if (!o2m_dtype_is_float(dt)) return o2m_rw_unsupported(rw, "the input is not of a float type");
  if (rank < 2 || rank > 63 || !XK_STATIC_DIMS(x, dims)) return o2m_rw_unsupported(rw, "an input without static dims");
  int inverse = o2m_rw_attr_i(rw, "inverse", 0) != 0, onesided = o2m_rw_attr_i(rw, "onesided", 0) != 0;
  int64_t axis = o2m_rw_attr_i(rw, "axis", 1), length;
  if (xk_version(rw) >= 20 && known_int(rw, 2, -2, &axis))
    return o2m_rw_unsupported(rw, "the axis is not known at import");
  axis = axis < 0 ? axis + rank : axis;
  if (axis < 0 || axis >= rank - 1) return o2m_rw_error(rw, "axis %lld is not a signal axis", (long long)axis);
  int64_t n_in = dims[axis], comps = dims[rank - 1];
  if (comps != 1 && comps != 2) return o2m_rw_error(rw, "the last dim is %lld, not 1 or 2", (long long)comps);
  int irfft = inverse && onesided;
  if (known_int(rw, 1, irfft ? 2 * (n_in - 1) : n_in, &length))
    return o2m_rw_unsupported(rw, "dft_length is not known at import");
  if (length < 1) return o2m_rw_error(rw, "dft_length %lld is not positive", (long long)length);
  int64_t n_used = irfft ? length / 2 + 1 : length;
  if (n_used > n_in) n_used = n_in;
  int64_t out = onesided && !inverse ? length / 2 + 1 : length;
  o2m_dtype math = o2m_math_dtype(dt);
  x = xk_cast(rw, x, math);
  if (n_used < n_in) { /* truncated to the samples used */
    int64_t start = 0;
    o2m_value *in[4] = {x, o2m_rw_const_ints(rw, &start, 1), o2m_rw_const_ints(rw, &n_used, 1),
                        o2m_rw_const_ints(rw, &axis, 1)};
    x = in[1] && in[2] && in[3] ? o2m_rw_op(rw, "Slice", 4, in, NULL, 0) : NULL;
  }
  /* the signal axis last: perm of the rank - 1 dims left */
  int64_t perm[64], back[64];
  int m = 0;
  for (int k = 0; k < rank - 1; k++)
    if (k != axis) perm[m++] = k;
  perm[m++] = axis;
  for (int k = 0; k < m; k++) back[perm[k]] = k;
  o2m_value *xr = xk_transpose(rw, component(rw, x, rank, 0), perm, m);
  o2m_value *xi = comps == 2 ? xk_transpose(rw, component(rw, x, rank, 1), perm, m) : NULL;
  o2m_value *re, *im;
  if (!xr || (comps == 2 && !xi)) return xk_failed(rw);
  if (transform(rw, xr, xi, n_used, out, length, inverse, irfft, &re, &im))
    return o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
  re = xk_transpose(rw, re, back, m);
  if (im) im = xk_transpose(rw, im, back, m);
  return xk_bind(rw, 0, xk_cast(rw, join(rw, re, im, m), dt));
}

o2m_status o2m_decompose_stft(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *w = o2m_rw_in(rw, 2);
  int64_t dims[3], step, frame;
  o2m_dtype dt = xk_elem(x);
  if (!o2m_dtype_is_float(dt)) return o2m_rw_unsupported(rw, "the signal is not of a float type");
  if (xk_rank(x) != 3 || !XK_STATIC_DIMS(x, dims)) return o2m_rw_unsupported(rw, "a signal without static dims");
  int64_t samples = dims[1], comps = dims[2];
  if (comps != 1 && comps != 2) return o2m_rw_error(rw, "the last dim is %lld, not 1 or 2", (long long)comps);
  int64_t wlen = -1;
  if (w && (xk_rank(w) != 1 || !xk_static_dims_in(w, &wlen, 1))) return o2m_rw_unsupported(rw, "a window without a static length");
  if (known_int(rw, 1, 0, &step) || known_int(rw, 3, w ? wlen : samples, &frame))
    return o2m_rw_unsupported(rw, "frame_step or frame_length is not known at import");
  if (w && wlen != frame) return o2m_rw_unsupported(rw, "a window whose length is not frame_length");
  if (step < 1 || frame < 1 || frame > samples)
    return o2m_rw_error(rw, "frame_step %lld / frame_length %lld do not fit %lld samples", (long long)step,
                        (long long)frame, (long long)samples);
  int onesided = o2m_rw_attr_i(rw, "onesided", 1) != 0;
  int64_t frames = (samples - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
  o2m_dtype math = o2m_math_dtype(dt);
  x = xk_cast(rw, x, math);
  /* frames[b, f, n] = x[b, f * step + n] */
  int64_t *idx = malloc((size_t)(frames * frame) * sizeof(int64_t) + 1);
  if (!idx) return o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
  for (int64_t f = 0; f < frames; f++)
    for (int64_t n = 0; n < frame; n++) idx[f * frame + n] = f * step + n;
  o2m_value *flat = o2m_rw_const_ints(rw, idx, (int)(frames * frame));
  free(idx);
  int64_t shape[2] = {frames, frame};
  o2m_value *at = xk_reshape(rw, flat, shape, 2);
  o2m_attr axis1 = o2m_rw_attr_int("axis", 1);
  o2m_value *parts[2] = {NULL, NULL};
  for (int c = 0; c < comps; c++) {
    o2m_value *in[2] = {component(rw, x, 3, c), at};
    o2m_value *g = in[0] && in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis1, 1) : NULL;
    parts[c] = w ? xk_op2(rw, "Mul", g, xk_cast(rw, w, math)) : g;
    if (!parts[c]) return xk_failed(rw);
  }
  o2m_value *re, *im;
  if (transform(rw, parts[0], parts[1], frame, bins, frame, 0, 0, &re, &im))
    return o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
  return xk_bind(rw, 0, xk_cast(rw, join(rw, re, im, 3), dt));
}
