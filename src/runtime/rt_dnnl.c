/* rt_dnnl.c - float32 convolutions, 2-D max pools and products with a
 * weight through oneDNN (Debian's libdnnl.so.2, loaded at run time).
 *
 * Owns: finding oneDNN (none, or ONNX2MLIR_NO_DNNL=1: the JIT keeps its
 * own convolutions), the kernels that the Linalg emitter's channels-last
 * convolutions and max pools call (lower_dnnl.c, O2M_DNNL_CONV_CALL,
 * O2M_DNNL_POOL_CALL) and the primitives they keep between calls. A site
 * is one set of weights, params and shapes (a pool: params and shapes) of
 * one loaded model, not one place in the code, so that identical layers
 * share their code (exec_repeats.c): its primitive and its weights,
 * reordered once into the layout oneDNN's kernel wants, live until that
 * model is freed
 * (o2m_rt_release); the executor names the model it runs around each
 * call (o2m_rt_set_owner). A call without a named model builds and
 * frees them every time. Batched products of two activations (attention's)
 * keep a primitive per shape and no operand. oneDNN runs on GNU OpenMP's pool with the call's
 * thread count (rt_threads.c); a primitive is built for one count. Large
 * products of the runtime's (rt_blas.c) go to its threaded sgemm when a
 * call has several threads.
 *
 * The call: y [N, OH, OW, F] = act(conv(x [N, H, W, C], w [F, C/g, KH, KW])
 * + b [F] (+ z, the same shape as y)), every operand a strided memref
 * descriptor, and params (int64): 0 (once the node's index; unused), has_bias, has_z, stride h/w, pads
 * top/left/bottom/right, dilation h/w (1 = none), groups, activation
 * (rt_internal.h's RT_ACT_*: an eltwise post-op), its two parameters as
 * float bits. The pool: y =
 * the max of each window of x (both [N, H, W, C]), params: 0, kernel,
 * strides, pads, dilations. What oneDNN refuses runs as plain C loops.
 * Convolutions and transposed ones in ONNX's layout (rt_conv_nd.c's,
 * 1-D to 3-D) run in the layouts oneDNN's kernel picks, x and y reordered
 * around each call.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

#ifdef O2M_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

/* ---- the library ------------------------------------------------------------ */

#define DNNL_FUNCTIONS(X)                                                                                  \
  X(dnnl_engine_create)                                                                                    \
  X(dnnl_stream_create)                                                                                    \
  X(dnnl_stream_wait)                                                                                      \
  X(dnnl_memory_desc_init_by_tag)                                                                          \
  X(dnnl_memory_desc_equal)                                                                                \
  X(dnnl_memory_desc_get_size)                                                                             \
  X(dnnl_dilated_convolution_forward_desc_init)                                                            \
  X(dnnl_dilated_deconvolution_forward_desc_init)                                                          \
  X(dnnl_pooling_v2_forward_desc_init)                                                                     \
  X(dnnl_matmul_desc_init)                                                                                 \
  X(dnnl_memory_desc_init_by_strides)                                                                      \
  X(dnnl_primitive_attr_create)                                                                            \
  X(dnnl_primitive_attr_destroy)                                                                           \
  X(dnnl_primitive_attr_set_post_ops)                                                                      \
  X(dnnl_post_ops_create)                                                                                  \
  X(dnnl_post_ops_destroy)                                                                                 \
  X(dnnl_post_ops_append_sum)                                                                              \
  X(dnnl_post_ops_append_eltwise)                                                                          \
  X(dnnl_primitive_desc_create)                                                                            \
  X(dnnl_primitive_desc_destroy)                                                                           \
  X(dnnl_primitive_desc_query_md)                                                                          \
  X(dnnl_reorder_primitive_desc_create)                                                                    \
  X(dnnl_primitive_create)                                                                                 \
  X(dnnl_primitive_destroy)                                                                                \
  X(dnnl_primitive_execute)                                                                                \
  X(dnnl_memory_create)                                                                                    \
  X(dnnl_memory_destroy)                                                                                   \
  X(dnnl_memory_set_data_handle)                                                                           \
  X(dnnl_memory_get_memory_desc)                                                                           \
  X(dnnl_primitive_attr_set_output_scales)                                                                 \
  X(dnnl_primitive_attr_set_zero_points)                                                                   \
  X(dnnl_sgemm)

#define DECLARE(f) static __typeof__(f) *p_##f;
DNNL_FUNCTIONS(DECLARE)
#undef DECLARE

static void (*p_omp_set_num_threads)(int);
static int (*p_omp_get_max_threads)(void);
static pthread_once_t dnnl_once = PTHREAD_ONCE_INIT;
static int dnnl_ready;
static dnnl_engine_t engine;
static dnnl_stream_t stream;

/* oneDNN on n of the OpenMP pool's threads; the calling thread's OpenMP
 * setting (which a host program may use too) is given back after the
 * call (threads_back). */
static int omp_threads(int n) {
  if (!p_omp_set_num_threads || !p_omp_get_max_threads) return 0;
  int was = p_omp_get_max_threads();
  p_omp_set_num_threads(n);
  return was;
}

/* The threads a primitive of `work` multiply-adds runs on: the call's
 * (rt_threads.c), no more than one per 16 grains of the split loops
 * (rt_parallel.c; 512Ki multiply-adds by default, about 10 microseconds
 * of one core: a thread with less work mostly waits at the join), at
 * least one. A primitive is built for its count (KEY_THREADS). */
static int op_threads(int64_t work) {
  int64_t n = o2m_rt_call_threads(), per_thread = 16 * o2m_rt_parallel_grain();
  int64_t worth = work / per_thread;
  return (int)(worth < 1 ? 1 : worth < n ? worth : n);
}

/* The same for a kernel: oneDNN found first (at a library's first call),
 * so that its first primitive gets the count too. */
static int call_threads(int64_t work) {
  o2m_rt_dnnl_available();
  return omp_threads(op_threads(work));
}

static void threads_back(int was) {
  if (was > 0) p_omp_set_num_threads(was);
}

static void find_dnnl(void) {
  const char *off = getenv("ONNX2MLIR_NO_DNNL");
  if (off && *off && strcmp(off, "0") != 0) return;
  void *lib = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  int found = 1;
#define RESOLVE(f) found &= (p_##f = (__typeof__(f) *)(uintptr_t)dlsym(lib, #f)) != NULL;
  DNNL_FUNCTIONS(RESOLVE)
#undef RESOLVE
  /* the OpenMP runtime oneDNN links (its setting is the calling thread's) */
  p_omp_set_num_threads = (void (*)(int))(uintptr_t)dlsym(lib, "omp_set_num_threads");
  p_omp_get_max_threads = (int (*)(void))(uintptr_t)dlsym(lib, "omp_get_max_threads");
  if (!found) return;
  int was = omp_threads(1);
  dnnl_ready = p_dnnl_engine_create(&engine, dnnl_cpu, 0) == dnnl_success &&
               p_dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) == dnnl_success;
  threads_back(was);
}

int o2m_rt_dnnl_available(void) {
  pthread_once(&dnnl_once, find_dnnl);
  return dnnl_ready;
}

/* ---- sites: what is kept per weights (or pool), params and shapes --------------- */

typedef RT_F32_MEMREF(4) memref4;

typedef struct memref1 {
  void *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} memref1;

enum { P_SITE, P_HAS_BIAS, P_HAS_Z, P_STRIDE, P_PAD = P_STRIDE + 2, P_DILATION = P_PAD + 4, P_GROUPS = P_DILATION + 2,
       P_ACT, P_ALPHA, P_BETA, P_COUNT };
/* the params and the dims of x and w, the thread count (a primitive is
 * built for one, KEY_THREADS) and a pool's or 8-bit convolution's marker
 * (the last word) */
enum { KEY_WORDS = 30, KEY_THREADS = KEY_WORDS - 2 };
_Static_assert(QC_COUNT + 8 <= KEY_THREADS && CN_COUNT + 10 <= KEY_THREADS, "a convolution's key (params, x and w dims) fits");

typedef struct kernel_site {
  struct kernel_site *next;
  const void *owner;
  int64_t key[KEY_WORDS];
  const float *weights; /* what `wei` holds, reordered */
  pthread_mutex_t lock;
  dnnl_primitive_t prim;
  dnnl_memory_t src, wei, bias, dst;
  dnnl_memory_t zp; /* an 8-bit product's A zero point (given per call) */
  /* a convolution in ONNX's layout: x and y reordered to and from the
   * primitive's (NULL where they agree), through buffers of a call */
  dnnl_primitive_t src_in, dst_out;
  dnnl_memory_t src_inner, dst_inner;
  size_t src_bytes, dst_bytes;
} kernel_site;

