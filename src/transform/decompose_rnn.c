/* decompose_rnn.c - the recurrent layers RNN, GRU and LSTM unrolled over
 * their (known) sequence length into MatMul, Slice, elementwise ops and
 * Concat, for targets that do not lower them (TOSA has no loop that
 * writes a growing result). Directions forward/reverse/bidirectional,
 * layout 0 and 1, initial states, LSTM peepholes and input_forget, GRU
 * linear_before_reset, clip, and the activations of the spec with their
 * activation_alpha/beta.
 *
 * Per direction: X W^T + Wb + Rb for every step is one MatMul before the
 * steps; each step adds H R^T (one MatMul) and applies the gates (gate
 * blocks are Slices of width hidden along the last axis, in ONNX's order:
 * RNN -, GRU z r h, LSTM i o f c). Y is the Concat of the steps' H in
 * time order (the reverse direction walks the steps backwards).
 * sequence_lens is accepted only when it is known to hold the full length
 * everywhere (shorter sequences would need per-batch masking).
 */
#include <string.h>

#include "transform/decompose_kit.h"

enum { MAX_STEPS = 512, MAX_ACTS = 6 };

typedef struct rnn_kind {
  const char *op;
  int gates, n_acts;
  const char *acts[3]; /* default activations of one direction */
} rnn_kind;

static const rnn_kind kinds[] = {
    {"RNN", 1, 1, {"Tanh"}},
    {"GRU", 3, 2, {"Sigmoid", "Tanh"}},
    {"LSTM", 4, 3, {"Sigmoid", "Tanh", "Tanh"}},
};

/* ---- activations ---------------------------------------------------------------- */

typedef struct act {
  char name[24];
  float alpha, beta;
} act;

/* The activation functions of the spec: which take alpha/beta, their
 * defaults, and the ONNX op computing them (NULL: composed below). */
static const struct {
  const char *name;
  int has_alpha, has_beta;
  float alpha, beta;
  const char *op;
} act_defs[] = {
    {"Relu", 0, 0, 0, 0, "Relu"},
    {"Tanh", 0, 0, 0, 0, "Tanh"},
    {"Sigmoid", 0, 0, 0, 0, "Sigmoid"},
    {"Softsign", 0, 0, 0, 0, "Softsign"},
    {"Softplus", 0, 0, 0, 0, "Softplus"},
    {"Affine", 1, 1, 1.0f, 0.0f, NULL},
    {"ScaledTanh", 1, 1, 1.0f, 1.0f, NULL},
    {"LeakyRelu", 1, 0, 0.01f, 0.0f, "LeakyRelu"},
    {"ThresholdedRelu", 1, 0, 1.0f, 0.0f, "ThresholdedRelu"},
    {"HardSigmoid", 1, 1, 0.2f, 0.5f, "HardSigmoid"},
    {"Elu", 1, 0, 1.0f, 0.0f, "Elu"},
};

static int act_def(const char *name) {
  for (size_t i = 0; i < sizeof(act_defs) / sizeof(act_defs[0]); i++)
    if (strcmp(act_defs[i].name, name) == 0) return (int)i;
  return -1;
}

/* a(x), x first clipped to [-clip, clip] when clip > 0. */
static o2m_value *activate(o2m_rewriter *rw, const act *a, float clip, o2m_value *x) {
  if (clip > 0) x = xk_op2(rw, "Max", xk_op2(rw, "Min", x, xk_scalar_like(rw, x, clip)), xk_scalar_like(rw, x, -clip));
  int d = act_def(a->name);
  if (!x || d < 0) return NULL;
  if (strcmp(a->name, "Affine") == 0)
    return xk_op2(rw, "Add", xk_op2(rw, "Mul", x, xk_scalar_like(rw, x, a->alpha)), xk_scalar_like(rw, x, a->beta));
  if (strcmp(a->name, "ScaledTanh") == 0)
    return xk_op2(rw, "Mul", xk_op1(rw, "Tanh", xk_op2(rw, "Mul", x, xk_scalar_like(rw, x, a->beta))),
                  xk_scalar_like(rw, x, a->alpha));
  o2m_attr attrs[2];
  int n = 0;
  if (act_defs[d].has_alpha) attrs[n++] = o2m_rw_attr_float("alpha", a->alpha);
  if (act_defs[d].has_beta) attrs[n++] = o2m_rw_attr_float("beta", a->beta);
  return o2m_rw_op(rw, act_defs[d].op, 1, &x, attrs, n);
}

/* ---- the plan ------------------------------------------------------------------------ */

typedef struct rnn_plan {
  const rnn_kind *kind;
  int dirs, reverse_only, layout, lbr, input_forget;
  int64_t steps, batch, hidden;
  float clip;
  act acts[MAX_ACTS];
} rnn_plan;

