/* decompose_quant.c - the quantization ops into Cast, elementwise ops,
 * Round (half to even), Clip (saturation), MatMul and Conv in int32:
 *  QuantizeLinear        y = clip(round(x / scale) + zp, range of y's type)
 *  DequantizeLinear      y = (x - zp) * scale, computed in float32 (double
 *                        for double outputs) and cast to y's type
 *  DynamicQuantizeLinear uint8 scale and zero point from min/max (with 0
 *                        included) of x, then QuantizeLinear
 *  MatMulInteger, ConvInteger  (a - a_zp) @ (b - b_zp) in int32
 *  QLinearMatMul, QLinearConv  the integer product (MatMulInteger,
 *                        a Conv in int32), scaled by a_scale * b_scale /
 *                        y_scale, then quantized
 * Scales and zero points are per tensor (scalars), per axis (1-D along
 * `axis`; per output channel for weights) or blocked (block_size since 21:
 * each entry repeated block_size times along `axis`, by a Gather with
 * constant indices). Float 8 and 4-bit float targets quantize without
 * rounding or clipping: y = cast(x / scale + zp) with the node's
 * `saturate` (the cast rounds to nearest even and saturates), and
 * dequantize as the integers do. A per-row (1-D) zero point or scale of
 * the left matrix operand is refused, since the reference and the spec
 * disagree on it.
 */
#include "transform/decompose_kit.h"

typedef struct quant_range {
  o2m_dtype dtype;
  double lo, hi;
} quant_range;

static const quant_range quant_ranges[] = {
    {O2M_DT_UINT8, 0, 255},          {O2M_DT_INT8, -128, 127},
    {O2M_DT_UINT16, 0, 65535},       {O2M_DT_INT16, -32768, 32767},
    {O2M_DT_UINT4, 0, 15},           {O2M_DT_INT4, -8, 7},
    {O2M_DT_UINT2, 0, 3},            {O2M_DT_INT2, -2, 1},
    {O2M_DT_INT32, -2147483648.0, 2147483647.0},
};

/* The float 8 and 4-bit float types quantization may target. */
static int is_small_float(o2m_dtype d) {
  return d == O2M_DT_FLOAT8E4M3FN || d == O2M_DT_FLOAT8E4M3FNUZ || d == O2M_DT_FLOAT8E5M2 ||
         d == O2M_DT_FLOAT8E5M2FNUZ || d == O2M_DT_FLOAT4E2M1;
}

static const quant_range *range_of(o2m_dtype dtype) {
  for (size_t i = 0; i < sizeof(quant_ranges) / sizeof(quant_ranges[0]); i++)
    if (quant_ranges[i].dtype == dtype) return &quant_ranges[i];
  return NULL;
}

/* How a scale or zero point maps onto x. */
typedef struct granularity {
  int axis;       /* normalised against x's rank */
  int64_t block;  /* 0: per tensor or per axis */
  int x_rank;
  int64_t x_dim;  /* x's dim at axis, -1 when unknown */
} granularity;

/* The granularity attributes of the node for input x; 0 when x's rank is
 * unknown or the axis is out of range (which a rank of 0 or 1 allows). */
static int granularity_of(o2m_rewriter *rw, const o2m_value *x, granularity *g) {
  g->x_rank = xk_rank(x);
  g->block = o2m_rw_attr_i(rw, "block_size", 0);
  g->axis = xk_axis(o2m_rw_attr_i(rw, "axis", 1), g->x_rank);
  if (g->axis < 0 && g->x_rank <= 1) g->axis = 0; /* per tensor: the axis is unused */
  g->x_dim = g->x_rank > 0 && g->axis >= 0 ? x->type.dims[g->axis].size : -1;
  return g->x_rank >= 0 && g->axis >= 0;
}

/* A scale or zero point v made to broadcast against x (NULL stays NULL). */
static o2m_value *spread(o2m_rewriter *rw, o2m_value *v, const granularity *g) {
  if (!v || xk_rank(v) <= 0) return v;
  if (!g->block) return g->x_rank > 1 && xk_rank(v) == 1 ? xk_along_axis(rw, v, g->axis, g->x_rank) : v;
  if (g->x_dim < 0 || g->x_dim > 1 << 20) return NULL;
  int64_t n = g->x_dim;
  int64_t *index = o2m_arena_array(&rw->model->arena, (size_t)n + 1, sizeof(int64_t));
  if (!index) return NULL;
  for (int64_t i = 0; i < n; i++) index[i] = i / g->block;
  o2m_value *in[2] = {v, o2m_rw_const_ints(rw, index, (int)n)};
  o2m_attr axis = o2m_rw_attr_int("axis", g->axis);
  return in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis, 1) : NULL;
}

