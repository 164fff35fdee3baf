/* decompose_mel.c - MelWeightMatrix as a constant: its five inputs are
 * parameters (`run` specialises on their values, src/core/specialize.c),
 * so the matrix [dft_length / 2 + 1, num_mel_bins] of triangular filters
 * is computed here, as ONNX's reference computes it: num_mel_bins + 2 edges
 * spaced evenly in mels between the two edge frequencies (the step being
 * the range over num_mel_bins + 2), mapped back to hertz and to DFT bins
 * (floor((dft_length + 1) * f / sample_rate)), each filter rising from its
 * left edge to its center and falling to its right edge. Without known
 * inputs the op is refused.
 */
#include <math.h>
#include <stdlib.h>

#include "infer/infer.h"
#include "transform/decompose_kit.h"

static int known(o2m_rewriter *rw, int i, double *v) {
  const o2m_value *x = o2m_rw_in(rw, i);
  if (!x || !x->known || x->known->count != 1) return 0;
  *v = o2m_tensor_get_float(x->known, 0);
  return 1;
}

o2m_status o2m_decompose_mel_weight_matrix(o2m_rewriter *rw) {
  double bins_in, dft_in, rate, lo_hz, hi_hz;
  if (!known(rw, 0, &bins_in) || !known(rw, 1, &dft_in) || !known(rw, 2, &rate) || !known(rw, 3, &lo_hz) ||
      !known(rw, 4, &hi_hz))
    return o2m_rw_unsupported(rw, "its inputs are not known at import");
  int64_t bins = (int64_t)bins_in, dft = (int64_t)dft_in;
  if (bins < 1 || dft < 1 || rate <= 0 || bins > (1 << 20) || dft > (1 << 24))
    return o2m_rw_error(rw, "num_mel_bins %lld, dft_length %lld and sample_rate %g must be positive", (long long)bins,
                        (long long)dft, rate);
  int64_t rows = dft / 2 + 1;
  /* the edge frequencies in float, as the inputs' float arithmetic gives */
  float lo_mel = (float)(2595.0 * log10(1.0 + (float)lo_hz / 700.0f));
  float hi_mel = (float)(2595.0 * log10(1.0 + (float)hi_hz / 700.0f));
  double step = ((double)hi_mel - (double)lo_mel) / (double)(bins + 2);
  int64_t *edge = malloc((size_t)(bins + 2) * sizeof(int64_t));
  double *m = calloc((size_t)(rows * bins), sizeof(double));
  if (!edge || !m) {
    free(edge), free(m);
    return o2m_rw_error(rw, "out of memory");
  }
  for (int64_t k = 0; k < bins + 2; k++) {
    double hz = 700.0 * (pow(10.0, ((double)k * step + lo_mel) / 2595.0) - 1.0);
    edge[k] = (int64_t)floor((double)(dft + 1) * hz / rate);
  }
  o2m_status st = O2M_OK;
  for (int64_t i = 0; i < bins && !st; i++) {
    int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (left < 0 || right >= rows + 1 || center >= rows) {
      st = o2m_rw_error(rw, "the filters reach past the %lld DFT bins (edge frequencies above sample_rate / 2?)",
                        (long long)rows);
      break;
    }
    if (center == left) m[center * bins + i] = 1.0;
    for (int64_t j = left; center > left && j <= center; j++) m[j * bins + i] = (double)(j - left) / (double)(center - left);
    for (int64_t j = center; right > center && j < right; j++) m[j * bins + i] = (double)(right - j) / (double)(right - center);
  }
  o2m_dtype dtype = (o2m_dtype)o2m_rw_attr_i(rw, "output_datatype", O2M_DT_FLOAT);
  const int64_t dims[2] = {rows, bins};
  if (!st) st = xk_bind(rw, 0, xk_const_nd(rw, dtype, 2, dims, m));
  free(edge);
  free(m);
  return st;
}
