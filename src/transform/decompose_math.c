/* decompose_math.c - the float math ops that some targets lack, written in
 * core ops every backend has (Add Sub Mul Div Exp Log Sqrt Abs Sign Floor
 * Ceil Sin Cos Where Equal Greater Less And Or Xor Cast), in the input's
 * dtype (float16 and bfloat16 computed in float: o2m_math_dtype), with
 * care for accuracy where the textbook formula cancels:
 *   Tan    sin(x) / cos(x)
 *   Sinh   (exp(x) - exp(-x)) / 2; its Taylor series below |x| = 1/2
 *   Cosh   (exp(x) + exp(-x)) / 2
 *   Asinh  sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log(2|x|) where
 *          1 / x^2 is below the precision
 *   Acosh  log1p((x - 1) + sqrt((x - 1)(x + 1))); log(2x) as above
 *   Atanh  (log1p(x) - log1p(-x)) / 2
 *   Atan   sign(x) atan(|x|), |x| first reduced by the identities
 *          atan(a) = pi/2 - atan(1/a) (a > tan(3pi/8)) and pi/4 +
 *          atan((a - 1)/(a + 1)) (a > tan(pi/8)), then t + t z P(z),
 *          z = t^2, with Cephes' degree-4 minimax P for float
 *          (double inputs get float accuracy)
 *   Asin   atan(x / sqrt((1 - x)(1 + x)))   (+-pi/2 at +-1, NaN beyond)
 *   Acos   2 atan(sqrt((1 - x) / (1 + x)))  (no cancellation near 1)
 *          (measured against NumPy, tests/lit/run/inverse_trig.test: Atan
 *          within 2 ulp of float32, Asin 4, Acos 3)
 *   Round  half to even: floor(x), plus one when the fraction is above 1/2
 *          or is 1/2 and floor(x) is odd
 *   Erf    x P(x^2) / Q(x^2) on x clamped to [-4, 4], the rational
 *          approximation XLA and Eigen use for float (measured against
 *          math.erf: at most 4.2e-7 off over [-6, 6]; double inputs get
 *          the same float accuracy)
 * with log1p(u) = log(1 + u) u / ((1 + u) - 1) (exact to rounding;
 * Goldberg), and
 *   Mod    integers: a - trunc(a / b) b with the remainder moved to the
 *          divisor's sign (fmod = 0) and 0 where b is 0, as numpy; floats:
 *          C's fmod (exact products: Dekker), NaN made 0 when
 *          fmod = 0 as ONNX's reference does.
 * BitShift is not decomposed: on unsigned integers it needs unsigned
 * division or shifts, which the core op set of these targets lacks.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"

/* Used by decompose_activations.c too. */
int o2m_significand_bits(o2m_dtype t);
o2m_dtype o2m_math_dtype(o2m_dtype t);

/* The significand's bits (the implicit one included) of a float dtype;
 * 0 for the others. */
int o2m_significand_bits(o2m_dtype t) {
  switch (t) {
  case O2M_DT_BFLOAT16: return 8;
  case O2M_DT_FLOAT16: return 11;
  case O2M_DT_FLOAT: return 24;
  case O2M_DT_DOUBLE: return 53;
  default: return 0;
  }
}

/* The dtype math on t is computed in: float for float16 and bfloat16, so
 * that the result is rounded to them once (one ulp of bfloat16 is 0.4%,
 * as ONNX's reference, which computes in float, would not differ). */
o2m_dtype o2m_math_dtype(o2m_dtype t) {
  return t == O2M_DT_FLOAT16 || t == O2M_DT_BFLOAT16 ? O2M_DT_FLOAT : t;
}

/* ---- small builders ---------------------------------------------------------- */

static o2m_value *k(o2m_rewriter *rw, o2m_value *like, double v) { return xk_scalar_like(rw, like, v); }
static o2m_value *add_k(o2m_rewriter *rw, o2m_value *x, double v) { return xk_op2(rw, "Add", x, k(rw, x, v)); }
static o2m_value *mul_k(o2m_rewriter *rw, o2m_value *x, double v) { return xk_op2(rw, "Mul", x, k(rw, x, v)); }
static o2m_value *cmp_k(o2m_rewriter *rw, const char *op, o2m_value *x, double v) {
  return xk_op2(rw, op, x, k(rw, x, v));
}

/* c[0] u^(n-1) + ... + c[n-1], by Horner's rule. */
static o2m_value *horner(o2m_rewriter *rw, o2m_value *u, const double *c, int n) {
  o2m_value *p = k(rw, u, c[0]);
  for (int i = 1; i < n; i++) p = add_k(rw, xk_op2(rw, "Mul", p, u), c[i]);
  return p;
}

