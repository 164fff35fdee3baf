/* lower_scatter.c - Linalg lowerings written as scf.for nests that carry
 * the tensor being written (rows in lower_shape.def): scatters
 * (ScatterElements, ScatterND, Scatter) and the ops whose output size
 * depends on data (Compress, NonZero, Unique).
 *
 * Updates apply in order, so duplicate indices behave as in ONNX's
 * reference (the last write wins, reductions accumulate). Indices read
 * from data are made non-negative and clamped into range.
 */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_shape.h"

/* ---- loop nests ------------------------------------------------------------------ */

enum { MAX_CARRIED = 4 };

/* The innermost body: reads the loop indices and the carried values, sets
 * their next values. */
typedef o2m_status (*loop_body_fn)(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                                   MlirValue *next, void *user);

typedef struct loop_nest {
  int n, n_carried;
  const lw_ix *ubs;
  loop_body_fn body;
  void *user;
  MlirValue ivs[LW_MAX_RANK];
} loop_nest;

/* scf.for over [0, ubs[level]) around the deeper levels. */
static o2m_status nest_level(lw_ctx *cx, loop_nest *ln, int level, const MlirValue *carried,
                             MlirValue *out) {
  if (level == ln->n) return ln->body(cx, ln->ivs, carried, out, ln->user);
  lw_for_loop loop;
  MlirValue args[MAX_CARRIED], next[MAX_CARRIED];
  o2m_status s = lw_for_begin(cx, &loop, lw_const_index(cx, 0), lw_ix_value(cx, ln->ubs[level]),
                              ln->n_carried, carried, &ln->ivs[level], args);
  if (s) return s;
  s = nest_level(cx, ln, level + 1, args, next);
  lw_for_end(cx, &loop, s ? NULL : next, out);
  return s;
}

/* Runs body for every index of the sizes ubs (n of them, row-major),
 * carrying n_carried values from init to out. */
static o2m_status loops(lw_ctx *cx, int n, const lw_ix *ubs, int n_carried, const MlirValue *init,
                        loop_body_fn body, void *user, MlirValue *out) {
  loop_nest ln = {n, n_carried, ubs, body, user, {{NULL}}};
  return nest_level(cx, &ln, 0, init, out);
}

static MlirValue insert(lw_ctx *cx, MlirValue scalar, MlirValue dest, const MlirValue *idx) {
  MlirValue ops[LW_MAX_RANK + 2] = {scalar, dest};
  int rank = lw_rank(dest);
  for (int k = 0; k < rank; k++) ops[2 + k] = idx[k];
  return lw_op1(cx, "tensor.insert", 2 + rank, ops, mlirValueGetType(dest), NULL);
}

/* ---- ScatterElements, ScatterND, Scatter ------------------------------------------ */

/* The combining op of a reduction per kind of element. */
static const struct {
  const char *reduction, *f, *s, *u, *b; /* float, signed, unsigned, bool */
} reductions[] = {
    {"add", "arith.addf", "arith.addi", "arith.addi", "arith.ori"},
    {"mul", "arith.mulf", "arith.muli", "arith.muli", "arith.andi"},
    {"max", "arith.maximumf", "arith.maxsi", "arith.maxui", "arith.ori"},
    {"min", "arith.minimumf", "arith.minsi", "arith.minui", "arith.andi"},
};

typedef struct scatter_plan {
  MlirValue indices, updates;
  o2m_dtype idt;
  const char *combine;     /* NULL: replace */
  int nd, axis, q, k;      /* nd: ScatterND (k: the last dim of indices) */
  lw_ix dims[LW_MAX_RANK]; /* of data */
} scatter_plan;

