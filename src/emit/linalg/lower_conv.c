/* lower_conv.c - Linalg lowerings of the convolutions: Conv (1-D and up,
 * groups, strides, dilations, explicit pads and auto_pad, bias) and
 * ConvTranspose (the same plus output_padding and output_shape),
 * DeformConv (taps sampled at learned offsets) and CausalConvWithState (a
 * depthwise 1-D convolution over [state, input]).
 *
 * Conv pads its input with zeros (tensor.pad) and starts the accumulator
 * at the broadcast bias. Ungrouped 1-D/2-D/3-D convolutions become
 * linalg.conv_{1d_ncw_fcw,2d_nchw_fchw,3d_ncdhw_fcdhw}; the others one
 * linalg.generic over (n, g, f, out..., c, k...) with an [N, G, F/G, out...]
 * result, collapsed to [N, F, out...]:
 *   y[n, g, f, o] += x[n, g*Cg + c, o*stride + k*dilation] * w[g*Fg + f, c, k]
 * DeformConv's generic samples x in its body (tensor.extract of the
 * 2^rank neighbours). ConvTranspose is a stride-1 convolution with the kernel flipped and its
 * in/out channels swapped, over the input spread out by `stride` (zeros
 * between elements) inside a zero border: element i lands at
 * i*stride + extent - 1 - pad_begin, and the border sizes the output.
 * f16/bf16 accumulate in f32. For the JIT with oneDNN, a float32 1-D or
 * 3-D Conv and a 1-D to 3-D ConvTranspose of constant weights are calls
 * of its kernels (lw_dnnl_conv_nd).
 */
#include <stdio.h>
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_window.h"

enum { MAX_LOOPS = 4 + 2 * LW_MAX_SPATIAL };

/* One convolution as a generic: which loops read what. */
typedef struct conv_plan {
  lw_window win;
  int64_t groups, in_per_group, out_per_group;
  int transposed;         /* weight (G*Cg, Fg, k...) read flipped */
  o2m_dtype dtype, acc;
  MlirValue offset, mask; /* DeformConv: its input x is sampled, not read by a map */
} conv_plan;

/* ---- the accumulator ------------------------------------------------------------ */

typedef struct cast_user {
  o2m_dtype from, to;
} cast_user;

static o2m_status bias_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const cast_user *c = user;
  yields[0] = lw_scalar_cast(cx, args[0], c->from, c->to);
  return lw_value_status(cx, yields[0]);
}

/* A tensor of `type` (dynamic sizes in dims) holding the bias, read
 * through `bias_map` (the channel), or zeros without a bias. */
static o2m_status start_value(lw_ctx *cx, const conv_plan *p, MlirType type, const lw_ix *dims,
                              MlirValue bias, MlirAttribute bias_map, MlirValue *out) {
  if (mlirValueIsNull(bias)) {
    MlirValue d[MAX_LOOPS];
    int rank = (int)mlirShapedTypeGetRank(type);
    for (int k = 0; k < rank; k++) d[k] = lw_ix_is_const(dims[k]) ? (MlirValue){NULL} : dims[k].v;
    *out = lw_filled(cx, type, d, lw_const_scalar(cx, p->acc, 0));
    return mlirValueIsNull(*out) ? lw_error(cx, "internal: cannot fill the accumulator") : O2M_OK;
  }
  int rank = (int)mlirShapedTypeGetRank(type);
  char iters[MAX_LOOPS + 1];
  memset(iters, 'p', (size_t)rank);
  iters[rank] = 0;
  MlirValue init = lw_empty_ix(cx, type, dims);
  MlirAttribute out_map = lw_identity_map(cx, rank);
  cast_user c = {p->dtype, p->acc};
  lw_generic_spec spec = {rank, iters, 1, 1, &bias, &bias_map, &init, &out_map, bias_body, &c};
  return lw_generic(cx, &spec, out);
}

/* ---- the generic convolution ------------------------------------------------------ */

static o2m_status conv_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const conv_plan *p = user;
  o2m_dtype dts[2] = {p->acc, p->acc};
  MlirValue prod[2] = {lw_scalar_cast(cx, args[0], p->dtype, p->acc),
                       lw_scalar_cast(cx, args[1], p->dtype, p->acc)};
  if (mlirValueIsNull(prod[0]) || mlirValueIsNull(prod[1])) return lw_value_status(cx, (MlirValue){NULL});
  MlirValue sum[2] = {args[p->transposed ? 3 : 2], lw_scalar_op(cx, "Mul", dts, prod)};
  yields[0] = lw_scalar_op(cx, "Add", dts, sum);
  return lw_value_status(cx, yields[0]);
}

/* y [N, G, Fg, out...] (from `init`) += the convolution of the padded
 * input x and weight w. Loops: n g f o_1..o_s | c k_1..k_s, or for the JIT
 * (lw_ctx.for_jit) n g f c k_1..k_s o_1..o_s, so that the innermost loop
 * walks along an output row (and, at stride 1, an input row). */
