/* infer_contrib.c - inference of onnxruntime's com.microsoft contrib ops
 * (ops_contrib.def) whose types no ONNX op's inference gives: FusedMatMul,
 * the skip layer normalizations, the QLinear* family, QGemm, the integer
 * matmuls to float and MatMulNBits. Schemas: onnxruntime's
 * docs/ContribOperators.md. A quantized op's output has its output zero
 * point's element type, else its first quantized input's.
 */
#include <string.h>

#include "infer/infer.h"

static int ranked(const o2m_type *t) { return t->kind == O2M_TYPE_TENSOR && t->rank >= 0; }

/* Output i: `like`'s shape (unranked when it has none) and `dtype`. */
static void out_like(o2m_infer_ctx *ctx, int i, const o2m_type *like, o2m_dtype dtype) {
  if (dtype == O2M_DT_UNDEFINED) return;
  o2m_out_shaped_like(ctx, i, dtype, like);
}

/* The element type of input `zp` when present, else of input `like`. */
static o2m_dtype quant_dtype(o2m_infer_ctx *ctx, int zp, int like) {
  if (o2m_in_present(ctx, zp) && o2m_in_type(ctx, zp)->elem) return o2m_in_type(ctx, zp)->elem;
  return o2m_in_type(ctx, like)->elem;
}

/* ---- matmuls ------------------------------------------------------------------------- */

/* t permuted as onnxruntime's FusedMatMul permutes an operand: transBatch
 * moves dim 0 behind the batch dims, trans swaps the last two; its dims
 * in `dims`. */
static o2m_type fused_operand(const o2m_type *t, int trans, int trans_batch, o2m_dim *dims) {
  o2m_type v = *t;
  int r = t->rank;
  if (!ranked(t) || r < 2 || r > 64 || (!trans && !trans_batch)) return v;
  memcpy(dims, t->dims, sizeof(o2m_dim) * (size_t)r);
  if (trans_batch && r >= 3) {
    for (int k = 0; k < r - 2; k++) dims[k] = t->dims[k + 1];
    dims[r - 2] = t->dims[0];
  }
  if (trans) {
    o2m_dim d = dims[r - 2];
    dims[r - 2] = dims[r - 1];
    dims[r - 1] = d;
  }
  v.dims = dims;
  return v;
}

/* FusedMatMul(A, B): MatMul of A and B permuted as transA/transBatchA and
 * transB/transBatchB say. */
o2m_status o2m_infer_fused_matmul(o2m_infer_ctx *ctx) {
  o2m_dim da[64], db[64];
  const o2m_type *a = o2m_in_type(ctx, 0), *b = o2m_in_type(ctx, 1);
  o2m_type ta = fused_operand(a, o2m_attr_int(ctx, "transA", 0) != 0, o2m_attr_int(ctx, "transBatchA", 0) != 0, da);
  o2m_type tb = fused_operand(b, o2m_attr_int(ctx, "transB", 0) != 0, o2m_attr_int(ctx, "transBatchB", 0) != 0, db);
  return o2m_matmul_shape_of(ctx, &ta, &tb, a->elem ? a->elem : b->elem);
}

/* MatMulIntegerToFloat(A, B, a_scale, ...): float, of a_scale's type. */
o2m_status o2m_infer_matmul_integer_to_float(o2m_infer_ctx *ctx) {
  return o2m_matmul_shape_of(ctx, o2m_in_type(ctx, 0), o2m_in_type(ctx, 1), o2m_in_type(ctx, 2)->elem);
}

/* DynamicQuantizeMatMul(A, B, ...): A's float type. */
o2m_status o2m_infer_dynamic_quantize_matmul(o2m_infer_ctx *ctx) {
  return o2m_matmul_shape_of(ctx, o2m_in_type(ctx, 0), o2m_in_type(ctx, 1), o2m_in_type(ctx, 0)->elem);
}

