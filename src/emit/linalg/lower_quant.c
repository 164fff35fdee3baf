/* lower_quant.c - the JIT's quantized ops as calls of the runtime's
 * quantized kernels (emit.h, O2M_JIT_QUANT), left as written by the
 * transform layer (lw_jit_keeps_quant says which nodes):
 *
 *   com.microsoft MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?) on
 *   float32 (g_idx with float or no zero points): Y = one call of
 *   O2M_MATMUL_NBITS_CALL on the buffers of A, the packed B, the scales,
 *   the zero points, the bias and g_idx (src/runtime/rt_nbits.c), so the
 *   weights stay packed (the float scales, zero points and bias as they
 *   lie: the kernel reads them at any address). Every other form (float16,
 *   g_idx with packed zero points) and every module not for the JIT takes
 *   the float decomposition (src/transform/decompose_contrib_quant.c).
 *
 *   QLinearConv(x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp, B?), 2-D, on 8-bit
 *   NCHW tensors with int8 weights of zero points 0 and known scales and
 *   zero points (per tensor; w_s per output channel too), with oneDNN
 *   there (O2M_JIT_DNNL): one call of O2M_QCONV_CALL (src/runtime/
 *   rt_qconv.c). The shared layer's QDQ fusion (fuse_qdq.c) makes such
 *   nodes of DequantizeLinear -> Conv -> QuantizeLinear when the target
 *   keeps them: it asks with the QuantizeLinear as a probe (its inputs
 *   are not the op's), which is kept, and the node it makes is judged on
 *   its own; one not kept takes the integer decomposition. The JIT's
 *   channels-last layout (layout_channels_last.c) makes it a com.microsoft
 *   NhwcQLinearConv, the same with X and Y [N, H, W, C].
 *
 *   MatMulInteger(A, B, a_zp?, b_zp?) with A [..., K] 8-bit, B a stored
 *   [K, N] int8 of zero point 0 or uint8 of zero point 128 and A's zero
 *   point one element (dynamic quantization's, known at run time), with
 *   oneDNN there: one call of O2M_QMATMUL_CALL (rt_qmatmul.c).
 *
 *   ConvInteger(x, w, x_zp?, w_zp?), 2-D, on static 8-bit NCHW x, int8 w
 *   of zero point 0, x's zero point one element (known at run time), with
 *   oneDNN there: one call of O2M_CONV_INTEGER_CALL (rt_qconv.c: oneDNN's
 *   int8 convolution with a runtime source zero point, y the int32 sums).
 *
 *   DynamicQuantizeLinear(x) on float32: one call of O2M_DYNQUANT_CALL
 *   (rt_dynquant.c) writing y and the 0-d scale and zero point.
 *
 *   QLinearMatMul is never kept, but QDQ's MatMul (DequantizeLinear ->
 *   MatMul -> QuantizeLinear) is fused into one where its product is the
 *   kernel's: its decomposition (decompose_quant.c) writes MatMulInteger,
 *   kept as above, and the requantization.
 */
#include <string.h>

#include "emit/emit.h"
#include "emit/linalg/lower.h"
#include "infer/infer.h"
#include "runtime/rt_internal.h"

enum { A, B, SCALES, ZERO_POINTS, G_IDX, BIAS };
/* ConvInteger's and MatMulInteger's kernels: x, w, x's zero point, y, params */
#define PRODUCT_SIGNATURE "(memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi32>, memref<*xi64>) -> ()"
enum { HAS_ZP_PACKED = 1, HAS_ZP_FLOAT = 2, HAS_BIAS = 4, HAS_G_IDX = 8 }; /* rt_abi.h's flags */

static const o2m_value *input(const o2m_node *n, int i) { return i < n->n_inputs ? n->inputs[i] : NULL; }

static int64_t attr_int(const o2m_node *n, const char *name, int64_t dflt) {
  const o2m_attr *a = o2m_node_attr(n, name);
  return a && a->type == O2M_ATTR_INT ? a->i : dflt;
}

static int elem_is(const o2m_value *v, o2m_dtype dt) { return v && v->type.kind == O2M_TYPE_TENSOR && v->type.elem == dt; }

/* B's dims are [N, blocks, block_size * bits / 8]. */
static int packed_shape(const o2m_value *b, int64_t n, int64_t blocks, int64_t blob) {
  const int64_t want[3] = {n, blocks, blob};
  if (b->type.rank != 3) return 0;
  for (int k = 0; k < 3; k++)
    if (b->type.dims[k].size != want[k]) return 0;
  return 1;
}

