/* decompose_windows.c - HannWindow, HammingWindow, BlackmanWindow into
 * Range, Cos and elementwise ops: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n
 * / N), n = 0..size-1, N = size (periodic) or size - 1, computed in double
 * and cast to output_datatype (Hann's sin^2(pi n / N) written the same
 * way). One table row per window.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"

/* A one-element tensor as an int64 scalar. */
static o2m_value *as_scalar(o2m_rewriter *rw, o2m_value *v) {
  return xk_reshape(rw, xk_cast(rw, v, O2M_DT_INT64), NULL, 0);
}

typedef struct window_fn {
  const char *op;
  double a0, a1, a2;
} window_fn;

static const window_fn windows[] = {
    {"HannWindow", 0.5, 0.5, 0.0},
    {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0},
    {"BlackmanWindow", 0.42, 0.5, 0.08},
};

o2m_status o2m_decompose_window(o2m_rewriter *rw) {
  const window_fn *w = NULL;
  for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++)
    if (strcmp(windows[i].op, rw->node->op_type) == 0) w = &windows[i];
  o2m_dtype out = xk_elem(o2m_rw_out(rw, 0));
  if (!w || !o2m_dtype_is_float(out)) return o2m_rw_unsupported(rw, "not a window of a float type");
  o2m_value *size = as_scalar(rw, o2m_rw_in(rw, 0));
  o2m_value *n = o2m_rw_attr_i(rw, "periodic", 1) ? size : xk_op2(rw, "Sub", size, xk_scalar(rw, O2M_DT_INT64, 1));
  o2m_value *step = xk_op2(rw, "Div", xk_scalar(rw, O2M_DT_DOUBLE, 2.0 * M_PI), xk_cast(rw, n, O2M_DT_DOUBLE));
  o2m_value *t = xk_op2(rw, "Mul", xk_cast(rw, xk_iota(rw, size), O2M_DT_DOUBLE), step);
  o2m_value *y = xk_op2(rw, "Sub", xk_scalar(rw, O2M_DT_DOUBLE, w->a0),
                        xk_op2(rw, "Mul", xk_op1(rw, "Cos", t), xk_scalar(rw, O2M_DT_DOUBLE, w->a1)));
  if (w->a2 != 0.0) {
    o2m_value *t2 = xk_op2(rw, "Mul", t, xk_scalar(rw, O2M_DT_DOUBLE, 2.0));
    y = xk_op2(rw, "Add", y, xk_op2(rw, "Mul", xk_op1(rw, "Cos", t2), xk_scalar(rw, O2M_DT_DOUBLE, w->a2)));
  }
  return xk_bind(rw, 0, xk_cast(rw, y, out));
}