/* The count of input i's elements when its shape is known, else -1. */
static int64_t count_of(o2m_infer_ctx *ctx, int i) {
  const o2m_type *t = o2m_in_present(ctx, i) ? o2m_in_type(ctx, i) : NULL;
  int64_t count = 1;
  if (!t || !ranked(t)) return -1;
  for (int k = 0; k < t->rank; k++) {
    if (t->dims[k].size < 0) return -1;
    count *= t->dims[k].size;
  }
  return count;
}

/* MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?): A's shape with
 * its last dim N (attribute). The attributes and the operands' sizes are
 * checked against each other: K, N positive, block_size a power of two of
 * at least 16, bits 2 to 8, A's last dim K, B [N, blocks, block_size *
 * bits / 8], scales N * blocks, zero points N * blocks (float) or N *
 * ceil(blocks * bits / 8) (packed uint8), finite scales, a known g_idx K
 * blocks. */
o2m_status o2m_infer_matmul_nbits(o2m_infer_ctx *ctx) {
  if (!o2m_out_present(ctx, 0)) return O2M_OK;
  const o2m_type *a = o2m_in_type(ctx, 0);
  int64_t n = o2m_attr_int(ctx, "N", -1), k = o2m_attr_int(ctx, "K", -1), bits = o2m_attr_int(ctx, "bits", 4);
  int64_t block = o2m_attr_int(ctx, "block_size", -1);
  if (n <= 0 || k <= 0) return o2m_infer_error(ctx, "attributes K and N must be positive (K %lld, N %lld)", (long long)k, (long long)n);
  if (block < 16 || (block & (block - 1)))
    return o2m_infer_error(ctx, "block_size %lld is not a power of two of at least 16", (long long)block);
  if (bits < 2 || bits > 8) return o2m_infer_error(ctx, "bits %lld is not 2 to 8", (long long)bits);
  int64_t blocks = (k + block - 1) / block, blob = block * bits / 8;
  if (ranked(a) && a->rank > 0 && a->dims[a->rank - 1].size >= 0 && a->dims[a->rank - 1].size != k)
    return o2m_infer_error(ctx, "A's last dim is %lld, not K = %lld", (long long)a->dims[a->rank - 1].size, (long long)k);
  int64_t b_count = count_of(ctx, 1), s_count = count_of(ctx, 2), z_count = count_of(ctx, 3);
  if (b_count >= 0 && b_count != n * blocks * blob)
    return o2m_infer_error(ctx, "B has %lld elements, not N x blocks x block_size * bits / 8 = %lld x %lld x %lld",
                           (long long)b_count, (long long)n, (long long)blocks, (long long)blob);
  if (s_count >= 0 && s_count != n * blocks)
    return o2m_infer_error(ctx, "scales has %lld elements, not N x blocks = %lld", (long long)s_count, (long long)(n * blocks));
  if (z_count >= 0 && !o2m_in_present(ctx, 4)) {
    int64_t want = o2m_in_type(ctx, 3)->elem == O2M_DT_UINT8 ? n * ((blocks * bits + 7) / 8) : n * blocks;
    if (z_count != want)
      return o2m_infer_error(ctx, "zero_points has %lld elements, not %lld", (long long)z_count, (long long)want);
  }
  const o2m_tensor *groups = o2m_in_present(ctx, 4) ? o2m_in_known(ctx, 4) : NULL;
  if (groups && groups->data && groups->count != k)
    return o2m_infer_error(ctx, "g_idx has %lld elements, not K = %lld", (long long)groups->count, (long long)k);
  for (int64_t i = 0; groups && groups->data && i < groups->count; i++) {
    double g = o2m_tensor_get_float(groups, i);
    if (g < 0 || g >= (double)blocks)
      return o2m_infer_error(ctx, "g_idx[%lld] is %.0f, not a block (0 to %lld)", (long long)i, g, (long long)(blocks - 1));
  }
  o2m_status s = o2m_check_scale(ctx, 2, "scales", 0);
  if (s) return s;
  o2m_type *y = o2m_out_shaped_like(ctx, 0, a->elem, a);
  if (ranked(a) && a->rank > 0) y->dims[a->rank - 1] = o2m_dim_known(n);
  return O2M_OK;
}

/* QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?): (M, N)
 * of op(A) and op(B); float without y_scale, else y_zp's type. */
o2m_status o2m_infer_qgemm(o2m_infer_ctx *ctx) {
  if (!o2m_out_present(ctx, 0)) return O2M_OK;
  const o2m_type *a = o2m_in_type(ctx, 0), *b = o2m_in_type(ctx, 3);
  o2m_dtype dtype = o2m_in_present(ctx, 7) ? quant_dtype(ctx, 8, 0) : O2M_DT_FLOAT;
  if ((ranked(a) && a->rank != 2) || (ranked(b) && b->rank != 2))
    return o2m_infer_error(ctx, "A and B must be 2-D");
  o2m_type *y = o2m_out_tensor(ctx, 0, dtype, 2);
  int ta = o2m_attr_int(ctx, "transA", 0) != 0, tb = o2m_attr_int(ctx, "transB", 0) != 0;
  y->dims[0] = ranked(a) ? a->dims[ta ? 1 : 0] : o2m_dim_fresh(ctx);
  y->dims[1] = ranked(b) ? b->dims[tb ? 0 : 1] : o2m_dim_fresh(ctx);
  return O2M_OK;
}

/* ---- QLinear element-wise and pooling ops ------------------------------------------------ */

/* QLinearAdd, QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp):
 * A and B broadcast. */
o2m_status o2m_infer_qlinear_binary(o2m_infer_ctx *ctx) {
  const o2m_type *types[2] = {o2m_in_type(ctx, 0), o2m_in_type(ctx, 3)};
  o2m_type out;
  o2m_status s = o2m_broadcast(ctx, types, 2, &out);
  if (s) return s;
  out.kind = O2M_TYPE_TENSOR;
  out.elem = quant_dtype(ctx, 7, 0);
  o2m_out_set_type(ctx, 0, &out);
  return O2M_OK;
}

/* QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax(X, X_scale, X_zp,
 * Y_scale, Y_zp): X's shape. */
o2m_status o2m_infer_qlinear_unary(o2m_infer_ctx *ctx) {
  out_like(ctx, 0, o2m_in_type(ctx, 0), quant_dtype(ctx, 4, 0));
  return O2M_OK;
}

/* QLinearGlobalAveragePool: N, C and ones, channels first or last. */
o2m_status o2m_infer_qlinear_global_pool(o2m_infer_ctx *ctx) {
  if (!o2m_out_present(ctx, 0)) return O2M_OK;
  const o2m_type *x = o2m_in_type(ctx, 0);
  o2m_dtype dtype = quant_dtype(ctx, 4, 0);
  if (!ranked(x)) {
    if (dtype) o2m_out_tensor(ctx, 0, dtype, -1);
    return O2M_OK;
  }
  if (x->rank < 3) return o2m_infer_error(ctx, "X must have rank >= 3");
  int last = o2m_attr_int(ctx, "channels_last", 0) != 0;
  o2m_type *y = o2m_out_tensor(ctx, 0, dtype, x->rank);
  for (int k = 0; k < x->rank; k++) y->dims[k] = o2m_dim_known(1);
  y->dims[0] = x->dims[0];
  y->dims[last ? x->rank - 1 : 1] = x->dims[last ? x->rank - 1 : 1];
  return O2M_OK;
}

/* QLinearAveragePool(X, x_scale, x_zp, y_scale, y_zp): AveragePool's
 * shape; channels last: N and C known, the spatial dims symbols. */
o2m_status o2m_infer_qlinear_pool(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (!o2m_attr_int(ctx, "channels_last", 0)) return o2m_infer_pool(ctx);
  if (!o2m_out_present(ctx, 0) || !ranked(x) || x->rank < 3) return O2M_OK;
  o2m_type *y = o2m_out_tensor(ctx, 0, quant_dtype(ctx, 4, 0), x->rank);
  for (int k = 0; k < x->rank; k++) y->dims[k] = o2m_dim_fresh(ctx);
  y->dims[0] = x->dims[0];
  y->dims[x->rank - 1] = x->dims[x->rank - 1];
  return O2M_OK;
}