static int keeps_matmul_nbits(const o2m_node *n) {
  int64_t k = attr_int(n, "K", 0), cols = attr_int(n, "N", 0), bits = attr_int(n, "bits", 4);
  int64_t block = attr_int(n, "block_size", 0);
  if (k <= 0 || cols <= 0 || (bits != 2 && bits != 4 && bits != 8) || block < 16 || (block & (block - 1))) return 0;
  const o2m_value *zp = input(n, ZERO_POINTS), *bias = input(n, BIAS), *g_idx = input(n, G_IDX);
  /* g_idx: [K] int32, with float or no zero points (as the decomposition) */
  if (g_idx && (!elem_is(g_idx, O2M_DT_INT32) || g_idx->type.rank != 1 || g_idx->type.dims[0].size != k ||
                (zp && !elem_is(zp, O2M_DT_FLOAT))))
    return 0;
  return elem_is(input(n, A), O2M_DT_FLOAT) && elem_is(input(n, B), O2M_DT_UINT8) &&
         packed_shape(input(n, B), cols, (k + block - 1) / block, block * bits / 8) &&
         elem_is(input(n, SCALES), O2M_DT_FLOAT) &&
         (!zp || elem_is(zp, O2M_DT_UINT8) || elem_is(zp, O2M_DT_FLOAT)) && (!bias || elem_is(bias, O2M_DT_FLOAT)) &&
         n->n_outputs <= 1; /* none: fuse_dq_matmul.c's probe */
}

/* ---- QLinearConv ------------------------------------------------------------------- */

enum { QX, QX_S, QX_ZP, QW, QW_S, QW_ZP, QY_S, QY_ZP, QB };

static const o2m_tensor *known(const o2m_value *v) { return v ? (v->known ? v->known : v->init) : NULL; }

static int is_8bit(const o2m_value *v) { return elem_is(v, O2M_DT_UINT8) || elem_is(v, O2M_DT_INT8); }

/* A known scale (or zero point: absent is 0) of count 1, or of `count`. */
static int known_of(const o2m_value *v, int64_t count, int absent_ok) {
  const o2m_tensor *t = known(v);
  if (!v) return absent_ok;
  return t && t->data && (t->count == 1 || t->count == count);
}

static int all_zero(const o2m_value *v) {
  const o2m_tensor *t = known(v);
  if (!v) return 1;
  for (int64_t i = 0; t && t->data && i < t->count; i++)
    if (o2m_tensor_get_float(t, i) != 0) return 0;
  return t && t->data;
}

static int static_4d(const o2m_value *v) {
  if (!v || v->type.rank != 4) return 0;
  for (int k = 0; k < 4; k++)
    if (v->type.dims[k].size < 0) return 0;
  return 1;
}

/* The window params of a 2-D convolution node (QC_STRIDE, QC_PAD,
 * QC_DILATION, QC_GROUPS); 0 when it is not 2-D. */
static int window_params(lw_ctx *cx, int64_t *p) {
  if (!lw_attr_ints_or(cx, "strides", 2, 1, p + QC_STRIDE) || !lw_attr_ints_or(cx, "pads", 4, 0, p + QC_PAD) ||
      !lw_attr_ints_or(cx, "dilations", 2, 1, p + QC_DILATION))
    return 0;
  p[QC_GROUPS] = lw_attr_int(cx, "group", 1);
  return 1;
}

/* No auto_pad other than NOTSET: the pads as written. */
static int explicit_pads(const o2m_node *n) {
  const o2m_attr *pad = o2m_node_attr(n, "auto_pad");
  return !pad || pad->type != O2M_ATTR_STRING || (pad->s.len == 6 && memcmp(pad->s.ptr, "NOTSET", 6) == 0);
}