/* One update: acc[pos] = combine(acc[pos], updates[ivs]). */
static o2m_status scatter_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *acc,
                               MlirValue *next, void *user) {
  const scatter_plan *p = user;
  MlirValue pos[LW_MAX_RANK], at[LW_MAX_RANK];
  int r = lw_rank(acc[0]);
  if (p->nd) { /* pos = indices[ivs[..q-1], 0..k-1] ++ ivs[q-1..] */
    for (int j = 0; j < p->q - 1; j++) at[j] = ivs[j];
    for (int j = 0; j < p->k; j++) {
      at[p->q - 1] = lw_const_index(cx, j);
      pos[j] = lw_norm_index(cx, lw_extract(cx, p->indices, at), p->idt, p->dims[j]);
    }
    for (int t = p->k; t < r; t++) pos[t] = ivs[p->q - 1 + t - p->k];
  } else {
    for (int t = 0; t < r; t++)
      pos[t] = t == p->axis ? lw_norm_index(cx, lw_extract(cx, p->indices, ivs), p->idt, p->dims[t])
                            : ivs[t];
  }
  MlirValue v = lw_extract(cx, p->updates, ivs);
  if (p->combine) {
    MlirValue ops[2] = {lw_extract(cx, acc[0], pos), v};
    v = lw_op1(cx, p->combine, 2, ops, mlirValueGetType(v), NULL);
  }
  next[0] = insert(cx, v, acc[0], pos);
  return O2M_OK;
}

static o2m_status lower_scatter(lw_ctx *cx, int nd) {
  MlirValue in[3];
  o2m_status s = lw_inputs(cx, 3, in);
  if (s) return s;
  scatter_plan p = {.indices = in[1],
                    .updates = in[2],
                    .idt = lw_in_type(cx, 1)->elem,
                    .nd = nd,
                    .q = lw_rank(in[1])};
  o2m_dtype dt = lw_in_type(cx, 0)->elem;
  int r = lw_rank(in[0]), n = lw_rank(in[2]);
  const char *reduction = lw_attr_string(cx, "reduction", "none");
  if (strcmp(reduction, "none") != 0) {
    size_t i = 0;
    while (i < sizeof(reductions) / sizeof(reductions[0]) &&
           strcmp(reductions[i].reduction, reduction))
      i++;
    if (i == sizeof(reductions) / sizeof(reductions[0]))
      return lw_error(cx, "unknown reduction '%s'", reduction);
    p.combine = lw_dtype_is_float(dt)    ? reductions[i].f
                : dt == O2M_DT_BOOL      ? reductions[i].b
                : lw_dtype_is_signed(dt) ? reductions[i].s
                                         : reductions[i].u;
  }
  for (int k = 0; k < r; k++) p.dims[k] = lw_ix_dim(cx, in[0], k);
  lw_ix ubs[LW_MAX_RANK];
  for (int k = 0; k < n; k++) ubs[k] = lw_ix_dim(cx, in[2], k);
  if (nd) {
    lw_ix last = p.q > 0 ? lw_ix_dim(cx, p.indices, p.q - 1) : lw_ix_c(-1);
    if (!lw_ix_is_const(last)) return lw_unsupported(cx, "the last dim of indices is not static");
    p.k = (int)last.c;
    if (p.k < 0 || p.k > r || n != p.q - 1 + r - p.k)
      return lw_error(cx, "indices, updates and data ranks do not fit");
  } else {
    p.axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", 0), r);
    if (p.axis < 0) return O2M_ERR_INVALID;
    if (p.q != r || n != r) return lw_error(cx, "data, indices and updates must have one rank");
  }
  MlirValue result;
  s = loops(cx, n, ubs, 1, &in[0], scatter_body, &p, &result);
  return s ? s : lw_set_out(cx, 0, result);
}

o2m_status lw_lower_scatter_elements(lw_ctx *cx) { return lower_scatter(cx, 0); }
o2m_status lw_lower_scatter_nd(lw_ctx *cx) { return lower_scatter(cx, 1); }

/* ---- Compress, NonZero: sizes that depend on data ------------------------------------ */

/* Counting and writing share one plan: each step adds `keep` (0 or 1) to
 * a position, writes at the position unconditionally into a buffer one
 * longer than the count, and the last (scratch) slot is sliced off. */
typedef struct select_plan {
  MlirValue x, cond; /* Compress: cond 1-D bool; NonZero: cond null */
  int axis;
} select_plan;

