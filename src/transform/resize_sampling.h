/* resize_sampling.h - the sampling of ONNX's Resize along one axis, as
 * ONNX's reference computes it (onnx/reference/ops/op_resize.py), in
 * double precision: the tap coefficients of a mode (nearest, linear,
 * cubic, antialiased) and the source coordinate of an output position
 * under a coordinate_transformation_mode. Shared by the Resize
 * decomposition (decompose_resize.c) and the Linalg lowering
 * (src/emit/linalg/lower_resize.c). */
#ifndef O2M_RESIZE_SAMPLING_H
#define O2M_RESIZE_SAMPLING_H

#include <stdint.h>

enum { RS_MAX_TAPS = 1024 };

typedef enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC, RS_MODE_COUNT } rs_mode;
typedef enum rs_coord {
  RS_HALF_PIXEL,
  RS_HALF_PIXEL_SYMMETRIC,
  RS_PYTORCH_HALF_PIXEL,
  RS_ALIGN_CORNERS,
  RS_ASYMMETRIC,
  RS_TF_CROP_AND_RESIZE,
  RS_COORD_COUNT
} rs_coord;
typedef enum rs_round { RS_PREFER_FLOOR, RS_PREFER_CEIL, RS_FLOOR, RS_CEIL, RS_ROUND_COUNT } rs_round;
/* The attribute spellings, in enum order. */
extern const char *const rs_modes[RS_MODE_COUNT];
extern const char *const rs_coords[RS_COORD_COUNT];
extern const char *const rs_rounds[RS_ROUND_COUNT];

typedef struct rs_attrs {
  rs_mode mode;
  rs_coord coord;
  rs_round nearest;
  int antialias, exclude;
  double a; /* cubic_coeff_a */
} rs_attrs;

/* One axis: whether it is resized, its sizes, scale and roi. */
typedef struct rs_geometry {
  int resized;
  int64_t in, out;
  double scale, roi[2];
  int roi_f32; /* roi arithmetic in float32, as numpy does for a float32 roi */
} rs_geometry;

/* The tap coefficients for `ratio` in (0, 1]; their count (-1: too many). */
int64_t rs_coeffs(const rs_attrs *at, double ratio, double scale, double *c);
/* The input positions of the n taps around source coordinate x, clamped
 * into [0, in) (idx), with the coefficients of taps outside the input
 * zeroed when exclude_outside; returns the sum of the coefficients. */
double rs_taps(const rs_attrs *at, double x, int64_t n, int64_t in, int64_t *idx, double *c);
/* The source coordinate of output position y; *extrap when
 * tf_crop_and_resize falls outside the input. */
double rs_source(const rs_attrs *at, const rs_geometry *ax, double y, int *extrap);

#endif
