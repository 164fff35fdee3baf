/* decompose_contrib_attention.c - onnxruntime's com.microsoft Attention
 * written in ONNX ops (rules.def), as its docs/ContribOperators.md and CPU
 * kernel define it:
 *
 *   Attention(input (B, S, Hin), weights (Hin, Hq + Hk + Hv), bias?,
 *             mask_index?, past?, attention_bias?)
 *     Q, K, V = input @ weights + bias, split (qkv_hidden_sizes, else
 *     three equal parts) into num_heads heads: (B, N, S, D)
 *     K, V follow the past's keys and values (past (2, B, N, P, D))
 *     scores = Q K^T * scale (1 / sqrt(D)) + attention_bias + mask, where
 *     the mask adds mask_filter_value (-10000) at masked keys: a 0 of a
 *     raw (B, T) or (B, S, T) mask, a key at or beyond a (B) right-padding
 *     length, and (unidirectional) a key after the query's position
 *     output = softmax(scores) V, heads merged: (B, S, Hv)
 *     present = (K, V) stacked: (2, B, N, T, D)
 *   MultiHeadAttention(query, key, value, bias?, key_padding_mask?,
 *             attention_bias?, past_key?, past_value?)  the same on
 *     separate Q, K, V (bias split three ways), present_key/_value
 *   GroupQueryAttention  grouped heads over a KV cache (see its function)
 * Left-padding and 4-D mask_index forms, packed or pre-split key/value and
 * past_present_share_buffer are refused with their names.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"

/* x[..., from:to] on the last axis. */
static o2m_value *last_slice(o2m_rewriter *rw, o2m_value *x, int64_t from, int64_t to) {
  const int64_t s[1] = {from}, e[1] = {to}, ax[1] = {-1};
  o2m_value *in[4] = {x, o2m_rw_const_ints(rw, s, 1), o2m_rw_const_ints(rw, e, 1), o2m_rw_const_ints(rw, ax, 1)};
  return o2m_rw_op(rw, "Slice", 4, in, NULL, 0);
}

/* (B, S, N*D) -> (B, N, S, D). */
static o2m_value *split_heads(o2m_rewriter *rw, o2m_value *x, int64_t heads) {
  const int64_t shape[4] = {0, 0, heads, -1}, perm[4] = {0, 2, 1, 3};
  return xk_transpose(rw, xk_reshape(rw, x, shape, 4), perm, 4);
}

/* An additive mask (0 where a key is seen, mask_filter_value where not)
 * of `seen`, a bool tensor broadcasting against (B, N, S, T). */
static o2m_value *additive(o2m_rewriter *rw, o2m_value *seen, double filter) {
  o2m_value *zero = xk_scalar(rw, O2M_DT_FLOAT, 0.0), *fill = xk_scalar(rw, O2M_DT_FLOAT, filter);
  return xk_where(rw, seen, zero, fill);
}

/* The mask_index input as a bool "seen" tensor broadcasting against
 * (B, N, S, T), or NULL with *st set. */
static o2m_value *mask_seen(o2m_rewriter *rw, o2m_value *mask, o2m_value *t_len, o2m_status *st) {
  int rank = xk_rank(mask);
  *st = O2M_OK;
  if (rank == 2 || rank == 3) { /* raw mask: (B, T) -> (B, 1, 1, T); (B, S, T) -> (B, 1, S, T) */
    const int64_t two[2] = {1, 2}, one[1] = {1};
    o2m_value *m = rank == 2 ? xk_unsqueeze(rw, mask, two, 2) : xk_unsqueeze(rw, mask, one, 1);
    return xk_op2(rw, "Greater", xk_cast(rw, m, O2M_DT_FLOAT), xk_scalar(rw, O2M_DT_FLOAT, 0.0));
  }
  const o2m_type *t = xk_type(mask);
  if (rank == 1 && t->dims[0].size >= 0) { /* right padding: keys j < length[b] */
    const int64_t shape[4] = {-1, 1, 1, 1};
    o2m_value *len = xk_reshape(rw, xk_cast(rw, mask, O2M_DT_INT64), shape, 4);
    return xk_op2(rw, "Less", xk_iota(rw, t_len), len);
  }
  *st = o2m_rw_unsupported(rw, "a mask_index of rank %d (left padding, 4-D)", rank);
  return NULL;
}

