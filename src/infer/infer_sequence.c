/* infer_sequence.c - inference for sequence and optional ops:
 * SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceErase,
 * SequenceAt, SequenceLength, SplitToSequence, ConcatFromSequence,
 * Optional, OptionalGetElement, OptionalHasElement.
 *
 * A sequence's type holds one element type for all its elements: where
 * elements of different shapes meet, their types merge as If branches do
 * (o2m_type_merge). Subgraph-running SequenceMap lives in infer_control.c.
 */
#include <string.h>

#include "infer/infer_data.h"

static int dim_is_known(o2m_dim d) { return !d.sym && d.size >= 0; }

static const o2m_type unknown_type = {O2M_TYPE_UNKNOWN, O2M_DT_UNDEFINED, -1, NULL, NULL};

/* Sets output i to a type of `kind` (SEQUENCE or OPTIONAL) around `inner`
 * (NULL or unknown: element type not known). */
static o2m_status out_wrapped(o2m_infer_ctx *ctx, int i, o2m_type_kind kind,
                              const o2m_type *inner) {
  o2m_type t = {kind, O2M_DT_UNDEFINED, 0, NULL, NULL};
  if (inner && inner->kind != O2M_TYPE_UNKNOWN && !(t.inner = o2m_type_copy(ctx, inner)))
    return o2m_out_of_memory(ctx);
  o2m_out_set_type(ctx, i, &t);
  return O2M_OK;
}

/* The element type of sequence input i: NULL when the input's type is
 * unknown, the unknown type when the element type is; an error when the
 * input is not a sequence. */
static o2m_status sequence_elem(o2m_infer_ctx *ctx, int i, const o2m_type **elem) {
  const o2m_type *s = o2m_in_type(ctx, i);
  *elem = NULL;
  if (s->kind == O2M_TYPE_UNKNOWN) return O2M_OK;
  if (s->kind != O2M_TYPE_SEQUENCE)
    return o2m_infer_error(ctx, "input %d must be a sequence", i);
  *elem = s->inner ? s->inner : &unknown_type;
  return O2M_OK;
}

/* ---- building sequences ------------------------------------------------------ */

o2m_status o2m_infer_sequence_construct(o2m_infer_ctx *ctx) {
  int n = o2m_in_count(ctx);
  if (n < 1) return o2m_infer_error(ctx, "SequenceConstruct needs at least one input");
  const o2m_type *elem = o2m_in_type(ctx, 0);
  for (int i = 0; i < n; i++) {
    const o2m_type *t = o2m_in_type(ctx, i);
    if (t->kind != O2M_TYPE_TENSOR && t->kind != O2M_TYPE_UNKNOWN)
      return o2m_infer_error(ctx, "input %d must be a tensor", i);
    o2m_type *merged;
    if (i > 0) {
      o2m_status st = o2m_type_merge(ctx, elem, t, "sequence elements", &merged);
      if (st) return st;
      elem = merged;
    }
  }
  o2m_out_seq_length(ctx, 0, n);
  return out_wrapped(ctx, 0, O2M_TYPE_SEQUENCE, elem);
}

o2m_status o2m_infer_sequence_empty(o2m_infer_ctx *ctx) {
  int64_t dtype = o2m_attr_int(ctx, "dtype", O2M_DT_FLOAT);
  if (!o2m_dtype_valid((int)dtype) || dtype == O2M_DT_UNDEFINED)
    return o2m_infer_error(ctx, "dtype %lld is not valid", (long long)dtype);
  o2m_type elem = {O2M_TYPE_TENSOR, (o2m_dtype)dtype, -1, NULL, NULL};
  o2m_out_seq_length(ctx, 0, 0);
  return out_wrapped(ctx, 0, O2M_TYPE_SEQUENCE, &elem);
}

/* Whether sequence input i is known to be empty: made by SequenceEmpty. */
static int sequence_is_empty(const o2m_infer_ctx *ctx, int i) {
  const o2m_value *v = o2m_in_present(ctx, i) ? ctx->node->inputs[i] : NULL;
  return v && v->kind == O2M_VALUE_NODE && v->producer && !v->producer->domain[0] &&
         strcmp(v->producer->op_type, "SequenceEmpty") == 0;
}