/* clip(round(v) + zp, range) cast to the range's type, computed in `p`;
 * zp (may be NULL) already broadcast. */
static o2m_value *saturate(o2m_rewriter *rw, o2m_value *v, o2m_value *zp, const quant_range *r,
                           o2m_dtype p) {
  o2m_value *y = xk_op1(rw, "Round", v);
  if (zp) y = xk_op2(rw, "Add", y, xk_cast(rw, zp, p));
  o2m_value *in[3] = {y, xk_scalar(rw, p, r->lo), xk_scalar(rw, p, r->hi)};
  y = in[0] && in[1] && in[2] ? o2m_rw_op(rw, "Clip", 3, in, NULL, 0) : NULL;
  return xk_cast(rw, y, r->dtype);
}

/* saturate(x / scale + zp), the division in `p`. */
static o2m_value *quantize(o2m_rewriter *rw, o2m_value *x, o2m_value *scale, o2m_value *zp,
                           const quant_range *r, o2m_dtype p) {
  return saturate(rw, xk_op2(rw, "Div", xk_cast(rw, x, p), xk_cast(rw, scale, p)), zp, r, p);
}

/* The float type products and quotients are computed in for `like`. */
static o2m_dtype compute_type(o2m_dtype like) {
  return like == O2M_DT_DOUBLE ? O2M_DT_DOUBLE : O2M_DT_FLOAT;
}

/* cast(x / scale + zp) to a small float type, saturating as asked. */
static o2m_value *quantize_float(o2m_rewriter *rw, o2m_value *x, o2m_value *scale, o2m_value *zp,
                                 o2m_dtype to, o2m_dtype p) {
  o2m_value *y = xk_op2(rw, "Div", xk_cast(rw, x, p), xk_cast(rw, scale, p));
  if (zp) y = xk_op2(rw, "Add", y, xk_cast(rw, zp, p));
  o2m_attr a[2] = {o2m_rw_attr_int("to", to), o2m_rw_attr_int("saturate", o2m_rw_attr_i(rw, "saturate", 1))};
  return y ? o2m_rw_op(rw, "Cast", 1, &y, a, 2) : NULL;
}

o2m_status o2m_decompose_quantize(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *scale = o2m_rw_in(rw, 1), *zp = o2m_rw_in(rw, 2);
  o2m_dtype to = xk_elem(o2m_rw_out(rw, 0));
  const quant_range *r = range_of(to);
  o2m_dtype p = (o2m_dtype)o2m_rw_attr_i(rw, "precision", 0);
  if (!p) p = xk_elem(scale);
  granularity g;
  if (is_small_float(to) && o2m_dtype_is_float(p) && granularity_of(rw, x, &g)) {
    o2m_value *s = spread(rw, scale, &g), *z = spread(rw, zp, &g);
    if (!s || (zp && !z)) return o2m_rw_unsupported(rw, "blocked quantization needs a known dim at axis");
    return xk_bind(rw, 0, quantize_float(rw, x, s, z, to, p));
  }
  if (!r || r->dtype == O2M_DT_INT32) return o2m_rw_unsupported(rw, "the target type is not a quantized type");
  if (!o2m_dtype_is_float(p) || !granularity_of(rw, x, &g))
    return o2m_rw_unsupported(rw, "unknown scale type or input rank");
  o2m_value *s = spread(rw, scale, &g), *z = spread(rw, zp, &g);
  if (!s || (zp && !z)) return o2m_rw_unsupported(rw, "blocked quantization needs a known dim at axis");
  return xk_bind(rw, 0, quantize(rw, x, s, z, r, p));
}

