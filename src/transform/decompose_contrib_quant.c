/* decompose_contrib_quant.c - onnxruntime's quantized com.microsoft ops
 * written in ONNX ops (rules.def): every quantized input dequantized,
 * the float op, the result quantized again as onnxruntime's kernels do
 * (round half to even after adding the zero point, saturate; see
 * requant), as its docs/ContribOperators.md defines the ops:
 *
 *   QLinearAdd, QLinearMul(A, A_s, A_zp, B, B_s, B_zp, C_s, C_zp)
 *   QLinearSigmoid, QLinearLeakyRelu (alpha), QLinearSoftmax (axis),
 *   QLinearGlobalAveragePool, QLinearAveragePool (X, X_s, X_zp, Y_s, Y_zp;
 *       channels_last: NHWC, through transposes)
 *   QLinearConcat(Y_s, Y_zp, X0, X0_s, X0_zp, ...)
 *   QGemm(A, a_s, a_zp, B, b_s, b_zp, C?, y_s?, y_zp?): alpha op(A) op(B)
 *       + C, C an int32 bias of scale a_s b_s alpha; float without y_s;
 *       without transA, as the scaled MatMulInteger below where the
 *       target keeps it (a stored B^T for transB)
 *   MatMulIntegerToFloat(A, B, a_s, b_s, a_zp?, b_zp?, bias?)
 *   DynamicQuantizeMatMul(A, B, b_s, b_zp?, bias?): A quantized by ONNX's
 *       DynamicQuantizeLinear first, as onnxruntime does; both as
 *       MatMulInteger scaled by a_s b_s where A's scale and zero point are
 *       one element, B is 2-D and the target keeps that MatMulInteger (as
 *       onnxruntime computes them; the JIT's integer kernel), else the
 *       dequantized operands' MatMul
 *   MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?): B's 2..8-bit
 *       blocks (block_size along K, packed low bits first) dequantized,
 *       (q - zp) * scale with the scale and zero point of k's block (k /
 *       block_size, or g_idx[k]: with float or no zero points), zp 2^(bits-1)
 *       when absent; A @ W^T + bias
 *   QuantizeLinear, DequantizeLinear of com.microsoft: ONNX's (axis kept)
 * A missing zero point is a zero of the quantized input's type. Scales
 * per tensor, or per last axis where onnxruntime allows it (B's columns).
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"
#include "util/diag.h"

/* (x - zp) * scale in float; zp NULL is zero. */
static o2m_value *dequant(o2m_rewriter *rw, o2m_value *x, o2m_value *scale, o2m_value *zp) {
  o2m_dtype f = xk_elem(scale) ? xk_elem(scale) : O2M_DT_FLOAT;
  o2m_value *v = xk_cast(rw, x, f);
  if (zp) v = xk_op2(rw, "Sub", v, xk_cast(rw, zp, f));
  return xk_op2(rw, "Mul", v, scale);
}

/* y quantized as onnxruntime's kernel for the op does it: ONNX's
 * saturate(round(y / scale) + zp), or (zp_first: its QLinearAdd, QLinearMul
 * and QLinearGlobalAveragePool kernels) saturate(round(y / scale + zp)),
 * where a tie rounds to even with the zero point added, as
 * QuantizeLinear(y / scale + zp, 1, 0). zp NULL is zero, the output then
 * of `like`'s type. */
static o2m_value *requant_as(o2m_rewriter *rw, o2m_value *y, o2m_value *scale, o2m_value *zp,
                             const o2m_value *like, int zp_first) {
  o2m_dtype q = zp ? xk_elem(zp) : xk_elem(like);
  if (!zp_first) {
    if (!zp) zp = xk_scalar(rw, q, 0);
    o2m_value *in[3] = {y, scale, zp};
    return y && zp ? o2m_rw_op(rw, "QuantizeLinear", 3, in, NULL, 0) : NULL;
  }
  o2m_value *t = xk_op2(rw, "Div", y, scale);
  if (zp) t = xk_op2(rw, "Add", t, xk_cast(rw, zp, xk_elem(scale)));
  o2m_value *in[3] = {t, xk_scalar(rw, xk_elem(scale), 1.0), xk_scalar(rw, q, 0)};
  return t && in[1] && in[2] ? o2m_rw_op(rw, "QuantizeLinear", 3, in, NULL, 0) : NULL;
}