/* QLinearConcat(Y_scale, Y_zp, X0, X0_scale, X0_zp, ...): the X_i
 * concatenated along axis. */
o2m_status o2m_infer_qlinear_concat(o2m_infer_ctx *ctx) {
  if (!o2m_out_present(ctx, 0)) return O2M_OK;
  int n = (o2m_in_count(ctx) - 2) / 3;
  if (n < 1) return o2m_infer_error(ctx, "no input to concatenate");
  const o2m_type *first = o2m_in_type(ctx, 2);
  o2m_dtype dtype = quant_dtype(ctx, 1, 2);
  if (!ranked(first)) {
    if (dtype) o2m_out_tensor(ctx, 0, dtype, -1);
    return O2M_OK;
  }
  int64_t axis;
  o2m_status s = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", 0), first->rank, 0, &axis);
  if (s) return s;
  o2m_type *y = o2m_out_tensor(ctx, 0, dtype, first->rank);
  for (int k = 0; k < first->rank; k++) y->dims[k] = first->dims[k];
  for (int i = 1; i < n; i++) {
    const o2m_type *t = o2m_in_type(ctx, 2 + 3 * i);
    y->dims[axis] = ranked(t) && t->rank == first->rank ? o2m_dim_add(ctx, y->dims[axis], t->dims[axis])
                                                         : o2m_dim_fresh(ctx);
  }
  return O2M_OK;
}

/* ---- skip layer normalizations ---------------------------------------------------------- */

/* SkipLayerNormalization, SkipSimplifiedLayerNormalization(input, skip,
 * gamma, ...): output and input_skip_bias_sum (outputs 0 and 3) have the
 * input's type; mean and inv_std_var (1, 2) are float, the input's shape
 * with the last dim 1. */
o2m_status o2m_infer_skip_layer_norm(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  out_like(ctx, 0, x, x->elem);
  out_like(ctx, 3, x, x->elem);
  for (int i = 1; i < 3; i++) {
    if (!o2m_out_present(ctx, i)) continue;
    o2m_type *t = o2m_out_shaped_like(ctx, i, O2M_DT_FLOAT, x);
    if (ranked(x) && x->rank > 0) t->dims[x->rank - 1] = o2m_dim_known(1);
  }
  return O2M_OK;
}

/* EmbedLayerNormalization(input_ids (B, S), ..., word_embedding (V, H),
 * ...): output and embedding_sum (B, S, H) of the embeddings' type,
 * mask_index (B) int32. */
o2m_status o2m_infer_embed_layer_norm(o2m_infer_ctx *ctx) {
  const o2m_type *ids = o2m_in_type(ctx, 0), *word = o2m_in_type(ctx, 2);
  o2m_dtype dtype = word->elem;
  for (int i = 0; i < 3; i += 2) {
    if (!o2m_out_present(ctx, i) || !dtype) continue;
    o2m_type *y = o2m_out_tensor(ctx, i, dtype, 3);
    y->dims[0] = ranked(ids) && ids->rank == 2 ? ids->dims[0] : o2m_dim_fresh(ctx);
    y->dims[1] = ranked(ids) && ids->rank == 2 ? ids->dims[1] : o2m_dim_fresh(ctx);
    y->dims[2] = ranked(word) && word->rank == 2 ? word->dims[1] : o2m_dim_fresh(ctx);
  }
  if (o2m_out_present(ctx, 1)) {
    o2m_type *m = o2m_out_tensor(ctx, 1, O2M_DT_INT32, 1);
    m->dims[0] = ranked(ids) && ids->rank == 2 ? ids->dims[0] : o2m_dim_fresh(ctx);
  }
  return O2M_OK;
}

/* Attention(input (B, S, Hin), weights (Hin, Hq + Hk + Hv), ..., past
 * (2, B, N, P, D)?): output (B, S, Hv); present (2, B, N, P + S, D). */
