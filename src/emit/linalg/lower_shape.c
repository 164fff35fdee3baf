/* lower_shape.c - Linalg lowerings of the shape family (rows in
 * lower_shape.def): ops that re-shape or move whole slices of a tensor
 * with tensor-dialect ops (Reshape, Flatten, Squeeze, Unsqueeze, Concat,
 * Split, Slice with positive steps), Transpose, and the ops that make
 * tensors from sizes (Shape, Size, ConstantOfShape, Range).
 *
 * Also implements the helpers of lower_shape.h that lower_index.c and
 * lower_scatter.c share.
 * Lowers the core form only (src/transform): axes, splits, starts/ends
 * and shapes arrive as inputs, known or runtime.
 */
#include <stdio.h>
#include <string.h>

#include "emit/linalg/lower_shape.h"

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

static MlirNamedAttribute named_attr(lw_ctx *cx, const char *name, MlirAttribute a) {
  return mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref(name)), a);
}

/* ==== helpers (lower_shape.h) ============================================ */

/* ---- index arithmetic ------------------------------------------------------ */

static const struct {
  const char *name;
  int predicate; /* arith.cmpi predicate, -1 for arithmetic */
} ix_ops[LW_IX_OP_COUNT] = {
    [LW_IX_ADD] = {"arith.addi", -1},
    [LW_IX_SUB] = {"arith.subi", -1},
    [LW_IX_MUL] = {"arith.muli", -1},
    [LW_IX_FLOORDIV] = {"arith.floordivsi", -1},
    [LW_IX_CEILDIV] = {"arith.ceildivsi", -1},
    [LW_IX_REM] = {"arith.remsi", -1},
    [LW_IX_MIN] = {"arith.minsi", -1},
    [LW_IX_MAX] = {"arith.maxsi", -1},
    [LW_IX_EQ] = {"arith.cmpi", 0},
    [LW_IX_NE] = {"arith.cmpi", 1},
    [LW_IX_LT] = {"arith.cmpi", 2},
    [LW_IX_LE] = {"arith.cmpi", 3},
    [LW_IX_GT] = {"arith.cmpi", 4},
    [LW_IX_GE] = {"arith.cmpi", 5},
    [LW_IX_AND] = {"arith.andi", -1},
};

/* Folds op on constants; 0 when the result is not representable. */
static int ix_fold(lw_ix_op op, int64_t a, int64_t b, int64_t *r) {
  if ((op == LW_IX_FLOORDIV || op == LW_IX_CEILDIV || op == LW_IX_REM) &&
      (b == 0 || (a == INT64_MIN && b == -1)))
    return 0;
  switch (op) {
  case LW_IX_ADD: return !__builtin_add_overflow(a, b, r);
  case LW_IX_SUB: return !__builtin_sub_overflow(a, b, r);
  case LW_IX_MUL: return !__builtin_mul_overflow(a, b, r);
  case LW_IX_FLOORDIV: *r = a / b - (a % b != 0 && (a < 0) != (b < 0)); return 1;
  case LW_IX_CEILDIV: *r = a / b + (a % b != 0 && (a < 0) == (b < 0)); return 1;
  case LW_IX_REM: *r = a % b; return 1;
  case LW_IX_MIN: *r = a < b ? a : b; return 1;
  case LW_IX_MAX: *r = a > b ? a : b; return 1;
  case LW_IX_EQ: *r = a == b; return 1;
  case LW_IX_NE: *r = a != b; return 1;
  case LW_IX_LT: *r = a < b; return 1;
  case LW_IX_LE: *r = a <= b; return 1;
  case LW_IX_GT: *r = a > b; return 1;
  case LW_IX_GE: *r = a >= b; return 1;
  case LW_IX_AND: *r = a && b; return 1;
  default: return 0;
  }
}

MlirValue lw_ix_value(lw_ctx *cx, lw_ix a) {
  return lw_ix_is_const(a) ? lw_const_index(cx, a.c) : a.v;
}

lw_ix lw_ix_bin(lw_ctx *cx, lw_ix_op op, lw_ix a, lw_ix b) {
  int64_t r;
  int ca = lw_ix_is_const(a), cb = lw_ix_is_const(b);
  if (ca && cb && ix_fold(op, a.c, b.c, &r)) return lw_ix_c(r);
  if (cb && ((b.c == 0 && (op == LW_IX_ADD || op == LW_IX_SUB)) ||
             (b.c == 1 && (op == LW_IX_MUL || op == LW_IX_FLOORDIV || op == LW_IX_CEILDIV))))
    return a;
  if (ca && ((a.c == 0 && op == LW_IX_ADD) || (a.c == 1 && op == LW_IX_MUL))) return b;
  if (op == LW_IX_AND && (ca || cb)) return ca ? (a.c ? b : a) : (b.c ? a : b);
  MlirValue ops[2] = {lw_ix_value(cx, a), lw_ix_value(cx, b)};
  if (ix_ops[op].predicate < 0)
    return lw_ix_v(lw_op1(cx, ix_ops[op].name, 2, ops, mlirValueGetType(ops[0]), NULL));
  char attrs[32];
  snprintf(attrs, sizeof(attrs), "predicate = %d : i64", ix_ops[op].predicate);
  return lw_ix_v(lw_op1(cx, "arith.cmpi", 2, ops, lw_type(cx, "i1"), attrs));
}

lw_ix lw_ix_select(lw_ctx *cx, lw_ix cond, lw_ix a, lw_ix b) {
  if (lw_ix_is_const(cond)) return cond.c ? a : b;
  if (lw_ix_is_const(a) && lw_ix_is_const(b) && a.c == b.c) return a;
  MlirValue ops[3] = {cond.v, lw_ix_value(cx, a), lw_ix_value(cx, b)};
  return lw_ix_v(lw_op1(cx, "arith.select", 3, ops, lw_index_type(cx), NULL));
}

lw_ix lw_ix_clamp(lw_ctx *cx, lw_ix a, lw_ix lo, lw_ix hi) {
  return lw_ix_bin(cx, LW_IX_MIN, lw_ix_bin(cx, LW_IX_MAX, a, lo), hi);
}

lw_ix lw_ix_from_end(lw_ctx *cx, lw_ix v, lw_ix d) {
  lw_ix neg = lw_ix_bin(cx, LW_IX_LT, v, lw_ix_c(0));
  if (lw_ix_is_const(neg)) return neg.c ? lw_ix_bin(cx, LW_IX_ADD, v, d) : v;
  return lw_ix_select(cx, neg, lw_ix_bin(cx, LW_IX_ADD, v, d), v);
}

lw_ix lw_ix_dim(lw_ctx *cx, MlirValue tensor, int k) {
  MlirType t = mlirValueGetType(tensor);
  if (!mlirShapedTypeIsDynamicDim(t, k)) return lw_ix_c(mlirShapedTypeGetDimSize(t, k));
  return lw_ix_v(lw_dim(cx, tensor, k));
}

MlirValue lw_scalar_to_index(lw_ctx *cx, MlirValue scalar, o2m_dtype dtype) {
  MlirType index = lw_index_type(cx);
  if (lw_dtype_is_float(dtype)) {
    MlirValue i = lw_op1(cx, "arith.fptosi", 1, &scalar, lw_type(cx, "i64"), NULL);
    return lw_op1(cx, "arith.index_cast", 1, &i, index, NULL);
  }
  const char *cast = lw_dtype_is_unsigned(dtype) ? "arith.index_castui" : "arith.index_cast";
  return lw_op1(cx, cast, 1, &scalar, index, NULL);
}

