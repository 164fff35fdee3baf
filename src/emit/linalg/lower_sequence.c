/* lower_sequence.c - sequences and optionals, unrolled: where `run`
 * specializes a model to its inputs, every sequence has a length and every
 * optional a presence known when lowering, so a sequence is carried as its
 * elements (lw_seq: one tensor value each) and the generated code stays
 * tensor-only. Positions must be known at import; control flow that
 * carries sequences is lowered only where its branch is known.
 * Must not: emit anything for a form it refuses (lw_unsupported first). */
#include <stdio.h>
#include <string.h>

#include "emit/linalg/lower.h"
#include "emit/linalg/lower_shape.h"
#include "emit/linalg/lower_window.h"
#include "util/diag.h"

enum { SEQ_MAX = 4096 };

static int is_wrapped(const o2m_type *t) { return t->kind == O2M_TYPE_SEQUENCE || t->kind == O2M_TYPE_OPTIONAL; }

static const lw_seq *seq_in(lw_ctx *cx, int i) {
  if (!lw_in_present(cx, i)) return NULL;
  const lw_seq *q = lw_seq_get(cx, cx->node->inputs[i]);
  if (!q) lw_unsupported(cx, "input %d is a sequence or optional whose structure is not known when lowering", i);
  return q;
}

static o2m_status seq_out(lw_ctx *cx, int i, int present, int n, const MlirValue *elems) {
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

o2m_status lw_lower_seq_identity(lw_ctx *cx) {
  if (!lw_in_present(cx, 0) || !is_wrapped(&cx->node->inputs[0]->type)) return lw_lower_identity(cx);
  const lw_seq *q = seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  return seq_out(cx, 0, q->present, q->n, q->elems);
}

o2m_status lw_lower_seq_if(lw_ctx *cx) {
  int wrapped = 0;
  for (int i = 0; i < cx->node->n_outputs; i++)
    if (lw_out_present(cx, i) && is_wrapped(&cx->node->outputs[i]->type)) wrapped = 1;
  if (!wrapped) return lw_lower_if(cx);
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
    if (q) s = seq_out(cx, i, q->present, q->n, q->elems);
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
  return seq_out(cx, 0, 1, n, elems);
}

o2m_status lw_lower_sequence_empty(lw_ctx *cx) { return seq_out(cx, 0, 1, 0, NULL); }

o2m_status lw_lower_sequence_insert(lw_ctx *cx) {
  const lw_seq *q = seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  MlirValue t = lw_in(cx, 1);
  if (mlirValueIsNull(t)) return lw_unsupported(cx, "the tensor is missing or not lowered");
  if (q->n >= SEQ_MAX) return lw_unsupported(cx, "a sequence longer than %d", SEQ_MAX);
  int64_t pos = 0;
  o2m_status s = known_pos(cx, 2, q->n, 1, q->n, &pos);
  if (s) return s;
  MlirValue elems[q->n + 1];
  for (int i = 0, k = 0; i <= q->n; i++) elems[i] = i == pos ? t : q->elems[k++];
  return seq_out(cx, 0, 1, q->n + 1, elems);
}

o2m_status lw_lower_sequence_erase(lw_ctx *cx) {
  const lw_seq *q = seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  if (q->n == 0) return lw_error(cx, "erasing from an empty sequence");
  int64_t pos = 0;
  o2m_status s = known_pos(cx, 1, q->n, 0, q->n - 1, &pos);
  if (s) return s;
  MlirValue elems[q->n];
  for (int i = 0, k = 0; i < q->n; i++)
    if (i != pos) elems[k++] = q->elems[i];
  return seq_out(cx, 0, 1, q->n - 1, elems);
}

/* ---- reading sequences --------------------------------------------------------- */

o2m_status lw_lower_sequence_at(lw_ctx *cx) {
  const lw_seq *q = seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  int64_t pos = 0;
  o2m_status s = known_pos(cx, 1, q->n, 0, 0, &pos);
  return s ? s : lw_set_out(cx, 0, q->elems[pos]);
}

/* A constant tensor<T> of one integer (or bool). */
static MlirValue const_scalar_tensor(lw_ctx *cx, const char *elem, long long v) {
  char type[64], attr[128];
  snprintf(type, sizeof(type), "tensor<%s>", elem);
  snprintf(attr, sizeof(attr), "value = dense<%s> : tensor<%s>",
           strcmp(elem, "i1") == 0 ? (v ? "true" : "false") : "0", elem);
  if (strcmp(elem, "i1") != 0) snprintf(attr, sizeof(attr), "value = dense<%lld> : tensor<%s>", v, elem);
  return lw_op1(cx, "arith.constant", 0, NULL, lw_type(cx, type), attr);
}

o2m_status lw_lower_sequence_length(lw_ctx *cx) {
  const lw_seq *q = seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  return lw_set_out(cx, 0, const_scalar_tensor(cx, "i64", q->n));
}

/* ---- ConcatFromSequence, SplitToSequence --------------------------------------- */

o2m_status lw_lower_concat_from_sequence(lw_ctx *cx) {
  const lw_seq *q = seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  if (q->n == 0) return lw_error(cx, "concatenating an empty sequence");
  MlirType out_type = lw_tensor_type(cx, lw_out_type(cx, 0));
  if (mlirTypeIsNull(out_type)) return lw_unsupported(cx, "the output type is not known");
  int rank = (int)mlirShapedTypeGetRank(out_type), new_axis = lw_attr_int(cx, "new_axis", 0) != 0;
  int axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", 0), rank);
  if (axis < 0) return O2M_ERR_INVALID;
  lw_ix dims[LW_MAX_RANK], offsets[LW_MAX_RANK], sizes[LW_MAX_RANK];
  for (int i = 0; i < q->n; i++)
    if (lw_rank(q->elems[i]) != rank - new_axis) return lw_error(cx, "the elements differ in rank");
  for (int k = 0, j = 0; k < rank; k++) {
    offsets[k] = lw_ix_c(0);
    dims[k] = new_axis && k == axis ? lw_ix_c(1) : lw_ix_dim(cx, q->elems[0], j++);
  }
  dims[axis] = lw_ix_c(0);
  for (int i = 0; i < q->n; i++)
    dims[axis] = lw_ix_bin(cx, LW_IX_ADD, dims[axis], new_axis ? lw_ix_c(1) : lw_ix_dim(cx, q->elems[i], axis));
  MlirValue result = lw_empty_ix(cx, out_type, dims);
  for (int i = 0; i < q->n; i++) {
    MlirValue x = q->elems[i];
    for (int k = 0, j = 0; k < rank; k++) sizes[k] = new_axis && k == axis ? lw_ix_c(1) : lw_ix_dim(cx, x, j++);
    result = lw_insert_slice_at(cx, x, result, offsets, sizes, NULL);
    offsets[axis] = lw_ix_bin(cx, LW_IX_ADD, offsets[axis], sizes[axis]);
  }
  return lw_set_out(cx, 0, result);
}

o2m_status lw_lower_split_to_sequence(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  const o2m_type *xt = lw_in_type(cx, 0), *st = lw_out_type(cx, 0);
  if (mlirValueIsNull(x) || xt->kind != O2M_TYPE_TENSOR || xt->rank < 0)
    return lw_unsupported(cx, "input 0 is not a ranked tensor");
  int rank = lw_rank(x);
  int axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", 0), rank);
  if (axis < 0) return O2M_ERR_INVALID;
  if (xt->dims[axis].size < 0 || xt->dims[axis].sym) return lw_unsupported(cx, "the split axis has a dynamic size");
  int64_t dim = xt->dims[axis].size, *split = NULL, pieces[SEQ_MAX];
  int n = 0, keep = 1;
  if (!lw_in_present(cx, 1)) {
    if (dim > SEQ_MAX) return lw_unsupported(cx, "more than %d pieces", SEQ_MAX);
    for (n = 0; n < dim; n++) pieces[n] = 1;
    keep = lw_attr_int(cx, "keepdims", 1) != 0;
  } else {
    const o2m_type *spt = lw_in_type(cx, 1);
    int64_t c = lw_in_known_ints(cx, 1, &split);
    if (c < 1) return lw_unsupported(cx, "split is not known at import");
    if (spt->rank == 0) {
      if (split[0] <= 0) return lw_error(cx, "split must be positive");
      for (int64_t at = 0; at < dim && n < SEQ_MAX; at += split[0]) pieces[n++] = dim - at < split[0] ? dim - at : split[0];
    } else {
      if (c > SEQ_MAX) return lw_unsupported(cx, "more than %d pieces", SEQ_MAX);
      int64_t sum = 0;
      for (n = 0; n < c; n++) pieces[n] = split[n], sum += split[n];
      if (sum != dim) return lw_error(cx, "split sums to %lld, not %lld", (long long)sum, (long long)dim);
    }
  }
  MlirValue *elems = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(MlirValue));
  if (!elems) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  lw_ix offsets[LW_MAX_RANK], sizes[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) offsets[k] = lw_ix_c(0), sizes[k] = lw_ix_dim(cx, x, k);
  for (int i = 0; i < n; i++) {
    sizes[axis] = lw_ix_c(pieces[i]);
    MlirValue piece = lw_extract_slice(cx, x, offsets, sizes, NULL);
    if (mlirValueIsNull(piece)) return lw_error(cx, "internal: cannot slice");
    if (!keep) {
      o2m_dim pd[LW_MAX_RANK];
      o2m_type pt = *xt;
      for (int k = 0; k < rank; k++) pd[k] = k == axis ? (o2m_dim){1, NULL} : xt->dims[k];
      pt.dims = pd;
      if (!st->inner || st->inner->kind != O2M_TYPE_TENSOR || st->inner->rank != rank - 1)
        return lw_unsupported(cx, "the element type is not known");
      piece = lw_reshape(cx, piece, &pt, st->inner, NULL);
      if (mlirValueIsNull(piece)) return lw_error(cx, "internal: cannot drop the split axis");
    }
    elems[i] = piece;
    offsets[axis] = lw_ix_bin(cx, LW_IX_ADD, offsets[axis], sizes[axis]);
  }
  return seq_out(cx, 0, 1, n, elems);
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
    if (!(seqs[j] = seq_in(cx, j))) return O2M_ERR_UNSUPPORTED;
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
    o2m_status s = seq_out(cx, o, 1, len, outs + (size_t)o * (size_t)len);
    if (s) return s;
  }
  return O2M_OK;
}

