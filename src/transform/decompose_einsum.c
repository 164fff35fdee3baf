/* decompose_einsum.c - Einsum with one or two operands into ReduceSum,
 * Transpose, Reshape and MatMul.
 *
 * Labels: letters, and the dims an ellipsis stands for (aligned from the
 * right across operands, as numpy broadcasting does). Per operand, labels
 * that neither the other operand nor the output has are summed away
 * first. One operand then only needs a Transpose. Two operands become one
 * batched MatMul: labels in both operands and the output are batch dims,
 * labels in both but not the output are contracted (K), labels of one
 * operand only are its free dims (M for the first, N for the second):
 *   A -> [batch..., M..., K...] -> [batch..., prod M, prod K]
 *   B -> [batch..., K..., N...] -> [batch..., prod K, prod N]
 *   MatMul -> [batch..., prod M, prod N] -> [batch..., M..., N...]
 *   -> Transpose to the output's label order.
 * Reshapes copy the batch dims (Reshape's 0) and need the grouped dims
 * known, but one unknown product per shape (-1). Refused: more than two
 * operands, a label repeated within one term (diagonals).
 */
#include <string.h>

#include "transform/decompose_kit.h"

enum { MAX_LABELS = 64, ELLIPSIS_BASE = 52 };

typedef struct term {
  int n;
  int label[MAX_LABELS];
  int64_t dim[MAX_LABELS]; /* -1 when unknown */
} term;

static int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a' + 26; /* numpy orders 'A'..'Z' first */
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return -1;
}

/* Parses one term of the equation, [s, end), for an operand of `rank`
 * (rank < 0 for the output). The ellipsis stands for `ell` labels ending
 * at ELLIPSIS_BASE + max_ell. Returns 0 on a malformed term. */
static int parse_term(const char *s, const char *end, int rank, int max_ell, term *t,
                      int *ell) {
  int letters = 0, has_ell = 0;
  for (const char *p = s; p < end; p++) letters += letter_label(*p) >= 0;
  *ell = 0;
  t->n = 0;
  for (const char *p = s; p < end; p++) {
    if (*p == '.') {
      if (has_ell || end - p < 3 || p[1] != '.' || p[2] != '.') return 0;
      has_ell = 1;
      *ell = rank >= 0 ? rank - letters : max_ell;
      if (*ell < 0 || t->n + *ell > MAX_LABELS) return 0;
      for (int k = 0; k < *ell; k++) t->label[t->n++] = ELLIPSIS_BASE + max_ell - *ell + k;
      p += 2;
      continue;
    }
    if (letter_label(*p) < 0 || t->n == MAX_LABELS) return 0;
    t->label[t->n++] = letter_label(*p);
  }
  return rank < 0 || t->n == rank;
}

static int find(const term *t, int label) {
  for (int k = 0; k < t->n; k++)
    if (t->label[k] == label) return k;
  return -1;
}

static void fill_dims(term *t, const o2m_value *v) {
  for (int k = 0; k < t->n; k++) t->dim[k] = v->type.dims[k].size;
}

/* The implicit output: ellipsis labels, then labels seen once, sorted. */
static void implicit_output(const term *in, int n_in, int max_ell, term *out) {
  out->n = 0;
  for (int k = 0; k < max_ell; k++) out->label[out->n++] = ELLIPSIS_BASE + k;
  for (int label = 0; label < ELLIPSIS_BASE; label++) {
    int seen = 0;
    for (int i = 0; i < n_in; i++)
      for (int k = 0; k < in[i].n; k++) seen += in[i].label[k] == label;
    if (seen == 1) out->label[out->n++] = label;
  }
}

/* Sums away the labels of t that neither `other` (may be NULL) nor `out`
 * has, updating t. */
static o2m_value *sum_private(o2m_rewriter *rw, o2m_value *x, term *t, const term *other,
                              const term *out) {
  int64_t axes[MAX_LABELS];
  int n_axes = 0, kept = 0;
  for (int k = 0; k < t->n; k++) {
    int private = (!other || find(other, t->label[k]) < 0) && find(out, t->label[k]) < 0;
    if (private) {
      axes[n_axes++] = k;
      continue;
    }
    t->label[kept] = t->label[k];
    t->dim[kept++] = t->dim[k];
  }
  t->n = kept;
  return n_axes ? xk_reduce(rw, "ReduceSum", x, axes, n_axes, 0) : x;
}

