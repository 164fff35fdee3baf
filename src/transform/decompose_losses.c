/* decompose_losses.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * into GatherElements, Gather, Where and reductions:
 *   loss[n, d...] = -input[n, target[n, d...], d...] * weight[target[n, d...]]
 * with positions whose target is ignore_index contributing 0 (and weight
 * 0); reduction "none" keeps the loss, "sum" adds it up, "mean" divides
 * the sum by the sum of the weights in effect (the count of positions not
 * ignored when there are no class weights). SoftmaxCrossEntropyLoss is the
 * same over LogSoftmax(scores, axis 1), whose value is also its optional
 * log_prob output.
 */
#include <string.h>

#include "transform/decompose_kit.h"

typedef enum reduction { REDUCE_NONE, REDUCE_SUM, REDUCE_MEAN } reduction;

static int reduction_of(o2m_rewriter *rw, reduction *r) {
  const o2m_attr *a = o2m_rw_attr(rw, "reduction");
  static const char *const names[] = {"none", "sum", "mean"};
  if (!a) {
    *r = REDUCE_MEAN;
    return 1;
  }
  for (int k = 0; k < 3; k++)
    if (a->type == O2M_ATTR_STRING && a->s.len == strlen(names[k]) && !memcmp(a->s.ptr, names[k], a->s.len)) {
      *r = (reduction)k;
      return 1;
    }
  return 0;
}

/* The loss from log-probabilities `logp` [N, C, d...] into output 0. */
static o2m_status nll(o2m_rewriter *rw, o2m_value *logp) {
  o2m_value *target = o2m_rw_in(rw, 1), *weight = o2m_rw_in(rw, 2);
  reduction r;
  if (!reduction_of(rw, &r)) return o2m_rw_error(rw, "unknown reduction");
  o2m_dtype f = xk_elem(logp);
  if (!f || !xk_elem(target)) return o2m_rw_unsupported(rw, "unknown element types");
  static const int64_t class_axis[1] = {1};
  const o2m_attr *ignore = o2m_rw_attr(rw, "ignore_index");
  o2m_value *keep = NULL; /* bool: the target is not ignore_index */
  if (ignore) {
    o2m_value *ii = xk_scalar(rw, xk_elem(target), (double)ignore->i);
    keep = xk_op1(rw, "Not", xk_op2(rw, "Equal", target, ii));
    target = xk_where(rw, keep, target, xk_scalar(rw, xk_elem(target), 0.0));
  }
  o2m_value *gather_in[2] = {logp, xk_unsqueeze(rw, target, class_axis, 1)};
  o2m_attr axis1 = o2m_rw_attr_int("axis", 1);
  o2m_value *picked = gather_in[1] ? o2m_rw_op(rw, "GatherElements", 2, gather_in, &axis1, 1) : NULL;
  o2m_value *loss = xk_op1(rw, "Neg", xk_squeeze(rw, picked, class_axis, 1));
  o2m_value *w = weight ? xk_op2(rw, "Gather", weight, target) : NULL;
  if (keep) {
    loss = xk_where(rw, keep, loss, xk_scalar(rw, f, 0.0));
    o2m_value *kept = xk_cast(rw, keep, f);
    w = w ? xk_op2(rw, "Mul", w, kept) : kept;
  }
  if (w) loss = xk_op2(rw, "Mul", loss, w);
  if (r == REDUCE_NONE) return xk_bind(rw, 0, loss);
  o2m_value *sum = xk_reduce(rw, "ReduceSum", loss, NULL, 0, 0);
  if (r == REDUCE_SUM) return xk_bind(rw, 0, sum);
  if (!w) return xk_bind(rw, 0, xk_reduce(rw, "ReduceMean", loss, NULL, 0, 0));
  return xk_bind(rw, 0, xk_op2(rw, "Div", sum, xk_reduce(rw, "ReduceSum", w, NULL, 0, 0)));
}

o2m_status o2m_decompose_nll_loss(o2m_rewriter *rw) { return nll(rw, o2m_rw_in(rw, 0)); }

o2m_status o2m_decompose_softmax_cross_entropy(o2m_rewriter *rw) {
  o2m_attr axis1 = o2m_rw_attr_int("axis", 1);
  o2m_value *scores = o2m_rw_in(rw, 0);
  o2m_value *logp = o2m_rw_op(rw, "LogSoftmax", 1, &scores, &axis1, 1);
  o2m_status s = logp ? nll(rw, logp) : xk_failed(rw);
  return s ? s : xk_bind(rw, 1, logp);
}
