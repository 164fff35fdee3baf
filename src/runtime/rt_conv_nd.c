/* rt_conv_nd.c - float32 convolutions and transposed convolutions of 1
 * to 3 spatial dims in ONNX's layout (NCW, NCHW, NCDHW) with constant
 * weights: the kernel the Linalg emitter calls for them when oneDNN is
 * there (rt_abi.h, O2M_DNNL_CONV_ND_CALL; lower_dnnl.c). oneDNN runs them
 * in the layout its kernel picks (rt_dnnl_conv_nd: x and y reordered to
 * and from it around the call, the weights once per site); what it
 * refuses, or a library run where oneDNN is missing, runs as plain C
 * loops here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* Dim k of a spatial window padded to three dims (size 1 past the rank). */
static int64_t at3(const int64_t *dims, int spatial, int k) { return k < spatial ? dims[2 + k] : 1; }

/* A call's window padded to three spatial dims (size 1, stride 1, pad 0,
 * dilation 1 past its rank), and its channel counts. */
typedef struct window3 {
  int64_t n, ch, f, cg, fg;
  int64_t in[3], out[3], k[3], st[3], pad[3], dil[3];
} window3;

static window3 window_of(const rt_conv_nd_call *c) {
  const int64_t *p = c->p;
  int s = (int)p[CN_SPATIAL];
  window3 w = {.n = c->x_dims[0], .ch = c->x_dims[1], .f = c->y_dims[1]};
  w.cg = w.ch / p[CN_GROUPS], w.fg = w.f / p[CN_GROUPS];
  for (int i = 0; i < 3; i++) {
    w.in[i] = at3(c->x_dims, s, i), w.out[i] = at3(c->y_dims, s, i), w.k[i] = at3(c->w_dims, s, i);
    w.st[i] = i < s ? p[CN_STRIDE + i] : 1, w.pad[i] = i < s ? p[CN_PAD_BEGIN + i] : 0;
    w.dil[i] = i < s ? p[CN_DILATION + i] : 1;
  }
  return w;
}

/* y = conv(x, w) + bias, the same arithmetic as oneDNN's in plain C
 * (double accumulators). */
static void reference_conv_nd(const rt_conv_nd_call *c) {
  window3 w = window_of(c);
  int64_t n = w.n, ch = w.ch, f = w.f, cg = w.cg, fg = w.fg, *in = w.in, *out = w.out, *k = w.k, *st = w.st,
          *pad = w.pad, *dil = w.dil;
  int64_t in_size = in[0] * in[1] * in[2], taps = k[0] * k[1] * k[2];
  float *y = c->y;
  for (int64_t b = 0; b < n; b++)
    for (int64_t o = 0; o < f; o++) {
      const float *x0 = c->x + (b * ch + o / fg * cg) * in_size, *w0 = c->w + o * cg * taps;
      for (int64_t u = 0; u < out[0]; u++)
        for (int64_t v = 0; v < out[1]; v++)
          for (int64_t t = 0; t < out[2]; t++) {
            double acc = c->bias ? c->bias[o] : 0.0;
            for (int64_t i = 0; i < k[0]; i++) {
              int64_t z = u * st[0] - pad[0] + i * dil[0];
              if (z < 0 || z >= in[0]) continue;
              for (int64_t j = 0; j < k[1]; j++) {
                int64_t r = v * st[1] - pad[1] + j * dil[1];
                if (r < 0 || r >= in[1]) continue;
                for (int64_t l = 0; l < k[2]; l++) {
                  int64_t q = t * st[2] - pad[2] + l * dil[2];
                  if (q < 0 || q >= in[2]) continue;
                  for (int64_t e = 0; e < cg; e++)
                    acc += (double)x0[e * in_size + (z * in[1] + r) * in[2] + q] *
                           w0[e * taps + (i * k[1] + j) * k[2] + l];
                }
              }
            }
            *y++ = (float)acc;
          }
    }
}

/* y = ConvTranspose(x, w) + bias: each input element's taps added to
 * the output element they land on (double sums). 0 when out of memory. */
static int reference_conv_transpose_nd(const rt_conv_nd_call *c) {
  window3 w = window_of(c);
  int64_t n = w.n, ch = w.ch, f = w.f, cg = w.cg, fg = w.fg, *in = w.in, *out = w.out, *k = w.k, *st = w.st,
          *pad = w.pad, *dil = w.dil;
  int64_t in_size = in[0] * in[1] * in[2], out_size = out[0] * out[1] * out[2], taps = k[0] * k[1] * k[2];
  double *acc = malloc((size_t)(n * f * out_size) * sizeof(double));
  if (!acc) return 0;
  for (int64_t b = 0; b < n; b++)
    for (int64_t o = 0; o < f; o++)
      for (int64_t e = 0; e < out_size; e++) acc[(b * f + o) * out_size + e] = c->bias ? c->bias[o] : 0.0;
  for (int64_t b = 0; b < n; b++)
    for (int64_t ic = 0; ic < ch; ic++) {
      const float *x0 = c->x + (b * ch + ic) * in_size;
      for (int64_t u = 0; u < in[0] * in[1] * in[2]; u++) {
        int64_t at[3] = {u / (in[1] * in[2]), u / in[2] % in[1], u % in[2]};
        for (int64_t t = 0; t < taps; t++) {
          int64_t tap[3] = {t / (k[1] * k[2]), t / k[2] % k[1], t % k[2]}, pos = 0, inside = 1;
          for (int i = 0; i < 3; i++) {
            int64_t q = at[i] * st[i] + tap[i] * dil[i] - pad[i];
            inside &= q >= 0 && q < out[i];
            pos = pos * out[i] + q;
          }
          if (!inside) continue;
          for (int64_t o = 0; o < fg; o++) {
            int64_t oc = ic / cg * fg + o;
            acc[(b * f + oc) * out_size + pos] += (double)x0[u] * c->w[(ic * fg + o) * taps + t];
          }
        }
      }
    }
  for (int64_t e = 0; e < n * f * out_size; e++) c->y[e] = (float)acc[e];
  free(acc);
  return 1;
}

