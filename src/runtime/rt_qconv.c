/* rt_qconv.c - 8-bit 2-D convolutions: ONNX's QLinearConv on the integer
 * units (rt_abi.h, O2M_QCONV_CALL), what the Linalg emitter writes for the
 * JIT's QLinearConv nodes (the shared layer's QDQ fusion makes them of
 * DequantizeLinear -> Conv -> QuantizeLinear; lower_quant.c).
 *
 * Owns: the call (x, w, w's scales, bias, y: unranked buffers, x and y NCHW
 * or channels last; params as rt_internal.h's QC_*), through oneDNN's int8 convolution where it is
 * (rt_dnnl_qconv: primitives and reordered weights kept per weights and
 * model), else plain loops with the same arithmetic: the int32 sum of (x -
 * x_zp) w (+ bias), scaled by x_s w_s / y_s in float, rounded half to even,
 * plus y_zp, saturated. Weight zero points are zero (the lowering passes
 * no other). ConvInteger (O2M_CONV_INTEGER_CALL) is the same call with
 * QC_Y_INT32: y the int32 sums, x's zero point read per call (dynamic
 * quantization computes it). NCHW calls run channels last through oneDNN
 * (x and y transposed around it).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

static float float_of(int64_t bits) {
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

/* The offset of element (n, c, h, w) of dims d [N, C, H, W] in either layout. */
static int64_t offset(const int64_t *d, int nhwc, int64_t n, int64_t c, int64_t h, int64_t w) {
  return nhwc ? ((n * d[2] + h) * d[3] + w) * d[1] + c : ((n * d[1] + c) * d[2] + h) * d[3] + w;
}

static int32_t x_at(const rt_qconv_call *c, int64_t i) {
  return c->p[QC_X_SIGNED] ? ((const int8_t *)c->x)[i] : ((const uint8_t *)c->x)[i];
}

static void reference_qconv(const rt_qconv_call *c) {
  const int64_t *p = c->p, *xd = c->x_dims, *wd = c->w_dims, *yd = c->y_dims;
  int64_t g = p[QC_GROUPS], cg = xd[1] / g, fg = yd[1] / g;
  float x_scale = float_of(p[QC_X_SCALE]), y_scale = float_of(p[QC_Y_SCALE]);
  int32_t lo = p[QC_Y_SIGNED] ? -128 : 0, hi = p[QC_Y_SIGNED] ? 127 : 255;
  int nhwc = p[QC_NHWC] != 0;
  for (int64_t n = 0; n < yd[0]; n++)
    for (int64_t o = 0; o < yd[1]; o++) {
      float scale = p[QC_Y_INT32] ? 0 : x_scale * c->w_scales[c->n_scales > 1 ? o : 0] / y_scale;
      int64_t grp = o / fg;
      for (int64_t r = 0; r < yd[2]; r++)
        for (int64_t q = 0; q < yd[3]; q++) {
          int32_t acc = c->bias ? c->bias[o] : 0, x_zp = p[QC_Y_INT32] ? c->x_zp : (int32_t)p[QC_X_ZP];
          for (int64_t k = 0; k < cg; k++)
            for (int64_t u = 0; u < wd[2]; u++) {
              int64_t hy = r * p[QC_STRIDE] - p[QC_PAD] + u * p[QC_DILATION];
              for (int64_t v = 0; hy >= 0 && hy < xd[2] && v < wd[3]; v++) {
                int64_t wx = q * p[QC_STRIDE + 1] - p[QC_PAD + 1] + v * p[QC_DILATION + 1];
                if (wx < 0 || wx >= xd[3]) continue;
                int32_t xv = x_at(c, offset(xd, nhwc, n, grp * cg + k, hy, wx)) - x_zp;
                acc += xv * c->w[((o * cg + k) * wd[2] + u) * wd[3] + v];
              }
            }
          int64_t at = offset(yd, nhwc, n, o, r, q);
          if (p[QC_Y_INT32]) {
            ((int32_t *)c->y)[at] = acc;
            continue;
          }
          float v = nearbyintf((float)acc * scale) + (float)p[QC_Y_ZP];
          int32_t out = v < (float)lo ? lo : v > (float)hi ? hi : (int32_t)v;
          if (p[QC_Y_SIGNED]) ((int8_t *)c->y)[at] = (int8_t)out;
          else ((uint8_t *)c->y)[at] = (uint8_t)out;
        }
    }
}