/* Causal: key j seen by query i when j <= i + past. */
static o2m_value *causal_seen(o2m_rewriter *rw, o2m_value *s_len, o2m_value *t_len) {
  const int64_t last[1] = {-1};
  o2m_value *past = xk_op2(rw, "Sub", t_len, s_len);
  o2m_value *rows = xk_unsqueeze(rw, xk_op2(rw, "Add", xk_iota(rw, s_len), past), last, 1); /* (S, 1) */
  return xk_op2(rw, "LessOrEqual", xk_iota(rw, t_len), rows);                                   /* (S, T) */
}

static o2m_status attend(o2m_rewriter *rw, o2m_value *q, o2m_value *k, o2m_value *v, int64_t head_size,
                         o2m_value *mask, o2m_value *attention_bias, int causal);

o2m_status o2m_decompose_ms_attention(o2m_rewriter *rw) {
  if (o2m_rw_attr_i(rw, "past_present_share_buffer", 0)) return o2m_rw_unsupported(rw, "past_present_share_buffer");
  if (o2m_rw_attr_i(rw, "do_rotary", 0)) return o2m_rw_unsupported(rw, "do_rotary");
  if (o2m_rw_in(rw, 6)) return o2m_rw_unsupported(rw, "past_sequence_length");
  o2m_value *x = o2m_rw_in(rw, 0), *w = o2m_rw_in(rw, 1), *bias = o2m_rw_in(rw, 2);
  int64_t heads = o2m_rw_attr_i(rw, "num_heads", 0);
  int64_t wd[2];
  if (heads <= 0) return o2m_rw_error(rw, "num_heads must be positive");
  if (xk_rank(x) != 3 || xk_rank(w) != 2 || !XK_STATIC_DIMS(w, wd)) return o2m_rw_unsupported(rw, "input not 3-D or weights not of known shape");
  int64_t sizes[3] = {wd[1] / 3, wd[1] / 3, wd[1] / 3};
  const o2m_attr *qkv = o2m_rw_attr(rw, "qkv_hidden_sizes");
  if (qkv && qkv->type == O2M_ATTR_INTS && qkv->count == 3) memcpy(sizes, qkv->ints, sizeof(sizes));
  if (sizes[0] + sizes[1] + sizes[2] != wd[1] || sizes[0] != sizes[1] || sizes[0] % heads || sizes[2] % heads)
    return o2m_rw_error(rw, "the weights' hidden sizes do not split into Q, K, V of num_heads heads");
  o2m_value *proj = xk_op2(rw, "MatMul", x, w);
  if (bias) proj = xk_op2(rw, "Add", proj, bias);
  o2m_value *q = split_heads(rw, last_slice(rw, proj, 0, sizes[0]), heads);
  o2m_value *k = split_heads(rw, last_slice(rw, proj, sizes[0], sizes[0] + sizes[1]), heads);
  o2m_value *v = split_heads(rw, last_slice(rw, proj, sizes[0] + sizes[1], wd[1]), heads);
  o2m_value *past = o2m_rw_in(rw, 4);
  if (past) { /* (2, B, N, P, D): keys and values before the new ones */
    o2m_attr axis = o2m_rw_attr_int("axis", 2);
    o2m_value *kk[2] = {xk_op2(rw, "Gather", past, xk_scalar(rw, O2M_DT_INT64, 0)), k};
    o2m_value *vv[2] = {xk_op2(rw, "Gather", past, xk_scalar(rw, O2M_DT_INT64, 1)), v};
    k = kk[0] ? o2m_rw_op(rw, "Concat", 2, kk, &axis, 1) : NULL;
    v = vv[0] ? o2m_rw_op(rw, "Concat", 2, vv, &axis, 1) : NULL;
  }
  o2m_status st = attend(rw, q, k, v, sizes[0] / heads, o2m_rw_in(rw, 3), o2m_rw_in(rw, 5),
                         o2m_rw_attr_i(rw, "unidirectional", 0) != 0);
  if (!st && o2m_rw_out(rw, 1)) {
    const int64_t front[1] = {0};
    o2m_attr cat = o2m_rw_attr_int("axis", 0);
    o2m_value *kv[2] = {xk_unsqueeze(rw, k, front, 1), xk_unsqueeze(rw, v, front, 1)};
    st = xk_bind(rw, 1, kv[0] && kv[1] ? o2m_rw_op(rw, "Concat", 2, kv, &cat, 1) : NULL);
  }
  return st;
}

