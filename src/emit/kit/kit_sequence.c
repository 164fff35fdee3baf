/* kit_sequence.c - sequences and optionals, unrolled, for every target
 * (kit.h): where `run` specializes a model to its inputs, every sequence
 * has a length and every optional a presence known when lowering, so a
 * sequence is carried as its elements (lw_seq: one tensor value each) and
 * the generated code stays tensor-only. Positions must be known at import;
 * control flow that carries sequences is lowered only where its branch is
 * known. The ops that make or split tensors (ConcatFromSequence,
 * SplitToSequence) are each target's own; so are the tensor forms of
 * Identity, If and OptionalGetElement, passed in.
 * Must not: emit anything for a form it refuses (lw_unsupported first). */
#include <stdio.h>
#include <string.h>

#include "emit/kit/kit.h"
#include "util/diag.h"

enum { SEQ_MAX = LW_SEQ_MAX };

int lw_is_wrapped(const o2m_type *t) { return t->kind == O2M_TYPE_SEQUENCE || t->kind == O2M_TYPE_OPTIONAL; }

const lw_seq *lw_seq_in(lw_ctx *cx, int i) {
  if (!lw_in_present(cx, i)) return NULL;
  const lw_seq *q = lw_seq_get(cx, cx->node->inputs[i]);
  if (!q) lw_unsupported(cx, "input %d is a sequence or optional whose structure is not known when lowering", i);
  return q;
}

o2m_status lw_seq_out(lw_ctx *cx, int i, int present, int n, const MlirValue *elems) {
  if (!lw_out_present(cx, i)) return O2M_OK;
  return lw_seq_map(cx, cx->node->outputs[i], present, n, elems);
}

/* A known integer position of input i within [0, n] (or [0, n) when
 * !allow_end); negative counts from the end; dflt when absent. */
static o2m_status known_pos(lw_ctx *cx, int i, int n, int allow_end, int64_t dflt, int64_t *pos) {
  if (!lw_in_present(cx, i)) {
    *pos = dflt;
    return O2M_OK;
  }
  int64_t *v;
  if (lw_in_known_ints(cx, i, &v) != 1) return lw_unsupported(cx, "the position is not known at import");
  int64_t p = v[0] < 0 ? v[0] + n : v[0];
  if (p < 0 || p > n || (!allow_end && p == n)) return lw_error(cx, "position %lld is out of range for length %d", (long long)v[0], n);
  *pos = p;
  return O2M_OK;
}

/* ---- Identity, If -------------------------------------------------------------- */

o2m_status lw_lower_seq_identity_with(lw_ctx *cx, lw_lower_fn tensor_identity) {
  if (!lw_in_present(cx, 0) || !lw_is_wrapped(&cx->node->inputs[0]->type)) return tensor_identity(cx);
  const lw_seq *q = lw_seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  return lw_seq_out(cx, 0, q->present, q->n, q->elems);
}

o2m_status lw_lower_seq_if_with(lw_ctx *cx, lw_lower_fn tensor_if) {
  int wrapped = 0;
  for (int i = 0; i < cx->node->n_outputs; i++)
    if (lw_out_present(cx, i) && lw_is_wrapped(&cx->node->outputs[i]->type)) wrapped = 1;
  if (!wrapped) return tensor_if(cx);
  int64_t *cond;
  if (lw_in_known_ints(cx, 0, &cond) < 1)
    return lw_unsupported(cx, "an If with sequence or optional outputs needs a condition known at import");
  const o2m_attr *a = o2m_node_attr(cx->node, cond[0] ? "then_branch" : "else_branch");
  if (!a || a->type != O2M_ATTR_GRAPH || !a->g) return lw_error(cx, "a branch is missing");
  const o2m_graph *g = a->g;
  if (g->n_outputs != cx->node->n_outputs) return lw_error(cx, "the branch has %d outputs, the node %d", g->n_outputs, cx->node->n_outputs);
  const o2m_node *node = cx->node;
  MlirLocation loc = cx->loc;
  o2m_status s = lw_lower_graph_nodes(cx, g);
  cx->node = node;
  cx->loc = loc;
  for (int i = 0; i < g->n_outputs && !s; i++) {
    const o2m_value *v = g->output_values[i];
    const lw_seq *q = lw_seq_get(cx, v);
    if (q) s = lw_seq_out(cx, i, q->present, q->n, q->elems);
    else s = lw_set_out(cx, i, lw_get(cx, v));
  }
  return s;
}

