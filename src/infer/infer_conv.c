/* infer_conv.c - type and shape inference for the sliding-window ops of the
 * nn family: Conv, ConvInteger, QLinearConv, DeformConv, ConvTranspose,
 * AveragePool/MaxPool/LpPool (with MaxPool's Indices), the global pools,
 * MaxUnpool, MaxRoiPool, Col2Im and CausalConvWithState.
 *
 * Owns: the window arithmetic (kernel, strides, dilations, pads, auto_pad,
 * ceil_mode) shared by these ops. Must not print, allocate outside the
 * model arena, or fail on unknown or unranked inputs.
 */
#include <stdint.h>
#include <string.h>

#include "infer/infer.h"
#include "infer/infer_data.h"

/* ---- small helpers ----------------------------------------------------- */

static int is_ranked(const o2m_type *t) {
  return t->kind == O2M_TYPE_TENSOR && t->rank >= 0;
}

/* Output i as a tensor of `dtype` whose shape is not known; left untouched
 * when the dtype is not known either. */
static void out_unranked(o2m_infer_ctx *ctx, int i, o2m_dtype dtype) {
  if (dtype != O2M_DT_UNDEFINED) o2m_out_tensor(ctx, i, dtype, -1);
}

/* Output i as a tensor of `rank` dims, each a fresh symbol until set. */
static o2m_type *out_shaped(o2m_infer_ctx *ctx, int i, o2m_dtype dtype,
                            int rank) {
  o2m_type *t = o2m_out_tensor(ctx, i, dtype, rank);
  for (int k = 0; k < t->rank; k++) t->dims[k] = o2m_dim_fresh(ctx);
  return t;
}

/* The dim of a ranked input at `axis`, or a fresh symbol. */
static o2m_dim dim_or_fresh(o2m_infer_ctx *ctx, const o2m_type *t, int axis) {
  return is_ranked(t) && axis < t->rank ? t->dims[axis] : o2m_dim_fresh(ctx);
}

/* Of two dims that must be equal, the one that says more. */
static o2m_dim dim_either(o2m_dim a, o2m_dim b) {
  return a.size < 0 && b.size >= 0 ? b : a;
}

/* ---- window attributes ------------------------------------------------- */

typedef enum auto_pad_mode {
  PAD_NOTSET,
  PAD_SAME_UPPER,
  PAD_SAME_LOWER,
  PAD_VALID
} auto_pad_mode;

static const char *const auto_pad_names[] = {"NOTSET", "SAME_UPPER",
                                             "SAME_LOWER", "VALID"};

/* The sliding-window attributes of one node over `n` spatial axes. A NULL
 * array means the attribute is absent: kernel from the weight's dims,
 * strides and dilations 1, pads 0. */
typedef struct window {
  int n;
  const int64_t *kernel, *strides, *dilations, *pads;
  auto_pad_mode auto_pad;
  int ceil_mode;
} window;

/* An optional INTS attribute of `count` entries in [min, INT32_MAX] (the
 * bound keeps the window arithmetic below free of overflow). */
static o2m_status window_ints(o2m_infer_ctx *ctx, const char *name, int count,
                              int64_t min, const int64_t **out) {
  const int64_t *v = NULL;
  int c = o2m_attr_ints(ctx, name, &v);
  *out = NULL;
  if (c < 0) return O2M_OK;
  if (c != count)
    return o2m_infer_error(ctx, "attribute %s has %d values, expected %d", name,
                           c, count);
  for (int i = 0; i < c; i++)
    if (v[i] < min || v[i] > INT32_MAX)
      return o2m_infer_error(ctx, "attribute %s has value %lld out of range",
                             name, (long long)v[i]);
  *out = v;
  return O2M_OK;
}

static o2m_status read_auto_pad(o2m_infer_ctx *ctx, auto_pad_mode *out) {
  const char *s = o2m_attr_string(ctx, "auto_pad", "NOTSET");
  for (int m = 0; m < 4; m++)
    if (strcmp(s, auto_pad_names[m]) == 0) {
      *out = (auto_pad_mode)m;
      return O2M_OK;
    }
  return o2m_infer_error(ctx, "unknown auto_pad '%s'", s);
}