/* m's dims in NCHW order (channels_last: m is [N, H, W, C]). */
static int dims4(const o2m_rt_unranked *m, int channels_last, int64_t *dims) {
  if (m->rank != 4) return 0;
  const int64_t *d = m->desc + 3;
  for (int k = 0; k < 4; k++) dims[k] = channels_last ? d[(int[]){0, 3, 1, 2}[k]] : d[k];
  return 1;
}

/* [n, c, hw] as [n, hw, c] (channels last), bytes. */
static void bytes_to_last(const uint8_t *from, uint8_t *to, int64_t n, int64_t c, int64_t hw) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 0; k < c; k++)
      for (int64_t s = 0; s < hw; s++) to[(i * hw + s) * c + k] = from[(i * c + k) * hw + s];
}

/* [n, hw, c] as [n, c, hw], 1- or 4-byte elements. */
static void from_last(const void *from, void *to, int64_t n, int64_t c, int64_t hw, int wide) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 0; k < c; k++)
      for (int64_t s = 0; s < hw; s++) {
        int64_t planar = (i * c + k) * hw + s, last = (i * hw + s) * c + k;
        if (wide) ((int32_t *)to)[planar] = ((const int32_t *)from)[last];
        else ((uint8_t *)to)[planar] = ((const uint8_t *)from)[last];
      }
}

/* An NCHW call through oneDNN's channels-last convolution: x and y
 * transposed around it; 0 when oneDNN cannot. */
static int via_channels_last(const rt_qconv_call *c) {
  if (!o2m_rt_dnnl_available()) return 0;
  const int64_t *xd = c->x_dims, *yd = c->y_dims;
  size_t y_esize = c->p[QC_Y_INT32] ? 4 : 1;
  int64_t x_count = xd[0] * xd[1] * xd[2] * xd[3], y_count = yd[0] * yd[1] * yd[2] * yd[3];
  char *x_last = malloc((size_t)x_count), *y_last = malloc((size_t)y_count * y_esize);
  int64_t p[QC_COUNT];
  memcpy(p, c->p, sizeof(p));
  p[QC_NHWC] = 1;
  rt_qconv_call last = *c;
  last.p = p, last.x = x_last, last.y = y_last;
  int done = x_last && y_last;
  if (done) bytes_to_last(c->x, (uint8_t *)x_last, xd[0], xd[1], xd[2] * xd[3]);
  done = done && rt_dnnl_qconv(&last);
  if (done) from_last(y_last, c->y, yd[0], yd[1], yd[2] * yd[3], y_esize == 4);
  free(x_last);
  free(y_last);
  return done;
}

/* The call: oneDNN where it takes it, else the loops. */
static void convolve(const rt_qconv_call *c) {
  if (c->p[QC_NHWC] ? rt_dnnl_qconv(c) : via_channels_last(c)) return;
  reference_qconv(c);
}

/* c's dims from x, w and y, checked against each other and the params. */
static int shapes(rt_qconv_call *c, const o2m_rt_unranked *x, const o2m_rt_unranked *w, const o2m_rt_unranked *y) {
  const int64_t *p = c->p;
  int64_t *xd = c->x_dims, *wd = c->w_dims, *yd = c->y_dims;
  if (!dims4(x, p[QC_NHWC] != 0, xd) || !dims4(w, 0, wd) || !dims4(y, p[QC_NHWC] != 0, yd) || !o2m_rt_row_major(y))
    return 0;
  int64_t g = p[QC_GROUPS];
  return g >= 1 && !(xd[1] % g) && !(yd[1] % g) && wd[0] == yd[1] && wd[1] == xd[1] / g && xd[0] == yd[0];
}

