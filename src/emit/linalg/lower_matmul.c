/* lower_matmul.c - Linalg lowerings of the contractions: MatMul (numpy
 * semantics: 1-D operands, broadcast batch dims) and Einsum (any
 * equation: ellipses, diagonals, any number of operands; the transform
 * layer decomposes the common forms before they get here).
 *
 * Both are one "contraction": every operand dim carries a label, the
 * output's labels are parallel loops, all other labels are reduction
 * loops, and the body multiplies the operands' elements and adds them to
 * the accumulator. A dim of static size 1 whose label is larger elsewhere
 * is broadcast (read at 0). f16/bf16 accumulate in f32 and are rounded
 * once at the end. MatMul uses linalg.matmul / linalg.batch_matmul when
 * the operands are plain 2-D / equal-batch 3-D of one dtype, except for
 * the JIT (lw_ctx.for_jit): it gets the generic, whose loops run i, k, j,
 * tagged as a BLAS call for float32 when the executor has BLAS (emit.h,
 * O2M_JIT_SGEMM).
 */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_shape.h"
#include "emit/linalg/lower_window.h"

enum { MAX_OPERANDS = 8, MAX_LABELS = 64, NO_LABEL = -1 };

typedef struct contraction {
  int n_in;
  MlirValue ins[MAX_OPERANDS];
  o2m_dtype dtype; /* of every operand and of the result */
  int rank[MAX_OPERANDS];
  int labels[MAX_OPERANDS][MAX_LABELS];
  int out_rank;
  int out_labels[MAX_LABELS];
} contraction;

/* Where a label's size comes from: a static size (not 1 unless every
 * occurrence is 1), or operand `in` dim `dim` when dynamic. */
typedef struct label_info {
  int present, loop;
  int64_t size; /* -1 when dynamic */
  int in, dim;
} label_info;

static void collect_labels(const contraction *c, label_info *info) {
  memset(info, 0, sizeof(label_info) * MAX_LABELS);
  for (int i = 0; i < c->n_in; i++)
    for (int j = 0; j < c->rank[i]; j++) {
      label_info *l = &info[c->labels[i][j]];
      int64_t s = lw_static_dim(c->ins[i], j);
      if (!l->present) *l = (label_info){1, 0, s, i, j};
      else if ((l->size == 1 && s != 1) || (l->size < 0 && s > 1)) l->size = s, l->in = i, l->dim = j;
    }
}

typedef struct contraction_body {
  int n_in;
  o2m_dtype dtype, acc;
} contraction_body;

static o2m_status contraction_body_fn(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const contraction_body *b = user;
  o2m_dtype dts[2] = {b->acc, b->acc};
  MlirValue product = (MlirValue){NULL};
  for (int i = 0; i < b->n_in; i++) {
    MlirValue v = lw_scalar_cast(cx, args[i], b->dtype, b->acc);
    if (mlirValueIsNull(v)) return lw_value_status(cx, v);
    MlirValue pair[2] = {product, v};
    product = i ? lw_scalar_op(cx, "Mul", dts, pair) : v;
  }
  MlirValue sum[2] = {args[b->n_in], product};
  yields[0] = lw_scalar_op(cx, "Add", dts, sum);
  return lw_value_status(cx, yields[0]);
}

/* One linalg.generic computing the contraction into *result (of the
 * accumulator dtype). */
