/* tosa_sequence.c - TOSA lowerings of sequences and optionals: the
 * unrolled forms every target shares (kit_sequence.c) with TOSA's tensor
 * fallbacks and shape ops (ConcatFromSequence, SplitToSequence). */
#include "emit/tosa/tosa_kit.h"

o2m_status tw_lower_seq_identity(lw_ctx *cx) { return lw_lower_seq_identity_with(cx, tw_lower_identity); }
o2m_status tw_lower_seq_if(lw_ctx *cx) { return lw_lower_seq_if_with(cx, tw_lower_if); }
o2m_status tw_lower_optional_get_element(lw_ctx *cx) {
  return lw_lower_optional_get_element_with(cx, tw_lower_identity);
}

static const lw_shape_ops tosa_shape_ops = {tw_reshape, tw_concat, tw_slice_axis, 0};

o2m_status tw_lower_concat_from_sequence(lw_ctx *cx) {
  return lw_lower_concat_from_sequence_with(cx, &tosa_shape_ops);
}

o2m_status tw_lower_split_to_sequence(lw_ctx *cx) {
  return lw_lower_split_to_sequence_with(cx, &tosa_shape_ops);
}
