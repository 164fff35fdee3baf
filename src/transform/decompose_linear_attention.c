/* decompose_linear_attention.c - LinearAttention (27) into MatMul, Mul,
 * Add, Sub, Exp and data movement, following ONNX's function body (a Scan
 * over the sequence) with the recurrence unrolled over a known sequence
 * length T:
 *   3-D Q/K/V/decay [B, T, H*D] -> [B, H, T, D] (Reshape, Transpose),
 *   beta [B, T, H|1] -> [B, H|1, T, 1]; everything computed in float32
 *   per step t, with q_t [B, Hq, 1, dk], k_t [B, Hkv, 1, dk], v_t [B, Hkv,
 *   1, dv] (Slice on the T axis), state S [B, Hkv, dk, dv]:
 *     gated:  S = S * exp(g_t)^T            (per key dim or per head)
 *     delta:  v_t = beta_t * (v_t - k_t @ S)
 *     S = S + k_t^T @ v_t                    (outer product)
 *     o_t = scale * q_t @ repeat_heads(S)    (GQA: each KV head's state
 *                                             read by q/kv query heads)
 *   output = Concat(o_t) back to [B, T, Hq*dv] in query's type,
 *   present_state = S in past_state's type (query's without one).
 * Without past_state the state starts at zero, so the first step's
 * decay and retrieval (both exactly zero) are left out.
 * Refused: an unknown sequence length or one over LA_MAX_STEPS (the
 * unrolling needs T; a Scan form would lift that), and, for the default
 * scale, an unknown head size. Owns this one rule; touches the graph only
 * through the rewriter.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transform/decompose_kit.h"

enum { LA_Q, LA_K, LA_V, LA_PAST, LA_DECAY, LA_BETA };
enum { LA_MAX_STEPS = 1024 }; /* the longest sequence unrolled */

/* [B, T, H*D] -> [B, H, T, D] (D = -1: the rest). */
static o2m_value *split_heads(o2m_rewriter *rw, o2m_value *x, int64_t n_heads, int64_t d) {
  const int64_t shape[4] = {0, 0, n_heads, d}, perm[4] = {0, 2, 1, 3};
  return xk_transpose(rw, xk_reshape(rw, x, shape, 4), perm, 4);
}

/* x[:, :, t:t+1, :]. */
static o2m_value *step(o2m_rewriter *rw, o2m_value *x, int64_t t) {
  const int64_t start = t, end = t + 1, axis = 2;
  o2m_value *in[4] = {x, o2m_rw_const_ints(rw, &start, 1), o2m_rw_const_ints(rw, &end, 1),
                      o2m_rw_const_ints(rw, &axis, 1)};
  return in[0] && in[1] && in[2] && in[3] ? o2m_rw_op(rw, "Slice", 4, in, NULL, 0) : NULL;
}

/* Swaps the last two axes of a 4-D tensor. */
static o2m_value *swap_last(o2m_rewriter *rw, o2m_value *x) {
  static const int64_t perm[4] = {0, 1, 3, 2};
  return xk_transpose(rw, x, perm, 4);
}

/* s [B, kv, dk, dv] with each head repeated q / kv times in place. */
static o2m_value *repeat_heads(o2m_rewriter *rw, o2m_value *s, int64_t q, int64_t kv) {
  if (q == kv) return s;
  int64_t *index = q <= INT32_MAX ? malloc((size_t)q * sizeof *index) : NULL;
  if (!index) return NULL;
  for (int64_t i = 0; i < q; i++) index[i] = i / (q / kv);
  o2m_value *in[2] = {s, o2m_rw_const_ints(rw, index, (int)q)};
  free(index);
  o2m_attr axis = o2m_rw_attr_int("axis", 1);
  return s && in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis, 1) : NULL;
}

static int rule_is(const o2m_attr *a, const char *name) {
  return a->type == O2M_ATTR_STRING && a->s.len == strlen(name) && !memcmp(a->s.ptr, name, a->s.len);
}