/* dims of a buffer of the call's rank; 0 when it has another */
static int dims_of(const o2m_rt_unranked *m, int rank, int64_t *dims) {
  if (m->rank != rank) return 0;
  memcpy(dims, m->desc + 3, sizeof(int64_t) * (size_t)rank);
  return 1;
}

/* c's dims from x, w and y, checked against each other and the params. */
static int shapes(rt_conv_nd_call *c, const o2m_rt_unranked *x, const o2m_rt_unranked *w, const o2m_rt_unranked *y) {
  const int64_t *p = c->p;
  c->rank = (int)x->rank;
  if (c->rank < 3 || c->rank > 5 || p[CN_SPATIAL] != c->rank - 2 || !dims_of(x, c->rank, c->x_dims) ||
      !dims_of(w, c->rank, c->w_dims) || !dims_of(y, c->rank, c->y_dims) || !o2m_rt_row_major(y))
    return 0;
  int64_t g = p[CN_GROUPS], *xd = c->x_dims, *wd = c->w_dims, *yd = c->y_dims;
  int transposed = p[CN_TRANSPOSED] != 0;
  if (g < 1 || xd[1] % g || yd[1] % g || xd[0] != yd[0] ||
      (transposed ? wd[0] != xd[1] || wd[1] != yd[1] / g : wd[0] != yd[1] || wd[1] != xd[1] / g))
    return 0;
  for (int i = 0; i < c->rank - 2; i++) {
    int64_t extent = (wd[2 + i] - 1) * p[CN_DILATION + i] + 1, stride = p[CN_STRIDE + i];
    int64_t pads = p[CN_PAD_BEGIN + i] + p[CN_PAD_END + i], span = xd[2 + i] + pads - extent;
    if (stride < 1 || p[CN_DILATION + i] < 1 || p[CN_PAD_BEGIN + i] < 0 || p[CN_PAD_END + i] < 0) return 0;
    if (transposed ? yd[2 + i] != (xd[2 + i] - 1) * stride + extent - pads : span < 0 || yd[2 + i] != span / stride + 1)
      return 0;
  }
  return 1;
}

/* y = Conv(x, w, b) as params say; buffers that disagree with each other
 * (the lowering never passes such) leave y unwritten. */
static void rt_conv_nd(o2m_rt_unranked *x, o2m_rt_unranked *w, o2m_rt_unranked *b, o2m_rt_unranked *y,
                       o2m_rt_unranked *params) {
  if (params->rank != 1 || params->desc[3] < CN_COUNT) return;
  const int64_t *p = (const int64_t *)(intptr_t)params->desc[1] + params->desc[2];
  rt_conv_nd_call c = {.p = p};
  if (!shapes(&c, x, w, y) || (p[CN_HAS_BIAS] && o2m_rt_count(b) != c.y_dims[1])) return;
  void *owned[3] = {0};
  c.x = o2m_rt_dense(x, 4, &owned[0]);
  c.w = o2m_rt_dense(w, 4, &owned[1]);
  c.bias = p[CN_HAS_BIAS] ? o2m_rt_dense(b, 4, &owned[2]) : NULL;
  c.y = (float *)(intptr_t)y->desc[1] + y->desc[2];
  if (c.x && c.w && (c.bias || !p[CN_HAS_BIAS]) && !rt_dnnl_conv_nd(&c)) {
    if (!p[CN_TRANSPOSED]) reference_conv_nd(&c);
    else reference_conv_transpose_nd(&c);
  }
  for (int i = 0; i < 3; i++) free(owned[i]);
}

o2m_rt_symbol rt_conv_nd_symbol(void) {
  return (o2m_rt_symbol){"_mlir_ciface_" O2M_DNNL_CONV_ND_CALL, (void *)(uintptr_t)rt_conv_nd};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the names the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_dnnl_conv_nd(o2m_rt_unranked *x, o2m_rt_unranked *w, o2m_rt_unranked *b, o2m_rt_unranked *y,
                                   o2m_rt_unranked *params) {
  rt_conv_nd(x, w, b, y, params);
}
#endif