/* 1 when the step at ivs keeps its element: Compress (one loop):
 * cond[j]; NonZero (a loop per dim): x[ivs] != 0. */
static lw_ix kept(lw_ctx *cx, const select_plan *p, const MlirValue *ivs) {
  if (!mlirValueIsNull(p->cond))
    return lw_ix_v(lw_scalar_to_index(cx, lw_extract(cx, p->cond, ivs), O2M_DT_BOOL));
  o2m_dtype dt = lw_in_type(cx, 0)->elem;
  MlirValue x = lw_extract(cx, p->x, ivs), zero = lw_const_scalar(cx, dt, 0);
  MlirValue nz = lw_dtype_is_float(dt) ? lw_cmpf(cx, LW_F_UNE, x, zero) /* NaN counts */
                                       : lw_cmpi(cx, LW_I_NE, x, zero);
  return lw_ix_v(lw_scalar_to_index(cx, nz, O2M_DT_BOOL));
}

static o2m_status count_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                             MlirValue *next, void *user) {
  next[0] = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_ADD, lw_ix_v(carried[0]), kept(cx, user, ivs)));
  return O2M_OK;
}

/* Compress: the slab at ivs[axis] goes to position pos. NonZero: the
 * coordinates ivs go to column pos. */
static o2m_status write_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                             MlirValue *next, void *user) {
  const select_plan *p = user;
  MlirValue acc = carried[0], pos = carried[1];
  int r = lw_rank(p->x);
  if (!mlirValueIsNull(p->cond)) {
    lw_ix offsets[LW_MAX_RANK], sizes[LW_MAX_RANK];
    for (int k = 0; k < r; k++) offsets[k] = lw_ix_c(0), sizes[k] = lw_ix_dim(cx, p->x, k);
    offsets[p->axis] = lw_ix_v(ivs[0]), sizes[p->axis] = lw_ix_c(1);
    MlirValue slab = lw_extract_slice(cx, p->x, offsets, sizes, NULL);
    offsets[p->axis] = lw_ix_v(pos);
    acc = lw_insert_slice(cx, slab, acc, offsets);
  } else {
    for (int d = 0; d < r; d++) {
      MlirValue at[2] = {lw_const_index(cx, d), pos};
      acc =
          insert(cx, lw_op1(cx, "arith.index_cast", 1, &ivs[d], lw_type(cx, "i64"), NULL), acc, at);
    }
  }
  next[0] = acc;
  next[1] = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_ADD, lw_ix_v(pos), kept(cx, p, ivs)));
  return O2M_OK;
}

/* Counts over ubs (n loops), writes into a tensor of `rank` dims (sizes
 * in dims) whose dim `grow` is the count plus one, and sets output 0 to
 * the counted part. */
static o2m_status select_out(lw_ctx *cx, select_plan *p, int n, const lw_ix *ubs, int rank,
                             lw_ix *dims, int grow) {
  MlirValue count, init[2] = {lw_const_index(cx, 0)}, done[2];
  o2m_status s = loops(cx, n, ubs, 1, init, count_body, p, &count);
  if (s) return s;
  dims[grow] = lw_ix_bin(cx, LW_IX_ADD, lw_ix_v(count), lw_ix_c(1));
  int64_t sizes[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) sizes[k] = lw_ix_is_const(dims[k]) ? dims[k].c : -1;
  MlirType type = lw_tensor_type_of(cx, lw_out_type(cx, 0)->elem, rank, sizes);
  init[0] = lw_empty_ix(cx, type, dims);
  init[1] = lw_const_index(cx, 0);
  if ((s = loops(cx, n, ubs, 2, init, write_body, p, done))) return s;
  lw_ix offsets[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) offsets[k] = lw_ix_c(0);
  dims[grow] = lw_ix_v(count);
  return lw_set_out(cx, 0, lw_extract_slice(cx, done[0], offsets, dims, NULL));
}

/* Compress: the slabs along axis (of the flattened input without axis)
 * whose condition is true; a condition shorter than the axis ends it. */