static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static kernel_site *sites;
static _Thread_local const void *current_owner;

const void *o2m_rt_set_owner(const void *owner) {
  const void *was = current_owner;
  current_owner = owner;
  return was;
}

static void drop_parts(kernel_site *s) {
  dnnl_primitive_t prims[3] = {s->prim, s->src_in, s->dst_out};
  for (int i = 0; i < 3; i++)
    if (prims[i]) p_dnnl_primitive_destroy(prims[i]);
  dnnl_memory_t mems[7] = {s->src, s->wei, s->bias, s->dst, s->zp, s->src_inner, s->dst_inner};
  for (int i = 0; i < 7; i++)
    if (mems[i]) p_dnnl_memory_destroy(mems[i]);
  s->prim = s->src_in = s->dst_out = NULL;
  s->src = s->wei = s->bias = s->dst = s->zp = s->src_inner = s->dst_inner = NULL;
  s->weights = NULL;
}

static void free_site(kernel_site *s) {
  drop_parts(s);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

void o2m_rt_release(const void *owner) {
  if (!dnnl_ready || !owner) return;
  pthread_mutex_lock(&sites_lock);
  for (kernel_site **p = &sites; *p;) {
    kernel_site *s = *p;
    if (s->owner == owner) {
      *p = s->next;
      free_site(s);
    } else {
      p = &s->next;
    }
  }
  pthread_mutex_unlock(&sites_lock);
}

static int typed_desc(dnnl_memory_desc_t *md, int rank, const int64_t *dims, dnnl_data_type_t dt,
                      dnnl_format_tag_t tag) {
  dnnl_dims_t d;
  for (int i = 0; i < rank; i++) d[i] = dims[i];
  return p_dnnl_memory_desc_init_by_tag(md, rank, d, dt, tag) == dnnl_success;
}

static int tag_desc(dnnl_memory_desc_t *md, int rank, const int64_t *dims, dnnl_format_tag_t tag) {
  return typed_desc(md, rank, dims, dnnl_f32, tag);
}

/* Copies weights of layout `plain` at `data` into `into` (the layout a
 * primitive chose); non-zero on success. */
static int reorder_weights(const dnnl_memory_desc_t *plain, const void *data, dnnl_memory_t into) {
  const dnnl_memory_desc_t *to = NULL;
  dnnl_primitive_desc_t rpd = NULL;
  dnnl_primitive_t reorder = NULL;
  dnnl_memory_t from = NULL;
  int ok = p_dnnl_memory_get_memory_desc(into, &to) == dnnl_success &&
           p_dnnl_memory_create(&from, plain, engine, (void *)(uintptr_t)data) == dnnl_success &&
           p_dnnl_reorder_primitive_desc_create(&rpd, plain, engine, to, engine, NULL) == dnnl_success &&
           p_dnnl_primitive_create(&reorder, rpd) == dnnl_success;
  if (ok) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, into}};
    ok = p_dnnl_primitive_execute(reorder, stream, 2, args) == dnnl_success && p_dnnl_stream_wait(stream) == dnnl_success;
  }
  if (reorder) p_dnnl_primitive_destroy(reorder);
  if (rpd) p_dnnl_primitive_desc_destroy(rpd);
  if (from) p_dnnl_memory_destroy(from);
  return ok;
}

/* The parts of a 2-D convolution's primitive: a convolution of NHWC
 * source and destination (dims in NCHW order) of types dt[0], dt[1],
 * weights dt[2] in the layout the kernel chooses (*w_plain: ONNX's, OIHW
 * or GOIHW with groups), a bias dt[3] when has_bias; window: strides,
 * pads (top, left, bottom, right), dilations (1: none). */
typedef struct conv_shape {
  const int64_t *src_dims, *dst_dims, *w_dims; /* w: [F, C/g, KH, KW] */
  int64_t groups;
  dnnl_data_type_t dt[4];
  int has_bias;
  const int64_t *strides, *pads, *dilations;
} conv_shape;

static int conv_desc(const conv_shape *c, dnnl_convolution_desc_t *cd, dnnl_memory_desc_t *src_md,
                     dnnl_memory_desc_t *dst_md, dnnl_memory_desc_t *w_plain, dnnl_memory_desc_t *b_md) {
  int64_t g = c->groups, f = c->w_dims[0];
  int64_t w_dims[5] = {g, f / g, c->w_dims[1], c->w_dims[2], c->w_dims[3]}, b_dims[1] = {f};
  dnnl_memory_desc_t w_any;
  int grouped = g > 1;
  if (!typed_desc(src_md, 4, c->src_dims, c->dt[0], dnnl_nhwc) || !typed_desc(dst_md, 4, c->dst_dims, c->dt[1], dnnl_nhwc) ||
      !typed_desc(b_md, 1, b_dims, c->dt[3], dnnl_x) ||
      !typed_desc(w_plain, grouped ? 5 : 4, grouped ? w_dims : w_dims + 1, c->dt[2], grouped ? dnnl_goihw : dnnl_oihw) ||
      !typed_desc(&w_any, grouped ? 5 : 4, grouped ? w_dims : w_dims + 1, c->dt[2], dnnl_format_tag_any))
    return 0;
  dnnl_dims_t strides = {c->strides[0], c->strides[1]}, dilates = {c->dilations[0] - 1, c->dilations[1] - 1};
  dnnl_dims_t pad_l = {c->pads[0], c->pads[1]}, pad_r = {c->pads[2], c->pads[3]};
  return p_dnnl_dilated_convolution_forward_desc_init(cd, dnnl_forward_inference, dnnl_convolution_direct, src_md,
                                                      &w_any, c->has_bias ? b_md : NULL, dst_md, strides, dilates,
                                                      pad_l, pad_r) == dnnl_success;
}

/* oneDNN's eltwise post-op of the activation p [P_ACT] names, with its
 * alpha and beta (p [P_ALPHA], p [P_BETA] hold the activation's own as
 * float bits); undef for a code it has none of. */
static dnnl_alg_kind_t eltwise_of(const int64_t *p, float *alpha, float *beta) {
  static const struct {
    dnnl_alg_kind_t alg;
    int own_params; /* alpha and beta from p, else these */
    float alpha, beta;
  } table[RT_ACT_COUNT] = {
      [RT_ACT_RELU] = {dnnl_eltwise_relu, 0, 0.0f, 0.0f},
      [RT_ACT_CLIP] = {dnnl_eltwise_clip_v2, 1, 0.0f, 0.0f},
      [RT_ACT_HARD_SWISH] = {dnnl_eltwise_hardswish, 0, 0.0f, 0.0f}, /* oneDNN 2's: x relu6(x + 3) / 6 */
      [RT_ACT_SIGMOID] = {dnnl_eltwise_logistic, 0, 0.0f, 0.0f},
      [RT_ACT_TANH] = {dnnl_eltwise_tanh, 0, 0.0f, 0.0f},
      [RT_ACT_LEAKY_RELU] = {dnnl_eltwise_relu, 1, 0.0f, 0.0f}, /* alpha: the slope below 0 */
      [RT_ACT_SILU] = {dnnl_eltwise_swish, 0, 1.0f, 0.0f},      /* x sigmoid(alpha x) */
  };
  int64_t code = p[P_ACT];
  if (code <= RT_ACT_NONE || code >= RT_ACT_COUNT) return dnnl_alg_kind_undef;
  *alpha = table[code].alpha, *beta = table[code].beta;
  if (table[code].own_params) {
    memcpy(alpha, &p[P_ALPHA], sizeof(float));
    memcpy(beta, &p[P_BETA], sizeof(float));
  }
  return table[code].alg;
}

