/* decompose_attention.c - Attention (23+) into MatMul, Softmax and
 * elementwise ops, following ONNX's reference:
 *   3-D Q/K/V [B, S, H*D] -> [B, H, S, D] (Reshape, Transpose)
 *   K, V = Concat(past, new) on the sequence axis (present_key/value)
 *   GQA/MQA: each KV head repeated q_heads / kv_heads times (a Gather)
 *   logits = (Q * sqrt(scale)) @ (K * sqrt(scale))^T, softcap c: c *
 *            tanh(logits / c)
 *   bias = attn_mask (bool -> 0 / -inf; padded with -inf up to the total
 *          sequence length) + causal mask (key j allowed iff j <= i +
 *          offset, offset = past length, or nonpad_kv_seqlen[b] - q length)
 *          + padding mask (keys from nonpad_kv_seqlen[b] on)
 *   P = Softmax(logits + bias) in softmax_precision, rows whose bias is
 *       all -inf set to 0; Y = P @ V, back to [B, S, H*Dv] for 3-D input
 *   (float16/bfloat16 inputs are computed in float32)
 *   qk_matmul_output by qk_matmul_output_mode (0/1: logits, 2: with bias,
 *   3: P).
 * Refused: sliding windows (25+), and shapes that
 * leave the head size (for the default scale), the head counts (for GQA)
 * or a padded mask's length unknown.
 */
#include <math.h>
#include <stdlib.h>

#include "transform/decompose_kit.h"

enum { ATT_Q, ATT_K, ATT_V, ATT_MASK, ATT_PAST_K, ATT_PAST_V, ATT_NONPAD };

typedef struct heads {
  int64_t q, kv; /* head counts, -1 unknown */
  int64_t head_size; /* of Q, -1 unknown */
} heads;

/* [B, S, H*D] -> [B, H, S, D]. */
static o2m_value *split_heads(o2m_rewriter *rw, o2m_value *x, int64_t n_heads) {
  const int64_t shape[4] = {0, 0, n_heads, -1}, perm[4] = {0, 2, 1, 3};
  return xk_transpose(rw, xk_reshape(rw, x, shape, 4), perm, 4);
}

/* [B, H, S, D] -> [B, S, H*D]. */
static o2m_value *merge_heads(o2m_rewriter *rw, o2m_value *x) {
  const int64_t shape[3] = {0, 0, -1}, perm[4] = {0, 2, 1, 3};
  return xk_reshape(rw, xk_transpose(rw, x, perm, 4), shape, 3);
}

/* 0 where `allowed`, -inf elsewhere, in `dtype`. */
static o2m_value *additive(o2m_rewriter *rw, o2m_value *allowed, o2m_dtype dtype) {
  return xk_where(rw, allowed, xk_scalar(rw, dtype, 0.0), xk_scalar(rw, dtype, -INFINITY));
}

/* The causal bias: key j allowed for query i iff j <= i + offset, where
 * offset (NULL: 0) is a scalar or per batch [B, 1, 1, 1]. */
static o2m_value *causal_bias(o2m_rewriter *rw, o2m_value *q4, o2m_value *k4, o2m_value *offset,
                              o2m_dtype dtype) {
  static const int64_t axis1[1] = {1};
  o2m_value *i = xk_unsqueeze(rw, xk_iota(rw, xk_dim(rw, q4, 2)), axis1, 1);
  if (offset) i = xk_op2(rw, "Add", i, offset);
  return additive(rw, xk_op2(rw, "LessOrEqual", xk_iota(rw, xk_dim(rw, k4, 2)), i), dtype);
}

/* The mask as an additive bias in `dtype`, padded with -inf to the total
 * key length `total` (-1 unknown, symbol `total_sym`: then the mask's
 * length must be the same symbol). */
static o2m_value *mask_bias(o2m_rewriter *rw, o2m_value *mask, int64_t total, const char *total_sym,
                            o2m_dtype dtype, int *refused) {
  o2m_value *bias = xk_elem(mask) == O2M_DT_BOOL ? additive(rw, mask, dtype) : xk_cast(rw, mask, dtype);
  int rank = xk_rank(mask);
  int64_t have = rank > 0 ? mask->type.dims[rank - 1].size : -1;
  if (have >= 0 && total >= 0 && have == total) return bias;
  if (rank > 0 && have < 0 && total < 0 && mask->type.dims[rank - 1].sym == total_sym) return bias;
  if (have < 0 || total < 0 || have > total) {
    *refused = 1;
    return NULL;
  }
  const int64_t pads[2] = {0, total - have}, last[1] = {-1};
  o2m_value *in[4] = {bias, o2m_rw_const_ints(rw, pads, 2), xk_scalar(rw, dtype, -INFINITY),
                      o2m_rw_const_ints(rw, last, 1)};
  return in[0] && in[1] && in[2] && in[3] ? o2m_rw_op(rw, "Pad", 4, in, NULL, 0) : NULL;
}