static o2m_status conv_generic(lw_ctx *cx, const conv_plan *p, MlirValue x, MlirValue w,
                               MlirValue init, MlirValue *result) {
  const lw_window *win = &p->win;
  int s = win->n, n_loops = 4 + 2 * s;
  /* one input channel per group (depthwise) and a small window: the taps
   * innermost, so that LLVM unrolls them and keeps the sum in a register */
  int64_t taps = 1;
  for (int i = 0; i < s; i++) taps *= win->kernel[i];
  int rows_inside = cx->for_jit && !(p->in_per_group == 1 && taps <= 49 && !p->transposed);
  int o0 = rows_inside ? 4 + s : 3, c_loop = rows_inside ? 3 : 3 + s, k0 = c_loop + 1;
  char iters[MAX_LOOPS + 1];
  for (int l = 0; l < n_loops; l++) iters[l] = l < 3 || (l >= o0 && l < o0 + s) ? 'p' : 'r';
  iters[n_loops] = 0;
  lw_aff xm[LW_MAX_SPATIAL + 2], wm[LW_MAX_SPATIAL + 2], km[LW_MAX_SPATIAL + 1];
  xm[0] = lw_aff_dim(0);
  xm[1] = lw_aff_2(1, p->in_per_group, c_loop, 1, 0);
  if (p->transposed) { /* weight (C, Fg, k...): channel g*Cg + c, then f, flipped taps */
    wm[0] = xm[1];
    wm[1] = lw_aff_dim(2);
  } else { /* weight (F, Cg, k...) */
    wm[0] = lw_aff_2(1, p->out_per_group, 2, 1, 0);
    wm[1] = lw_aff_dim(c_loop);
  }
  for (int i = 0; i < s; i++) {
    xm[2 + i] = lw_aff_2(o0 + i, win->stride[i], k0 + i, win->dilation[i], 0);
    wm[2 + i] = p->transposed ? lw_aff_2(k0 + i, -1, -1, 0, win->kernel[i] - 1) : lw_aff_dim(k0 + i);
    km[1 + i] = lw_aff_dim(k0 + i);
  }
  km[0] = lw_aff_dim(c_loop);
  MlirValue ins[3] = {x, w};
  MlirAttribute maps[4] = {lw_aff_map(cx, n_loops, 2 + s, xm), lw_aff_map(cx, n_loops, 2 + s, wm)};
  int n_ins = 2;
  if (p->transposed) { /* the weight's map leaves c and k unbound: a [Cg, k...] operand binds them */
    int64_t shape[1 + LW_MAX_SPATIAL] = {p->in_per_group};
    memcpy(shape + 1, win->kernel, sizeof(int64_t) * (size_t)s);
    ins[n_ins] = lw_empty(cx, lw_tensor_type_of(cx, p->dtype, 1 + s, shape), NULL);
    maps[n_ins++] = lw_aff_map(cx, n_loops, 1 + s, km);
  }
  int out_exprs[3 + LW_MAX_SPATIAL];
  for (int l = 0; l < 3 + s; l++) out_exprs[l] = l < 3 ? l : o0 + l - 3;
  maps[n_ins] = lw_affine_map(cx, n_loops, 3 + s, out_exprs);
  lw_generic_spec spec = {n_loops, iters, n_ins, 1, ins, maps, &init, &maps[n_ins], conv_body, (void *)p};
  return lw_generic(cx, &spec, result);
}

/* ---- DeformConv's sampling generic -------------------------------------------------- */

static MlirValue index_to_float(lw_ctx *cx, lw_ix v, o2m_dtype to) {
  MlirValue i = lw_ix_value(cx, v);
  i = lw_op1(cx, "arith.index_cast", 1, &i, lw_type(cx, "i64"), NULL);
  return lw_scalar_cast(cx, i, O2M_DT_INT64, to);
}

static MlirValue fop(lw_ctx *cx, const conv_plan *p, const char *op, MlirValue a, MlirValue b) {
  o2m_dtype dts[2] = {p->acc, p->acc};
  MlirValue ab[2] = {a, b};
  return lw_scalar_op(cx, op, dts, ab);
}

/* x[n, ic, at...] (converted to acc), 0 where `at` is outside x */
static MlirValue sample_or_zero(lw_ctx *cx, const conv_plan *p, MlirValue x, lw_ix n, lw_ix ic, const lw_ix *at) {
  int s = p->win.n;
  MlirValue idx[2 + LW_MAX_SPATIAL] = {lw_ix_value(cx, n), lw_ix_value(cx, ic)};
  lw_ix inside = lw_ix_c(1);
  for (int i = 0; i < s; i++) {
    lw_ix last = lw_ix_bin(cx, LW_IX_SUB, p->win.in[i], lw_ix_c(1));
    inside = lw_ix_bin(cx, LW_IX_AND, inside, lw_ix_bin(cx, LW_IX_GE, at[i], lw_ix_c(0)));
    inside = lw_ix_bin(cx, LW_IX_AND, inside, lw_ix_bin(cx, LW_IX_LE, at[i], last));
    idx[2 + i] = lw_ix_value(cx, lw_ix_clamp(cx, at[i], lw_ix_c(0), last));
  }
  MlirValue v = lw_scalar_cast(cx, lw_extract(cx, x, idx), p->dtype, p->acc);
  MlirValue pick[3] = {lw_ix_value(cx, inside), v, lw_const_scalar(cx, p->acc, 0)};
  return lw_op1(cx, "arith.select", 3, pick, mlirValueGetType(v), NULL);
}