static o2m_status contract(lw_ctx *cx, const contraction *c, o2m_dtype acc, MlirValue *result) {
  label_info info[MAX_LABELS];
  collect_labels(c, info);
  int n_loops = 0;
  char iters[MAX_LABELS + 1];
  int64_t out_sizes[MAX_LABELS];
  MlirValue out_dims[MAX_LABELS];
  /* Loop order: the output's dims but its last, the reductions, then the
   * output's last dim innermost, so that loops over contiguous rows of the
   * accumulator and of the right operand run innermost (i, k, j for a
   * matrix product) and vectorize. */
  int last = c->out_rank - 1;
  for (int j = 0; j < c->out_rank; j++) {
    label_info *l = &info[c->out_labels[j]];
    if (!l->present) return lw_error(cx, "output label %d is in no operand", c->out_labels[j]);
    out_sizes[j] = l->size;
    out_dims[j] = l->size < 0 ? lw_dim(cx, c->ins[l->in], l->dim) : (MlirValue){NULL};
    if (j != last) l->loop = n_loops, iters[n_loops++] = 'p';
  }
  for (int label = 0; label < MAX_LABELS; label++) {
    int is_out = 0;
    for (int j = 0; j < c->out_rank; j++) is_out |= c->out_labels[j] == label;
    if (info[label].present && !is_out) info[label].loop = n_loops, iters[n_loops++] = 'r';
  }
  if (last >= 0) info[c->out_labels[last]].loop = n_loops, iters[n_loops++] = 'p';
  iters[n_loops] = 0;
  MlirAttribute maps[MAX_OPERANDS + 1];
  for (int i = 0; i < c->n_in; i++) {
    int exprs[MAX_LABELS];
    for (int j = 0; j < c->rank[i]; j++) {
      const label_info *l = &info[c->labels[i][j]];
      exprs[j] = lw_static_dim(c->ins[i], j) == 1 && l->size != 1 ? -1 : l->loop;
    }
    maps[i] = lw_affine_map(cx, n_loops, c->rank[i], exprs);
  }
  int out_exprs[MAX_LABELS];
  for (int j = 0; j < c->out_rank; j++) out_exprs[j] = info[c->out_labels[j]].loop;
  maps[c->n_in] = lw_affine_map(cx, n_loops, c->out_rank, out_exprs);
  MlirType out_type = lw_tensor_type_of(cx, acc, c->out_rank, out_sizes);
  MlirValue init = lw_filled(cx, out_type, out_dims, lw_const_scalar(cx, acc, 0));
  contraction_body b = {c->n_in, c->dtype, acc};
  lw_generic_spec spec = {n_loops, iters, c->n_in, 1, c->ins, maps, &init, &maps[c->n_in],
                          contraction_body_fn, &b};
  return lw_generic(cx, &spec, result);
}

/* Checks the operands and lowers the contraction to output 0. */
static o2m_status lower_contraction(lw_ctx *cx, const contraction *c) {
  MlirType elem = lw_elem_type(cx, c->dtype);
  if (mlirTypeIsNull(elem) || c->dtype == O2M_DT_BOOL)
    return lw_unsupported(cx, "%s of %s is not lowered", cx->node->op_type, o2m_dtype_name(c->dtype));
  o2m_dtype acc = lw_accumulator_dtype(c->dtype);
  MlirValue r;
  o2m_status s = contract(cx, c, acc, &r);
  if (!s) s = lw_convert(cx, r, acc, c->dtype, &r);
  return s ? s : lw_set_out(cx, 0, r);
}

/* ---- MatMul ------------------------------------------------------------------ */

/* linalg.matmul for 2-D x 2-D and linalg.batch_matmul for 3-D x 3-D with
 * the same batch size; 0 when the form is not one of those. */
static int named_matmul(lw_ctx *cx, MlirValue a, MlirValue b, o2m_dtype dtype, MlirValue *result) {
  if (cx->for_jit) return 0; /* the generic's i, k, j order suits plain loops */
  MlirType ta = mlirValueGetType(a), tb = mlirValueGetType(b);
  int rank = (int)mlirShapedTypeGetRank(ta);
  if (rank != mlirShapedTypeGetRank(tb) || (rank != 2 && rank != 3)) return 0;
  if (rank == 3 && (lw_static_dim(a, 0) != lw_static_dim(b, 0) || lw_static_dim(a, 0) == 1)) return 0;
  o2m_dtype acc = lw_accumulator_dtype(dtype);
  int64_t sizes[3];
  MlirValue dims[3];
  for (int k = 0; k < rank; k++) {
    MlirValue src = k == rank - 1 ? b : a;
    sizes[k] = lw_static_dim(src, k);
    dims[k] = sizes[k] < 0 ? lw_dim(cx, src, k) : (MlirValue){NULL};
  }
  MlirType out_type = lw_tensor_type_of(cx, acc, rank, sizes);
  MlirValue init = lw_filled(cx, out_type, dims, lw_const_scalar(cx, acc, 0));
  MlirValue ins[2] = {a, b};
  *result = lw_named(cx, rank == 2 ? "linalg.matmul" : "linalg.batch_matmul", 2, ins, init, NULL);
  return !mlirValueIsNull(*result);
}

/* ---- float32 products as BLAS calls (emit.h, O2M_JIT_SGEMM) ---------------------- */

