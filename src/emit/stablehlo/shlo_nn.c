/* shlo_nn.c - StableHLO lowerings of the neural-net family (rows in
 * shlo_nn.def): MatMul (dot_general, numpy batch broadcasting, 1-D
 * operands, integers too), Conv and ConvTranspose (stablehlo.convolution,
 * 1-D to 3-D, groups, dilations; ConvTranspose as the convolution of the
 * lhs-dilated input by the spatially reversed, in/out-swapped kernel),
 * MaxPool (with its Indices output), AveragePool and LpPool
 * (stablehlo.reduce_window, 1-D to 3-D, dilations, ceil_mode). Resize
 * comes from the shared layer (decompose_resize.c).
 *
 * Layout: ONNX's channels-first, as the convolution's dimension numbers
 * `[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]` say. Window geometry (static
 * sizes): pads from pads/auto_pad as ONNX's reference computes them; the
 * high pad is grown to what ceil_mode's last window needs. An average's
 * divisor (the taps inside the input, or inside the explicitly padded
 * input with count_include_pad) is known at import: a constant.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit/stablehlo/shlo_kit.h"
#include "infer/infer.h"

enum { MAX_SPATIAL = LW_FIXED_MAX_SPATIAL, MAX_DIVISORS = 1 << 26 };

static MlirValue null_value(void) { return (MlirValue){NULL}; }

/* Refuses a node with a dynamic dim in any present input or output, but
 * the batch dim (dim 0 of input 0 and of the outputs). */
static o2m_status check_static(lw_ctx *cx) {
  for (int i = 0; i < cx->node->n_inputs; i++) {
    const o2m_type *t = lw_in_type(cx, i);
    if (!lw_in_present(cx, i) || t->kind != O2M_TYPE_TENSOR) continue;
    for (int k = i == 0 ? 1 : 0; k < t->rank; k++)
      if (t->dims[k].size < 0) return lw_unsupported(cx, "input %d with dynamic dims", i);
  }
  for (int i = 0; i < cx->node->n_outputs; i++) {
    const o2m_type *t = lw_out_type(cx, i);
    if (!lw_out_present(cx, i) || t->kind != O2M_TYPE_TENSOR) continue;
    for (int k = 1; k < t->rank; k++)
      if (t->dims[k].size < 0) return lw_unsupported(cx, "output %d with dynamic dims", i);
  }
  return O2M_OK;
}

/* sh_check_node, static shapes but the batch dim, and input 0 a float
 * (or, with ints_ok, an integer) tensor. */
static o2m_status check_inputs(lw_ctx *cx, int ints_ok) {
  o2m_status s = sh_check_node(cx);
  if (s || (s = check_static(cx))) return s;
  o2m_dtype d = lw_in_type(cx, 0)->elem;
  if (lw_dtype_is_float(d) || (ints_ok && d != O2M_DT_BOOL)) return O2M_OK;
  return lw_unsupported(cx, "no StableHLO lowering for %s inputs", o2m_dtype_name(d));
}

/* A constant of float values v (row-major) of type tensor<sizes x elem>:
 * built as f64 or f32 and converted to elem. */
static MlirValue const_floats(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes,
                              const double *v, int64_t count) {
  int f64 = mlirTypeIsAF64(elem);
  MlirType built = f64 ? elem : mlirF32TypeGet(cx->mc), type = sh_tensor(cx, built, rank, sizes);
  MlirAttribute value;
  if (f64) {
    value = mlirDenseElementsAttrDoubleGet(type, (intptr_t)count, v);
  } else {
    float *f = o2m_arena_array(&cx->scratch, (size_t)count + 1, sizeof(float));
    if (!f) return null_value();
    for (int64_t i = 0; i < count; i++) f[i] = (float)v[i];
    value = mlirDenseElementsAttrFloatGet(type, (intptr_t)count, f);
  }
  MlirNamedAttribute attr = mlirNamedAttributeGet(
      mlirIdentifierGet(cx->mc, mlirStringRefCreateFromCString("value")), value);
  MlirOperation op = lw_op_attrs(cx, "stablehlo.constant", 0, NULL, 1, &type, 1, &attr, 0);
  if (mlirOperationIsNull(op)) return null_value();
  return sh_convert(cx, mlirOperationGetResult(op, 0), elem);
}