/* ---- building sequences -------------------------------------------------------- */

o2m_status lw_lower_sequence_construct(lw_ctx *cx) {
  int n = cx->node->n_inputs;
  MlirValue elems[n + 1];
  for (int i = 0; i < n; i++) {
    elems[i] = lw_in(cx, i);
    if (mlirValueIsNull(elems[i])) return lw_unsupported(cx, "input %d is missing or not a tensor", i);
  }
  return lw_seq_out(cx, 0, 1, n, elems);
}

o2m_status lw_lower_sequence_empty(lw_ctx *cx) { return lw_seq_out(cx, 0, 1, 0, NULL); }

o2m_status lw_lower_sequence_insert(lw_ctx *cx) {
  const lw_seq *q = lw_seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  MlirValue t = lw_in(cx, 1);
  if (mlirValueIsNull(t)) return lw_unsupported(cx, "the tensor is missing or not lowered");
  if (q->n >= SEQ_MAX) return lw_unsupported(cx, "a sequence longer than %d", SEQ_MAX);
  int64_t pos = 0;
  o2m_status s = known_pos(cx, 2, q->n, 1, q->n, &pos);
  if (s) return s;
  MlirValue elems[q->n + 1];
  for (int i = 0, k = 0; i <= q->n; i++) elems[i] = i == pos ? t : q->elems[k++];
  return lw_seq_out(cx, 0, 1, q->n + 1, elems);
}

o2m_status lw_lower_sequence_erase(lw_ctx *cx) {
  const lw_seq *q = lw_seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  if (q->n == 0) return lw_error(cx, "erasing from an empty sequence");
  int64_t pos = 0;
  o2m_status s = known_pos(cx, 1, q->n, 0, q->n - 1, &pos);
  if (s) return s;
  MlirValue elems[q->n];
  for (int i = 0, k = 0; i < q->n; i++)
    if (i != pos) elems[k++] = q->elems[i];
  return lw_seq_out(cx, 0, 1, q->n - 1, elems);
}

/* ---- reading sequences --------------------------------------------------------- */

o2m_status lw_lower_sequence_at(lw_ctx *cx) {
  const lw_seq *q = lw_seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  int64_t pos = 0;
  o2m_status s = known_pos(cx, 1, q->n, 0, 0, &pos);
  return s ? s : lw_set_out(cx, 0, q->elems[pos]);
}

/* A rank-0 constant of one int64 or bool (the target's constant op). */
static MlirValue const_scalar_tensor(lw_ctx *cx, o2m_dtype dtype, int64_t v) {
  o2m_tensor *t = o2m_arena_alloc(&cx->scratch, sizeof(o2m_tensor));
  uint8_t *data = o2m_arena_alloc(&cx->scratch, sizeof(int64_t));
  if (!t || !data) return (MlirValue){NULL};
  memset(t, 0, sizeof(*t));
  if (dtype == O2M_DT_BOOL) data[0] = v != 0;
  else memcpy(data, &v, sizeof(v));
  t->dtype = dtype, t->count = 1, t->data = data, t->nbytes = dtype == O2M_DT_BOOL ? 1 : sizeof(v);
  t->origin = O2M_DATA_COMPUTED;
  return lw_const_tensor(cx, t);
}

o2m_status lw_lower_sequence_length(lw_ctx *cx) {
  const lw_seq *q = lw_seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  return lw_set_out(cx, 0, const_scalar_tensor(cx, O2M_DT_INT64, q->n));
}

/* ---- SequenceMap: the body once per element ------------------------------------- */

