/* lower_sequence.c - the Linalg lowerings of sequences (rows in
 * lower_sequence.def): the unrolled forms shared by every target
 * (kit_sequence.c) with Linalg's tensor fallbacks, and ConcatFromSequence
 * (tensor.insert_slice into one result) and SplitToSequence
 * (tensor.extract_slice per piece).
 * Must not: emit anything for a form it refuses (lw_unsupported first). */
#include <stdio.h>
#include <string.h>

#include "emit/linalg/lower.h"
#include "emit/linalg/lower_shape.h"
#include "emit/linalg/lower_window.h"
#include "util/diag.h"

enum { SEQ_MAX = LW_SEQ_MAX };

o2m_status lw_lower_seq_identity(lw_ctx *cx) { return lw_lower_seq_identity_with(cx, lw_lower_identity); }
o2m_status lw_lower_seq_if(lw_ctx *cx) { return lw_lower_seq_if_with(cx, lw_lower_if); }
o2m_status lw_lower_optional_get_element(lw_ctx *cx) {
  return lw_lower_optional_get_element_with(cx, lw_lower_identity);
}

/* ---- ConcatFromSequence, SplitToSequence --------------------------------------- */

o2m_status lw_lower_concat_from_sequence(lw_ctx *cx) {
  const lw_seq *q = lw_seq_in(cx, 0);
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
  return lw_seq_out(cx, 0, 1, n, elems);
}