/* ---- MultiHeadAttention --------------------------------------------------------- */

/* softmax(Q K^T scale + attention_bias + masks) V with heads merged, as
 * output 0: the core both attention ops share. `mask` NULL or a mask_index
 * input; `causal` aligns queries to the end of the keys. */
static o2m_status attend(o2m_rewriter *rw, o2m_value *q, o2m_value *k, o2m_value *v, int64_t head_size,
                         o2m_value *mask, o2m_value *attention_bias, int causal) {
  double scale = o2m_rw_attr_f(rw, "scale", 0.0f);
  if (scale == 0.0) scale = 1.0 / sqrt((double)head_size);
  const int64_t kt_perm[4] = {0, 1, 3, 2};
  o2m_value *scores = xk_op2(rw, "Mul", xk_op2(rw, "MatMul", q, xk_transpose(rw, k, kt_perm, 4)),
                             xk_scalar(rw, O2M_DT_FLOAT, scale));
  if (attention_bias) scores = xk_op2(rw, "Add", scores, attention_bias);
  double filter = o2m_rw_attr_f(rw, "mask_filter_value", -10000.0f);
  o2m_value *s_len = xk_dim(rw, q, 2), *t_len = xk_dim(rw, k, 2);
  o2m_status st = O2M_OK;
  if (mask) {
    o2m_value *seen = mask_seen(rw, mask, t_len, &st);
    if (st) return st;
    scores = xk_op2(rw, "Add", scores, additive(rw, seen, filter));
  }
  if (causal) scores = xk_op2(rw, "Add", scores, additive(rw, causal_seen(rw, s_len, t_len), filter));
  o2m_attr axis = o2m_rw_attr_int("axis", -1);
  o2m_value *probs = scores ? o2m_rw_op(rw, "Softmax", 1, &scores, &axis, 1) : NULL;
  const int64_t merge_perm[4] = {0, 2, 1, 3}, merged[3] = {0, 0, -1};
  return xk_bind(rw, 0, xk_reshape(rw, xk_transpose(rw, xk_op2(rw, "MatMul", probs, v), merge_perm, 4), merged, 3));
}

/* Concat(past, x) on the sequence axis of (B, N, T, D), or x (no past, or
 * one of no tokens: a first prompt's empty cache). */
static o2m_value *after_past(o2m_rewriter *rw, o2m_value *past, o2m_value *x) {
  if (!past) return x;
  if (xk_rank(past) == 4 && xk_type(past)->dims[2].size == 0) return x;
  o2m_attr axis = o2m_rw_attr_int("axis", 2);
  o2m_value *in[2] = {past, x};
  return o2m_rw_op(rw, "Concat", 2, in, &axis, 1);
}

/* MultiHeadAttention(query (B, S, H), key (B, L, H), value (B, L, Hv),
 * bias (H + H + Hv)?, key_padding_mask?, attention_bias?, past_key?,
 * past_value? (B, N, P, D)): the attention of Attention on separate Q, K,
 * V; present_key / present_value (B, N, P + L, D). Packed and 4-D
 * key/value forms are refused. */
o2m_status o2m_decompose_multihead_attention(o2m_rewriter *rw) {
  for (int i = 8; i < rw->node->n_inputs; i++)
    if (o2m_rw_in(rw, i)) return o2m_rw_unsupported(rw, "input %d (past_sequence_length, cache_indirection)", i);
  o2m_value *q = o2m_rw_in(rw, 0), *k = o2m_rw_in(rw, 1), *v = o2m_rw_in(rw, 2), *bias = o2m_rw_in(rw, 3);
  int64_t heads = o2m_rw_attr_i(rw, "num_heads", 0), qd[3], vd[3];
  if (heads <= 0) return o2m_rw_error(rw, "num_heads must be positive");
  if (!k || !v || xk_rank(q) != 3 || xk_rank(k) != 3 || xk_rank(v) != 3 || !XK_STATIC_DIMS(q, qd) ||
      !XK_STATIC_DIMS(v, vd))
    return o2m_rw_unsupported(rw, "only 3-D query, key and value of known hidden sizes");
  if (bias) {
    q = xk_op2(rw, "Add", q, last_slice(rw, bias, 0, qd[2]));
    k = xk_op2(rw, "Add", k, last_slice(rw, bias, qd[2], 2 * qd[2]));
    v = xk_op2(rw, "Add", v, last_slice(rw, bias, 2 * qd[2], 2 * qd[2] + vd[2]));
  }
  q = split_heads(rw, q, heads);
  k = after_past(rw, o2m_rw_in(rw, 6), split_heads(rw, k, heads));
  v = after_past(rw, o2m_rw_in(rw, 7), split_heads(rw, v, heads));
  o2m_status st = attend(rw, q, k, v, qd[2] / heads, o2m_rw_in(rw, 4), o2m_rw_in(rw, 5),
                         o2m_rw_attr_i(rw, "unidirectional", 0) != 0);
  if (!st) st = xk_bind(rw, 1, k);
  return st ? st : xk_bind(rw, 2, v);
}