typedef struct deform_user {
  const conv_plan *p;
  MlirValue x;
} deform_user;

/* acc += w * mask * x sampled (multilinearly, zeros outside) at the tap's
 * position moved by its offset. Offsets and masks of tap k of offset group
 * og sit at channel (og * K + k) * rank + axis and og * K + k. */
static o2m_status deform_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const deform_user *u = user;
  const conv_plan *p = u->p;
  const lw_window *win = &p->win;
  int s = win->n, c_loop = 3 + s, k0 = 4 + s;
  lw_ix n = lw_ix_v(lw_loop_index(cx, 0)), g = lw_ix_v(lw_loop_index(cx, 1));
  lw_ix ic = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, g, lw_ix_c(p->in_per_group)),
                       lw_ix_v(lw_loop_index(cx, c_loop)));
  lw_ix per_offset_group = lw_ix_bin(cx, LW_IX_FLOORDIV, lw_ix_dim(cx, u->x, 1),
                                     lw_ix_c(lw_attr_int(cx, "offset_group", 1)));
  lw_ix tap = lw_ix_bin(cx, LW_IX_FLOORDIV, ic, per_offset_group), o[LW_MAX_SPATIAL];
  for (int i = 0; i < s; i++) {
    o[i] = lw_ix_v(lw_loop_index(cx, 3 + i));
    tap = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, tap, lw_ix_c(win->kernel[i])),
                    lw_ix_v(lw_loop_index(cx, k0 + i)));
  }
  MlirValue at[2 + LW_MAX_SPATIAL] = {lw_ix_value(cx, n)};
  for (int i = 0; i < s; i++) at[2 + i] = lw_ix_value(cx, o[i]);
  lw_ix lo[LW_MAX_SPATIAL];
  MlirValue frac[LW_MAX_SPATIAL];
  for (int i = 0; i < s; i++) {
    at[1] = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, tap, lw_ix_c(s)), lw_ix_c(i)));
    MlirValue off = lw_scalar_cast(cx, lw_extract(cx, p->offset, at), p->dtype, p->acc);
    lw_ix base = lw_ix_bin(cx, LW_IX_MUL, o[i], lw_ix_c(win->stride[i]));
    base = lw_ix_bin(cx, LW_IX_SUB, base, win->pad_begin[i]);
    base = lw_ix_bin(cx, LW_IX_ADD, base, lw_ix_bin(cx, LW_IX_MUL, lw_ix_v(lw_loop_index(cx, k0 + i)),
                                                  lw_ix_c(win->dilation[i])));
    MlirValue pos = fop(cx, p, "Add", index_to_float(cx, base, p->acc), off);
    MlirValue floor = lw_scalar_op(cx, "Floor", (o2m_dtype[1]){p->acc}, &pos);
    frac[i] = fop(cx, p, "Sub", pos, floor);
    lo[i] = lw_ix_v(lw_scalar_to_index(cx, floor, p->acc));
  }
  MlirValue one = lw_const_scalar(cx, p->acc, 1), sum = lw_const_scalar(cx, p->acc, 0);
  for (int corner = 0; corner < (1 << s); corner++) {
    lw_ix pt[LW_MAX_SPATIAL];
    MlirValue weight = one;
    for (int i = 0; i < s; i++) {
      int up = (corner >> i) & 1;
      pt[i] = lw_ix_bin(cx, LW_IX_ADD, lo[i], lw_ix_c(up));
      weight = fop(cx, p, "Mul", weight, up ? frac[i] : fop(cx, p, "Sub", one, frac[i]));
    }
    sum = fop(cx, p, "Add", sum, fop(cx, p, "Mul", weight, sample_or_zero(cx, p, u->x, n, ic, pt)));
  }
  if (!mlirValueIsNull(p->mask)) {
    at[1] = lw_ix_value(cx, tap);
    sum = fop(cx, p, "Mul", sum, lw_scalar_cast(cx, lw_extract(cx, p->mask, at), p->dtype, p->acc));
  }
  MlirValue w = lw_scalar_cast(cx, args[0], p->dtype, p->acc);
  yields[0] = fop(cx, p, "Add", args[1], fop(cx, p, "Mul", sum, w));
  return lw_value_status(cx, yields[0]);
}

/* y [N, G, Fg, out...] (from `init`) += the deformable convolution of x
 * (unpadded: samples outside read 0). Loops as conv_generic's; the weight
 * binds c and k. */
