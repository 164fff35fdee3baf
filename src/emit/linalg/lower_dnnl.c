/* lower_dnnl.c - the JIT's channels-last convolutions and max pools
 * (emit.h, O2M_JIT_DNNL): a com.microsoft NhwcFusedConv node that
 * o2m_layout_channels_last made, Y = act(Conv(X, W, B) + Z) with X, Z, Y
 * [N, H, W, C] and W in ONNX's layout, becomes one call of the executor's
 * oneDNN kernel on buffers:
 *   %x = bufferization.to_buffer X read_only, the same for W, B, Z
 *   %y = memref.alloc(), call @O2M_DNNL_CONV_CALL(%x, %w, %b, %z, %y, %params)
 *   Y = bufferization.to_tensor %y restrict writable
 * params (int64, rt_dnnl.c): 0 (the runtime keeps a kernel's state per
 * weights and shapes, not per node, so identical layers have identical
 * code, exec_repeats.c), which of
 * B and Z are there, strides, pads, dilations, groups and the activation
 * (rt_internal.h's RT_ACT_*, with its parameters as float bits). An NhwcMaxPool
 * is a call of O2M_DNNL_POOL_CALL(%x, %y, %params) the same way, params:
 * 0, kernel, strides, pads (the bottom and right ones the kernel
 * derives from the sizes: ceil_mode's too), dilations. Other nodes of
 * the op, and every module not for the JIT, never come here: the shared
 * layer writes NhwcFusedConv in ONNX ops for them.
 *
 * A float32 Conv of 1 or 3 spatial dims (any batch and spatial sizes:
 * the result sized by the window's arithmetic) or ConvTranspose of 1 to 3
 * (any batch, known spatial sizes) in ONNX's layout with constant weights
 * (and bias), no padding added past the result, is one call of
 * O2M_DNNL_CONV_ND_CALL(%x, %w, %b, %y, %params) (lw_dnnl_conv_nd; unranked
 * buffers, the weights where the model holds them; params rt_internal.h's
 * CN_*): oneDNN reorders x and y to and from its kernel's layout there.
 */
#include <string.h>

#include "emit/emit.h"
#include "emit/linalg/lower.h"
#include "emit/linalg/lower_window.h"
#include "runtime/rt_internal.h"

enum { N_PARAMS = 15 };

static const char conv_memref[] = "memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>";
static const char vec_memref[] = "memref<?xf32, strided<[?], offset: ?>>";
static const char params_memref[] = "memref<?xi64, strided<[?], offset: ?>>";

/* Whether t is a 4-D float32 tensor type [N, H, W, C] of known C: N, H
 * and W may be dynamic (the kernels take any). */
static int image_type(MlirType t) {
  return !mlirTypeIsNull(t) && mlirTypeIsARankedTensor(t) && mlirShapedTypeGetRank(t) == 4 &&
         mlirTypeIsAF32(mlirShapedTypeGetElementType(t)) && !mlirShapedTypeIsDynamicDim(t, 3);
}

/* A new buffer for a result of tensor type t [N, OH, OW, C] of a window
 * op over x [N, H, W, C]: its dynamic dims N (x's) and OH, OW by floor
 * ((in + pads - extent) / stride) + 1 (`window`: stride, pad begin, pad
 * end, extent for each of H and W). */
static MlirValue result_buffer(lw_ctx *cx, MlirType t, MlirValue x, const int64_t window[2][4]) {
  int64_t sizes[4];
  MlirValue dims[4] = {{NULL}};
  for (int k = 0; k < 4; k++) sizes[k] = mlirShapedTypeGetDimSize(t, k);
  if (mlirShapedTypeIsDynamicDim(t, 0)) dims[0] = lw_dim(cx, x, 0);
  for (int i = 0; i < 2; i++) {
    if (!mlirShapedTypeIsDynamicDim(t, 1 + i)) continue;
    const int64_t *w = window[i];
    lw_ix span = lw_ix_bin(cx, LW_IX_ADD, lw_ix_dim(cx, x, 1 + i), lw_ix_c(w[1] + w[2] - w[3]));
    dims[1 + i] = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_FLOORDIV, span, lw_ix_c(w[0])),
                                            lw_ix_c(1)));
  }
  return lw_kernel_result(cx, mlirShapedTypeGetElementType(t), 4, sizes, dims);
}