/* Also asked of fuse_qdq's probe (no outputs: y's type is y_zp's). */
static int keeps_qlinear_conv(const o2m_node *n) {
  const o2m_value *x = input(n, QX), *w = input(n, QW), *y = n->n_outputs == 1 ? n->outputs[0] : NULL;
  if (n->n_outputs == 0) y = input(n, QY_ZP);
  if (!static_4d(x) || !static_4d(w) || !y || (n->n_outputs && !static_4d(y)) || !is_8bit(x) ||
      !elem_is(w, O2M_DT_INT8) || !is_8bit(y))
    return 0;
  int64_t f = w->type.dims[0].size;
  return explicit_pads(n) && known_of(input(n, QX_S), 1, 0) && known_of(input(n, QX_ZP), 1, 1) && known_of(input(n, QW_S), f, 0) &&
         all_zero(input(n, QW_ZP)) && known_of(input(n, QY_S), 1, 0) && known_of(input(n, QY_ZP), 1, 1) &&
         (!input(n, QB) || elem_is(input(n, QB), O2M_DT_INT32));
}

static int64_t float_bits(double v) {
  float f = (float)v;
  int64_t bits = 0;
  memcpy(&bits, &f, sizeof(f));
  return bits;
}

o2m_status lw_lower_qlinear_conv(lw_ctx *cx) {
  const o2m_node *n = cx->node;
  if (!keeps_qlinear_conv(n) || n->n_outputs != 1) return lw_unsupported(cx, "a QLinearConv the kernel does not take");
  int64_t p[QC_COUNT] = {0, input(n, QB) != NULL};
  if (!window_params(cx, p)) return lw_unsupported(cx, "a QLinearConv that is not 2-D");
  p[QC_X_SIGNED] = elem_is(input(n, QX), O2M_DT_INT8);
  p[QC_Y_SIGNED] = elem_is(n->outputs[0], O2M_DT_INT8);
  p[QC_X_ZP] = input(n, QX_ZP) ? (int64_t)o2m_tensor_get_float(known(input(n, QX_ZP)), 0) : 0;
  p[QC_Y_ZP] = input(n, QY_ZP) ? (int64_t)o2m_tensor_get_float(known(input(n, QY_ZP)), 0) : 0;
  p[QC_X_SCALE] = float_bits(o2m_tensor_get_float(known(input(n, QX_S)), 0));
  p[QC_Y_SCALE] = float_bits(o2m_tensor_get_float(known(input(n, QY_S)), 0));
  p[QC_NHWC] = strcmp(n->op_type, "NhwcQLinearConv") == 0; /* layout_channels_last.c's: X, Y [N, H, W, C] */
  const o2m_type *yt = lw_out_type(cx, 0);
  MlirType y_type = lw_tensor_type(cx, yt), i8 = lw_elem_type(cx, O2M_DT_INT8);
  int64_t sizes[4];
  for (int k = 0; k < 4; k++) sizes[k] = yt->dims[k].size;
  static const char i8_any[] = "memref<*xi8>", f32_any[] = "memref<*xf32>", i32_any[] = "memref<*xi32>",
                    i64_any[] = "memref<*xi64>";
  MlirValue y = lw_kernel_result(cx, i8, 4, sizes, NULL);
  MlirValue bias = input(n, QB) ? lw_kernel_operand(cx, lw_in(cx, QB), i32_any) : lw_kernel_result(cx, lw_type(cx, "i32"), 1, (int64_t[]){1}, NULL);
  if (!input(n, QB) && !mlirValueIsNull(bias)) bias = lw_op1(cx, "memref.cast", 1, &bias, lw_type(cx, i32_any), NULL);
  MlirValue args[6] = {lw_kernel_operand(cx, lw_in(cx, QX), i8_any), lw_kernel_operand(cx, lw_in(cx, QW), i8_any),
                       lw_kernel_operand(cx, lw_in(cx, QW_S), f32_any), bias,
                       mlirValueIsNull(y) ? y : lw_op1(cx, "memref.cast", 1, &y, lw_type(cx, i8_any), NULL),
                       lw_kernel_operand(cx, lw_const_i64_tensor(cx, p, QC_COUNT), i64_any)};
  for (int i = 0; i < 6; i++)
    if (mlirValueIsNull(args[i])) return lw_error(cx, "internal: cannot pass QLinearConv's operands");
  lw_declare_kernel(cx, O2M_QCONV_CALL,
                    "(memref<*xi8>, memref<*xi8>, memref<*xf32>, memref<*xi32>, memref<*xi8>, memref<*xi64>) -> ()");
  if (mlirOperationIsNull(lw_op(cx, "func.call", 6, args, 0, NULL, "callee = @" O2M_QCONV_CALL, 0)))
    return lw_error(cx, "internal: cannot call the 8-bit convolution kernel");
  MlirValue out = lw_op1(cx, "bufferization.to_tensor", 1, &y, y_type, "restrict, writable");
  return mlirValueIsNull(out) ? lw_error(cx, "internal: cannot take QLinearConv's result") : lw_set_out(cx, 0, out);
}