o2m_status lw_lower_compress(lw_ctx *cx) {
  MlirValue in[2];
  o2m_status s = lw_inputs(cx, 2, in);
  if (s) return s;
  select_plan p = {in[0], in[1], 0};
  const o2m_attr *axis = lw_attr(cx, "axis");
  if (lw_rank(in[1]) != 1) return lw_error(cx, "condition is not 1-D");
  if (axis) {
    if ((p.axis = lw_norm_axis(cx, axis->i, lw_rank(in[0]))) < 0) return O2M_ERR_INVALID;
  } else {
    lw_ix total = lw_ix_c(1);
    for (int k = 0; k < lw_rank(in[0]); k++)
      total = lw_ix_bin(cx, LW_IX_MUL, total, lw_ix_dim(cx, in[0], k));
    o2m_dim flat = {lw_ix_is_const(total) ? total.c : -1, NULL};
    o2m_type flat_t = {O2M_TYPE_TENSOR, lw_in_type(cx, 0)->elem, 1, &flat, NULL};
    p.x = lw_reshape(cx, in[0], lw_in_type(cx, 0), &flat_t, &total);
    if (mlirValueIsNull(p.x)) return O2M_ERR_UNSUPPORTED;
  }
  int r = lw_rank(p.x);
  lw_ix dims[LW_MAX_RANK];
  for (int k = 0; k < r; k++) dims[k] = lw_ix_dim(cx, p.x, k);
  lw_ix n = lw_ix_bin(cx, LW_IX_MIN, lw_ix_dim(cx, p.cond, 0), dims[p.axis]);
  return select_out(cx, &p, 1, &n, r, dims, p.axis);
}

/* NonZero: a [rank, count] int64 tensor of the coordinates of non-zero
 * elements, in row-major order. */
o2m_status lw_lower_nonzero(lw_ctx *cx) {
  select_plan p = {lw_in(cx, 0), {NULL}, 0};
  if (mlirValueIsNull(p.x)) return lw_error(cx, "input 0 is missing");
  int r = lw_rank(p.x);
  lw_ix ubs[LW_MAX_RANK], dims[2] = {lw_ix_c(r), lw_ix_c(0)};
  for (int k = 0; k < r; k++) ubs[k] = lw_ix_dim(cx, p.x, k);
  return select_out(cx, &p, r, ubs, 2, dims, 1);
}

/* ---- Unique ------------------------------------------------------------------------- */

/* Unique compares slices pairwise (quadratic in their count, fine for the
 * small tensors it meets in practice). The input is viewed as [pre, n,
 * post]: slice j is [:, j, :], compared lexicographically in row-major
 * order (one element per slice without an axis). Per slice i: first[i],
 * the first slice equal to it; count[i], how many equal it; rank[i], its
 * unique value's position in the output (sorted: how many unique values
 * order before it; else how many first occurrences precede first[i]). */
typedef struct unique_plan {
  MlirValue v; /* the input as [pre, n, post] */
  lw_ix pre, n, post;
  o2m_dtype dt;
  int sorted;
  MlirValue i, j, first, count, rank, n_unique; /* i, j: the slices being compared */
  int n_out;
} unique_plan;

/* x viewed as a tensor of n dims of sizes dims. */
static MlirValue view_as(lw_ctx *cx, MlirValue x, const o2m_type *x_t, int n, const lw_ix *dims) {
  o2m_dim d[LW_MAX_RANK];
  for (int k = 0; k < n; k++) d[k] = (o2m_dim){lw_ix_is_const(dims[k]) ? dims[k].c : -1, NULL};
  o2m_type t = {O2M_TYPE_TENSOR, x_t->elem, n, d, NULL};
  return lw_reshape(cx, x, x_t, &t, dims);
}

static MlirValue logic(lw_ctx *cx, const char *op, MlirValue a, MlirValue b) {
  MlirValue ops[2] = {a, b};
  return lw_op1(cx, op, 2, ops, lw_type(cx, "i1"), NULL);
}