/* Writes "dense<[[lo, hi], ...]> : tensor<n x 2 x i64>" into buf. */
static char *padding_attr(char *buf, size_t size, int n, const int64_t *lo, const int64_t *hi) {
  size_t len = (size_t)snprintf(buf, size, "dense<[");
  for (int i = 0; i < n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s[%lld, %lld]", i ? ", " : "",
                            (long long)lo[i], (long long)hi[i]);
  if (len < size) snprintf(buf + len, size - len, "]> : tensor<%dx2xi64>", n);
  return buf;
}

/* ---- window geometry ----------------------------------------------------- */

typedef lw_fixed_window window;

/* The high pad a window op gets: ONNX's, or what ceil_mode's last window
 * needs beyond it. */
static int64_t high_pad(const window *w, int i) { return w->reach[i] > w->pe[i] ? w->reach[i] : w->pe[i]; }

/* ---- MatMul --------------------------------------------------------------- */

/* MatMul with dynamic dims: the forms that need no broadcast or reshape
 * (a [..., M, K] with b [K, N], or both [..., M, K] x [..., K, N] of one
 * rank, their batch dims taken as equal). */
static o2m_status dynamic_matmul(lw_ctx *cx, MlirValue a, MlirValue b) {
  int ra = sh_rank(a), rb = sh_rank(b), nb = rb == 2 ? 0 : ra - 2;
  if (ra < 2 || rb < 2 || (rb != 2 && ra != rb))
    return lw_unsupported(cx, "MatMul of ranks %d and %d with dynamic dims", ra, rb);
  int64_t batch[SH_MAX_RANK], lc = ra - 1, rc = rb - 2;
  for (int k = 0; k < nb; k++) {
    int64_t da = sh_size(a, k), db = sh_size(b, k);
    if (da != db && da >= 0 && db >= 0)
      return lw_unsupported(cx, "MatMul broadcasting batch dims with dynamic dims");
    batch[k] = k;
  }
  return lw_set_out(cx, 0, sh_dot_general(cx, a, b, nb, batch, batch, 1, &lc, &rc, sh_elem(a)));
}

/* numpy matmul: a 1-D a is a row, a 1-D b a column (both dropped from
 * the result, which is reshaped to the inferred type); the batch dims
 * broadcast; a 2-D b contracts without batch dims. */
o2m_status sh_lower_matmul(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  o2m_dtype dt = lw_in_type(cx, 0)->elem;
  if (dt == O2M_DT_BOOL) return lw_unsupported(cx, "no StableHLO lowering for bool MatMul");
  MlirValue a = lw_in(cx, 0), b = lw_in(cx, 1);
  int ra = sh_rank(a), rb = sh_rank(b);
  if (ra < 1 || rb < 1) return lw_unsupported(cx, "operands of rank %d and %d", ra, rb);
  if (!sh_is_static(a) || !sh_is_static(b)) return dynamic_matmul(cx, a, b);
  if (ra == 1) {
    int64_t row[2] = {1, sh_size(a, 0)};
    a = sh_reshape(cx, a, 2, row), ra = 2;
  }
  if (rb == 1) {
    int64_t col[2] = {sh_size(b, 0), 1};
    b = sh_reshape(cx, b, 2, col), rb = 2;
  }
  int64_t K = sh_size(a, ra - 1);
  if (sh_size(b, rb - 2) != K)
    return lw_error(cx, "inner dims %lld and %lld differ", (long long)K,
                    (long long)sh_size(b, rb - 2));
  MlirType elem = sh_elem(a);
  MlirValue y;
  if (rb == 2) {
    int64_t lc = ra - 1, rc = 0;
    y = sh_dot_general(cx, a, b, 0, NULL, NULL, 1, &lc, &rc, elem);
  } else {
    int nb = (ra > rb ? ra : rb) - 2;
    int64_t sa[SH_MAX_RANK], sb[SH_MAX_RANK], batch[SH_MAX_RANK];
    for (int k = 0; k < nb; k++) {
      int ka = k - (nb - (ra - 2)), kb = k - (nb - (rb - 2));
      int64_t da = ka >= 0 ? sh_size(a, ka) : 1, db = kb >= 0 ? sh_size(b, kb) : 1;
      if (da != db && da != 1 && db != 1)
        return lw_error(cx, "batch dims %lld and %lld do not broadcast", (long long)da,
                        (long long)db);
      batch[k] = sa[k] = sb[k] = da == 1 ? db : da;
    }
    sa[nb] = sh_size(a, ra - 2), sa[nb + 1] = K;
    sb[nb] = K, sb[nb + 1] = sh_size(b, rb - 1);
    a = sh_broadcast_in_dim(cx, a, sh_tensor(cx, elem, nb + 2, sa), null_value(), NULL);
    b = sh_broadcast_in_dim(cx, b, sh_tensor(cx, sh_elem(b), nb + 2, sb), null_value(), NULL);
    int64_t lc = nb + 1, rc = nb;
    for (int k = 0; k < nb; k++) batch[k] = k;
    y = sh_dot_general(cx, a, b, nb, batch, batch, 1, &lc, &rc, elem);
  }
  MlirType out = sh_out_type(cx, 0);
  if (mlirValueIsNull(y) || mlirTypeIsNull(out))
    return lw_error(cx, "internal: MatMul was not built");
  int64_t sizes[SH_MAX_RANK];
  int rank = (int)mlirShapedTypeGetRank(out);
  for (int k = 0; k < rank; k++) sizes[k] = mlirShapedTypeGetDimSize(out, k);
  return lw_set_out(cx, 0, sh_reshape(cx, y, rank, sizes));
}