o2m_status o2m_infer_ms_attention(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *w = o2m_in_type(ctx, 1), *past = o2m_in_type(ctx, 4);
  int64_t heads = o2m_attr_int(ctx, "num_heads", 0);
  if (heads <= 0) return o2m_infer_error(ctx, "num_heads must be positive");
  int64_t hv = -1, hq = -1;
  if (ranked(w) && w->rank == 2 && w->dims[1].size > 0) hq = hv = w->dims[1].size / 3;
  int64_t *sizes;
  if (o2m_attr_ints(ctx, "qkv_hidden_sizes", (const int64_t **)&sizes) == 3) {
    hq = sizes[0];
    hv = sizes[2];
  }
  if (o2m_out_present(ctx, 0)) {
    o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, 3);
    for (int k = 0; k < 2; k++) y->dims[k] = ranked(x) && x->rank == 3 ? x->dims[k] : o2m_dim_fresh(ctx);
    y->dims[2] = hv > 0 ? o2m_dim_known(hv) : o2m_dim_fresh(ctx);
  }
  if (o2m_out_present(ctx, 1)) {
    o2m_type *p = o2m_out_tensor(ctx, 1, x->elem, 5);
    p->dims[0] = o2m_dim_known(2);
    p->dims[1] = ranked(x) && x->rank == 3 ? x->dims[0] : o2m_dim_fresh(ctx);
    p->dims[2] = o2m_dim_known(heads);
    o2m_dim s = ranked(x) && x->rank == 3 ? x->dims[1] : o2m_dim_fresh(ctx);
    p->dims[3] = o2m_in_present(ctx, 4) && ranked(past) && past->rank == 5 ? o2m_dim_add(ctx, past->dims[3], s) : s;
    p->dims[4] = hq > 0 ? o2m_dim_known(hq / heads) : o2m_dim_fresh(ctx);
  }
  return O2M_OK;
}

/* MultiHeadAttention(query (B, S, H), key (B, L, H), value (B, L, Hv), ...,
 * past_key (B, N, P, D)?, ...): output (B, S, Hv); present_key and
 * present_value (B, N, P + L, D). */
o2m_status o2m_infer_multihead_attention(o2m_infer_ctx *ctx) {
  const o2m_type *q = o2m_in_type(ctx, 0), *k = o2m_in_type(ctx, 1), *v = o2m_in_type(ctx, 2);
  const o2m_type *pk = o2m_in_type(ctx, 6);
  int64_t heads = o2m_attr_int(ctx, "num_heads", 0);
  if (heads <= 0) return o2m_infer_error(ctx, "num_heads must be positive");
  int r3 = ranked(q) && q->rank == 3 && ranked(k) && k->rank == 3 && ranked(v) && v->rank == 3;
  if (!r3) return o2m_infer_unsupported(ctx, "query, key and value not all 3-D");
  if (o2m_out_present(ctx, 0)) {
    o2m_type *y = o2m_out_tensor(ctx, 0, q->elem, 3);
    y->dims[0] = q->dims[0];
    y->dims[1] = q->dims[1];
    y->dims[2] = v->dims[2];
  }
  for (int i = 1; i < 3; i++) {
    if (!o2m_out_present(ctx, i)) continue;
    const o2m_type *src = i == 1 ? k : v;
    o2m_type *p = o2m_out_tensor(ctx, i, q->elem, 4);
    p->dims[0] = q->dims[0];
    p->dims[1] = o2m_dim_known(heads);
    p->dims[2] = o2m_in_present(ctx, 6) && ranked(pk) && pk->rank == 4 ? o2m_dim_add(ctx, pk->dims[2], src->dims[1])
                                                                         : src->dims[1];
    p->dims[3] = src->dims[2].size > 0 ? o2m_dim_known(src->dims[2].size / heads) : o2m_dim_fresh(ctx);
  }
  return O2M_OK;
}