/* Head counts and Q's head size from the attributes (3-D) or dims (4-D). */
static void count_heads(o2m_rewriter *rw, int rank, heads *h) {
  const o2m_value *q = o2m_rw_in(rw, ATT_Q), *k = o2m_rw_in(rw, ATT_K);
  if (rank == 3) {
    h->q = o2m_rw_attr_i(rw, "q_num_heads", -1);
    h->kv = o2m_rw_attr_i(rw, "kv_num_heads", -1);
    int64_t hidden = q->type.dims[2].size;
    h->head_size = hidden >= 0 && h->q > 0 ? hidden / h->q : -1;
    return;
  }
  h->q = q->type.dims[1].size;
  h->kv = k->type.dims[1].size;
  h->head_size = q->type.dims[3].size;
  if (h->q < 0 && h->kv < 0 && q->type.dims[1].sym == k->type.dims[1].sym) h->q = h->kv = 0; /* same symbol */
}

/* x [B, kv, S, D] with each head repeated `reps` times in place. */
static o2m_value *repeat_heads(o2m_rewriter *rw, o2m_value *x, const heads *h) {
  if (h->q == h->kv) return x;
  int64_t *index = h->q <= INT32_MAX ? malloc((size_t)h->q * sizeof *index + 1) : NULL;
  if (!index) return NULL;
  for (int64_t i = 0; i < h->q; i++) index[i] = i / (h->q / h->kv);
  o2m_value *in[2] = {x, o2m_rw_const_ints(rw, index, (int)h->q)};
  free(index);
  o2m_attr axis = o2m_rw_attr_int("axis", 1);
  return x && in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis, 1) : NULL;
}