/* ---- Conv, ConvTranspose ---------------------------------------------------- */

/* The convolution's attributes and dimension numbers for n spatial axes. */
static void conv_attrs(char *buf, size_t size, int n, const int64_t *strides, const int64_t *lo,
                       const int64_t *hi, const int64_t *lhs_dil, const int64_t *rhs_dil,
                       int64_t groups) {
  static const char *const labels[] = {"[b, f, 0]x[o, i, 0]->[b, f, 0]",
                                       "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
                                       "[b, f, 0, 1, 2]x[o, i, 0, 1, 2]->[b, f, 0, 1, 2]"};
  char st[128], pad[256], ld[128], rd[128];
  snprintf(buf, size,
           "window_strides = %s, padding = %s, lhs_dilation = %s, rhs_dilation = %s, "
           "dimension_numbers = #stablehlo.conv<%s>, feature_group_count = %lld : i64, "
           "batch_group_count = 1 : i64",
           sh_array(st, sizeof(st), n, strides), padding_attr(pad, sizeof(pad), n, lo, hi),
           sh_array(ld, sizeof(ld), n, lhs_dil), sh_array(rd, sizeof(rd), n, rhs_dil),
           labels[n - 1], (long long)groups);
}

/* stablehlo.convolution of ops[0] by ops[1] into `type`; f16/bf16 computed
 * in f32 and rounded once (sh_accumulator). */
static MlirValue convolution(lw_ctx *cx, MlirValue *ops, MlirType type, const char *attrs) {
  MlirType elem = mlirShapedTypeGetElementType(type), acc = sh_accumulator(cx, elem);
  if (mlirTypeEqual(acc, elem)) return sh_op(cx, "stablehlo.convolution", 2, ops, type, "%s", attrs);
  MlirValue wide[2] = {sh_convert(cx, ops[0], acc), sh_convert(cx, ops[1], acc)};
  int rank = (int)mlirShapedTypeGetRank(type);
  int64_t sizes[2 + MAX_SPATIAL];
  for (int k = 0; k < rank; k++)
    sizes[k] = mlirShapedTypeIsDynamicDim(type, k) ? -1 : mlirShapedTypeGetDimSize(type, k);
  MlirValue y = sh_op(cx, "stablehlo.convolution", 2, wide, sh_tensor(cx, acc, rank, sizes), "%s", attrs);
  return sh_convert(cx, y, elem);
}