/* ---- GroupQueryAttention --------------------------------------------------------- */

/* (B, Nkv, T, D) with each head repeated `groups` times in place:
 * (B, Nkv * groups, T, D), head h reading kv head h / groups. */
static o2m_value *repeat_heads(o2m_rewriter *rw, o2m_value *x, int64_t kv_heads, int64_t groups, int64_t head_size) {
  if (groups == 1) return x;
  const int64_t two[1] = {2}, repeats[5] = {1, 1, groups, 1, 1};
  const int64_t merged[4] = {0, kv_heads * groups, -1, head_size};
  o2m_value *tiled = xk_op2(rw, "Tile", xk_unsqueeze(rw, x, two, 1), o2m_rw_const_ints(rw, repeats, 5));
  return xk_reshape(rw, tiled, merged, 4);
}

/* GroupQueryAttention(query (B, S, N*D), key, value (B, S, Nkv*D),
 * past_key?, past_value? (B, Nkv, P, D), seqlens_k (B), total_sequence_length,
 * cos_cache?, sin_cache?, position_ids?, attention_bias?): per batch b the
 * total length is seqlens_k[b] + 1 and the new tokens follow
 * past = total - S of them; keys = Concat(past, new) (rotated first by
 * do_rotary at positions past + i, or position_ids), query i sees keys
 * j <= past + i and j < total; scores softcapped where softcap > 0;
 * output (B, S, N*D), present_key/_value the concatenated keys and
 * values. The past buffer is taken to hold the past tokens exactly (a
 * longer shared buffer is onnxruntime's past_present_share_buffer
 * layout); packed QKV, local_window_size, smooth_softmax and head_sink are
 * refused. */