/* ---- ConvInteger ---------------------------------------------------------------------- */

enum { CI_X, CI_W, CI_X_ZP, CI_W_ZP };

static int keeps_conv_integer(const o2m_node *n) {
  const o2m_value *x = input(n, CI_X), *w = input(n, CI_W), *x_zp = input(n, CI_X_ZP);
  return n->n_outputs == 1 && static_4d(x) && static_4d(w) && static_4d(n->outputs[0]) && is_8bit(x) &&
         elem_is(w, O2M_DT_INT8) && elem_is(n->outputs[0], O2M_DT_INT32) && all_zero(input(n, CI_W_ZP)) &&
         (!x_zp || (x_zp->type.rank == 0 || (x_zp->type.rank == 1 && x_zp->type.dims[0].size == 1))) &&
         explicit_pads(n);
}

o2m_status lw_lower_conv_integer(lw_ctx *cx) {
  const o2m_node *n = cx->node;
  if (!keeps_conv_integer(n)) return lw_unsupported(cx, "a ConvInteger the kernel does not take");
  int64_t p[QC_COUNT] = {0};
  if (!window_params(cx, p)) return lw_unsupported(cx, "a ConvInteger that is not 2-D");
  p[QC_X_SIGNED] = elem_is(input(n, CI_X), O2M_DT_INT8);
  p[QC_X_ZP] = input(n, CI_X_ZP) != NULL; /* given per call */
  p[QC_Y_INT32] = 1;
  const o2m_type *yt = lw_out_type(cx, 0);
  MlirType i32 = lw_type(cx, "i32");
  int64_t sizes[4];
  for (int k = 0; k < 4; k++) sizes[k] = yt->dims[k].size;
  static const char i8_any[] = "memref<*xi8>", i32_any[] = "memref<*xi32>", i64_any[] = "memref<*xi64>";
  MlirValue y = lw_kernel_result(cx, i32, 4, sizes, NULL);
  MlirValue x_buf = lw_kernel_operand(cx, lw_in(cx, CI_X), i8_any);
  MlirValue args[5] = {x_buf, lw_kernel_operand(cx, lw_in(cx, CI_W), i8_any),
                       input(n, CI_X_ZP) ? lw_kernel_operand(cx, lw_in(cx, CI_X_ZP), i8_any) : x_buf,
                       mlirValueIsNull(y) ? y : lw_op1(cx, "memref.cast", 1, &y, lw_type(cx, i32_any), NULL),
                       lw_kernel_operand(cx, lw_const_i64_tensor(cx, p, QC_COUNT), i64_any)};
  return lw_call_kernel_for_out(cx, O2M_CONV_INTEGER_CALL, PRODUCT_SIGNATURE, 5, args, y, lw_tensor_type(cx, yt),
                                "ConvInteger");
}

/* ---- MatMulInteger ------------------------------------------------------------------- */

/* A [..., K] 8-bit, B [K, N] a stored int8 tensor of zero point 0 or uint8
 * of zero point 128 (oneDNN's form; per column, all alike), A's zero point one element (a value
 * known at run time: dynamic quantization's). Operands at a, b, a_zp,
 * b_zp of n (MatMulInteger's 0..3; QLinearMatMul's 0, 3, 2, 5). */
static int product_operands(const o2m_node *n, int a_at, int b_at, int a_zp_at, int b_zp_at) {
  const o2m_value *a = input(n, a_at), *b = input(n, b_at), *a_zp = input(n, a_zp_at), *b_zp = input(n, b_zp_at);
  const o2m_tensor *bt = o2m_value_stored(b), *bz = known(b_zp);
  if (!is_8bit(a) || a->type.rank < 2 || a->type.dims[a->type.rank - 1].size < 0 || !bt || bt->rank != 2 ||
      !is_8bit(b))
    return 0;
  if (a_zp && (a_zp->type.rank < 0 || (a_zp->type.rank == 1 && a_zp->type.dims[0].size != 1) || a_zp->type.rank > 1))
    return 0;
  double want = elem_is(b, O2M_DT_UINT8) ? 128 : 0;
  if (!b_zp) return want == 0;
  if (!bz || !bz->data || bz->count < 1) return 0;
  for (int64_t i = 0; i < bz->count; i++) /* per tensor, or per column all alike */
    if (o2m_tensor_get_float(bz, i) != want) return 0;
  return 1;
}