/* y + bias (input 2, [M]) along dim 1; y itself without one. */
static MlirValue add_bias(lw_ctx *cx, MlirValue y) {
  if (!lw_in_present(cx, 2) || mlirValueIsNull(y)) return y;
  int64_t dim1 = 1;
  MlirValue shape = sh_is_static(y) ? null_value() : sh_shape_of(cx, y);
  MlirValue b = sh_broadcast_in_dim(cx, lw_in(cx, 2), mlirValueGetType(y), shape, &dim1);
  return sh_binary(cx, "stablehlo.add", y, b);
}

/* The type [N, M, out...] of a convolution's result. */
static MlirType conv_result(lw_ctx *cx, MlirValue x, int64_t M, int n, const int64_t *out) {
  int64_t sizes[2 + MAX_SPATIAL] = {sh_size(x, 0), M};
  for (int i = 0; i < n; i++) sizes[2 + i] = out[i];
  return sh_tensor(cx, sh_elem(x), n + 2, sizes);
}

o2m_status sh_lower_conv(lw_ctx *cx) {
  o2m_status s = check_inputs(cx, 1); /* integers: ConvInteger's decomposition */
  if (s) return s;
  MlirValue x = lw_in(cx, 0), wv = lw_in(cx, 1);
  int rank = sh_rank(x);
  if (rank < 3 || rank > 5 || sh_rank(wv) != rank)
    return lw_unsupported(cx, "Conv of rank %d", rank);
  int64_t kernel[MAX_SPATIAL], C = sh_size(x, 1), M = sh_size(wv, 0), Cg = sh_size(wv, 1);
  int64_t group = lw_attr_int(cx, "group", 1);
  for (int i = 0; i < rank - 2; i++) kernel[i] = sh_size(wv, 2 + i);
  if (group < 1 || C != Cg * group || M % group)
    return lw_error(cx, "group %lld does not divide the channels", (long long)group);
  window w;
  if ((s = lw_read_fixed_window(cx, x, kernel, &w))) return s;
  int64_t ones[MAX_SPATIAL] = {1, 1, 1}, hi[MAX_SPATIAL];
  for (int i = 0; i < w.n; i++) hi[i] = high_pad(&w, i);
  char attrs[1024];
  conv_attrs(attrs, sizeof(attrs), w.n, w.s, w.pb, hi, ones, w.d, group);
  MlirValue ops[2] = {x, wv};
  MlirValue y = convolution(cx, ops, conv_result(cx, x, M, w.n, w.out), attrs);
  y = add_bias(cx, y);
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: Conv was not built");
  return lw_set_out(cx, 0, y);
}

/* The ConvTranspose weight [C, M/g, k...] as a convolution's kernel
 * [M, C/g, k...] (per group, in and out swapped), spatially reversed. */
static MlirValue transposed_kernel(lw_ctx *cx, MlirValue wv, int64_t group) {
  int rank = sh_rank(wv), n = rank - 2;
  int64_t C = sh_size(wv, 0), Mg = sh_size(wv, 1), split[SH_MAX_RANK], perm[SH_MAX_RANK],
          out[SH_MAX_RANK];
  split[0] = group, split[1] = C / group, split[2] = Mg;
  perm[0] = 0, perm[1] = 2, perm[2] = 1;
  out[0] = group * Mg, out[1] = C / group;
  for (int i = 0; i < n; i++) split[3 + i] = out[2 + i] = sh_size(wv, 2 + i), perm[3 + i] = 3 + i;
  MlirValue k = sh_transpose(cx, sh_reshape(cx, wv, rank + 1, split), perm);
  k = sh_reshape(cx, k, rank, out);
  int64_t spatial[MAX_SPATIAL];
  for (int i = 0; i < n; i++) spatial[i] = 2 + i;
  return sh_reverse(cx, k, n, spatial);
}

/* out[o] = sum x[i] w[t] over o = i * s + t * d - pad_begin: the
 * convolution of x dilated by s (lhs_dilation) with the reversed kernel,
 * padded by d * (k - 1) - pad_begin below and up to the output size above. */