/* log(1 + u), accurate for small u: the rounding of 1 + u is divided out. */
static o2m_value *log1p_of(o2m_rewriter *rw, o2m_value *u) {
  o2m_value *w = add_k(rw, u, 1.0);
  o2m_value *y = xk_op2(rw, "Mul", xk_op1(rw, "Log", w), xk_op2(rw, "Div", u, add_k(rw, w, -1.0)));
  return xk_where(rw, cmp_k(rw, "Equal", w, 1.0), u, y);
}

/* |x| > 2^(p/2) (p significand bits): there 1 / x^2 is below the
 * precision and asinh(|x|) and acosh(x) are log(2|x|); NULL cond (and
 * nothing built) for dtypes without a known precision. */
static o2m_value *huge_branch(o2m_rewriter *rw, o2m_value *ax, o2m_value *small) {
  int p = ax ? o2m_significand_bits(xk_elem(ax)) : 0;
  if (!p) return small;
  o2m_value *big = add_k(rw, xk_op1(rw, "Log", ax), M_LN2);
  return xk_where(rw, cmp_k(rw, "Greater", ax, ldexp(1.0, p / 2)), big, small);
}

/* ---- the unary ops -------------------------------------------------------------- */

typedef o2m_value *(*unary_fn)(o2m_rewriter *rw, o2m_value *x);

static o2m_value *tan_of(o2m_rewriter *rw, o2m_value *x) {
  return xk_op2(rw, "Div", xk_op1(rw, "Sin", x), xk_op1(rw, "Cos", x));
}

/* exp(x) + sign exp(-x), halved */
static o2m_value *exp_pair(o2m_rewriter *rw, o2m_value *x, const char *op) {
  o2m_value *e = xk_op2(rw, op, xk_op1(rw, "Exp", x), xk_op1(rw, "Exp", xk_op1(rw, "Neg", x)));
  return mul_k(rw, e, 0.5);
}

/* x (1 + x^2/6 (1 + x^2/20 (1 + x^2/42))): below 1/2 the first omitted
 * term is under 2^-24 of the sum, where exp(x) - exp(-x) cancels. */
static o2m_value *sinh_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *x2 = xk_op2(rw, "Mul", x, x);
  o2m_value *s = add_k(rw, mul_k(rw, x2, 1.0 / 42.0), 1.0);
  s = add_k(rw, xk_op2(rw, "Mul", mul_k(rw, x2, 1.0 / 20.0), s), 1.0);
  s = add_k(rw, xk_op2(rw, "Mul", mul_k(rw, x2, 1.0 / 6.0), s), 1.0);
  o2m_value *small = cmp_k(rw, "Less", xk_op1(rw, "Abs", x), 0.5);
  return xk_where(rw, small, xk_op2(rw, "Mul", x, s), exp_pair(rw, x, "Sub"));
}

static o2m_value *cosh_of(o2m_rewriter *rw, o2m_value *x) { return exp_pair(rw, x, "Add"); }

static o2m_value *asinh_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *ax = xk_op1(rw, "Abs", x), *x2 = xk_op2(rw, "Mul", x, x);
  o2m_value *root = xk_op1(rw, "Sqrt", add_k(rw, x2, 1.0));
  o2m_value *u = xk_op2(rw, "Add", ax, xk_op2(rw, "Div", x2, add_k(rw, root, 1.0)));
  return xk_op2(rw, "Mul", xk_op1(rw, "Sign", x), huge_branch(rw, ax, log1p_of(rw, u)));
}

static o2m_value *acosh_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *below = add_k(rw, x, -1.0);
  o2m_value *root = xk_op1(rw, "Sqrt", xk_op2(rw, "Mul", below, add_k(rw, x, 1.0)));
  return huge_branch(rw, x, log1p_of(rw, xk_op2(rw, "Add", below, root)));
}

static o2m_value *atanh_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *d = xk_op2(rw, "Sub", log1p_of(rw, x), log1p_of(rw, xk_op1(rw, "Neg", x)));
  return mul_k(rw, d, 0.5);
}

/* Cephes' atanf polynomial, z^3 down to z^0. */
static const double atan_p[] = {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1};

/* atan of a >= 0 (NaN stays NaN: no comparison holds, t = a) */
static o2m_value *atan_nonnegative(o2m_rewriter *rw, o2m_value *a) {
  o2m_value *far = cmp_k(rw, "Greater", a, 2.414213562373095); /* tan(3pi/8) */
  o2m_value *mid = cmp_k(rw, "Greater", a, 0.4142135623730950); /* tan(pi/8) */
  o2m_value *t_mid = xk_op2(rw, "Div", add_k(rw, a, -1.0), add_k(rw, a, 1.0));
  o2m_value *t_far = xk_op1(rw, "Neg", xk_op1(rw, "Reciprocal", a));
  o2m_value *t = xk_where(rw, far, t_far, xk_where(rw, mid, t_mid, a));
  o2m_value *base = xk_where(rw, far, k(rw, a, M_PI_2), xk_where(rw, mid, k(rw, a, M_PI_4), k(rw, a, 0.0)));
  o2m_value *z = xk_op2(rw, "Mul", t, t);
  o2m_value *poly = xk_op2(rw, "Mul", xk_op2(rw, "Mul", horner(rw, z, atan_p, 4), z), t);
  return xk_op2(rw, "Add", base, xk_op2(rw, "Add", poly, t));
}

