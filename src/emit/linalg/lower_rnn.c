/* lower_rnn.c - Linalg lowerings of the recurrent layers RNN, GRU and LSTM
 * (directions forward/reverse/bidirectional, layout 0 and 1,
 * sequence_lens, initial states, LSTM peepholes and input_forget, GRU
 * linear_before_reset, clip, and the activations of the spec with their
 * activation_alpha/beta).
 *
 * Per direction, the input projection of every step, X W^T + biases, is
 * one contraction before the loop; an scf.for over the time steps then
 * carries H (and C) and the Y being filled: each step adds H R^T to the
 * step's projection (one contraction) and applies the gates in one
 * linalg.generic over (batch, hidden). Gate blocks are read at offsets
 * g * hidden of the [.., gates * hidden] tensors. Steps at or past a
 * batch entry's sequence length keep its state and write zeros to Y (the
 * reverse direction starts at its last valid step), as ONNX's reference.
 * f16/bf16 compute in f32.
 */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_window.h"

enum { MAX_GATES = 4, MAX_ACTS = 3, MAX_CELL_OPERANDS = 13 };

typedef struct rnn_kind {
  const char *op;
  int gates;                  /* gate blocks of W, R and each half of B */
  int n_acts;                 /* activations per direction */
  const char *acts[MAX_ACTS]; /* their defaults */
} rnn_kind;

static const rnn_kind rnn_kinds[] = {
    {"RNN", 1, 1, {"Tanh"}},
    {"GRU", 3, 2, {"Sigmoid", "Tanh"}},
    {"LSTM", 4, 3, {"Sigmoid", "Tanh", "Tanh"}},
};

/* ---- activations ------------------------------------------------------------------- */

typedef struct act act;
typedef MlirValue (*act_fn)(lw_ctx *cx, const act *a, MlirValue x);

typedef struct act_def {
  const char *name;
  int has_alpha, has_beta;
  float alpha, beta; /* defaults */
  act_fn fn;         /* NULL: the scalar op of the same name, no parameters */
} act_def;

struct act {
  const act_def *def;
  float alpha, beta;
};

static const o2m_dtype f32s[3] = {O2M_DT_FLOAT, O2M_DT_FLOAT, O2M_DT_FLOAT};

static MlirValue f32c(lw_ctx *cx, double v) { return lw_const_scalar(cx, O2M_DT_FLOAT, v); }

static MlirValue op2(lw_ctx *cx, const char *op, MlirValue a, MlirValue b) {
  MlirValue ab[2] = {a, b};
  return lw_scalar_op(cx, op, f32s, ab);
}

/* cond ? a : b with cond = (x `cmp` 0 or threshold) */
static MlirValue where(lw_ctx *cx, MlirValue cond, MlirValue a, MlirValue b) {
  static const o2m_dtype dts[3] = {O2M_DT_BOOL, O2M_DT_FLOAT, O2M_DT_FLOAT};
  MlirValue args[3] = {cond, a, b};
  return lw_scalar_op(cx, "Where", dts, args);
}

static MlirValue act_affine(lw_ctx *cx, const act *a, MlirValue x) {
  return op2(cx, "Add", op2(cx, "Mul", x, f32c(cx, a->alpha)), f32c(cx, a->beta));
}

static MlirValue act_scaled_tanh(lw_ctx *cx, const act *a, MlirValue x) {
  MlirValue t = op2(cx, "Mul", x, f32c(cx, a->beta));
  return op2(cx, "Mul", lw_scalar_op(cx, "Tanh", f32s, &t), f32c(cx, a->alpha));
}

static MlirValue act_leaky_relu(lw_ctx *cx, const act *a, MlirValue x) {
  return where(cx, op2(cx, "Less", x, f32c(cx, 0)), op2(cx, "Mul", x, f32c(cx, a->alpha)), x);
}

static MlirValue act_thresholded_relu(lw_ctx *cx, const act *a, MlirValue x) {
  return where(cx, op2(cx, "Greater", x, f32c(cx, a->alpha)), x, f32c(cx, 0));
}

static MlirValue act_hard_sigmoid(lw_ctx *cx, const act *a, MlirValue x) {
  MlirValue v = act_affine(cx, a, x);
  return op2(cx, "Max", op2(cx, "Min", v, f32c(cx, 1)), f32c(cx, 0));
}