/* -1, 0 or 1 as a orders before, equal to or after b (NaN after numbers). */
static lw_ix elem_order(lw_ctx *cx, o2m_dtype dt, MlirValue a, MlirValue b) {
  MlirValue lt, gt;
  if (lw_dtype_is_float(dt)) {
    MlirValue a_nan = lw_cmpf(cx, LW_F_UNO, a, a), b_nan = lw_cmpf(cx, LW_F_UNO, b, b);
    MlirValue a_num = lw_cmpf(cx, LW_F_ORD, a, a), b_num = lw_cmpf(cx, LW_F_ORD, b, b);
    lt = logic(cx, "arith.ori", lw_cmpf(cx, LW_F_OLT, a, b), logic(cx, "arith.andi", a_num, b_nan));
    gt = logic(cx, "arith.ori", lw_cmpf(cx, LW_F_OGT, a, b), logic(cx, "arith.andi", a_nan, b_num));
  } else {
    int s = lw_dtype_is_signed(dt);
    lt = lw_cmpi(cx, s ? LW_I_SLT : LW_I_ULT, a, b);
    gt = lw_cmpi(cx, s ? LW_I_SGT : LW_I_UGT, a, b);
  }
  return lw_ix_select(cx, lw_ix_v(lt), lw_ix_c(-1),
                      lw_ix_select(cx, lw_ix_v(gt), lw_ix_c(1), lw_ix_c(0)));
}

static o2m_status order_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                             MlirValue *next, void *user) {
  const unique_plan *p = user;
  MlirValue a[3] = {ivs[0], p->i, ivs[1]}, b[3] = {ivs[0], p->j, ivs[1]};
  lw_ix state = lw_ix_v(carried[0]);
  lw_ix c = elem_order(cx, p->dt, lw_extract(cx, p->v, a), lw_extract(cx, p->v, b));
  next[0] = lw_ix_value(cx, lw_ix_select(cx, lw_ix_bin(cx, LW_IX_EQ, state, lw_ix_c(0)), c, state));
  return O2M_OK;
}

/* The order of slice p->i against slice p->j. */
static o2m_status slice_order(lw_ctx *cx, unique_plan *p, lw_ix *order) {
  MlirValue zero = lw_const_index(cx, 0), result;
  if (lw_ix_is_const(p->pre) && p->pre.c == 1 && lw_ix_is_const(p->post) && p->post.c == 1) {
    MlirValue a[3] = {zero, p->i, zero}, b[3] = {zero, p->j, zero};
    *order = elem_order(cx, p->dt, lw_extract(cx, p->v, a), lw_extract(cx, p->v, b));
    return O2M_OK;
  }
  lw_ix ubs[2] = {p->pre, p->post};
  o2m_status s = loops(cx, 2, ubs, 1, &zero, order_body, p, &result);
  *order = lw_ix_v(result);
  return s;
}

static lw_ix flag(lw_ctx *cx, lw_ix cond) { return lw_ix_select(cx, cond, lw_ix_c(1), lw_ix_c(0)); }

/* first[i] and count[i]: over j, the first equal slice and how many. */
static o2m_status equal_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                             MlirValue *next, void *user) {
  unique_plan *p = user;
  lw_ix order;
  p->j = ivs[0];
  o2m_status s = slice_order(cx, p, &order);
  lw_ix eq = lw_ix_bin(cx, LW_IX_EQ, order, lw_ix_c(0)), first = lw_ix_v(carried[0]);
  next[0] =
      lw_ix_value(cx, lw_ix_select(cx, eq, lw_ix_bin(cx, LW_IX_MIN, first, lw_ix_v(p->j)), first));
  next[1] = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_ADD, lw_ix_v(carried[1]), flag(cx, eq)));
  return s;
}