/* The buffer the kernel wrote as the node's output. */
static o2m_status set_result(lw_ctx *cx, MlirValue buffer, MlirType t) {
  MlirValue out = lw_op1(cx, "bufferization.to_tensor", 1, &buffer, t, "restrict, writable");
  return mlirValueIsNull(out) ? lw_error(cx, "internal: cannot take the kernel's result") : lw_set_out(cx, 0, out);
}

/* The activations the kernel applies, by the node's activation name,
 * with the number of activation_params each takes. */
static const struct {
  const char *name;
  int code, n_params;
} kernel_activations[] = {
    {"Relu", RT_ACT_RELU, 0},     {"Clip", RT_ACT_CLIP, 2},           {"HardSwish", RT_ACT_HARD_SWISH, 0},
    {"Sigmoid", RT_ACT_SIGMOID, 0}, {"Tanh", RT_ACT_TANH, 0},         {"LeakyRelu", RT_ACT_LEAKY_RELU, 1},
    {"Silu", RT_ACT_SILU, 0},
};

/* The activation's code and parameters; -1 for one the kernel has not. */
static int activation(lw_ctx *cx, float *params) {
  const char *act = lw_attr_string(cx, "activation", "");
  params[0] = params[1] = 0;
  if (!act[0]) return RT_ACT_NONE;
  const o2m_attr *p = lw_attr(cx, "activation_params");
  int n_given = p && p->type == O2M_ATTR_FLOATS ? p->count : 0;
  for (size_t i = 0; i < sizeof(kernel_activations) / sizeof(kernel_activations[0]); i++) {
    if (strcmp(act, kernel_activations[i].name) != 0) continue;
    if (n_given != kernel_activations[i].n_params) return -1;
    for (int k = 0; k < n_given; k++) params[k] = p->floats[k];
    return kernel_activations[i].code;
  }
  return -1;
}

o2m_status lw_lower_dnnl_conv(lw_ctx *cx) {
  if (!(cx->for_jit & O2M_JIT_DNNL)) return lw_unsupported(cx, "NhwcFusedConv is lowered for the JIT only");
  MlirValue x = lw_in(cx, 0), w = lw_in(cx, 1), b = lw_in(cx, 2), z = lw_in(cx, 3);
  const o2m_type *yt = lw_out_type(cx, 0);
  MlirType y_type = yt ? lw_tensor_type(cx, yt) : (MlirType){NULL};
  if (mlirValueIsNull(x) || mlirValueIsNull(w) || !image_type(y_type) || !image_type(mlirValueGetType(x)) ||
      !mlirShapedTypeHasStaticShape(mlirValueGetType(w)) || yt->elem != O2M_DT_FLOAT)
    return lw_unsupported(cx, "a channels-last convolution not of float32 4-D tensors of known channels");
  int64_t p[N_PARAMS] = {0};
  float act_params[2];
  int act = activation(cx, act_params);
  const char *auto_pad = lw_attr_string(cx, "auto_pad", "NOTSET");
  if (act < 0 || strcmp(auto_pad, "NOTSET") != 0 || !lw_attr_ints_or(cx, "strides", 2, 1, p + 3) ||
      !lw_attr_ints_or(cx, "pads", 4, 0, p + 5) || !lw_attr_ints_or(cx, "dilations", 2, 1, p + 9))
    return lw_unsupported(cx, "a channels-last convolution of a form the kernel does not take");
  /* ONNX's pads are [top, left, bottom, right]: the kernel's order too */
  p[0] = 0;
  p[1] = !mlirValueIsNull(b);
  p[2] = !mlirValueIsNull(z);
  p[11] = lw_attr_int(cx, "group", 1);
  p[12] = act;
  memcpy(&p[13], &act_params[0], sizeof(float));
  memcpy(&p[14], &act_params[1], sizeof(float));
  char signature[512];
  snprintf(signature, sizeof(signature), "(%s, %s, %s, %s, %s, %s) -> ()", conv_memref, conv_memref, vec_memref,
           conv_memref, conv_memref, params_memref);
  lw_declare_kernel(cx, O2M_DNNL_CONV_CALL, signature);
  MlirType wt = mlirValueGetType(w);
  int64_t window[2][4];
  for (int i = 0; i < 2; i++) {
    window[i][0] = p[3 + i], window[i][1] = p[5 + i], window[i][2] = p[7 + i];
    window[i][3] = p[9 + i] * (mlirShapedTypeGetDimSize(wt, 2 + i) - 1) + 1;
  }
  MlirValue y = result_buffer(cx, y_type, x, window);
  MlirValue y_arg = mlirValueIsNull(y) ? y : lw_op1(cx, "memref.cast", 1, &y, lw_type(cx, conv_memref), NULL);
  if (mlirValueIsNull(b)) b = lw_filled(cx, lw_tensor_type_of(cx, O2M_DT_FLOAT, 1, (int64_t[]){1}), NULL,
                                        lw_const_scalar(cx, O2M_DT_FLOAT, 0));
  MlirValue args[6] = {lw_kernel_operand(cx, x, conv_memref), lw_kernel_operand(cx, w, conv_memref), lw_kernel_operand(cx, b, vec_memref),
                       mlirValueIsNull(z) ? y_arg : lw_kernel_operand(cx, z, conv_memref), y_arg,
                       lw_kernel_operand(cx, lw_const_i64_tensor(cx, p, N_PARAMS), params_memref)};
  for (int i = 0; i < 6; i++)
    if (mlirValueIsNull(args[i])) return lw_error(cx, "internal: cannot pass the convolution's operands");
  if (mlirOperationIsNull(lw_op(cx, "func.call", 6, args, 0, NULL, "callee = @" O2M_DNNL_CONV_CALL, 0)))
    return lw_error(cx, "internal: cannot call the convolution kernel");
  return set_result(cx, y, y_type);
}

