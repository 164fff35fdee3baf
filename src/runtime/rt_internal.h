/* rt_internal.h - what the runtime's files share: each file's kernels by
 * symbol (o2m_rt_symbols gathers them). Not for use outside src/runtime.
 */
#ifndef O2M_RT_INTERNAL_H
#define O2M_RT_INTERNAL_H

#include "runtime/runtime.h"

/* On a function that calls generated code through a pointer: clang's
 * -fsanitize=function (of UBSan) reads a signature word before the
 * callee, which generated code lacks (and which lies on another page,
 * maybe unmapped, when the callee starts one). */
#if defined(__clang__)
#define RT_CALLS_GENERATED_CODE __attribute__((no_sanitize("function")))
#else
#define RT_CALLS_GENERATED_CODE
#endif

int rt_blas_symbols(o2m_rt_symbol *out);    /* 4 */
int rt_dnnl_symbols(o2m_rt_symbol *out);    /* 4, none when built without oneDNN's header */
int rt_kernel_symbols(o2m_rt_symbol *out);  /* 2 */
o2m_rt_symbol rt_memref_copy_symbol(void);
o2m_rt_symbol rt_branch_failed_symbol(void);
o2m_rt_symbol rt_profile_symbol(void);
o2m_rt_symbol rt_nbits_symbol(void);
o2m_rt_symbol rt_qconv_symbol(void);
o2m_rt_symbol rt_conv_integer_symbol(void);
o2m_rt_symbol rt_conv_nd_symbol(void);
o2m_rt_symbol rt_softmax_symbol(void);
o2m_rt_symbol rt_qmatmul_symbol(void);
o2m_rt_symbol rt_dynquant_symbol(void);
o2m_rt_symbol rt_parallel_symbol(void);
o2m_rt_symbol rt_alloc_symbols_at(int i); /* 0..2: alloc, aligned alloc, free */

/* oneDNN's threaded sgemm (rt_dnnl.c) for o2m_rt_gemm when a call has
 * several threads; 0 when it cannot. */
int rt_dnnl_gemm(int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa, const float *b,
                 const int64_t *sb, float beta, float *c, const int64_t *sc);
/* oneDNN's batched matmul (rt_dnnl.c) for C [i] = beta C [i] + A [i] B [i]
 * over the batch (strides of batch, rows, columns), a primitive kept per
 * shape for the model the call runs; 0 when it cannot (no model named,
 * no oneDNN, a layout it refuses). */
int rt_dnnl_batched_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa,
                         const float *b, const int64_t *sb, float beta, float *c, const int64_t *sc);

/* The activation a channels-last convolution (O2M_DNNL_CONV_CALL)
 * applies to its result, by its code in the call's params; its float
 * parameters follow it there (Clip's bounds, LeakyRelu's slope). */
enum {
  RT_ACT_NONE,
  RT_ACT_RELU,
  RT_ACT_CLIP,       /* lo, hi */
  RT_ACT_HARD_SWISH, /* x clip(x / 6 + 1 / 2, 0, 1) */
  RT_ACT_SIGMOID,
  RT_ACT_TANH,
  RT_ACT_LEAKY_RELU, /* alpha */
  RT_ACT_SILU,       /* x sigmoid(x) */
  RT_ACT_COUNT
};

/* The elements of m. */
int64_t o2m_rt_count(const o2m_rt_unranked *m);
/* Whether m's elements lie in row-major order (dims of size 1 aside). */
int o2m_rt_row_major(const o2m_rt_unranked *m);
/* m's elements (of esize bytes) in row-major order: its own memory when
 * laid out so, else a copy in *owned (free it); NULL when out of memory. */
const void *o2m_rt_dense(o2m_rt_unranked *m, int64_t esize, void **owned);

/* An 8-bit convolution (rt_qconv.c, rt_abi.h's O2M_QCONV_CALL): its
 * params (int64: 0 (unused; state is kept per weights), bias there, strides, pads top/left/bottom/
 * right, dilations, groups, whether x and y are int8 (else uint8), the
 * zero points of x and y, the scales of x and y as float bits, whether x
 * and y are channels last, whether y is ConvInteger's int32 sums) and its
 * dense operands; dims in NCHW order whatever the layout. */