/* ---- reading inputs ---------------------------------------------------------- */

MlirValue lw_extract(lw_ctx *cx, MlirValue tensor, const MlirValue *idx) {
  MlirValue ops[LW_MAX_RANK + 1];
  int rank = lw_rank(tensor);
  ops[0] = tensor;
  for (int k = 0; k < rank; k++) ops[k + 1] = idx[k];
  MlirType elem = mlirShapedTypeGetElementType(mlirValueGetType(tensor));
  return lw_op1(cx, "tensor.extract", rank + 1, ops, elem, NULL);
}

MlirValue lw_extract_at(lw_ctx *cx, MlirValue tensor, int64_t k) {
  MlirValue idx[LW_MAX_RANK];
  int rank = lw_rank(tensor);
  for (int d = 0; d < rank; d++) idx[d] = lw_const_index(cx, d == rank - 1 ? k : 0);
  return lw_extract(cx, tensor, idx);
}

int lw_in_ixs(lw_ctx *cx, int i, lw_ix **out) {
  int64_t *known = NULL;
  int64_t n = lw_in_known_ints(cx, i, &known);
  MlirValue v = n < 0 ? lw_in(cx, i) : (MlirValue){NULL};
  if (n < 0) {
    if (mlirValueIsNull(v)) return -1;
    MlirType t = mlirValueGetType(v);
    int rank = (int)mlirShapedTypeGetRank(t);
    if (rank > 1 || (rank == 1 && mlirShapedTypeIsDynamicDim(t, 0))) return -1;
    n = rank ? mlirShapedTypeGetDimSize(t, 0) : 1;
  }
  lw_ix *r = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(*r));
  if (!r) return -1;
  for (int64_t k = 0; k < n; k++)
    r[k] = known
               ? lw_ix_c(known[k])
               : lw_ix_v(lw_scalar_to_index(cx, lw_extract_at(cx, v, k), lw_in_type(cx, i)->elem));
  *out = r;
  return (int)n;
}

MlirValue lw_in_scalar(lw_ctx *cx, int i) {
  MlirValue v = lw_in(cx, i);
  return mlirValueIsNull(v) ? v : lw_extract_at(cx, v, 0);
}

int lw_rank(MlirValue v) { return (int)mlirShapedTypeGetRank(mlirValueGetType(v)); }

o2m_status lw_inputs(lw_ctx *cx, int n, MlirValue *v) {
  for (int i = 0; i < n; i++) {
    v[i] = lw_in(cx, i);
    if (mlirValueIsNull(v[i])) return lw_error(cx, "input %d is missing", i);
  }
  return O2M_OK;
}

MlirValue lw_norm_index(lw_ctx *cx, MlirValue elem, o2m_dtype dt, lw_ix dim) {
  lw_ix i = lw_ix_from_end(cx, lw_ix_v(lw_scalar_to_index(cx, elem, dt)), dim);
  return lw_ix_value(cx, lw_ix_clamp(cx, i, lw_ix_c(0), lw_ix_bin(cx, LW_IX_SUB, dim, lw_ix_c(1))));
}

int lw_norm_axis(lw_ctx *cx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    lw_error(cx, "axis %lld is out of range for rank %d", (long long)axis, rank);
    return -1;
  }
  return (int)(axis < 0 ? axis + rank : axis);
}

/* ---- new tensors and slices -------------------------------------------------- */

MlirType lw_out_type_with(lw_ctx *cx, int i, int n, const lw_ix *dims) {
  const o2m_type *t = lw_out_type(cx, i);
  if (t->kind != O2M_TYPE_TENSOR || t->rank != n || n > LW_MAX_RANK) return (MlirType){NULL};
  int64_t sizes[LW_MAX_RANK];
  for (int k = 0; k < t->rank; k++)
    sizes[k] = t->dims[k].size >= 0 ? t->dims[k].size : lw_ix_is_const(dims[k]) ? dims[k].c : -1;
  return lw_tensor_type_of(cx, t->elem, t->rank, sizes);
}

MlirValue lw_empty_ix(lw_ctx *cx, MlirType type, const lw_ix *dims) {
  MlirValue values[LW_MAX_RANK];
  int rank = (int)mlirShapedTypeGetRank(type);
  for (int k = 0; k < rank; k++)
    if (mlirShapedTypeIsDynamicDim(type, k)) values[k] = lw_ix_value(cx, dims[k]);
  return lw_empty(cx, type, values);
}

/* Splits mixed sizes into a static array (dynamic marker for values) and
 * the list of dynamic values, appended to ops at *n_ops. */
static MlirAttribute mixed(lw_ctx *cx, int rank, const lw_ix *v, int64_t dflt, MlirValue *ops,
                           int *n_ops, int32_t *count) {
  int64_t s[LW_MAX_RANK];
  *count = 0;
  for (int k = 0; k < rank; k++) {
    lw_ix x = v ? v[k] : lw_ix_c(dflt);
    s[k] = lw_ix_is_const(x) ? x.c : mlirShapedTypeGetDynamicSize();
    if (!lw_ix_is_const(x)) ops[(*n_ops)++] = x.v, (*count)++;
  }
  return mlirDenseI64ArrayGet(cx->mc, rank, s);
}

/* extract_slice (dest null) or insert_slice. */
static MlirValue slice_op(lw_ctx *cx, MlirValue src, MlirValue dest, MlirType result,
                          const lw_ix *offsets, const lw_ix *sizes, const lw_ix *strides) {
  int rank = lw_rank(mlirValueIsNull(dest) ? src : dest);
  MlirValue ops[3 * LW_MAX_RANK + 2];
  int n = 0, seg = 0;
  int32_t segments[5];
  ops[n++] = src, segments[seg++] = 1;
  if (!mlirValueIsNull(dest)) ops[n++] = dest, segments[seg++] = 1;
  MlirNamedAttribute attrs[4];
  attrs[0] = named_attr(cx, "static_offsets", mixed(cx, rank, offsets, 0, ops, &n, &segments[seg]));
  seg++;
  attrs[1] = named_attr(cx, "static_sizes", mixed(cx, rank, sizes, 0, ops, &n, &segments[seg]));
  seg++;
  attrs[2] = named_attr(cx, "static_strides", mixed(cx, rank, strides, 1, ops, &n, &segments[seg]));
  seg++;
  attrs[3] = named_attr(cx, "operandSegmentSizes", mlirDenseI32ArrayGet(cx->mc, seg, segments));
  const char *name = mlirValueIsNull(dest) ? "tensor.extract_slice" : "tensor.insert_slice";
  MlirOperation op = lw_op_attrs(cx, name, n, ops, 1, &result, 4, attrs, 0);
  return mlirOperationGetResult(op, 0);
}