static o2m_value *requant(o2m_rewriter *rw, o2m_value *y, o2m_value *scale, o2m_value *zp,
                          const o2m_value *like) {
  return requant_as(rw, y, scale, zp, like, 0);
}

/* ---- the QLinear family ------------------------------------------------------------ */

typedef struct qlinear_op {
  const char *op_type, *float_op;
  int n_inputs;              /* quantized inputs, each (x, scale, zp) */
  const char *const *drop;   /* node attributes the float op does not take */
  int zp_first;              /* onnxruntime rounds after adding the zero point */
} qlinear_op;

static const char *const no_drop[] = {NULL};
static const char *const pool_drop[] = {"channels_last", NULL};
static const char *const softmax_drop[] = {"opset", NULL};

static const qlinear_op qlinear_ops[] = {
    {"QLinearAdd", "Add", 2, no_drop, 1},
    {"QLinearMul", "Mul", 2, no_drop, 1},
    {"QLinearSigmoid", "Sigmoid", 1, no_drop, 0},
    {"QLinearLeakyRelu", "LeakyRelu", 1, no_drop, 0},
    {"QLinearSoftmax", "Softmax", 1, softmax_drop, 0},
    {"QLinearGlobalAveragePool", "GlobalAveragePool", 1, pool_drop, 1},
    {"QLinearAveragePool", "AveragePool", 1, pool_drop, 0},
};

o2m_status o2m_decompose_qlinear(o2m_rewriter *rw) {
  const qlinear_op *q = NULL;
  for (size_t i = 0; !q && i < sizeof(qlinear_ops) / sizeof(qlinear_ops[0]); i++)
    if (strcmp(qlinear_ops[i].op_type, rw->node->op_type) == 0) q = &qlinear_ops[i];
  if (!q) return o2m_rw_unsupported(rw, "no decomposition of this quantized op");
  int nhwc = q->drop == pool_drop && o2m_rw_attr_i(rw, "channels_last", 0);
  int rank = xk_rank(o2m_rw_in(rw, 0));
  if (nhwc && (rank < 3 || rank > 16)) return o2m_rw_unsupported(rw, "channels_last with an unknown rank");
  if (q->drop == softmax_drop && o2m_rw_attr_i(rw, "opset", 13) < 13) {
    int64_t axis = o2m_rw_attr_i(rw, "axis", -1);
    if (axis != -1 && !(rank > 0 && axis == rank - 1))
      return o2m_rw_unsupported(rw, "opset-%lld softmax semantics on axis %lld", (long long)o2m_rw_attr_i(rw, "opset", 13),
                                (long long)axis);
  }
  o2m_value *in[2];
  for (int i = 0; i < q->n_inputs; i++) {
    in[i] = dequant(rw, o2m_rw_in(rw, 3 * i), o2m_rw_in(rw, 3 * i + 1), o2m_rw_in(rw, 3 * i + 2));
    if (nhwc) in[i] = xk_channels(rw, in[i], rank, 1);
  }
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, q->drop, 0, &n_attrs);
  if (!attrs || !in[0] || (q->n_inputs > 1 && !in[1])) return xk_failed(rw);
  o2m_value *y = o2m_rw_op(rw, q->float_op, q->n_inputs, in, attrs, n_attrs);
  if (nhwc && y) y = xk_channels(rw, y, rank, 0);
  int out = 3 * q->n_inputs;
  return xk_bind(rw, 0, requant_as(rw, y, o2m_rw_in(rw, out), o2m_rw_in(rw, out + 1), o2m_rw_in(rw, 0),
                                   q->zp_first));
}

o2m_status o2m_decompose_qlinear_concat(o2m_rewriter *rw) {
  int n = (rw->node->n_inputs - 2) / 3;
  if (n < 1 || rw->node->n_inputs != 2 + 3 * n) return o2m_rw_error(rw, "inputs are not Y_scale, Y_zp and triples");
  o2m_value **parts = o2m_arena_array(&rw->model->arena, (size_t)n, sizeof(o2m_value *));
  if (!parts) return o2m_rw_error(rw, "out of memory");
  for (int i = 0; i < n; i++) {
    parts[i] = dequant(rw, o2m_rw_in(rw, 2 + 3 * i), o2m_rw_in(rw, 3 + 3 * i), o2m_rw_in(rw, 4 + 3 * i));
    if (!parts[i]) return xk_failed(rw);
  }
  o2m_attr axis = o2m_rw_attr_int("axis", o2m_rw_attr_i(rw, "axis", 0));
  o2m_value *y = o2m_rw_op(rw, "Concat", n, parts, &axis, 1);
  return xk_bind(rw, 0, requant(rw, y, o2m_rw_in(rw, 0), o2m_rw_in(rw, 1), o2m_rw_in(rw, 2)));
}

