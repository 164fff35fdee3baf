/* decompose_activations.c - the parameterised activations, for targets
 * that do not lower them, written in elementwise core ops (Add Sub Mul
 * Div Exp Log Tanh Sigmoid Erf Abs Max Min Clip Where Greater Less) that
 * every backend has. Each follows the formula of ONNX's reference
 * implementation, in the input's float dtype (float16 and bfloat16 in
 * float, rounded once at the end; constants of that dtype):
 *   LeakyRelu        x > 0 ? x : alpha x
 *   Elu              x > 0 ? x : alpha (exp(x) - 1)
 *   Selu             gamma (x > 0 ? x : alpha exp(x) - alpha)
 *   Celu             max(0, x) + min(0, alpha (exp(x / alpha) - 1))
 *   ThresholdedRelu  x > alpha ? x : 0
 *   HardSigmoid      clip(alpha x + beta, 0, 1)
 *   HardSwish        x clip(x / 6 + 1 / 2, 0, 1)
 *   Softplus         log(1 + exp(x)); x itself once exp(-x) is below half
 *                    an ulp of x (so exp(x) cannot overflow to inf)
 *   Softsign         x / (1 + |x|)
 *   Gelu             x / 2 (1 + erf(x / sqrt 2)); approximate "tanh":
 *                    x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
 *   Mish             x tanh(softplus(x))
 *   Swish            x sigmoid(alpha x)
 *   Shrink           x < -lambd ? x + bias : x > lambd ? x - bias : 0, also
 *                    on integers (exact bounds; an integral bias)
 * One table row per op: its attributes with their defaults and a builder.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"

enum { MAX_PARAMS = 3 };

/* Builds the activation of x from its attribute values p[]. */
typedef o2m_value *(*activation_fn)(o2m_rewriter *rw, o2m_value *x, const double *p);

/* ---- small builders ------------------------------------------------------------ */

static o2m_value *k(o2m_rewriter *rw, o2m_value *like, double v) { return xk_scalar_like(rw, like, v); }

/* x * a for a constant a. */
static o2m_value *scale(o2m_rewriter *rw, o2m_value *x, double a) { return xk_op2(rw, "Mul", x, k(rw, x, a)); }

/* x > t ? a : b for a constant t. */
static o2m_value *above(o2m_rewriter *rw, o2m_value *x, double t, o2m_value *a, o2m_value *b) {
  return xk_where(rw, xk_op2(rw, "Greater", x, k(rw, x, t)), a, b);
}

/* Clip(x, lo, hi) for constant bounds. */
static o2m_value *clip(o2m_rewriter *rw, o2m_value *x, double lo, double hi) {
  o2m_value *in[3] = {x, k(rw, x, lo), k(rw, x, hi)};
  return in[0] && in[1] && in[2] ? o2m_rw_op(rw, "Clip", 3, in, NULL, 0) : NULL;
}

/* exp(x) - 1 */
static o2m_value *expm1_of(o2m_rewriter *rw, o2m_value *x) {
  return xk_op2(rw, "Sub", xk_op1(rw, "Exp", x), k(rw, x, 1.0));
}

/* decompose_math.c: the significand's bits of a float dtype (0 for
 * others), and the dtype float math is computed in. */
int o2m_significand_bits(o2m_dtype t);
o2m_dtype o2m_math_dtype(o2m_dtype t);

/* log(1 + exp(x)). For x > p ln 2 (p significand bits, x > 1), exp(-x) <
 * 2^-p <= ulp(x) / 2, so log(1 + exp(x)) = x + log1p(exp(-x)) rounds to x:
 * x is then the exact answer where exp(x) may already be inf. */
static o2m_value *softplus_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *y = xk_op1(rw, "Log", xk_op2(rw, "Add", xk_op1(rw, "Exp", x), k(rw, x, 1.0)));
  int p = x ? o2m_significand_bits(xk_elem(x)) : 0;
  return p ? above(rw, x, p * M_LN2, x, y) : y;
}

/* ---- the activations ------------------------------------------------------------ */