o2m_status sh_lower_conv_transpose(lw_ctx *cx) {
  o2m_status s = check_inputs(cx, 0);
  if (s) return s;
  MlirValue x = lw_in(cx, 0), wv = lw_in(cx, 1);
  int rank = sh_rank(x), n = rank - 2, mode;
  if (rank < 3 || rank > 5 || sh_rank(wv) != rank)
    return lw_unsupported(cx, "ConvTranspose of rank %d", rank);
  int64_t k[MAX_SPATIAL], st[MAX_SPATIAL], dil[MAX_SPATIAL], pads[2 * MAX_SPATIAL],
      out_pad[MAX_SPATIAL];
  int64_t C = sh_size(wv, 0), group = lw_attr_int(cx, "group", 1), M = sh_size(wv, 1) * group;
  if (group < 1 || C % group || sh_size(x, 1) != C)
    return lw_error(cx, "group %lld does not divide the channels", (long long)group);
  if ((s = lw_window_ints(cx, "kernel_shape", n, 0, k)) ||
      (s = lw_window_ints(cx, "strides", n, 1, st)) || (s = lw_window_ints(cx, "dilations", n, 1, dil)) ||
      (s = lw_window_ints(cx, "pads", 2 * n, 0, pads)) ||
      (s = lw_window_ints(cx, "output_padding", n, 0, out_pad)) || (s = lw_read_auto_pad(cx, &mode)))
    return s;
  const int64_t *shape = NULL;
  int n_shape = lw_attr_ints(cx, "output_shape", &shape);
  if (n_shape >= 0 && n_shape != n && n_shape != n + 2)
    return lw_error(cx, "output_shape has %d values", n_shape);
  int64_t lo[MAX_SPATIAL], hi[MAX_SPATIAL], out[MAX_SPATIAL];
  const o2m_type *yt = lw_out_type(cx, 0);
  for (int i = 0; i < n; i++) {
    if (!k[i]) k[i] = sh_size(wv, 2 + i);
    if (k[i] != sh_size(wv, 2 + i) || st[i] < 1 || dil[i] < 1)
      return lw_error(cx, "bad window on axis %d", i);
    int64_t in = sh_size(x, 2 + i), ext = dil[i] * (k[i] - 1) + 1,
            full = st[i] * (in - 1) + out_pad[i] + ext, pb;
    out[i] = n_shape >= 0 ? shape[n_shape - n + i] : -1;
    if (mode == LW_SAME_UPPER || mode == LW_SAME_LOWER) {
      if (n_shape < 0) out[i] = in * st[i];
      int64_t total = full - out[i];
      pb = mode == LW_SAME_UPPER ? total / 2 : total - total / 2;
    } else {
      pb = mode == LW_NOTSET ? pads[i] : 0;
      if (n_shape < 0) out[i] = full - pb - (mode == LW_NOTSET ? pads[n + i] : 0);
    }
    lo[i] = ext - 1 - pb;
    hi[i] = out[i] - 1 - (in - 1) * st[i] + pb;
    if (yt->kind == O2M_TYPE_TENSOR && yt->rank == rank && yt->dims[2 + i].size != out[i])
      return lw_error(cx, "internal: spatial axis %d has size %lld, inferred %lld", i,
                      (long long)out[i], (long long)yt->dims[2 + i].size);
  }
  char attrs[1024];
  conv_attrs(attrs, sizeof(attrs), n, (const int64_t[]){1, 1, 1}, lo, hi, st, dil, group);
  MlirValue ops[2] = {x, transposed_kernel(cx, wv, group)};
  MlirValue y = convolution(cx, ops, conv_result(cx, x, M, n, out), attrs);
  y = add_bias(cx, y);
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: ConvTranspose was not built");
  return lw_set_out(cx, 0, y);
}

/* ---- pools ------------------------------------------------------------------ */

/* The reduce_window attributes of window w over a [N, C, spatial...]
 * operand (N and C untouched). */