static o2m_value *atan_of(o2m_rewriter *rw, o2m_value *x) {
  return xk_op2(rw, "Mul", xk_op1(rw, "Sign", x), atan_nonnegative(rw, xk_op1(rw, "Abs", x)));
}

static o2m_value *asin_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *c = xk_op1(rw, "Sqrt", xk_op2(rw, "Mul", add_k(rw, xk_op1(rw, "Neg", x), 1.0), add_k(rw, x, 1.0)));
  return atan_of(rw, xk_op2(rw, "Div", x, c));
}

static o2m_value *acos_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *r = xk_op2(rw, "Div", add_k(rw, xk_op1(rw, "Neg", x), 1.0), add_k(rw, x, 1.0));
  return mul_k(rw, atan_nonnegative(rw, xk_op1(rw, "Sqrt", r)), 2.0);
}

/* NaN and infinities fall through: their fraction is NaN, no comparison
 * holds and floor(x) is kept. */
static o2m_value *round_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *f = xk_op1(rw, "Floor", x), *frac = xk_op2(rw, "Sub", x, f);
  o2m_value *half_of_f = xk_op1(rw, "Floor", mul_k(rw, f, 0.5));
  o2m_value *odd = cmp_k(rw, "Equal", xk_op2(rw, "Sub", f, mul_k(rw, half_of_f, 2.0)), 1.0);
  o2m_value *tie_up = xk_op2(rw, "And", cmp_k(rw, "Equal", frac, 0.5), odd);
  o2m_value *up = xk_op2(rw, "Or", cmp_k(rw, "Greater", frac, 0.5), tie_up);
  return xk_where(rw, up, add_k(rw, f, 1.0), f);
}

/* The coefficients of P (x^13 down to x^1) and Q (x^8 down to x^0). */
static const double erf_p[] = {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                               -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02};
static const double erf_q[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                               -7.37332916720468e-03, -1.42647390514189e-02};

static o2m_value *erf_of(o2m_rewriter *rw, o2m_value *x) {
  o2m_value *c = xk_op2(rw, "Min", xk_op2(rw, "Max", x, k(rw, x, -4.0)), k(rw, x, 4.0));
  o2m_value *c2 = xk_op2(rw, "Mul", c, c);
  o2m_value *p = xk_op2(rw, "Mul", horner(rw, c2, erf_p, 7), c);
  return xk_op2(rw, "Div", p, horner(rw, c2, erf_q, 5));
}

static const struct {
  const char *op_type;
  unary_fn build;
} unary_ops[] = {
    {"Erf", erf_of},
    {"Tan", tan_of},     {"Sinh", sinh_of},   {"Cosh", cosh_of}, {"Asinh", asinh_of},
    {"Acosh", acosh_of}, {"Atanh", atanh_of}, {"Round", round_of},
    {"Atan", atan_of},   {"Asin", asin_of},   {"Acos", acos_of},
};

o2m_status o2m_decompose_unary_math(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  o2m_dtype t = xk_elem(x);
  if (!o2m_dtype_is_float(t)) return o2m_rw_unsupported(rw, "the input is not of a float type");
  for (size_t i = 0; i < sizeof(unary_ops) / sizeof(unary_ops[0]); i++)
    if (strcmp(unary_ops[i].op_type, rw->node->op_type) == 0)
      return xk_bind(rw, 0, xk_cast(rw, unary_ops[i].build(rw, xk_cast(rw, x, o2m_math_dtype(t))), t));
  return o2m_rw_unsupported(rw, "no decomposition of this op");
}

/* ---- Mod ----------------------------------------------------------------------------- */

static int is_unsigned(o2m_dtype t) {
  return t == O2M_DT_UINT8 || t == O2M_DT_UINT16 || t == O2M_DT_UINT32 || t == O2M_DT_UINT64;
}

/* Integers: a - (a / d) d with d = b, or 1 where b is 0 or -1 (the
 * remainder is then 0, and INT_MIN / -1 is never computed); Div
 * truncates, so the remainder has a's sign, moved to b's when asked. */