/* Reads `activations` and activation_alpha/beta (consumed in order by
 * the activations that take them). */
static o2m_status read_activations(o2m_rewriter *rw, rnn_plan *p) {
  const o2m_attr *names = o2m_rw_attr(rw, "activations");
  const o2m_attr *alphas = o2m_rw_attr(rw, "activation_alpha"), *betas = o2m_rw_attr(rw, "activation_beta");
  int n = p->kind->n_acts * p->dirs, ia = 0, ib = 0;
  if (names && (names->type != O2M_ATTR_STRINGS || names->count != n))
    return o2m_rw_error(rw, "activations has the wrong count (expected %d)", n);
  for (int k = 0; k < n; k++) {
    act *a = &p->acts[k];
    if (names) {
      size_t len = names->strings[k].len;
      if (len >= sizeof(a->name)) return o2m_rw_unsupported(rw, "activation '%.*s'", (int)len, names->strings[k].ptr);
      memcpy(a->name, names->strings[k].ptr, len);
      a->name[len] = 0;
    } else {
      strcpy(a->name, p->kind->acts[k % p->kind->n_acts]);
    }
    int d = act_def(a->name);
    if (d < 0) return o2m_rw_unsupported(rw, "activation '%s'", a->name);
    a->alpha = act_defs[d].alpha;
    a->beta = act_defs[d].beta;
    if (act_defs[d].has_alpha && alphas && alphas->type == O2M_ATTR_FLOATS && ia < alphas->count)
      a->alpha = alphas->floats[ia++];
    if (act_defs[d].has_beta && betas && betas->type == O2M_ATTR_FLOATS && ib < betas->count)
      a->beta = betas->floats[ib++];
  }
  return O2M_OK;
}

/* Whether sequence_lens (input 4) is absent or known to be the full
 * length everywhere. */
static int full_lengths(o2m_rewriter *rw, int64_t steps) {
  o2m_value *lens = o2m_rw_in(rw, 4);
  if (!lens) return 1;
  const o2m_tensor *t = lens->known ? lens->known : lens->init;
  if (!t || !t->data) return 0;
  for (int64_t i = 0; i < t->count; i++)
    if ((int64_t)o2m_tensor_get_float(t, i) != steps) return 0;
  return 1;
}

static o2m_status make_plan(o2m_rewriter *rw, rnn_plan *p) {
  memset(p, 0, sizeof(*p));
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    if (strcmp(kinds[i].op, rw->node->op_type) == 0) p->kind = &kinds[i];
  const o2m_attr *dir = o2m_rw_attr(rw, "direction");
  char direction[16] = "forward";
  if (dir && dir->type == O2M_ATTR_STRING && dir->s.len < sizeof(direction)) {
    memcpy(direction, dir->s.ptr, dir->s.len);
    direction[dir->s.len] = 0;
  }
  p->dirs = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
  p->reverse_only = strcmp(direction, "reverse") == 0;
  if (p->dirs == 1 && !p->reverse_only && strcmp(direction, "forward") != 0)
    return o2m_rw_error(rw, "direction '%s'", direction);
  p->layout = o2m_rw_attr_i(rw, "layout", 0) != 0;
  p->lbr = o2m_rw_attr_i(rw, "linear_before_reset", 0) != 0;
  p->input_forget = o2m_rw_attr_i(rw, "input_forget", 0) != 0;
  p->clip = o2m_rw_attr_f(rw, "clip", 0);
  int64_t x[3], w[3];
  if (!XK_STATIC_DIMS(o2m_rw_in(rw, 0), x) || xk_rank(o2m_rw_in(rw, 0)) != 3 ||
      !XK_STATIC_DIMS(o2m_rw_in(rw, 2), w) || xk_rank(o2m_rw_in(rw, 2)) != 3)
    return o2m_rw_unsupported(rw, "X and R need static shapes to unroll the steps");
  p->steps = p->layout ? x[1] : x[0];
  p->batch = p->layout ? x[0] : x[1];
  p->hidden = w[2];
  if (p->steps < 1 || p->steps > MAX_STEPS)
    return o2m_rw_unsupported(rw, "%lld steps (unrolled up to %d)", (long long)p->steps, MAX_STEPS);
  if (!full_lengths(rw, p->steps))
    return o2m_rw_unsupported(rw, "sequence_lens shorter than the sequence (or not known)");
  return read_activations(rw, p);
}

/* ---- building blocks ------------------------------------------------------------------- */

/* x[d] along axis 0, the axis dropped. */
static o2m_value *take(o2m_rewriter *rw, o2m_value *x, int64_t d) {
  int64_t zero = 0;
  return xk_squeeze(rw, xk_slice(rw, x, 0, d, d + 1), &zero, 1);
}

