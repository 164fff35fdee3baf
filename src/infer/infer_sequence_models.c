/* infer_sequence_models.c - type and shape inference for the recurrent and
 * attention ops of the nn family: RNN, GRU, LSTM, Attention,
 * RotaryEmbedding, LinearAttention, SwiGLU, TensorScatter and
 * ai.onnx.preview FlexAttention (whose modifier subgraphs it infers).
 *
 * Must not print, allocate outside the model arena, or fail on unknown or
 * unranked inputs.
 */
#include <stdint.h>
#include <string.h>

#include "infer/infer.h"

/* ---- small helpers ----------------------------------------------------- */

static int is_ranked(const o2m_type *t) {
  return t->kind == O2M_TYPE_TENSOR && t->rank >= 0;
}

/* Output i as a tensor of `dtype` whose shape is not known; left untouched
 * when the dtype is not known either. */
static void out_unranked(o2m_infer_ctx *ctx, int i, o2m_dtype dtype) {
  if (dtype != O2M_DT_UNDEFINED) o2m_out_tensor(ctx, i, dtype, -1);
}

/* Output i as a tensor with the `rank` dims given. */
static void out_dims(o2m_infer_ctx *ctx, int i, o2m_dtype dtype, int rank,
                     const o2m_dim *dims) {
  o2m_type *t = o2m_out_tensor(ctx, i, dtype, rank);
  for (int k = 0; k < t->rank; k++) t->dims[k] = dims[k];
}

/* The dim of a ranked input at `axis`, or a fresh symbol. */
static o2m_dim dim_or_fresh(o2m_infer_ctx *ctx, const o2m_type *t, int axis) {
  return is_ranked(t) && axis < t->rank ? t->dims[axis] : o2m_dim_fresh(ctx);
}

/* Of two dims that must be equal, the one that says more. */
static o2m_dim dim_either(o2m_dim a, o2m_dim b) {
  return a.size < 0 && b.size >= 0 ? b : a;
}

/* d / parts for a dim that packs `parts` equal slices; a known size must
 * divide. */
static o2m_status dim_div(o2m_infer_ctx *ctx, o2m_dim d, int64_t parts,
                          o2m_dim *out) {
  if (parts == 1) {
    *out = d;
  } else if (d.size < 0) {
    *out = o2m_dim_fresh(ctx);
  } else if (d.size % parts) {
    return o2m_infer_error(ctx, "dim %lld is not a multiple of %lld heads",
                           (long long)d.size, (long long)parts);
  } else {
    *out = o2m_dim_known(d.size / parts);
  }
  return O2M_OK;
}

/* A ranked input's rank must lie in [min, max] (max INT32_MAX: no bound). */
static o2m_status check_rank(o2m_infer_ctx *ctx, const o2m_type *t,
                             const char *what, int min, int max) {
  if (!is_ranked(t) || (t->rank >= min && t->rank <= max)) return O2M_OK;
  if (min == max)
    return o2m_infer_error(ctx, "%s has rank %d, expected %d", what, t->rank,
                           min);
  if (max == INT32_MAX)
    return o2m_infer_error(ctx, "%s has rank %d, expected at least %d", what,
                           t->rank, min);
  return o2m_infer_error(ctx, "%s has rank %d, expected %d to %d", what,
                         t->rank, min, max);
}

/* A head-count attribute: positive when present, 0 when absent. */
static o2m_status heads_attr(o2m_infer_ctx *ctx, const char *name,
                             int64_t *out) {
  *out = o2m_attr_int(ctx, name, 0);
  if (o2m_attr_get(ctx, name) && *out <= 0)
    return o2m_infer_error(ctx, "attribute %s must be positive", name);
  return O2M_OK;
}

/* ---- RNN, GRU, LSTM ---------------------------------------------------- */

/* The number of gates stacked in W and R of each recurrent op. */
static const struct rnn_gates {
  const char *op;
  int gates;
} rnn_gates[] = {{"RNN", 1}, {"GRU", 3}, {"LSTM", 4}};