MlirValue lw_extract_slice(lw_ctx *cx, MlirValue src, const lw_ix *offsets, const lw_ix *sizes,
                           const lw_ix *strides) {
  MlirType t = mlirValueGetType(src);
  int rank = (int)mlirShapedTypeGetRank(t);
  int64_t shape[LW_MAX_RANK];
  for (int k = 0; k < rank; k++)
    shape[k] = lw_ix_is_const(sizes[k]) ? sizes[k].c : mlirShapedTypeGetDynamicSize();
  MlirType result =
      mlirRankedTensorTypeGet(rank, shape, mlirShapedTypeGetElementType(t), mlirAttributeGetNull());
  for (int k = 0; k < rank; k++) /* MLIR rejects offsets into empty dims */
    if (shape[k] == 0) return lw_empty_ix(cx, result, sizes);
  return slice_op(cx, src, (MlirValue){NULL}, result, offsets, sizes, strides);
}

MlirValue lw_insert_slice(lw_ctx *cx, MlirValue src, MlirValue dest, const lw_ix *offsets) {
  lw_ix sizes[LW_MAX_RANK];
  int rank = lw_rank(src);
  for (int k = 0; k < rank; k++) {
    sizes[k] = lw_ix_dim(cx, src, k);
    if (lw_ix_is_const(sizes[k]) && sizes[k].c == 0) return dest; /* nothing to insert */
  }
  return slice_op(cx, src, dest, mlirValueGetType(dest), offsets, sizes, NULL);
}

/* ---- gather-style generics ---------------------------------------------------- */

typedef struct index_body {
  lw_index_body_fn fn;
  void *user;
  int rank;
} index_body;

static o2m_status run_index_body(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const index_body *b = user;
  MlirValue idx[LW_MAX_RANK];
  char attrs[32];
  for (int k = 0; k < b->rank; k++) {
    snprintf(attrs, sizeof(attrs), "dim = %d : i64", k);
    idx[k] = lw_op1(cx, "linalg.index", 0, NULL, lw_index_type(cx), attrs);
  }
  o2m_status s = b->fn(cx, idx, args, yields, b->user);
  for (int k = 0; k < b->rank; k++) /* drop the loop indices the body did not use */
    if (mlirOpOperandIsNull(mlirValueGetFirstUse(idx[k]))) {
      MlirOperation op = mlirOpResultGetOwner(idx[k]);
      mlirOperationRemoveFromParent(op);
      mlirOperationDestroy(op);
    }
  return s;
}

o2m_status lw_copy_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                        void *user) {
  *out = args[0];
  return O2M_OK;
}

o2m_status lw_index_generic(lw_ctx *cx, MlirType type, const lw_ix *dims, int n_ins,
                            const MlirValue *ins, const MlirAttribute *in_maps,
                            lw_index_body_fn body, void *user, MlirValue *result) {
  int rank = (int)mlirShapedTypeGetRank(type);
  char iters[LW_MAX_RANK + 1];
  memset(iters, 'p', (size_t)rank);
  iters[rank] = 0;
  MlirValue init = lw_empty_ix(cx, type, dims);
  MlirAttribute out_map = lw_identity_map(cx, rank);
  index_body b = {body, user, rank};
  lw_generic_spec spec = {rank, iters, n_ins, 1, ins, in_maps, &init, &out_map, run_index_body, &b};
  return lw_generic(cx, &spec, result);
}

/* ---- reshapes ------------------------------------------------------------------ */

/* A dim for grouping: a static size, or a symbol (NULL: equal to nothing). */
typedef struct dim_key {
  int64_t size; /* -1 when dynamic */
  const char *sym;
} dim_key;

/* A product of dims: the static part and the symbols. */
typedef struct dim_product {
  int64_t known;
  int n, opaque; /* opaque: an unnamed dynamic dim or an overflow */
  const char *syms[LW_MAX_RANK];
} dim_product;

static void product_mul(dim_product *p, dim_key k) {
  if (k.size >= 0)
    p->opaque |= __builtin_mul_overflow(p->known, k.size, &p->known);
  else if (k.sym)
    p->syms[p->n++] = k.sym;
  else
    p->opaque = 1;
}

static int sym_count(const dim_product *p, const char *s) {
  int c = 0;
  for (int i = 0; i < p->n; i++) c += strcmp(p->syms[i], s) == 0;
  return c;
}

/* Non-zero when a has a symbol more often than b. */
static int has_extra_sym(const dim_product *a, const dim_product *b) {
  for (int i = 0; i < a->n; i++)
    if (sym_count(a, a->syms[i]) > sym_count(b, a->syms[i])) return 1;
  return 0;
}

static int product_eq(const dim_product *a, const dim_product *b) {
  return !a->opaque && !b->opaque && a->known == b->known && a->n == b->n && !has_extra_sym(a, b);
}

/* Forms consecutive groups of equal product from the start, while it can;
 * group g spans in_len[g] in-dims and out_len[g] out-dims. Returns the
 * count; *used_in / *used_out dims were grouped. */
static int group_run(const dim_key *in, int rin, const dim_key *out, int rout, int *in_len,
                     int *out_len, int *used_in, int *used_out) {
  int i = 0, j = 0, g = 0;
  while (i < rin && j < rout) {
    int i0 = i, j0 = j, ok = 1;
    dim_product p = {1, 0, 0, {NULL}}, q = {1, 0, 0, {NULL}};
    product_mul(&p, in[i++]);
    product_mul(&q, out[j++]);
    while (ok && !product_eq(&p, &q)) {
      int grow_out = has_extra_sym(&p, &q) ? 1 : has_extra_sym(&q, &p) ? 0 : q.known < p.known;
      ok = !p.opaque && !q.opaque && (grow_out ? j < rout : i < rin);
      if (ok && grow_out)
        product_mul(&q, out[j++]);
      else if (ok)
        product_mul(&p, in[i++]);
    }
    if (!ok) {
      i = i0, j = j0;
      break;
    }
    in_len[g] = i - i0, out_len[g++] = j - j0;
  }
  *used_in = i, *used_out = j;
  return g;
}

static int all_units(const dim_key *keys, int n) {
  for (int k = 0; k < n; k++)
    if (keys[k].size != 1) return 0;
  return 1;
}

/* Splits in-dims and out-dims into consecutive groups of equal product
 * (group g ends before in_end[g] / out_end[g]): matching groups from both
 * ends, what lies between them (dims of unknown relation) in one group,
 * unit dims joining a neighbour. Returns the group count, or -1. */
static int group_dims(const dim_key *in, int rin, const dim_key *out, int rout, int *in_end,
                      int *out_end) {
  int fin[LW_MAX_RANK], fout[LW_MAX_RANK], bin[LW_MAX_RANK], bout[LW_MAX_RANK], ui, uo, vi, vo;
  dim_key rev_in[LW_MAX_RANK], rev_out[LW_MAX_RANK];
  int nf = group_run(in, rin, out, rout, fin, fout, &ui, &uo);
  for (int k = 0; k < rin - ui; k++) rev_in[k] = in[rin - 1 - k];
  for (int k = 0; k < rout - uo; k++) rev_out[k] = out[rout - 1 - k];
  int nb = group_run(rev_in, rin - ui, rev_out, rout - uo, bin, bout, &vi, &vo);
  int mi = rin - ui - vi, mo = rout - uo - vo, g = 0;
  if ((!mi && mo && !all_units(out + uo, mo)) || (mi && !mo && !all_units(in + ui, mi)) ||
      nf + nb + 1 > LW_MAX_RANK)
    return -1;
  int lens_in[LW_MAX_RANK], lens_out[LW_MAX_RANK];
  for (int k = 0; k < nf; k++) lens_in[g] = fin[k], lens_out[g++] = fout[k];
  if (mi && mo) lens_in[g] = mi, lens_out[g++] = mo;
  for (int k = nb - 1; k >= 0; k--) lens_in[g] = bin[k], lens_out[g++] = bout[k];
  if (!g) return -1;
  if (!(mi && mo)) { /* unit dims in the middle join the group before them (or the first) */
    int at = nf > 0 ? nf - 1 : 0;
    lens_in[at] += mi, lens_out[at] += mo;
  }
  for (int k = 0, ei = 0, eo = 0; k < g; k++)
    in_end[k] = ei += lens_in[k], out_end[k] = eo += lens_out[k];
  return g;
}