/* ---- matmuls ---------------------------------------------------------------------- */

/* MatMul of the dequantized operands plus an optional bias, as output 0. */
static o2m_status float_matmul(o2m_rewriter *rw, o2m_value *a, o2m_value *b, o2m_value *bias) {
  o2m_value *in[2] = {a, b};
  o2m_value *y = a && b ? o2m_rw_op(rw, "MatMul", 2, in, NULL, 0) : NULL;
  return xk_bind(rw, 0, bias ? xk_op2(rw, "Add", y, bias) : y);
}

/* Whether v is absent or holds one element. */
static int one_or_none(const o2m_value *v) {
  int64_t dims[8];
  if (!v) return 1;
  if (xk_rank(v) < 0 || xk_rank(v) > 8 || !XK_STATIC_DIMS(v, dims)) return 0;
  int64_t n = 1;
  for (int k = 0; k < xk_rank(v); k++) n *= dims[k];
  return n == 1;
}

/* A stored 2-D 8-bit B [N, K] as a stored [K, N] constant; NULL when B
 * is not such. */
static o2m_value *stored_transposed(o2m_rewriter *rw, o2m_value *b) {
  const o2m_tensor *t = o2m_value_stored(b);
  if (!t || t->rank != 2 || !t->data || o2m_dtype_bits(t->dtype) != 8 || t->dtype == O2M_DT_BOOL) return NULL;
  int64_t n = t->dims[0], k = t->dims[1], dims[2] = {k, n};
  o2m_tensor *out = o2m_rw_new_tensor(rw, t->dtype, 2, dims);
  if (!out) return NULL;
  uint8_t *to = (uint8_t *)(uintptr_t)out->data;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < k; j++) to[j * n + i] = t->data[i * k + j];
  return o2m_rw_const_tensor(rw, out);
}

/* (A - a_zp) (B - b_zp) a_s b_s + bias as onnxruntime computes it: the
 * integer product (MatMulInteger, exact in int32) scaled once in float,
 * for a target that keeps that MatMulInteger (its integer units). A's
 * scale and zero point must be one element each (B's: one, or one per
 * column); else NULL. */
static o2m_value *scaled_integer_product(o2m_rewriter *rw, o2m_value *a, o2m_value *b, o2m_value *a_s, o2m_value *b_s,
                                         o2m_value *a_zp, o2m_value *b_zp, o2m_value *bias, int transposed_b) {
  if (!one_or_none(a_s) || !one_or_none(a_zp) || xk_rank(b) != 2 || xk_rank(b_s) > 1 || (b_zp && xk_rank(b_zp) > 1))
    return NULL;
  o2m_value *in[4] = {a, b, a_zp, b_zp};
  /* asked with B as it is (the target judges a stored 2-D B alike either way) */
  if (!o2m_rw_target_keeps(rw, "MatMulInteger", 4, in)) return NULL; /* the float form serves it better */
  if (transposed_b && !(in[1] = stored_transposed(rw, b))) return NULL;
  if (!a_zp && b_zp) in[2] = xk_scalar(rw, xk_elem(a), 0);
  o2m_value *acc = o2m_rw_op(rw, "MatMulInteger", b_zp ? 4 : a_zp ? 3 : 2, in, NULL, 0);
  o2m_dtype f = xk_elem(a_s) ? xk_elem(a_s) : O2M_DT_FLOAT;
  o2m_value *y = xk_op2(rw, "Mul", xk_cast(rw, acc, f), xk_op2(rw, "Mul", a_s, b_s));
  return bias ? xk_op2(rw, "Add", y, bias) : y;
}

/* QGemm as written: the dequantized operands' Gemm, requantized when y_s is
 * given. */