/* hidden_size: the attribute, else R's last dim, else W's gate rows. */
static o2m_status rnn_hidden(o2m_infer_ctx *ctx, o2m_dim *hidden) {
  const o2m_type *w = o2m_in_type(ctx, 1), *r = o2m_in_type(ctx, 2);
  o2m_status s;
  if ((s = check_rank(ctx, w, "W", 3, 3)) ||
      (s = check_rank(ctx, r, "R", 3, 3)))
    return s;
  if (o2m_attr_get(ctx, "hidden_size")) {
    int64_t size = o2m_attr_int(ctx, "hidden_size", 0);
    if (size <= 0) return o2m_infer_error(ctx, "hidden_size must be positive");
    *hidden = o2m_dim_known(size);
    return O2M_OK;
  }
  if (is_ranked(r) && r->dims[2].size >= 0) {
    *hidden = r->dims[2];
    return O2M_OK;
  }
  int gates = 1;
  for (size_t i = 0; i < sizeof(rnn_gates) / sizeof(rnn_gates[0]); i++)
    if (strcmp(ctx->node->op_type, rnn_gates[i].op) == 0)
      gates = rnn_gates[i].gates;
  if (is_ranked(w)) return dim_div(ctx, w->dims[1], gates, hidden);
  *hidden = dim_or_fresh(ctx, r, 2);
  return O2M_OK;
}

/* RNN, GRU, LSTM(X, W, R, B?, sequence_lens?, initial_h?, initial_c?, P?)
 * -> (Y, Y_h, Y_c): with layout 0 (the only one before opset 14) X is
 * (seq, batch, input), Y (seq, dirs, batch, hidden) and Y_h/Y_c
 * (dirs, batch, hidden); layout 1 puts batch first in each. */
o2m_status o2m_infer_rnn(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0), *h0 = o2m_in_type(ctx, 5);
  const char *direction = o2m_attr_string(ctx, "direction", "forward");
  int64_t dirs =
      strcmp(direction, "bidirectional") == 0 ? 2
      : strcmp(direction, "forward") == 0 || strcmp(direction, "reverse") == 0
          ? 1
          : 0;
  int64_t layout = ctx->op_version >= 14 ? o2m_attr_int(ctx, "layout", 0) : 0;
  o2m_dim hidden;
  o2m_status s;
  if (!dirs) return o2m_infer_error(ctx, "unknown direction '%s'", direction);
  if (layout != 0 && layout != 1)
    return o2m_infer_error(ctx, "layout must be 0 or 1");
  if ((s = check_rank(ctx, x, "X", 3, 3)) ||
      (s = check_rank(ctx, h0, "initial_h", 3, 3)) ||
      (s = rnn_hidden(ctx, &hidden)))
    return s;
  int batch_axis = layout ? 0 : 1;
  o2m_dim seq = dim_or_fresh(ctx, x, layout ? 1 : 0);
  o2m_dim batch = dim_either(dim_or_fresh(ctx, x, batch_axis),
                             dim_or_fresh(ctx, h0, batch_axis));
  o2m_dim d = o2m_dim_known(dirs);
  o2m_dim y0[] = {seq, d, batch, hidden}, y1[] = {batch, seq, d, hidden};
  o2m_dim h_0[] = {d, batch, hidden}, h_1[] = {batch, d, hidden};
  out_dims(ctx, 0, x->elem, 4, layout ? y1 : y0);
  out_dims(ctx, 1, x->elem, 3, layout ? h_1 : h_0);
  out_dims(ctx, 2, x->elem, 3, layout ? h_1 : h_0);
  return O2M_OK;
}

/* ---- Attention --------------------------------------------------------- */

/* The (heads, sequence, head size) of a Q, K or V input: 4-D inputs are
 * (B, heads, seq, size), 3-D ones (B, seq, heads * size) with `heads` from
 * an attribute. */
typedef struct heads_view {
  o2m_dim batch, heads, seq, size;
} heads_view;

static o2m_status view_heads(o2m_infer_ctx *ctx, const o2m_type *t,
                             int64_t heads, heads_view *v) {
  if (!is_ranked(t)) {
    *v = (heads_view){o2m_dim_fresh(ctx),
                      heads ? o2m_dim_known(heads) : o2m_dim_fresh(ctx),
                      o2m_dim_fresh(ctx), o2m_dim_fresh(ctx)};
    return O2M_OK;
  }
  v->batch = t->dims[0];
  if (t->rank == 4) {
    v->heads = t->dims[1];
    v->seq = t->dims[2];
    v->size = t->dims[3];
    return O2M_OK;
  }
  if (!heads)
    return o2m_infer_error(ctx, "3-D inputs need q_num_heads and kv_num_heads");
  v->heads = o2m_dim_known(heads);
  v->seq = t->dims[1];
  return dim_div(ctx, t->dims[2], heads, &v->size);
}