o2m_status o2m_decompose_dequantize(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0), *scale = o2m_rw_in(rw, 1), *zp = o2m_rw_in(rw, 2);
  o2m_dtype out = xk_elem(o2m_rw_out(rw, 0)), p = compute_type(out);
  granularity g;
  if (!range_of(xk_elem(x)) && !is_small_float(xk_elem(x)))
    return o2m_rw_unsupported(rw, "the input is not of a quantized type");
  if (!o2m_dtype_is_float(out) || !granularity_of(rw, x, &g))
    return o2m_rw_unsupported(rw, "unknown output type or input rank");
  o2m_value *s = spread(rw, scale, &g), *z = spread(rw, zp, &g);
  if (!s || (zp && !z)) return o2m_rw_unsupported(rw, "blocked quantization needs a known dim at axis");
  o2m_value *shifted = xk_cast(rw, x, p);
  if (z) shifted = xk_op2(rw, "Sub", shifted, xk_cast(rw, z, p));
  return xk_bind(rw, 0, xk_cast(rw, xk_op2(rw, "Mul", shifted, xk_cast(rw, s, p)), out));
}

o2m_status o2m_decompose_dynamic_quantize(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_dtype f = xk_elem(x);
  if (!o2m_dtype_is_float(f)) return o2m_rw_unsupported(rw, "the input type is unknown");
  o2m_value *zero = xk_scalar(rw, f, 0.0);
  o2m_value *lo = xk_op2(rw, "Min", xk_reduce(rw, "ReduceMin", x, NULL, 0, 0), zero);
  o2m_value *hi = xk_op2(rw, "Max", xk_reduce(rw, "ReduceMax", x, NULL, 0, 0), zero);
  /* an all-zero input gets the range 1 (the reference's choice), not 0 */
  o2m_value *range = xk_where(rw, xk_op2(rw, "Equal", hi, lo), xk_scalar(rw, f, 1.0), xk_op2(rw, "Sub", hi, lo));
  o2m_value *scale = xk_op2(rw, "Div", range, xk_scalar(rw, f, 255.0));
  o2m_value *zp_in[3] = {xk_op2(rw, "Sub", zero, xk_op2(rw, "Div", lo, scale)), zero, xk_scalar(rw, f, 255.0)};
  o2m_value *zp = zp_in[0] && zp_in[2] ? xk_op1(rw, "Round", o2m_rw_op(rw, "Clip", 3, zp_in, NULL, 0)) : NULL;
  o2m_status s = xk_bind(rw, 0, quantize(rw, x, scale, zp, range_of(O2M_DT_UINT8), f));
  if (!s) s = xk_bind(rw, 1, scale);
  return s ? s : xk_bind(rw, 2, xk_cast(rw, zp, O2M_DT_UINT8));
}

/* ---- integer products ----------------------------------------------------------------- */

/* v - zp in int32 (zp may be NULL). */
static o2m_value *minus_zero_point(o2m_rewriter *rw, o2m_value *v, o2m_value *zp) {
  o2m_value *wide = xk_cast(rw, v, O2M_DT_INT32);
  return zp ? xk_op2(rw, "Sub", wide, xk_cast(rw, zp, O2M_DT_INT32)) : wide;
}

/* Non-zero when v (optional) holds more than one element or may. */
static int not_scalar(const o2m_value *v) {
  if (!v || xk_rank(v) == 0) return 0;
  int64_t dims[64];
  if (xk_rank(v) > 64 || !XK_STATIC_DIMS(v, dims)) return 1;
  int64_t n = 1;
  for (int k = 0; k < xk_rank(v); k++) n *= dims[k];
  return n != 1;
}

/* A weight zero point or scale per output channel ([M]) made to broadcast
 * against the weight (axis 0 of rank `rank`). */
static o2m_value *per_filter(o2m_rewriter *rw, o2m_value *v, int rank) {
  return v && xk_rank(v) == 1 ? xk_along_axis(rw, v, 0, rank) : v;
}

/* The Conv of ConvInteger/QLinearConv over int32 operands, with the
 * node's window attributes. */
static o2m_value *integer_conv(o2m_rewriter *rw, o2m_value *x, o2m_value *w, o2m_value *bias) {
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, NULL, 0, &n_attrs);
  o2m_value *in[3] = {x, w, bias};
  return x && w && attrs ? o2m_rw_op(rw, "Conv", bias ? 3 : 2, in, attrs, n_attrs) : NULL;
}

