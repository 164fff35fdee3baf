/* decompose_training.c - the optimizers of ai.onnx.preview.training into
 * elementwise ops, per optimized tensor (inputs R, T, then the tensors,
 * gradients and state grouped by kind; outputs grouped the same way):
 *  Adagrad   g' = c x + g; h' = h + g'^2; x' = x - r / (1 + t decay) * g'
 *            / (sqrt(h') + eps)
 *  Adam      g' = c x + g; v' = a v + (1 - a) g'; h' = b h + (1 - b) g'^2;
 *            x' = (1 - c_post) (x - r' v' / (sqrt(h') + eps)), r' = r
 *            sqrt(1 - b^t) / (1 - a^t) when t > 0, else r
 *  Momentum  g' = c x + g; v' = a v + b' g' (b' = 1 at t = 0);
 *            standard: x' = x - r v'; nesterov: x' = x - r (g' + a v')
 * R and T are scalars known only at run time; R is used in x's type.
 */
#include <string.h>

#include "transform/decompose_kit.h"

/* k * v, skipping k == 1. */
static o2m_value *times(o2m_rewriter *rw, double k, o2m_value *v) {
  return k == 1.0 ? v : xk_op2(rw, "Mul", xk_scalar_like(rw, v, k), v);
}

/* The regularised gradient c x + g. */
static o2m_value *regularized(o2m_rewriter *rw, o2m_value *x, o2m_value *g, double c) {
  return c == 0.0 ? g : xk_op2(rw, "Add", times(rw, c, x), g);
}

/* T > 0, a bool scalar. */
static o2m_value *started(o2m_rewriter *rw) {
  o2m_value *t = o2m_rw_in(rw, 1);
  return xk_op2(rw, "Greater", t, xk_scalar_like(rw, t, 0.0));
}

/* The number of optimized tensors for `per` inputs and outputs each. */
static int groups(o2m_rewriter *rw, int per) {
  int n = (rw->node->n_inputs - 2) / per;
  return n > 0 && rw->node->n_inputs == 2 + per * n && rw->node->n_outputs <= n * (per - 1) ? n : 0;
}

o2m_status o2m_decompose_adagrad(o2m_rewriter *rw) {
  int n = groups(rw, 3);
  if (!n) return o2m_rw_error(rw, "the inputs do not form (X, G, H) groups");
  double decay = o2m_rw_attr_f(rw, "decay_factor", 0.0f), eps = o2m_rw_attr_f(rw, "epsilon", 1e-6f);
  double c = o2m_rw_attr_f(rw, "norm_coefficient", 0.0f);
  o2m_status s = O2M_OK;
  for (int i = 0; i < n && !s; i++) {
    o2m_value *x = o2m_rw_in(rw, 2 + i), *g = o2m_rw_in(rw, 2 + n + i), *h = o2m_rw_in(rw, 2 + 2 * n + i);
    o2m_value *r = xk_cast(rw, o2m_rw_in(rw, 0), xk_elem(x));
    o2m_value *steps = xk_cast(rw, o2m_rw_in(rw, 1), xk_elem(x));
    o2m_value *rate = xk_op2(rw, "Div", r, xk_op2(rw, "Add", xk_scalar_like(rw, x, 1.0), times(rw, decay, steps)));
    o2m_value *gr = regularized(rw, x, g, c);
    o2m_value *h_new = xk_op2(rw, "Add", h, xk_op2(rw, "Mul", gr, gr));
    o2m_value *denom = xk_op2(rw, "Add", xk_op1(rw, "Sqrt", h_new), xk_scalar_like(rw, x, eps));
    s = xk_bind(rw, i, xk_op2(rw, "Sub", x, xk_op2(rw, "Div", xk_op2(rw, "Mul", rate, gr), denom)));
    if (!s) s = xk_bind(rw, n + i, h_new);
  }
  return s;
}