/* Builds the site's primitive and memories (weights reordered from w). */
static int build_site(kernel_site *s, const int64_t *p, const memref4 *x, const memref4 *w, const memref4 *y) {
  int64_t src_dims[4] = {x->sizes[0], x->sizes[3], x->sizes[1], x->sizes[2]};
  int64_t dst_dims[4] = {y->sizes[0], y->sizes[3], y->sizes[1], y->sizes[2]};
  conv_shape shape = {src_dims, dst_dims, w->sizes, p[P_GROUPS], {dnnl_f32, dnnl_f32, dnnl_f32, dnnl_f32},
                      p[P_HAS_BIAS] != 0, p + P_STRIDE, p + P_PAD, p + P_DILATION};
  dnnl_memory_desc_t src_md, dst_md, w_plain, b_md;
  dnnl_convolution_desc_t cd;
  if (!conv_desc(&shape, &cd, &src_md, &dst_md, &w_plain, &b_md)) return 0;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t ops = NULL;
  int ok = p_dnnl_primitive_attr_create(&attr) == dnnl_success && p_dnnl_post_ops_create(&ops) == dnnl_success;
  if (ok && p[P_HAS_Z]) ok = p_dnnl_post_ops_append_sum(ops, 1.0f) == dnnl_success;
  if (ok && p[P_ACT] != RT_ACT_NONE) {
    float alpha, beta;
    dnnl_alg_kind_t alg = eltwise_of(p, &alpha, &beta);
    ok = alg != dnnl_alg_kind_undef && p_dnnl_post_ops_append_eltwise(ops, 1.0f, alg, alpha, beta) == dnnl_success;
  }
  if (ok) ok = p_dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
  dnnl_primitive_desc_t pd = NULL;
  if (ok) ok = p_dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL) == dnnl_success;
  if (ops) p_dnnl_post_ops_destroy(ops);
  if (attr) p_dnnl_primitive_attr_destroy(attr);
  if (!ok) return 0;
  const dnnl_memory_desc_t *w_md = p_dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  ok = p_dnnl_primitive_create(&s->prim, pd) == dnnl_success &&
       p_dnnl_memory_create(&s->src, &src_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->dst, &dst_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->bias, &b_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->wei, w_md, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success;
  /* the weights, reordered once (oneDNN copies plain ones too) */
  const float *wp = w->aligned + w->offset;
  ok = ok && reorder_weights(&w_plain, wp, s->wei);
  p_dnnl_primitive_desc_destroy(pd);
  s->weights = wp;
  return ok;
}

/* Builds a site's primitive and memories; 0 when oneDNN refuses. */
typedef int (*site_builder)(kernel_site *s, const int64_t *p, const memref4 *x, const memref4 *w, const memref4 *y);

/* The site of `key` (params and shapes) for the current model, built on
 * first use (locked; NULL when oneDNN refuses it). */
static kernel_site *find_site(const int64_t *key, site_builder build, const int64_t *p, const memref4 *x,
                            const memref4 *w, const memref4 *y, int *owned) {
  const void *owner = current_owner;
  *owned = 0;
  pthread_mutex_lock(&sites_lock);
  kernel_site *s = sites;
  while (owner && s && (s->owner != owner || memcmp(s->key, key, sizeof(s->key)) != 0)) s = s->next;
  if (!owner || !s) {
    s = calloc(1, sizeof(*s));
    if (s) {
      s->owner = owner;
      memcpy(s->key, key, sizeof(s->key));
      pthread_mutex_init(&s->lock, NULL);
      if (!build(s, p, x, w, y)) {
        free_site(s);
        s = NULL;
      } else if (owner) {
        s->next = sites;
        sites = s;
      } else {
        *owned = 1;
      }
    }
  }
  if (s) pthread_mutex_lock(&s->lock);
  pthread_mutex_unlock(&sites_lock);
  return s;
}

/* Whether the current model has a site of `key` already. */
static int site_exists(const int64_t *key) {
  pthread_mutex_lock(&sites_lock);
  kernel_site *s = sites;
  while (s && (s->owner != current_owner || memcmp(s->key, key, sizeof(s->key)) != 0)) s = s->next;
  pthread_mutex_unlock(&sites_lock);
  return s != NULL;
}

/* Runs the site's primitive on x (and the bias) into y. */
static int run_site(kernel_site *s, const float *x, const float *bias, float *y) {
  int n_args = 0;
  dnnl_exec_arg_t args[4];
  args[n_args++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, s->src};
  if (s->wei) args[n_args++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, s->wei};
  if (bias) args[n_args++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, s->bias};
  args[n_args++] = (dnnl_exec_arg_t){DNNL_ARG_DST, s->dst};
  return s->prim && p_dnnl_memory_set_data_handle(s->src, (void *)(uintptr_t)x) == dnnl_success &&
         p_dnnl_memory_set_data_handle(s->dst, y) == dnnl_success &&
         (!bias || p_dnnl_memory_set_data_handle(s->bias, (void *)(uintptr_t)bias) == dnnl_success) &&
         p_dnnl_primitive_execute(s->prim, stream, n_args, args) == dnnl_success &&
         p_dnnl_stream_wait(stream) == dnnl_success;
}

/* ---- the kernel ------------------------------------------------------------------- */

static int dense_nhwc(const memref4 *m) {
  return m->strides[3] == 1 && m->strides[2] == m->sizes[3] && m->strides[1] == m->sizes[2] * m->sizes[3] &&
         (m->sizes[0] == 1 || m->strides[0] == m->sizes[1] * m->sizes[2] * m->sizes[3]);
}

/* dst (dense) = m, element by element along its rows */
static void copy_dense(const memref4 *m, float *dst) {
  const float *base = m->aligned + m->offset;
  for (int64_t a = 0; a < m->sizes[0]; a++)
    for (int64_t b = 0; b < m->sizes[1]; b++)
      for (int64_t c = 0; c < m->sizes[2]; c++) {
        const float *row = base + a * m->strides[0] + b * m->strides[1] + c * m->strides[2];
        for (int64_t d = 0; d < m->sizes[3]; d++) *dst++ = row[d * m->strides[3]];
      }
}

static size_t elements(const memref4 *m) { return (size_t)(m->sizes[0] * m->sizes[1] * m->sizes[2] * m->sizes[3]); }

/* v through the activation p [P_ACT] names, in plain C. */
static float activated(const int64_t *p, float v) {
  float a, b;
  memcpy(&a, &p[P_ALPHA], sizeof(float));
  memcpy(&b, &p[P_BETA], sizeof(float));
  switch (p[P_ACT]) {
  case RT_ACT_RELU: return v < 0 ? 0 : v;
  case RT_ACT_CLIP: return v < a ? a : v > b ? b : v;
  case RT_ACT_HARD_SWISH: return v * fminf(fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f);
  case RT_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
  case RT_ACT_TANH: return tanhf(v);
  case RT_ACT_LEAKY_RELU: return v < 0 ? a * v : v;
  case RT_ACT_SILU: return v / (1.0f + expf(-v));
  default: return v;
  }
}

/* A loop convolution for what oneDNN refuses (not expected: the emitter
 * passes the forms it takes), the same arithmetic in plain C. */
static void reference_conv(const int64_t *p, const float *x, const memref4 *xm, const memref4 *w, const float *b,
                           float *y, const memref4 *ym) {
  int64_t n = xm->sizes[0], h = xm->sizes[1], wd = xm->sizes[2], c = xm->sizes[3];
  int64_t oh = ym->sizes[1], ow = ym->sizes[2], f = ym->sizes[3], kh = w->sizes[2], kw = w->sizes[3];
  int64_t g = p[P_GROUPS], cg = c / g, fg = f / g;
  const float *wp = w->aligned + w->offset;
  for (int64_t i = 0; i < n; i++)
    for (int64_t r = 0; r < oh; r++)
      for (int64_t q = 0; q < ow; q++)
        for (int64_t o = 0; o < f; o++) {
          double acc = b ? b[o] : 0.0;
          int64_t grp = o / fg;
          for (int64_t u = 0; u < kh; u++) {
            int64_t hy = r * p[P_STRIDE] - p[P_PAD] + u * p[P_DILATION];
            if (hy < 0 || hy >= h) continue;
            for (int64_t v = 0; v < kw; v++) {
              int64_t wx = q * p[P_STRIDE + 1] - p[P_PAD + 1] + v * p[P_DILATION + 1];
              if (wx < 0 || wx >= wd) continue;
              const float *xp = x + ((i * h + hy) * wd + wx) * c + grp * cg;
              for (int64_t k = 0; k < cg; k++) acc += xp[k] * wp[((o * cg + k) * kh + u) * kw + v];
            }
          }
          float *out = y + ((i * oh + r) * ow + q) * f + o;
          *out = activated(p, (float)acc + (p[P_HAS_Z] ? *out : 0.0f));
        }
}