o2m_status lw_lower_sequence_map(lw_ctx *cx) {
  const o2m_attr *a = o2m_node_attr(cx->node, "body");
  if (!a || a->type != O2M_ATTR_GRAPH || !a->g) return lw_error(cx, "attribute 'body' is missing");
  const o2m_graph *g = a->g;
  const o2m_node *node = cx->node;
  MlirLocation loc = cx->loc;
  int n_in = node->n_inputs, n_out = node->n_outputs;
  if (g->n_inputs != n_in || g->n_outputs != n_out) return lw_error(cx, "the body's inputs or outputs do not match the node's");
  const lw_seq *seqs[n_in + 1];
  int len = -1;
  for (int j = 0; j < n_in; j++) {
    seqs[j] = NULL;
    if (!lw_in_present(cx, j)) return lw_unsupported(cx, "input %d is missing", j);
    if (node->inputs[j]->type.kind != O2M_TYPE_SEQUENCE) continue;
    if (!(seqs[j] = lw_seq_in(cx, j))) return O2M_ERR_UNSUPPORTED;
    if (len >= 0 && seqs[j]->n != len) return lw_error(cx, "the sequences differ in length");
    len = seqs[j]->n;
  }
  if (len < 0) return lw_error(cx, "input 0 must be a sequence");
  MlirValue *outs = o2m_arena_array(&cx->scratch, (size_t)n_out * (size_t)len + 1, sizeof(MlirValue));
  if (!outs) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int k = 0; k < len; k++) {
    cx->node = node;
    for (int j = 0; j < n_in; j++) {
      MlirValue v = seqs[j] ? seqs[j]->elems[k] : lw_in(cx, j);
      if (mlirValueIsNull(v)) return lw_unsupported(cx, "input %d is not a tensor", j);
      MlirType t = lw_tensor_type(cx, &g->input_values[j]->type);
      if (!mlirTypeIsNull(t)) v = lw_cast_tensor(cx, v, t);
      lw_map(cx, g->input_values[j], v);
    }
    o2m_status s = lw_lower_graph_nodes(cx, g);
    cx->node = node;
    cx->loc = loc;
    if (s) return s;
    for (int o = 0; o < n_out; o++) {
      MlirValue v = lw_get(cx, g->output_values[o]);
      if (mlirValueIsNull(v)) return lw_unsupported(cx, "body output %d is not a tensor", o);
      outs[o * len + k] = v;
    }
  }
  for (int o = 0; o < n_out; o++) {
    o2m_status s = lw_seq_out(cx, o, 1, len, outs + (size_t)o * (size_t)len);
    if (s) return s;
  }
  return O2M_OK;
}

/* ---- optionals ------------------------------------------------------------------ */

o2m_status lw_lower_optional(lw_ctx *cx) {
  if (!lw_in_present(cx, 0)) return lw_seq_out(cx, 0, 0, 0, NULL);
  if (lw_is_wrapped(&cx->node->inputs[0]->type)) {
    const lw_seq *q = lw_seq_in(cx, 0);
    if (!q) return O2M_ERR_UNSUPPORTED;
    return lw_seq_out(cx, 0, 1, q->n, q->elems);
  }
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_unsupported(cx, "input 0 is not a tensor");
  return lw_seq_out(cx, 0, 1, 1, &x);
}

o2m_status lw_lower_optional_has_element(lw_ctx *cx) {
  int present = 0;
  if (lw_in_present(cx, 0)) {
    if (cx->node->inputs[0]->type.kind == O2M_TYPE_OPTIONAL) {
      const lw_seq *q = lw_seq_in(cx, 0);
      if (!q) return O2M_ERR_UNSUPPORTED;
      present = q->present;
    } else {
      present = 1;
    }
  }
  return lw_set_out(cx, 0, const_scalar_tensor(cx, O2M_DT_BOOL, present));
}

o2m_status lw_lower_optional_get_element_with(lw_ctx *cx, lw_lower_fn tensor_identity) {
  if (!lw_in_present(cx, 0)) return lw_error(cx, "input 0 is missing");
  const o2m_type *t = &cx->node->inputs[0]->type;
  if (!lw_is_wrapped(t)) return tensor_identity(cx);
  const lw_seq *q = lw_seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  if (t->kind == O2M_TYPE_SEQUENCE) return lw_seq_out(cx, 0, 1, q->n, q->elems);
  if (!q->present) return lw_error(cx, "the optional is empty");
  if (t->inner && t->inner->kind == O2M_TYPE_SEQUENCE) return lw_seq_out(cx, 0, 1, q->n, q->elems);
  return lw_set_out(cx, 0, q->elems[0]);
}

/* ---- ConcatFromSequence and SplitToSequence, in the target's shape ops ---------- */

enum { LW_SEQ_MAX_RANK = 64 };

static int static_sizes(MlirValue v, int64_t *sizes) {
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(v));
  for (int k = 0; k < rank && k < LW_SEQ_MAX_RANK; k++)
    if ((sizes[k] = (mlirShapedTypeIsDynamicDim(mlirValueGetType(v), k) ? -1 : mlirShapedTypeGetDimSize(mlirValueGetType(v), k))) < 0) return -1;
  return rank <= LW_SEQ_MAX_RANK ? rank : -1;
}