/* Attention(Q, K, V, attn_mask?, past_key?, past_value?,
 * nonpad_kv_seqlen?) -> (Y, present_key?, present_value?,
 * qk_matmul_output?). total = past + kv sequence lengths. */
o2m_status o2m_infer_attention(o2m_infer_ctx *ctx) {
  const o2m_type *q = o2m_in_type(ctx, 0), *k = o2m_in_type(ctx, 1);
  const o2m_type *v = o2m_in_type(ctx, 2), *past_k = o2m_in_type(ctx, 4);
  int64_t q_heads, kv_heads;
  o2m_status s;
  if ((s = check_rank(ctx, q, "Q", 3, 4)) ||
      (s = check_rank(ctx, k, "K", 3, 4)) ||
      (s = check_rank(ctx, v, "V", 3, 4)) ||
      (s = check_rank(ctx, past_k, "past_key", 4, 4)) ||
      (s = check_rank(ctx, o2m_in_type(ctx, 5), "past_value", 4, 4)) ||
      (s = heads_attr(ctx, "q_num_heads", &q_heads)) ||
      (s = heads_attr(ctx, "kv_num_heads", &kv_heads)))
    return s;
  if (o2m_in_present(ctx, 4) != o2m_in_present(ctx, 5) ||
      o2m_out_present(ctx, 1) != o2m_out_present(ctx, 2))
    return o2m_infer_error(ctx, "past (present) key and value go together");
  if (q_heads && kv_heads && q_heads % kv_heads)
    return o2m_infer_error(ctx,
                           "q_num_heads is not a multiple of kv_num_heads");
  heads_view qv, kv, vv;
  if ((s = view_heads(ctx, q, q_heads, &qv)) ||
      (s = view_heads(ctx, k, kv_heads, &kv)) ||
      (s = view_heads(ctx, v, kv_heads, &vv)))
    return s;
  o2m_dim total = kv.seq;
  if (o2m_in_present(ctx, 4))
    total = is_ranked(past_k) ? o2m_dim_add(ctx, past_k->dims[2], kv.seq)
                              : o2m_dim_fresh(ctx);
  o2m_dim batch = dim_either(qv.batch, kv.batch);
  if (!is_ranked(q)) {
    out_unranked(ctx, 0, q->elem);
  } else if (q->rank == 4) {
    o2m_dim y[] = {batch, qv.heads, qv.seq, vv.size};
    out_dims(ctx, 0, q->elem, 4, y);
  } else {
    o2m_dim hidden = is_ranked(v) && v->rank == 3 && q_heads == kv_heads
                         ? v->dims[2]
                         : o2m_dim_mul(ctx, qv.heads, vv.size);
    o2m_dim y[] = {batch, qv.seq, hidden};
    out_dims(ctx, 0, q->elem, 3, y);
  }
  o2m_dim present_k[] = {batch, kv.heads, total, kv.size};
  o2m_dim present_v[] = {batch, vv.heads, total, vv.size};
  o2m_dim qk[] = {batch, qv.heads, qv.seq, total};
  out_dims(ctx, 1, k->elem, 4, present_k);
  out_dims(ctx, 2, v->elem, 4, present_v);
  out_dims(ctx, 3, q->elem, 4, qk);
  return O2M_OK;
}

/* ai.onnx.preview FlexAttention(Q, K, V) -> Y (B, Hq, L, Dv); the
 * score_mod and prob_mod subgraphs map (B, Hq, L, S) scores of the softmax
 * precision to the same. */