/* Also asked before a rule writes one (no outputs). */
static int keeps_matmul_integer(const o2m_node *n) {
  return (n->n_outputs == 0 || (n->n_outputs == 1 && elem_is(n->outputs[0], O2M_DT_INT32))) &&
         product_operands(n, 0, 1, 2, 3);
}

o2m_status lw_lower_matmul_integer(lw_ctx *cx) {
  const o2m_node *n = cx->node;
  if (!keeps_matmul_integer(n)) return lw_unsupported(cx, "a MatMulInteger the kernel does not take");
  MlirValue a = lw_in(cx, 0);
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(a));
  const o2m_tensor *bt = o2m_value_stored(input(n, 1));
  int64_t p[QM_COUNT] = {0, elem_is(input(n, 0), O2M_DT_INT8), elem_is(input(n, 1), O2M_DT_INT8),
                         elem_is(input(n, 1), O2M_DT_UINT8) ? 128 : 0, input(n, 2) != NULL};
  int64_t sizes[O2M_MAX_RANK];
  MlirValue dims[O2M_MAX_RANK];
  if (rank > O2M_MAX_RANK) return lw_unsupported(cx, "rank above %d", O2M_MAX_RANK);
  for (int d = 0; d < rank; d++) {
    sizes[d] = d == rank - 1 ? bt->dims[1] : mlirShapedTypeGetDimSize(mlirValueGetType(a), d);
    dims[d] = mlirShapedTypeIsDynamicSize(sizes[d]) ? lw_dim(cx, a, d) : (MlirValue){NULL};
  }
  static const char i8_any[] = "memref<*xi8>", i32_any[] = "memref<*xi32>", i64_any[] = "memref<*xi64>";
  MlirType i32 = lw_type(cx, "i32");
  MlirValue y = lw_kernel_result(cx, i32, rank, sizes, dims);
  MlirValue a_buf = lw_kernel_operand(cx, a, i8_any);
  MlirValue args[5] = {a_buf, lw_kernel_operand(cx, lw_in(cx, 1), i8_any),
                       input(n, 2) ? lw_kernel_operand(cx, lw_in(cx, 2), i8_any) : a_buf,
                       mlirValueIsNull(y) ? y : lw_op1(cx, "memref.cast", 1, &y, lw_type(cx, i32_any), NULL),
                       lw_kernel_operand(cx, lw_const_i64_tensor(cx, p, QM_COUNT), i64_any)};
  return lw_call_kernel_for_out(cx, O2M_QMATMUL_CALL, PRODUCT_SIGNATURE, 5, args, y,
                                mlirRankedTensorTypeGet(rank, sizes, i32, mlirAttributeGetNull()), "MatMulInteger");
}

/* ---- DynamicQuantizeLinear ----------------------------------------------------------- */

static int keeps_dynamic_quantize(const o2m_node *n) {
  const o2m_value *x = input(n, 0);
  if (!elem_is(x, O2M_DT_FLOAT) || x->type.rank < 0 || n->n_outputs != 3) return 0;
  for (int i = 0; i < 3; i++)
    if (!n->outputs[i]) return 0;
  return 1;
}