static void window_attrs(char *buf, size_t size, const window *w) {
  int rank = w->n + 2;
  int64_t k[2 + MAX_SPATIAL] = {1, 1}, st[2 + MAX_SPATIAL] = {1, 1}, d[2 + MAX_SPATIAL] = {1, 1};
  int64_t lo[2 + MAX_SPATIAL] = {0, 0}, hi[2 + MAX_SPATIAL] = {0, 0};
  for (int i = 0; i < w->n; i++) {
    k[2 + i] = w->k[i], st[2 + i] = w->s[i], d[2 + i] = w->d[i];
    lo[2 + i] = w->pb[i], hi[2 + i] = high_pad(w, i);
  }
  char a[128], b[128], c[128], p[256];
  snprintf(buf, size,
           "window_dimensions = %s, window_strides = %s, window_dilations = %s, padding = %s",
           sh_array(a, sizeof(a), rank, k), sh_array(b, sizeof(b), rank, st),
           sh_array(c, sizeof(c), rank, d), padding_attr(p, sizeof(p), rank, lo, hi));
}

/* The result type [N, C, out...] of a pool over x with elem. */
static MlirType pool_result(lw_ctx *cx, MlirValue x, MlirType elem, const window *w) {
  int64_t sizes[2 + MAX_SPATIAL] = {sh_size(x, 0), sh_size(x, 1)};
  for (int i = 0; i < w->n; i++) sizes[2 + i] = w->out[i];
  return sh_tensor(cx, elem, w->n + 2, sizes);
}

/* reduce_window of x (padding with init) reduced by body_op. */
static MlirValue reduce_window(lw_ctx *cx, MlirValue x, MlirValue init, const char *body_op,
                               const window *w) {
  if (mlirValueIsNull(x) || mlirValueIsNull(init)) return null_value();
  char attrs[1024];
  window_attrs(attrs, sizeof(attrs), w);
  MlirType elem = sh_elem(x), result = pool_result(cx, x, elem, w);
  MlirValue ops[2] = {x, init};
  MlirOperation op = lw_op(cx, "stablehlo.reduce_window", 2, ops, 1, &result, attrs, 1);
  if (mlirOperationIsNull(op)) return null_value();
  MlirType scalar = sh_tensor(cx, elem, 0, NULL), args[2] = {scalar, scalar};
  MlirBlock body = sh_region_block(cx, op, 0, 2, args), saved = cx->block;
  cx->block = body;
  MlirValue in[2] = {mlirBlockGetArgument(body, 0), mlirBlockGetArgument(body, 1)};
  MlirValue r = lw_op1(cx, body_op, 2, in, scalar, NULL);
  lw_op(cx, "stablehlo.return", 1, &r, 0, NULL, NULL, 0);
  cx->block = saved;
  return mlirOperationGetResult(op, 0);
}

/* The lowest value of an element type (max's identity). */
static double lowest(MlirType elem) {
  if (mlirTypeIsAFloat(elem)) return -INFINITY;
  unsigned width = mlirIntegerTypeGetWidth(elem);
  if (mlirIntegerTypeIsUnsigned(elem)) return 0;
  return -ldexp(1.0, (int)width - 1);
}

/* The flat index (NCHW order; storage_order 1: spatial dims column-major)
 * of every element of x, as i64. */
static MlirValue flat_indices(lw_ctx *cx, MlirValue x, int64_t storage_order) {
  int rank = sh_rank(x), n = rank - 2;
  int64_t sizes[SH_MAX_RANK], stride[SH_MAX_RANK], acc = 1;
  for (int k = 0; k < rank; k++) sizes[k] = sh_size(x, k);
  if (storage_order) {
    for (int i = 0; i < n; i++) stride[2 + i] = acc, acc *= sizes[2 + i];
  } else {
    for (int i = n - 1; i >= 0; i--) stride[2 + i] = acc, acc *= sizes[2 + i];
  }
  stride[1] = acc, stride[0] = acc * sizes[1];
  MlirType type = sh_tensor(cx, sh_i64(cx), rank, sizes);
  MlirValue r = null_value();
  for (int k = 0; k < rank; k++) {
    if (sizes[k] == 1) continue;
    MlirValue term = sh_iota(cx, type, k);
    if (stride[k] != 1)
      term =
          sh_binary(cx, "stablehlo.multiply", term, sh_scalar(cx, sh_i64(cx), (double)stride[k]));
    r = mlirValueIsNull(r) ? term : sh_binary(cx, "stablehlo.add", r, term);
  }
  return mlirValueIsNull(r) ? sh_const_splat(cx, sh_i64(cx), rank, sizes, 0) : r;
}