o2m_status o2m_infer_flex_attention(o2m_infer_ctx *ctx) {
  const o2m_type *q = o2m_in_type(ctx, 0), *k = o2m_in_type(ctx, 1);
  const o2m_type *v = o2m_in_type(ctx, 2);
  const o2m_type *qkv[] = {q, k, v};
  for (int i = 0; i < 3; i++) {
    o2m_status s = check_rank(ctx, qkv[i], "Q, K and V", 4, 4);
    if (s) return s;
    if (qkv[i]->elem && q->elem && qkv[i]->elem != q->elem)
      return o2m_infer_error(ctx, "Q, K and V differ in element type");
  }
  o2m_dim batch = dim_or_fresh(ctx, q, 0), q_heads = dim_or_fresh(ctx, q, 1);
  o2m_dim q_seq = dim_or_fresh(ctx, q, 2), kv_seq = dim_or_fresh(ctx, k, 2);
  o2m_dim y[] = {batch, q_heads, q_seq, dim_or_fresh(ctx, v, 3)};
  out_dims(ctx, 0, q->elem, 4, y);
  o2m_dtype precision = (o2m_dtype)o2m_attr_int(
      ctx, "softmax_precision",
      q->elem == O2M_DT_DOUBLE ? O2M_DT_DOUBLE : O2M_DT_FLOAT);
  if (precision != O2M_DT_FLOAT && precision != O2M_DT_FLOAT16 &&
      precision != O2M_DT_BFLOAT16 && precision != O2M_DT_DOUBLE)
    return o2m_infer_error(ctx, "softmax_precision must be a float type");
  o2m_type scores = {O2M_TYPE_TENSOR, precision, 4,
                     (o2m_dim[]){batch, q_heads, q_seq, kv_seq}, NULL};
  const o2m_type *in_types[] = {&scores};
  static const char *const modifiers[] = {"score_mod", "prob_mod"};
  for (int i = 0; i < 2; i++) {
    const o2m_attr *a = o2m_attr_get(ctx, modifiers[i]);
    if (!a) continue;
    if (a->type != O2M_ATTR_GRAPH || !a->g || a->g->n_inputs != 1 ||
        a->g->n_outputs != 1)
      return o2m_infer_error(ctx,
                             "%s must be a graph of one input and one "
                             "output",
                             modifiers[i]);
    o2m_status s = o2m_infer_subgraph(ctx, a->g, 1, in_types);
    if (s) return s;
    const o2m_type *out = &a->g->output_values[0]->type;
    if (out->kind == O2M_TYPE_TENSOR && out->elem && out->elem != precision)
      return o2m_infer_error(ctx, "%s returns %s, expected %s", modifiers[i],
                             o2m_dtype_name(out->elem),
                             o2m_dtype_name(precision));
  }
  return O2M_OK;
}

/* RotaryEmbedding(X, cos_cache, sin_cache, position_ids?) -> Y like X;
 * X is (B, heads, seq, size) or (B, seq, hidden) with num_heads. */
o2m_status o2m_infer_rotary(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  o2m_status s = check_rank(ctx, x, "input", 3, 4);
  if (s) return s;
  if (is_ranked(x) && x->rank == 3 && !o2m_attr_get(ctx, "num_heads"))
    return o2m_infer_error(ctx, "3-D input needs attribute num_heads");
  if (is_ranked(x))
    o2m_out_set_type(ctx, 0, x);
  else
    out_unranked(ctx, 0, x->elem);
  return O2M_OK;
}

/* LinearAttention(query (B, T, Hq*dk), key (B, T, Hkv*dk), value
 * (B, T, Hkv*dv), past_state? (B, Hkv, dk, dv), decay?, beta?) ->
 * (output (B, T, Hq*dv), present_state (B, Hkv, dk, dv)). */