static MlirValue act_elu(lw_ctx *cx, const act *a, MlirValue x) {
  MlirValue e = lw_scalar_op(cx, "Exp", f32s, &x);
  MlirValue neg = op2(cx, "Mul", op2(cx, "Sub", e, f32c(cx, 1)), f32c(cx, a->alpha));
  return where(cx, op2(cx, "Less", x, f32c(cx, 0)), neg, x);
}

static const act_def act_defs[] = {
    {"Relu", 0, 0, 0, 0, NULL},
    {"Tanh", 0, 0, 0, 0, NULL},
    {"Sigmoid", 0, 0, 0, 0, NULL},
    {"Softsign", 0, 0, 0, 0, NULL},
    {"Softplus", 0, 0, 0, 0, NULL},
    {"Affine", 1, 1, 1.0f, 0.0f, act_affine},
    {"ScaledTanh", 1, 1, 1.0f, 1.0f, act_scaled_tanh},
    {"LeakyRelu", 1, 0, 0.01f, 0.0f, act_leaky_relu},
    {"ThresholdedRelu", 1, 0, 1.0f, 0.0f, act_thresholded_relu},
    {"HardSigmoid", 1, 1, 0.2f, 0.5f, act_hard_sigmoid},
    {"Elu", 1, 0, 1.0f, 0.0f, act_elu},
};

/* The activation `a` applied to x (f32), x first clipped to [-clip, clip]
 * when clip > 0. */
static MlirValue activate(lw_ctx *cx, const act *a, float clip, MlirValue x) {
  if (clip > 0) x = op2(cx, "Max", op2(cx, "Min", x, f32c(cx, clip)), f32c(cx, -clip));
  return a->def->fn ? a->def->fn(cx, a, x) : lw_scalar_op(cx, a->def->name, f32s, &x);
}

/* ---- the plan ------------------------------------------------------------------------- */

typedef struct rnn_plan {
  const rnn_kind *kind;
  int dirs, reverse; /* reverse: direction "reverse" (dirs 1) */
  int64_t hidden;
  o2m_dtype dtype;
  int lbr, input_forget;
  float clip;
  act acts[2][MAX_ACTS];
  lw_ix seq, batch;
  MlirValue x, w, r, b, lens, h0, c0, p; /* f32; x [seq, batch, in], states [dirs, batch, hidden] */
} rnn_plan;

/* Reads `activations` and activation_alpha/beta (each consumed in order
 * by the activations that take one). */
static o2m_status read_activations(lw_ctx *cx, rnn_plan *p) {
  const o2m_attr *names = lw_attr(cx, "activations");
  const o2m_attr *alphas = lw_attr(cx, "activation_alpha"), *betas = lw_attr(cx, "activation_beta");
  int n = p->kind->n_acts * p->dirs, ia = 0, ib = 0;
  if (names && (names->type != O2M_ATTR_STRINGS || names->count != n))
    return lw_error(cx, "activations has %d names, expected %d", names->type == O2M_ATTR_STRINGS ? names->count : -1, n);
  for (int i = 0; i < n; i++) {
    char name[32] = "";
    const char *src = p->kind->acts[i % p->kind->n_acts];
    size_t len = strlen(src);
    if (names) src = (const char *)names->strings[i].ptr, len = names->strings[i].len;
    if (len >= sizeof(name)) return lw_unsupported(cx, "activation '%.*s'", (int)len, src);
    memcpy(name, src, len);
    act *a = &p->acts[i / p->kind->n_acts][i % p->kind->n_acts];
    a->def = NULL;
    for (size_t k = 0; k < sizeof(act_defs) / sizeof(act_defs[0]); k++)
      if (strcmp(act_defs[k].name, name) == 0) a->def = &act_defs[k];
    if (!a->def) return lw_unsupported(cx, "activation '%s'", name);
    a->alpha = a->def->alpha, a->beta = a->def->beta;
    if (a->def->has_alpha && alphas && alphas->type == O2M_ATTR_FLOATS && ia < alphas->count)
      a->alpha = alphas->floats[ia++];
    if (a->def->has_beta && betas && betas->type == O2M_ATTR_FLOATS && ib < betas->count)
      a->beta = betas->floats[ib++];
  }
  return O2M_OK;
}