static o2m_value *int_mod(o2m_rewriter *rw, o2m_value *a, o2m_value *b, int to_divisor_sign) {
  int is_signed = !is_unsigned(xk_elem(b));
  o2m_value *trivial = cmp_k(rw, "Equal", b, 0.0);
  if (is_signed) trivial = xk_op2(rw, "Or", trivial, cmp_k(rw, "Equal", b, -1.0));
  o2m_value *d = xk_where(rw, trivial, k(rw, b, 1.0), b);
  o2m_value *r = xk_op2(rw, "Sub", a, xk_op2(rw, "Mul", xk_op2(rw, "Div", a, d), d));
  if (!is_signed || !to_divisor_sign) return r;
  o2m_value *differ = xk_op2(rw, "Xor", cmp_k(rw, "Less", r, 0.0), cmp_k(rw, "Less", b, 0.0));
  o2m_value *fix = xk_op2(rw, "And", xk_op1(rw, "Not", cmp_k(rw, "Equal", r, 0.0)), differ);
  return xk_where(rw, fix, xk_op2(rw, "Add", r, b), r);
}

/* Veltkamp's split of v into hi + lo, each of at most half the
 * significand's bits, so that products of halves are exact. */
static void split(o2m_rewriter *rw, o2m_value *v, double factor, o2m_value **hi, o2m_value **lo) {
  o2m_value *c = mul_k(rw, v, factor);
  *hi = xk_op2(rw, "Sub", c, xk_op2(rw, "Sub", c, v));
  *lo = xk_op2(rw, "Sub", v, *hi);
}

/* a - t b with t = trunc(a / b), the product taken exactly in split
 * halves (Dekker; b = bh + bl); a itself where t is 0 (b may be inf). */
static o2m_value *reduce(o2m_rewriter *rw, o2m_value *a, o2m_value *bh, o2m_value *bl, o2m_value *b,
                         double factor) {
  o2m_value *q = xk_op2(rw, "Div", a, b);
  o2m_value *t = xk_where(rw, cmp_k(rw, "Less", q, 0.0), xk_op1(rw, "Ceil", q), xk_op1(rw, "Floor", q));
  o2m_value *th, *tl;
  split(rw, t, factor, &th, &tl);
  o2m_value *r = xk_op2(rw, "Sub", a, xk_op2(rw, "Mul", th, bh));
  r = xk_op2(rw, "Sub", r, xk_op2(rw, "Mul", th, bl));
  r = xk_op2(rw, "Sub", r, xk_op2(rw, "Mul", tl, bh));
  r = xk_op2(rw, "Sub", r, xk_op2(rw, "Mul", tl, bl));
  return xk_where(rw, cmp_k(rw, "Equal", t, 0.0), a, r);
}

/* C's fmod: a reduced twice (the second time removes the few b that a
 * rounded quotient leaves), then moved back into (-|b|, |b|) with a's
 * sign where a / b rounded across an integer. */
static o2m_value *float_fmod(o2m_rewriter *rw, o2m_value *a, o2m_value *b) {
  double factor = ldexp(1.0, (o2m_significand_bits(xk_elem(a)) + 1) / 2) + 1.0;
  o2m_value *bh, *bl;
  split(rw, b, factor, &bh, &bl);
  o2m_value *r = reduce(rw, reduce(rw, a, bh, bl, b, factor), bh, bl, b, factor);
  o2m_value *ab = xk_op1(rw, "Abs", b), *step = xk_op2(rw, "Mul", xk_op1(rw, "Sign", a), ab);
  r = xk_where(rw, cmp_k(rw, "Less", xk_op2(rw, "Mul", r, a), 0.0), xk_op2(rw, "Add", r, step), r);
  o2m_value *past = xk_op2(rw, "GreaterOrEqual", xk_op1(rw, "Abs", r), ab);
  return xk_where(rw, past, xk_op2(rw, "Sub", r, step), r);
}

o2m_status o2m_decompose_mod(o2m_rewriter *rw) {
  o2m_value *a = o2m_rw_in(rw, 0), *b = o2m_rw_in(rw, 1);
  o2m_dtype t = xk_elem(a);
  int fmod_mode = o2m_rw_attr_i(rw, "fmod", 0) != 0;
  if (!t || t == O2M_DT_BOOL || t == O2M_DT_STRING || xk_elem(b) != t)
    return o2m_rw_unsupported(rw, "operands not of one numeric type");
  if (!o2m_dtype_is_float(t)) return xk_bind(rw, 0, int_mod(rw, a, b, !fmod_mode));
  o2m_dtype work = o2m_math_dtype(t);
  o2m_value *r = float_fmod(rw, xk_cast(rw, a, work), xk_cast(rw, b, work));
  if (!fmod_mode) r = xk_where(rw, xk_op2(rw, "Equal", r, r), r, k(rw, r, 0.0));
  return xk_bind(rw, 0, xk_cast(rw, r, t));
}
