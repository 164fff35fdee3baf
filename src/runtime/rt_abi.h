/* rt_abi.h - the names of the functions generated code calls while it runs,
 * shared by the side that writes the calls (src/emit, src/exec) and the
 * runtime that defines them (src/runtime). Plain C: no MLIR.
 *
 * A kernel called with llvm.emit_c_interface is reached as
 * "_mlir_ciface_" NAME, its memrefs passed as strided descriptors
 * (RT_F32_MEMREF). libonnx2mlir_rt exports each under that name
 * (rt_exports.c); the JIT binds them by address (o2m_rt_symbols).
 */
#ifndef O2M_RT_ABI_H
#define O2M_RT_ABI_H

/* An If branch that cannot be built for the compiled shapes, taken:
 * `void O2M_BRANCH_FAILED_FN(i32 id)` stops the call (rt_branch.c). */
#define O2M_BRANCH_FAILED_FN "onnx2mlir_branch_failed"
/* MLIR's strided copy between memrefs (rt_memref.c). */
#define O2M_MEMREF_COPY_FN "memrefCopy"
/* `void O2M_PROFILE_FN(i32 node)`: run --profile's marks (rt_profile.c). */
#define O2M_PROFILE_FN "onnx2mlir_profile"
/* A loop of the generated code split across the call's threads
 * (rt_parallel.c): `void O2M_PARALLEL_FOR_FN(task, ctx, lo, hi, cost)` runs
 * task(ctx, from, to) over shares of [lo, hi), cost the compiler's
 * estimate of one iteration's work (src/exec/exec_parallel.c). */
#define O2M_PARALLEL_FOR_FN "o2m_rt_parallel_for"

/* float32 products (rt_blas.c): C [M, N] += A [M, K] B [K, N]; batched
 * (a leading batch dim on all three); C += A W^T for W [N, K]; and the
 * im2col product C [n] += A [n] W^T of an NHWC convolution. Each takes
 * (A, B, C, i64 accumulate): 1 adds to C, 0 overwrites it (C = A B, for
 * a C that was only zero-filled: the fill is dropped). */
#define O2M_SGEMM_CALL "o2m_sgemm"
#define O2M_SGEMM_BATCHED_CALL "o2m_sgemm_batched"
#define O2M_SGEMM_BT_CALL "o2m_sgemm_bt"
#define O2M_SGEMM_NBT_CALL "o2m_sgemm_nbt"
/* The same 2-D products with B a weight: oneDNN's matmul, B packed once
 * per loaded model (rt_dnnl.c). */
#define O2M_DNNL_SGEMM_CALL "o2m_dnnl_sgemm"
#define O2M_DNNL_SGEMM_BT_CALL "o2m_dnnl_sgemm_bt"
/* Channels-last convolutions and max pools through oneDNN (rt_dnnl.c). */
#define O2M_DNNL_CONV_CALL "o2m_dnnl_conv2d"
#define O2M_DNNL_POOL_CALL "o2m_dnnl_max_pool2d"
/* A float32 convolution of 1 to 3 spatial dims in ONNX's layout with
 * constant weights (rt_conv_nd.c, through oneDNN): O2M_DNNL_CONV_ND_CALL(x,
 * w, b, y, params) on unranked buffers (x [N, C, in...], w [F, C/g, k...],
 * b [F] (any buffer when absent), y [N, F, out...] a new row-major
 * buffer; params i64, rt_internal.h's CN_*). */
#define O2M_DNNL_CONV_ND_CALL "o2m_dnnl_conv_nd"
/* The runtime's own kernels (rt_kernels.c). A float32 TopK:
 * O2M_TOPK_CALL(x, values, indices, axis, largest) on unranked buffers;
 * a float32 NonMaxSuppression: count = O2M_NMS_CALL(boxes, scores, rows,
 * max_out, iou, score_threshold, has_threshold, center_point_box). */
#define O2M_TOPK_CALL "o2m_topk_f32"
#define O2M_NMS_CALL "o2m_nms_f32"
/* Softmax or LogSoftmax on float32 along the last axis (rt_softmax.c):
 * O2M_SOFTMAX_CALL(x, y, log) on unranked buffers (y a new row-major
 * buffer of x's dims), log 1 for LogSoftmax. */
#define O2M_SOFTMAX_CALL "o2m_softmax_f32"
/* onnxruntime's MatMulNBits on float32, the weights read packed
 * (rt_nbits.c): O2M_MATMUL_NBITS_CALL(A, B, scales, zero points packed,
 * zero points float, bias, g_idx, Y, K, N, bits, block_size, flags) on
 * unranked buffers (A, scales, float zero points, bias, Y float32; B and
 * packed zero points i8; g_idx i32), flags 1 | 2 | 4 | 8: packed zero
 * points, float zero points, bias, g_idx there (an absent one is passed
 * as any buffer). */
#define O2M_MATMUL_NBITS_CALL "o2m_matmul_nbits_f32"
/* ONNX's QLinearConv on 8-bit NCHW tensors (rt_qconv.c):
 * O2M_QCONV_CALL(x, w, w_scales, bias, y, params) on unranked buffers (x,
 * y i8 holding int8 or uint8; w int8; w_scales f32, one or one per output
 * channel; bias i32, any buffer when absent; params i64, rt_internal.h's
 * QC_*). */
#define O2M_QCONV_CALL "o2m_qconv2d"
/* ONNX's ConvInteger on 8-bit NCHW tensors (rt_qconv.c):
 * O2M_CONV_INTEGER_CALL(x, w, x_zp, y, params) on unranked buffers (x i8
 * holding int8 or uint8, w int8 of zero point 0, x_zp one element i8 (any
 * buffer when absent, params' QC_X_ZP 0), y i32; params i64 as
 * O2M_QCONV_CALL's with QC_Y_INT32 set). */
#define O2M_CONV_INTEGER_CALL "o2m_conv_integer2d"
/* ONNX's MatMulInteger with a 2-D B (rt_qmatmul.c): O2M_QMATMUL_CALL(A,
 * B, a_zp, Y, params) on unranked buffers (A [..., K], B [K, N], a_zp (one
 * element; any buffer when absent) i8 holding int8 or uint8; Y [..., N]
 * i32; params i64, rt_internal.h's QM_*). */
#define O2M_QMATMUL_CALL "o2m_qmatmul"
/* ONNX's DynamicQuantizeLinear on float32 (rt_dynquant.c):
 * O2M_DYNQUANT_CALL(x, y, scale, zero point) on unranked buffers (x f32,
 * y i8 holding uint8, scale f32 and zero point i8 of one element). */
#define O2M_DYNQUANT_CALL "o2m_dynamic_quantize_f32"

#endif