/* Reads the window attributes for `n` spatial axes; `dilations` and
 * `ceil_mode` only where the op's version defines them. */
static o2m_status read_window(o2m_infer_ctx *ctx, int n, int with_dilations,
                              int with_ceil_mode, window *w) {
  memset(w, 0, sizeof(*w));
  w->n = n;
  o2m_status s;
  if ((s = window_ints(ctx, "kernel_shape", n, 1, &w->kernel)) ||
      (s = window_ints(ctx, "strides", n, 1, &w->strides)) ||
      (s = window_ints(ctx, "pads", 2 * n, 0, &w->pads)) ||
      (s = read_auto_pad(ctx, &w->auto_pad)))
    return s;
  if (with_dilations &&
      (s = window_ints(ctx, "dilations", n, 1, &w->dilations)))
    return s;
  if (with_ceil_mode) w->ceil_mode = o2m_attr_int(ctx, "ceil_mode", 0) != 0;
  return O2M_OK;
}

static int64_t at_or(const int64_t *v, int i, int64_t dflt) {
  return v ? v[i] : dflt;
}

/* The extent of a dilated kernel, (k - 1) * d + 1; -1 on overflow (a
 * kernel taken from the weight's dims is not bounded). */
static int64_t kernel_extent(int64_t k, int64_t d) {
  int64_t e;
  if (k > INT32_MAX || __builtin_mul_overflow(k - 1, d, &e)) return -1;
  return e + 1;
}

/* Begin and end pads of axis i for an input of known `size`. SAME_* pads
 * so that the output is ceil(size / stride); VALID pads nothing. */
static void window_pads(const window *w, int i, int64_t size, int64_t extent,
                        int64_t *begin, int64_t *end) {
  int64_t stride = at_or(w->strides, i, 1);
  *begin = *end = 0;
  if (w->auto_pad == PAD_SAME_UPPER || w->auto_pad == PAD_SAME_LOWER) {
    int64_t residual = size % stride;
    int64_t total = extent - (residual ? residual : stride);
    if (total < 0) total = 0;
    int64_t small = total / 2, big = total - small;
    *begin = w->auto_pad == PAD_SAME_UPPER ? small : big;
    *end = w->auto_pad == PAD_SAME_UPPER ? big : small;
  } else if (w->auto_pad == PAD_NOTSET && w->pads) {
    *begin = w->pads[i];
    *end = w->pads[i + w->n];
  }
}

/* Output size of spatial axis i of a convolution or pool over `in` with a
 * kernel of `k` taps. A symbolic input keeps its symbol where the window
 * preserves the size (stride 1, padding of extent - 1), else gets a fresh
 * one. Sliding windows that would start in the end padding are dropped in
 * ceil mode. */
static o2m_status window_out(o2m_infer_ctx *ctx, const window *w, int i,
                             o2m_dim in, int64_t k, o2m_dim *out) {
  int64_t stride = at_or(w->strides, i, 1);
  int64_t extent = kernel_extent(k, at_or(w->dilations, i, 1));
  if (extent < 0) return o2m_infer_error(ctx, "kernel extent overflows");
  if (in.size < 0) {
    int64_t begin, end;
    int same = w->auto_pad == PAD_SAME_UPPER || w->auto_pad == PAD_SAME_LOWER;
    window_pads(w, i, 0, extent, &begin, &end);
    int keeps = stride == 1 && (same || begin + end == extent - 1);
    *out = keeps ? in : o2m_dim_fresh(ctx);
    return O2M_OK;
  }
  int64_t begin, end, span;
  window_pads(w, i, in.size, extent, &begin, &end);
  if (__builtin_add_overflow(in.size, begin + end, &span) ||
      (span -= extent) < 0)
    return o2m_infer_error(ctx,
                           "window of extent %lld does not fit spatial axis "
                           "%d of size %lld with pads %lld+%lld",
                           (long long)extent, i, (long long)in.size,
                           (long long)begin, (long long)end);
  int64_t size = span / stride + 1;
  if (w->ceil_mode) {
    if (span % stride) size++;
    if ((size - 1) * stride >= in.size + begin) size--;
  }
  *out = o2m_dim_known(size);
  return O2M_OK;
}