MlirValue lw_blas_product(lw_ctx *cx, MlirValue a, MlirValue b, int b_transposed, MlirValue init) {
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(a));
  int64_t sizes[3];
  MlirValue dims[3]; /* the dynamic ones' */
  for (int k = 0; k < rank; k++) {
    MlirValue src = k < rank - 1 ? a : b;
    int at = k < rank - 1 ? k : b_transposed ? 0 : rank - 1;
    sizes[k] = lw_static_dim(src, at);
    dims[k] = sizes[k] < 0 ? lw_dim(cx, src, at) : (MlirValue){NULL};
  }
  if (mlirValueIsNull(init))
    init = lw_filled(cx, lw_tensor_type_of(cx, O2M_DT_FLOAT, rank, sizes), dims, lw_const_scalar(cx, O2M_DT_FLOAT, 0));
  static const char transposed_b[] =
      "indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, "
      "affine_map<(d0, d1, d2) -> (d0, d1)>]";
  MlirValue ins[2] = {a, b};
  return lw_named(cx, rank == 3 ? "linalg.batch_matmul" : "linalg.matmul", 2, ins, init,
                  b_transposed ? transposed_b : NULL);
}

/* W when input 1 of the MatMul is Transpose(W) of a 2-D W with perm
 * [1, 0] (how Gemm's transB decomposes), else a null value. The
 * Transpose's own code then goes unused (and is dropped: lw_ctx.for_jit). */
static MlirValue transposed_operand(lw_ctx *cx) {
  const o2m_value *bt = cx->node->n_inputs > 1 ? cx->node->inputs[1] : NULL;
  const o2m_node *t = bt && bt->kind == O2M_VALUE_NODE ? bt->producer : NULL;
  if (!t || strcmp(t->op_type, "Transpose") != 0 || t->domain[0] || t->n_inputs < 1 || !t->inputs[0] ||
      t->inputs[0]->type.rank != 2)
    return (MlirValue){NULL};
  const o2m_attr *perm = o2m_node_attr(t, "perm");
  if (perm && (perm->count != 2 || perm->ints[0] != 1 || perm->ints[1] != 0)) return (MlirValue){NULL};
  return lw_get(cx, t->inputs[0]);
}

/* Whether dim k of the two operands' types is one size for sure: equal
 * known sizes, or the same symbol (a broadcast of 1 against N is not). */
static int same_dim(const o2m_type *a, const o2m_type *b, int k) {
  const o2m_dim *da = &a->dims[k], *db = &b->dims[k];
  if (da->size >= 0 || db->size >= 0) return da->size == db->size;
  return da->sym && db->sym && strcmp(da->sym, db->sym) == 0;
}

/* v reshaped to `rank` dims of sizes `dims`: a tensor.reshape where some
 * is dynamic (the elementwise fusion would fold a collapse or an expand
 * into the product and leave no named op for the kernels, exec_fusion.c). */
static MlirValue reshaped(lw_ctx *cx, MlirValue v, int rank, const lw_ix *dims) {
  int64_t sizes[LW_MAX_RANK];
  int dynamic = 0;
  for (int k = 0; k < rank; k++) {
    sizes[k] = lw_ix_is_const(dims[k]) ? dims[k].c : -1;
    dynamic |= sizes[k] < 0;
  }
  if (!dynamic) return lw_reshape_static(cx, v, O2M_DT_FLOAT, rank, sizes);
  return lw_reshape_op(cx, v, lw_tensor_type_of(cx, O2M_DT_FLOAT, rank, sizes), dims);
}

/* v with its dims [0, split) folded into one. */
static MlirValue folded(lw_ctx *cx, MlirValue v, int split) {
  int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(v));
  lw_ix dims[LW_MAX_RANK];
  dims[0] = lw_ix_c(1);
  for (int k = 0; k < split; k++) dims[0] = lw_ix_bin(cx, LW_IX_MUL, dims[0], lw_ix_dim(cx, v, k));
  for (int k = split; k < rank; k++) dims[1 + k - split] = lw_ix_dim(cx, v, k);
  return reshaped(cx, v, 1 + rank - split, dims);
}

/* A float32 MatMul as one BLAS call: a [..., M, K] x b [K, N] as one 2-D
 * product of a's rows (its leading dims folded into M), or
 * a [batch..., M, K] x b [batch..., K, N] with the same batch dims (known
 * equal, or of one symbol: no broadcast) as one batched product. Dims
 * known only at run time (a dynamic batch in a compiled library, a
 * detector's boxes after NonMaxSuppression) fold as the others do.
 * *done stays 0 for other forms. */