static void keys_of(MlirType t, const o2m_type *ot, dim_key *keys) {
  int rank = (int)mlirShapedTypeGetRank(t);
  for (int k = 0; k < rank; k++) {
    keys[k].size = mlirShapedTypeIsDynamicDim(t, k) ? -1 : mlirShapedTypeGetDimSize(t, k);
    keys[k].sym = keys[k].size < 0 && ot->rank == rank ? ot->dims[k].sym : NULL;
  }
}

/* "[[0, 1], [2]]" for groups ending at `ends`. */
static MlirAttribute reassociation(lw_ctx *cx, int n_groups, const int *ends) {
  char text[8 * LW_MAX_RANK + 8];
  size_t len = 0;
  text[len++] = '[';
  for (int g = 0, d = 0; g < n_groups; g++) {
    text[len++] = '[';
    for (; d < ends[g]; d++)
      len +=
          (size_t)snprintf(text + len, sizeof(text) - len, "%d%s", d, d + 1 < ends[g] ? ", " : "");
    len += (size_t)snprintf(text + len, sizeof(text) - len, "]%s", g + 1 < n_groups ? ", " : "");
  }
  snprintf(text + len, sizeof(text) - len, "]");
  return lw_attr_parse(cx, text);
}

/* The type of `t`'s dims multiplied per group: static where every dim of
 * the group is. */
static MlirType grouped_type(MlirType t, int n_groups, const int *ends) {
  int64_t sizes[LW_MAX_RANK];
  for (int g = 0, d = 0; g < n_groups; g++) {
    sizes[g] = 1;
    for (; d < ends[g]; d++)
      if (sizes[g] < 0 || mlirShapedTypeIsDynamicDim(t, d))
        sizes[g] = mlirShapedTypeGetDynamicSize();
      else
        sizes[g] *= mlirShapedTypeGetDimSize(t, d);
  }
  return mlirRankedTensorTypeGet(n_groups, sizes, mlirShapedTypeGetElementType(t),
                                 mlirAttributeGetNull());
}

/* The input dim with the symbol of output dim k, or -1. */
static int input_dim_of(const o2m_type *in_t, const o2m_type *out_t, int k) {
  const char *sym = out_t->rank > k ? out_t->dims[k].sym : NULL;
  for (int m = 0; sym && m < in_t->rank; m++)
    if (in_t->dims[m].sym && strcmp(sym, in_t->dims[m].sym) == 0) return m;
  return -1;
}

/* The output sizes of a reshape: given, matched by symbol, or (one of
 * them) from the element count. 0 after failing. */
static int reshape_dims(lw_ctx *cx, MlirValue x, const o2m_type *in_t, MlirType out_type,
                        const o2m_type *out_t, const lw_ix *given, lw_ix *dims) {
  int rin = lw_rank(x);
  int rout = (int)mlirShapedTypeGetRank(out_type), unknown = -1;
  for (int k = 0; k < rout; k++) {
    dims[k] = lw_ix_c(-1);
    if (!mlirShapedTypeIsDynamicDim(out_type, k))
      dims[k] = lw_ix_c(mlirShapedTypeGetDimSize(out_type, k));
    else if (given && !(lw_ix_is_const(given[k]) && given[k].c < 0))
      dims[k] = given[k];
    int m = lw_ix_is_const(dims[k]) && dims[k].c < 0 && in_t->rank == rin
                ? input_dim_of(in_t, out_t, k)
                : -1;
    if (m >= 0) dims[k] = lw_ix_dim(cx, x, m);
    if (lw_ix_is_const(dims[k]) && dims[k].c < 0) {
      if (unknown >= 0) {
        lw_unsupported(cx, "the output dims %d and %d cannot be told at compile time", unknown, k);
        return 0;
      }
      unknown = k;
    }
  }
  if (unknown >= 0) {
    lw_ix total = lw_ix_c(1), rest = lw_ix_c(1);
    for (int m = 0; m < rin; m++) total = lw_ix_bin(cx, LW_IX_MUL, total, lw_ix_dim(cx, x, m));
    for (int k = 0; k < rout; k++)
      if (k != unknown) rest = lw_ix_bin(cx, LW_IX_MUL, rest, dims[k]);
    dims[unknown] =
        lw_ix_bin(cx, LW_IX_FLOORDIV, total, lw_ix_bin(cx, LW_IX_MAX, rest, lw_ix_c(1)));
  }
  return 1;
}

static MlirValue collapse(lw_ctx *cx, MlirValue x, MlirType result, int n_groups, const int *ends) {
  MlirNamedAttribute a = named_attr(cx, "reassociation", reassociation(cx, n_groups, ends));
  return mlirOperationGetResult(
      lw_op_attrs(cx, "tensor.collapse_shape", 1, &x, 1, &result, 1, &a, 0), 0);
}

static MlirValue expand(lw_ctx *cx, MlirValue x, MlirType result, int n_groups, const int *ends,
                        const lw_ix *dims) {
  MlirValue ops[LW_MAX_RANK + 1];
  int n = 0;
  int32_t unused;
  ops[n++] = x;
  int rank = (int)mlirShapedTypeGetRank(result);
  lw_ix sizes[LW_MAX_RANK];
  for (int k = 0; k < rank; k++)
    sizes[k] = mlirShapedTypeIsDynamicDim(result, k) ? dims[k] /* dims may be NULL when static */
                                                     : lw_ix_c(mlirShapedTypeGetDimSize(result, k));
  MlirNamedAttribute a[2] = {
      named_attr(cx, "reassociation", reassociation(cx, n_groups, ends)),
      named_attr(cx, "static_output_shape", mixed(cx, rank, sizes, 0, ops, &n, &unused)),
  };
  return mlirOperationGetResult(lw_op_attrs(cx, "tensor.expand_shape", n, ops, 1, &result, 2, a, 0),
                                0);
}

MlirValue lw_reshape_op(lw_ctx *cx, MlirValue x, MlirType type, const lw_ix *dims) {
  MlirValue ops[2] = {x}, sizes[LW_MAX_RANK];
  int64_t rank = mlirShapedTypeGetRank(type);
  for (int k = 0; k < rank; k++) sizes[k] = lw_ix_value(cx, dims[k]);
  MlirType shape = mlirRankedTensorTypeGet(1, &rank, lw_index_type(cx), mlirAttributeGetNull());
  ops[1] = lw_op1(cx, "tensor.from_elements", (int)rank, sizes, shape, NULL);
  return lw_op1(cx, "tensor.reshape", 2, ops, type, NULL);
}