/* The spatial output dims [2, 2 + n) of y for input x. `weight` (may be
 * NULL) supplies the kernel where the attribute is absent. */
static o2m_status window_dims(o2m_infer_ctx *ctx, const window *w,
                              const o2m_type *x, const o2m_type *weight,
                              o2m_type *y) {
  for (int i = 0; i < w->n; i++) {
    int64_t k = w->kernel                     ? w->kernel[i]
                : weight && is_ranked(weight) ? weight->dims[2 + i].size
                                              : -1;
    if (k == 0) return o2m_infer_error(ctx, "kernel dim %d is 0", i);
    if (k < 0) {
      y->dims[2 + i] = o2m_dim_fresh(ctx);
      continue;
    }
    o2m_status s = window_out(ctx, w, i, x->dims[2 + i], k, &y->dims[2 + i]);
    if (s) return s;
  }
  return O2M_OK;
}

/* ---- convolutions ------------------------------------------------------ */

/* Checks that X is (N, C, D1..Dn) with n >= 1 and that a ranked weight
 * (may be NULL) has X's rank. */
static o2m_status check_data_rank(o2m_infer_ctx *ctx, const o2m_type *x,
                                  const o2m_type *weight) {
  if (x->rank < 3)
    return o2m_infer_error(ctx, "input has rank %d, expected at least 3",
                           x->rank);
  if (weight && is_ranked(weight) && weight->rank != x->rank)
    return o2m_infer_error(ctx, "weight has rank %d, input has rank %d",
                           weight->rank, x->rank);
  return O2M_OK;
}

static o2m_status read_group(o2m_infer_ctx *ctx, int64_t *group) {
  *group = o2m_attr_int(ctx, "group", 1);
  if (*group <= 0)
    return o2m_infer_error(ctx, "group %lld is not positive",
                           (long long)*group);
  return O2M_OK;
}

/* Y = conv(X, W): (N, M, out_1..out_n) for X (N, C, D1..Dn) and W
 * (M, C/group, k1..kn). */
static o2m_status conv_shape(o2m_infer_ctx *ctx, int x_in, int w_in,
                             o2m_dtype dtype) {
  const o2m_type *x = o2m_in_type(ctx, x_in), *w = o2m_in_type(ctx, w_in);
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, dtype);
    return O2M_OK;
  }
  window win;
  int64_t group;
  o2m_status s;
  if ((s = check_data_rank(ctx, x, w)) ||
      (s = read_window(ctx, x->rank - 2, 1, 0, &win)) ||
      (s = read_group(ctx, &group)))
    return s;
  int64_t channels;
  if (is_ranked(w) && x->dims[1].size >= 0 && w->dims[1].size >= 0 &&
      (__builtin_mul_overflow(w->dims[1].size, group, &channels) ||
       x->dims[1].size != channels))
    return o2m_infer_error(ctx,
                           "input has %lld channels, weight expects %lld x "
                           "group %lld",
                           (long long)x->dims[1].size,
                           (long long)w->dims[1].size, (long long)group);
  o2m_type *y = out_shaped(ctx, 0, dtype, x->rank);
  y->dims[0] = x->dims[0];
  y->dims[1] = dim_or_fresh(ctx, w, 0);
  return window_dims(ctx, &win, x, w, y);
}

/* Conv, DeformConv: T(X, W, ...) -> T. */
/* Conv's optional bias B is 1-D, one value per output channel. */
static o2m_status check_bias(o2m_infer_ctx *ctx, int b, int w) {
  if (!o2m_in_present(ctx, b)) return O2M_OK;
  const o2m_type *bt = o2m_in_type(ctx, b), *wt = o2m_in_type(ctx, w);
  if (bt->kind != O2M_TYPE_TENSOR || bt->rank < 0) return O2M_OK;
  if (bt->rank != 1) return o2m_infer_error(ctx, "the bias B has rank %d; it must be 1-D", bt->rank);
  if (is_ranked(wt) && wt->rank > 0 && bt->dims[0].size >= 0 && wt->dims[0].size >= 0 &&
      bt->dims[0].size != wt->dims[0].size)
    return o2m_infer_error(ctx, "the bias B has %lld values for %lld output channels",
                           (long long)bt->dims[0].size, (long long)wt->dims[0].size);
  return O2M_OK;
}