static o2m_status lower_sgemm(lw_ctx *cx, MlirValue a, MlirValue b, o2m_dtype dtype, int *done) {
  *done = 0;
  if (!(cx->for_jit & O2M_JIT_SGEMM) || dtype != O2M_DT_FLOAT) return O2M_OK;
  const o2m_type *at = lw_in_type(cx, 0), *bt = lw_in_type(cx, 1), *yt = lw_out_type(cx, 0);
  int ra = (int)mlirShapedTypeGetRank(mlirValueGetType(a)), rb = (int)mlirShapedTypeGetRank(mlirValueGetType(b));
  if (ra < 2 || rb < 2 || ra >= LW_MAX_RANK || (rb != 2 && rb != ra) || at->rank != ra || bt->rank != rb ||
      !yt || yt->rank != ra)
    return O2M_OK;
  for (int k = 0; rb > 2 && k < ra - 2; k++)
    if (!same_dim(at, bt, k)) return O2M_OK; /* a broadcast */
  int split = rb == 2 ? ra - 1 : ra - 2; /* the dims folded into one */
  if (split > 1) a = folded(cx, a, split);
  if (rb > 3) b = folded(cx, b, split);
  MlirValue r = {NULL}, w = rb == 2 ? transposed_operand(cx) : (MlirValue){NULL};
  int b_transposed = !mlirValueIsNull(w) && mlirShapedTypeHasStaticShape(mlirValueGetType(w));
  if (b_transposed) b = w;
  if (!mlirValueIsNull(a) && !mlirValueIsNull(b)) r = lw_blas_product(cx, a, b, b_transposed, (MlirValue){NULL});
  o2m_status s = mlirValueIsNull(a) || mlirValueIsNull(b) || mlirValueIsNull(r)
                     ? lw_error(cx, "internal: cannot build the product")
                     : O2M_OK;
  if (!s && split > 1) { /* back to the node's dims: a's but the last, then b's last */
    lw_ix out[LW_MAX_RANK];
    for (int k = 0; k < ra - 1; k++) out[k] = lw_ix_dim(cx, lw_in(cx, 0), k);
    out[ra - 1] = lw_ix_dim(cx, lw_in(cx, 1), rb - 1);
    r = reshaped(cx, r, ra, out);
  }
  if (!s && mlirValueIsNull(r)) s = lw_error(cx, "internal: cannot unfold the batch dims");
  if (!s) s = lw_set_out(cx, 0, r);
  *done = !s;
  return s;
}

o2m_status lw_lower_matmul(lw_ctx *cx) {
  MlirValue a = lw_in(cx, 0), b = lw_in(cx, 1);
  o2m_dtype dtype = lw_out_type(cx, 0)->elem;
  if (mlirValueIsNull(a) || mlirValueIsNull(b)) return lw_unsupported(cx, "an operand is not a ranked tensor");
  if (lw_in_type(cx, 0)->elem != dtype || lw_in_type(cx, 1)->elem != dtype)
    return lw_error(cx, "operands of different dtypes");
  int done;
  o2m_status sg = lower_sgemm(cx, a, b, dtype, &done);
  if (sg || done) return sg;
  MlirValue r;
  if (dtype != O2M_DT_BOOL && !mlirTypeIsNull(lw_elem_type(cx, dtype)) &&
      named_matmul(cx, a, b, dtype, &r)) {
    o2m_status s = lw_convert(cx, r, lw_accumulator_dtype(dtype), dtype, &r);
    return s ? s : lw_set_out(cx, 0, r);
  }
  contraction c = {.n_in = 2, .ins = {a, b}, .dtype = dtype};
  int ra = (int)mlirShapedTypeGetRank(mlirValueGetType(a));
  int rb = (int)mlirShapedTypeGetRank(mlirValueGetType(b));
  int nb = (ra > rb ? ra : rb) - 2;
  if (nb < 0) nb = 0;
  if (ra < 1 || rb < 1 || nb + 2 > MAX_LABELS - 1) return lw_error(cx, "MatMul of ranks %d and %d", ra, rb);
  const int m = nb, n = nb + 1, k = nb + 2;
  c.rank[0] = ra, c.rank[1] = rb;
  for (int j = 0; j < ra - 2; j++) c.labels[0][j] = nb - (ra - 2) + j;
  for (int j = 0; j < rb - 2; j++) c.labels[1][j] = nb - (rb - 2) + j;
  if (ra == 1) c.labels[0][0] = k;
  else c.labels[0][ra - 2] = m, c.labels[0][ra - 1] = k;
  if (rb == 1) c.labels[1][0] = k;
  else c.labels[1][rb - 2] = k, c.labels[1][rb - 1] = n;
  for (int j = 0; j < nb; j++) c.out_labels[c.out_rank++] = j;
  if (ra > 1) c.out_labels[c.out_rank++] = m;
  if (rb > 1) c.out_labels[c.out_rank++] = n;
  return lower_contraction(cx, &c);
}

/* ---- Einsum ------------------------------------------------------------------ */

/* Labels: 'A'..'Z' are 0..25, 'a'..'z' 26..51 (numpy's order), the dims
 * of an ellipsis 52.. aligned from the right across terms. */