o2m_status o2m_infer_sequence_insert(o2m_infer_ctx *ctx) {
  const o2m_type *elem, *t = o2m_in_type(ctx, 1);
  o2m_status st = sequence_elem(ctx, 0, &elem);
  if (st) return st;
  if (t->kind != O2M_TYPE_TENSOR && t->kind != O2M_TYPE_UNKNOWN)
    return o2m_input_not_tensor(ctx, 1);
  int64_t n = o2m_in_seq_length(ctx, 0);
  o2m_out_seq_length(ctx, 0, n < 0 ? -1 : n + 1);
  if (!elem) return O2M_OK;
  if (sequence_is_empty(ctx, 0) && t->kind == O2M_TYPE_TENSOR) {
    if (elem->kind == O2M_TYPE_TENSOR && elem->elem != t->elem)
      return o2m_infer_error(ctx, "the tensor's type differs from the sequence's");
    return out_wrapped(ctx, 0, O2M_TYPE_SEQUENCE, t); /* its only element */
  }
  o2m_type *merged;
  if ((st = o2m_type_merge(ctx, elem, t, "sequence elements", &merged))) return st;
  return out_wrapped(ctx, 0, O2M_TYPE_SEQUENCE, merged);
}

o2m_status o2m_infer_sequence_erase(o2m_infer_ctx *ctx) {
  const o2m_type *elem;
  o2m_status st = sequence_elem(ctx, 0, &elem);
  if (st || !elem) return st;
  o2m_out_set_type(ctx, 0, o2m_in_type(ctx, 0));
  int64_t n = o2m_in_seq_length(ctx, 0);
  o2m_out_seq_length(ctx, 0, n > 0 ? n - 1 : -1); /* an empty one fails when run */
  return O2M_OK;
}

/* ---- reading sequences ------------------------------------------------------- */

o2m_status o2m_infer_sequence_at(o2m_infer_ctx *ctx) {
  const o2m_type *elem;
  o2m_status st = sequence_elem(ctx, 0, &elem);
  if (st || !elem) return st;
  o2m_out_set_type(ctx, 0, elem);
  return O2M_OK;
}

o2m_status o2m_infer_sequence_length(o2m_infer_ctx *ctx) {
  const o2m_type *elem;
  o2m_status st = sequence_elem(ctx, 0, &elem);
  if (st) return st;
  o2m_out_tensor(ctx, 0, O2M_DT_INT64, 0);
  int64_t n = o2m_in_seq_length(ctx, 0);
  o2m_tensor *known = n >= 0 ? o2m_tensor_new(ctx, O2M_DT_INT64, 0, NULL) : NULL;
  if (known) {
    o2m_tensor_set_int(known, 0, n);
    o2m_out_known(ctx, 0, known);
  }
  return O2M_OK;
}

/* ---- SplitToSequence, ConcatFromSequence ------------------------------------ */

/* The size of every element along the split axis when all are equal:
 * no split gives 1, a scalar split k gives k when it divides the dim, a
 * list gives its common entry. A fresh dim otherwise. */
static o2m_dim split_piece(o2m_infer_ctx *ctx, o2m_dim dim) {
  if (!o2m_in_present(ctx, 1)) return o2m_dim_known(1);
  int64_t *split;
  int64_t n = o2m_in_known_ints(ctx, 1, &split);
  const o2m_type *t = o2m_in_type(ctx, 1);
  if (n < 1 || t->rank < 0) return o2m_dim_fresh(ctx);
  if (t->rank == 0) {
    if (split[0] > 0 && dim_is_known(dim) && dim.size % split[0] == 0)
      return o2m_dim_known(split[0]);
    return o2m_dim_fresh(ctx);
  }
  for (int64_t k = 1; k < n; k++)
    if (split[k] != split[0]) return o2m_dim_fresh(ctx);
  return o2m_dim_known(split[0]);
}

o2m_status o2m_infer_split_to_sequence(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_type(ctx, 0);
  if (x->kind != O2M_TYPE_TENSOR) return o2m_input_not_tensor(ctx, 0);
  const o2m_type *split = o2m_in_type(ctx, 1);
  if (split->kind == O2M_TYPE_TENSOR && split->rank > 1)
    return o2m_infer_error(ctx, "split must be a scalar or 1-D");
  o2m_type elem = {O2M_TYPE_TENSOR, x->elem, -1, NULL, NULL};
  if (x->rank < 0) return out_wrapped(ctx, 0, O2M_TYPE_SEQUENCE, &elem);
  int64_t axis;
  o2m_status st = o2m_norm_axis(ctx, o2m_attr_int(ctx, "axis", 0), x->rank, 0, &axis);
  if (st) return st;
  /* keepdims only matters without split: each piece then has size 1 */
  int drop = !o2m_in_present(ctx, 1) && !o2m_attr_int(ctx, "keepdims", 1);
  o2m_dim dims[x->rank];
  elem.rank = 0;
  elem.dims = dims;
  for (int d = 0; d < x->rank; d++) {
    if (d != axis)
      dims[elem.rank++] = x->dims[d];
    else if (!drop)
      dims[elem.rank++] = split_piece(ctx, x->dims[d]);
  }
  return out_wrapped(ctx, 0, O2M_TYPE_SEQUENCE, &elem);
}