static o2m_status float_qgemm(o2m_rewriter *rw, double alpha) {
  o2m_value *a_s = o2m_rw_in(rw, 1), *b_s = o2m_rw_in(rw, 4), *b_zp = o2m_rw_in(rw, 5);
  /* per-column scales and zero points: along B's rows when B is stored [N, K] */
  o2m_value *b_s_of_b = b_s, *b_zp_of_b = b_zp;
  if (o2m_rw_attr_i(rw, "transB", 0) && !one_or_none(b_s)) b_s_of_b = xk_unsqueeze(rw, b_s, (const int64_t[]){1}, 1);
  if (o2m_rw_attr_i(rw, "transB", 0) && !one_or_none(b_zp)) b_zp_of_b = xk_unsqueeze(rw, b_zp, (const int64_t[]){1}, 1);
  o2m_value *in[3] = {dequant(rw, o2m_rw_in(rw, 0), a_s, o2m_rw_in(rw, 2)),
                      dequant(rw, o2m_rw_in(rw, 3), b_s_of_b, b_zp_of_b), NULL};
  if (o2m_rw_in(rw, 6)) {
    o2m_value *c_scale = xk_op2(rw, "Mul", xk_op2(rw, "Mul", a_s, b_s), xk_scalar_like(rw, a_s, alpha));
    in[2] = dequant(rw, o2m_rw_in(rw, 6), c_scale, NULL);
  }
  o2m_attr attrs[3] = {o2m_rw_attr_float("alpha", (float)alpha),
                       o2m_rw_attr_int("transA", o2m_rw_attr_i(rw, "transA", 0)),
                       o2m_rw_attr_int("transB", o2m_rw_attr_i(rw, "transB", 0))};
  if (!in[0] || !in[1] || (o2m_rw_in(rw, 6) && !in[2])) return xk_failed(rw);
  o2m_value *y = o2m_rw_op(rw, "Gemm", in[2] ? 3 : 2, in, attrs, 3);
  if (!o2m_rw_in(rw, 7)) return xk_bind(rw, 0, y);
  return xk_bind(rw, 0, requant(rw, y, o2m_rw_in(rw, 7), o2m_rw_in(rw, 8), o2m_rw_in(rw, 0)));
}

/* QGemm on the integer units where the target keeps the product
 * (scaled_integer_product; transB's stored B taken as a stored B^T: an
 * 8-bit copy made at import, no float one), then alpha, C (an int32 bias
 * of scale a_s b_s alpha) and the requantization; else float_qgemm. */
o2m_status o2m_decompose_qgemm(o2m_rewriter *rw) {
  double alpha = o2m_rw_attr_f(rw, "alpha", 1.0f);
  o2m_value *a_s = o2m_rw_in(rw, 1), *b_s = o2m_rw_in(rw, 4);
  o2m_value *y = o2m_rw_attr_i(rw, "transA", 0)
                     ? NULL
                     : scaled_integer_product(rw, o2m_rw_in(rw, 0), o2m_rw_in(rw, 3), a_s, b_s, o2m_rw_in(rw, 2),
                                              o2m_rw_in(rw, 5), NULL, o2m_rw_attr_i(rw, "transB", 0) != 0);
  if (!y) return float_qgemm(rw, alpha);
  if (alpha != 1.0) y = xk_op2(rw, "Mul", y, xk_scalar_like(rw, y, alpha));
  if (o2m_rw_in(rw, 6)) {
    o2m_value *c_scale = xk_op2(rw, "Mul", xk_op2(rw, "Mul", a_s, b_s), xk_scalar_like(rw, a_s, alpha));
    y = xk_op2(rw, "Add", y, dequant(rw, o2m_rw_in(rw, 6), c_scale, NULL));
  }
  if (!y) return xk_failed(rw);
  if (!o2m_rw_in(rw, 7)) return xk_bind(rw, 0, y);
  return xk_bind(rw, 0, requant(rw, y, o2m_rw_in(rw, 7), o2m_rw_in(rw, 8), o2m_rw_in(rw, 0)));
}