enum { ELLIPSIS_BASE = 52 };

static int letter_label(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  return NO_LABEL;
}

/* Parses the term [s, end) into labels; `rank` the operand's rank (-1 for
 * the output, whose ellipsis has max_ell dims). Returns the label count,
 * -1 when malformed. *ell receives the ellipsis' dim count. */
static int parse_term(const char *s, const char *end, int rank, int max_ell, int *labels, int *ell) {
  int letters = 0, n = 0, seen_ell = 0;
  for (const char *p = s; p < end; p++) letters += letter_label(*p) != NO_LABEL;
  *ell = 0;
  for (const char *p = s; p < end; p++) {
    if (*p == ' ') continue;
    if (*p == '.') {
      if (seen_ell || end - p < 3 || p[1] != '.' || p[2] != '.') return -1;
      seen_ell = 1;
      *ell = rank >= 0 ? rank - letters : max_ell;
      if (*ell < 0 || *ell > max_ell || n + *ell > MAX_LABELS - 1) return -1;
      for (int k = 0; k < *ell; k++) labels[n++] = ELLIPSIS_BASE + max_ell - *ell + k;
      p += 2;
      continue;
    }
    if (letter_label(*p) == NO_LABEL || n == MAX_LABELS - 1) return -1;
    labels[n++] = letter_label(*p);
  }
  return n;
}

o2m_status lw_lower_einsum(lw_ctx *cx) {
  const char *eq = lw_attr_string(cx, "equation", NULL);
  if (!eq) return lw_error(cx, "the equation is missing");
  contraction c;
  memset(&c, 0, sizeof(c));
  c.n_in = cx->node->n_inputs;
  c.dtype = lw_out_type(cx, 0)->elem;
  if (c.n_in < 1 || c.n_in > MAX_OPERANDS) return lw_unsupported(cx, "%d operands", c.n_in);
  int max_ell = 0;
  for (int i = 0; i < c.n_in; i++) {
    c.ins[i] = lw_in(cx, i);
    if (mlirValueIsNull(c.ins[i])) return lw_unsupported(cx, "operand %d is not a ranked tensor", i);
    if (lw_in_type(cx, i)->elem != c.dtype) return lw_error(cx, "operands of different dtypes");
    c.rank[i] = (int)mlirShapedTypeGetRank(mlirValueGetType(c.ins[i]));
    if (c.rank[i] > max_ell) max_ell = c.rank[i];
  }
  if (max_ell > MAX_LABELS - 1 - ELLIPSIS_BASE) return lw_unsupported(cx, "operands of rank %d", max_ell);
  /* operand terms; max_ell is first an upper bound, then the real maximum */
  const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq), *p = eq;
  int ells[MAX_OPERANDS], real_max = 0;
  for (int pass = 0; pass < 2; pass++) {
    p = eq;
    for (int i = 0; i < c.n_in; i++) {
      const char *comma = memchr(p, ',', (size_t)(end - p));
      const char *term_end = i == c.n_in - 1 ? end : comma;
      if (!term_end || (i == c.n_in - 1 && comma))
        return lw_error(cx, "the equation '%s' does not have %d operand terms", eq, c.n_in);
      if (parse_term(p, term_end, c.rank[i], max_ell, c.labels[i], &ells[i]) != c.rank[i])
        return lw_error(cx, "term %d of '%s' does not fit its operand", i, eq);
      if (ells[i] > real_max) real_max = ells[i];
      p = term_end + 1;
    }
    max_ell = real_max;
  }
  if (arrow) {
    int ell;
    c.out_rank = parse_term(arrow + 2, arrow + strlen(arrow), -1, max_ell, c.out_labels, &ell);
    if (c.out_rank < 0) return lw_error(cx, "the output term of '%s' is malformed", eq);
    for (int j = 0; j < c.out_rank; j++)
      for (int k = 0; k < j; k++)
        if (c.out_labels[j] == c.out_labels[k]) return lw_error(cx, "the output term of '%s' repeats a label", eq);
  } else { /* implicit output: the ellipsis, then the labels seen once, sorted */
    int count[MAX_LABELS] = {0};
    for (int i = 0; i < c.n_in; i++)
      for (int j = 0; j < c.rank[i]; j++) count[c.labels[i][j]]++;
    for (int k = 0; k < max_ell; k++) c.out_labels[c.out_rank++] = ELLIPSIS_BASE + k;
    for (int label = 0; label < ELLIPSIS_BASE; label++)
      if (count[label] == 1) c.out_labels[c.out_rank++] = label;
  }
  return lower_contraction(cx, &c);
}