/* ---- NhwcMaxPool ------------------------------------------------------------------------ */

enum { N_POOL_PARAMS = 11 };

o2m_status lw_lower_dnnl_max_pool(lw_ctx *cx) {
  if (!(cx->for_jit & O2M_JIT_DNNL)) return lw_unsupported(cx, "NhwcMaxPool is lowered for the JIT only");
  MlirValue x = lw_in(cx, 0);
  const o2m_type *yt = lw_out_type(cx, 0);
  MlirType y_type = yt ? lw_tensor_type(cx, yt) : (MlirType){NULL};
  if (mlirValueIsNull(x) || !image_type(y_type) || !image_type(mlirValueGetType(x)) || yt->elem != O2M_DT_FLOAT)
    return lw_unsupported(cx, "a channels-last max pool not of float32 4-D tensors of known channels");
  int64_t p[N_POOL_PARAMS] = {0};
  const char *auto_pad = lw_attr_string(cx, "auto_pad", "NOTSET");
  if ((strcmp(auto_pad, "NOTSET") != 0 && strcmp(auto_pad, "VALID") != 0) || !lw_attr_ints_or(cx, "kernel_shape", 2, 1, p + 1) ||
      !lw_attr_ints_or(cx, "strides", 2, 1, p + 3) || !lw_attr_ints_or(cx, "pads", 4, 0, p + 5) || !lw_attr_ints_or(cx, "dilations", 2, 1, p + 9))
    return lw_unsupported(cx, "a channels-last max pool of a form the kernel does not take");
  if (strcmp(auto_pad, "VALID") == 0) memset(p + 5, 0, 4 * sizeof(int64_t));
  /* the kernel derives the bottom and right pads that give y's size
   * (ceil_mode's: the layout pass keeps that one for known H and W) */
  int64_t window[2][4];
  for (int i = 0; i < 2; i++)
    window[i][0] = p[3 + i], window[i][1] = p[5 + i], window[i][2] = p[7 + i], window[i][3] = (p[1 + i] - 1) * p[9 + i] + 1;
  char signature[256];
  snprintf(signature, sizeof(signature), "(%s, %s, %s) -> ()", conv_memref, conv_memref, params_memref);
  lw_declare_kernel(cx, O2M_DNNL_POOL_CALL, signature);
  MlirValue y = result_buffer(cx, y_type, x, window);
  MlirValue args[3] = {lw_kernel_operand(cx, x, conv_memref),
                       mlirValueIsNull(y) ? y : lw_op1(cx, "memref.cast", 1, &y, lw_type(cx, conv_memref), NULL),
                       lw_kernel_operand(cx, lw_const_i64_tensor(cx, p, N_POOL_PARAMS), params_memref)};
  for (int i = 0; i < 3; i++)
    if (mlirValueIsNull(args[i])) return lw_error(cx, "internal: cannot pass the pool's operands");
  if (mlirOperationIsNull(lw_op(cx, "func.call", 3, args, 0, NULL, "callee = @" O2M_DNNL_POOL_CALL, 0)))
    return lw_error(cx, "internal: cannot call the pool kernel");
  return set_result(cx, y, y_type);
}

/* ---- convolutions in ONNX's layout --------------------------------------------------------- */

/* Whether the node's input i is a constant (an initializer or a value
 * the shared layer computed). */