/* ---- optionals ------------------------------------------------------------------ */

o2m_status lw_lower_optional(lw_ctx *cx) {
  if (!lw_in_present(cx, 0)) return seq_out(cx, 0, 0, 0, NULL);
  if (is_wrapped(&cx->node->inputs[0]->type)) {
    const lw_seq *q = seq_in(cx, 0);
    if (!q) return O2M_ERR_UNSUPPORTED;
    return seq_out(cx, 0, 1, q->n, q->elems);
  }
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_unsupported(cx, "input 0 is not a tensor");
  return seq_out(cx, 0, 1, 1, &x);
}

o2m_status lw_lower_optional_has_element(lw_ctx *cx) {
  int present = 0;
  if (lw_in_present(cx, 0)) {
    if (cx->node->inputs[0]->type.kind == O2M_TYPE_OPTIONAL) {
      const lw_seq *q = seq_in(cx, 0);
      if (!q) return O2M_ERR_UNSUPPORTED;
      present = q->present;
    } else {
      present = 1;
    }
  }
  return lw_set_out(cx, 0, const_scalar_tensor(cx, "i1", present));
}

o2m_status lw_lower_optional_get_element(lw_ctx *cx) {
  if (!lw_in_present(cx, 0)) return lw_error(cx, "input 0 is missing");
  const o2m_type *t = &cx->node->inputs[0]->type;
  if (!is_wrapped(t)) return lw_lower_identity(cx);
  const lw_seq *q = seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  if (t->kind == O2M_TYPE_SEQUENCE) return seq_out(cx, 0, 1, q->n, q->elems);
  if (!q->present) return lw_error(cx, "the optional is empty");
  if (t->inner && t->inner->kind == O2M_TYPE_SEQUENCE) return seq_out(cx, 0, 1, q->n, q->elems);
  return lw_set_out(cx, 0, q->elems[0]);
}