/* DeformConv's offset (input 2) and mask (input 4) have X's rank. */
static o2m_status check_deform_inputs(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  static const int inputs[2] = {2, 4};
  static const char *const names[2] = {"offset", "mask"};
  for (int i = 0; i < 2; i++) {
    const o2m_type *t = o2m_in_present(ctx, inputs[i]) ? o2m_in_type(ctx, inputs[i]) : NULL;
    if (t && is_ranked(t) && is_ranked(x) && t->rank != x->rank)
      return o2m_infer_error(ctx, "the %s has rank %d, X has rank %d", names[i], t->rank, x->rank);
  }
  return O2M_OK;
}

/* Conv, FusedConv (X, W, B, ...), DeformConv (X, W, offset, B, mask). */
o2m_status o2m_infer_conv(o2m_infer_ctx *ctx) {
  int deform = strcmp(ctx->node->op_type, "DeformConv") == 0;
  o2m_status s = deform ? check_deform_inputs(ctx) : O2M_OK;
  if (!s) s = check_bias(ctx, deform ? 3 : 2, 1);
  return s ? s : conv_shape(ctx, 0, 1, o2m_in_type(ctx, 0)->elem);
}

/* ConvInteger(x, w, x_zero_point, w_zero_point) -> int32. */
o2m_status o2m_infer_conv_integer(o2m_infer_ctx *ctx) {
  return conv_shape(ctx, 0, 1, O2M_DT_INT32);
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): the
 * output has y_zero_point's type. */
o2m_status o2m_infer_qlinear_conv(o2m_infer_ctx *ctx) {
  o2m_status s;
  if ((s = o2m_check_scale(ctx, 1, "x_scale", 0)) || (s = o2m_check_scale(ctx, 4, "w_scale", 0)) ||
      (s = o2m_check_scale(ctx, 6, "y_scale", 1)))
    return s;
  return conv_shape(ctx, 0, 3, o2m_in_type(ctx, 7)->elem);
}

/* Output size of axis i of ConvTranspose: explicit output_shape, SAME
 * (input * stride), or stride * (in - 1) + output_padding + extent - pads. */
static o2m_status transpose_out(o2m_infer_ctx *ctx, const window *w, int i,
                                o2m_dim in, int64_t k, int64_t out_pad,
                                o2m_dim *out) {
  int64_t stride = at_or(w->strides, i, 1);
  int64_t extent = kernel_extent(k, at_or(w->dilations, i, 1));
  if (extent < 0) return o2m_infer_error(ctx, "kernel extent overflows");
  if (w->auto_pad == PAD_SAME_UPPER || w->auto_pad == PAD_SAME_LOWER) {
    *out = o2m_dim_mul(ctx, in, o2m_dim_known(stride));
    return O2M_OK;
  }
  int64_t begin = 0, end = 0;
  if (w->auto_pad == PAD_NOTSET && w->pads) {
    begin = w->pads[i];
    end = w->pads[i + w->n];
  }
  /* out = stride * (in - 1) + 1 + grow */
  int64_t grow = out_pad + extent - 1 - begin - end;
  if (in.size < 0) {
    *out = stride == 1 && grow == 0 ? in : o2m_dim_fresh(ctx);
    return O2M_OK;
  }
  int64_t size;
  if (in.size == 0 || __builtin_mul_overflow(stride, in.size - 1, &size) ||
      __builtin_add_overflow(size, grow + 1, &size) || size <= 0)
    return o2m_infer_error(ctx,
                           "output size of spatial axis %d is not "
                           "positive or overflows",
                           i);
  *out = o2m_dim_known(size);
  return O2M_OK;
}

