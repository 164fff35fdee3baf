/* resize_sampling.c - Resize's sampling along one axis (resize_sampling.h). */
#include <math.h>

#include "transform/resize_sampling.h"

const char *const rs_modes[RS_MODE_COUNT] = {"nearest", "linear", "cubic"};
const char *const rs_coords[RS_COORD_COUNT] = {"half_pixel",         "half_pixel_symmetric",
                                               "pytorch_half_pixel", "align_corners",
                                               "asymmetric",         "tf_crop_and_resize"};
const char *const rs_rounds[RS_ROUND_COUNT] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                               "ceil"};

/* The tap coefficients for `ratio` in (0, 1]; their count (-1: too many). */
int64_t rs_coeffs(const rs_attrs *at, double ratio, double scale, double *c) {
  double A = at->a;
  if (at->mode == RS_NEAREST) {
    int ceil_side = ratio == floor(ratio)            ? 1
                    : at->nearest == RS_PREFER_FLOOR ? ratio > 0.5
                    : at->nearest == RS_PREFER_CEIL  ? ratio >= 0.5
                                                     : at->nearest == RS_CEIL;
    c[0] = !ceil_side, c[1] = ceil_side;
    return 2;
  }
  if (!at->antialias) {
    if (at->mode == RS_LINEAR) {
      c[0] = 1 - ratio, c[1] = ratio;
      return 2;
    }
    double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    c[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
    c[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
    c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
    c[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
    return 4;
  }
  double s = scale < 1.0 ? scale : 1.0, sum = 0;
  int64_t start = (int64_t)floor((at->mode == RS_LINEAR ? -1.0 : -2.0) / s) + 1, n = 2 - 2 * start;
  if (n < 1 || n > RS_MAX_TAPS) return -1;
  for (int64_t i = 0; i < n; i++) {
    double x = fabs(((double)(start + i) - ratio) * s);
    if (at->mode == RS_LINEAR) {
      c[i] = 1 - x < 0 ? 0 : 1 - x > 1 ? 1 : 1 - x;
    } else {
      double x2 = x * x, x3 = x * x2;
      c[i] = x <= 1  ? (A + 2) * x3 - (A + 3) * x2 + 1
             : x < 2 ? A * x3 - 5 * A * x2 + 8 * A * x - 4 * A
                     : 0.0;
    }
    sum += c[i];
  }
  for (int64_t i = 0; i < n; i++) c[i] /= sum;
  return n;
}

/* The source coordinate of output position y; *extrap when
 * tf_crop_and_resize falls outside the input. */
double rs_source(const rs_attrs *at, const rs_geometry *ax, double y, int *extrap) {
  double in = (double)ax->in, ow = ax->scale * in, x;
  *extrap = 0;
  switch (at->coord) {
  case RS_ALIGN_CORNERS: return ow == 1 ? 0.0 : y * (in - 1) / (ow - 1);
  case RS_ASYMMETRIC: return y / ax->scale;
  case RS_TF_CROP_AND_RESIZE: {
    double span =
        ax->roi_f32 ? (double)((float)ax->roi[1] - (float)ax->roi[0]) : ax->roi[1] - ax->roi[0];
    x = ow == 1 ? span * (in - 1) / 2 : y * span * (in - 1) / (ow - 1);
    x += ax->roi[0] * (in - 1);
    *extrap = x < 0 || x > in - 1;
    return x;
  }
  case RS_PYTORCH_HALF_PIXEL: return ow == 1 ? -0.5 : (y + 0.5) / ax->scale - 0.5;
  case RS_HALF_PIXEL_SYMMETRIC: {
    double adjustment = (double)ax->out / ow, center = in / 2, offset = center * (1 - adjustment);
    return offset + (y + 0.5) / ax->scale - 0.5;
  }
  case RS_HALF_PIXEL:
  default: return (y + 0.5) / ax->scale - 0.5;
  }
}


double rs_taps(const rs_attrs *at, double x, int64_t n, int64_t in, int64_t *idx, double *c) {
  int64_t pw = (n + 1) / 2;
  double xp = x + (double)pw, pp = floor(xp), frac = xp - pp;
  int64_t off = n % 2 == 0 ? (frac == 0 ? -(n / 2) : -(n / 2) + 1)
                           : (frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1);
  int64_t start = (int64_t)pp + off;
  double sum = 0;
  for (int64_t j = 0; j < n; j++) {
    idx[j] = start + j - pw;
    if (at->exclude && (idx[j] < 0 || idx[j] >= in)) c[j] = 0;
    sum += c[j];
    idx[j] = idx[j] < 0 ? 0 : idx[j] >= in ? in - 1 : idx[j];
  }
  return sum;
}