o2m_status o2m_decompose_adam(o2m_rewriter *rw) {
  int n = groups(rw, 4);
  if (!n) return o2m_rw_error(rw, "the inputs do not form (X, G, V, H) groups");
  double a = o2m_rw_attr_f(rw, "alpha", 0.9f), b = o2m_rw_attr_f(rw, "beta", 0.999f);
  double eps = o2m_rw_attr_f(rw, "epsilon", 1e-6f), c = o2m_rw_attr_f(rw, "norm_coefficient", 0.0f);
  double c_post = o2m_rw_attr_f(rw, "norm_coefficient_post", 0.0f);
  o2m_status s = O2M_OK;
  for (int i = 0; i < n && !s; i++) {
    o2m_value *x = o2m_rw_in(rw, 2 + i), *g = o2m_rw_in(rw, 2 + n + i);
    o2m_value *v = o2m_rw_in(rw, 2 + 2 * n + i), *h = o2m_rw_in(rw, 2 + 3 * n + i);
    o2m_value *r = xk_cast(rw, o2m_rw_in(rw, 0), xk_elem(x));
    o2m_value *steps = xk_cast(rw, o2m_rw_in(rw, 1), xk_elem(x));
    o2m_value *gr = regularized(rw, x, g, c);
    o2m_value *v_new = xk_op2(rw, "Add", times(rw, a, v), times(rw, 1.0 - a, gr));
    o2m_value *h_new = xk_op2(rw, "Add", times(rw, b, h), times(rw, 1.0 - b, xk_op2(rw, "Mul", gr, gr)));
    o2m_value *one = xk_scalar_like(rw, x, 1.0);
    o2m_value *bias_b = xk_op1(rw, "Sqrt", xk_op2(rw, "Sub", one, xk_op2(rw, "Pow", xk_scalar_like(rw, x, b), steps)));
    o2m_value *bias_a = xk_op2(rw, "Sub", one, xk_op2(rw, "Pow", xk_scalar_like(rw, x, a), steps));
    o2m_value *rate = xk_where(rw, started(rw), xk_op2(rw, "Div", xk_op2(rw, "Mul", r, bias_b), bias_a), r);
    o2m_value *denom = xk_op2(rw, "Add", xk_op1(rw, "Sqrt", h_new), xk_scalar_like(rw, x, eps));
    o2m_value *x_new = xk_op2(rw, "Sub", x, xk_op2(rw, "Mul", rate, xk_op2(rw, "Div", v_new, denom)));
    s = xk_bind(rw, i, times(rw, 1.0 - c_post, x_new));
    if (!s) s = xk_bind(rw, n + i, v_new);
    if (!s) s = xk_bind(rw, 2 * n + i, h_new);
  }
  return s;
}

o2m_status o2m_decompose_momentum(o2m_rewriter *rw) {
  int n = groups(rw, 3);
  const o2m_attr *mode = o2m_rw_attr(rw, "mode");
  if (!n) return o2m_rw_error(rw, "the inputs do not form (X, G, V) groups");
  int nesterov = mode && mode->type == O2M_ATTR_STRING && mode->s.len == 8 && !memcmp(mode->s.ptr, "nesterov", 8);
  double a = o2m_rw_attr_f(rw, "alpha", 0.0f), b = o2m_rw_attr_f(rw, "beta", 0.0f);
  double c = o2m_rw_attr_f(rw, "norm_coefficient", 0.0f);
  o2m_status s = O2M_OK;
  for (int i = 0; i < n && !s; i++) {
    o2m_value *x = o2m_rw_in(rw, 2 + i), *g = o2m_rw_in(rw, 2 + n + i), *v = o2m_rw_in(rw, 2 + 2 * n + i);
    o2m_value *r = xk_cast(rw, o2m_rw_in(rw, 0), xk_elem(x));
    o2m_value *gr = regularized(rw, x, g, c);
    o2m_value *b_now = xk_where(rw, started(rw), xk_scalar_like(rw, x, b), xk_scalar_like(rw, x, 1.0));
    o2m_value *v_new = xk_op2(rw, "Add", times(rw, a, v), xk_op2(rw, "Mul", b_now, gr));
    o2m_value *step = nesterov ? xk_op2(rw, "Add", gr, times(rw, a, v_new)) : v_new;
    s = xk_bind(rw, i, xk_op2(rw, "Sub", x, xk_op2(rw, "Mul", r, step)));
    if (!s) s = xk_bind(rw, n + i, v_new);
  }
  return s;
}