/* GroupQueryAttention(query (B, S, N*D), key (B, S, Nkv*D), value, past_key
 * (B, Nkv, P, D)?, ...): output (B, S, N*D); present_key / present_value
 * (B, Nkv, P + S, D). */
o2m_status o2m_infer_group_query_attention(o2m_infer_ctx *ctx) {
  const o2m_type *q = o2m_in_type(ctx, 0), *pk = o2m_in_type(ctx, 3);
  int64_t heads = o2m_attr_int(ctx, "num_heads", 0), kv = o2m_attr_int(ctx, "kv_num_heads", 0);
  if (heads <= 0 || kv <= 0) return o2m_infer_error(ctx, "num_heads and kv_num_heads must be positive");
  if (!ranked(q) || q->rank != 3) return o2m_infer_unsupported(ctx, "query not 3-D");
  out_like(ctx, 0, q, q->elem);
  for (int i = 1; i < 3; i++) {
    if (!o2m_out_present(ctx, i)) continue;
    o2m_type *p = o2m_out_tensor(ctx, i, q->elem, 4);
    p->dims[0] = q->dims[0];
    p->dims[1] = o2m_dim_known(kv);
    p->dims[2] = o2m_in_present(ctx, 3) && ranked(pk) && pk->rank == 4 ? o2m_dim_add(ctx, pk->dims[2], q->dims[1])
                                                                         : q->dims[1];
    p->dims[3] = q->dims[2].size > 0 ? o2m_dim_known(q->dims[2].size / heads) : o2m_dim_fresh(ctx);
  }
  return O2M_OK;
}

/* NhwcMaxPool(X (N, spatial..., C)): Y (N, spatial'..., C), the spatial
 * sizes symbols as NhwcConv's. */
o2m_status o2m_infer_nhwc_pool(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (!o2m_out_present(ctx, 0)) return O2M_OK;
  if (!ranked(x) || x->rank < 3) {
    if (x->elem) o2m_out_tensor(ctx, 0, x->elem, -1);
    return O2M_OK;
  }
  o2m_type *y = o2m_out_tensor(ctx, 0, x->elem, x->rank);
  for (int k = 1; k < x->rank - 1; k++) y->dims[k] = o2m_dim_fresh(ctx);
  y->dims[0] = x->dims[0];
  y->dims[x->rank - 1] = x->dims[x->rank - 1];
  return O2M_OK;
}

/* NhwcConv, NhwcFusedConv(X (N, spatial..., C), W (M, C/g, k...), ...):
 * Y (N, spatial'..., M); the spatial sizes are Conv's, inferred here as
 * symbols except where the window leaves them unchanged (not known
 * without it: left to the decomposition's Conv). */
static o2m_status nhwc_conv(o2m_infer_ctx *ctx, int w_at, o2m_dtype elem) {
  const o2m_type *x = o2m_in_type(ctx, 0), *w = o2m_in_type(ctx, w_at);
  if (!o2m_out_present(ctx, 0)) return O2M_OK;
  if (!ranked(x) || x->rank < 3) {
    if (elem) o2m_out_tensor(ctx, 0, elem, -1);
    return O2M_OK;
  }
  o2m_type *y = o2m_out_tensor(ctx, 0, elem, x->rank);
  for (int k = 0; k < x->rank; k++) y->dims[k] = o2m_dim_fresh(ctx);
  y->dims[0] = x->dims[0];
  if (ranked(w) && w->rank == x->rank) y->dims[x->rank - 1] = w->dims[0];
  return O2M_OK;
}

o2m_status o2m_infer_nhwc_conv(o2m_infer_ctx *ctx) { return nhwc_conv(ctx, 1, o2m_in_type(ctx, 0)->elem); }

/* NhwcQLinearConv (QLinearConv's operands, X and Y channels last; the
 * JIT's, layout_channels_last.c): Y of y_zero_point's type, dims as
 * NhwcConv's. */
o2m_status o2m_infer_nhwc_qlinear_conv(o2m_infer_ctx *ctx) { return nhwc_conv(ctx, 3, o2m_in_type(ctx, 7)->elem); }