static o2m_value *leaky_relu(o2m_rewriter *rw, o2m_value *x, const double *p) {
  return above(rw, x, 0, x, scale(rw, x, p[0]));
}

static o2m_value *elu(o2m_rewriter *rw, o2m_value *x, const double *p) {
  return above(rw, x, 0, x, scale(rw, expm1_of(rw, x), p[0]));
}

static o2m_value *selu(o2m_rewriter *rw, o2m_value *x, const double *p) {
  o2m_value *negative = xk_op2(rw, "Sub", scale(rw, xk_op1(rw, "Exp", x), p[0]), k(rw, x, p[0]));
  return scale(rw, above(rw, x, 0, x, negative), p[1]);
}

static o2m_value *celu(o2m_rewriter *rw, o2m_value *x, const double *p) {
  o2m_value *zero = k(rw, x, 0.0);
  o2m_value *e = scale(rw, expm1_of(rw, xk_op2(rw, "Div", x, k(rw, x, p[0]))), p[0]);
  return xk_op2(rw, "Add", xk_op2(rw, "Max", zero, x), xk_op2(rw, "Min", zero, e));
}

static o2m_value *thresholded_relu(o2m_rewriter *rw, o2m_value *x, const double *p) {
  return above(rw, x, p[0], x, k(rw, x, 0.0));
}

static o2m_value *hard_sigmoid(o2m_rewriter *rw, o2m_value *x, const double *p) {
  return clip(rw, xk_op2(rw, "Add", scale(rw, x, p[0]), k(rw, x, p[1])), 0.0, 1.0);
}

static o2m_value *hard_swish(o2m_rewriter *rw, o2m_value *x, const double *p) {
  return xk_op2(rw, "Mul", x, hard_sigmoid(rw, x, p));
}

static o2m_value *softplus(o2m_rewriter *rw, o2m_value *x, const double *p) {
  (void)p;
  return softplus_of(rw, x);
}

static o2m_value *softsign(o2m_rewriter *rw, o2m_value *x, const double *p) {
  (void)p;
  return xk_op2(rw, "Div", x, xk_op2(rw, "Add", xk_op1(rw, "Abs", x), k(rw, x, 1.0)));
}

static o2m_value *mish(o2m_rewriter *rw, o2m_value *x, const double *p) {
  (void)p;
  return xk_op2(rw, "Mul", x, xk_op1(rw, "Tanh", softplus_of(rw, x)));
}

static o2m_value *swish(o2m_rewriter *rw, o2m_value *x, const double *p) {
  return xk_op2(rw, "Mul", x, xk_op1(rw, "Sigmoid", p[0] == 1.0 ? x : scale(rw, x, p[0])));
}

/* The approximate attribute of Gelu: 0 none, 1 tanh, -1 anything else. */
static int gelu_tanh(o2m_rewriter *rw) {
  const o2m_attr *a = o2m_rw_attr(rw, "approximate");
  if (!a) return 0;
  if (a->type != O2M_ATTR_STRING) return -1;
  if (a->s.len == 4 && !memcmp(a->s.ptr, "none", 4)) return 0;
  return a->s.len == 4 && !memcmp(a->s.ptr, "tanh", 4) ? 1 : -1;
}

static o2m_value *gelu(o2m_rewriter *rw, o2m_value *x, const double *p) {
  (void)p;
  o2m_value *inner;
  if (gelu_tanh(rw)) {
    o2m_value *cube = xk_op2(rw, "Mul", x, xk_op2(rw, "Mul", x, x));
    o2m_value *t = xk_op2(rw, "Add", x, scale(rw, cube, 0.044715));
    inner = xk_op1(rw, "Tanh", scale(rw, t, sqrt(2.0 / M_PI)));
  } else {
    inner = xk_op1(rw, "Erf", scale(rw, x, M_SQRT1_2));
  }
  return xk_op2(rw, "Mul", scale(rw, x, 0.5), xk_op2(rw, "Add", inner, k(rw, x, 1.0)));
}

/* ---- the table -------------------------------------------------------------------- */