static o2m_status deform_generic(lw_ctx *cx, const conv_plan *p, MlirValue x, MlirValue w,
                                 MlirValue init, MlirValue *result) {
  int s = p->win.n, n_loops = 4 + 2 * s, c_loop = 3 + s;
  char iters[MAX_LOOPS + 1];
  for (int l = 0; l < n_loops; l++) iters[l] = l < c_loop ? 'p' : 'r';
  iters[n_loops] = 0;
  lw_aff wm[2 + LW_MAX_SPATIAL] = {lw_aff_2(1, p->out_per_group, 2, 1, 0), lw_aff_dim(c_loop)};
  for (int i = 0; i < s; i++) wm[2 + i] = lw_aff_dim(c_loop + 1 + i);
  int out_exprs[3 + LW_MAX_SPATIAL];
  for (int l = 0; l < 3 + s; l++) out_exprs[l] = l;
  MlirAttribute maps[2] = {lw_aff_map(cx, n_loops, 2 + s, wm), lw_affine_map(cx, n_loops, 3 + s, out_exprs)};
  deform_user u = {p, x};
  lw_generic_spec spec = {n_loops, iters, 1, 1, &w, maps, &init, &maps[1], deform_body, &u};
  return lw_generic(cx, &spec, result);
}

/* The grouped result [N, G, Fg, out...] of the generic, collapsed to
 * [N, G*Fg, out...]. */
static o2m_status grouped_conv(lw_ctx *cx, const conv_plan *p, MlirValue x, MlirValue w, MlirValue bias,
                               MlirValue *result) {
  int s = p->win.n;
  int64_t sizes[3 + LW_MAX_SPATIAL];
  lw_ix dims[3 + LW_MAX_SPATIAL];
  dims[0] = lw_ix_dim(cx, x, 0);
  dims[1] = lw_ix_c(p->groups);
  dims[2] = lw_ix_c(p->out_per_group);
  for (int i = 0; i < s; i++) dims[3 + i] = p->win.out[i];
  for (int k = 0; k < 3 + s; k++) sizes[k] = lw_ix_is_const(dims[k]) ? dims[k].c : -1;
  MlirType type = lw_tensor_type_of(cx, p->acc, 3 + s, sizes);
  lw_aff channel = lw_aff_2(1, p->out_per_group, 2, 1, 0);
  MlirValue init, y;
  o2m_status st = start_value(cx, p, type, dims, bias, lw_aff_map(cx, 3 + s, 1, &channel), &init);
  if (st || (st = (mlirValueIsNull(p->offset) ? conv_generic : deform_generic)(cx, p, x, w, init, &y))) return st;
  char attrs[256];
  int len = snprintf(attrs, sizeof(attrs), "reassociation = [[0], [1, 2]");
  for (int i = 0; i < s; i++) len += snprintf(attrs + len, sizeof(attrs) - (size_t)len, ", [%d]", 3 + i);
  snprintf(attrs + len, sizeof(attrs) - (size_t)len, "]");
  int64_t out_sizes[2 + LW_MAX_SPATIAL] = {sizes[0], p->groups * p->out_per_group};
  for (int i = 0; i < s; i++) out_sizes[2 + i] = sizes[3 + i];
  MlirType out_type = lw_tensor_type_of(cx, p->acc, 2 + s, out_sizes);
  *result = lw_op1(cx, "tensor.collapse_shape", 1, &y, out_type, attrs);
  return mlirValueIsNull(*result) ? lw_error(cx, "internal: cannot collapse the groups") : O2M_OK;
}

/* ---- Conv ---------------------------------------------------------------------------- */

static const char *const named_convs[4] = {NULL, "linalg.conv_1d_ncw_fcw", "linalg.conv_2d_nchw_fchw",
                                           "linalg.conv_3d_ncdhw_fcdhw"};

static void dense_i64(char *buf, size_t size, const char *name, int n, const int64_t *v) {
  int len = snprintf(buf, size, "%s = dense<[", name);
  for (int i = 0; i < n; i++) len += snprintf(buf + len, size - (size_t)len, "%s%lld", i ? ", " : "", (long long)v[i]);
  snprintf(buf + len, size - (size_t)len, "]> : tensor<%dxi64>", n);
}

/* An ungrouped 1-D..3-D convolution as a named op. */
static o2m_status named_conv(lw_ctx *cx, const conv_plan *p, MlirValue x, MlirValue w, MlirValue bias,
                             MlirValue *result) {
  int s = p->win.n;
  int64_t sizes[2 + LW_MAX_SPATIAL];
  lw_ix dims[2 + LW_MAX_SPATIAL];
  dims[0] = lw_ix_dim(cx, x, 0);
  dims[1] = lw_ix_dim(cx, w, 0);
  for (int i = 0; i < s; i++) dims[2 + i] = p->win.out[i];
  for (int k = 0; k < 2 + s; k++) sizes[k] = lw_ix_is_const(dims[k]) ? dims[k].c : -1;
  MlirType type = lw_tensor_type_of(cx, p->acc, 2 + s, sizes);
  MlirValue init;
  o2m_status st = start_value(cx, p, type, dims, bias, lw_affine_map(cx, 2 + s, 1, (int[]){1}), &init);
  if (st) return st;
  char strides[160], dilations[160], attrs[340];
  dense_i64(strides, sizeof(strides), "strides", s, p->win.stride);
  dense_i64(dilations, sizeof(dilations), "dilations", s, p->win.dilation);
  snprintf(attrs, sizeof(attrs), "%s, %s", strides, dilations);
  MlirValue ins[2] = {x, w};
  *result = lw_named(cx, named_convs[s], 2, ins, init, attrs);
  return mlirValueIsNull(*result) ? lw_error(cx, "internal: cannot create %s", named_convs[s]) : O2M_OK;
}