static o2m_status first_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                             MlirValue *next, void *user) {
  unique_plan *p = user;
  MlirValue init[2] = {lw_ix_value(cx, p->n), lw_const_index(cx, 0)}, found[2];
  p->i = ivs[0];
  o2m_status s = loops(cx, 1, &p->n, 2, init, equal_body, p, found);
  if (s) return s;
  next[0] = insert(cx, found[0], carried[0], ivs);
  next[1] = insert(cx, found[1], carried[1], ivs);
  next[2] = lw_ix_value(
      cx, lw_ix_bin(cx, LW_IX_ADD, lw_ix_v(carried[2]),
                    flag(cx, lw_ix_bin(cx, LW_IX_EQ, lw_ix_v(found[0]), lw_ix_v(ivs[0])))));
  return O2M_OK;
}

/* rank[i]: over j, the unique values (first occurrences) before i's. */
static o2m_status before_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                              MlirValue *next, void *user) {
  unique_plan *p = user;
  lw_ix order = lw_ix_c(0), before;
  o2m_status s = O2M_OK;
  p->j = ivs[0];
  lw_ix is_first = lw_ix_bin(cx, LW_IX_EQ, lw_ix_v(lw_extract(cx, p->first, ivs)), lw_ix_v(p->j));
  if (p->sorted) { /* j's value orders before i's */
    s = slice_order(cx, p, &order);
    before = lw_ix_bin(cx, LW_IX_GT, order, lw_ix_c(0));
  } else { /* j is a first occurrence before i's */
    before = lw_ix_bin(cx, LW_IX_LT, lw_ix_v(p->j), lw_ix_v(lw_extract(cx, p->first, &p->i)));
  }
  next[0] = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_ADD, lw_ix_v(carried[0]),
                                      flag(cx, lw_ix_bin(cx, LW_IX_AND, is_first, before))));
  return s;
}

static o2m_status rank_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                            MlirValue *next, void *user) {
  unique_plan *p = user;
  MlirValue zero = lw_const_index(cx, 0), rank;
  p->i = ivs[0];
  o2m_status s = loops(cx, 1, &p->n, 1, &zero, before_body, p, &rank);
  if (!s) next[0] = insert(cx, rank, carried[0], ivs);
  return s;
}

static MlirValue to_i64(lw_ctx *cx, MlirValue index) {
  return lw_op1(cx, "arith.index_cast", 1, &index, lw_type(cx, "i64"), NULL);
}

/* Writes slice i's outputs: its unique value, first index and count at
 * rank[i] when it is a first occurrence (else into the scratch slot after
 * the last), and inverse[i] = rank[i]. Carried: the present outputs. */
static o2m_status write_unique_body(lw_ctx *cx, const MlirValue *ivs, const MlirValue *carried,
                                    MlirValue *next, void *user) {
  unique_plan *p = user;
  lw_ix first = lw_ix_v(lw_extract(cx, p->first, ivs)),
        rank = lw_ix_v(lw_extract(cx, p->rank, ivs));
  MlirValue pos = lw_ix_value(cx, lw_ix_select(cx, lw_ix_bin(cx, LW_IX_EQ, first, lw_ix_v(ivs[0])),
                                               rank, lw_ix_v(p->n_unique)));
  lw_ix offsets[3] = {lw_ix_c(0), lw_ix_v(ivs[0]), lw_ix_c(0)},
        sizes[3] = {p->pre, lw_ix_c(1), p->post};
  MlirValue slab = lw_extract_slice(cx, p->v, offsets, sizes, NULL);
  offsets[1] = lw_ix_v(pos);
  next[0] = lw_insert_slice(cx, slab, carried[0], offsets);
  MlirValue values[3] = {to_i64(cx, ivs[0]), to_i64(cx, lw_ix_value(cx, rank)),
                         to_i64(cx, lw_extract(cx, p->count, ivs))};
  for (int o = 1; o < p->n_out; o++)
    next[o] = insert(cx, values[o - 1], carried[o], o == 2 ? ivs : &pos);
  return O2M_OK;
}

/* A new 1-D tensor of n elements of type elem. */
static MlirValue new_vector(lw_ctx *cx, lw_ix n, MlirType elem) {
  int64_t size = lw_ix_is_const(n) ? n.c : mlirShapedTypeGetDynamicSize();
  return lw_empty_ix(cx, mlirRankedTensorTypeGet(1, &size, elem, mlirAttributeGetNull()), &n);
}

