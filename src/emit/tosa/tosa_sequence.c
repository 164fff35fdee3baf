/* tosa_sequence.c - TOSA lowerings of sequences and optionals: the
 * unrolled forms every target shares (kit_sequence.c) with TOSA's tensor
 * fallbacks, and ConcatFromSequence (one tosa.concat; new_axis reshapes
 * each element first) and SplitToSequence (a tosa.slice per piece,
 * reshaped when keepdims drops the axis). Static shapes only.
 * Must not: emit anything for a form it refuses (lw_unsupported first). */
#include "emit/tosa/tosa_kit.h"
#include "util/diag.h"

o2m_status tw_lower_seq_identity(lw_ctx *cx) { return lw_lower_seq_identity_with(cx, tw_lower_identity); }
o2m_status tw_lower_seq_if(lw_ctx *cx) { return lw_lower_seq_if_with(cx, tw_lower_if); }
o2m_status tw_lower_optional_get_element(lw_ctx *cx) {
  return lw_lower_optional_get_element_with(cx, tw_lower_identity);
}

static int static_sizes(MlirValue v, int64_t *sizes) {
  int rank = tw_rank(v);
  for (int k = 0; k < rank && k < TW_MAX_RANK; k++)
    if ((sizes[k] = tw_size(v, k)) < 0) return -1;
  return rank <= TW_MAX_RANK ? rank : -1;
}

o2m_status tw_lower_concat_from_sequence(lw_ctx *cx) {
  const lw_seq *q = lw_seq_in(cx, 0);
  if (!q) return O2M_ERR_UNSUPPORTED;
  if (q->n == 0) return lw_error(cx, "concatenating an empty sequence");
  int new_axis = lw_attr_int(cx, "new_axis", 0) != 0;
  int64_t sizes[TW_MAX_RANK + 1];
  int rank = static_sizes(q->elems[0], sizes) + new_axis;
  if (rank < new_axis) return lw_unsupported(cx, "elements with dynamic dims");
  int64_t axis = lw_attr_int(cx, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return lw_error(cx, "axis %lld is out of range", (long long)lw_attr_int(cx, "axis", 0));
  MlirValue *parts = o2m_arena_array(&cx->scratch, (size_t)q->n, sizeof(MlirValue));
  if (!parts) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < q->n; i++) {
    int64_t s[TW_MAX_RANK + 1];
    if (static_sizes(q->elems[i], s) != rank - new_axis) return lw_unsupported(cx, "elements of other ranks or dynamic dims");
    if (new_axis) {
      for (int k = rank - 1; k > axis; k--) s[k] = s[k - 1];
      s[axis] = 1;
    }
    parts[i] = new_axis ? tw_reshape(cx, q->elems[i], rank, s) : q->elems[i];
  }
  return lw_set_out(cx, 0, tw_concat(cx, q->n, parts, (int)axis));
}

o2m_status tw_lower_split_to_sequence(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  int64_t sizes[TW_MAX_RANK];
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
        if (split[n] <= 0) return lw_unsupported(cx, "empty pieces (TOSA has no empty tensors)");
        pieces[n] = split[n], sum += split[n];
      }
      if (sum != dim) return lw_error(cx, "split sums to %lld, not %lld", (long long)sum, (long long)dim);
    }
  }
  if (n > LW_SEQ_MAX) return lw_unsupported(cx, "more than %d pieces", LW_SEQ_MAX);
  MlirValue *elems = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(MlirValue));
  if (!elems) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int64_t i = 0, at = 0; i < n; at += pieces[i++]) {
    elems[i] = tw_slice_axis(cx, x, (int)axis, at, pieces[i]);
    if (!keep) {
      int64_t s[TW_MAX_RANK];
      for (int k = 0, j = 0; k < rank; k++)
        if (k != axis) s[j++] = sizes[k];
      elems[i] = tw_reshape(cx, elems[i], rank - 1, s);
    }
    if (mlirValueIsNull(elems[i])) return lw_error(cx, "internal: cannot slice");
  }
  return lw_seq_out(cx, 0, 1, (int)n, elems);
}