o2m_status lw_lower_dynamic_quantize(lw_ctx *cx) {
  if (!keeps_dynamic_quantize(cx->node)) return lw_unsupported(cx, "a DynamicQuantizeLinear the kernel does not take");
  MlirValue x = lw_in(cx, 0);
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(x));
  if (rank > O2M_MAX_RANK) return lw_unsupported(cx, "rank above %d", O2M_MAX_RANK);
  int64_t sizes[O2M_MAX_RANK];
  MlirValue dims[O2M_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    sizes[d] = mlirShapedTypeGetDimSize(mlirValueGetType(x), d);
    dims[d] = mlirShapedTypeIsDynamicSize(sizes[d]) ? lw_dim(cx, x, d) : (MlirValue){NULL};
  }
  static const char f32_any[] = "memref<*xf32>", i8_any[] = "memref<*xi8>";
  MlirType i8 = lw_elem_type(cx, O2M_DT_UINT8), f32 = lw_elem_type(cx, O2M_DT_FLOAT);
  MlirValue bufs[3] = {lw_kernel_result(cx, i8, rank, sizes, dims), lw_kernel_result(cx, f32, 0, NULL, NULL),
                       lw_kernel_result(cx, i8, 0, NULL, NULL)};
  const char *kinds[3] = {i8_any, f32_any, i8_any};
  MlirValue args[4] = {lw_kernel_operand(cx, x, f32_any)};
  for (int i = 0; i < 3; i++)
    args[i + 1] = mlirValueIsNull(bufs[i]) ? bufs[i] : lw_op1(cx, "memref.cast", 1, &bufs[i], lw_type(cx, kinds[i]), NULL);
  for (int i = 0; i < 4; i++)
    if (mlirValueIsNull(args[i])) return lw_error(cx, "internal: cannot pass DynamicQuantizeLinear's operands");
  lw_declare_kernel(cx, O2M_DYNQUANT_CALL, "(memref<*xf32>, memref<*xi8>, memref<*xf32>, memref<*xi8>) -> ()");
  if (mlirOperationIsNull(lw_op(cx, "func.call", 4, args, 0, NULL, "callee = @" O2M_DYNQUANT_CALL, 0)))
    return lw_error(cx, "internal: cannot call the dynamic quantization kernel");
  MlirType types[3] = {mlirRankedTensorTypeGet(rank, sizes, i8, mlirAttributeGetNull()),
                       mlirRankedTensorTypeGet(0, NULL, f32, mlirAttributeGetNull()),
                       mlirRankedTensorTypeGet(0, NULL, i8, mlirAttributeGetNull())};
  for (int i = 0; i < 3; i++) {
    MlirValue out = lw_op1(cx, "bufferization.to_tensor", 1, &bufs[i], types[i], "restrict, writable");
    o2m_status s = mlirValueIsNull(out) ? lw_error(cx, "internal: cannot take DynamicQuantizeLinear's results")
                                        : lw_set_out(cx, i, out);
    if (s) return s;
  }
  return O2M_OK;
}

int lw_jit_keeps_quant(int for_jit, const o2m_node *n) {
  if (!(for_jit & O2M_JIT_QUANT)) return 0;
  if (!n->domain[0] && strcmp(n->op_type, "QLinearConv") == 0)
    return (for_jit & O2M_JIT_DNNL) && keeps_qlinear_conv(n);
  if (!n->domain[0] && strcmp(n->op_type, "MatMulInteger") == 0)
    return (for_jit & O2M_JIT_DNNL) && keeps_matmul_integer(n);
  if (!n->domain[0] && strcmp(n->op_type, "ConvInteger") == 0) return (for_jit & O2M_JIT_DNNL) && keeps_conv_integer(n);
  if (!n->domain[0] && strcmp(n->op_type, "DynamicQuantizeLinear") == 0) return keeps_dynamic_quantize(n);
  /* QDQ's MatMul: fused (fuse_qdq asks with no outputs) when its product
   * can be the kernel's, then never kept: it decomposes into MatMulInteger
   * (kept) and the requantization */
  if (!n->domain[0] && strcmp(n->op_type, "QLinearMatMul") == 0)
    return (for_jit & O2M_JIT_DNNL) && n->n_outputs == 0 && product_operands(n, 0, 3, 2, 5);
  return strcmp(n->domain, "com.microsoft") == 0 && strcmp(n->op_type, "MatMulNBits") == 0 && keeps_matmul_nbits(n);
}