o2m_status o2m_decompose_matmul_integer(o2m_rewriter *rw) {
  o2m_value *a_zp = o2m_rw_in(rw, 2), *b_zp = o2m_rw_in(rw, 3);
  if (not_scalar(a_zp)) return o2m_rw_unsupported(rw, "a per-row zero point of A");
  return xk_bind(rw, 0, xk_op2(rw, "MatMul", minus_zero_point(rw, o2m_rw_in(rw, 0), a_zp),
                               minus_zero_point(rw, o2m_rw_in(rw, 1), b_zp)));
}

o2m_status o2m_decompose_conv_integer(o2m_rewriter *rw) {
  o2m_value *w = o2m_rw_in(rw, 1);
  int rank = xk_rank(w);
  if (rank < 3) return o2m_rw_unsupported(rw, "the weight rank is unknown");
  o2m_value *x = minus_zero_point(rw, o2m_rw_in(rw, 0), o2m_rw_in(rw, 2));
  w = minus_zero_point(rw, w, per_filter(rw, o2m_rw_in(rw, 3), rank));
  return xk_bind(rw, 0, integer_conv(rw, x, w, NULL));
}

/* The int32 product `acc` scaled by a_scale * b_scale / y_scale and
 * quantized with y_zp to the node's output type. */
static o2m_status requantize(o2m_rewriter *rw, o2m_value *acc, o2m_value *a_scale, o2m_value *b_scale,
                             o2m_value *y_scale, o2m_value *y_zp) {
  const quant_range *r = range_of(xk_elem(o2m_rw_out(rw, 0)));
  if (!r || r->dtype == O2M_DT_INT32) return o2m_rw_unsupported(rw, "the output type is not 8-bit");
  o2m_dtype p = compute_type(xk_elem(a_scale));
  o2m_value *factor = xk_op2(rw, "Div", xk_op2(rw, "Mul", xk_cast(rw, a_scale, p), xk_cast(rw, b_scale, p)),
                             xk_cast(rw, y_scale, p));
  return xk_bind(rw, 0, saturate(rw, xk_op2(rw, "Mul", xk_cast(rw, acc, p), factor), y_zp, r, p));
}

o2m_status o2m_decompose_qlinear_matmul(o2m_rewriter *rw) {
  o2m_value *a_scale = o2m_rw_in(rw, 1), *a_zp = o2m_rw_in(rw, 2);
  if (not_scalar(a_scale) || not_scalar(a_zp)) return o2m_rw_unsupported(rw, "per-row quantization of A");
  /* the integer product as MatMulInteger: a target that keeps it runs it
   * on its integer units, others get its decomposition below */
  o2m_value *in[4] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 3), a_zp, o2m_rw_in(rw, 5)};
  int n_in = in[3] ? 4 : in[2] ? 3 : 2;
  if (!in[2] && in[3]) in[2] = xk_scalar(rw, xk_elem(in[0]), 0), n_in = 4;
  o2m_value *acc = o2m_rw_op(rw, "MatMulInteger", n_in, in, NULL, 0);
  return requantize(rw, acc, a_scale, o2m_rw_in(rw, 4), o2m_rw_in(rw, 6), o2m_rw_in(rw, 7));
}

o2m_status o2m_decompose_qlinear_conv(o2m_rewriter *rw) {
  o2m_value *w = o2m_rw_in(rw, 3), *w_scale = o2m_rw_in(rw, 4);
  int rank = xk_rank(w);
  if (rank < 3) return o2m_rw_unsupported(rw, "the weight rank is unknown");
  o2m_value *x = minus_zero_point(rw, o2m_rw_in(rw, 0), o2m_rw_in(rw, 2));
  w = minus_zero_point(rw, w, per_filter(rw, o2m_rw_in(rw, 5), rank));
  o2m_value *acc = integer_conv(rw, x, w, o2m_rw_in(rw, 8));
  /* a per-channel weight scale applies along the output's channel axis */
  o2m_value *ws = xk_rank(w_scale) == 1 ? xk_along_axis(rw, w_scale, 1, rank) : w_scale;
  return requantize(rw, acc, o2m_rw_in(rw, 1), ws, o2m_rw_in(rw, 6), o2m_rw_in(rw, 7));
}