o2m_status lw_lower_unique(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  const o2m_type *x_t = lw_in_type(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  int r = lw_rank(x), axis = -1;
  unique_plan p = {.dt = x_t->elem,
                   .sorted = (int)lw_attr_int(cx, "sorted", 1),
                   .pre = lw_ix_c(1),
                   .post = lw_ix_c(1),
                   .n = lw_ix_c(1)};
  if (lw_attr(cx, "axis") && (axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", 0), r)) < 0)
    return O2M_ERR_INVALID;
  for (int k = 0; k < r; k++) {
    lw_ix *part = axis < 0 || k == axis ? &p.n : k < axis ? &p.pre : &p.post;
    *part = lw_ix_bin(cx, LW_IX_MUL, *part, lw_ix_dim(cx, x, k));
  }
  lw_ix view[3] = {p.pre, p.n, p.post};
  if (mlirValueIsNull(p.v = view_as(cx, x, x_t, 3, view))) return O2M_ERR_UNSUPPORTED;
  for (p.n_out = cx->node->n_outputs; p.n_out > 1 && !lw_out_present(cx, p.n_out - 1);) p.n_out--;
  /* first and count per slice, and the number of unique slices */
  MlirType index = lw_index_type(cx);
  MlirValue init[4] = {new_vector(cx, p.n, index), new_vector(cx, p.n, index),
                       lw_const_index(cx, 0)};
  MlirValue out[4];
  o2m_status s = loops(cx, 1, &p.n, 3, init, first_body, &p, out);
  if (s) return s;
  p.first = out[0], p.count = out[1], p.n_unique = out[2];
  /* rank per slice */
  init[0] = new_vector(cx, p.n, index);
  if ((s = loops(cx, 1, &p.n, 1, init, rank_body, &p, &p.rank))) return s;
  /* the outputs, each with a scratch slot */
  lw_ix slots = lw_ix_bin(cx, LW_IX_ADD, lw_ix_v(p.n_unique), lw_ix_c(1));
  lw_ix y_dims[3] = {p.pre, slots, p.post};
  int64_t y_sizes[3];
  for (int k = 0; k < 3; k++) y_sizes[k] = lw_ix_is_const(y_dims[k]) ? y_dims[k].c : -1;
  init[0] = lw_empty_ix(cx, lw_tensor_type_of(cx, p.dt, 3, y_sizes), y_dims);
  for (int o = 1; o < p.n_out; o++)
    init[o] = new_vector(cx, o == 2 ? p.n : slots, lw_type(cx, "i64"));
  if ((s = loops(cx, 1, &p.n, p.n_out, init, write_unique_body, &p, out))) return s;
  lw_ix zeros[3] = {lw_ix_c(0), lw_ix_c(0), lw_ix_c(0)};
  y_dims[1] = lw_ix_v(p.n_unique);
  MlirValue y = lw_extract_slice(cx, out[0], zeros, y_dims, NULL);
  lw_ix y_out[LW_MAX_RANK];
  for (int k = 0; k < r; k++) y_out[k] = k == axis ? y_dims[1] : lw_ix_dim(cx, x, k);
  o2m_dim y_view[3] = {{y_sizes[0], NULL}, {-1, NULL}, {y_sizes[2], NULL}};
  o2m_type y_t = {O2M_TYPE_TENSOR, p.dt, 3, y_view, NULL};
  y = lw_reshape(cx, y, &y_t, lw_out_type(cx, 0), axis < 0 ? &y_dims[1] : y_out);
  if (mlirValueIsNull(y) || (s = lw_set_out(cx, 0, y))) return s ? s : O2M_ERR_UNSUPPORTED;
  for (int o = 1; o < p.n_out && !s; o++)
    s = lw_set_out(cx, o, o == 2 ? out[o] : lw_extract_slice(cx, out[o], zeros, &y_dims[1], NULL));
  return s;
}