o2m_status o2m_infer_concat_from_sequence(o2m_infer_ctx *ctx) {
  const o2m_type *elem;
  o2m_status st = sequence_elem(ctx, 0, &elem);
  if (st || !elem) return st;
  const o2m_attr *axis_attr = o2m_attr_get(ctx, "axis");
  if (!axis_attr) return o2m_infer_error(ctx, "attribute 'axis' is missing");
  if (elem->kind != O2M_TYPE_TENSOR) return O2M_OK;
  int new_axis = o2m_attr_int(ctx, "new_axis", 0) != 0;
  int rank = elem->rank < 0 ? -1 : elem->rank + new_axis;
  o2m_type *out = o2m_out_tensor(ctx, 0, elem->elem, rank);
  if (rank < 0) return O2M_OK;
  int64_t axis;
  if ((st = o2m_norm_axis(ctx, axis_attr->i, rank, 0, &axis))) return st;
  for (int d = 0, j = 0; d < rank; d++) {
    if (d != axis || !new_axis) {
      o2m_dim dim = elem->dims[j++];
      if (d != axis) out->dims[d] = dim;
    }
  }
  return O2M_OK;
}

/* ---- optionals ------------------------------------------------------------------ */

o2m_status o2m_infer_optional(o2m_infer_ctx *ctx) {
  const o2m_attr *type = o2m_attr_get(ctx, "type");
  if (type && (type->type != O2M_ATTR_TYPE_PROTO || !type->tp))
    return o2m_infer_error(ctx, "attribute 'type' must be a type");
  if (o2m_in_present(ctx, 0)) {
    const o2m_type *t = o2m_in_type(ctx, 0);
    if (type && t->kind != O2M_TYPE_UNKNOWN &&
        (t->kind != type->tp->kind || t->elem != type->tp->elem))
      return o2m_infer_error(ctx, "input type differs from attribute 'type'");
    return out_wrapped(ctx, 0, O2M_TYPE_OPTIONAL, t);
  }
  if (!type) return o2m_infer_error(ctx, "an empty Optional needs attribute 'type'");
  return out_wrapped(ctx, 0, O2M_TYPE_OPTIONAL, type->tp);
}

o2m_status o2m_infer_optional_get_element(o2m_infer_ctx *ctx) {
  const o2m_type *t = o2m_in_type(ctx, 0);
  if (t->kind == O2M_TYPE_OPTIONAL) {
    if (t->inner) o2m_out_set_type(ctx, 0, t->inner);
    return O2M_OK;
  }
  if (t->kind == O2M_TYPE_UNKNOWN) return O2M_OK;
  if (ctx->op_version < 18) return o2m_infer_error(ctx, "input must be an optional");
  /* from opset 18 a plain tensor or sequence passes through */
  o2m_out_set_type(ctx, 0, t);
  o2m_propagate_same(ctx, 0, 0);
  return O2M_OK;
}

o2m_status o2m_infer_optional_has_element(o2m_infer_ctx *ctx) {
  o2m_out_tensor(ctx, 0, O2M_DT_BOOL, 0);
  const o2m_type *t = o2m_in_type(ctx, 0);
  int present = o2m_in_present(ctx, 0);
  if (!present && ctx->op_version < 18) return o2m_infer_error(ctx, "input is missing");
  /* known when there is no input, or the input is not an optional */
  if (present && (t->kind == O2M_TYPE_OPTIONAL || t->kind == O2M_TYPE_UNKNOWN))
    return O2M_OK;
  o2m_tensor *known = o2m_tensor_new(ctx, O2M_DT_BOOL, 0, NULL);
  if (!known) return o2m_out_of_memory(ctx);
  o2m_tensor_set_int(known, 0, present);
  o2m_out_known(ctx, 0, known);
  return O2M_OK;
}
