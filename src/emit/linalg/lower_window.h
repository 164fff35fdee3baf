/* lower_window.h - sliding-window helpers of the Linalg emitter's nn
 * family (lower_conv.c, lower_pool.c), implemented in lower_window.c:
 * the window geometry of a Conv/ConvTranspose/pool node (kernel, strides,
 * dilations, pads, auto_pad, ceil_mode -> per spatial axis the pads to
 * apply and the output size, static or computed at run time), padding with
 * tensor.pad, affine maps whose results are sums of scaled dims (the
 * `o * stride + k * dilation` of a window), and linalg.index in a body.
 *
 * Rules: as in lower.h. Window geometry follows ONNX's reference
 * implementation (onnx/reference/ops/op_pool_common.py, op_conv.py).
 */
#ifndef O2M_LOWER_WINDOW_H
#define O2M_LOWER_WINDOW_H

#include "emit/linalg/lower_shape.h"

enum { LW_MAX_SPATIAL = 8 };

/* The geometry of a window over the spatial axes [2, 2 + n) of an input.
 * Pads are in input elements; `extra` is the end padding that ceil_mode
 * adds beyond pad_end so that the last window fits (never counted as
 * padding by count_include_pad). */
typedef struct lw_window {
  int n;
  int64_t kernel[LW_MAX_SPATIAL], stride[LW_MAX_SPATIAL], dilation[LW_MAX_SPATIAL];
  lw_ix in[LW_MAX_SPATIAL], out[LW_MAX_SPATIAL];
  lw_ix pad_begin[LW_MAX_SPATIAL], pad_end[LW_MAX_SPATIAL], extra[LW_MAX_SPATIAL];
} lw_window;

/* Reads the window attributes of cx->node for input x (N, C, D1..Dn):
 * kernel_shape (else `kernel`, the weight's spatial dims: n entries or
 * NULL), strides, dilations, pads, auto_pad and ceil_mode, and computes the
 * pads and output sizes. Fails (lw_error) when the window does not fit. */
o2m_status lw_window_read(lw_ctx *cx, MlirValue x, const int64_t *kernel, lw_window *w);

/* The same for ConvTranspose (output_padding, output_shape): `out` is the
 * output size and pad_begin how many leading elements of the full
 * transposed convolution (size stride * (in - 1) + output_padding +
 * extent) are cropped (negative: zeros prepended); pad_end and extra are
 * 0. As ONNX's reference: explicit pads (0 without them) unless auto_pad
 * is SAME_*, whose total padding comes from output_shape (default
 * in * stride) and is split with floor division. */
o2m_status lw_window_read_transposed(lw_ctx *cx, MlirValue x, const int64_t *kernel,
                                     lw_window *w);

/* The static size of dim k of a ranked tensor value, -1 when dynamic. */
static inline int64_t lw_static_dim(MlirValue v, int k) {
  MlirType t = mlirValueGetType(v);
  return mlirShapedTypeIsDynamicDim(t, k) ? -1 : mlirShapedTypeGetDimSize(t, k);
}

/* The extent of the dilated kernel along axis i: (k - 1) * d + 1. */
int64_t lw_window_extent(const lw_window *w, int i);

/* x padded on its spatial axes by pad_begin and pad_end + extra with the
 * scalar `value` (x itself when there is no padding). */
MlirValue lw_window_pad(lw_ctx *cx, MlirValue x, const lw_window *w, MlirValue value);

/* tensor.pad of x by low[k]/high[k] elements on every dim k, filled with
 * the scalar `value`. */
MlirValue lw_pad(lw_ctx *cx, MlirValue x, const lw_ix *low, const lw_ix *high, MlirValue value);

/* tensor.insert_slice of all of src into dest at `offsets` (dest's rank
 * entries), with `sizes` (NULL: src's dims; src may drop unit dims of
 * them) and `strides` (NULL: 1). */
MlirValue lw_insert_slice_at(lw_ctx *cx, MlirValue src, MlirValue dest, const lw_ix *offsets,
                             const lw_ix *sizes, const lw_ix *strides);

/* An affine expression sum(coef[t] * d<dim[t]>) + c; dim[t] < 0 ends the
 * terms early. */
enum { LW_AFF_TERMS = 3 };
typedef struct lw_aff {
  int dim[LW_AFF_TERMS];
  int64_t coef[LW_AFF_TERMS];
  int64_t c;
} lw_aff;

static inline lw_aff lw_aff_dim(int d) { return (lw_aff){{d, -1, -1}, {1, 0, 0}, 0}; }
static inline lw_aff lw_aff_const(int64_t c) { return (lw_aff){{-1, -1, -1}, {0, 0, 0}, c}; }
static inline lw_aff lw_aff_2(int d0, int64_t c0, int d1, int64_t c1, int64_t c) {
  return (lw_aff){{d0, d1, -1}, {c0, c1, 0}, c};
}

/* An affine map of n_dims dims with the given result expressions. */
MlirAttribute lw_aff_map(lw_ctx *cx, int n_dims, int n_results, const lw_aff *results);

/* linalg.index of loop `dim`, created in cx->block (inside a body). */
MlirValue lw_loop_index(lw_ctx *cx, int dim);

/* Converts every element of x to ONNX dtype `to` (from `from`), Cast
 * semantics; x itself when the dtypes are equal. */
o2m_status lw_convert(lw_ctx *cx, MlirValue x, o2m_dtype from, o2m_dtype to, MlirValue *out);

/* The dtype that products and sums of `dtype` accumulate in: float32 for
 * the 16-bit floats, the dtype itself otherwise. */
o2m_dtype lw_accumulator_dtype(o2m_dtype dtype);

#endif