static void rt_conv(memref4 *x, memref4 *w, memref1 *b, memref4 *z, memref4 *y, memref1 *params) {
  const int64_t *p = (const int64_t *)params->aligned + params->offset;
  float *yp = y->aligned + y->offset; /* the emitter's buffer: dense */
  if (p[P_HAS_Z]) copy_dense(z, yp);  /* the sum post-op adds into dst */
  float *xd = NULL;
  const float *xp = x->aligned + x->offset;
  if (!dense_nhwc(x)) {
    xd = malloc(elements(x) * sizeof(float));
    if (xd) copy_dense(x, xd);
    xp = xd;
  }
  const float *bp = p[P_HAS_BIAS] ? (const float *)b->aligned + b->offset : NULL;
  int64_t macs = elements(y) * w->sizes[1] * w->sizes[2] * w->sizes[3];
  int threads = call_threads(macs);
  int64_t key[KEY_WORDS] = {0};
  key[KEY_THREADS] = op_threads(macs);
  memcpy(key, p, sizeof(int64_t) * P_COUNT);
  key[P_SITE] = (int64_t)(uintptr_t)(w->aligned + w->offset); /* a site per weights */
  memcpy(key + P_COUNT, x->sizes, sizeof(int64_t) * 4);
  memcpy(key + P_COUNT + 4, w->sizes, sizeof(int64_t) * 4);
  int owned = 0, done = 0;
  kernel_site *s = xp && o2m_rt_dnnl_available() ? find_site(key, build_site, p, x, w, y, &owned) : NULL;
  if (s) {
    /* new weights at this site (not expected: they are the model's): reorder them again */
    if (s->weights != w->aligned + w->offset) {
      drop_parts(s);
      if (!build_site(s, p, x, w, y)) drop_parts(s);
    }
    done = run_site(s, xp, bp, yp);
    pthread_mutex_unlock(&s->lock);
    if (owned) free_site(s);
  }
  threads_back(threads);
  if (!done && xp) reference_conv(p, xp, x, w, bp, yp, y);
  free(xd);
}

/* ---- max pools ------------------------------------------------------------------------------ */

enum { Q_SITE, Q_KERNEL, Q_STRIDE = Q_KERNEL + 2, Q_PAD = Q_STRIDE + 2, Q_DILATION = Q_PAD + 4, Q_COUNT = Q_DILATION + 2 };

static int build_pool_site(kernel_site *s, const int64_t *p, const memref4 *x, const memref4 *w, const memref4 *y) {
  (void)w;
  int64_t src_dims[4] = {x->sizes[0], x->sizes[3], x->sizes[1], x->sizes[2]};
  int64_t dst_dims[4] = {y->sizes[0], y->sizes[3], y->sizes[1], y->sizes[2]};
  dnnl_memory_desc_t src_md, dst_md;
  if (!tag_desc(&src_md, 4, src_dims, dnnl_nhwc) || !tag_desc(&dst_md, 4, dst_dims, dnnl_nhwc)) return 0;
  dnnl_dims_t strides = {p[Q_STRIDE], p[Q_STRIDE + 1]}, kernel = {p[Q_KERNEL], p[Q_KERNEL + 1]};
  dnnl_dims_t dilates = {p[Q_DILATION] - 1, p[Q_DILATION + 1] - 1};
  /* the bottom and right pads that give y's size (ceil mode's, or fewer
   * than given where floor mode leaves input unread) */
  dnnl_dims_t pad_l = {p[Q_PAD], p[Q_PAD + 1]}, pad_r;
  for (int i = 0; i < 2; i++)
    pad_r[i] = (dst_dims[2 + i] - 1) * p[Q_STRIDE + i] + (p[Q_KERNEL + i] - 1) * p[Q_DILATION + i] + 1 -
               src_dims[2 + i] - p[Q_PAD + i];
  dnnl_pooling_v2_desc_t pool;
  dnnl_primitive_desc_t pd = NULL;
  int ok = p_dnnl_pooling_v2_forward_desc_init(&pool, dnnl_forward_inference, dnnl_pooling_max, &src_md, &dst_md,
                                               strides, kernel, dilates, pad_l, pad_r) == dnnl_success &&
           p_dnnl_primitive_desc_create(&pd, &pool, NULL, engine, NULL) == dnnl_success;
  ok = ok && p_dnnl_primitive_create(&s->prim, pd) == dnnl_success &&
       p_dnnl_memory_create(&s->src, &src_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->dst, &dst_md, engine, DNNL_MEMORY_NONE) == dnnl_success;
  if (pd) p_dnnl_primitive_desc_destroy(pd);
  return ok;
}

/* The same in plain C: the largest element of each window inside x. */
static void reference_pool(const int64_t *p, const float *x, const memref4 *xm, float *y, const memref4 *ym) {
  int64_t h = xm->sizes[1], wd = xm->sizes[2], c = xm->sizes[3];
  for (int64_t i = 0; i < ym->sizes[0]; i++)
    for (int64_t r = 0; r < ym->sizes[1]; r++)
      for (int64_t q = 0; q < ym->sizes[2]; q++)
        for (int64_t k = 0; k < c; k++) {
          float best = -__builtin_inff();
          for (int64_t u = 0; u < p[Q_KERNEL]; u++) {
            int64_t hy = r * p[Q_STRIDE] - p[Q_PAD] + u * p[Q_DILATION];
            for (int64_t v = 0; hy >= 0 && hy < h && v < p[Q_KERNEL + 1]; v++) {
              int64_t wx = q * p[Q_STRIDE + 1] - p[Q_PAD + 1] + v * p[Q_DILATION + 1];
              if (wx < 0 || wx >= wd) continue;
              float e = x[((i * h + hy) * wd + wx) * c + k];
              if (e > best || e != e) best = e;
            }
          }
          y[((i * ym->sizes[1] + r) * ym->sizes[2] + q) * c + k] = best;
        }
}

static void rt_pool(memref4 *x, memref4 *y, memref1 *params) {
  const int64_t *p = (const int64_t *)params->aligned + params->offset;
  float *yp = y->aligned + y->offset, *xd = NULL;
  const float *xp = x->aligned + x->offset;
  if (!dense_nhwc(x)) {
    xd = malloc(elements(x) * sizeof(float));
    if (xd) copy_dense(x, xd);
    xp = xd;
  }
  int64_t compares = elements(y) * p[Q_KERNEL] * p[Q_KERNEL + 1];
  int threads = call_threads(compares);
  int64_t key[KEY_WORDS] = {0};
  memcpy(key, p, sizeof(int64_t) * Q_COUNT);
  key[0] = 0; /* pools of the same shapes and params share a site */
  key[KEY_WORDS - 1] = -1; /* no convolution's key ends so */
  key[KEY_THREADS] = op_threads(compares);
  memcpy(key + Q_COUNT, x->sizes, sizeof(int64_t) * 4);
  int owned = 0, done = 0;
  kernel_site *s = xp && o2m_rt_dnnl_available() ? find_site(key, build_pool_site, p, x, NULL, y, &owned) : NULL;
  if (s) {
    done = run_site(s, xp, NULL, yp);
    pthread_mutex_unlock(&s->lock);
    if (owned) free_site(s);
  }
  threads_back(threads);
  if (!done && xp) reference_pool(p, xp, x, yp, y);
  free(xd);
}

/* ---- 8-bit convolutions ----------------------------------------------------------------------- */

/* The call whose site is being built (find_site calls the builder on the
 * calling thread, which sets this around the call). */
static _Thread_local const rt_qconv_call *building;

/* The site's primitive of pd (destroyed here) and its memories: weights
 * reordered from the call's, the zero point's when zp_md. */