o2m_status o2m_decompose_attention(o2m_rewriter *rw) {
  o2m_value *q = o2m_rw_in(rw, ATT_Q), *k = o2m_rw_in(rw, ATT_K), *v = o2m_rw_in(rw, ATT_V);
  o2m_value *mask = o2m_rw_in(rw, ATT_MASK), *past_k = o2m_rw_in(rw, ATT_PAST_K);
  o2m_value *past_v = o2m_rw_in(rw, ATT_PAST_V);
  int rank = xk_rank(q), mode = (int)o2m_rw_attr_i(rw, "qk_matmul_output_mode", 0);
  o2m_dtype t = xk_elem(q);
  if ((rank != 3 && rank != 4) || xk_rank(k) != rank || xk_rank(v) != rank || !t)
    return o2m_rw_unsupported(rw, "Q, K, V must be 3-D or 4-D tensors of known type");
  o2m_value *nonpad = o2m_rw_in(rw, ATT_NONPAD);
  if (nonpad && past_k) return o2m_rw_error(rw, "nonpad_kv_seqlen with a past cache");
  if (o2m_rw_attr_i(rw, "left_window_size", -1) >= 0 || o2m_rw_attr_i(rw, "right_window_size", -1) >= 0)
    return o2m_rw_unsupported(rw, "sliding-window attention");
  if (!past_k != !past_v) return o2m_rw_error(rw, "past_key and past_value go together");
  heads h;
  count_heads(rw, rank, &h);
  if (h.q < 0 || h.kv < 0 || (h.q != h.kv && (h.kv == 0 || h.q % h.kv)))
    return o2m_rw_unsupported(rw, "the head counts are unknown or do not divide");
  const o2m_attr *scale_attr = o2m_rw_attr(rw, "scale");
  if (!scale_attr && h.head_size <= 0) return o2m_rw_unsupported(rw, "the head size is unknown");
  double scale = scale_attr ? scale_attr->f : 1.0 / sqrt((double)h.head_size);
  /* 16-bit inputs compute in float32 (as the reference's numpy does, and
   * most runtimes), and go back to their type at the end */
  o2m_dtype c = t == O2M_DT_FLOAT16 || t == O2M_DT_BFLOAT16 ? O2M_DT_FLOAT : t;
  o2m_dtype p = (o2m_dtype)o2m_rw_attr_i(rw, "softmax_precision", c);

  o2m_value *q4 = rank == 3 ? split_heads(rw, q, h.q) : q;
  o2m_value *k4 = rank == 3 ? split_heads(rw, k, h.kv) : k;
  o2m_value *v4 = rank == 3 ? split_heads(rw, v, h.kv) : v;
  if (past_k) {
    o2m_attr axis2 = o2m_rw_attr_int("axis", 2);
    o2m_value *kk[2] = {past_k, k4}, *vv[2] = {past_v, v4};
    k4 = k4 ? o2m_rw_op(rw, "Concat", 2, kk, &axis2, 1) : NULL;
    v4 = v4 ? o2m_rw_op(rw, "Concat", 2, vv, &axis2, 1) : NULL;
  }
  o2m_value *present_k = k4, *present_v = v4;

  /* the additive bias */
  int refused = 0;
  o2m_dim total = k4 && xk_rank(k4) == 4 ? k4->type.dims[2] : (o2m_dim){-1, NULL};
  o2m_value *bias = mask ? mask_bias(rw, mask, total.size, total.sym, c, &refused) : NULL;
  if (refused) return o2m_rw_unsupported(rw, "the mask's length against the keys is unknown");
  static const int64_t per_batch[4] = {-1, 1, 1, 1};
  o2m_value *valid = nonpad ? xk_reshape(rw, nonpad, per_batch, 4) : NULL; /* [B, 1, 1, 1] */
  if (o2m_rw_attr_i(rw, "is_causal", 0)) {
    o2m_value *offset = past_k ? xk_dim(rw, past_k, 2) : valid ? xk_op2(rw, "Sub", valid, xk_dim(rw, q4, 2)) : NULL;
    o2m_value *causal = causal_bias(rw, q4, k4, offset, c);
    bias = bias ? xk_op2(rw, "Add", bias, causal) : causal;
  }
  if (valid) { /* keys at or past nonpad_kv_seqlen[b] are padding */
    o2m_value *padding = additive(rw, xk_op2(rw, "Less", xk_iota(rw, xk_dim(rw, k4, 2)), valid), c);
    bias = bias ? xk_op2(rw, "Add", bias, padding) : padding;
  }

  /* logits, softmax, output */
  static const int64_t swap_last[4] = {0, 1, 3, 2}, last[1] = {-1};
  o2m_value *root = xk_scalar(rw, c, sqrt(scale));
  o2m_value *kt = xk_transpose(rw, xk_op2(rw, "Mul", xk_cast(rw, repeat_heads(rw, k4, &h), c), root), swap_last, 4);
  o2m_value *logits = xk_op2(rw, "MatMul", xk_op2(rw, "Mul", xk_cast(rw, q4, c), root), kt);
  double cap = o2m_rw_attr_f(rw, "softcap", 0.0f);
  if (cap > 0) {
    o2m_value *k = xk_scalar(rw, c, cap);
    logits = xk_op2(rw, "Mul", xk_op1(rw, "Tanh", xk_op2(rw, "Div", logits, k)), k);
  }
  o2m_value *biased = bias ? xk_op2(rw, "Add", logits, bias) : logits;
  o2m_attr axis_last = o2m_rw_attr_int("axis", -1);
  o2m_value *sm_in = xk_cast(rw, biased, p);
  o2m_value *probs = sm_in ? o2m_rw_op(rw, "Softmax", 1, &sm_in, &axis_last, 1) : NULL;
  if (bias) { /* rows with no allowed key (bias -inf throughout) give 0, not NaN; counted
               * as a max of 0/1 flags, which needs no -inf identity of ReduceMax */
    o2m_value *allowed = xk_cast(rw, xk_op2(rw, "Greater", bias, xk_scalar(rw, c, -INFINITY)), c);
    o2m_value *any = xk_reduce(rw, "ReduceMax", allowed, last, 1, 1);
    probs = xk_where(rw, xk_op2(rw, "Equal", any, xk_scalar(rw, c, 0.0)), xk_scalar(rw, p, 0.0), probs);
  }
  o2m_value *y4 = xk_cast(rw, xk_op2(rw, "MatMul", probs, xk_cast(rw, repeat_heads(rw, v4, &h), p)), t);
  o2m_status s = xk_bind(rw, 0, rank == 3 ? merge_heads(rw, y4) : y4);
  if (!s) s = xk_bind(rw, 1, present_k);
  if (!s) s = xk_bind(rw, 2, present_v);
  if (s || !o2m_rw_out(rw, 3)) return s;
  o2m_value *debug = xk_cast(rw, mode == 3 ? probs : mode == 2 ? biased : logits, t);
  return xk_bind(rw, 3, debug);
}