enum {
  QC_SITE,
  QC_HAS_BIAS,
  QC_STRIDE,
  QC_PAD = QC_STRIDE + 2,
  QC_DILATION = QC_PAD + 4,
  QC_GROUPS = QC_DILATION + 2,
  QC_X_SIGNED,
  QC_Y_SIGNED,
  QC_X_ZP,
  QC_Y_ZP,
  QC_X_SCALE,
  QC_Y_SCALE,
  QC_NHWC, /* x and y channels last: [N, H, W, C] (else NCHW) */
  QC_Y_INT32, /* ConvInteger's (O2M_CONV_INTEGER_CALL): y the int32 sums, x's zero point given per call */
  QC_COUNT
};
typedef struct rt_qconv_call {
  const int64_t *p;
  int64_t x_dims[4], w_dims[4], y_dims[4]; /* [N, C, H, W], [F, C/g, KH, KW], [N, F, OH, OW] */
  const void *x;                           /* int8 or uint8 */
  const int8_t *w;
  const float *w_scales; /* n_scales: 1, or one per output channel */
  int64_t n_scales;
  const int32_t *bias; /* NULL, or F */
  int32_t x_zp;        /* with QC_Y_INT32 (else p [QC_X_ZP]) */
  void *y;
} rt_qconv_call;
/* The call through oneDNN's int8 convolution (rt_dnnl.c); 0 when it
 * cannot (no oneDNN, a form it refuses). */
int rt_dnnl_qconv(const rt_qconv_call *c);

/* A float32 Conv or ConvTranspose of 1 to 3 spatial dims in ONNX's
 * layout (rt_conv_nd.c, rt_abi.h's O2M_DNNL_CONV_ND_CALL): its params
 * (int64: 0 (unused; state is kept per weights), bias there, the spatial
 * rank, the groups, whether it is a ConvTranspose, then three entries
 * each (the unused ones stride 1, pads 0, dilation 1) of strides, pads at
 * the start, pads at the end (a ConvTranspose's: the elements of the full
 * transposed convolution cropped at each end) and dilations (1: none))
 * and its dense operands. */
enum {
  CN_SITE,
  CN_HAS_BIAS,
  CN_SPATIAL,
  CN_GROUPS,
  CN_TRANSPOSED,
  CN_STRIDE,
  CN_PAD_BEGIN = CN_STRIDE + 3,
  CN_PAD_END = CN_PAD_BEGIN + 3,
  CN_DILATION = CN_PAD_END + 3,
  CN_COUNT = CN_DILATION + 3
};
typedef struct rt_conv_nd_call {
  const int64_t *p;
  int rank;                                /* 3 to 5 */
  int64_t x_dims[5], w_dims[5], y_dims[5]; /* [N, C, in...], [F, C/g, k...] ([C, F/g, k...] transposed), [N, F, out...] */
  const float *x, *w, *bias;               /* bias: NULL, or F */
  float *y;
} rt_conv_nd_call;
/* The call through oneDNN's convolution (rt_dnnl.c: x and y reordered
 * to and from the layout its kernel picks); 0 when it cannot (no
 * oneDNN, a form it refuses). */
int rt_dnnl_conv_nd(const rt_conv_nd_call *c);

/* An 8-bit matrix product (rt_qmatmul.c, rt_abi.h's O2M_QMATMUL_CALL):
 * its params (int64: 0 (unused; state is kept per B), whether A and B are int8 (else
 * uint8), B's zero point, whether A's zero point is given) and its dense
 * operands: Y [m, n] (int32) = sum over k of (A [m, k] - a_zp) (B [k, n] -
 * b_zp). */
enum { QM_SITE, QM_A_SIGNED, QM_B_SIGNED, QM_B_ZP, QM_HAS_A_ZP, QM_COUNT };
typedef struct rt_qmatmul_call {
  const int64_t *p;
  int64_t m, k, n;
  const void *a, *b;
  int32_t a_zp;
  int32_t *y;
} rt_qmatmul_call;
/* The call through oneDNN's int8 matmul (rt_dnnl.c; int8 B, or uint8 B
 * with zero point 128, taken as int8 B - 128 with zero point 0); 0 when
 * it cannot (no oneDNN, another B zero point, a form it refuses). */
int rt_dnnl_qmatmul(const rt_qmatmul_call *c);

/* The functions behind those symbols that other files call. */
void o2m_rt_memref_copy(int64_t esize, o2m_rt_unranked *src, o2m_rt_unranked *dst);
void o2m_rt_branch_failed(int32_t id);
void o2m_rt_profile_mark(int32_t node);

#endif