static int make_qconv_parts(kernel_site *s, dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *src_md,
                            const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *b_md,
                            const dnnl_memory_desc_t *w_plain, const dnnl_memory_desc_t *zp_md, const rt_qconv_call *c) {
  const dnnl_memory_desc_t *w_md = p_dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  int ok = p_dnnl_primitive_create(&s->prim, pd) == dnnl_success &&
           p_dnnl_memory_create(&s->src, src_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
           p_dnnl_memory_create(&s->dst, dst_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
           p_dnnl_memory_create(&s->bias, b_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
           (!zp_md || p_dnnl_memory_create(&s->zp, zp_md, engine, DNNL_MEMORY_NONE) == dnnl_success) &&
           p_dnnl_memory_create(&s->wei, w_md, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success &&
           reorder_weights(w_plain, c->w, s->wei);
  p_dnnl_primitive_desc_destroy(pd);
  s->weights = (const float *)(const void *)c->w;
  return ok;
}

/* y = saturate(round((x - x_zp) * w summed + bias) x_s w_s / y_s) + y_zp)
 * as oneDNN's int8 convolution on the call's channels-last x and y (src
 * zero point, output scales per channel, dst zero point); with QC_Y_INT32
 * y = the int32 sums, x's zero point a runtime value. */
static int build_qconv_site(kernel_site *s, const int64_t *p, const memref4 *x, const memref4 *w, const memref4 *y) {
  (void)x, (void)w, (void)y;
  const rt_qconv_call *c = building;
  if (!p[QC_NHWC]) return 0; /* its fast kernels read and write NHWC (rt_qconv.c transposes NCHW calls) */
  int64_t f = c->w_dims[0];
  int sums = p[QC_Y_INT32] != 0;
  conv_shape shape = {c->x_dims, c->y_dims, c->w_dims, p[QC_GROUPS],
                      {p[QC_X_SIGNED] ? dnnl_s8 : dnnl_u8, sums ? dnnl_s32 : p[QC_Y_SIGNED] ? dnnl_s8 : dnnl_u8, dnnl_s8,
                       dnnl_s32},
                      p[QC_HAS_BIAS] != 0, p + QC_STRIDE, p + QC_PAD, p + QC_DILATION};
  dnnl_memory_desc_t src_md, dst_md, w_plain, b_md, zp_md;
  dnnl_convolution_desc_t cd;
  int64_t one = 1;
  if (!conv_desc(&shape, &cd, &src_md, &dst_md, &w_plain, &b_md) || !typed_desc(&zp_md, 1, &one, dnnl_s32, dnnl_x))
    return 0;
  if (sums) {
    const int32_t runtime_zp = DNNL_RUNTIME_S32_VAL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    int ok = p_dnnl_primitive_attr_create(&attr) == dnnl_success &&
             (!p[QC_X_ZP] || p_dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &runtime_zp) == dnnl_success) &&
             p_dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL) == dnnl_success;
    if (attr) p_dnnl_primitive_attr_destroy(attr);
    return ok && make_qconv_parts(s, pd, &src_md, &dst_md, &b_md, &w_plain, &zp_md, c);
  }
  float x_scale, y_scale, *scales = malloc((size_t)f * sizeof(float));
  memcpy(&x_scale, &p[QC_X_SCALE], sizeof(float));
  memcpy(&y_scale, &p[QC_Y_SCALE], sizeof(float));
  for (int64_t o = 0; scales && o < f; o++) scales[o] = x_scale * c->w_scales[c->n_scales > 1 ? o : 0] / y_scale;
  int32_t x_zp = (int32_t)p[QC_X_ZP], y_zp = (int32_t)p[QC_Y_ZP];
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  int ok = scales && p_dnnl_primitive_attr_create(&attr) == dnnl_success &&
           p_dnnl_primitive_attr_set_output_scales(attr, f, 1 << 1, scales) == dnnl_success &&
           (!x_zp || p_dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &x_zp) == dnnl_success) &&
           (!y_zp || p_dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0, &y_zp) == dnnl_success) &&
           p_dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL) == dnnl_success;
  free(scales);
  if (attr) p_dnnl_primitive_attr_destroy(attr);
  return ok && make_qconv_parts(s, pd, &src_md, &dst_md, &b_md, &w_plain, NULL, c);
}

static int run_qconv_site(kernel_site *s, const rt_qconv_call *c) {
  int32_t zp = c->x_zp;
  dnnl_exec_arg_t conv[4] = {{DNNL_ARG_SRC, s->src}, {DNNL_ARG_WEIGHTS, s->wei}, {DNNL_ARG_DST, s->dst},
                             c->bias ? (dnnl_exec_arg_t){DNNL_ARG_BIAS, s->bias}
                                     : (dnnl_exec_arg_t){DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, s->zp}};
  int extra = c->bias || s->zp;
  return (!c->bias || p_dnnl_memory_set_data_handle(s->bias, (void *)(uintptr_t)c->bias) == dnnl_success) &&
         (!s->zp || p_dnnl_memory_set_data_handle(s->zp, &zp) == dnnl_success) &&
         p_dnnl_memory_set_data_handle(s->src, (void *)(uintptr_t)c->x) == dnnl_success &&
         p_dnnl_memory_set_data_handle(s->dst, c->y) == dnnl_success &&
         p_dnnl_primitive_execute(s->prim, stream, extra ? 4 : 3, conv) == dnnl_success &&
         p_dnnl_stream_wait(stream) == dnnl_success;
}

int rt_dnnl_qconv(const rt_qconv_call *c) {
  if (!o2m_rt_dnnl_available()) return 0;
  int64_t key[KEY_WORDS] = {0};
  memcpy(key, c->p, sizeof(int64_t) * QC_COUNT);
  key[0] = (int64_t)(uintptr_t)c->w; /* a site per weights */
  memcpy(key + QC_COUNT, c->x_dims, sizeof(int64_t) * 4);
  memcpy(key + QC_COUNT + 4, c->w_dims, sizeof(int64_t) * 4);
  key[KEY_WORDS - 1] = -3; /* an 8-bit convolution's */
  /* int8 multiply-adds run about four to a float's */
  int64_t macs = c->y_dims[0] * c->y_dims[1] * c->y_dims[2] * c->y_dims[3] * c->w_dims[1] * c->w_dims[2] * c->w_dims[3];
  key[KEY_THREADS] = op_threads(macs / 4);
  /* the site built (its weights reordered) on this thread alone, the
   * call on the call's threads */
  int threads = omp_threads(1), owned = 0, done = 0;
  const rt_qconv_call *was = building;
  building = c;
  kernel_site *s = find_site(key, build_qconv_site, c->p, NULL, NULL, NULL, &owned);
  if (s && s->weights != (const float *)(const void *)c->w) { /* new weights (not expected): built again */
    drop_parts(s);
    if (!build_qconv_site(s, c->p, NULL, NULL, NULL)) drop_parts(s);
  }
  building = was;
  omp_threads(op_threads(macs / 4));
  if (s) {
    done = s->prim && run_qconv_site(s, c);
    pthread_mutex_unlock(&s->lock);
    if (owned) free_site(s);
  }
  threads_back(threads);
  return done;
}

/* ---- float32 convolutions in ONNX's layout, 1-D to 3-D ------------------------------------- */

static _Thread_local const rt_conv_nd_call *building_nd;

/* A reorder from `from` to `to`; *r NULL when the two agree. */
static int make_reorder(dnnl_primitive_t *r, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to) {
  *r = NULL;
  if (p_dnnl_memory_desc_equal(from, to)) return 1;
  dnnl_primitive_desc_t rpd = NULL;
  int ok = p_dnnl_reorder_primitive_desc_create(&rpd, from, engine, to, engine, NULL) == dnnl_success &&
           p_dnnl_primitive_create(r, rpd) == dnnl_success;
  if (rpd) p_dnnl_primitive_desc_destroy(rpd);
  return ok;
}

/* The convolution with source, weights and destination in the layouts
 * oneDNN's kernel picks, and the reorders of x and y to and from them. */