/* Reads X, W, B and the group of a Conv or ConvTranspose; the weight's
 * spatial dims (static) go to kernel. */
static o2m_status conv_operands(lw_ctx *cx, MlirValue *x, MlirValue *w, MlirValue *b, conv_plan *p,
                                int64_t *kernel) {
  *x = lw_in(cx, 0), *w = lw_in(cx, 1), *b = lw_in(cx, 2);
  memset(p, 0, sizeof(*p));
  p->dtype = lw_out_type(cx, 0)->elem;
  p->acc = lw_accumulator_dtype(p->dtype);
  if (mlirValueIsNull(*x) || mlirValueIsNull(*w) || (lw_in_present(cx, 2) && mlirValueIsNull(*b)))
    return lw_unsupported(cx, "an operand is not a ranked tensor");
  if (mlirTypeIsNull(lw_elem_type(cx, p->dtype)) || p->dtype == O2M_DT_BOOL)
    return lw_unsupported(cx, "%s of %s is not lowered", cx->node->op_type, o2m_dtype_name(p->dtype));
  for (int i = 0; i < 3; i++)
    if (lw_in_present(cx, i) && lw_in_type(cx, i)->elem != p->dtype)
      return lw_error(cx, "operands of different dtypes");
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(*x));
  if (rank < 3 || rank - 2 > LW_MAX_SPATIAL || mlirShapedTypeGetRank(mlirValueGetType(*w)) != rank)
    return lw_unsupported(cx, "input of rank %d with a weight of rank %d", rank,
                          (int)mlirShapedTypeGetRank(mlirValueGetType(*w)));
  for (int i = 0; i < rank - 2; i++) kernel[i] = lw_static_dim(*w, 2 + i);
  p->groups = lw_attr_int(cx, "group", 1);
  if (p->groups < 1) return lw_error(cx, "group %lld is not positive", (long long)p->groups);
  return O2M_OK;
}

/* ---- float32 convolutions as one BLAS product (emit.h, O2M_JIT_SGEMM) ----------------- */

static o2m_status copy_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  (void)cx, (void)user;
  yields[0] = args[0];
  return O2M_OK;
}

/* Whether each output element reads one input element at its own place
 * (1x1 kernel, stride 1, no padding): the input is then its own im2col. */
static int pointwise(const lw_window *win) {
  for (int i = 0; i < win->n; i++)
    if (win->kernel[i] != 1 || win->stride[i] != 1 || !lw_ix_is_const(win->pad_begin[i]) || win->pad_begin[i].c ||
        !lw_ix_is_const(win->pad_end[i]) || win->pad_end[i].c || !lw_ix_is_const(win->extra[i]) || win->extra[i].c)
      return 0;
  return 1;
}

/* col [C, k..., o...] = the taps x[0, c, o*stride + k*dilation] of the
 * padded input x [1, C, padded...]: loops c, k..., o... */
static MlirValue gather_taps(lw_ctx *cx, const lw_window *win, MlirValue x, const int64_t *col_shape) {
  int s = win->n, n_loops = 1 + 2 * s;
  char iters[MAX_LOOPS + 1];
  memset(iters, 'p', (size_t)n_loops);
  iters[n_loops] = 0;
  lw_aff xm[2 + LW_MAX_SPATIAL];
  xm[0] = lw_aff_const(0);
  xm[1] = lw_aff_dim(0);
  for (int i = 0; i < s; i++) xm[2 + i] = lw_aff_2(1 + s + i, win->stride[i], 1 + i, win->dilation[i], 0);
  MlirAttribute maps[2] = {lw_aff_map(cx, n_loops, 2 + s, xm), lw_identity_map(cx, n_loops)};
  MlirValue col = lw_empty(cx, lw_tensor_type_of(cx, O2M_DT_FLOAT, n_loops, col_shape), NULL);
  lw_generic_spec gather = {n_loops, iters, 1, 1, &x, &maps[0], &col, &maps[1], copy_body, NULL};
  return lw_generic(cx, &gather, &col) ? (MlirValue){NULL} : col;
}

/* An ungrouped float32 convolution of one image with static shapes as
 * im2col and a matrix product: col [C, k..., o...] gathers the padded
 * input's taps (x[c, o*stride + k*dilation]), and y [F, o...] = the bias
 * + w [F, C*k...] col [C*k..., o...], a tagged BLAS call (a pointwise
 * convolution reads x as col). *done stays 0 for other convolutions. */