/* MaxPool with Indices: a reduce_window over (x, index) keeping the
 * larger value, the smaller index on ties (the first in the window, as
 * the reference scans it). Pads hold (lowest, INT64_MAX). */
static o2m_status max_pool_with_indices(lw_ctx *cx, MlirValue x, const window *w) {
  MlirType elem = sh_elem(x), i64 = sh_i64(cx);
  char attrs[1024];
  window_attrs(attrs, sizeof(attrs), w);
  MlirType results[2] = {pool_result(cx, x, elem, w), pool_result(cx, x, i64, w)};
  MlirValue ops[4] = {x, flat_indices(cx, x, lw_attr_int(cx, "storage_order", 0)),
                      sh_scalar(cx, elem, lowest(elem)), sh_scalar(cx, i64, 9.2233720368547758e18)};
  for (int i = 0; i < 4; i++)
    if (mlirValueIsNull(ops[i])) return lw_error(cx, "internal: MaxPool operands");
  MlirOperation op = lw_op(cx, "stablehlo.reduce_window", 4, ops, 2, results, attrs, 1);
  if (mlirOperationIsNull(op)) return lw_error(cx, "internal: MaxPool was not built");
  MlirType sv = sh_tensor(cx, elem, 0, NULL), si = sh_tensor(cx, i64, 0, NULL),
           args[4] = {sv, si, sv, si};
  MlirBlock body = sh_region_block(cx, op, 0, 4, args), saved = cx->block;
  cx->block = body;
  MlirValue av = mlirBlockGetArgument(body, 0), ai = mlirBlockGetArgument(body, 1);
  MlirValue bv = mlirBlockGetArgument(body, 2), bi = mlirBlockGetArgument(body, 3);
  MlirValue tie =
      sh_binary(cx, "stablehlo.and", sh_compare(cx, "EQ", av, bv), sh_compare(cx, "LT", ai, bi));
  MlirValue pick = sh_binary(cx, "stablehlo.or", sh_compare(cx, "GT", av, bv), tie);
  MlirValue r[2] = {sh_select(cx, pick, av, bv), sh_select(cx, pick, ai, bi)};
  lw_op(cx, "stablehlo.return", 2, r, 0, NULL, NULL, 0);
  cx->block = saved;
  o2m_status s = lw_set_out(cx, 0, mlirOperationGetResult(op, 0));
  return s ? s : lw_set_out(cx, 1, mlirOperationGetResult(op, 1));
}

/* Reads and checks the pool's input and window. */
static o2m_status read_pool(lw_ctx *cx, int ints_ok, window *w) {
  o2m_status s = check_inputs(cx, ints_ok);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (sh_rank(x) < 3 || sh_rank(x) > 2 + MAX_SPATIAL)
    return lw_unsupported(cx, "pooling over %d spatial axes", sh_rank(x) - 2);
  if (!lw_attr(cx, "kernel_shape")) return lw_error(cx, "no kernel_shape");
  return lw_read_fixed_window(cx, x, NULL, w);
}

o2m_status sh_lower_max_pool(lw_ctx *cx) {
  window w;
  o2m_status s = read_pool(cx, 1, &w);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (cx->node->n_outputs > 1 && lw_out_present(cx, 1)) {
    if (!sh_is_static(x)) return lw_unsupported(cx, "MaxPool's Indices with dynamic dims");
    return max_pool_with_indices(cx, x, &w);
  }
  MlirValue y =
      reduce_window(cx, x, sh_scalar(cx, sh_elem(x), lowest(sh_elem(x))), "stablehlo.maximum", &w);
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: MaxPool was not built");
  return lw_set_out(cx, 0, y);
}

/* The number of taps of each output position along axis i that fall in
 * [lo_edge, in + hi_edge) (lo_edge <= 0: -pads counted). */