static int build_conv_nd_site(kernel_site *s, const int64_t *p, const memref4 *x, const memref4 *w, const memref4 *y) {
  (void)x, (void)w, (void)y;
  const rt_conv_nd_call *c = building_nd;
  static const dnnl_format_tag_t data_tags[3] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
  /* weights as oneDNN's dims (G,) O, I, k... in ONNX's order: a Conv's
   * [F, C/g, k...] (O I), a ConvTranspose's [C, F/g, k...] (I O) */
  static const dnnl_format_tag_t w_tags[2][2][3] = {
      {{dnnl_oiw, dnnl_oihw, dnnl_oidhw}, {dnnl_goiw, dnnl_goihw, dnnl_goidhw}},
      {{dnnl_bac, dnnl_bacd, dnnl_bacde}, {dnnl_acbd, dnnl_acbde, dnnl_acbdef}}};
  int sp = c->rank - 2, transposed = p[CN_TRANSPOSED] != 0;
  int64_t g = p[CN_GROUPS], f = c->y_dims[1], w_dims[6] = {g, f / g, c->x_dims[1] / g}, b_dims[1] = {f};
  memcpy(w_dims + 3, c->w_dims + 2, sizeof(int64_t) * (size_t)sp);
  const int64_t *wd = g > 1 ? w_dims : w_dims + 1;
  int w_rank = c->rank + (g > 1);
  dnnl_memory_desc_t src_plain, dst_plain, w_plain, b_md, src_any, dst_any, w_any;
  if (!tag_desc(&src_plain, c->rank, c->x_dims, data_tags[sp - 1]) ||
      !tag_desc(&dst_plain, c->rank, c->y_dims, data_tags[sp - 1]) ||
      !tag_desc(&w_plain, w_rank, wd, w_tags[transposed][g > 1][sp - 1]) ||
      !tag_desc(&b_md, 1, b_dims, dnnl_x) || !tag_desc(&src_any, c->rank, c->x_dims, dnnl_format_tag_any) ||
      !tag_desc(&dst_any, c->rank, c->y_dims, dnnl_format_tag_any) ||
      !tag_desc(&w_any, w_rank, wd, dnnl_format_tag_any))
    return 0;
  dnnl_dims_t strides, dilates, pad_l, pad_r;
  for (int i = 0; i < sp; i++) {
    strides[i] = p[CN_STRIDE + i], dilates[i] = p[CN_DILATION + i] - 1;
    pad_l[i] = p[CN_PAD_BEGIN + i], pad_r[i] = p[CN_PAD_END + i];
  }
  dnnl_convolution_desc_t cd;
  dnnl_deconvolution_desc_t dd;
  dnnl_primitive_desc_t pd = NULL;
  const dnnl_memory_desc_t *b_arg = p[CN_HAS_BIAS] ? &b_md : NULL;
  if (transposed ? p_dnnl_dilated_deconvolution_forward_desc_init(&dd, dnnl_forward_inference, dnnl_deconvolution_direct,
                                                                  &src_any, &w_any, b_arg, &dst_any, strides, dilates,
                                                                  pad_l, pad_r) != dnnl_success ||
                       p_dnnl_primitive_desc_create(&pd, &dd, NULL, engine, NULL) != dnnl_success
                 : p_dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                                &src_any, &w_any, b_arg, &dst_any, strides, dilates,
                                                                pad_l, pad_r) != dnnl_success ||
                       p_dnnl_primitive_desc_create(&pd, &cd, NULL, engine, NULL) != dnnl_success)
    return 0;
  const dnnl_memory_desc_t *src_md = p_dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *dst_md = p_dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  const dnnl_memory_desc_t *w_md = p_dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  int ok = make_reorder(&s->src_in, &src_plain, src_md) && make_reorder(&s->dst_out, dst_md, &dst_plain) &&
           p_dnnl_primitive_create(&s->prim, pd) == dnnl_success &&
           p_dnnl_memory_create(&s->src, &src_plain, engine, DNNL_MEMORY_NONE) == dnnl_success &&
           p_dnnl_memory_create(&s->dst, &dst_plain, engine, DNNL_MEMORY_NONE) == dnnl_success &&
           (!s->src_in || p_dnnl_memory_create(&s->src_inner, src_md, engine, DNNL_MEMORY_NONE) == dnnl_success) &&
           (!s->dst_out || p_dnnl_memory_create(&s->dst_inner, dst_md, engine, DNNL_MEMORY_NONE) == dnnl_success) &&
           p_dnnl_memory_create(&s->bias, &b_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
           p_dnnl_memory_create(&s->wei, w_md, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success &&
           reorder_weights(&w_plain, c->w, s->wei);
  s->src_bytes = s->src_in ? p_dnnl_memory_desc_get_size(src_md) : 0;
  s->dst_bytes = s->dst_out ? p_dnnl_memory_desc_get_size(dst_md) : 0;
  p_dnnl_primitive_desc_destroy(pd);
  s->weights = c->w;
  return ok;
}

static int set_handle(dnnl_memory_t m, const void *data) {
  return p_dnnl_memory_set_data_handle(m, (void *)(uintptr_t)data) == dnnl_success;
}

static int execute(dnnl_primitive_t prim, int n, const dnnl_exec_arg_t *args) {
  return p_dnnl_primitive_execute(prim, stream, n, args) == dnnl_success;
}

/* A buffer of at least `bytes` aligned for oneDNN's vector loads. */
static void *inner_buffer(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64); }

/* x reordered in, the convolution, y reordered out; the inner buffers
 * live for the call (malloc gives a freed block of the same size back). */
static int run_conv_nd_site(kernel_site *s, const rt_conv_nd_call *c) {
  void *src_buf = s->src_in ? inner_buffer(s->src_bytes) : NULL, *dst_buf = s->dst_out ? inner_buffer(s->dst_bytes) : NULL;
  dnnl_memory_t src = s->src_in ? s->src_inner : s->src, dst = s->dst_out ? s->dst_inner : s->dst;
  int ok = s->prim && (src_buf || !s->src_in) && (dst_buf || !s->dst_out) && set_handle(s->src, c->x) &&
           set_handle(s->dst, c->y) && (!src_buf || set_handle(s->src_inner, src_buf)) &&
           (!dst_buf || set_handle(s->dst_inner, dst_buf)) && (!c->bias || set_handle(s->bias, c->bias));
  if (ok && s->src_in) ok = execute(s->src_in, 2, (dnnl_exec_arg_t[]){{DNNL_ARG_FROM, s->src}, {DNNL_ARG_TO, src}});
  dnnl_exec_arg_t conv[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, s->wei}, {DNNL_ARG_DST, dst}, {DNNL_ARG_BIAS, s->bias}};
  if (ok) ok = execute(s->prim, c->bias ? 4 : 3, conv);
  if (ok && s->dst_out) ok = execute(s->dst_out, 2, (dnnl_exec_arg_t[]){{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, s->dst}});
  ok = ok && p_dnnl_stream_wait(stream) == dnnl_success;
  free(src_buf);
  free(dst_buf);
  return ok;
}

int rt_dnnl_conv_nd(const rt_conv_nd_call *c) {
  if (!o2m_rt_dnnl_available()) return 0;
  int64_t key[KEY_WORDS] = {0};
  memcpy(key, c->p, sizeof(int64_t) * CN_COUNT);
  key[CN_SITE] = (int64_t)(uintptr_t)c->w; /* a site per weights */
  memcpy(key + CN_COUNT, c->x_dims, sizeof(int64_t) * (size_t)c->rank);
  memcpy(key + CN_COUNT + 5, c->w_dims, sizeof(int64_t) * (size_t)c->rank);
  key[KEY_WORDS - 1] = -4; /* a convolution in ONNX's layout */
  /* a Conv's multiply-adds: each output element of the C/g inputs' taps; a ConvTranspose's: each input element's */
  const int64_t *each = c->p[CN_TRANSPOSED] ? c->x_dims : c->y_dims;
  int64_t macs = c->w_dims[1];
  for (int i = 0; i < c->rank; i++) macs *= each[i] * (i >= 2 ? c->w_dims[i] : 1);
  key[KEY_THREADS] = op_threads(macs);
  /* built (a primitive splits its work for the threads it is built on) and run on the call's threads */
  int threads = call_threads(macs), owned = 0, done = 0;
  const rt_conv_nd_call *was = building_nd;
  building_nd = c;
  kernel_site *s = find_site(key, build_conv_nd_site, c->p, NULL, NULL, NULL, &owned);
  if (s && s->weights != c->w) { /* new weights (not expected): built again */
    drop_parts(s);
    if (!build_conv_nd_site(s, c->p, NULL, NULL, NULL)) drop_parts(s);
  }
  building_nd = was;
  if (s) {
    done = run_conv_nd_site(s, c);
    pthread_mutex_unlock(&s->lock);
    if (owned) free_site(s);
  }
  threads_back(threads);
  return done;
}

/* ---- 8-bit matrix products ------------------------------------------------------------------ */

static _Thread_local const rt_qmatmul_call *building_product;

/* Y [m, n] s32 = (A - a_zp) B as oneDNN's int8 matmul, A's zero point given
 * per call (a runtime value: dynamic quantization computes it), B packed
 * once; a uint8 B of zero point 128 is taken as int8 B - 128. */
static int build_qmatmul_site(kernel_site *s, const int64_t *p, const memref4 *x, const memref4 *w, const memref4 *y) {
  (void)x, (void)w, (void)y;
  const rt_qmatmul_call *c = building_product;
  int b_unsigned = !p[QM_B_SIGNED];
  if (p[QM_B_ZP] != (b_unsigned ? 128 : 0)) return 0;
  int64_t a_dims[2] = {c->m, c->k}, b_dims[2] = {c->k, c->n}, y_dims[2] = {c->m, c->n}, one = 1;
  dnnl_memory_desc_t a_md, b_plain, b_any, y_md, zp_md;
  if (!typed_desc(&a_md, 2, a_dims, p[QM_A_SIGNED] ? dnnl_s8 : dnnl_u8, dnnl_ab) ||
      !typed_desc(&b_plain, 2, b_dims, dnnl_s8, dnnl_ab) || !typed_desc(&b_any, 2, b_dims, dnnl_s8, dnnl_format_tag_any) ||
      !typed_desc(&y_md, 2, y_dims, dnnl_s32, dnnl_ab) || !typed_desc(&zp_md, 1, &one, dnnl_s32, dnnl_x))
    return 0;
  dnnl_matmul_desc_t md;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  const int32_t runtime_zp = DNNL_RUNTIME_S32_VAL;
  int ok = p_dnnl_matmul_desc_init(&md, &a_md, &b_any, NULL, &y_md) == dnnl_success &&
           p_dnnl_primitive_attr_create(&attr) == dnnl_success &&
           (!p[QM_HAS_A_ZP] || p_dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &runtime_zp) == dnnl_success) &&
           p_dnnl_primitive_desc_create(&pd, &md, attr, engine, NULL) == dnnl_success;
  if (attr) p_dnnl_primitive_attr_destroy(attr);
  if (!ok) return 0;
  const dnnl_memory_desc_t *packed = p_dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  ok = p_dnnl_primitive_create(&s->prim, pd) == dnnl_success &&
       p_dnnl_memory_create(&s->src, &a_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->dst, &y_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->zp, &zp_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->wei, packed, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success;
  p_dnnl_primitive_desc_destroy(pd);
  /* B as int8 (a uint8 one shifted by its zero point 128), packed */
  int8_t *shifted = ok && b_unsigned ? malloc((size_t)(c->k * c->n)) : NULL;
  for (int64_t i = 0; shifted && i < c->k * c->n; i++) shifted[i] = (int8_t)(((const uint8_t *)c->b)[i] - 128);
  ok = ok && (!b_unsigned || shifted) && reorder_weights(&b_plain, shifted ? (const void *)shifted : c->b, s->wei);
  free(shifted);
  s->weights = (const float *)c->b;
  return ok;
}