o2m_status o2m_infer_linear_attention(o2m_infer_ctx *ctx) {
  static const struct update_rule {
    const char *name;
    int decay, beta;
  } rules[] = {{"linear", 0, 0},
               {"gated", 1, 0},
               {"delta", 0, 1},
               {"gated_delta", 1, 1}};
  const o2m_type *q = o2m_in_type(ctx, 0), *v = o2m_in_type(ctx, 2);
  const o2m_type *past = o2m_in_type(ctx, 3);
  const char *rule = o2m_attr_string(ctx, "update_rule", "gated_delta");
  int64_t q_heads, kv_heads;
  o2m_status s;
  if ((s = heads_attr(ctx, "q_num_heads", &q_heads)) ||
      (s = heads_attr(ctx, "kv_num_heads", &kv_heads)))
    return s;
  if (!q_heads || !kv_heads || q_heads % kv_heads)
    return o2m_infer_error(ctx, "q_num_heads must be a positive multiple of "
                                "kv_num_heads");
  size_t r = 0;
  while (r < 4 && strcmp(rule, rules[r].name)) r++;
  if (r == 4) return o2m_infer_error(ctx, "unknown update_rule '%s'", rule);
  if (o2m_in_present(ctx, 4) != rules[r].decay ||
      o2m_in_present(ctx, 5) != rules[r].beta)
    return o2m_infer_error(ctx, "update_rule '%s' takes decay: %s, beta: %s",
                           rule, rules[r].decay ? "yes" : "no",
                           rules[r].beta ? "yes" : "no");
  for (int i = 0; i < 6; i++)
    if ((s = check_rank(ctx, o2m_in_type(ctx, i), "input", i == 3 ? 4 : 3,
                        i == 3 ? 4 : 3)))
      return s;
  o2m_dim dk, dv;
  if ((s = dim_div(ctx, dim_or_fresh(ctx, q, 2), q_heads, &dk)) ||
      (s = dim_div(ctx, dim_or_fresh(ctx, v, 2), kv_heads, &dv)))
    return s;
  if (is_ranked(past)) {
    dk = dim_either(dk, past->dims[2]);
    dv = dim_either(dv, past->dims[3]);
  }
  o2m_dim batch =
      dim_either(dim_or_fresh(ctx, q, 0), dim_or_fresh(ctx, past, 0));
  o2m_dim hidden = q_heads == kv_heads
                       ? dim_or_fresh(ctx, v, 2)
                       : o2m_dim_mul(ctx, o2m_dim_known(q_heads), dv);
  o2m_dim y[] = {batch, dim_or_fresh(ctx, q, 1), hidden};
  o2m_dim state[] = {batch, o2m_dim_known(kv_heads), dk, dv};
  out_dims(ctx, 0, q->elem, 3, y);
  out_dims(ctx, 1, o2m_in_present(ctx, 3) ? past->elem : q->elem, 4, state);
  return O2M_OK;
}

/* SwiGLU(A, B) -> Y: A and B have identical shapes (no broadcasting). */
o2m_status o2m_infer_swiglu(o2m_infer_ctx *ctx) {
  const o2m_type *a = o2m_in_type(ctx, 0), *b = o2m_in_type(ctx, 1);
  if (!is_ranked(a) && !is_ranked(b)) {
    out_unranked(ctx, 0, a->elem);
    return O2M_OK;
  }
  if (is_ranked(a) && is_ranked(b) && a->rank != b->rank)
    return o2m_infer_error(ctx, "A has rank %d, B has rank %d", a->rank,
                           b->rank);
  const o2m_type *shape = is_ranked(a) ? a : b;
  o2m_type *y = o2m_out_tensor(ctx, 0, a->elem, shape->rank);
  for (int k = 0; k < shape->rank; k++) {
    o2m_dim da = dim_or_fresh(ctx, a, k), db = dim_or_fresh(ctx, b, k);
    if (da.size >= 0 && db.size >= 0 && da.size != db.size)
      return o2m_infer_error(ctx, "A and B differ in dim %d", k);
    y->dims[k] = is_ranked(a) ? dim_either(da, db) : db;
  }
  return O2M_OK;
}

/* TensorScatter(past_cache, update, write_indices?) -> present_cache like
 * past_cache; update matches it except along the sequence axis. */
o2m_status o2m_infer_tensor_scatter(o2m_infer_ctx *ctx) {
  const o2m_type *past = o2m_in_type(ctx, 0), *update = o2m_in_type(ctx, 1);
  const char *mode = o2m_attr_string(ctx, "mode", "linear");
  if (strcmp(mode, "linear") && strcmp(mode, "circular"))
    return o2m_infer_error(ctx, "unknown mode '%s'", mode);
  if (!is_ranked(past)) {
    out_unranked(ctx, 0, past->elem);
    return O2M_OK;
  }
  int64_t axis;
  o2m_status s =
      o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", -2), past->rank, 0, &axis);
  if (s) return s;
  if (axis == 0) return o2m_infer_error(ctx, "axis must not be the batch axis");
  if (is_ranked(update)) {
    if (update->rank != past->rank)
      return o2m_infer_error(ctx, "update has rank %d, past_cache %d",
                             update->rank, past->rank);
    for (int k = 0; k < past->rank; k++) {
      o2m_dim a = past->dims[k], b = update->dims[k];
      if (a.size >= 0 && b.size >= 0 &&
          (k == axis ? b.size > a.size : a.size != b.size))
        return o2m_infer_error(ctx, "update does not fit past_cache in dim %d",
                               k);
    }
  }
  o2m_out_set_type(ctx, 0, past);
  return O2M_OK;
}
