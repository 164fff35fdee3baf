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
 * no other).
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
      float scale = x_scale * c->w_scales[c->n_scales > 1 ? o : 0] / y_scale;
      int64_t grp = o / fg;
      for (int64_t r = 0; r < yd[2]; r++)
        for (int64_t q = 0; q < yd[3]; q++) {
          int32_t acc = c->bias ? c->bias[o] : 0;
          for (int64_t k = 0; k < cg; k++)
            for (int64_t u = 0; u < wd[2]; u++) {
              int64_t hy = r * p[QC_STRIDE] - p[QC_PAD] + u * p[QC_DILATION];
              for (int64_t v = 0; hy >= 0 && hy < xd[2] && v < wd[3]; v++) {
                int64_t wx = q * p[QC_STRIDE + 1] - p[QC_PAD + 1] + v * p[QC_DILATION + 1];
                if (wx < 0 || wx >= xd[3]) continue;
                int32_t xv = x_at(c, offset(xd, nhwc, n, grp * cg + k, hy, wx)) - (int32_t)p[QC_X_ZP];
                acc += xv * c->w[((o * cg + k) * wd[2] + u) * wd[3] + v];
              }
            }
          float v = nearbyintf((float)acc * scale) + (float)p[QC_Y_ZP];
          int32_t out = v < (float)lo ? lo : v > (float)hi ? hi : (int32_t)v;
          int64_t at = offset(yd, nhwc, n, o, r, q);
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

/* y = QLinearConv(x, w) as params say; buffers that disagree with each
 * other (the lowering never passes such) leave y unwritten. */
static void rt_qconv(o2m_rt_unranked *x, o2m_rt_unranked *w, o2m_rt_unranked *w_scales, o2m_rt_unranked *bias,
                     o2m_rt_unranked *y, o2m_rt_unranked *params) {
  if (params->rank != 1 || params->desc[3] < QC_COUNT) return;
  const int64_t *p = (const int64_t *)(intptr_t)params->desc[1] + params->desc[2];
  rt_qconv_call c = {.p = p};
  int64_t *xd = c.x_dims, *wd = c.w_dims, *yd = c.y_dims;
  if (!dims4(x, p[QC_NHWC] != 0, xd) || !dims4(w, 0, wd) || !dims4(y, p[QC_NHWC] != 0, yd) || !o2m_rt_row_major(y))
    return;
  int64_t g = p[QC_GROUPS], n_scales = o2m_rt_count(w_scales);
  if (g < 1 || xd[1] % g || yd[1] % g || wd[0] != yd[1] || wd[1] != xd[1] / g || xd[0] != yd[0] ||
      (n_scales != 1 && n_scales != yd[1]) || (p[QC_HAS_BIAS] && o2m_rt_count(bias) != yd[1]))
    return;
  void *owned[4] = {0};
  c.x = o2m_rt_dense(x, 1, &owned[0]);
  c.w = o2m_rt_dense(w, 1, &owned[1]);
  c.w_scales = o2m_rt_dense(w_scales, 4, &owned[2]);
  c.n_scales = n_scales;
  c.bias = p[QC_HAS_BIAS] ? o2m_rt_dense(bias, 4, &owned[3]) : NULL;
  c.y = (int8_t *)(intptr_t)y->desc[1] + y->desc[2];
  if (c.x && c.w && c.w_scales && (c.bias || !p[QC_HAS_BIAS]) && !rt_dnnl_qconv(&c)) reference_qconv(&c);
  for (int i = 0; i < 4; i++) free(owned[i]);
}

o2m_rt_symbol rt_qconv_symbol(void) {
  return (o2m_rt_symbol){"_mlir_ciface_" O2M_QCONV_CALL, (void *)(uintptr_t)rt_qconv};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_qconv2d(o2m_rt_unranked *x, o2m_rt_unranked *w, o2m_rt_unranked *w_scales, o2m_rt_unranked *bias,
                              o2m_rt_unranked *y, o2m_rt_unranked *params) {
  rt_qconv(x, w, w_scales, bias, y, params);
}
#endif