/* x (labelled `from`) transposed to the label order `to`. */
static o2m_value *permute(o2m_rewriter *rw, o2m_value *x, const term *from, const term *to) {
  int64_t perm[MAX_LABELS];
  int identity = 1;
  for (int k = 0; k < to->n; k++) {
    perm[k] = find(from, to->label[k]);
    identity &= perm[k] == k;
  }
  return identity ? x : xk_transpose(rw, x, perm, to->n);
}

/* Reshape x to [0 x n_batch, groups...] where each group is the product
 * of the dims listed; at most one unknown group (-1). Skipped when every
 * group already is one dim of x. */
typedef struct group {
  int n;
  const int64_t *dims;
} group;

static o2m_value *regroup(o2m_rewriter *rw, o2m_value *x, int n_batch, const group *g,
                          int n_groups, int *refused) {
  int64_t shape[MAX_LABELS];
  int n = 0, unknown = 0, trivial = 1;
  for (int k = 0; k < n_batch; k++) shape[n++] = 0;
  for (int j = 0; j < n_groups; j++) {
    int64_t size = 1;
    trivial &= g[j].n == 1;
    for (int k = 0; k < g[j].n && size >= 0; k++) size = g[j].dims[k] < 0 ? -1 : size * g[j].dims[k];
    unknown += size < 0;
    shape[n++] = size;
  }
  if (trivial) return x;
  if (unknown > 1) {
    *refused = 1;
    return NULL;
  }
  return xk_reshape(rw, x, shape, n);
}

/* The labels of t that satisfy in_other (present in `other` or not) and
 * in_out, in t's order, appended to dst (labels and dims). */
static void select_labels(const term *t, const term *other, int in_other, const term *out,
                          int in_out, term *dst) {
  for (int k = 0; k < t->n; k++)
    if ((find(other, t->label[k]) >= 0) == in_other && (find(out, t->label[k]) >= 0) == in_out) {
      dst->label[dst->n] = t->label[k];
      dst->dim[dst->n++] = t->dim[k];
    }
}

static o2m_status contract_two(o2m_rewriter *rw, o2m_value *a, term *ta, o2m_value *b,
                               term *tb, const term *out) {
  term batch = {0}, m = {0}, kk = {0}, nn = {0}, kb = {0};
  select_labels(ta, tb, 1, out, 1, &batch);
  select_labels(ta, tb, 0, out, 1, &m);
  select_labels(ta, tb, 1, out, 0, &kk);
  select_labels(tb, ta, 0, out, 1, &nn);
  for (int k = 0; k < kk.n; k++) { /* B's sizes of the contracted labels, in kk's order */
    kb.label[k] = kk.label[k];
    kb.dim[k] = tb->dim[find(tb, kk.label[k])];
    if (kk.dim[k] < 0) kk.dim[k] = kb.dim[k];
  }
  kb.n = kk.n;
  term order_a = batch, order_b = batch, result = batch;
  for (int k = 0; k < m.n; k++) order_a.label[order_a.n++] = m.label[k];
  for (int k = 0; k < kk.n; k++) order_a.label[order_a.n++] = kk.label[k];
  for (int k = 0; k < kb.n; k++) order_b.label[order_b.n++] = kb.label[k];
  for (int k = 0; k < nn.n; k++) order_b.label[order_b.n++] = nn.label[k];
  for (int k = 0; k < m.n; k++) result.label[result.n++] = m.label[k];
  for (int k = 0; k < nn.n; k++) result.label[result.n++] = nn.label[k];

  int refused = 0;
  group ga[2] = {{m.n, m.dim}, {kk.n, kk.dim}}, gb[2] = {{kk.n, kk.dim}, {nn.n, nn.dim}};
  o2m_value *a2 = regroup(rw, permute(rw, a, ta, &order_a), batch.n, ga, 2, &refused);
  o2m_value *b2 = refused ? NULL : regroup(rw, permute(rw, b, tb, &order_b), batch.n, gb, 2, &refused);
  o2m_value *c = xk_op2(rw, "MatMul", a2, b2);
  /* back to one dim per label: [batch..., M..., N...] */
  group gc[MAX_LABELS];
  int n_gc = 0;
  for (int k = 0; k < m.n; k++) gc[n_gc++] = (group){1, &m.dim[k]};
  for (int k = 0; k < nn.n; k++) gc[n_gc++] = (group){1, &nn.dim[k]};
  int need = !(m.n == 1 && nn.n == 1);
  o2m_value *y = c;
  if (!refused && need) {
    int64_t shape[MAX_LABELS];
    int n = 0, unknown = 0;
    for (int k = 0; k < batch.n; k++) shape[n++] = 0;
    for (int j = 0; j < n_gc; j++) unknown += (shape[n++] = gc[j].dims[0]) < 0;
    refused = unknown > 1;
    y = refused ? NULL : xk_reshape(rw, c, shape, n);
  }
  if (refused) return o2m_rw_unsupported(rw, "more than one unknown dim in a group of labels");
  return xk_bind(rw, 0, permute(rw, y, &result, out));
}

