/* decompose_dropout.c - Dropout in inference (no training_mode, or a
 * known false one; is_test before 7) or with a known ratio of 0: Y is X,
 * the optional mask all true (ConstantOfShape of X's shape). A seeded
 * training-mode dropout draws its mask at import (decompose_random.c);
 * an unseeded one is refused.
 */
#include "transform/decompose_kit.h"

/* The known scalar value of a float or bool value, into *v. */
static int known_number(const o2m_value *x, double *v) {
  if (!x || !x->known || x->known->count != 1) return 0;
  *v = o2m_tensor_get_float(x->known, 0);
  return 1;
}

o2m_status o2m_decompose_dropout(o2m_rewriter *rw) {
  int version = xk_version(rw);
  double ratio = o2m_rw_attr_f(rw, "ratio", 0.5f), training = 0;
  if (version >= 12) {
    if (o2m_rw_in(rw, 1) && !known_number(o2m_rw_in(rw, 1), &ratio)) ratio = -1;
    if (o2m_rw_in(rw, 2) && ratio != 0 && !known_number(o2m_rw_in(rw, 2), &training))
      return o2m_rw_unsupported(rw, "training_mode is not known at import");
  } else if (version < 7) {
    training = o2m_rw_attr_i(rw, "is_test", 0) == 0;
  }
  if (training && ratio != 0) {
    if (ratio < 0) return o2m_rw_unsupported(rw, "the ratio of a training-mode dropout is not known at import");
    if (!o2m_rw_attr(rw, "seed")) return o2m_rw_unsupported(rw, "random dropout in training mode without a seed");
    return o2m_decompose_seeded_dropout(rw, ratio);
  }
  o2m_value *x = o2m_rw_in(rw, 0), *mask = o2m_rw_out(rw, 1);
  o2m_status s = xk_bind(rw, 0, x);
  if (s || !mask) return s;
  o2m_infer_ctx ctx = {rw->model, &rw->model->arena, rw->diag, rw->graph, rw->node, 0};
  int64_t one = 1;
  o2m_tensor *t = xk_elem(mask) ? o2m_tensor_new(&ctx, xk_elem(mask), 1, &one) : NULL;
  if (!t) return o2m_rw_unsupported(rw, "the mask type is unknown");
  o2m_tensor_set_int(t, 0, 1);
  o2m_attr value = {0};
  value.name = "value";
  value.type = O2M_ATTR_TENSOR;
  value.t = t;
  value.ref_attr_name = value.doc = "";
  o2m_value *shape = xk_op1(rw, "Shape", x);
  return shape ? o2m_rw_node_into(rw, "ConstantOfShape", 1, &shape, 1, &mask, &value, 1) : xk_failed(rw);
}