o2m_status o2m_decompose_group_query_attention(o2m_rewriter *rw) {
  int64_t heads = o2m_rw_attr_i(rw, "num_heads", 0), kv_heads = o2m_rw_attr_i(rw, "kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads) return o2m_rw_error(rw, "num_heads must be a multiple of kv_num_heads");
  if (!o2m_rw_in(rw, 1) || !o2m_rw_in(rw, 2)) return o2m_rw_unsupported(rw, "packed QKV");
  if (o2m_rw_attr_i(rw, "local_window_size", -1) > 0) return o2m_rw_unsupported(rw, "local_window_size");
  if (o2m_rw_attr_i(rw, "smooth_softmax", 0)) return o2m_rw_unsupported(rw, "smooth_softmax");
  for (int i = 11; i < rw->node->n_inputs; i++)
    if (o2m_rw_in(rw, i)) return o2m_rw_unsupported(rw, "input %d (head_sink)", i);
  int64_t qd[3];
  if (xk_rank(o2m_rw_in(rw, 0)) != 3 || !XK_STATIC_DIMS(o2m_rw_in(rw, 0), qd))
    return o2m_rw_unsupported(rw, "a query of unknown shape");
  int64_t head_size = qd[2] / heads;
  o2m_value *q = split_heads(rw, o2m_rw_in(rw, 0), heads);
  o2m_value *k = split_heads(rw, o2m_rw_in(rw, 1), kv_heads);
  o2m_value *v = split_heads(rw, o2m_rw_in(rw, 2), kv_heads);
  /* total[b] = seqlens_k[b] + 1, past[b] = total[b] - S: (B, 1) */
  const int64_t col[2] = {-1, 1}, last[1] = {-1};
  o2m_value *total = xk_reshape(rw, xk_op2(rw, "Add", xk_cast(rw, o2m_rw_in(rw, 5), O2M_DT_INT64),
                                             xk_scalar(rw, O2M_DT_INT64, 1)), col, 2);
  o2m_value *s_len = xk_dim(rw, q, 2);
  o2m_value *past_len = xk_op2(rw, "Sub", total, s_len);
  o2m_value *steps = xk_op2(rw, "Add", past_len, xk_iota(rw, s_len)); /* (B, S): each token's position */
  if (o2m_rw_attr_i(rw, "do_rotary", 0)) {
    o2m_value *cos = o2m_rw_in(rw, 7), *sin = o2m_rw_in(rw, 8);
    int64_t cd[2];
    if (!cos || !sin || xk_rank(cos) != 2 || !XK_STATIC_DIMS(cos, cd)) return o2m_rw_unsupported(rw, "do_rotary without 2-D caches");
    o2m_value *ids = o2m_rw_in(rw, 9) ? o2m_rw_in(rw, 9) : steps;
    o2m_attr attrs[2] = {o2m_rw_attr_int("interleaved", o2m_rw_attr_i(rw, "rotary_interleaved", 0)),
                         o2m_rw_attr_int("rotary_embedding_dim", 2 * cd[1])};
    o2m_value *qin[4] = {q, cos, sin, ids}, *kin[4] = {k, cos, sin, ids};
    q = o2m_rw_op(rw, "RotaryEmbedding", 4, qin, attrs, 2);
    k = o2m_rw_op(rw, "RotaryEmbedding", 4, kin, attrs, 2);
  }
  k = after_past(rw, o2m_rw_in(rw, 3), k);
  v = after_past(rw, o2m_rw_in(rw, 4), v);
  o2m_status st = O2M_OK;
  double scale = o2m_rw_attr_f(rw, "scale", 0.0f), softcap = o2m_rw_attr_f(rw, "softcap", 0.0f);
  if (scale == 0.0) scale = 1.0 / sqrt((double)head_size);
  const int64_t kt_perm[4] = {0, 1, 3, 2};
  o2m_value *kr = repeat_heads(rw, k, kv_heads, heads / kv_heads, head_size);
  o2m_value *vr = repeat_heads(rw, v, kv_heads, heads / kv_heads, head_size);
  o2m_value *scores = xk_op2(rw, "Mul", xk_op2(rw, "MatMul", q, xk_transpose(rw, kr, kt_perm, 4)),
                             xk_scalar(rw, O2M_DT_FLOAT, scale));
  if (softcap > 0.0)
    scores = xk_op2(rw, "Mul", xk_op1(rw, "Tanh", xk_op2(rw, "Div", scores, xk_scalar(rw, O2M_DT_FLOAT, softcap))),
                    xk_scalar(rw, O2M_DT_FLOAT, softcap));
  if (o2m_rw_in(rw, 10)) scores = xk_op2(rw, "Add", scores, o2m_rw_in(rw, 10));
  /* key j seen by token i of batch b: j <= steps[b, i] and j < total[b] */
  const int64_t head_axis[1] = {1};
  o2m_value *keys = xk_iota(rw, xk_dim(rw, kr, 2)); /* (T) */
  o2m_value *causal = xk_op2(rw, "LessOrEqual", keys, xk_unsqueeze(rw, steps, last, 1));         /* (B, S, T) */
  o2m_value *inside = xk_op2(rw, "Less", keys, xk_unsqueeze(rw, total, last, 1));                 /* (B, 1, T) */
  o2m_value *seen = xk_unsqueeze(rw, xk_op2(rw, "And", causal, inside), head_axis, 1);            /* (B, 1, S, T) */
  scores = xk_op2(rw, "Add", scores, additive(rw, seen, -INFINITY));
  o2m_attr axis = o2m_rw_attr_int("axis", -1);
  o2m_value *probs = scores ? o2m_rw_op(rw, "Softmax", 1, &scores, &axis, 1) : NULL;
  const int64_t merge_perm[4] = {0, 2, 1, 3}, merged[3] = {0, 0, -1};
  st = xk_bind(rw, 0, xk_reshape(rw, xk_transpose(rw, xk_op2(rw, "MatMul", probs, vr), merge_perm, 4), merged, 3));
  if (!st) st = xk_bind(rw, 1, k);
  return st ? st : xk_bind(rw, 2, v);
}