static void axis_counts(const window *w, int i, int64_t lo_edge, int64_t hi_edge, double *counts) {
  for (int64_t o = 0; o < w->out[i]; o++) {
    int64_t c = 0;
    for (int64_t t = 0; t < w->k[i]; t++) {
      int64_t at = o * w->s[i] - w->pb[i] + t * w->d[i];
      c += at >= lo_edge && at < w->in[i] + hi_edge;
    }
    counts[o] = (double)c;
  }
}

/* Refuses a pool whose divisor table would hold more than MAX_DIVISORS
 * values (the product checked before it could overflow). */
static o2m_status check_divisor_count(lw_ctx *cx, const window *w) {
  int64_t total = 1;
  for (int i = 0; i < w->n; i++) {
    if (w->out[i] < 0 || (w->out[i] && total > MAX_DIVISORS / w->out[i]))
      return lw_unsupported(cx, "an average pool of more than %d output positions (its divisors are a constant)",
                            MAX_DIVISORS);
    total *= w->out[i];
  }
  return O2M_OK;
}

/* The divisor of every output position [1, 1, out...]: the product of
 * the axes' counts of taps in the input (with count_include_pad: in the
 * explicitly padded input). */
static MlirValue average_divisor(lw_ctx *cx, MlirType elem, const window *w, int include_pad) {
  int64_t total = 1, sizes[2 + MAX_SPATIAL] = {1, 1};
  for (int i = 0; i < w->n; i++) total *= w->out[i], sizes[2 + i] = w->out[i];
  double *v = o2m_arena_array(&cx->scratch, (size_t)total, sizeof(double));
  double *axis[MAX_SPATIAL];
  for (int i = 0; i < w->n; i++) {
    axis[i] = o2m_arena_array(&cx->scratch, (size_t)w->out[i], sizeof(double));
    if (!axis[i]) return null_value();
    axis_counts(w, i, include_pad ? -w->pb[i] : 0, include_pad ? w->pe[i] : 0, axis[i]);
  }
  if (!v) return null_value();
  for (int64_t f = 0; f < total; f++) {
    int64_t rest = f;
    double c = 1;
    for (int i = w->n - 1; i >= 0; i--) c *= axis[i][rest % w->out[i]], rest /= w->out[i];
    v[f] = c;
  }
  return const_floats(cx, elem, w->n + 2, sizes, v, total);
}

o2m_status sh_lower_average_pool(lw_ctx *cx) {
  window w;
  o2m_status s = read_pool(cx, 0, &w);
  if (!s) s = check_divisor_count(cx, &w);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  MlirValue sum = reduce_window(cx, x, sh_scalar(cx, sh_elem(x), 0), "stablehlo.add", &w);
  MlirValue div = average_divisor(cx, sh_elem(x), &w, lw_attr_int(cx, "count_include_pad", 0) != 0);
  MlirValue y = mlirValueIsNull(div) ? div : sh_binary(cx, "stablehlo.divide", sum, div);
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: AveragePool was not built");
  return lw_set_out(cx, 0, y);
}

/* LpPool: (sum of |x|^p over the window)^(1/p); pads add nothing. */
o2m_status sh_lower_lp_pool(lw_ctx *cx) {
  window w;
  o2m_status s = read_pool(cx, 0, &w);
  if (s) return s;
  int64_t p = lw_attr_int(cx, "p", 2);
  if (p < 1) return lw_error(cx, "LpPool's p is %lld", (long long)p);
  MlirValue x = lw_in(cx, 0), ax = sh_unary(cx, "stablehlo.abs", x);
  MlirType elem = sh_elem(x);
  MlirValue pw = p == 1   ? ax
                 : p == 2 ? sh_binary(cx, "stablehlo.multiply", x, x)
                          : sh_binary(cx, "stablehlo.power", ax, sh_scalar(cx, elem, (double)p));
  MlirValue sum = reduce_window(cx, pw, sh_scalar(cx, elem, 0), "stablehlo.add", &w);
  MlirValue y = p == 1 ? sum
                : p == 2
                    ? sh_unary(cx, "stablehlo.sqrt", sum)
                    : sh_binary(cx, "stablehlo.power", sum, sh_scalar(cx, elem, 1.0 / (double)p));
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: LpPool was not built");
  return lw_set_out(cx, 0, y);
}