/* Swaps dims 0 and 1 of a rank-3 tensor (the batch-major layout). */
static MlirValue swap01(lw_ctx *cx, MlirValue v) {
  MlirType t = mlirValueGetType(v);
  int64_t sizes[3];
  lw_ix dims[3];
  for (int k = 0; k < 3; k++) {
    int from = k < 2 ? 1 - k : k;
    dims[k] = lw_ix_dim(cx, v, from);
    sizes[k] = lw_ix_is_const(dims[k]) ? dims[k].c : mlirShapedTypeGetDynamicSize();
  }
  MlirType type = mlirRankedTensorTypeGet(3, sizes, mlirShapedTypeGetElementType(t), mlirAttributeGetNull());
  MlirAttribute map = lw_affine_map(cx, 3, 3, (int[]){1, 0, 2});
  MlirValue out;
  return lw_index_generic(cx, type, dims, 1, &v, &map, lw_copy_body, NULL, &out) ? (MlirValue){NULL} : out;
}

/* Input i converted to f32 (null when absent). */
static o2m_status input_f32(lw_ctx *cx, const rnn_plan *p, int i, MlirValue *out) {
  *out = lw_in(cx, i);
  if (!lw_in_present(cx, i)) return O2M_OK;
  if (mlirValueIsNull(*out)) return lw_unsupported(cx, "input %d is not a ranked tensor", i);
  if (lw_in_type(cx, i)->elem != p->dtype) return lw_error(cx, "input %d is not of X's dtype", i);
  return lw_convert(cx, *out, p->dtype, O2M_DT_FLOAT, out);
}

static o2m_status read_plan(lw_ctx *cx, rnn_plan *p) {
  memset(p, 0, sizeof(*p));
  for (size_t k = 0; k < sizeof(rnn_kinds) / sizeof(rnn_kinds[0]); k++)
    if (strcmp(rnn_kinds[k].op, cx->node->op_type) == 0) p->kind = &rnn_kinds[k];
  if (!p->kind) return lw_unsupported(cx, "not a recurrent layer");
  p->dtype = lw_in_type(cx, 0)->elem;
  if (!lw_dtype_is_float(p->dtype)) return lw_unsupported(cx, "%s of %s", p->kind->op, o2m_dtype_name(p->dtype));
  const char *dir = lw_attr_string(cx, "direction", "forward");
  p->dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
  p->reverse = strcmp(dir, "reverse") == 0;
  if (p->dirs == 1 && !p->reverse && strcmp(dir, "forward"))
    return lw_error(cx, "unknown direction '%s'", dir);
  p->lbr = lw_attr_int(cx, "linear_before_reset", 0) != 0;
  p->input_forget = lw_attr_int(cx, "input_forget", 0) != 0;
  p->clip = lw_attr_float(cx, "clip", 0);
  int layout = lw_attr_int(cx, "layout", 0) != 0;
  o2m_status s = read_activations(cx, p);
  int is_lstm = p->kind->gates == 4;
  if (s || (s = input_f32(cx, p, 0, &p->x)) || (s = input_f32(cx, p, 1, &p->w)) ||
      (s = input_f32(cx, p, 2, &p->r)) || (s = input_f32(cx, p, 3, &p->b)) ||
      (s = input_f32(cx, p, 5, &p->h0)) || (is_lstm && (s = input_f32(cx, p, 6, &p->c0))) ||
      (is_lstm && (s = input_f32(cx, p, 7, &p->p))))
    return s;
  if (mlirValueIsNull(p->x) || mlirValueIsNull(p->w) || mlirValueIsNull(p->r))
    return lw_unsupported(cx, "X, W or R is missing");
  p->lens = lw_in(cx, 4);
  if (lw_in_present(cx, 4) && (mlirValueIsNull(p->lens) || lw_in_type(cx, 4)->elem != O2M_DT_INT32))
    return lw_error(cx, "sequence_lens is not an int32 tensor");
  MlirType rt = mlirValueGetType(p->r);
  if (mlirShapedTypeGetRank(rt) != 3 || mlirShapedTypeIsDynamicDim(rt, 2) ||
      mlirShapedTypeGetRank(mlirValueGetType(p->x)) != 3)
    return lw_unsupported(cx, "X or R not of rank 3, or a dynamic hidden size");
  p->hidden = mlirShapedTypeGetDimSize(rt, 2);
  if (layout) {
    p->x = swap01(cx, p->x);
    if (!mlirValueIsNull(p->h0)) p->h0 = swap01(cx, p->h0);
    if (!mlirValueIsNull(p->c0)) p->c0 = swap01(cx, p->c0);
  }
  p->seq = lw_ix_dim(cx, p->x, 0);
  p->batch = lw_ix_dim(cx, p->x, 1);
  return O2M_OK;
}

/* ---- building blocks ------------------------------------------------------------------ */