o2m_status lw_lower_matmul_nbits(lw_ctx *cx) {
  MlirValue a = lw_in(cx, A), b = lw_in(cx, B), scales = lw_in(cx, SCALES), zp = lw_in(cx, ZERO_POINTS);
  MlirValue bias = lw_in(cx, BIAS), g_idx = lw_in(cx, G_IDX);
  const o2m_type *yt = lw_out_type(cx, 0);
  if (mlirValueIsNull(a) || mlirValueIsNull(b) || mlirValueIsNull(scales) || !yt || yt->rank < 1)
    return lw_error(cx, "MatMulNBits needs A, B and scales, and a ranked output");
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(a));
  int64_t k = lw_attr_int(cx, "K", 0), cols = lw_attr_int(cx, "N", 0);
  int64_t k_of_a = mlirShapedTypeGetDimSize(mlirValueGetType(a), rank - 1);
  if (rank < 1 || rank > O2M_MAX_RANK || yt->rank != rank ||
      (!mlirShapedTypeIsDynamicSize(k_of_a) && k_of_a != k))
    return lw_error(cx, "A's last dim is %lld, not K = %lld", (long long)k_of_a, (long long)k);
  /* Y: A's dims with the last one N */
  int64_t sizes[O2M_MAX_RANK];
  MlirValue dims[O2M_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    sizes[d] = d == rank - 1 ? cols : mlirShapedTypeGetDimSize(mlirValueGetType(a), d);
    dims[d] = mlirShapedTypeIsDynamicSize(sizes[d]) ? lw_dim(cx, a, d) : (MlirValue){NULL};
  }
  MlirType f32 = lw_elem_type(cx, O2M_DT_FLOAT);
  MlirValue y = lw_kernel_result(cx, f32, rank, sizes, dims);
  int64_t flags = mlirValueIsNull(zp) ? 0 : lw_in_type(cx, ZERO_POINTS)->elem == O2M_DT_UINT8 ? HAS_ZP_PACKED : HAS_ZP_FLOAT;
  if (!mlirValueIsNull(bias)) flags |= HAS_BIAS;
  static const char f32_any[] = "memref<*xf32>", i8_any[] = "memref<*xi8>", i32_any[] = "memref<*xi32>";
  MlirValue a_buf = lw_kernel_operand(cx, a, f32_any), b_buf = lw_kernel_operand(cx, b, i8_any), groups;
  if (!mlirValueIsNull(g_idx)) {
    flags |= HAS_G_IDX;
    groups = lw_kernel_operand(cx, g_idx, i32_any);
  } else {
    groups = lw_kernel_result(cx, lw_type(cx, "i32"), 1, (int64_t[]){1}, NULL);
    if (!mlirValueIsNull(groups)) groups = lw_op1(cx, "memref.cast", 1, &groups, lw_type(cx, i32_any), NULL);
  }
  /* an absent operand: any buffer of its type, flagged off */
  MlirValue args[13] = {
      a_buf,
      b_buf,
      lw_kernel_operand_any_align(cx, scales, f32_any),
      flags & HAS_ZP_PACKED ? lw_kernel_operand(cx, zp, i8_any) : b_buf,
      flags & HAS_ZP_FLOAT ? lw_kernel_operand_any_align(cx, zp, f32_any) : a_buf,
      flags & HAS_BIAS ? lw_kernel_operand_any_align(cx, bias, f32_any) : a_buf,
      groups,
      mlirValueIsNull(y) ? y : lw_op1(cx, "memref.cast", 1, &y, lw_type(cx, f32_any), NULL),
      lw_const_scalar(cx, O2M_DT_INT64, (double)k),
      lw_const_scalar(cx, O2M_DT_INT64, (double)cols),
      lw_const_scalar(cx, O2M_DT_INT64, (double)lw_attr_int(cx, "bits", 4)),
      lw_const_scalar(cx, O2M_DT_INT64, (double)lw_attr_int(cx, "block_size", 0)),
      lw_const_scalar(cx, O2M_DT_INT64, (double)flags)};
  for (int i = 0; i < 13; i++)
    if (mlirValueIsNull(args[i])) return lw_error(cx, "internal: cannot pass MatMulNBits' operands");
  lw_declare_kernel(cx, O2M_MATMUL_NBITS_CALL,
                    "(memref<*xf32>, memref<*xi8>, memref<*xf32>, memref<*xi8>, memref<*xf32>, memref<*xf32>, "
                    "memref<*xi32>, memref<*xf32>, i64, i64, i64, i64, i64) -> ()");
  if (mlirOperationIsNull(lw_op(cx, "func.call", 13, args, 0, NULL, "callee = @" O2M_MATMUL_NBITS_CALL, 0)))
    return lw_error(cx, "internal: cannot call the MatMulNBits kernel");
  MlirType y_type = mlirRankedTensorTypeGet(rank, sizes, f32, mlirAttributeGetNull());
  MlirValue out = lw_op1(cx, "bufferization.to_tensor", 1, &y, y_type, "restrict, writable");
  return mlirValueIsNull(out) ? lw_error(cx, "internal: cannot take MatMulNBits' result") : lw_set_out(cx, 0, out);
}