static int constant_input(const lw_ctx *cx, int i) {
  const o2m_value *v = i < cx->node->n_inputs ? cx->node->inputs[i] : NULL;
  const o2m_tensor *t = v ? (v->known ? v->known : v->init) : NULL;
  return t && t->data;
}

o2m_status lw_dnnl_conv_nd(lw_ctx *cx, const lw_window *win, int64_t groups, int transposed, MlirValue x, MlirValue w,
                           MlirValue b, int *done) {
  *done = 0;
  const o2m_type *yt = lw_out_type(cx, 0);
  MlirType y_type = yt ? lw_tensor_type(cx, yt) : (MlirType){NULL};
  /* 2-D Convs are the channels-last pass's (layout_channels_last.c); the
   * batch may be dynamic, and a Conv's spatial dims (sized here by the
   * window's arithmetic); a ConvTranspose's are known */
  MlirType x_type = mlirValueGetType(x);
  if (!(cx->for_jit & O2M_JIT_DNNL) || !yt || yt->elem != O2M_DT_FLOAT || win->n < 1 || win->n > 3 ||
      (win->n == 2 && !transposed) || mlirTypeIsNull(y_type) ||
      mlirShapedTypeIsDynamicDim(y_type, 1) || mlirShapedTypeIsDynamicDim(x_type, 1) ||
      !mlirShapedTypeHasStaticShape(mlirValueGetType(w)) || !constant_input(cx, 1) ||
      (!mlirValueIsNull(b) && !constant_input(cx, 2)))
    return O2M_OK;
  int64_t p[CN_COUNT] = {0, !mlirValueIsNull(b), win->n, groups, transposed};
  for (int i = 0; i < 3; i++) p[CN_STRIDE + i] = p[CN_DILATION + i] = 1;
  for (int i = 0; i < win->n; i++) {
    /* (a Conv's windows end inside its pads: `extra`, unknown where the
     * input's size is, is 0 then) */
    if (!lw_ix_is_const(win->pad_begin[i]) || !lw_ix_is_const(win->pad_end[i]) ||
        (lw_ix_is_const(win->extra[i]) ? win->extra[i].c != 0 : transposed) ||
        (transposed && (!lw_ix_is_const(win->in[i]) || !lw_ix_is_const(win->out[i]))))
      return O2M_OK;
    p[CN_STRIDE + i] = win->stride[i], p[CN_DILATION + i] = win->dilation[i];
    p[CN_PAD_BEGIN + i] = win->pad_begin[i].c, p[CN_PAD_END + i] = win->pad_end[i].c;
    /* a ConvTranspose crops pad_begin elements of its full result at the
     * start and what lies past `out` at the end (none may be added) */
    if (transposed)
      p[CN_PAD_END + i] = (win->in[i].c - 1) * win->stride[i] + lw_window_extent(win, i) - win->pad_begin[i].c - win->out[i].c;
    if (p[CN_PAD_BEGIN + i] < 0 || p[CN_PAD_END + i] < 0) return O2M_OK;
  }
  int rank = 2 + win->n;
  int64_t sizes[5];
  MlirValue dims[5] = {{NULL}};
  for (int k = 0; k < rank; k++) {
    sizes[k] = mlirShapedTypeGetDimSize(y_type, k);
    if (mlirShapedTypeIsDynamicSize(sizes[k])) dims[k] = k ? lw_ix_value(cx, win->out[k - 2]) : lw_dim(cx, x, 0);
  }
  static const char f32_any[] = "memref<*xf32>", i64_any[] = "memref<*xi64>";
  MlirValue y = lw_kernel_result(cx, mlirShapedTypeGetElementType(y_type), rank, sizes, dims);
  MlirValue y_arg = mlirValueIsNull(y) ? y : lw_op1(cx, "memref.cast", 1, &y, lw_type(cx, f32_any), NULL);
  MlirValue args[5] = {lw_kernel_operand(cx, x, f32_any), lw_kernel_operand_any_align(cx, w, f32_any),
                       mlirValueIsNull(b) ? y_arg : lw_kernel_operand_any_align(cx, b, f32_any), y_arg,
                       lw_kernel_operand(cx, lw_const_i64_tensor(cx, p, CN_COUNT), i64_any)};
  *done = 1;
  return lw_call_kernel_for_out(cx, O2M_DNNL_CONV_ND_CALL,
                                "(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xi64>) -> ()", 5,
                                args, y, y_type, transposed ? "ConvTranspose" : "Conv");
}