static MlirType f32_tensor(lw_ctx *cx, int rank, const lw_ix *dims) {
  int64_t sizes[4];
  for (int k = 0; k < rank; k++) sizes[k] = lw_ix_is_const(dims[k]) ? dims[k].c : -1;
  return lw_tensor_type_of(cx, O2M_DT_FLOAT, rank, sizes);
}

static MlirValue zeros(lw_ctx *cx, int rank, const lw_ix *dims) {
  MlirValue d[4];
  for (int k = 0; k < rank; k++) d[k] = lw_ix_is_const(dims[k]) ? (MlirValue){NULL} : dims[k].v;
  return lw_filled(cx, f32_tensor(cx, rank, dims), d, f32c(cx, 0));
}

static o2m_status mul_add_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  yields[0] = op2(cx, "Add", args[2], op2(cx, "Mul", args[0], args[1]));
  return lw_value_status(cx, yields[0]);
}

/* Rows [row0, row0 + n) of direction d of a [dirs, rows, cols] weight,
 * as [1, n, cols]. */
static MlirValue rows_of(lw_ctx *cx, MlirValue m, int d, int64_t row0, int64_t n) {
  lw_ix at[3] = {lw_ix_c(d), lw_ix_c(row0), lw_ix_c(0)};
  lw_ix size[3] = {lw_ix_c(1), lw_ix_c(n), lw_ix_dim(cx, m, 2)};
  return lw_extract_slice(cx, m, at, size, NULL);
}

/* Columns [col0, col0 + n) of a [a, cols] tensor. */
static MlirValue cols_of(lw_ctx *cx, MlirValue v, int64_t col0, int64_t n) {
  lw_ix at[2] = {lw_ix_c(0), lw_ix_c(col0)}, size[2] = {lw_ix_dim(cx, v, 0), lw_ix_c(n)};
  return lw_extract_slice(cx, v, at, size, NULL);
}

/* init [.., n] + v [.., k] . m[0]^T (m: [1, n, k]) over the leading dims
 * of v (1 or 2 of them). */
static o2m_status project(lw_ctx *cx, MlirValue v, MlirValue m, MlirValue init, MlirValue *out) {
  int lead = (int)mlirShapedTypeGetRank(mlirValueGetType(v)) - 1, n = lead + 2;
  char iters[5] = "pppr";
  if (lead == 1) memcpy(iters, "ppr", 4);
  lw_aff vm[3], mm[3] = {lw_aff_const(0), lw_aff_dim(lead), lw_aff_dim(lead + 1)}, om[3];
  for (int k = 0; k < lead; k++) vm[k] = om[k] = lw_aff_dim(k);
  vm[lead] = lw_aff_dim(lead + 1);
  om[lead] = lw_aff_dim(lead);
  MlirValue ins[2] = {v, m};
  MlirAttribute maps[3] = {lw_aff_map(cx, n, lead + 1, vm), lw_aff_map(cx, n, 3, mm), lw_aff_map(cx, n, lead + 1, om)};
  lw_generic_spec spec = {n, iters, 2, 1, ins, maps, &init, &maps[2], mul_add_body, NULL};
  return lw_generic(cx, &spec, out);
}

/* Entries [col0, col0 + n) of direction d of B ([dirs, 2 * gates *
 * hidden]), as [1, n]. */
static MlirValue rows_of_b(lw_ctx *cx, const rnn_plan *p, int d, int64_t col0, int64_t n) {
  lw_ix at[2] = {lw_ix_c(d), lw_ix_c(col0)}, size[2] = {lw_ix_c(1), lw_ix_c(n)};
  return lw_extract_slice(cx, p->b, at, size, NULL);
}

typedef struct bias_user {
  int64_t skip_from; /* gate columns >= this take no R bias (GRU linear_before_reset) */
} bias_user;

static o2m_status bias_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const bias_user *u = user;
  MlirValue both = op2(cx, "Add", args[0], args[1]);
  lw_ix j = lw_ix_v(lw_loop_index(cx, 2));
  MlirValue keep = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_LT, j, lw_ix_c(u->skip_from)));
  yields[0] = where(cx, keep, both, args[0]);
  return lw_value_status(cx, yields[0]);
}

/* [seq, batch, gates*hidden]: X W[d]^T + Wb[d] + Rb[d] (no Rb for the GRU
 * h gate with linear_before_reset: the cell adds it). */