static o2m_status im2col_conv(lw_ctx *cx, const conv_plan *p, MlirValue x, MlirValue w, MlirValue b,
                              MlirValue *result, int *done) {
  *done = 0;
  const lw_window *win = &p->win;
  int s = win->n;
  MlirType tx = mlirValueGetType(x), tw = mlirValueGetType(w);
  if (!(cx->for_jit & O2M_JIT_SGEMM) || p->dtype != O2M_DT_FLOAT || p->groups != 1 ||
      !mlirShapedTypeHasStaticShape(tx) || !mlirShapedTypeHasStaticShape(tw) || mlirShapedTypeGetDimSize(tx, 0) != 1)
    return O2M_OK;
  int64_t taps = 1, outs = 1, c = mlirShapedTypeGetDimSize(tx, 1), f = mlirShapedTypeGetDimSize(tw, 0);
  int64_t col_shape[1 + 2 * LW_MAX_SPATIAL], y_shape[2 + LW_MAX_SPATIAL];
  col_shape[0] = c;
  for (int i = 0; i < s; i++) {
    if (!lw_ix_is_const(win->out[i])) return O2M_OK;
    col_shape[1 + i] = win->kernel[i];
    col_shape[1 + s + i] = win->out[i].c;
    taps *= win->kernel[i];
    outs *= win->out[i].c;
  }
  int64_t flat_col[2] = {c * taps, outs}, flat_w[2] = {f, c * taps}, flat_y[2] = {f, outs};
  MlirValue col = pointwise(win) ? x : gather_taps(cx, win, x, col_shape);
  if (mlirValueIsNull(col)) return lw_error(cx, "internal: cannot gather the convolution's taps");
  MlirValue ins[2] = {lw_reshape_static(cx, w, O2M_DT_FLOAT, 2, flat_w),
                      lw_reshape_static(cx, col, O2M_DT_FLOAT, 2, flat_col)};
  if (mlirValueIsNull(ins[0]) || mlirValueIsNull(ins[1])) return lw_error(cx, "internal: cannot flatten im2col");
  lw_ix dims[2] = {lw_ix_c(f), lw_ix_c(outs)};
  MlirValue init;
  o2m_status st = start_value(cx, p, lw_tensor_type_of(cx, O2M_DT_FLOAT, 2, flat_y), dims, b,
                   lw_affine_map(cx, 2, 1, (int[]){0}), &init);
  if (st) return st;
  /* y[f, o] += w[f, t] col[t, o] */
  MlirValue y = lw_blas_product(cx, ins[0], ins[1], 0, init);
  if (mlirValueIsNull(y)) return lw_error(cx, "internal: cannot build the convolution's product");
  y_shape[0] = 1;
  y_shape[1] = f;
  for (int i = 0; i < s; i++) y_shape[2 + i] = win->out[i].c;
  *result = lw_reshape_static(cx, y, O2M_DT_FLOAT, 2 + s, y_shape);
  if (mlirValueIsNull(*result)) return lw_error(cx, "internal: cannot shape the convolution's result");
  *done = 1;
  return O2M_OK;
}

o2m_status lw_lower_conv(lw_ctx *cx) {
  MlirValue x, w, b, y;
  conv_plan p;
  int64_t kernel[LW_MAX_SPATIAL];
  o2m_status s = conv_operands(cx, &x, &w, &b, &p, kernel);
  if (s || (s = lw_window_read(cx, x, kernel, &p.win))) return s;
  int done = 0;
  if ((s = lw_dnnl_conv_nd(cx, &p.win, p.groups, 0, x, w, b, &done)) || done) return s;
  x = lw_window_pad(cx, x, &p.win, lw_const_scalar(cx, p.dtype, 0));
  int blas = 0;
  if ((s = im2col_conv(cx, &p, x, w, b, &y, &blas))) return s;
  if (blas) return lw_set_out(cx, 0, y);
  /* the JIT takes the generic (its loop order) when the weight is static */
  int generic_for_jit = cx->for_jit && lw_static_dim(w, 0) >= 0 && lw_static_dim(w, 1) >= 0;
  if (p.groups == 1 && p.win.n <= 3 && !generic_for_jit) {
    s = named_conv(cx, &p, x, w, b, &y);
  } else {
    int64_t m = lw_static_dim(w, 0);
    p.in_per_group = lw_static_dim(w, 1);
    if (m < 0 || p.in_per_group < 0 || m % p.groups)
      return lw_unsupported(cx, "grouped convolution with a weight of dynamic or uneven shape");
    p.out_per_group = m / p.groups;
    s = grouped_conv(cx, &p, x, w, b, &y);
  }
  if (!s) s = lw_convert(cx, y, p.acc, p.dtype, &y);
  return s ? s : lw_set_out(cx, 0, y);
}

/* DeformConv(X, W, offset, B?, mask?): a grouped convolution whose taps
 * sample X (zero outside, multilinear between elements) at positions
 * moved by `offset`, weighted by `mask`. */