/* ConvTranspose(X (N, C, D..), W (C, M/group, k..), B) -> (N, M, out..). */
o2m_status o2m_infer_conv_transpose(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *w = o2m_in_type(ctx, 1);
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, x->elem);
    return O2M_OK;
  }
  window win;
  int64_t group;
  const int64_t *out_pads, *out_shape = NULL;
  o2m_status s;
  if ((s = check_data_rank(ctx, x, w)) ||
      (s = read_window(ctx, x->rank - 2, 1, 0, &win)) ||
      (s = read_group(ctx, &group)) ||
      (s = window_ints(ctx, "output_padding", win.n, 0, &out_pads)))
    return s;
  /* output_shape lists the spatial sizes, or (older exporters) all dims */
  int n_shape = o2m_attr_ints(ctx, "output_shape", &out_shape);
  if (n_shape >= 0 && n_shape != win.n && n_shape != win.n + 2)
    return o2m_infer_error(ctx,
                           "output_shape has %d values for %d spatial "
                           "axes",
                           n_shape, win.n);
  if (is_ranked(w) && x->dims[1].size >= 0 && w->dims[0].size >= 0 &&
      x->dims[1].size != w->dims[0].size)
    return o2m_infer_error(ctx, "input has %lld channels, weight has %lld",
                           (long long)x->dims[1].size,
                           (long long)w->dims[0].size);
  o2m_type *y = out_shaped(ctx, 0, x->elem, x->rank);
  y->dims[0] = x->dims[0];
  if (is_ranked(w))
    y->dims[1] = o2m_dim_mul(ctx, w->dims[1], o2m_dim_known(group));
  for (int i = 0; i < win.n; i++) {
    if (n_shape >= 0) {
      int64_t size = out_shape[n_shape - win.n + i];
      if (size < 0)
        return o2m_infer_error(ctx, "output_shape has a negative value");
      y->dims[2 + i] = o2m_dim_known(size);
      continue;
    }
    int64_t k = win.kernel     ? win.kernel[i]
                : is_ranked(w) ? w->dims[2 + i].size
                               : -1;
    if (k == 0) return o2m_infer_error(ctx, "kernel dim %d is 0", i);
    if (k < 0) continue;
    s = transpose_out(ctx, &win, i, x->dims[2 + i], k, at_or(out_pads, i, 0),
                      &y->dims[2 + i]);
    if (s) return s;
  }
  return O2M_OK;
}

/* ---- pools ------------------------------------------------------------- */

/* The opset versions at which each pool gained `dilations` and
 * `ceil_mode`. */
static const struct pool_rule {
  const char *op;
  int dilations_since, ceil_mode_since;
} pool_rules[] = {
    {"MaxPool", 10, 10},
    {"AveragePool", 19, 10},
    {"LpPool", 18, 18},
};

/* AveragePool, MaxPool (Y and int64 Indices), LpPool. */
o2m_status o2m_infer_pool(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, x->elem);
    out_unranked(ctx, 1, O2M_DT_INT64);
    return O2M_OK;
  }
  int with_dilations = 0, with_ceil = 0;
  for (size_t r = 0; r < sizeof(pool_rules) / sizeof(pool_rules[0]); r++)
    if (strcmp(ctx->node->op_type, pool_rules[r].op) == 0) {
      with_dilations = ctx->op_version >= pool_rules[r].dilations_since;
      with_ceil = ctx->op_version >= pool_rules[r].ceil_mode_since;
    }
  window win;
  o2m_status s;
  if ((s = check_data_rank(ctx, x, NULL)) ||
      (s = read_window(ctx, x->rank - 2, with_dilations, with_ceil, &win)))
    return s;
  if (!win.kernel)
    return o2m_infer_error(ctx, "attribute kernel_shape is required");
  o2m_type *y = out_shaped(ctx, 0, x->elem, x->rank);
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1];
  if ((s = window_dims(ctx, &win, x, NULL, y))) return s;
  o2m_type indices = *y;
  indices.elem = O2M_DT_INT64;
  o2m_out_set_type(ctx, 1, &indices);
  return O2M_OK;
}

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool: (N, C, D..) ->
 * (N, C, 1..). */