static o2m_status input_projection(lw_ctx *cx, const rnn_plan *p, int d, MlirValue *out) {
  int64_t gh = p->kind->gates * p->hidden;
  lw_ix dims[3] = {p->seq, p->batch, lw_ix_c(gh)};
  MlirValue init;
  if (mlirValueIsNull(p->b)) {
    init = zeros(cx, 3, dims);
  } else {
    lw_aff half[2] = {lw_aff_const(0), lw_aff_dim(2)};
    MlirAttribute map = lw_aff_map(cx, 3, 2, half);
    MlirValue ins[2] = {rows_of_b(cx, p, d, 0, gh), rows_of_b(cx, p, d, gh, gh)};
    MlirAttribute maps[3] = {map, map, lw_identity_map(cx, 3)};
    MlirValue empty = lw_empty_ix(cx, f32_tensor(cx, 3, dims), dims);
    bias_user u = {p->kind->gates == 3 && p->lbr ? 2 * p->hidden : gh};
    lw_generic_spec spec = {3, "ppp", 2, 1, ins, maps, &empty, &maps[2], bias_body, &u};
    o2m_status s = lw_generic(cx, &spec, &init);
    if (s) return s;
  }
  return project(cx, p->x, rows_of(cx, p->w, d, 0, gh), init, out);
}

/* ---- the cell -------------------------------------------------------------------------- */

/* What a cell body reads: the block argument of each operand slot (-1
 * when absent) of a generic over (batch, hidden). The state H (and C) is
 * the generic's first (third) out, updated in place, so that the loop
 * yields the buffers it carries. */
enum { IN_PRE, IN_H = IN_PRE + MAX_GATES, IN_C, IN_P, IN_LEN = IN_P + 3, IN_XH, IN_HH, IN_RBH, N_SLOTS };

typedef struct cell {
  const rnn_plan *p;
  const act *acts;
  int slot[N_SLOTS];
  MlirValue step; /* the time index (index) */
  int gru_reset;  /* the GRU's first generic: yields r * H, H is an input */
} cell;

static MlirValue arg(const cell *c, const MlirValue *args, int slot) {
  return c->slot[slot] < 0 ? (MlirValue){NULL} : args[c->slot[slot]];
}

/* x + peephole * state (no peephole: x) */
static MlirValue peep(lw_ctx *cx, const cell *c, const MlirValue *args, MlirValue x, int k, MlirValue state) {
  MlirValue pk = arg(c, args, IN_P + k);
  return mlirValueIsNull(pk) ? x : op2(cx, "Add", x, op2(cx, "Mul", pk, state));
}

/* new H (and C) from the gate pre-activations */
static void cell_math(lw_ctx *cx, const cell *c, const MlirValue *args, MlirValue *h, MlirValue *cs) {
  const rnn_plan *p = c->p;
  const act *a = c->acts;
  MlirValue hp = arg(c, args, IN_H), one = f32c(cx, 1);
  switch (p->kind->gates) {
  case 1:
    *h = activate(cx, &a[0], p->clip, arg(c, args, IN_PRE));
    return;
  case 3: { /* z, r, h */
    MlirValue z = activate(cx, &a[0], p->clip, arg(c, args, IN_PRE));
    MlirValue pre = arg(c, args, IN_HH); /* lbr = 0: xw_h + (r H) Rh^T */
    if (p->lbr) { /* xw_h + r (H Rh^T + Rbh) */
      MlirValue r = activate(cx, &a[0], p->clip, arg(c, args, IN_PRE + 1));
      MlirValue hr = arg(c, args, IN_HH), rbh = arg(c, args, IN_RBH);
      if (!mlirValueIsNull(rbh)) hr = op2(cx, "Add", hr, rbh);
      pre = op2(cx, "Add", arg(c, args, IN_XH), op2(cx, "Mul", r, hr));
    }
    MlirValue hh = activate(cx, &a[1], p->clip, pre);
    *h = op2(cx, "Add", op2(cx, "Mul", op2(cx, "Sub", one, z), hh), op2(cx, "Mul", z, hp));
    return;
  }
  default: { /* LSTM: i, o, f, c; peepholes i, o, f */
    MlirValue cp = arg(c, args, IN_C);
    MlirValue i = activate(cx, &a[0], p->clip, peep(cx, c, args, arg(c, args, IN_PRE), 0, cp));
    MlirValue f = p->input_forget ? op2(cx, "Sub", one, i)
                                  : activate(cx, &a[0], p->clip, peep(cx, c, args, arg(c, args, IN_PRE + 2), 2, cp));
    MlirValue g = activate(cx, &a[1], p->clip, arg(c, args, IN_PRE + 3));
    *cs = op2(cx, "Add", op2(cx, "Mul", f, cp), op2(cx, "Mul", i, g));
    MlirValue o = activate(cx, &a[0], p->clip, peep(cx, c, args, arg(c, args, IN_PRE + 1), 1, *cs));
    *h = op2(cx, "Mul", o, activate(cx, &a[2], 0, *cs));
  }
  }
}

