/* infer_signal.c - type inference for the signal ops: the Hann, Hamming
 * and Blackman windows, DFT (opset 17: `axis` attribute; opset 20: `axis`
 * input), STFT and MelWeightMatrix. Complex values are a trailing dim of 2
 * (real, imaginary); real ones a trailing dim of 1. */
#include "infer/infer.h"

/* A scalar input (a length, an axis): its value when known, which must
 * be >= `min`; *known is 0 when it is not known. */
static o2m_status scalar_input(o2m_infer_ctx *ctx, int i, const char *what,
                               int64_t min, int *known, int64_t *value) {
  const o2m_type *t = o2m_in_type(ctx, i);
  if (t->kind == O2M_TYPE_TENSOR && t->rank > 1)
    return o2m_infer_error(ctx, "%s must be a scalar, not of rank %d", what, t->rank);
  *known = o2m_in_known_scalar(ctx, i, value);
  if (*known && *value < min)
    return o2m_infer_error(ctx, "%s must be at least %lld, got %lld", what,
                           (long long)min, (long long)*value);
  return O2M_OK;
}

/* HannWindow, HammingWindow, BlackmanWindow: [size] of output_datatype. */
o2m_status o2m_infer_window(o2m_infer_ctx *ctx) {
  o2m_dtype dtype = O2M_DT_UNDEFINED;
  int known = 0;
  int64_t size = 0;
  o2m_status s = o2m_attr_dtype(ctx, "output_datatype", O2M_DT_FLOAT, &dtype);
  if (!s) s = scalar_input(ctx, 0, "size", 0, &known, &size);
  if (s) return s;
  o2m_type *out = o2m_out_tensor(ctx, 0, dtype, 1);
  if (known && out->rank == 1) out->dims[0] = o2m_dim_known(size);
  return O2M_OK;
}

/* MelWeightMatrix: [floor(dft_length / 2) + 1, num_mel_bins]. */
o2m_status o2m_infer_mel(o2m_infer_ctx *ctx) {
  o2m_dtype dtype = O2M_DT_UNDEFINED;
  int bins_known = 0, length_known = 0;
  int64_t bins = 0, length = 0;
  o2m_status s = o2m_attr_dtype(ctx, "output_datatype", O2M_DT_FLOAT, &dtype);
  if (!s) s = scalar_input(ctx, 0, "num_mel_bins", 0, &bins_known, &bins);
  if (!s) s = scalar_input(ctx, 1, "dft_length", 0, &length_known, &length);
  if (s) return s;
  o2m_type *out = o2m_out_tensor(ctx, 0, dtype, 2);
  if (out->rank != 2) return O2M_OK;
  if (length_known) out->dims[0] = o2m_dim_known(length / 2 + 1);
  if (bins_known) out->dims[1] = o2m_dim_known(bins);
  return O2M_OK;
}

/* DFT's signal axis: *known is 0 when an axis input is not known. */
static o2m_status dft_axis(o2m_infer_ctx *ctx, int rank, int *known,
                           int64_t *axis) {
  *known = 1;
  if (ctx->op_version < 20) {
    *axis = o2m_attr_int(ctx, "axis", 1);
  } else if (!o2m_in_present(ctx, 2)) {
    *axis = -2;
  } else {
    int64_t value;
    o2m_status s = scalar_input(ctx, 2, "axis", INT64_MIN, known, &value);
    if (s || !*known) return s;
    *axis = value;
  }
  if (*axis < -rank || *axis == -1 || *axis >= rank - 1)
    return o2m_infer_error(ctx, "axis %lld is not a signal axis of a rank-%d input "
                           "(whose last dim holds real and imaginary parts)",
                           (long long)*axis, rank);
  if (*axis < 0) *axis += rank;
  return O2M_OK;
}

/* DFT: the input's shape with the signal axis resized (dft_length; a
 * one-sided forward transform keeps n / 2 + 1 bins, a one-sided inverse
 * rebuilds 2 * (n - 1) samples by default) and a last dim of 2, or 1 for
 * the real result of a one-sided inverse. */