o2m_status o2m_infer_global_pool(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, x->elem);
    return O2M_OK;
  }
  if (x->rank < 2)
    return o2m_infer_error(ctx, "input has rank %d, expected at least 2",
                           x->rank);
  o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, x->rank);
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1];
  for (int k = 2; k < x->rank; k++) y->dims[k] = o2m_dim_known(1);
  return O2M_OK;
}

/* The entries of a 1-D integer input as dims: its known values, or the
 * symbolic dims that shape data propagation tracked; *dims NULL when
 * neither is known. *count, when >= 0, is the required number of entries
 * (a mismatch is an error) and receives the number found. A negative entry
 * is an error. */
static o2m_status dims_input(o2m_infer_ctx *ctx, int in, const char *what,
                             int *count, const o2m_dim **dims) {
  int n = o2m_shape_value_in(ctx, in, 0, dims);
  if (n < 0) {
    *dims = NULL;
    return O2M_OK;
  }
  if (*count >= 0 && n != *count)
    return o2m_infer_error(ctx, "%s has %d values, expected %d", what, n,
                           *count);
  *count = n;
  for (int k = 0; k < n; k++)
    if (o2m_entry_known((*dims)[k]) && (*dims)[k].size < 0)
      return o2m_infer_error(ctx, "%s has a negative value", what);
  return O2M_OK;
}

/* MaxUnpool(X, I, output_shape?): the output_shape input when given, else
 * (N, C, (D - 1) * stride + k - pads). */
o2m_status o2m_infer_max_unpool(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (!is_ranked(x)) {
    out_unranked(ctx, 0, x->elem);
    return O2M_OK;
  }
  window win;
  o2m_status s;
  if ((s = check_data_rank(ctx, x, NULL)) ||
      (s = read_window(ctx, x->rank - 2, 0, 0, &win)))
    return s;
  if (!win.kernel)
    return o2m_infer_error(ctx, "attribute kernel_shape is required");
  o2m_type *y = out_shaped(ctx, 0, x->elem, x->rank);
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1];
  if (o2m_in_present(ctx, 2)) {
    const o2m_dim *shape;
    int count = x->rank;
    if ((s = dims_input(ctx, 2, "output_shape", &count, &shape))) return s;
    for (int k = 0; shape && k < x->rank; k++) y->dims[k] = shape[k];
    return O2M_OK;
  }
  for (int i = 0; i < win.n; i++) {
    o2m_dim in = x->dims[2 + i];
    if (in.size < 0) continue;
    int64_t size, pads = at_or(win.pads, i, 0) + at_or(win.pads, i + win.n, 0);
    if (in.size == 0 ||
        __builtin_mul_overflow(at_or(win.strides, i, 1), in.size - 1, &size) ||
        __builtin_add_overflow(size, win.kernel[i] - pads, &size) || size < 0)
      return o2m_infer_error(ctx,
                             "output size of spatial axis %d is "
                             "negative or overflows",
                             i);
    y->dims[2 + i] = o2m_dim_known(size);
  }
  return O2M_OK;
}

/* MaxRoiPool(X (N, C, H, W), rois (R, 5)) -> (R, C, pooled_h, pooled_w). */
o2m_status o2m_infer_roi_pool(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *rois = o2m_in_type(ctx, 1);
  const int64_t *pooled;
  if (o2m_attr_ints(ctx, "pooled_shape", &pooled) != 2 || pooled[0] <= 0 ||
      pooled[1] <= 0)
    return o2m_infer_error(ctx, "pooled_shape must be two positive values");
  if (is_ranked(x) && x->rank != 4)
    return o2m_infer_error(ctx, "input has rank %d, expected 4", x->rank);
  if (is_ranked(rois) && rois->rank != 2)
    return o2m_infer_error(ctx, "rois has rank %d, expected 2", rois->rank);
  o2m_type *y = out_shaped(ctx, 0, x->elem, 4);
  y->dims[0] = dim_or_fresh(ctx, rois, 0);
  y->dims[1] = dim_or_fresh(ctx, x, 1);
  y->dims[2] = o2m_dim_known(pooled[0]);
  y->dims[3] = o2m_dim_known(pooled[1]);
  return O2M_OK;
}