/* A type of `rank` unit dims. */
static MlirType units_type(MlirType like, int rank) {
  int64_t ones[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) ones[k] = 1;
  return mlirRankedTensorTypeGet(rank, ones, mlirShapedTypeGetElementType(like),
                                 mlirAttributeGetNull());
}

MlirValue lw_reshape_static(lw_ctx *cx, MlirValue x, o2m_dtype dtype, int rank, const int64_t *shape) {
  MlirType t = mlirValueGetType(x);
  int rin = (int)mlirShapedTypeGetRank(t);
  if (rin > LW_MAX_RANK || rank > LW_MAX_RANK) return (MlirValue){NULL};
  o2m_dim din[LW_MAX_RANK], dout[LW_MAX_RANK];
  for (int k = 0; k < rin; k++) din[k] = (o2m_dim){mlirShapedTypeGetDimSize(t, k), NULL};
  for (int k = 0; k < rank; k++) dout[k] = (o2m_dim){shape[k], NULL};
  o2m_type in_t = {O2M_TYPE_TENSOR, dtype, rin, din, NULL}, out_t = {O2M_TYPE_TENSOR, dtype, rank, dout, NULL};
  return lw_reshape(cx, x, &in_t, &out_t, NULL);
}

MlirValue lw_reshape(lw_ctx *cx, MlirValue x, const o2m_type *in_t, const o2m_type *out_t,
                     const lw_ix *given) {
  MlirType in_type = mlirValueGetType(x), out_type = lw_tensor_type(cx, out_t);
  if (mlirTypeIsNull(out_type)) {
    lw_unsupported(cx, "the output's rank is not known at compile time");
    return (MlirValue){NULL};
  }
  if (mlirTypeEqual(in_type, out_type)) return x;
  int rin = (int)mlirShapedTypeGetRank(in_type), rout = (int)mlirShapedTypeGetRank(out_type);
  lw_ix dims[LW_MAX_RANK];
  int in_end[LW_MAX_RANK] = {0}, out_end[LW_MAX_RANK] = {0}, g;
  if (rin == 0 || rout == 0) { /* every other dim is 1: an empty reassociation */
    if (rin)
      return collapse(cx, lw_cast_tensor(cx, x, units_type(in_type, rin)), out_type, 0, NULL);
    return lw_cast_tensor(cx, expand(cx, x, units_type(in_type, rout), 0, NULL, NULL), out_type);
  }
  dim_key in_keys[LW_MAX_RANK], out_keys[LW_MAX_RANK];
  keys_of(in_type, in_t, in_keys);
  keys_of(out_type, out_t, out_keys);
  g = group_dims(in_keys, rin, out_keys, rout, in_end, out_end);
  if (g < 0) { /* no finer grouping: through one dim */
    g = 1;
    in_end[0] = rin;
    out_end[0] = rout;
  }
  if (g < rout && !reshape_dims(cx, x, in_t, out_type, out_t, given, dims))
    return (MlirValue){NULL};
  for (int i = 0, k = 0; i < g && g < rout;
       i++) { /* MLIR 22 crashes lowering expand groups of several dynamic dims */
    int n_dynamic = 0;
    for (; k < out_end[i]; k++) n_dynamic += mlirShapedTypeIsDynamicDim(out_type, k);
    if (n_dynamic > 1) return lw_reshape_op(cx, x, out_type, dims);
  }
  if (g < rin) x = collapse(cx, x, grouped_type(in_type, g, in_end), g, in_end);
  x = lw_cast_tensor(cx, x, grouped_type(out_type, g, out_end));
  return g < rout ? expand(cx, x, out_type, g, out_end, dims) : x;
}

/* ==== lowerings =============================================================== */

static o2m_status set_reshaped(lw_ctx *cx, const lw_ix *dims) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  MlirValue r = lw_reshape(cx, x, lw_in_type(cx, 0), lw_out_type(cx, 0), dims);
  return mlirValueIsNull(r) ? O2M_ERR_UNSUPPORTED : lw_set_out(cx, 0, r);
}

/* Squeeze and Unsqueeze: the inferred output type says it all. */
o2m_status lw_lower_squeeze_unsqueeze(lw_ctx *cx) { return set_reshaped(cx, NULL); }

o2m_status lw_lower_flatten(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  int rank = lw_in_type(cx, 0)->rank;
  if (mlirValueIsNull(x) || rank < 0) return lw_unsupported(cx, "the input's rank is not known");
  if (lw_out_type(cx, 0)->rank != 2) /* a declared type that overrode inference */
    return lw_error(cx, "the output is declared with rank %d; Flatten gives rank 2", lw_out_type(cx, 0)->rank);
  int64_t axis = lw_attr_int(cx, "axis", 1);
  if (axis < -rank || axis > rank)
    return lw_error(cx, "axis %lld is out of range", (long long)axis);
  if (axis < 0) axis += rank;
  lw_ix dims[2] = {lw_ix_c(1), lw_ix_c(1)};
  for (int k = 0; k < rank; k++)
    dims[k >= axis] = lw_ix_bin(cx, LW_IX_MUL, dims[k >= axis], lw_ix_dim(cx, x, k));
  return set_reshaped(cx, dims);
}

/* Reshape: dynamic output dims that no input dim of the same symbol gives
 * (beyond one, which the element count gives) come from the shape input:
 * known entries fold; runtime entries give 0 (copy the input dim unless
 * allowzero) and -1 (the element count over the other entries) their
 * meaning here. */
o2m_status lw_lower_reshape(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  const o2m_type *in_t = lw_in_type(cx, 0), *out_t = lw_out_type(cx, 0);
  MlirType out_type = lw_tensor_type(cx, out_t);
  if (mlirValueIsNull(x) || mlirTypeIsNull(out_type)) return set_reshaped(cx, NULL);
  int rin = lw_rank(x), rout = (int)mlirShapedTypeGetRank(out_type);
  int n_open = 0, runtime = 0, allowzero = (int)lw_attr_int(cx, "allowzero", 0);
  for (int k = 0; k < rout; k++)
    n_open += mlirShapedTypeIsDynamicDim(out_type, k) && input_dim_of(in_t, out_t, k) < 0;
  lw_ix *e;
  if (n_open <= 1) return set_reshaped(cx, NULL);
  if (lw_in_ixs(cx, 1, &e) != rout)
    return lw_unsupported(cx, "the shape is not a 1-D tensor of the output's rank");
  for (int k = 0; k < rout; k++) {
    if (!allowzero && k < rin)
      e[k] = lw_ix_select(cx, lw_ix_bin(cx, LW_IX_EQ, e[k], lw_ix_c(0)), lw_ix_dim(cx, x, k), e[k]);
    runtime |= !lw_ix_is_const(e[k]);
  }
  if (runtime) { /* any entry may be the -1 */
    lw_ix total = lw_ix_c(1), rest = lw_ix_c(1);
    for (int m = 0; m < rin; m++) total = lw_ix_bin(cx, LW_IX_MUL, total, lw_ix_dim(cx, x, m));
    for (int k = 0; k < rout; k++)
      rest =
          lw_ix_bin(cx, LW_IX_MUL, rest,
                    lw_ix_select(cx, lw_ix_bin(cx, LW_IX_EQ, e[k], lw_ix_c(-1)), lw_ix_c(1), e[k]));
    lw_ix missing =
        lw_ix_bin(cx, LW_IX_FLOORDIV, total, lw_ix_bin(cx, LW_IX_MAX, rest, lw_ix_c(1)));
    for (int k = 0; k < rout; k++)
      e[k] = lw_ix_select(cx, lw_ix_bin(cx, LW_IX_EQ, e[k], lw_ix_c(-1)), missing, e[k]);
  }
  return set_reshaped(cx, e);
}