typedef struct activation {
  const char *op_type;
  activation_fn build;
  const char *params[MAX_PARAMS]; /* float attributes, NULL-terminated */
  double defaults[MAX_PARAMS];    /* as ONNX defines them (floats) */
} activation;

static const activation activations[] = {
    {"LeakyRelu", leaky_relu, {"alpha"}, {0.01f}},
    {"Elu", elu, {"alpha"}, {1.0f}},
    {"Selu", selu, {"alpha", "gamma"}, {1.67326319217681884765625f, 1.05070102214813232421875f}},
    {"Celu", celu, {"alpha"}, {1.0f}},
    {"ThresholdedRelu", thresholded_relu, {"alpha"}, {1.0f}},
    {"HardSigmoid", hard_sigmoid, {"alpha", "beta"}, {0.2f, 0.5f}},
    {"HardSwish", hard_swish, {NULL}, {1.0 / 6.0, 0.5}}, /* no attributes: fixed */
    {"Softplus", softplus, {NULL}, {0}},
    {"Softsign", softsign, {NULL}, {0}},
    {"Gelu", gelu, {NULL}, {0}},
    {"Mish", mish, {NULL}, {0}},
    {"Swish", swish, {"alpha"}, {1.0f}},
};

o2m_status o2m_decompose_activation(o2m_rewriter *rw) {
  const activation *a = NULL;
  for (size_t i = 0; !a && i < sizeof(activations) / sizeof(activations[0]); i++)
    if (strcmp(activations[i].op_type, rw->node->op_type) == 0) a = &activations[i];
  if (!a) return o2m_rw_unsupported(rw, "no decomposition of this activation");
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_dtype t = xk_elem(x);
  if (!o2m_dtype_is_float(t)) return o2m_rw_unsupported(rw, "the input is not of a float type");
  if (a->build == gelu && gelu_tanh(rw) < 0) return o2m_rw_unsupported(rw, "approximate is neither none nor tanh");
  double p[MAX_PARAMS];
  for (int i = 0; i < MAX_PARAMS; i++)
    p[i] = a->params[i] ? o2m_rw_attr_f(rw, a->params[i], (float)a->defaults[i]) : a->defaults[i];
  return xk_bind(rw, 0, xk_cast(rw, a->build(rw, xk_cast(rw, x, o2m_math_dtype(t)), p), t));
}

/* ---- Shrink ----------------------------------------------------------------------- */

static int is_unsigned(o2m_dtype t) {
  return t == O2M_DT_UINT8 || t == O2M_DT_UINT16 || t == O2M_DT_UINT32 || t == O2M_DT_UINT64;
}

/* On integers x < -lambd is x < ceil(-lambd) and x > lambd is x >
 * floor(lambd), so the comparisons stay in the input's dtype; the low
 * branch is left out where an unsigned x cannot reach it. */
o2m_status o2m_decompose_shrink(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_dtype t = xk_elem(x);
  double lambd = o2m_rw_attr_f(rw, "lambd", 0.5f), bias = o2m_rw_attr_f(rw, "bias", 0.0f);
  int is_float = o2m_dtype_is_float(t);
  if (!t || t == O2M_DT_BOOL || t == O2M_DT_STRING) return o2m_rw_unsupported(rw, "the input is not numeric");
  if (!is_float && bias != floor(bias)) return o2m_rw_unsupported(rw, "a fractional bias on integers");
  double lo = is_float ? -lambd : ceil(-lambd), hi = is_float ? lambd : floor(lambd);
  x = xk_cast(rw, x, o2m_math_dtype(t));
  o2m_value *y = above(rw, x, hi, xk_op2(rw, "Sub", x, k(rw, x, bias)), k(rw, x, 0.0));
  if (!is_unsigned(t) || lo > 0)
    y = xk_where(rw, xk_op2(rw, "Less", x, k(rw, x, lo)), xk_op2(rw, "Add", x, k(rw, x, bias)), y);
  return xk_bind(rw, 0, xk_cast(rw, y, t));
}