o2m_status o2m_infer_dft(o2m_infer_ctx *ctx) {
  if (!o2m_in_present(ctx, 0)) return o2m_infer_error(ctx, "input 0 is missing");
  int onesided = o2m_attr_int(ctx, "onesided", 0) != 0;
  int inverse = o2m_attr_int(ctx, "inverse", 0) != 0;
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  if (!in) {
    o2m_out_tensor(ctx, 0, o2m_in_type(ctx, 0)->elem, -1);
    return O2M_OK;
  }
  if (in->rank < 2)
    return o2m_infer_error(ctx, "the input must have rank >= 2, not %d", in->rank);
  int64_t last = in->dims[in->rank - 1].size, want_last = inverse ? 2 : 1;
  if (onesided && last >= 0 && last != want_last)
    return o2m_infer_error(ctx, "a one-sided %s DFT needs a last dim of %lld, not %lld",
                           inverse ? "inverse" : "forward", (long long)want_last,
                           (long long)last);
  int axis_known = 0, length_known = 0;
  int64_t axis = 0, length = 0;
  o2m_status s = dft_axis(ctx, in->rank, &axis_known, &axis);
  if (!s) s = scalar_input(ctx, 1, "dft_length", 1, &length_known, &length);
  if (s) return s;

  o2m_type *out = o2m_out_shaped_like(ctx, 0, in->elem, in);
  if (out->rank != in->rank) return O2M_OK;
  out->dims[in->rank - 1] = o2m_dim_known(onesided && inverse ? 1 : 2);
  int resized = onesided || o2m_in_present(ctx, 1);
  if (!axis_known) {
    for (int k = 0; resized && k < in->rank - 1; k++) out->dims[k] = (o2m_dim){-1, NULL};
    return O2M_OK;
  }
  o2m_dim *d = &out->dims[axis];
  int64_t n = in->dims[axis].size;
  if (length_known) *d = o2m_dim_known(onesided && !inverse ? length / 2 + 1 : length);
  else if (o2m_in_present(ctx, 1)) *d = (o2m_dim){-1, NULL};
  else if (onesided && n >= 1) *d = o2m_dim_known(inverse ? 2 * (n - 1) : n / 2 + 1);
  else if (onesided) *d = (o2m_dim){-1, NULL};
  return O2M_OK;
}

/* STFT: [batch, frames, bins, 2] from a [batch, signal_length, 1 or 2]
 * signal; the frame length comes from frame_length or else the window's
 * length (the whole signal when neither is given). */
o2m_status o2m_infer_stft(o2m_infer_ctx *ctx) {
  if (!o2m_in_present(ctx, 0) || !o2m_in_present(ctx, 1))
    return o2m_infer_error(ctx, "the signal and frame_step inputs are required");
  int onesided = o2m_attr_int(ctx, "onesided", 1) != 0;
  int step_known = 0, length_known = 0;
  int64_t step = 0, length = 0;
  o2m_status s = scalar_input(ctx, 1, "frame_step", 1, &step_known, &step);
  if (!s) s = scalar_input(ctx, 3, "frame_length", 1, &length_known, &length);
  if (s) return s;
  const o2m_type *signal = o2m_in_ranked(ctx, 0), *window = o2m_in_ranked(ctx, 2);
  if (window && window->rank != 1)
    return o2m_infer_error(ctx, "the window must have rank 1, not %d", window->rank);
  if (signal && signal->rank != 3)
    return o2m_infer_error(ctx, "the signal must have rank 3, not %d", signal->rank);
  if (window && window->dims[0].size >= 0) {
    if (length_known && length != window->dims[0].size)
      return o2m_infer_error(ctx, "frame_length %lld differs from the window's length %lld",
                             (long long)length, (long long)window->dims[0].size);
    length_known = 1;
    length = window->dims[0].size;
  }
  int64_t samples = signal ? signal->dims[1].size : -1;
  if (!length_known && !window && !o2m_in_present(ctx, 3) && samples >= 0) {
    length_known = 1;
    length = samples;
  }
  if (length_known && samples >= 0 && length > samples)
    return o2m_infer_error(ctx, "frame length %lld exceeds the signal length %lld",
                           (long long)length, (long long)samples);

  o2m_type *out = o2m_out_tensor(ctx, 0, o2m_in_type(ctx, 0)->elem, 4);
  if (out->rank != 4) return O2M_OK;
  if (signal) out->dims[0] = signal->dims[0];
  if (length_known && step_known && samples >= 0)
    out->dims[1] = o2m_dim_known((samples - length) / step + 1);
  if (length_known) out->dims[2] = o2m_dim_known(onesided ? length / 2 + 1 : length);
  out->dims[3] = o2m_dim_known(2);
  return O2M_OK;
}