int rt_dnnl_qmatmul(const rt_qmatmul_call *c) {
  if (!o2m_rt_dnnl_available()) return 0;
  int64_t key[KEY_WORDS] = {0};
  memcpy(key, c->p, sizeof(int64_t) * QM_COUNT);
  key[0] = 0; /* a site per B, below */
  key[QM_COUNT] = c->m, key[QM_COUNT + 1] = c->k, key[QM_COUNT + 2] = c->n;
  key[QM_COUNT + 3] = (int64_t)(uintptr_t)c->b;
  key[KEY_WORDS - 1] = -4; /* an 8-bit product's */
  key[KEY_THREADS] = op_threads(c->m * c->k * c->n / 4);
  int threads = omp_threads(1), owned = 0, done = 0; /* built on this thread alone, as above */
  const rt_qmatmul_call *was = building_product;
  building_product = c;
  kernel_site *s = find_site(key, build_qmatmul_site, c->p, NULL, NULL, NULL, &owned);
  building_product = was;
  omp_threads(op_threads(c->m * c->k * c->n / 4));
  if (s) {
    int32_t zp = c->a_zp;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, s->src}, {DNNL_ARG_WEIGHTS, s->wei}, {DNNL_ARG_DST, s->dst},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, s->zp}};
    done = s->prim && p_dnnl_memory_set_data_handle(s->src, (void *)(uintptr_t)c->a) == dnnl_success &&
           p_dnnl_memory_set_data_handle(s->dst, c->y) == dnnl_success &&
           p_dnnl_memory_set_data_handle(s->zp, &zp) == dnnl_success &&
           p_dnnl_primitive_execute(s->prim, stream, c->p[QM_HAS_A_ZP] ? 4 : 3, args) == dnnl_success &&
           p_dnnl_stream_wait(stream) == dnnl_success;
    pthread_mutex_unlock(&s->lock);
    if (owned) free_site(s);
  }
  threads_back(threads);
  return done;
}

/* ---- matrix products with constant B ---------------------------------------------------- */

typedef RT_F32_MEMREF(2) memref2;

enum { M_KIND, M_B, M_M, M_N, M_K, M_SA, M_SB = M_SA + 2, M_SC = M_SB + 2, M_ACC = M_SC + 2, M_COUNT };
_Static_assert((int)M_COUNT <= (int)KEY_THREADS, "a product's key fits a site's");

static int strided_desc(dnnl_memory_desc_t *md, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  dnnl_dims_t dims = {rows, cols}, strides = {row_stride, col_stride};
  return p_dnnl_memory_desc_init_by_strides(md, 2, dims, dnnl_f32, strides) == dnnl_success;
}

/* A float32 matmul's primitive description C (+)= A B (accumulate: with
 * the sum post-op) in *pd, the caller's to destroy; 0 (and no *pd) when
 * oneDNN refuses it. */
static int matmul_desc(dnnl_primitive_desc_t *pd, const dnnl_memory_desc_t *a_md, const dnnl_memory_desc_t *b_md,
                       const dnnl_memory_desc_t *c_md, int accumulate) {
  dnnl_matmul_desc_t md;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t ops = NULL;
  *pd = NULL;
  int ok = p_dnnl_matmul_desc_init(&md, a_md, b_md, NULL, c_md) == dnnl_success &&
           p_dnnl_primitive_attr_create(&attr) == dnnl_success && p_dnnl_post_ops_create(&ops) == dnnl_success &&
           (!accumulate || p_dnnl_post_ops_append_sum(ops, 1.0f) == dnnl_success) &&
           p_dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success &&
           p_dnnl_primitive_desc_create(pd, &md, attr, engine, NULL) == dnnl_success;
  if (ops) p_dnnl_post_ops_destroy(ops);
  if (attr) p_dnnl_primitive_attr_destroy(attr);
  return ok;
}

/* key: the kind, B's address, M, N, K, the strides of A, B (as [K, N])
 * and C, and whether C is added to; `w` carries B's data. */