/* Gate block g (width hidden) of x along its last axis. */
static o2m_value *gate(o2m_rewriter *rw, const rnn_plan *p, o2m_value *x, int g) {
  return xk_slice(rw, x, -1, g * p->hidden, (g + 1) * p->hidden);
}

static o2m_value *concat(o2m_rewriter *rw, int n, o2m_value **xs, int64_t axis) {
  if (n == 1) return xs[0];
  for (int i = 0; i < n; i++)
    if (!xs[i]) return NULL;
  o2m_attr a = o2m_rw_attr_int("axis", axis);
  return o2m_rw_op(rw, "Concat", n, xs, &a, 1);
}

/* x + peephole * state, or x when there is no peephole. */
static o2m_value *peep(o2m_rewriter *rw, o2m_value *x, o2m_value *pk, o2m_value *state) {
  return pk ? xk_op2(rw, "Add", x, xk_op2(rw, "Mul", pk, state)) : x;
}

/* The weights of one direction. */
typedef struct dir_weights {
  o2m_value *wx;  /* X W^T + Wb + Rb (+ no Rbh for GRU with lbr): [S, B, G*H] */
  o2m_value *rt;  /* R^T: [H, G*H] */
  o2m_value *rbh; /* GRU with linear_before_reset: Rb of the h gate, or NULL */
  o2m_value *p[3]; /* LSTM peepholes i, o, f, or NULL */
  o2m_value *h, *c; /* the state */
  const act *acts;
} dir_weights;

static o2m_status prepare(o2m_rewriter *rw, const rnn_plan *p, o2m_value *x, int d, dir_weights *dw) {
  int64_t t2[2] = {1, 0}, gh = p->kind->gates * p->hidden;
  memset(dw, 0, sizeof(*dw));
  o2m_value *wt = xk_transpose(rw, take(rw, o2m_rw_in(rw, 1), d), t2, 2);
  dw->rt = xk_transpose(rw, take(rw, o2m_rw_in(rw, 2), d), t2, 2);
  dw->wx = xk_op2(rw, "MatMul", x, wt);
  o2m_value *b = o2m_rw_in(rw, 3);
  if (b) {
    o2m_value *bd = take(rw, b, d);
    o2m_value *wb = xk_slice(rw, bd, 0, 0, gh), *rb = xk_slice(rw, bd, 0, gh, 2 * gh);
    if (p->kind->gates == 3 && p->lbr) { /* Rbh is added inside r * (H Rh^T + Rbh) */
      dw->rbh = xk_slice(rw, rb, 0, 2 * p->hidden, gh);
      o2m_value *zeros = xk_op2(rw, "Mul", dw->rbh, xk_scalar_like(rw, dw->rbh, 0));
      o2m_value *parts[2] = {xk_slice(rw, rb, 0, 0, 2 * p->hidden), zeros};
      rb = concat(rw, 2, parts, 0);
    }
    dw->wx = xk_op2(rw, "Add", dw->wx, xk_op2(rw, "Add", wb, rb));
  }
  o2m_value *h0 = o2m_rw_in(rw, 5), *c0 = o2m_rw_in(rw, 6);
  int64_t b2[2] = {p->batch, p->hidden};
  dw->h = h0 ? take(rw, h0, d) : NULL;
  dw->c = p->kind->gates == 4 && c0 ? take(rw, c0, d) : NULL;
  if (!dw->h || (p->kind->gates == 4 && !dw->c)) {
    /* zero states of x's dtype */
    o2m_value *zero = xk_op2(rw, "Mul", xk_slice(rw, take(rw, dw->wx, 0), -1, 0, p->hidden), xk_scalar_like(rw, x, 0));
    o2m_value *shaped = xk_reshape(rw, zero, b2, 2);
    if (!dw->h) dw->h = shaped;
    if (p->kind->gates == 4 && !dw->c) dw->c = shaped;
  }
  o2m_value *pp = p->kind->gates == 4 ? o2m_rw_in(rw, 7) : NULL;
  for (int k = 0; pp && k < 3; k++) dw->p[k] = xk_slice(rw, take(rw, pp, d), 0, k * p->hidden, (k + 1) * p->hidden);
  dw->acts = &p->acts[d * p->kind->n_acts];
  return dw->wx && dw->rt && dw->h ? O2M_OK : xk_failed(rw);
}