o2m_status lw_lower_deform_conv(lw_ctx *cx) {
  MlirValue x, w, b, y;
  conv_plan p;
  int64_t kernel[LW_MAX_SPATIAL];
  o2m_status s = conv_operands(cx, &x, &w, &b, &p, kernel);
  if (s || (s = lw_window_read(cx, x, kernel, &p.win))) return s;
  b = lw_in(cx, 3);
  p.offset = lw_in(cx, 2), p.mask = lw_in(cx, 4);
  if (mlirValueIsNull(p.offset) || (lw_in_present(cx, 3) && mlirValueIsNull(b)) ||
      (lw_in_present(cx, 4) && mlirValueIsNull(p.mask)))
    return lw_unsupported(cx, "an operand is not a ranked tensor");
  for (int i = 2; i < 5; i++)
    if (lw_in_present(cx, i) && lw_in_type(cx, i)->elem != p.dtype) return lw_error(cx, "operands of different dtypes");
  if (!lw_dtype_is_float(p.dtype)) return lw_unsupported(cx, "DeformConv of %s", o2m_dtype_name(p.dtype));
  int64_t m = lw_static_dim(w, 0);
  p.in_per_group = lw_static_dim(w, 1);
  if (m < 0 || p.in_per_group < 0 || m % p.groups || lw_attr_int(cx, "offset_group", 1) < 1)
    return lw_unsupported(cx, "deformable convolution with a weight of dynamic or uneven shape");
  p.out_per_group = m / p.groups;
  s = grouped_conv(cx, &p, x, w, b, &y);
  if (!s) s = lw_convert(cx, y, p.acc, p.dtype, &y);
  return s ? s : lw_set_out(cx, 0, y);
}

/* ---- ConvTranspose ----------------------------------------------------------------------- */

/* The input spread out by the strides in a zero border, ready for a
 * stride-1 convolution with the flipped kernel whose output is win.out:
 * size out + extent - 1 per axis, element i at i*stride + extent - 1 -
 * pad_begin (elements that fall outside are cropped away). */
static MlirValue spread_input(lw_ctx *cx, const conv_plan *p, MlirValue x) {
  const lw_window *win = &p->win;
  int rank = 2 + win->n;
  lw_ix size[2 + LW_MAX_SPATIAL], lo[2 + LW_MAX_SPATIAL], count[2 + LW_MAX_SPATIAL];
  lw_ix at[2 + LW_MAX_SPATIAL], step[2 + LW_MAX_SPATIAL];
  int64_t sizes[2 + LW_MAX_SPATIAL];
  for (int k = 0; k < 2; k++)
    size[k] = count[k] = lw_ix_dim(cx, x, k), lo[k] = at[k] = lw_ix_c(0), step[k] = lw_ix_c(1);
  for (int i = 0; i < win->n; i++) {
    int64_t extent = lw_window_extent(win, i);
    lw_ix st = lw_ix_c(win->stride[i]);
    lw_ix off = lw_ix_bin(cx, LW_IX_SUB, lw_ix_c(extent - 1), win->pad_begin[i]);
    size[2 + i] = lw_ix_bin(cx, LW_IX_ADD, win->out[i], lw_ix_c(extent - 1));
    /* first and one-past-last input elements that land inside */
    lw_ix first = lw_ix_bin(cx, LW_IX_MAX, lw_ix_bin(cx, LW_IX_CEILDIV, lw_ix_bin(cx, LW_IX_SUB, lw_ix_c(0), off), st), lw_ix_c(0));
    lw_ix last = lw_ix_bin(cx, LW_IX_SUB, lw_ix_bin(cx, LW_IX_SUB, size[2 + i], lw_ix_c(1)), off);
    last = lw_ix_bin(cx, LW_IX_MIN, lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_FLOORDIV, last, st), lw_ix_c(1)), win->in[i]);
    lo[2 + i] = first;
    count[2 + i] = lw_ix_bin(cx, LW_IX_MAX, lw_ix_bin(cx, LW_IX_SUB, last, first), lw_ix_c(0));
    at[2 + i] = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, first, st), off);
    step[2 + i] = st;
  }
  for (int k = 0; k < rank; k++) sizes[k] = lw_ix_is_const(size[k]) ? size[k].c : -1;
  MlirValue d[2 + LW_MAX_SPATIAL];
  for (int k = 0; k < rank; k++) d[k] = lw_ix_is_const(size[k]) ? (MlirValue){NULL} : size[k].v;
  MlirValue zeros = lw_filled(cx, lw_tensor_type_of(cx, p->dtype, rank, sizes), d,
                              lw_const_scalar(cx, p->dtype, 0));
  for (int k = 2; k < rank; k++)
    if (lw_ix_is_const(count[k]) && count[k].c == 0) return zeros;
  MlirValue part = lw_extract_slice(cx, x, lo, count, NULL);
  return lw_insert_slice_at(cx, part, zeros, at, NULL, step);
}

o2m_status lw_lower_conv_transpose(lw_ctx *cx) {
  MlirValue x, w, b, y;
  conv_plan p;
  int64_t kernel[LW_MAX_SPATIAL];
  o2m_status s = conv_operands(cx, &x, &w, &b, &p, kernel);
  if (s || (s = lw_window_read_transposed(cx, x, kernel, &p.win))) return s;
  for (int i = 0; i < p.win.n; i++)
    if (kernel[i] != p.win.kernel[i])
      return lw_unsupported(cx, "kernel_shape differs from the weight's spatial dims");
  int64_t c = lw_static_dim(w, 0);
  p.out_per_group = lw_static_dim(w, 1);
  if (c < 0 || p.out_per_group < 0 || c % p.groups)
    return lw_unsupported(cx, "transposed convolution with a weight of dynamic or uneven shape");
  p.in_per_group = c / p.groups;
  p.transposed = 1;
  int done = 0;
  if ((s = lw_dnnl_conv_nd(cx, &p.win, p.groups, 1, x, w, b, &done)) || done) return s;
  MlirValue spread = spread_input(cx, &p, x);
  if (mlirValueIsNull(spread)) return lw_error(cx, "internal: cannot spread the input");
  for (int i = 0; i < p.win.n; i++) p.win.stride[i] = 1;
  s = grouped_conv(cx, &p, spread, w, b, &y);
  if (!s) s = lw_convert(cx, y, p.acc, p.dtype, &y);
  return s ? s : lw_set_out(cx, 0, y);
}