/* ---- ai.onnx.preview FlexAttention (1) ------------------------------------ */

/* Non-zero when the modifier graph g can be inlined: one input (besides
 * initializers) and one output (xk_inlinable). */
static int mod_inlinable(const o2m_graph *g) {
  int inputs = 0;
  for (int i = 0; i < g->n_inputs; i++) inputs += g->input_values[i]->kind == O2M_VALUE_INPUT;
  return inputs == 1 && g->n_outputs == 1 && xk_inlinable(g);
}

static o2m_value *inline_mod(o2m_rewriter *rw, const o2m_graph *g, o2m_value *arg) {
  o2m_value *out = NULL;
  return arg && xk_inline(rw, g, 1, &arg, &out) == O2M_OK ? out : NULL;
}

/* Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev], as ONNX's
 * function body: K, V repeated to Hq heads; scores = (Q * sqrt(scale)) @
 * (K * sqrt(scale))^T (in Q's type, then softmax_precision p), score_mod
 * inlined, Softmax on the last axis, prob_mod inlined, Y = P @ V in p,
 * cast back. Refused: head counts that are unknown and differ, and
 * modifier graphs with more than one input or output, other domains or
 * nested subgraphs. */
o2m_status o2m_decompose_flex_attention(o2m_rewriter *rw) {
  o2m_value *q = o2m_rw_in(rw, 0), *k = o2m_rw_in(rw, 1), *v = o2m_rw_in(rw, 2);
  o2m_dtype t = xk_elem(q);
  if (xk_rank(q) != 4 || xk_rank(k) != 4 || xk_rank(v) != 4 || !t)
    return o2m_rw_unsupported(rw, "Q, K, V must be 4-D tensors of known type");
  const o2m_attr *score_attr = o2m_rw_attr(rw, "score_mod"), *prob_attr = o2m_rw_attr(rw, "prob_mod");
  const o2m_graph *score_mod = score_attr && score_attr->type == O2M_ATTR_GRAPH ? score_attr->g : NULL;
  const o2m_graph *prob_mod = prob_attr && prob_attr->type == O2M_ATTR_GRAPH ? prob_attr->g : NULL;
  if ((score_mod && !mod_inlinable(score_mod)) || (prob_mod && !mod_inlinable(prob_mod)))
    return o2m_rw_unsupported(rw, "a modifier graph beyond one input and output of default-domain nodes");
  heads h = {q->type.dims[1].size, k->type.dims[1].size, q->type.dims[3].size};
  if (h.q < 0 || h.kv < 0) {
    if (q->type.dims[1].sym != k->type.dims[1].sym || !q->type.dims[1].sym)
      return o2m_rw_unsupported(rw, "the head counts are unknown");
    h.q = h.kv = 0; /* the same symbol */
  }
  if (h.kv > 0 && h.q % h.kv) return o2m_rw_error(rw, "the query heads are not a multiple of the key heads");
  const o2m_attr *scale_attr = o2m_rw_attr(rw, "scale");
  if (!scale_attr && h.head_size <= 0) return o2m_rw_unsupported(rw, "the head size is unknown");
  /* float32 as the function body: 1 / sqrt(E), then its square root */
  float scale = scale_attr ? scale_attr->f : 1.0f / sqrtf((float)h.head_size);
  o2m_dtype c = t == O2M_DT_DOUBLE ? t : O2M_DT_FLOAT;
  o2m_dtype p = (o2m_dtype)o2m_rw_attr_i(rw, "softmax_precision", c);

  static const int64_t swap_last[4] = {0, 1, 3, 2};
  o2m_value *root = xk_scalar(rw, t, sqrtf(scale));
  o2m_value *kt = xk_transpose(rw, xk_op2(rw, "Mul", repeat_heads(rw, k, &h), root), swap_last, 4);
  o2m_value *scores = xk_cast(rw, xk_op2(rw, "MatMul", xk_op2(rw, "Mul", q, root), kt), p);
  if (score_mod) scores = inline_mod(rw, score_mod, scores);
  o2m_attr axis_last = o2m_rw_attr_int("axis", -1);
  o2m_value *probs = scores ? o2m_rw_op(rw, "Softmax", 1, &scores, &axis_last, 1) : NULL;
  if (prob_mod) probs = inline_mod(rw, prob_mod, probs);
  o2m_value *y = xk_op2(rw, "MatMul", probs, xk_cast(rw, repeat_heads(rw, v, &h), p));
  return xk_bind(rw, 0, xk_cast(rw, y, t));
}