/* One step: the new H (and C) from the step's projection xw [B, G*H]. */
static void step(o2m_rewriter *rw, const rnn_plan *p, dir_weights *dw, o2m_value *xw) {
  const act *a = dw->acts;
  o2m_value *hr = xk_op2(rw, "MatMul", dw->h, dw->rt), *one = xk_scalar_like(rw, xw, 1);
  switch (p->kind->gates) {
  case 1:
    dw->h = activate(rw, &a[0], p->clip, xk_op2(rw, "Add", xw, hr));
    return;
  case 3: { /* z, r, h */
    o2m_value *z = activate(rw, &a[0], p->clip, xk_op2(rw, "Add", gate(rw, p, xw, 0), gate(rw, p, hr, 0)));
    o2m_value *r = activate(rw, &a[0], p->clip, xk_op2(rw, "Add", gate(rw, p, xw, 1), gate(rw, p, hr, 1)));
    o2m_value *pre;
    if (p->lbr) { /* xw_h + r (H Rh^T + Rbh) */
      o2m_value *hh = gate(rw, p, hr, 2);
      if (dw->rbh) hh = xk_op2(rw, "Add", hh, dw->rbh);
      pre = xk_op2(rw, "Add", gate(rw, p, xw, 2), xk_op2(rw, "Mul", r, hh));
    } else { /* xw_h + (r H) Rh^T */
      o2m_value *rh = xk_slice(rw, dw->rt, 1, 2 * p->hidden, 3 * p->hidden);
      pre = xk_op2(rw, "Add", gate(rw, p, xw, 2), xk_op2(rw, "MatMul", xk_op2(rw, "Mul", r, dw->h), rh));
    }
    o2m_value *hh = activate(rw, &a[1], p->clip, pre);
    dw->h = xk_op2(rw, "Add", xk_op2(rw, "Mul", xk_op2(rw, "Sub", one, z), hh), xk_op2(rw, "Mul", z, dw->h));
    return;
  }
  default: { /* LSTM: i, o, f, c; peepholes i, o, f */
    o2m_value *pre = xk_op2(rw, "Add", xw, hr), *cp = dw->c;
    o2m_value *i = activate(rw, &a[0], p->clip, peep(rw, gate(rw, p, pre, 0), dw->p[0], cp));
    o2m_value *f = p->input_forget ? xk_op2(rw, "Sub", one, i)
                                   : activate(rw, &a[0], p->clip, peep(rw, gate(rw, p, pre, 2), dw->p[2], cp));
    o2m_value *g = activate(rw, &a[1], p->clip, gate(rw, p, pre, 3));
    dw->c = xk_op2(rw, "Add", xk_op2(rw, "Mul", f, cp), xk_op2(rw, "Mul", i, g));
    o2m_value *o = activate(rw, &a[0], p->clip, peep(rw, gate(rw, p, pre, 1), dw->p[1], dw->c));
    dw->h = xk_op2(rw, "Mul", o, activate(rw, &a[2], 0, dw->c));
  }
  }
}

/* ---- the rule ------------------------------------------------------------------------------ */

o2m_status o2m_decompose_rnn(o2m_rewriter *rw) {
  rnn_plan p;
  o2m_status s = make_plan(rw, &p);
  if (s) return s;
  o2m_arena *arena = &rw->model->arena;
  o2m_value **ys = o2m_arena_array(arena, (size_t)p.steps * 2 + 2, sizeof(o2m_value *));
  o2m_value *yd[2], *hd[2], *cd[2];
  if (!ys) return o2m_rw_error(rw, "out of memory");
  int64_t t3[3] = {1, 0, 2}, zero = 0, one = 1;
  o2m_value *x = o2m_rw_in(rw, 0);
  if (p.layout) x = xk_transpose(rw, x, t3, 3);
  for (int d = 0; d < p.dirs; d++) {
    dir_weights dw;
    if ((s = prepare(rw, &p, x, d, &dw))) return s;
    int backwards = p.reverse_only || d == 1;
    for (int64_t k = 0; k < p.steps; k++) {
      int64_t t = backwards ? p.steps - 1 - k : k;
      step(rw, &p, &dw, take(rw, dw.wx, t));
      ys[t] = xk_unsqueeze(rw, dw.h, &zero, 1);
    }
    yd[d] = xk_unsqueeze(rw, concat(rw, (int)p.steps, ys, 0), &one, 1); /* [S, 1, B, H] */
    hd[d] = xk_unsqueeze(rw, dw.h, &zero, 1);
    cd[d] = dw.c ? xk_unsqueeze(rw, dw.c, &zero, 1) : NULL;
  }
  o2m_value *y = concat(rw, p.dirs, yd, 1), *yh = concat(rw, p.dirs, hd, 0);
  o2m_value *yc = p.kind->gates == 4 ? concat(rw, p.dirs, cd, 0) : NULL;
  if (p.layout) {
    int64_t t4[4] = {2, 0, 1, 3};
    y = xk_transpose(rw, y, t4, 4);
    yh = xk_transpose(rw, yh, t3, 3);
    if (yc) yc = xk_transpose(rw, yc, t3, 3);
  }
  if ((s = xk_bind(rw, 0, y)) || (s = xk_bind(rw, 1, yh))) return s;
  return p.kind->gates == 4 ? xk_bind(rw, 2, yc) : O2M_OK;
}
