/* kit_window.c - the layout geometry that every emitter's lowerings share
 * (kit.h): the window of Conv and the pools (kernel_shape, strides,
 * dilations, pads and auto_pad of the node, ceil_mode, the output size
 * along each spatial axis, and how far the last window reaches past the
 * begin-padded input), and DepthToSpace/SpaceToDepth as a 6-D transpose. */
#include <string.h>

#include "emit/kit/kit.h"

static const char *const auto_pads[LW_AUTO_PAD_COUNT] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

o2m_status lw_window_ints(lw_ctx *cx, const char *name, int count, int64_t dflt, int64_t *out) {
  const int64_t *v;
  int c = lw_attr_ints(cx, name, &v);
  if (c >= 0 && c != count) return lw_error(cx, "attribute %s has %d values, expected %d", name, c, count);
  for (int i = 0; i < count; i++) out[i] = c < 0 ? dflt : v[i];
  return O2M_OK;
}

o2m_status lw_read_auto_pad(lw_ctx *cx, int *mode) {
  const char *ap = lw_attr_string(cx, "auto_pad", "NOTSET");
  for (*mode = 0; *mode < LW_AUTO_PAD_COUNT && strcmp(ap, auto_pads[*mode]); (*mode)++) {
  }
  return *mode == LW_AUTO_PAD_COUNT ? lw_error(cx, "unknown auto_pad '%s'", ap) : O2M_OK;
}

o2m_status lw_read_fixed_window(lw_ctx *cx, MlirValue x, const int64_t *kernel, lw_fixed_window *w) {
  int64_t pads[2 * LW_FIXED_MAX_SPATIAL];
  int mode;
  MlirType xt = mlirValueGetType(x);
  int rank = (int)mlirShapedTypeGetRank(xt);
  memset(w, 0, sizeof(*w));
  w->n = rank - 2;
  if (w->n < 1 || w->n > LW_FIXED_MAX_SPATIAL) return lw_unsupported(cx, "input of rank %d", rank);
  o2m_status s;
  if ((s = lw_window_ints(cx, "kernel_shape", w->n, 0, w->k)) ||
      (s = lw_window_ints(cx, "strides", w->n, 1, w->s)) ||
      (s = lw_window_ints(cx, "dilations", w->n, 1, w->d)) ||
      (s = lw_window_ints(cx, "pads", 2 * w->n, 0, pads)) || (s = lw_read_auto_pad(cx, &mode)))
    return s;
  int ceil_mode = lw_attr_int(cx, "ceil_mode", 0) != 0;
  const o2m_type *y = lw_out_type(cx, 0);
  for (int i = 0; i < w->n; i++) {
    if (!w->k[i] && kernel) w->k[i] = kernel[i];
    if (w->k[i] <= 0 || w->s[i] <= 0 || w->d[i] <= 0) return lw_error(cx, "bad window on spatial axis %d", i);
    if (mlirShapedTypeIsDynamicDim(xt, 2 + i)) return lw_unsupported(cx, "a dynamic spatial axis %d", i);
    int64_t in = w->in[i] = mlirShapedTypeGetDimSize(xt, 2 + i), st = w->s[i];
    int64_t ext = (w->k[i] - 1) * w->d[i] + 1, out;
    if (mode == LW_SAME_UPPER || mode == LW_SAME_LOWER) {
      out = (in + st - 1) / st;
      int64_t total = (out - 1) * st + ext - in;
      if (total < 0) total = 0;
      w->pb[i] = mode == LW_SAME_UPPER ? total / 2 : total - total / 2;
      w->pe[i] = total - w->pb[i];
    } else {
      if (mode == LW_NOTSET) w->pb[i] = pads[i], w->pe[i] = pads[w->n + i];
      int64_t span = in + w->pb[i] + w->pe[i] - ext;
      if (span < 0) return lw_error(cx, "the window does not fit spatial axis %d", i);
      out = span / st + 1;
      if (ceil_mode && span % st) out++;
      if (ceil_mode && (out - 1) * st >= in + w->pb[i]) out--;
    }
    w->out[i] = out;
    w->reach[i] = (out - 1) * st + ext - in - w->pb[i];
    if (y->kind == O2M_TYPE_TENSOR && y->rank == w->n + 2 && y->dims[2 + i].size >= 0 &&
        y->dims[2 + i].size != out)
      return lw_error(cx, "internal: spatial axis %d has size %lld, inferred %lld", i, (long long)out,
                      (long long)y->dims[2 + i].size);
  }
  return O2M_OK;
}

void lw_depth_space_plan(const int64_t *in, int64_t b, int to_space, int crd, int64_t *mid,
                         int64_t *perm) {
  static const int64_t dcr[6] = {0, 3, 4, 1, 5, 2}, crd_perm[6] = {0, 1, 4, 2, 5, 3},
                       s2d[6] = {0, 3, 5, 1, 2, 4};
  int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  const int64_t to_crd[6] = {n, c / (b * b), b, b, h, w}, to_dcr[6] = {n, b, b, c / (b * b), h, w},
                to_depth[6] = {n, c, h / b, b, w / b, b};
  const int64_t *m = to_space ? (crd ? to_crd : to_dcr) : to_depth;
  const int64_t *p = to_space ? (crd ? crd_perm : dcr) : s2d;
  for (int k = 0; k < 6; k++) mid[k] = m[k], perm[k] = p[k];
}