o2m_status o2m_decompose_einsum(o2m_rewriter *rw) {
  const o2m_attr *eq = o2m_rw_attr(rw, "equation");
  int n_in = rw->node->n_inputs;
  if (!eq || eq->type != O2M_ATTR_STRING) return o2m_rw_error(rw, "the equation is missing");
  if (n_in < 1 || n_in > 2) return o2m_rw_unsupported(rw, "%d operands (1 or 2 are decomposed)", n_in);
  char text[256];
  size_t len = 0;
  if (eq->s.len >= sizeof(text)) return o2m_rw_unsupported(rw, "an equation of %zu characters", eq->s.len);
  for (size_t i = 0; i < eq->s.len && len + 1 < sizeof(text); i++)
    if (eq->s.ptr[i] != ' ') text[len++] = (char)eq->s.ptr[i];
  text[len] = 0;
  const char *arrow = strstr(text, "->"), *lhs_end = arrow ? arrow : text + len;
  term t[2], out;
  int ell[2] = {0, 0}, max_ell = 0, out_ell;
  o2m_value *x[2];
  const char *s = text;
  for (int i = 0; i < n_in; i++) {
    x[i] = o2m_rw_in(rw, i);
    const char *comma = i + 1 < n_in ? memchr(s, ',', (size_t)(lhs_end - s)) : lhs_end;
    if (!comma || xk_rank(x[i]) < 0) return o2m_rw_unsupported(rw, "operand %d: unknown rank or bad equation", i);
    term probe;
    if (!parse_term(s, comma, xk_rank(x[i]), 0, &probe, &ell[i]))
      return o2m_rw_error(rw, "term %d of the equation does not fit its operand", i);
    if (ell[i] > max_ell) max_ell = ell[i];
    s = comma + 1;
  }
  s = text;
  for (int i = 0; i < n_in; i++) {
    const char *comma = i + 1 < n_in ? memchr(s, ',', (size_t)(lhs_end - s)) : lhs_end;
    parse_term(s, comma, xk_rank(x[i]), max_ell, &t[i], &ell[i]);
    fill_dims(&t[i], x[i]);
    for (int k = 0; k < t[i].n; k++)
      if (find(&t[i], t[i].label[k]) != k) return o2m_rw_unsupported(rw, "a label repeats within a term");
    s = comma + 1;
  }
  if (arrow) {
    if (!parse_term(arrow + 2, text + len, -1, max_ell, &out, &out_ell))
      return o2m_rw_error(rw, "the output term is malformed");
  } else {
    implicit_output(t, n_in, max_ell, &out);
  }
  for (int k = 0; k < out.n; k++)
    if (find(&t[0], out.label[k]) < 0 && (n_in == 1 || find(&t[1], out.label[k]) < 0))
      return o2m_rw_error(rw, "an output label is in no operand");
  for (int i = 0; i < n_in; i++) x[i] = sum_private(rw, x[i], &t[i], n_in == 2 ? &t[1 - i] : NULL, &out);
  if (!x[0] || (n_in == 2 && !x[1])) return xk_failed(rw);
  if (n_in == 1) return xk_bind(rw, 0, permute(rw, x[0], &t[0], &out));
  return contract_two(rw, x[0], &t[0], x[1], &t[1], &out);
}