/* ---- Transpose ------------------------------------------------------------------ */

static o2m_status copy_yield(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  (void)cx, (void)user;
  yields[0] = args[0];
  return O2M_OK;
}

/* For the JIT: out[k] = x[perm[k]] in loops over the output's dims in
 * order, except that the output dim which walks x's last dim goes second
 * to last: each innermost run writes a contiguous output row while the
 * rows it reads stay in cache across the loop around it (a plain order
 * reads x with a stride in every iteration: NHWC to NCHW of 64x112x112
 * took 9 ms). */
static o2m_status jit_transpose(lw_ctx *cx, MlirValue x, MlirType out_type, const lw_ix *dims, const int *in_dim_of,
                                int rank, MlirValue *result) {
  int order[LW_MAX_RANK], n = 0, walker = -1; /* order[l]: the output dim of loop l */
  for (int k = 0; k < rank; k++)
    if (in_dim_of[k] == rank - 1) walker = k;
  for (int k = 0; k < rank - 1; k++)
    if (k != walker) order[n++] = k;
  if (walker != rank - 1) order[n++] = walker;
  order[n++] = rank - 1;
  int out_exprs[LW_MAX_RANK], in_exprs[LW_MAX_RANK];
  for (int l = 0; l < rank; l++) out_exprs[order[l]] = l;
  for (int k = 0; k < rank; k++) in_exprs[in_dim_of[k]] = out_exprs[k];
  char iters[LW_MAX_RANK + 1];
  memset(iters, 'p', (size_t)rank);
  iters[rank] = 0;
  MlirValue init = lw_empty_ix(cx, out_type, dims);
  MlirAttribute maps[2] = {lw_affine_map(cx, rank, rank, in_exprs), lw_affine_map(cx, rank, rank, out_exprs)};
  lw_generic_spec spec = {rank, iters, 1, 1, &x, &maps[0], &init, &maps[1], copy_yield, NULL};
  return lw_generic(cx, &spec, result);
}

o2m_status lw_lower_transpose(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  MlirType out_type = lw_tensor_type(cx, lw_out_type(cx, 0));
  if (mlirValueIsNull(x) || mlirTypeIsNull(out_type))
    return lw_unsupported(cx, "the output type is not known");
  int rank = lw_rank(x);
  const int64_t *perm;
  int n = lw_attr_ints(cx, "perm", &perm), exprs[LW_MAX_RANK], in_dim_of[LW_MAX_RANK], identity = 1;
  char seen[LW_MAX_RANK] = {0};
  lw_ix dims[LW_MAX_RANK];
  if (n >= 0 && n != rank) return lw_error(cx, "perm has %d entries for rank %d", n, rank);
  for (int k = 0; k < rank; k++) {
    int64_t p = n < 0 ? rank - 1 - k : perm[k];
    if (p < 0 || p >= rank || seen[p]++) return lw_error(cx, "perm is not a permutation");
    exprs[p] = k; /* input dim p is read at loop k */
    in_dim_of[k] = (int)p;
    identity &= p == k;
  }
  if (identity) return lw_set_out(cx, 0, x);
  for (int p = 0; p < rank; p++) dims[exprs[p]] = lw_ix_dim(cx, x, p);
  MlirValue result;
  o2m_status s;
  if (cx->for_jit) {
    s = jit_transpose(cx, x, out_type, dims, in_dim_of, rank, &result);
  } else {
    MlirAttribute map = lw_affine_map(cx, rank, rank, exprs);
    s = lw_index_generic(cx, out_type, dims, 1, &x, &map, lw_copy_body, NULL, &result);
  }
  return s ? s : lw_set_out(cx, 0, result);
}

/* ---- Concat, Split ---------------------------------------------------------------- */

/* Up to this many inputs, Concat is a chain of insert_slices into one
 * empty tensor, which lets bufferization write each input's producer
 * straight into the result. Longer chains cost one-shot bufferization's
 * analysis time that grows with the cube of their length (a detector's
 * per-class results, 90 inputs: 3 s of 22); those become one
 * tensor.concat, which copies each input into place. */
enum { CONCAT_CHAIN_MAX = 16 };

static o2m_status concat_as_one_op(lw_ctx *cx, int n, int axis, MlirType out_type) {
  MlirValue *inputs = o2m_arena_array(&cx->scratch, (size_t)n, sizeof(*inputs));
  if (!inputs) return lw_error(cx, "out of memory");
  for (int i = 0; i < n; i++) inputs[i] = lw_in(cx, i);
  char attrs[32];
  snprintf(attrs, sizeof attrs, "dim = %d : i64", axis);
  MlirOperation op = lw_op(cx, "tensor.concat", n, inputs, 1, &out_type, attrs, 0);
  if (mlirOperationIsNull(op)) return lw_error(cx, "internal: cannot create tensor.concat");
  return lw_set_out(cx, 0, mlirOperationGetResult(op, 0));
}

o2m_status lw_lower_concat(lw_ctx *cx) {
  MlirType out_type = lw_tensor_type(cx, lw_out_type(cx, 0));
  MlirValue first = lw_in(cx, 0);
  if (mlirTypeIsNull(out_type) || mlirValueIsNull(first))
    return lw_unsupported(cx, "the output type is not known");
  int rank = (int)mlirShapedTypeGetRank(out_type);
  int axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", 0), rank);
  if (axis < 0) return O2M_ERR_INVALID;
  lw_ix dims[LW_MAX_RANK], offsets[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) dims[k] = lw_ix_dim(cx, first, k), offsets[k] = lw_ix_c(0);
  dims[axis] = lw_ix_c(0);
  int n = cx->node->n_inputs;
  for (int i = 0; i < n; i++) {
    MlirValue x = lw_in(cx, i);
    if (mlirValueIsNull(x)) return lw_error(cx, "input %d is missing", i);
    dims[axis] = lw_ix_bin(cx, LW_IX_ADD, dims[axis], lw_ix_dim(cx, x, axis));
  }
  if (n > CONCAT_CHAIN_MAX) return concat_as_one_op(cx, n, axis, out_type);
  MlirValue result = lw_empty_ix(cx, out_type, dims);
  for (int i = 0; i < n; i++) {
    MlirValue x = lw_in(cx, i);
    lw_ix size = lw_ix_dim(cx, x, axis);
    result = lw_insert_slice(cx, x, result, offsets);
    offsets[axis] = lw_ix_bin(cx, LW_IX_ADD, offsets[axis], size);
  }
  return lw_set_out(cx, 0, result);
}