/* outs: H, the Y step, (C); steps past a sequence length keep the state
 * and write 0 to Y */
static o2m_status cell_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const cell *c = user;
  MlirValue hp = arg(c, args, IN_H);
  if (c->gru_reset) { /* r * H */
    MlirValue r = activate(cx, &c->acts[0], c->p->clip, arg(c, args, IN_PRE + 1));
    yields[0] = op2(cx, "Mul", r, hp);
    return lw_value_status(cx, yields[0]);
  }
  MlirValue h = (MlirValue){NULL}, cs = (MlirValue){NULL}, y;
  cell_math(cx, c, args, &h, &cs);
  if (mlirValueIsNull(h)) return lw_value_status(cx, h);
  y = h;
  MlirValue len = arg(c, args, IN_LEN);
  if (!mlirValueIsNull(len)) {
    MlirValue n = lw_scalar_to_index(cx, len, O2M_DT_INT32);
    MlirValue valid = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_LT, lw_ix_v(c->step), lw_ix_v(n)));
    h = where(cx, valid, h, hp);
    y = where(cx, valid, y, f32c(cx, 0));
    if (!mlirValueIsNull(cs)) cs = where(cx, valid, cs, arg(c, args, IN_C));
  }
  yields[0] = h, yields[1] = y;
  if (!mlirValueIsNull(cs)) yields[2] = cs;
  return lw_value_status(cx, h);
}

typedef struct operands {
  int n;
  MlirValue v[MAX_CELL_OPERANDS];
  MlirAttribute map[MAX_CELL_OPERANDS];
} operands;

static void add_in(cell *c, operands *o, int slot, MlirValue v, MlirAttribute map) {
  if (mlirValueIsNull(v)) return;
  c->slot[slot] = o->n;
  o->v[o->n] = v;
  o->map[o->n++] = map;
}

/* [1, hidden] entries of direction d of a [dirs, k * hidden] tensor at
 * column col0 (peepholes, biases). */
static MlirValue vector_of(lw_ctx *cx, const rnn_plan *p, MlirValue v, int d, int64_t col0) {
  lw_ix at[2] = {lw_ix_c(d), lw_ix_c(col0)}, size[2] = {lw_ix_c(1), lw_ix_c(p->hidden)};
  return lw_extract_slice(cx, v, at, size, NULL);
}

/* One generic over (batch, hidden): the gates of `pre` ([batch, k *
 * hidden]), the state, peepholes, lengths and the GRU's h-gate parts;
 * outs as cell_body yields (H and C in place of h and cs). */
static o2m_status cell_generic(lw_ctx *cx, cell *c, int d, MlirValue pre, MlirValue h, MlirValue cs,
                               MlirValue xh, MlirValue hh, MlirValue *results) {
  const rnn_plan *p = c->p;
  operands o = {0};
  for (int k = 0; k < N_SLOTS; k++) c->slot[k] = -1;
  MlirAttribute id = lw_identity_map(cx, 2);
  lw_aff row[2] = {lw_aff_const(0), lw_aff_dim(1)}, lead = lw_aff_dim(0);
  MlirAttribute row_map = lw_aff_map(cx, 2, 2, row);
  int64_t pre_gates = mlirShapedTypeGetDimSize(mlirValueGetType(pre), 1) / p->hidden;
  for (int g = 0; g < pre_gates; g++) add_in(c, &o, IN_PRE + g, cols_of(cx, pre, g * p->hidden, p->hidden), id);
  for (int k = 0; k < 3 && !mlirValueIsNull(p->p); k++)
    add_in(c, &o, IN_P + k, vector_of(cx, p, p->p, d, k * p->hidden), row_map);
  add_in(c, &o, IN_LEN, p->lens, lw_aff_map(cx, 2, 1, &lead));
  add_in(c, &o, IN_XH, xh, id);
  add_in(c, &o, IN_HH, hh, id);
  if (p->kind->gates == 3 && p->lbr && !mlirValueIsNull(p->b))
    add_in(c, &o, IN_RBH, vector_of(cx, p, p->b, d, 5 * p->hidden), row_map);
  lw_ix dims[2] = {p->batch, lw_ix_c(p->hidden)};
  MlirValue outs[3];
  MlirAttribute out_maps[3] = {id, id, id};
  int n_outs = 1;
  if (c->gru_reset) {
    add_in(c, &o, IN_H, h, id);
    outs[0] = lw_empty_ix(cx, f32_tensor(cx, 2, dims), dims);
  } else {
    outs[0] = h, c->slot[IN_H] = o.n;
    outs[n_outs++] = lw_empty_ix(cx, f32_tensor(cx, 2, dims), dims);
    if (!mlirValueIsNull(cs)) outs[n_outs++] = cs, c->slot[IN_C] = o.n + 2;
  }
  lw_generic_spec spec = {2, "pp", o.n, n_outs, o.v, o.map, outs, out_maps, cell_body, c};
  return lw_generic(cx, &spec, results);
}