/* Col2Im(input (N, C * prod(block), L), image_shape, block_shape) ->
 * (N, C, image_shape...). */
o2m_status o2m_infer_col2im(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *image_type = o2m_in_type(ctx, 1);
  if (is_ranked(x) && x->rank != 3)
    return o2m_infer_error(ctx, "input has rank %d, expected 3", x->rank);
  int n = -1; /* the number of image dims */
  if (is_ranked(image_type) && image_type->rank == 1 &&
      image_type->dims[0].size >= 0 &&
      image_type->dims[0].size <= O2M_KNOWN_MAX)
    n = (int)image_type->dims[0].size;
  const o2m_dim *image, *block;
  o2m_status s;
  if ((s = dims_input(ctx, 1, "image_shape", &n, &image)) ||
      (s = dims_input(ctx, 2, "block_shape", &n, &block)))
    return s;
  if (n < 0) {
    out_unranked(ctx, 0, x->elem);
    return O2M_OK;
  }
  o2m_type *y = out_shaped(ctx, 0, x->elem, n + 2);
  y->dims[0] = dim_or_fresh(ctx, x, 0);
  for (int i = 0; image && i < n; i++) y->dims[2 + i] = image[i];
  int64_t block_size = block ? 1 : -1;
  for (int i = 0; block && i < n; i++) {
    if (block[i].size == 0)
      return o2m_infer_error(ctx, "block_shape has a zero value");
    if (!o2m_entry_known(block[i])) block_size = -1;
    if (block_size > 0 &&
        __builtin_mul_overflow(block_size, block[i].size, &block_size))
      return o2m_infer_error(ctx, "block_shape overflows");
  }
  o2m_dim packed = dim_or_fresh(ctx, x, 1);
  if (block_size == 1) {
    y->dims[1] = packed;
  } else if (block_size > 0 && packed.size >= 0) {
    if (packed.size % block_size)
      return o2m_infer_error(ctx,
                             "input dim 1 (%lld) is not a multiple of the "
                             "block size %lld",
                             (long long)packed.size, (long long)block_size);
    y->dims[1] = o2m_dim_known(packed.size / block_size);
  }
  return O2M_OK;
}

/* CausalConvWithState(input (B, C, L), weight (C, 1, K), bias?,
 * past_state? (B, C, K-1)) -> output like input, present_state
 * (B, C, K-1). */
o2m_status o2m_infer_causal_conv(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *w = o2m_in_type(ctx, 1);
  const o2m_type *past = o2m_in_type(ctx, 3);
  const char *activation = o2m_attr_string(ctx, "activation", "none");
  if (strcmp(activation, "none") && strcmp(activation, "silu") &&
      strcmp(activation, "swish"))
    return o2m_infer_error(ctx, "unknown activation '%s'", activation);
  const o2m_type *checks[] = {x, w, past};
  for (int i = 0; i < 3; i++)
    if (is_ranked(checks[i]) && checks[i]->rank != 3)
      return o2m_infer_error(ctx, "input %d has rank %d, expected 3",
                             i == 2 ? 3 : i, checks[i]->rank);
  if (is_ranked(w) && w->dims[2].size == 0)
    return o2m_infer_error(ctx, "kernel size is 0");
  if (is_ranked(x))
    o2m_out_set_type(ctx, 0, x);
  else
    out_unranked(ctx, 0, x->elem);
  o2m_type *state = out_shaped(ctx, 1, x->elem, 3);
  state->dims[0] =
      dim_either(dim_or_fresh(ctx, x, 0), dim_or_fresh(ctx, past, 0));
  state->dims[1] = dim_either(dim_or_fresh(ctx, x, 1), dim_or_fresh(ctx, w, 0));
  if (is_ranked(w) && w->dims[2].size > 0)
    state->dims[2] = o2m_dim_known(w->dims[2].size - 1);
  else if (is_ranked(past))
    state->dims[2] = past->dims[2];
  return O2M_OK;
}