/* ---- CausalConvWithState -------------------------------------------------------------- */

/* x * sigmoid(x), computed in float32 as ONNX's reference does */
static o2m_status silu_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const o2m_dtype *dtype = user;
  o2m_dtype dts[2] = {O2M_DT_FLOAT, O2M_DT_FLOAT};
  MlirValue v = lw_scalar_cast(cx, args[0], *dtype, O2M_DT_FLOAT);
  if (mlirValueIsNull(v)) return lw_value_status(cx, v);
  MlirValue pair[2] = {v, lw_scalar_op(cx, "Sigmoid", dts, &v)};
  if (mlirValueIsNull(pair[1])) return lw_value_status(cx, pair[1]);
  *result = lw_scalar_cast(cx, lw_scalar_op(cx, "Mul", dts, pair), O2M_DT_FLOAT, *dtype);
  return lw_value_status(cx, *result);
}

/* CausalConvWithState(input (B, C, L), weight (C, 1, K), bias?, past_state?
 * (B, C, K-1)) -> (output (B, C, L), present_state (B, C, K-1)): the
 * depthwise convolution of [past_state or zeros, input] along L, with an
 * optional SiLU; the state is the last K-1 steps of that sequence. */
o2m_status lw_lower_causal_conv(lw_ctx *cx) {
  MlirValue x, w, b, y;
  conv_plan p;
  int64_t kernel[LW_MAX_SPATIAL];
  o2m_status s = conv_operands(cx, &x, &w, &b, &p, kernel);
  if (s) return s;
  const char *act = lw_attr_string(cx, "activation", "none");
  int silu = strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0;
  if (!silu && strcmp(act, "none")) return lw_error(cx, "unknown activation '%s'", act);
  MlirValue past = lw_in(cx, 3);
  int64_t c = lw_static_dim(w, 0);
  if (mlirShapedTypeGetRank(mlirValueGetType(x)) != 3 || kernel[0] < 1 || c < 1 || lw_static_dim(w, 1) != 1)
    return lw_unsupported(cx, "a weight that is not (C, 1, K) of static sizes");
  if (lw_in_present(cx, 3) && (mlirValueIsNull(past) || lw_in_type(cx, 3)->elem != p.dtype))
    return lw_error(cx, "past_state is not a tensor of the input's dtype");
  int64_t k = kernel[0];
  lw_ix length = lw_ix_dim(cx, x, 2);
  lw_ix dims[3] = {lw_ix_dim(cx, x, 0), lw_ix_c(c), lw_ix_bin(cx, LW_IX_ADD, length, lw_ix_c(k - 1))};
  int64_t sizes[3];
  MlirValue dyn[3];
  for (int d = 0; d < 3; d++) {
    sizes[d] = lw_ix_is_const(dims[d]) ? dims[d].c : -1;
    dyn[d] = lw_ix_is_const(dims[d]) ? (MlirValue){NULL} : dims[d].v;
  }
  MlirValue seq = lw_filled(cx, lw_tensor_type_of(cx, p.dtype, 3, sizes), dyn, lw_const_scalar(cx, p.dtype, 0));
  lw_ix at[3] = {lw_ix_c(0), lw_ix_c(0), lw_ix_c(0)};
  if (!mlirValueIsNull(past) && k > 1) seq = lw_insert_slice(cx, past, seq, at);
  at[2] = lw_ix_c(k - 1);
  seq = lw_insert_slice(cx, x, seq, at);
  p.groups = c, p.in_per_group = p.out_per_group = 1;
  p.win.n = 1, p.win.kernel[0] = k, p.win.stride[0] = p.win.dilation[0] = 1;
  p.win.in[0] = dims[2], p.win.out[0] = length;
  s = grouped_conv(cx, &p, seq, w, b, &y);
  if (!s) s = lw_convert(cx, y, p.acc, p.dtype, &y);
  if (!s && silu) s = lw_broadcast(cx, 1, &y, NULL, lw_elem_type(cx, p.dtype), silu_body, &p.dtype, &y);
  if (s || (s = lw_set_out(cx, 0, y))) return s;
  lw_ix state_at[3] = {lw_ix_c(0), lw_ix_c(0), length}, state_size[3] = {dims[0], dims[1], lw_ix_c(k - 1)};
  return lw_set_out(cx, 1, lw_extract_slice(cx, seq, state_at, state_size, NULL));
}