o2m_status o2m_decompose_matmul_integer_to_float(o2m_rewriter *rw) {
  o2m_value *y = scaled_integer_product(rw, o2m_rw_in(rw, 0), o2m_rw_in(rw, 1), o2m_rw_in(rw, 2), o2m_rw_in(rw, 3),
                                        o2m_rw_in(rw, 4), o2m_rw_in(rw, 5), o2m_rw_in(rw, 6), 0);
  if (y) return xk_bind(rw, 0, y);
  return float_matmul(rw, dequant(rw, o2m_rw_in(rw, 0), o2m_rw_in(rw, 2), o2m_rw_in(rw, 4)),
                      dequant(rw, o2m_rw_in(rw, 1), o2m_rw_in(rw, 3), o2m_rw_in(rw, 5)), o2m_rw_in(rw, 6));
}

o2m_status o2m_decompose_dynamic_quantize_matmul(o2m_rewriter *rw) {
  o2m_value *a = o2m_rw_in(rw, 0);
  if (xk_elem(a) != O2M_DT_FLOAT) return o2m_rw_unsupported(rw, "A is not float");
  o2m_value **q = o2m_rw_node(rw, "DynamicQuantizeLinear", 1, &a, 3, NULL, 0);
  if (!q) return xk_failed(rw);
  o2m_value *y = scaled_integer_product(rw, q[0], o2m_rw_in(rw, 1), q[1], o2m_rw_in(rw, 2), q[2], o2m_rw_in(rw, 3),
                                        o2m_rw_in(rw, 4), 0);
  if (y) return xk_bind(rw, 0, y);
  return float_matmul(rw, dequant(rw, q[0], q[1], q[2]),
                      dequant(rw, o2m_rw_in(rw, 1), o2m_rw_in(rw, 2), o2m_rw_in(rw, 3)), o2m_rw_in(rw, 4));
}

/* ---- MatMulNBits ------------------------------------------------------------------ */

/* The `bits`-bit values packed low bits first in the bytes of x (uint8,
 * shape [..., m]) as uint8 [..., m * 8 / bits]. */
static o2m_value *unpack_bits(o2m_rewriter *rw, o2m_value *x, int bits, int rank, const int64_t *dims) {
  if (bits == 8) return x;
  int per_byte = 8 / bits;
  o2m_value *parts[8];
  o2m_value *mask = xk_scalar(rw, O2M_DT_UINT8, (1 << bits) - 1);
  for (int j = 0; j < per_byte; j++) {
    o2m_value *shifted = x;
    if (j) {
      o2m_attr right = o2m_rw_attr_string(rw, "direction", "RIGHT");
      o2m_value *in[2] = {x, xk_scalar(rw, O2M_DT_UINT8, j * bits)};
      shifted = o2m_rw_op(rw, "BitShift", 2, in, &right, 1);
    }
    const int64_t last[1] = {-1};
    parts[j] = xk_unsqueeze(rw, xk_op2(rw, "BitwiseAnd", shifted, mask), last, 1);
  }
  o2m_attr axis = o2m_rw_attr_int("axis", -1);
  o2m_value *stacked = o2m_rw_op(rw, "Concat", per_byte, parts, &axis, 1);
  int64_t shape[8];
  for (int k = 0; k < rank - 1; k++) shape[k] = dims[k];
  shape[rank - 1] = dims[rank - 1] * per_byte;
  return xk_reshape(rw, stacked, shape, rank);
}

/* x[:, 0:end] of a 2-D value. */
static o2m_value *columns(o2m_rewriter *rw, o2m_value *x, int64_t end) {
  const int64_t starts[1] = {0}, ends[1] = {end}, axes[1] = {1};
  o2m_value *sl[4] = {x, o2m_rw_const_ints(rw, starts, 1), o2m_rw_const_ints(rw, ends, 1),
                      o2m_rw_const_ints(rw, axes, 1)};
  return o2m_rw_op(rw, "Slice", 4, sl, NULL, 0);
}