o2m_status lw_lower_concat_from_sequence_with(lw_ctx *cx, const lw_shape_ops *ops) {
  const lw_seq *q = lw_seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  if (q->n == 0) return lw_error(cx, "concatenating an empty sequence");
  int new_axis = lw_attr_int(cx, "new_axis", 0) != 0;
  int64_t sizes[LW_SEQ_MAX_RANK + 1];
  int rank = static_sizes(q->elems[0], sizes) + new_axis;
  if (rank < new_axis) return lw_unsupported(cx, "elements with dynamic dims");
  int64_t axis = lw_attr_int(cx, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return lw_error(cx, "axis %lld is out of range", (long long)lw_attr_int(cx, "axis", 0));
  MlirValue *parts = o2m_arena_array(&cx->scratch, (size_t)q->n, sizeof(MlirValue));
  if (!parts) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < q->n; i++) {
    int64_t s[LW_SEQ_MAX_RANK + 1];
    if (static_sizes(q->elems[i], s) != rank - new_axis) return lw_unsupported(cx, "elements of other ranks or dynamic dims");
    if (new_axis) {
      for (int k = rank - 1; k > axis; k--) s[k] = s[k - 1];
      s[axis] = 1;
    }
    parts[i] = new_axis ? ops->reshape(cx, q->elems[i], rank, s) : q->elems[i];
  }
  return lw_set_out(cx, 0, ops->concat(cx, q->n, parts, (int)axis));
}

o2m_status lw_lower_split_to_sequence_with(lw_ctx *cx, const lw_shape_ops *ops) {
  MlirValue x = lw_in(cx, 0);
  int64_t sizes[LW_SEQ_MAX_RANK];
  int rank = mlirValueIsNull(x) ? -1 : static_sizes(x, sizes);
  if (rank < 1) return lw_unsupported(cx, "input 0 needs static dims");
  int64_t axis = lw_attr_int(cx, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return lw_error(cx, "axis %lld is out of range", (long long)lw_attr_int(cx, "axis", 0));
  int64_t dim = sizes[axis], *split = NULL, n = 0, keep = 1;
  int64_t *pieces = o2m_arena_array(&cx->scratch, (size_t)dim + 1, sizeof(int64_t));
  if (!pieces) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  if (!lw_in_present(cx, 1)) {
    for (n = 0; n < dim; n++) pieces[n] = 1;
    keep = lw_attr_int(cx, "keepdims", 1) != 0;
  } else {
    int64_t c = lw_in_known_ints(cx, 1, &split);
    if (c < 1) return lw_unsupported(cx, "split is not known at import");
    if (lw_in_type(cx, 1)->rank == 0) {
      if (split[0] <= 0) return lw_error(cx, "split must be positive");
      for (int64_t at = 0; at < dim; at += split[0]) pieces[n++] = dim - at < split[0] ? dim - at : split[0];
    } else {
      int64_t sum = 0;
      if (c > dim) return lw_error(cx, "split has %lld entries for a dim of %lld", (long long)c, (long long)dim);
      for (n = 0; n < c; n++) {
        if (split[n] < 0 || (split[n] == 0 && !ops->allow_empty))
          return split[n] < 0 ? lw_error(cx, "split must not be negative")
                              : lw_unsupported(cx, "empty pieces (%s has no empty tensors)", cx->target->name);
        pieces[n] = split[n], sum += split[n];
      }
      if (sum != dim) return lw_error(cx, "split sums to %lld, not %lld", (long long)sum, (long long)dim);
    }
  }
  if (n > LW_SEQ_MAX) return lw_unsupported(cx, "more than %d pieces", LW_SEQ_MAX);
  MlirValue *elems = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(MlirValue));
  if (!elems) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int64_t i = 0, at = 0; i < n; at += pieces[i++]) {
    elems[i] = ops->slice_axis(cx, x, (int)axis, at, pieces[i]);
    if (!keep) {
      int64_t s[LW_SEQ_MAX_RANK];
      for (int k = 0, j = 0; k < rank; k++)
        if (k != axis) s[j++] = sizes[k];
      elems[i] = ops->reshape(cx, elems[i], rank - 1, s);
    }
    if (mlirValueIsNull(elems[i])) return lw_error(cx, "internal: cannot slice");
  }
  return lw_seq_out(cx, 0, 1, (int)n, elems);
}