/* ---- the time loop --------------------------------------------------------------------- */

typedef struct step_state {
  const rnn_plan *p;
  int d;
  MlirValue xw; /* [seq, batch, gates*hidden] */
} step_state;

/* [batch, n] columns [col0, col0 + n) of a [1, batch, gates*hidden] step
 * slice, with the unit dim dropped. */
static MlirValue step_columns(lw_ctx *cx, const rnn_plan *p, MlirValue step, int64_t col0, int64_t n) {
  lw_ix at[3] = {lw_ix_c(0), lw_ix_c(0), lw_ix_c(col0)}, size[3] = {lw_ix_c(1), p->batch, lw_ix_c(n)};
  MlirValue v = lw_extract_slice(cx, step, at, size, NULL);
  return lw_op1(cx, "tensor.collapse_shape", 1, &v, f32_tensor(cx, 2, &size[1]), "reassociation = [[0, 1], [2]]");
}

/* One time step: iters are H, Y, (C); yields the same. */
static o2m_status step_body(lw_ctx *cx, const step_state *st, MlirValue iv, const MlirValue *iters,
                            MlirValue *yields) {
  const rnn_plan *p = st->p;
  int64_t hd = p->hidden, gates = p->kind->gates;
  int backward = p->reverse || st->d == 1;
  lw_ix t = lw_ix_v(iv);
  if (backward) t = lw_ix_bin(cx, LW_IX_SUB, lw_ix_bin(cx, LW_IX_SUB, p->seq, lw_ix_c(1)), t);
  lw_ix at[3] = {t, lw_ix_c(0), lw_ix_c(0)}, size[3] = {lw_ix_c(1), p->batch, lw_ix_c(gates * hd)};
  MlirValue slice = lw_extract_slice(cx, st->xw, at, size, NULL);
  cell c = {.p = p, .acts = p->acts[st->d], .step = lw_ix_value(cx, t)};
  MlirValue h = iters[0], cs = gates == 4 ? iters[2] : (MlirValue){NULL};
  MlirValue pre, xh = (MlirValue){NULL}, hh = (MlirValue){NULL}, out[3];
  int64_t pre_cols = gates == 3 ? 2 * hd : gates * hd; /* the GRU's h gate goes apart */
  o2m_status s = project(cx, h, rows_of(cx, p->r, st->d, 0, pre_cols), step_columns(cx, p, slice, 0, pre_cols), &pre);
  if (!s && gates == 3) {
    xh = step_columns(cx, p, slice, 2 * hd, hd);
    MlirValue rh_rows = rows_of(cx, p->r, st->d, 2 * hd, hd);
    if (p->lbr) {
      lw_ix dims[2] = {p->batch, lw_ix_c(hd)};
      s = project(cx, h, rh_rows, zeros(cx, 2, dims), &hh);
    } else { /* xw_h + (r * H) Rh^T */
      MlirValue rh;
      c.gru_reset = 1;
      s = cell_generic(cx, &c, st->d, pre, h, cs, (MlirValue){NULL}, (MlirValue){NULL}, &rh);
      c.gru_reset = 0;
      if (!s) s = project(cx, rh, rh_rows, xh, &hh);
    }
  }
  if (s || (s = cell_generic(cx, &c, st->d, pre, h, cs, xh, hh, out))) return s;
  lw_ix y_at[4] = {t, lw_ix_c(st->d), lw_ix_c(0), lw_ix_c(0)};
  lw_ix y_size[4] = {lw_ix_c(1), lw_ix_c(1), p->batch, lw_ix_c(hd)};
  yields[0] = out[0];
  yields[1] = lw_insert_slice_at(cx, out[1], iters[1], y_at, y_size, NULL);
  if (gates == 4) yields[2] = out[2];
  return O2M_OK;
}