o2m_status lw_lower_split(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  int rank = lw_rank(x), n = cx->node->n_outputs;
  int axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", 0), rank);
  if (axis < 0) return O2M_ERR_INVALID;
  lw_ix dim = lw_ix_dim(cx, x, axis), *split = NULL;
  if (lw_in_present(cx, 1) && lw_in_ixs(cx, 1, &split) != n)
    return split ? lw_error(cx, "split has a different count than the %d outputs", n)
                 : lw_unsupported(cx, "split is not a 1-D tensor of static size");
  /* without split: parts of ceil(dim / n), the last one smaller */
  lw_ix chunk = lw_ix_bin(cx, LW_IX_CEILDIV, dim, lw_ix_c(n > 0 ? n : 1));
  lw_ix offsets[LW_MAX_RANK], sizes[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) offsets[k] = lw_ix_c(0), sizes[k] = lw_ix_dim(cx, x, k);
  for (int i = 0; i < n; i++) {
    const o2m_type *t = lw_out_type(cx, i);
    lw_ix size =
        split ? split[i]
              : lw_ix_clamp(
                    cx, lw_ix_bin(cx, LW_IX_SUB, dim, lw_ix_bin(cx, LW_IX_MUL, lw_ix_c(i), chunk)),
                    lw_ix_c(0), chunk);
    if (t->rank == rank && t->dims[axis].size >= 0) size = lw_ix_c(t->dims[axis].size);
    sizes[axis] = size;
    if (lw_out_present(cx, i)) {
      o2m_status s = lw_set_out(cx, i, lw_extract_slice(cx, x, offsets, sizes, NULL));
      if (s) return s;
    }
    offsets[axis] = lw_ix_bin(cx, LW_IX_ADD, offsets[axis], size);
  }
  return O2M_OK;
}

/* ---- Slice ------------------------------------------------------------------------- */

typedef struct slice_plan {
  MlirValue x;
  lw_ix start[LW_MAX_RANK], step[LW_MAX_RANK];
} slice_plan;

/* out[i] = x[start + i * step] */
static o2m_status slice_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                             MlirValue *out, void *user) {
  const slice_plan *p = user;
  MlirValue src[LW_MAX_RANK];
  int rank = lw_rank(p->x);
  for (int k = 0; k < rank; k++)
    src[k] = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_ADD, p->start[k],
                                       lw_ix_bin(cx, LW_IX_MUL, lw_ix_v(idx[k]), p->step[k])));
  *out = lw_extract(cx, p->x, src);
  return O2M_OK;
}

/* The start, end and step of each dim as written, before clamping. Axes
 * known at compile time place entries directly; runtime axes select them
 * per dim. */
typedef struct slice_raw {
  lw_ix start[LW_MAX_RANK], end[LW_MAX_RANK], step[LW_MAX_RANK];
  char touched[LW_MAX_RANK], positive[LW_MAX_RANK]; /* positive: every step that can apply is > 0 */
} slice_raw;

static o2m_status slice_place(lw_ctx *cx, slice_raw *r, int rank, int n, const lw_ix *starts,
                              const lw_ix *ends, const lw_ix *axes, const lw_ix *steps) {
  for (int k = 0; k < rank; k++) {
    r->start[k] = lw_ix_c(0), r->end[k] = lw_ix_c(INT64_MAX), r->step[k] = lw_ix_c(1);
    r->touched[k] = 0, r->positive[k] = 1;
  }
  for (int i = 0; i < n; i++) {
    lw_ix step = steps ? steps[i] : lw_ix_c(1);
    if (lw_ix_is_const(step) && step.c == 0) return lw_error(cx, "a step is 0");
    int positive = lw_ix_is_const(step) && step.c > 0;
    if (!axes || lw_ix_is_const(axes[i])) {
      int a = axes ? lw_norm_axis(cx, axes[i].c, rank) : i;
      if (a < 0 || a >= rank) return lw_error(cx, "slice entry %d is beyond rank %d", i, rank);
      if (r->touched[a]++) return lw_error(cx, "axis %d repeats", a);
      r->start[a] = starts[i], r->end[a] = ends[i], r->step[a] = step,
      r->positive[a] = (char)positive;
      continue;
    }
    lw_ix a = lw_ix_from_end(cx, axes[i], lw_ix_c(rank));
    for (int k = 0; k < rank; k++) {
      lw_ix here = lw_ix_bin(cx, LW_IX_EQ, a, lw_ix_c(k));
      r->start[k] = lw_ix_select(cx, here, starts[i], r->start[k]);
      r->end[k] = lw_ix_select(cx, here, ends[i], r->end[k]);
      r->step[k] = lw_ix_select(cx, here, step, r->step[k]);
      r->touched[k] = 1, r->positive[k] &= (char)positive;
    }
  }
  return O2M_OK;
}

/* Slice: bounds clamped as ONNX says (per the sign of the step); steps
 * known to be positive become tensor.extract_slice, others a gather. */
o2m_status lw_lower_slice(lw_ctx *cx) {
  slice_plan p;
  slice_raw r;
  p.x = lw_in(cx, 0);
  if (mlirValueIsNull(p.x)) return lw_error(cx, "input 0 is missing");
  int rank = lw_rank(p.x), all_positive = 1;
  lw_ix *starts, *ends, *axes = NULL, *steps = NULL, sizes[LW_MAX_RANK];
  int n = lw_in_ixs(cx, 1, &starts);
  if (n < 0 || lw_in_ixs(cx, 2, &ends) != n ||
      (lw_in_present(cx, 3) && lw_in_ixs(cx, 3, &axes) != n) ||
      (lw_in_present(cx, 4) && lw_in_ixs(cx, 4, &steps) != n))
    return lw_unsupported(cx,
                          "starts, ends, axes and steps must be 1-D tensors of one static size");
  o2m_status s = slice_place(cx, &r, rank, n, starts, ends, axes, steps);
  if (s) return s;
  for (int k = 0; k < rank; k++) {
    lw_ix d = lw_ix_dim(cx, p.x, k);
    p.start[k] = lw_ix_c(0), p.step[k] = r.step[k], sizes[k] = d;
    all_positive &= r.positive[k];
    if (!r.touched[k]) continue;
    lw_ix pos = r.positive[k] ? lw_ix_c(1) : lw_ix_bin(cx, LW_IX_GT, r.step[k], lw_ix_c(0));
    lw_ix hi = lw_ix_select(cx, pos, d, lw_ix_bin(cx, LW_IX_SUB, d, lw_ix_c(1)));
    p.start[k] = lw_ix_clamp(cx, lw_ix_from_end(cx, r.start[k], d), lw_ix_c(0), hi);
    lw_ix end = lw_ix_clamp(cx, lw_ix_from_end(cx, r.end[k], d),
                            lw_ix_select(cx, pos, lw_ix_c(0), lw_ix_c(-1)), hi);
    sizes[k] = lw_ix_bin(
        cx, LW_IX_MAX,
        lw_ix_bin(cx, LW_IX_CEILDIV, lw_ix_bin(cx, LW_IX_SUB, end, p.start[k]), r.step[k]),
        lw_ix_c(0));
  }
  MlirType out_type = lw_out_type_with(cx, 0, rank, sizes);
  if (mlirTypeIsNull(out_type)) return lw_unsupported(cx, "the output type is not known");
  for (int k = 0; k < rank; k++)
    if (!mlirShapedTypeIsDynamicDim(out_type, k))
      sizes[k] = lw_ix_c(mlirShapedTypeGetDimSize(out_type, k));
  if (all_positive) return lw_set_out(cx, 0, lw_extract_slice(cx, p.x, p.start, sizes, p.step));
  MlirValue result;
  s = lw_index_generic(cx, out_type, sizes, 0, NULL, NULL, slice_body, &p, &result);
  return s ? s : lw_set_out(cx, 0, result);
}