o2m_status o2m_decompose_matmul_nbits(o2m_rewriter *rw) {
  int64_t k = o2m_rw_attr_i(rw, "K", 0), n = o2m_rw_attr_i(rw, "N", 0);
  int64_t bits = o2m_rw_attr_i(rw, "bits", 4), block = o2m_rw_attr_i(rw, "block_size", 0);
  if (k <= 0 || n <= 0 || block < 16 || (block & (block - 1)))
    return o2m_rw_error(rw, "K, N must be positive and block_size a power of two >= 16");
  if (bits != 2 && bits != 4 && bits != 8) return o2m_rw_unsupported(rw, "%lld-bit weights", (long long)bits);
  o2m_value *b = o2m_rw_in(rw, 1), *scales = o2m_rw_in(rw, 2), *zp = o2m_rw_in(rw, 3), *g_idx = o2m_rw_in(rw, 4);
  int64_t n_blocks = (k + block - 1) / block, blob = block * bits / 8;
  if (xk_elem(b) != O2M_DT_UINT8) return o2m_rw_unsupported(rw, "B is not uint8");
  if (g_idx && zp && xk_elem(zp) == O2M_DT_UINT8)
    return o2m_rw_unsupported(rw, "g_idx with packed uint8 zero points (onnxruntime reads them in another order)");
  /* q: (N, K) */
  const int64_t b_shape[3] = {n, n_blocks, blob}, flat[2] = {n, n_blocks * block};
  o2m_value *q = xk_reshape(rw, unpack_bits(rw, xk_reshape(rw, b, b_shape, 3), (int)bits, 3, b_shape), flat, 2);
  if (n_blocks * block != k) q = columns(rw, q, k);
  /* scales and zero points per block: (N, n_blocks) */
  o2m_dtype f = xk_elem(scales);
  const int64_t per_block[2] = {n, n_blocks};
  o2m_value *s2 = xk_reshape(rw, scales, per_block, 2), *zero;
  if (!zp) {
    zero = xk_scalar(rw, f, (double)(1 << (bits - 1)));
  } else if (xk_elem(zp) == O2M_DT_UINT8) {
    const int64_t zp_shape[2] = {n, (n_blocks * bits + 7) / 8};
    zero = xk_cast(rw, columns(rw, unpack_bits(rw, xk_reshape(rw, zp, zp_shape, 2), (int)bits, 2, zp_shape), n_blocks), f);
  } else {
    zero = xk_reshape(rw, zp, per_block, 2);
  }
  /* the block of each k: k / block_size, or g_idx[k] */
  o2m_value *blk = g_idx ? xk_cast(rw, g_idx, O2M_DT_INT64) : NULL;
  if (!blk) {
    int64_t *ids = o2m_arena_array(&rw->model->arena, (size_t)k, sizeof(int64_t));
    if (!ids) return o2m_rw_error(rw, "out of memory");
    for (int64_t i = 0; i < k; i++) ids[i] = i / block;
    blk = o2m_rw_const_ints(rw, ids, (int)k);
  }
  o2m_attr axis = o2m_rw_attr_int("axis", 1);
  o2m_value *sg[2] = {s2, blk}, *zg[2] = {zero, blk};
  o2m_value *scale_k = o2m_rw_op(rw, "Gather", 2, sg, &axis, 1);
  o2m_value *zero_k = zp ? o2m_rw_op(rw, "Gather", 2, zg, &axis, 1) : zero;
  o2m_value *w = xk_op2(rw, "Mul", xk_op2(rw, "Sub", xk_cast(rw, q, f), zero_k), scale_k); /* (N, K) */
  const int64_t perm[2] = {1, 0};
  w = xk_cast(rw, xk_transpose(rw, w, perm, 2), xk_elem(o2m_rw_in(rw, 0)));
  return float_matmul(rw, o2m_rw_in(rw, 0), w, o2m_rw_in(rw, 5));
}

/* ---- com.microsoft QuantizeLinear / DequantizeLinear ---------------------------- */

/* onnxruntime's QuantizeLinear / DequantizeLinear(x, scale, zero_point?)
 * with attribute axis (and no block forms): ONNX's op of the same name. */
o2m_status o2m_decompose_ms_quant_linear(o2m_rewriter *rw) {
  o2m_attr axis = o2m_rw_attr_int("axis", o2m_rw_attr_i(rw, "axis", 1));
  o2m_value *in[3] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 1), o2m_rw_in(rw, 2)};
  int n = in[2] ? 3 : 2;
  if (!in[2] && strcmp(rw->node->op_type, "QuantizeLinear") == 0) /* the output type is uint8 */
    in[2] = xk_scalar(rw, O2M_DT_UINT8, 0), n = 3;
  return xk_bind(rw, 0, o2m_rw_op(rw, rw->node->op_type, n, in, &axis, 1));
}