/* scf.for iv in [0, seq) carrying n tensors. */
static o2m_status time_loop(lw_ctx *cx, const step_state *st, int n, const MlirValue *inits, MlirValue *results) {
  lw_for_loop loop;
  MlirValue iv, iters[3], yields[3];
  o2m_status s = lw_for_begin(cx, &loop, lw_const_index(cx, 0), lw_ix_value(cx, st->p->seq), n, inits, &iv, iters);
  if (s) return s;
  s = step_body(cx, st, iv, iters, yields);
  lw_for_end(cx, &loop, s ? NULL : yields, s ? NULL : results);
  return s;
}

/* The initial state of direction d: [batch, hidden] from `init`, or 0. */
static MlirValue initial(lw_ctx *cx, const rnn_plan *p, MlirValue init, int d) {
  lw_ix dims[2] = {p->batch, lw_ix_c(p->hidden)};
  if (mlirValueIsNull(init)) return zeros(cx, 2, dims);
  lw_ix at[3] = {lw_ix_c(d), lw_ix_c(0), lw_ix_c(0)}, size[3] = {lw_ix_c(1), p->batch, lw_ix_c(p->hidden)};
  MlirValue v = lw_extract_slice(cx, init, at, size, NULL);
  return lw_op1(cx, "tensor.collapse_shape", 1, &v, f32_tensor(cx, 2, dims), "reassociation = [[0, 1], [2]]");
}

/* Output i from an f32 tensor in the sequence-major layout. */
static o2m_status set_output(lw_ctx *cx, const rnn_plan *p, int i, MlirValue v) {
  if (!lw_out_present(cx, i)) return O2M_OK;
  if (lw_attr_int(cx, "layout", 0)) {
    if (i == 0) { /* [seq, dirs, batch, h] -> [batch, seq, dirs, h] */
      lw_ix dims[4] = {p->batch, p->seq, lw_ix_c(p->dirs), lw_ix_c(p->hidden)};
      MlirAttribute map = lw_affine_map(cx, 4, 4, (int[]){1, 2, 0, 3});
      o2m_status s = lw_index_generic(cx, f32_tensor(cx, 4, dims), dims, 1, &v, &map, lw_copy_body, NULL, &v);
      if (s) return s;
    } else {
      v = swap01(cx, v);
    }
  }
  o2m_status s = lw_convert(cx, v, O2M_DT_FLOAT, p->dtype, &v);
  return s ? s : lw_set_out(cx, i, v);
}

o2m_status lw_lower_rnn(lw_ctx *cx) {
  rnn_plan p;
  o2m_status s = read_plan(cx, &p);
  if (s) return s;
  int is_lstm = p.kind->gates == 4, n_iters = is_lstm ? 3 : 2;
  lw_ix y_dims[4] = {p.seq, lw_ix_c(p.dirs), p.batch, lw_ix_c(p.hidden)};
  lw_ix state_dims[3] = {lw_ix_c(p.dirs), p.batch, lw_ix_c(p.hidden)};
  MlirValue y = lw_empty_ix(cx, f32_tensor(cx, 4, y_dims), y_dims);
  MlirValue yh = lw_empty_ix(cx, f32_tensor(cx, 3, state_dims), state_dims), yc = yh;
  for (int d = 0; d < p.dirs; d++) {
    step_state st = {&p, d, {NULL}};
    if ((s = input_projection(cx, &p, d, &st.xw))) return s;
    MlirValue inits[3] = {initial(cx, &p, p.h0, d), y, is_lstm ? initial(cx, &p, p.c0, d) : (MlirValue){NULL}};
    MlirValue res[3];
    if ((s = time_loop(cx, &st, n_iters, inits, res))) return s;
    y = res[1];
    lw_ix at[3] = {lw_ix_c(d), lw_ix_c(0), lw_ix_c(0)}, size[3] = {lw_ix_c(1), p.batch, lw_ix_c(p.hidden)};
    yh = lw_insert_slice_at(cx, res[0], yh, at, size, NULL);
    if (is_lstm) yc = lw_insert_slice_at(cx, res[2], yc, at, size, NULL);
  }
  if ((s = set_output(cx, &p, 0, y)) || (s = set_output(cx, &p, 1, yh))) return s;
  return is_lstm ? set_output(cx, &p, 2, yc) : O2M_OK;
}