/* y = QLinearConv(x, w) as params say; buffers that disagree with each
 * other (the lowering never passes such) leave y unwritten. */
static void rt_qconv(o2m_rt_unranked *x, o2m_rt_unranked *w, o2m_rt_unranked *w_scales, o2m_rt_unranked *bias,
                     o2m_rt_unranked *y, o2m_rt_unranked *params) {
  if (params->rank != 1 || params->desc[3] < QC_COUNT) return;
  const int64_t *p = (const int64_t *)(intptr_t)params->desc[1] + params->desc[2];
  rt_qconv_call c = {.p = p};
  int64_t n_scales = o2m_rt_count(w_scales);
  if (p[QC_Y_INT32] || !shapes(&c, x, w, y) || (n_scales != 1 && n_scales != c.y_dims[1]) ||
      (p[QC_HAS_BIAS] && o2m_rt_count(bias) != c.y_dims[1]))
    return;
  void *owned[4] = {0};
  c.x = o2m_rt_dense(x, 1, &owned[0]);
  c.w = o2m_rt_dense(w, 1, &owned[1]);
  c.w_scales = o2m_rt_dense(w_scales, 4, &owned[2]);
  c.n_scales = n_scales;
  c.bias = p[QC_HAS_BIAS] ? o2m_rt_dense(bias, 4, &owned[3]) : NULL;
  c.y = (int8_t *)(intptr_t)y->desc[1] + y->desc[2];
  if (c.x && c.w && c.w_scales && (c.bias || !p[QC_HAS_BIAS])) convolve(&c);
  for (int i = 0; i < 4; i++) free(owned[i]);
}

/* y = ConvInteger(x, w, x_zp) (int32 sums), params with QC_Y_INT32. */
static void rt_conv_integer(o2m_rt_unranked *x, o2m_rt_unranked *w, o2m_rt_unranked *x_zp, o2m_rt_unranked *y,
                            o2m_rt_unranked *params) {
  if (params->rank != 1 || params->desc[3] < QC_COUNT) return;
  const int64_t *p = (const int64_t *)(intptr_t)params->desc[1] + params->desc[2];
  rt_qconv_call c = {.p = p};
  if (!p[QC_Y_INT32] || p[QC_HAS_BIAS] || !shapes(&c, x, w, y) || (p[QC_X_ZP] && o2m_rt_count(x_zp) != 1)) return;
  if (p[QC_X_ZP]) {
    const uint8_t *z = (const uint8_t *)(intptr_t)x_zp->desc[1] + x_zp->desc[2];
    c.x_zp = p[QC_X_SIGNED] ? (int8_t)*z : *z;
  }
  void *owned[2] = {0};
  c.x = o2m_rt_dense(x, 1, &owned[0]);
  c.w = o2m_rt_dense(w, 1, &owned[1]);
  c.y = (int32_t *)(intptr_t)y->desc[1] + y->desc[2];
  if (c.x && c.w) convolve(&c);
  for (int i = 0; i < 2; i++) free(owned[i]);
}

o2m_rt_symbol rt_qconv_symbol(void) {
  return (o2m_rt_symbol){"_mlir_ciface_" O2M_QCONV_CALL, (void *)(uintptr_t)rt_qconv};
}

o2m_rt_symbol rt_conv_integer_symbol(void) {
  return (o2m_rt_symbol){"_mlir_ciface_" O2M_CONV_INTEGER_CALL, (void *)(uintptr_t)rt_conv_integer};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the names the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_qconv2d(o2m_rt_unranked *x, o2m_rt_unranked *w, o2m_rt_unranked *w_scales, o2m_rt_unranked *bias,
                              o2m_rt_unranked *y, o2m_rt_unranked *params) {
  rt_qconv(x, w, w_scales, bias, y, params);
}

void _mlir_ciface_o2m_conv_integer2d(o2m_rt_unranked *x, o2m_rt_unranked *w, o2m_rt_unranked *x_zp,
                                     o2m_rt_unranked *y, o2m_rt_unranked *params) {
  rt_conv_integer(x, w, x_zp, y, params);
}
#endif