static int build_matmul_site(kernel_site *s, const int64_t *k, const memref4 *x, const memref4 *w, const memref4 *y) {
  (void)x, (void)y, (void)w;
  dnnl_memory_desc_t a_md, b_md, b_any, c_md;
  dnnl_dims_t b_dims = {k[M_K], k[M_N]};
  if (!strided_desc(&a_md, k[M_M], k[M_K], k[M_SA], k[M_SA + 1]) ||
      !strided_desc(&b_md, k[M_K], k[M_N], k[M_SB], k[M_SB + 1]) ||
      !strided_desc(&c_md, k[M_M], k[M_N], k[M_SC], k[M_SC + 1]) ||
      p_dnnl_memory_desc_init_by_tag(&b_any, 2, b_dims, dnnl_f32, dnnl_format_tag_any) != dnnl_success)
    return 0;
  dnnl_primitive_desc_t pd;
  if (!matmul_desc(&pd, &a_md, &b_any, &c_md, (int)k[M_ACC])) return 0;
  const dnnl_memory_desc_t *packed = p_dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  int ok = p_dnnl_primitive_create(&s->prim, pd) == dnnl_success &&
       p_dnnl_memory_create(&s->src, &a_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->dst, &c_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->wei, packed, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success;
  /* B packed once into the layout the kernel reads */
  const float *bp = (const float *)(uintptr_t)k[M_B];
  ok = ok && reorder_weights(&b_md, bp, s->wei);
  p_dnnl_primitive_desc_destroy(pd);
  s->weights = bp;
  return ok;
}

/* When packing B pays and memory allows: A has rows enough to reuse it
 * (a vector times a matrix reads B once either way), B is at most
 * PACK_MAX_BYTES, and all packed copies together stay under
 * PACK_BUDGET_BYTES (a model of large weights keeps reading them in
 * place, through BLAS). */
enum { PACK_MIN_ROWS = 8 };
#define PACK_MAX_BYTES ((int64_t)64 << 20)
#define PACK_BUDGET_BYTES ((int64_t)1 << 30)
static int64_t packed_bytes; /* under sites_lock */

static int worth_packing(int64_t m, int64_t n, int64_t k) {
  int64_t bytes = n * k * (int64_t)sizeof(float);
  if (m < PACK_MIN_ROWS || bytes > PACK_MAX_BYTES) return 0;
  pthread_mutex_lock(&sites_lock);
  int ok = packed_bytes + bytes <= PACK_BUDGET_BYTES;
  if (ok) packed_bytes += bytes; /* kept for the process: sites of freed models rarely come back */
  pthread_mutex_unlock(&sites_lock);
  return ok;
}

/* C [M, N] (+)= A [M, K] B, B [K, N] given by its strides (sb); B is the
 * model's (a weight), packed once per loaded model. */
static void matmul(memref2 *a, const float *b, const int64_t *sb, memref2 *c, int64_t accumulate) {
  int64_t key[KEY_WORDS] = {0};
  key[M_KIND] = -2; /* a convolution's key starts with its weights' address (>= 0), a pool's ends with -1 */
  key[M_B] = (int64_t)(uintptr_t)b;
  key[M_M] = c->sizes[0], key[M_N] = c->sizes[1], key[M_K] = a->sizes[1];
  memcpy(key + M_SA, a->strides, 2 * sizeof(int64_t));
  memcpy(key + M_SB, sb, 2 * sizeof(int64_t));
  memcpy(key + M_SC, c->strides, 2 * sizeof(int64_t));
  key[M_ACC] = accumulate != 0;
  int64_t macs = key[M_M] * key[M_N] * key[M_K];
  key[KEY_THREADS] = op_threads(macs);
  float *ap = a->aligned + a->offset, *cp = c->aligned + c->offset;
  if (key[M_M] == 0 || key[M_N] == 0) return;
  int threads = call_threads(macs);
  int owned = 0, done = 0;
  kernel_site *s = NULL;
  if (key[M_K] && current_owner && o2m_rt_dnnl_available() && (site_exists(key) || worth_packing(key[M_M], key[M_N], key[M_K])))
    s = find_site(key, build_matmul_site, key, NULL, NULL, NULL, &owned);
  if (s) {
    done = run_site(s, ap, NULL, cp);
    pthread_mutex_unlock(&s->lock);
    if (owned) free_site(s);
  }
  threads_back(threads);
  if (!done)
    o2m_rt_gemm(key[M_M], key[M_N], key[M_K], ap, a->strides, b, sb, accumulate ? 1.0f : 0.0f, cp, c->strides);
}

static void rt_matmul(memref2 *a, memref2 *b, memref2 *c, int64_t accumulate) {
  matmul(a, b->aligned + b->offset, b->strides, c, accumulate);
}

/* C (+)= A W^T: W [N, K] read as B [K, N] through swapped strides. */
static void rt_matmul_bt(memref2 *a, memref2 *w, memref2 *c, int64_t accumulate) {
  const int64_t sb[2] = {w->strides[1], w->strides[0]};
  matmul(a, w->aligned + w->offset, sb, c, accumulate);
}

/* ---- batched products of two activations ----------------------------------------------- */

enum { BM_KIND, BM_BATCH, BM_M, BM_N, BM_K, BM_SA, BM_SB = BM_SA + 3, BM_SC = BM_SB + 3, BM_ACC = BM_SC + 3, BM_COUNT };
_Static_assert((int)BM_COUNT <= (int)KEY_THREADS, "a batched product's key fits a site's");
#define BATCHED_MIN_MACS ((int64_t)1 << 15)

static int strided3(dnnl_memory_desc_t *md, int64_t batch, int64_t rows, int64_t cols, const int64_t *strides) {
  dnnl_dims_t dims = {batch, rows, cols}, st = {strides[0], strides[1], strides[2]};
  return p_dnnl_memory_desc_init_by_strides(md, 3, dims, dnnl_f32, st) == dnnl_success;
}

/* key: the kind, the batch, M, N, K, the strides of A, B and C, and
 * whether C is added to. No operand is kept: each call names all three. */
static int build_batched_site(kernel_site *s, const int64_t *k, const memref4 *x, const memref4 *w,
                              const memref4 *y) {
  (void)x, (void)w, (void)y;
  dnnl_memory_desc_t a_md, b_md, c_md;
  if (!strided3(&a_md, k[BM_BATCH], k[BM_M], k[BM_K], k + BM_SA) ||
      !strided3(&b_md, k[BM_BATCH], k[BM_K], k[BM_N], k + BM_SB) ||
      !strided3(&c_md, k[BM_BATCH], k[BM_M], k[BM_N], k + BM_SC))
    return 0;
  dnnl_primitive_desc_t pd;
  if (!matmul_desc(&pd, &a_md, &b_md, &c_md, (int)k[BM_ACC])) return 0;
  int ok = p_dnnl_primitive_create(&s->prim, pd) == dnnl_success &&
       p_dnnl_memory_create(&s->src, &a_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->wei, &b_md, engine, DNNL_MEMORY_NONE) == dnnl_success &&
       p_dnnl_memory_create(&s->dst, &c_md, engine, DNNL_MEMORY_NONE) == dnnl_success;
  p_dnnl_primitive_desc_destroy(pd);
  return ok;
}

int rt_dnnl_batched_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa,
                         const float *b, const int64_t *sb, float beta, float *c, const int64_t *sc) {
  /* a primitive kept per loaded model (none without one: building it per
   * call costs more than BLAS's loop over the batch), for products large
   * enough to repay a primitive's call */
  if (!current_owner || batch < 1 || m < 1 || n < 1 || k < 1 || batch * m * n * k < BATCHED_MIN_MACS ||
      !o2m_rt_dnnl_available())
    return 0;
  int64_t key[KEY_WORDS] = {0};
  key[BM_KIND] = -5, key[BM_BATCH] = batch, key[BM_M] = m, key[BM_N] = n, key[BM_K] = k;
  memcpy(key + BM_SA, sa, 3 * sizeof(int64_t));
  memcpy(key + BM_SB, sb, 3 * sizeof(int64_t));
  memcpy(key + BM_SC, sc, 3 * sizeof(int64_t));
  key[BM_ACC] = beta != 0;
  key[KEY_THREADS] = op_threads(batch * m * n * k);
  int threads = call_threads(batch * m * n * k), owned = 0, done = 0;
  kernel_site *s = find_site(key, build_batched_site, key, NULL, NULL, NULL, &owned);
  if (s) {
    done = p_dnnl_memory_set_data_handle(s->wei, (void *)(uintptr_t)b) == dnnl_success && run_site(s, a, NULL, c);
    pthread_mutex_unlock(&s->lock);
    if (owned) free_site(s);
  }
  threads_back(threads);
  return done;
}

/* oneDNN's threaded sgemm for a product of the runtime's (rt_blas.c) when a
 * call has several threads: row-major C = beta C + A B with either operand
 * transposed; 0 when it cannot (no oneDNN, a layout it does not take). */
int rt_dnnl_gemm(int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa, const float *b,
                 const int64_t *sb, float beta, float *c, const int64_t *sc) {
  if (!o2m_rt_dnnl_available() || sc[1] != 1 || sc[0] < n) return 0;
  char ta, tb;
  int64_t lda, ldb;
  if (sa[1] == 1 && sa[0] >= k) ta = 'N', lda = sa[0];
  else if (sa[0] == 1 && sa[1] >= m) ta = 'T', lda = sa[1];
  else return 0;
  if (sb[1] == 1 && sb[0] >= n) tb = 'N', ldb = sb[0];
  else if (sb[0] == 1 && sb[1] >= k) tb = 'T', ldb = sb[1];
  else return 0;
  int was = call_threads(m * n * k);
  int ok = p_dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, sc[0]) == dnnl_success;
  threads_back(was);
  return ok;
}

int rt_dnnl_symbols(o2m_rt_symbol *out) {
  out[0] = (o2m_rt_symbol){"_mlir_ciface_" O2M_DNNL_CONV_CALL, (void *)(uintptr_t)rt_conv};
  out[1] = (o2m_rt_symbol){"_mlir_ciface_" O2M_DNNL_POOL_CALL, (void *)(uintptr_t)rt_pool};
  out[2] = (o2m_rt_symbol){"_mlir_ciface_" O2M_DNNL_SGEMM_CALL, (void *)(uintptr_t)rt_matmul};
  out[3] = (o2m_rt_symbol){"_mlir_ciface_" O2M_DNNL_SGEMM_BT_CALL, (void *)(uintptr_t)rt_matmul_bt};
  return 4;
}

int o2m_rt_dnnl_built(void) { return 1; }

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the names the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_dnnl_conv2d(memref4 *x, memref4 *w, memref1 *b, memref4 *z, memref4 *y, memref1 *params) {
  rt_conv(x, w, b, z, y, params);
}
void _mlir_ciface_o2m_dnnl_max_pool2d(memref4 *x, memref4 *y, memref1 *params) { rt_pool(x, y, params); }
void _mlir_ciface_o2m_dnnl_sgemm(memref2 *a, memref2 *b, memref2 *c, int64_t acc) { rt_matmul(a, b, c, acc); }
void _mlir_ciface_o2m_dnnl_sgemm_bt(memref2 *a, memref2 *w, memref2 *c, int64_t acc) { rt_matmul_bt(a, w, c, acc); }
#endif

#else /* built without oneDNN's header: the JIT keeps its own convolutions */

int o2m_rt_dnnl_built(void) { return 0; }
int o2m_rt_dnnl_available(void) { return 0; }
int rt_dnnl_gemm(int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa, const float *b,
                 const int64_t *sb, float beta, float *c, const int64_t *sc) {
  (void)m, (void)n, (void)k, (void)a, (void)sa, (void)b, (void)sb, (void)beta, (void)c, (void)sc;
  return 0;
}
int rt_dnnl_batched_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa,
                         const float *b, const int64_t *sb, float beta, float *c, const int64_t *sc) {
  (void)batch, (void)m, (void)n, (void)k, (void)a, (void)sa, (void)b, (void)sb, (void)beta, (void)c, (void)sc;
  return 0;
}
int rt_dnnl_qconv(const rt_qconv_call *c) {
  (void)c;
  return 0;
}
int rt_dnnl_qmatmul(const rt_qmatmul_call *c) {
  (void)c;
  return 0;
}
int rt_dnnl_conv_nd(const rt_conv_nd_call *c) {
  (void)c;
  return 0;
}
const void *o2m_rt_set_owner(const void *owner) {
  (void)owner;
  return NULL;
}
void o2m_rt_release(const void *owner) { (void)owner; }
int rt_dnnl_symbols(o2m_rt_symbol *out) {
  (void)out;
  return 0;
}

#endif