/* ---- Shape, Size, ConstantOfShape, Range ------------------------------------------ */

static MlirValue index_to_i64(lw_ctx *cx, lw_ix v) {
  if (lw_ix_is_const(v)) return lw_const_int(cx, lw_type(cx, "i64"), v.c);
  return lw_op1(cx, "arith.index_cast", 1, &v.v, lw_type(cx, "i64"), NULL);
}

o2m_status lw_lower_shape(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  int64_t rank = mlirShapedTypeGetRank(mlirValueGetType(x));
  int64_t start = lw_attr_int(cx, "start", 0), end = lw_attr_int(cx, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < start ? start : end > rank ? rank : end;
  MlirValue elems[LW_MAX_RANK];
  for (int64_t k = start; k < end; k++)
    elems[k - start] = index_to_i64(cx, lw_ix_dim(cx, x, (int)k));
  int64_t n = end - start;
  MlirType t = lw_tensor_type_of(cx, O2M_DT_INT64, 1, &n);
  return lw_set_out(cx, 0, lw_op1(cx, "tensor.from_elements", (int)n, elems, t, NULL));
}

o2m_status lw_lower_size(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  int rank = lw_rank(x);
  lw_ix count = lw_ix_c(1);
  for (int k = 0; k < rank; k++) count = lw_ix_bin(cx, LW_IX_MUL, count, lw_ix_dim(cx, x, k));
  MlirValue elem = index_to_i64(cx, count);
  return lw_set_out(cx, 0,
                    lw_op1(cx, "tensor.from_elements", 1, &elem,
                           lw_tensor_type_of(cx, O2M_DT_INT64, 0, NULL), NULL));
}

/* A tensor of `type` (dynamic sizes in dims) filled with scalar. */
static MlirValue filled(lw_ctx *cx, MlirType type, const lw_ix *dims, MlirValue scalar) {
  return lw_named(cx, "linalg.fill", 1, &scalar, lw_empty_ix(cx, type, dims), NULL);
}

o2m_status lw_lower_constant_of_shape(lw_ctx *cx) {
  lw_ix *dims;
  int n = lw_in_ixs(cx, 0, &dims);
  MlirType type = n >= 0 ? lw_out_type_with(cx, 0, n, dims) : (MlirType){NULL};
  if (mlirTypeIsNull(type) || mlirShapedTypeGetRank(type) != n)
    return lw_unsupported(cx, "the shape is not a 1-D tensor of static size");
  const o2m_attr *a = lw_attr(cx, "value");
  MlirValue scalar;
  if (a && a->type == O2M_ATTR_TENSOR && a->t) {
    MlirValue c = lw_const_tensor(cx, a->t);
    if (mlirValueIsNull(c) || a->t->count != 1)
      return lw_unsupported(cx, "value must be one element of a supported dtype");
    scalar = lw_extract_at(cx, c, 0);
  } else {
    scalar = lw_const_scalar(cx, O2M_DT_FLOAT, 0);
  }
  return lw_set_out(cx, 0, filled(cx, type, dims, scalar));
}

/* Range: count = max(ceil((limit - start) / delta), 0); out[i] = start +
 * i * delta, computed in f32 for f16/bf16. */
typedef struct range_plan {
  MlirValue start, delta;
  MlirType compute;
  int is_float;
} range_plan;

static MlirValue to_compute(lw_ctx *cx, MlirValue v, MlirType compute) {
  if (mlirTypeEqual(mlirValueGetType(v), compute)) return v;
  return lw_op1(cx, "arith.extf", 1, &v, compute, NULL);
}

static o2m_status range_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                             MlirValue *out, void *user) {
  const range_plan *p = user;
  MlirValue i;
  if (p->is_float) {
    MlirValue i64 = lw_op1(cx, "arith.index_cast", 1, idx, lw_type(cx, "i64"), NULL);
    i = lw_op1(cx, "arith.sitofp", 1, &i64, p->compute, NULL);
  } else {
    i = lw_op1(cx, "arith.index_cast", 1, idx, p->compute, NULL);
  }
  MlirValue prod_ops[2] = {i, p->delta};
  MlirValue sum_ops[2] = {p->start, lw_op1(cx, p->is_float ? "arith.mulf" : "arith.muli", 2,
                                           prod_ops, p->compute, NULL)};
  MlirValue v = lw_op1(cx, p->is_float ? "arith.addf" : "arith.addi", 2, sum_ops, p->compute, NULL);
  MlirType elem = mlirValueGetType(args[0]); /* the output element */
  *out = mlirTypeEqual(elem, p->compute) ? v : lw_op1(cx, "arith.truncf", 1, &v, elem, NULL);
  return O2M_OK;
}

static lw_ix range_count(lw_ctx *cx, const range_plan *p, MlirValue limit, o2m_dtype dt) {
  MlirValue diff_ops[2] = {limit, p->start};
  MlirValue diff =
      lw_op1(cx, p->is_float ? "arith.subf" : "arith.subi", 2, diff_ops, p->compute, NULL);
  MlirValue div_ops[2] = {diff, p->delta};
  MlirValue count =
      lw_op1(cx, p->is_float ? "arith.divf" : "arith.ceildivsi", 2, div_ops, p->compute, NULL);
  if (p->is_float) count = lw_op1(cx, "math.ceil", 1, &count, p->compute, NULL);
  return lw_ix_bin(cx, LW_IX_MAX,
                   lw_ix_v(lw_scalar_to_index(cx, count, p->is_float ? O2M_DT_FLOAT : dt)),
                   lw_ix_c(0));
}

o2m_status lw_lower_range(lw_ctx *cx) {
  o2m_dtype dt = lw_out_type(cx, 0)->elem;
  range_plan p = {lw_in_scalar(cx, 0), lw_in_scalar(cx, 2), {NULL}, lw_dtype_is_float(dt)};
  MlirValue limit = lw_in_scalar(cx, 1);
  if (mlirValueIsNull(p.start) || mlirValueIsNull(limit) || mlirValueIsNull(p.delta))
    return lw_error(cx, "start, limit and delta are required");
  p.compute = dt == O2M_DT_FLOAT16 || dt == O2M_DT_BFLOAT16 ? lw_type(cx, "f32")
                                                            : mlirValueGetType(p.start);
  p.start = to_compute(cx, p.start, p.compute);
  p.delta = to_compute(cx, p.delta, p.compute);
  limit = to_compute(cx, limit, p.compute);
  const o2m_type *t = lw_out_type(cx, 0);
  lw_ix n = t->rank == 1 && t->dims[0].size >= 0 ? lw_ix_c(t->dims[0].size)
                                                 : range_count(cx, &p, limit, dt);
  MlirType type = lw_out_type_with(cx, 0, 1, &n);
  if (mlirTypeIsNull(type)) return lw_unsupported(cx, "the output type is not known");
  MlirValue result;
  o2m_status s = lw_index_generic(cx, type, &n, 0, NULL, NULL, range_body, &p, &result);
  return s ? s : lw_set_out(cx, 0, result);
}