o2m_status o2m_decompose_linear_attention(o2m_rewriter *rw) {
  o2m_value *q = o2m_rw_in(rw, LA_Q), *k = o2m_rw_in(rw, LA_K), *v = o2m_rw_in(rw, LA_V);
  o2m_value *past = o2m_rw_in(rw, LA_PAST), *decay = o2m_rw_in(rw, LA_DECAY), *beta = o2m_rw_in(rw, LA_BETA);
  o2m_dtype t = xk_elem(q);
  if (xk_rank(q) != 3 || xk_rank(k) != 3 || xk_rank(v) != 3 || !t)
    return o2m_rw_unsupported(rw, "query, key and value must be 3-D tensors of known type");
  const o2m_attr *rule_attr = o2m_rw_attr(rw, "update_rule");
  int gated = 1, delta = 1; /* the default, gated_delta */
  if (rule_attr) {
    if (rule_is(rule_attr, "linear")) gated = delta = 0;
    else if (rule_is(rule_attr, "gated")) delta = 0;
    else if (rule_is(rule_attr, "delta")) gated = 0;
    else if (!rule_is(rule_attr, "gated_delta")) return o2m_rw_error(rw, "unknown update_rule");
  }
  if (gated != !!decay || delta != !!beta)
    return o2m_rw_error(rw, "update_rule %s decay and %s beta", gated ? "takes" : "forbids",
                        delta ? "takes" : "forbids");
  if ((decay && xk_rank(decay) != 3) || (beta && xk_rank(beta) != 3) || (past && xk_rank(past) != 4))
    return o2m_rw_unsupported(rw, "decay and beta must be 3-D, past_state 4-D");
  int64_t hq = o2m_rw_attr_i(rw, "q_num_heads", -1), hkv = o2m_rw_attr_i(rw, "kv_num_heads", -1);
  if (hq <= 0 || hkv <= 0 || hq % hkv)
    return o2m_rw_error(rw, "q_num_heads must be a positive multiple of kv_num_heads");
  int64_t seq = q->type.dims[1].size;
  if (seq <= 0 || seq > LA_MAX_STEPS)
    return o2m_rw_unsupported(rw, "a sequence length that is unknown, 0 or over %d (the recurrence is unrolled)",
                              LA_MAX_STEPS);
  double scale = o2m_rw_attr_f(rw, "scale", 0.0f);
  if (scale == 0.0) {
    int64_t hidden = q->type.dims[2].size;
    if (hidden <= 0) return o2m_rw_unsupported(rw, "the head size is unknown (default scale)");
    scale = 1.0f / sqrtf((float)(hidden / hq)); /* as the function body: float32 */
  }
  o2m_dtype s_type = past ? xk_elem(past) : t;
  const o2m_dtype f = O2M_DT_FLOAT;

  o2m_value *q4 = xk_cast(rw, split_heads(rw, q, hq, -1), f);   /* [B, Hq, T, dk] */
  o2m_value *k4 = xk_cast(rw, split_heads(rw, k, hkv, -1), f);  /* [B, Hkv, T, dk] */
  o2m_value *v4 = xk_cast(rw, split_heads(rw, v, hkv, -1), f);  /* [B, Hkv, T, dv] */
  o2m_value *g4 = decay ? xk_cast(rw, split_heads(rw, decay, hkv, -1), f) : NULL; /* [B, Hkv, T, dk|1] */
  o2m_value *b4 = beta ? xk_cast(rw, split_heads(rw, beta, -1, 1), f) : NULL;   /* [B, Hkv|1, T, 1] */
  o2m_value *state = past ? xk_cast(rw, past, f) : NULL; /* NULL: zero */
  o2m_value *scale_v = xk_scalar(rw, f, scale);
  o2m_value *outs[seq];
  int ok = q4 && k4 && v4 && (!decay || g4) && (!beta || b4) && (!past || state) && scale_v;
  for (int64_t i = 0; ok && i < seq; i++) {
    o2m_value *k_row = step(rw, k4, i), *v_row = step(rw, v4, i);
    if (gated && state) /* S *= exp(g_t), g_t [B, Hkv, 1, dk|1] -> [B, Hkv, dk|1, 1] */
      state = xk_op2(rw, "Mul", state, swap_last(rw, xk_op1(rw, "Exp", step(rw, g4, i))));
    if (delta) {
      o2m_value *diff = state ? xk_op2(rw, "Sub", v_row, xk_op2(rw, "MatMul", k_row, state)) : v_row;
      v_row = xk_op2(rw, "Mul", step(rw, b4, i), diff);
    }
    o2m_value *outer = xk_op2(rw, "MatMul", swap_last(rw, k_row), v_row);
    state = state ? xk_op2(rw, "Add", state, outer) : outer;
    o2m_value *read = xk_op2(rw, "MatMul", step(rw, q4, i), repeat_heads(rw, state, hq, hkv));
    outs[i] = xk_op2(rw, "Mul", scale_v, read); /* [B, Hq, 1, dv] */
    ok = state && outs[i];
  }
  if (!ok) return xk_failed(rw);
  o2m_value *o4 = outs[0];
  if (seq > 1) {
    o2m_attr axis2 = o2m_rw_attr_int("axis", 2);
    o4 = o2m_rw_op(rw, "Concat", (int)seq, outs, &axis2, 1);
  }
  static const int64_t back[3] = {0, 0, -1}, perm[4] = {0, 2, 1, 3};
  o2m_value *y = xk_reshape(rw, xk_transpose(rw, xk_cast(rw, o4, t), perm, 4), back, 3);
  o2m_status s = xk_bind(rw, 0, y);
  if (!s) s = xk_bind(rw, 1, xk_cast(rw, state, s_type));
  return s;
}
