/* lower_index.c - Linalg lowerings of the ops whose output elements come
 * from computed positions (rows in lower_shape.def): gathers (Gather,
 * GatherElements, GatherND), broadcasts and pads (Expand, Tile, Pad,
 * CenterCropPad), index patterns (OneHot, Trilu, EyeLike, DepthToSpace,
 * SpaceToDepth, ReverseSequence). Scatters and data-dependent sizes are in
 * lower_scatter.c.
 *
 * Gathers are linalg.generic ops over the output whose body computes the
 * source position from linalg.index and reads it with tensor.extract.
 * Indices read from data are made non-negative and clamped into range, so
 * a bad index never reads outside a tensor.
 */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_shape.h"

/* ---- helpers ------------------------------------------------------------ */

/* The generic over output 0 (dims: its sizes), then sets output 0. */
static o2m_status gather_out(lw_ctx *cx, int rank, const lw_ix *dims, int n_ins,
                             const MlirValue *ins, const MlirAttribute *maps, lw_index_body_fn body,
                             void *plan) {
  MlirType type = lw_out_type_with(cx, 0, rank, dims);
  if (mlirTypeIsNull(type)) return lw_unsupported(cx, "the output type is not known");
  MlirValue result;
  o2m_status s = lw_index_generic(cx, type, dims, n_ins, ins, maps, body, plan, &result);
  return s ? s : lw_set_out(cx, 0, result);
}

/* ---- Gather, GatherElements, GatherND ------------------------------------- */

typedef struct gather_plan {
  MlirValue data, indices;
  o2m_dtype idt;
  int axis, q, r, k, batch;
  lw_ix dims[LW_MAX_RANK]; /* of data */
} gather_plan;

/* The plan of data in[0] and indices in[1]. */
static gather_plan gather_plan_of(lw_ctx *cx, const MlirValue *in) {
  gather_plan p = {.data = in[0],
                   .indices = in[1],
                   .idt = lw_in_type(cx, 1)->elem,
                   .q = lw_rank(in[1]),
                   .r = lw_rank(in[0])};
  for (int k = 0; k < p.r; k++) p.dims[k] = lw_ix_dim(cx, p.data, k);
  return p;
}

/* Gather: out[a.., i.., b..] = data[a.., indices[i..], b..] */
static o2m_status gather_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                              MlirValue *out, void *user) {
  const gather_plan *p = user;
  MlirValue src[LW_MAX_RANK];
  for (int k = 0; k < p->r; k++)
    src[k] = k < p->axis    ? idx[k]
             : k == p->axis ? lw_norm_index(cx, args[0], p->idt, p->dims[k])
                            : idx[k + p->q - 1];
  *out = lw_extract(cx, p->data, src);
  return O2M_OK;
}

o2m_status lw_lower_gather(lw_ctx *cx) {
  MlirValue in[2];
  o2m_status s = lw_inputs(cx, 2, in);
  if (s) return s;
  gather_plan p = gather_plan_of(cx, in);
  p.axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", 0), p.r);
  int n = p.r + p.q - 1, exprs[LW_MAX_RANK];
  if (p.axis < 0) return O2M_ERR_INVALID;
  if (n > LW_MAX_RANK) return lw_unsupported(cx, "rank above %d", LW_MAX_RANK);
  lw_ix dims[LW_MAX_RANK];
  for (int k = 0; k < n; k++)
    dims[k] = k < p.axis         ? p.dims[k]
              : k < p.axis + p.q ? lw_ix_dim(cx, p.indices, k - p.axis)
                                 : p.dims[k - p.q + 1];
  for (int j = 0; j < p.q; j++) exprs[j] = p.axis + j;
  MlirAttribute map = lw_affine_map(cx, n, p.q, exprs);
  return gather_out(cx, n, dims, 1, &p.indices, &map, gather_body, &p);
}

/* GatherElements: out[i] = data[i with i[axis] = indices[i]] */
static o2m_status gather_elements_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                                       MlirValue *out, void *user) {
  const gather_plan *p = user;
  MlirValue src[LW_MAX_RANK];
  for (int k = 0; k < p->r; k++)
    src[k] = k == p->axis ? lw_norm_index(cx, args[0], p->idt, p->dims[k]) : idx[k];
  *out = lw_extract(cx, p->data, src);
  return O2M_OK;
}

o2m_status lw_lower_gather_elements(lw_ctx *cx) {
  MlirValue in[2];
  o2m_status s = lw_inputs(cx, 2, in);
  if (s) return s;
  gather_plan p = gather_plan_of(cx, in);
  p.axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", 0), p.r);
  if (p.axis < 0) return O2M_ERR_INVALID;
  if (p.q != p.r) return lw_error(cx, "indices has rank %d, data rank %d", p.q, p.r);
  lw_ix dims[LW_MAX_RANK];
  for (int k = 0; k < p.r; k++) dims[k] = lw_ix_dim(cx, p.indices, k);
  MlirAttribute map = lw_identity_map(cx, p.r);
  return gather_out(cx, p.r, dims, 1, &p.indices, &map, gather_elements_body, &p);
}

/* GatherND: out[b.., i.., t..] = data[b.., indices[b.., i.., 0..k-1], t..] */
static o2m_status gather_nd_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                                 MlirValue *out, void *user) {
  const gather_plan *p = user;
  MlirValue src[LW_MAX_RANK], at[LW_MAX_RANK];
  for (int k = 0; k < p->q - 1; k++) at[k] = idx[k];
  for (int k = 0; k < p->batch; k++) src[k] = idx[k];
  for (int j = 0; j < p->k; j++) {
    at[p->q - 1] = lw_const_index(cx, j);
    src[p->batch + j] =
        lw_norm_index(cx, lw_extract(cx, p->indices, at), p->idt, p->dims[p->batch + j]);
  }
  for (int t = p->batch + p->k; t < p->r; t++) src[t] = idx[p->q - 1 + t - p->batch - p->k];
  *out = lw_extract(cx, p->data, src);
  return O2M_OK;
}

o2m_status lw_lower_gather_nd(lw_ctx *cx) {
  MlirValue in[2];
  o2m_status s = lw_inputs(cx, 2, in);
  if (s) return s;
  gather_plan p = gather_plan_of(cx, in);
  p.batch = (int)lw_attr_int(cx, "batch_dims", 0);
  lw_ix last = p.q > 0 ? lw_ix_dim(cx, p.indices, p.q - 1) : lw_ix_c(-1);
  if (!lw_ix_is_const(last)) return lw_unsupported(cx, "the last dim of indices is not static");
  p.k = (int)last.c;
  if (p.q < 1 || p.batch < 0 || p.batch >= p.q || p.k < 0 || p.batch + p.k > p.r)
    return lw_error(cx, "indices of rank %d with batch_dims %d do not fit data of rank %d", p.q,
                    p.batch, p.r);
  lw_ix dims[LW_MAX_RANK];
  int n = 0;
  if (p.q - 1 + p.r - p.batch - p.k > LW_MAX_RANK)
    return lw_unsupported(cx, "rank above %d", LW_MAX_RANK);
  for (int k = 0; k < p.q - 1; k++) dims[n++] = lw_ix_dim(cx, p.indices, k);
  for (int t = p.batch + p.k; t < p.r; t++) dims[n++] = p.dims[t];
  return gather_out(cx, n, dims, 0, NULL, NULL, gather_nd_body, &p);
}

/* ---- Expand, Tile ----------------------------------------------------------- */

typedef struct bcast_plan {
  MlirValue x;
  int r, lead;             /* rank of x; output dims before x's first */
  lw_ix dims[LW_MAX_RANK]; /* of x */
  lw_ix reps[LW_MAX_RANK]; /* Tile */
} bcast_plan;

/* Expand with a dim that may or may not broadcast at runtime: reads
 * index 0 where x's dim is 1 (a test that folds for static dims). */
static o2m_status expand_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                              MlirValue *out, void *user) {
  const bcast_plan *p = user;
  MlirValue src[LW_MAX_RANK];
  for (int k = 0; k < p->r; k++) {
    lw_ix unit = lw_ix_bin(cx, LW_IX_EQ, p->dims[k], lw_ix_c(1));
    src[k] = lw_ix_value(cx, lw_ix_select(cx, unit, lw_ix_c(0), lw_ix_v(idx[k + p->lead])));
  }
  *out = lw_extract(cx, p->x, src);
  return O2M_OK;
}

/* Expand: numpy broadcasting of x against the shape input. Dims whose
 * broadcasting is static become affine maps; others test at runtime. */
o2m_status lw_lower_expand(lw_ctx *cx) {
  bcast_plan p;
  p.x = lw_in(cx, 0);
  lw_ix *e;
  int n = lw_in_ixs(cx, 1, &e);
  if (mlirValueIsNull(p.x) || n < 0)
    return lw_unsupported(cx, "the shape is not a 1-D tensor of static size");
  const o2m_type *in_t = lw_in_type(cx, 0), *out_t = lw_out_type(cx, 0);
  p.r = lw_rank(p.x);
  int rank = p.r > n ? p.r : n, exprs[LW_MAX_RANK], any_runtime = 0;
  p.lead = rank - p.r;
  if (out_t->rank != rank || rank > LW_MAX_RANK)
    return lw_unsupported(cx, "the output rank is not known or above %d", LW_MAX_RANK);
  lw_ix dims[LW_MAX_RANK];
  for (int l = 0; l < rank; l++) {
    int k = l - p.lead, j = l - (rank - n);
    if (k >= 0) p.dims[k] = lw_ix_dim(cx, p.x, k);
    dims[l] = k < 0 ? e[j]
              : j < 0
                  ? p.dims[k]
                  : lw_ix_select(cx, lw_ix_bin(cx, LW_IX_EQ, e[j], lw_ix_c(1)), p.dims[k], e[j]);
    if (out_t->dims[l].size >= 0) dims[l] = lw_ix_c(out_t->dims[l].size);
    if (k < 0) continue;
    int same_sym = in_t->rank == p.r && in_t->dims[k].sym && out_t->dims[l].sym &&
                   strcmp(in_t->dims[k].sym, out_t->dims[l].sym) == 0;
    int in_one = lw_ix_is_const(p.dims[k]) && p.dims[k].c == 1;
    int equal = same_sym ||
                (lw_ix_is_const(p.dims[k]) && lw_ix_is_const(dims[l]) && p.dims[k].c == dims[l].c);
    any_runtime |= !in_one && !equal; /* x's dim may be 1 at runtime, below the output's */
    exprs[k] = in_one ? -1 : l;
  }
  if (any_runtime) return gather_out(cx, rank, dims, 0, NULL, NULL, expand_body, &p);
  MlirType out_type = lw_tensor_type(cx, out_t);
  if (!mlirTypeIsNull(out_type) && mlirTypeEqual(out_type, mlirValueGetType(p.x)))
    return lw_set_out(cx, 0, p.x); /* nothing broadcasts */
  MlirAttribute map = lw_affine_map(cx, rank, p.r, exprs);
  return gather_out(cx, rank, dims, 1, &p.x, &map, lw_copy_body, NULL);
}

/* Tile: out[i] = x[i mod dims] */
static o2m_status tile_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                            void *user) {
  const bcast_plan *p = user;
  MlirValue src[LW_MAX_RANK];
  for (int k = 0; k < p->r; k++) {
    int once = lw_ix_is_const(p->reps[k]) && p->reps[k].c == 1;
    int unit = lw_ix_is_const(p->dims[k]) && p->dims[k].c == 1;
    src[k] = once ? idx[k]
                  : lw_ix_value(cx, unit ? lw_ix_c(0)
                                         : lw_ix_bin(cx, LW_IX_REM, lw_ix_v(idx[k]), p->dims[k]));
  }
  *out = lw_extract(cx, p->x, src);
  return O2M_OK;
}

o2m_status lw_lower_tile(lw_ctx *cx) {
  bcast_plan p;
  p.x = lw_in(cx, 0);
  lw_ix *reps, dims[LW_MAX_RANK];
  if (mlirValueIsNull(p.x)) return lw_error(cx, "input 0 is missing");
  p.r = lw_rank(p.x);
  if (lw_in_ixs(cx, 1, &reps) != p.r)
    return lw_unsupported(cx, "repeats is not a 1-D tensor of the input's rank");
  for (int k = 0; k < p.r; k++) {
    p.dims[k] = lw_ix_dim(cx, p.x, k);
    p.reps[k] = reps[k];
    dims[k] = lw_ix_bin(cx, LW_IX_MUL, p.dims[k], reps[k]);
  }
  return gather_out(cx, p.r, dims, 0, NULL, NULL, tile_body, &p);
}

/* ---- Pad, CenterCropPad ----------------------------------------------------- */

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP, PAD_MODE_COUNT } pad_mode;
static const char *const pad_modes[PAD_MODE_COUNT] = {"constant", "reflect", "edge", "wrap"};

typedef struct pad_plan {
  MlirValue x, value; /* value: the constant (null: zero of the element type) */
  pad_mode mode;
  int r;
  lw_ix dims[LW_MAX_RANK], before[LW_MAX_RANK];
} pad_plan;

/* The source position of output position i along dim k (s = i - before),
 * and whether it lies inside x (constant mode only). */
static MlirValue pad_source(lw_ctx *cx, const pad_plan *p, int k, MlirValue i, lw_ix *inside) {
  lw_ix d = p->dims[k], s = lw_ix_bin(cx, LW_IX_SUB, lw_ix_v(i), p->before[k]);
  lw_ix last = lw_ix_bin(cx, LW_IX_SUB, d, lw_ix_c(1)), m;
  switch (p->mode) {
  case PAD_REFLECT: { /* period 2 (d - 1), folded back */
    lw_ix period = lw_ix_bin(cx, LW_IX_MAX, lw_ix_bin(cx, LW_IX_MUL, last, lw_ix_c(2)), lw_ix_c(1));
    m = lw_ix_bin(cx, LW_IX_REM, s, period);
    m = lw_ix_select(cx, lw_ix_bin(cx, LW_IX_LT, m, lw_ix_c(0)),
                     lw_ix_bin(cx, LW_IX_ADD, m, period), m);
    m = lw_ix_select(cx, lw_ix_bin(cx, LW_IX_LT, m, d), m, lw_ix_bin(cx, LW_IX_SUB, period, m));
    break;
  }
  case PAD_WRAP:
    m = lw_ix_bin(cx, LW_IX_REM, s, d);
    m = lw_ix_select(cx, lw_ix_bin(cx, LW_IX_LT, m, lw_ix_c(0)), lw_ix_bin(cx, LW_IX_ADD, m, d), m);
    break;
  default: /* edge, and the clamped read of constant mode */
    if (p->mode == PAD_CONSTANT)
      *inside = lw_ix_bin(cx, LW_IX_AND, *inside,
                          lw_ix_bin(cx, LW_IX_AND, lw_ix_bin(cx, LW_IX_GE, s, lw_ix_c(0)),
                                    lw_ix_bin(cx, LW_IX_LT, s, d)));
    m = lw_ix_clamp(cx, s, lw_ix_c(0), last);
  }
  return lw_ix_value(cx, m);
}

static o2m_status pad_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                           void *user) {
  const pad_plan *p = user;
  MlirValue src[LW_MAX_RANK] = {{NULL}};
  lw_ix inside = lw_ix_c(1);
  for (int k = 0; k < p->r; k++) src[k] = pad_source(cx, p, k, idx[k], &inside);
  if (lw_ix_is_const(inside) && inside.c) {
    *out = lw_extract(cx, p->x, src);
    return O2M_OK;
  }
  MlirValue value =
      mlirValueIsNull(p->value) ? lw_const_scalar(cx, lw_out_type(cx, 0)->elem, 0) : p->value;
  *out = lw_ix_is_const(inside) ? value : lw_select(cx, inside.v, lw_extract(cx, p->x, src), value);
  return O2M_OK;
}

/* Places per-axis entries (before at [i], after at [i + n]) on the dims
 * they name: known axes directly, runtime axes by selects per dim. */
static o2m_status place_pads(lw_ctx *cx, pad_plan *p, lw_ix *after, int n, const lw_ix *pads,
                             const lw_ix *axes) {
  for (int k = 0; k < p->r; k++) p->before[k] = after[k] = lw_ix_c(0);
  for (int i = 0; i < n; i++) {
    if (!axes || lw_ix_is_const(axes[i])) {
      int a = axes ? lw_norm_axis(cx, axes[i].c, p->r) : i;
      if (a < 0 || a >= p->r) return lw_error(cx, "pad entry %d is beyond rank %d", i, p->r);
      p->before[a] = pads[i], after[a] = pads[i + n];
      continue;
    }
    lw_ix a = lw_ix_from_end(cx, axes[i], lw_ix_c(p->r));
    for (int k = 0; k < p->r; k++) {
      lw_ix here = lw_ix_bin(cx, LW_IX_EQ, a, lw_ix_c(k));
      p->before[k] = lw_ix_select(cx, here, pads[i], p->before[k]);
      after[k] = lw_ix_select(cx, here, pads[i + n], after[k]);
    }
  }
  return O2M_OK;
}

o2m_status lw_lower_pad(lw_ctx *cx) {
  pad_plan p;
  p.x = lw_in(cx, 0);
  if (mlirValueIsNull(p.x)) return lw_error(cx, "input 0 is missing");
  p.r = lw_rank(p.x);
  const char *mode = lw_attr_string(cx, "mode", "constant");
  p.mode = PAD_CONSTANT;
  while (p.mode < PAD_MODE_COUNT && strcmp(pad_modes[p.mode], mode)) p.mode++;
  if (p.mode == PAD_MODE_COUNT) return lw_error(cx, "unknown mode '%s'", mode);
  lw_ix *pads, *axes = NULL, after[LW_MAX_RANK], dims[LW_MAX_RANK];
  int n = lw_in_ixs(cx, 1, &pads);
  int n_axes = lw_in_present(cx, 3) ? lw_in_ixs(cx, 3, &axes) : p.r;
  if (n < 0 || n_axes < 0 || n != 2 * n_axes)
    return lw_unsupported(cx,
                          "pads and axes must be 1-D tensors of static size, pads twice as long");
  o2m_status s = place_pads(cx, &p, after, n_axes, pads, axes);
  if (s) return s;
  p.value = lw_in_present(cx, 2) ? lw_in_scalar(cx, 2) : (MlirValue){NULL};
  for (int k = 0; k < p.r; k++) {
    p.dims[k] = lw_ix_dim(cx, p.x, k);
    dims[k] = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_ADD, p.dims[k], p.before[k]), after[k]);
  }
  return gather_out(cx, p.r, dims, 0, NULL, NULL, pad_body, &p);
}

/* CenterCropPad: per axis, crop (d > s) from (d - s) / 2 or pad (d < s)
 * with zeros from (s - d) / 2: a constant pad by a signed amount. */
o2m_status lw_lower_center_crop_pad(lw_ctx *cx) {
  pad_plan p = {.x = lw_in(cx, 0), .mode = PAD_CONSTANT};
  if (mlirValueIsNull(p.x)) return lw_error(cx, "input 0 is missing");
  p.r = lw_rank(p.x);
  lw_ix *shape, dims[LW_MAX_RANK];
  const int64_t *axes;
  int n = lw_in_ixs(cx, 1, &shape), n_axes = lw_attr_ints(cx, "axes", &axes);
  if (n < 0 || n != (n_axes >= 0 ? n_axes : p.r))
    return lw_unsupported(cx, "shape must be a 1-D tensor of static size, one entry per axis");
  for (int k = 0; k < p.r; k++)
    p.dims[k] = dims[k] = lw_ix_dim(cx, p.x, k), p.before[k] = lw_ix_c(0);
  for (int i = 0; i < n; i++) {
    int a = n_axes >= 0 ? lw_norm_axis(cx, axes[i], p.r) : i;
    if (a < 0) return O2M_ERR_INVALID;
    lw_ix d = p.dims[a], want = shape[i];
    lw_ix crop = lw_ix_bin(cx, LW_IX_FLOORDIV, lw_ix_bin(cx, LW_IX_SUB, d, want), lw_ix_c(2));
    lw_ix pad = lw_ix_bin(cx, LW_IX_FLOORDIV, lw_ix_bin(cx, LW_IX_SUB, want, d), lw_ix_c(2));
    p.before[a] = lw_ix_select(cx, lw_ix_bin(cx, LW_IX_GE, d, want),
                               lw_ix_bin(cx, LW_IX_SUB, lw_ix_c(0), crop), pad);
    dims[a] = want;
  }
  return gather_out(cx, p.r, dims, 0, NULL, NULL, pad_body, &p);
}

/* ---- OneHot, Trilu, EyeLike -------------------------------------------------- */

typedef struct pattern_plan {
  MlirValue x, on, off;
  o2m_dtype dt;
  int r, axis, upper;
  lw_ix k, depth;
} pattern_plan;

/* OneHot: out[a.., j, b..] = indices[a.., b..] (from the end of depth) == j ? on : off */
static o2m_status onehot_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                              MlirValue *out, void *user) {
  const pattern_plan *p = user;
  MlirValue src[LW_MAX_RANK];
  for (int k = 0; k < p->r; k++) src[k] = idx[k < p->axis ? k : k + 1];
  lw_ix i = lw_ix_from_end(cx, lw_ix_v(lw_scalar_to_index(cx, lw_extract(cx, p->x, src), p->dt)),
                           p->depth);
  *out = lw_select(cx, lw_ix_bin(cx, LW_IX_EQ, i, lw_ix_v(idx[p->axis])).v, p->on, p->off);
  return O2M_OK;
}

o2m_status lw_lower_onehot(lw_ctx *cx) {
  MlirValue in[3];
  o2m_status s = lw_inputs(cx, 3, in);
  if (s) return s;
  pattern_plan p = {.x = in[0],
                    .on = lw_extract_at(cx, in[2], 1),
                    .off = lw_extract_at(cx, in[2], 0),
                    .dt = lw_in_type(cx, 0)->elem,
                    .r = lw_rank(in[0])};
  if (p.r + 1 > LW_MAX_RANK) return lw_unsupported(cx, "rank above %d", LW_MAX_RANK);
  p.axis = lw_norm_axis(cx, lw_attr_int(cx, "axis", -1), p.r + 1);
  if (p.axis < 0) return O2M_ERR_INVALID;
  lw_ix *depth, dims[LW_MAX_RANK];
  if (lw_in_ixs(cx, 1, &depth) != 1) return lw_error(cx, "depth is not one value");
  p.depth = depth[0];
  for (int k = 0; k <= p.r; k++)
    dims[k] = k == p.axis ? p.depth : lw_ix_dim(cx, p.x, k < p.axis ? k : k - 1);
  return gather_out(cx, p.r + 1, dims, 0, NULL, NULL, onehot_body, &p);
}

/* Trilu keeps x where j - i >= k (upper) or j - i <= k (lower), else 0. */
static o2m_status trilu_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                             MlirValue *out, void *user) {
  const pattern_plan *p = user;
  lw_ix diag = lw_ix_bin(cx, LW_IX_SUB, lw_ix_v(idx[p->r - 1]), lw_ix_v(idx[p->r - 2]));
  lw_ix keep = lw_ix_bin(cx, p->upper ? LW_IX_GE : LW_IX_LE, diag, p->k);
  *out = lw_select(cx, keep.v, args[0], lw_const_scalar(cx, p->dt, 0));
  return O2M_OK;
}

o2m_status lw_lower_trilu(lw_ctx *cx) {
  pattern_plan p = {
      .x = lw_in(cx, 0), .dt = lw_in_type(cx, 0)->elem, .upper = (int)lw_attr_int(cx, "upper", 1)};
  if (mlirValueIsNull(p.x)) return lw_error(cx, "input 0 is missing");
  p.r = lw_rank(p.x);
  lw_ix *k, dims[LW_MAX_RANK];
  if (p.r < 2) return lw_error(cx, "the input has rank %d, below 2", p.r);
  if (lw_in_present(cx, 1)) {
    if (lw_in_ixs(cx, 1, &k) != 1) return lw_error(cx, "k is not one value");
    p.k = k[0];
  }
  for (int d = 0; d < p.r; d++) dims[d] = lw_ix_dim(cx, p.x, d);
  MlirAttribute map = lw_identity_map(cx, p.r);
  return gather_out(cx, p.r, dims, 1, &p.x, &map, trilu_body, &p);
}

/* EyeLike: 1 where j - i == k, else 0, in the output's dtype. */
static o2m_status eye_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                           void *user) {
  const pattern_plan *p = user;
  lw_ix on_diag =
      lw_ix_bin(cx, LW_IX_EQ, lw_ix_bin(cx, LW_IX_SUB, lw_ix_v(idx[1]), lw_ix_v(idx[0])), p->k);
  *out = lw_select(cx, on_diag.v, lw_const_scalar(cx, p->dt, 1), lw_const_scalar(cx, p->dt, 0));
  return O2M_OK;
}

o2m_status lw_lower_eye_like(lw_ctx *cx) {
  pattern_plan p = {
      .x = lw_in(cx, 0), .dt = lw_out_type(cx, 0)->elem, .k = lw_ix_c(lw_attr_int(cx, "k", 0))};
  if (mlirValueIsNull(p.x) || lw_rank(p.x) != 2) return lw_error(cx, "the input is not 2-D");
  lw_ix dims[2] = {lw_ix_dim(cx, p.x, 0), lw_ix_dim(cx, p.x, 1)};
  return gather_out(cx, 2, dims, 0, NULL, NULL, eye_body, &p);
}

/* ---- DepthToSpace, SpaceToDepth, ReverseSequence ------------------------------- */

typedef struct block_plan {
  MlirValue x;
  int64_t b;
  int crd; /* DepthToSpace mode CRD (else DCR) */
  lw_ix c; /* channels of the side with fewer (DepthToSpace: output) */
} block_plan;

/* DepthToSpace: out[n, c, h, w] = x[n, channel, h / b, w / b] with, for
 * (bh, bw) = (h mod b, w mod b), channel = (bh b + bw) C + c (DCR) or
 * c b b + bh b + bw (CRD). */
static o2m_status depth_to_space_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                                      MlirValue *out, void *user) {
  const block_plan *p = user;
  lw_ix b = lw_ix_c(p->b), c = lw_ix_v(idx[1]), h = lw_ix_v(idx[2]), w = lw_ix_v(idx[3]);
  lw_ix bh = lw_ix_bin(cx, LW_IX_REM, h, b), bw = lw_ix_bin(cx, LW_IX_REM, w, b);
  lw_ix block = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, bh, b), bw);
  lw_ix channel =
      p->crd ? lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, c, lw_ix_c(p->b * p->b)), block)
             : lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, block, p->c), c);
  MlirValue src[4] = {idx[0], lw_ix_value(cx, channel),
                      lw_ix_value(cx, lw_ix_bin(cx, LW_IX_FLOORDIV, h, b)),
                      lw_ix_value(cx, lw_ix_bin(cx, LW_IX_FLOORDIV, w, b))};
  *out = lw_extract(cx, p->x, src);
  return O2M_OK;
}

/* SpaceToDepth: out[n, (bh b + bw) C + c, h, w] = x[n, c, h b + bh, w b + bw] */
static o2m_status space_to_depth_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                                      MlirValue *out, void *user) {
  const block_plan *p = user;
  lw_ix b = lw_ix_c(p->b), oc = lw_ix_v(idx[1]);
  lw_ix block = lw_ix_bin(cx, LW_IX_FLOORDIV, oc, p->c);
  lw_ix bh = lw_ix_bin(cx, LW_IX_FLOORDIV, block, b), bw = lw_ix_bin(cx, LW_IX_REM, block, b);
  lw_ix h = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, lw_ix_v(idx[2]), b), bh);
  lw_ix w = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, lw_ix_v(idx[3]), b), bw);
  MlirValue src[4] = {idx[0], lw_ix_value(cx, lw_ix_bin(cx, LW_IX_REM, oc, p->c)),
                      lw_ix_value(cx, h), lw_ix_value(cx, w)};
  *out = lw_extract(cx, p->x, src);
  return O2M_OK;
}

static o2m_status lower_blocks(lw_ctx *cx, int to_space) {
  block_plan p = {.x = lw_in(cx, 0), .b = lw_attr_int(cx, "blocksize", 0)};
  const char *mode = lw_attr_string(cx, "mode", "DCR");
  if (mlirValueIsNull(p.x) || lw_rank(p.x) != 4) return lw_error(cx, "the input is not 4-D");
  if (p.b <= 0) return lw_error(cx, "blocksize must be positive");
  p.crd = to_space && strcmp(mode, "CRD") == 0;
  if (to_space && !p.crd && strcmp(mode, "DCR") != 0)
    return lw_error(cx, "unknown mode '%s'", mode);
  lw_ix bb = lw_ix_c(p.b * p.b), b = lw_ix_c(p.b), dims[4];
  lw_ix c = lw_ix_dim(cx, p.x, 1), h = lw_ix_dim(cx, p.x, 2), w = lw_ix_dim(cx, p.x, 3);
  dims[0] = lw_ix_dim(cx, p.x, 0);
  p.c = to_space ? lw_ix_bin(cx, LW_IX_FLOORDIV, c, bb) : c;
  dims[1] = to_space ? p.c : lw_ix_bin(cx, LW_IX_MUL, c, bb);
  dims[2] = lw_ix_bin(cx, to_space ? LW_IX_MUL : LW_IX_FLOORDIV, h, b);
  dims[3] = lw_ix_bin(cx, to_space ? LW_IX_MUL : LW_IX_FLOORDIV, w, b);
  return gather_out(cx, 4, dims, 0, NULL, NULL,
                    to_space ? depth_to_space_body : space_to_depth_body, &p);
}

o2m_status lw_lower_depth_to_space(lw_ctx *cx) { return lower_blocks(cx, 1); }
o2m_status lw_lower_space_to_depth(lw_ctx *cx) { return lower_blocks(cx, 0); }

typedef struct reverse_plan {
  MlirValue x, lens;
  o2m_dtype dt;
  int r, batch, time;
  lw_ix steps; /* the time dim */
} reverse_plan;

/* ReverseSequence: along time, the first lens[b] elements reversed
 * (lens clamped to the time dim). */
static o2m_status reverse_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args,
                               MlirValue *out, void *user) {
  const reverse_plan *p = user;
  MlirValue src[LW_MAX_RANK];
  lw_ix t = lw_ix_v(idx[p->time]);
  lw_ix len = lw_ix_bin(
      cx, LW_IX_MIN,
      lw_ix_v(lw_scalar_to_index(cx, lw_extract(cx, p->lens, &idx[p->batch]), p->dt)), p->steps);
  lw_ix back = lw_ix_bin(cx, LW_IX_SUB, lw_ix_bin(cx, LW_IX_SUB, len, lw_ix_c(1)), t);
  for (int k = 0; k < p->r; k++) src[k] = idx[k];
  src[p->time] = lw_ix_value(cx, lw_ix_select(cx, lw_ix_bin(cx, LW_IX_LT, t, len), back, t));
  *out = lw_extract(cx, p->x, src);
  return O2M_OK;
}

o2m_status lw_lower_reverse_sequence(lw_ctx *cx) {
  MlirValue in[2];
  o2m_status s = lw_inputs(cx, 2, in);
  if (s) return s;
  reverse_plan p = {.x = in[0], .lens = in[1], .dt = lw_in_type(cx, 1)->elem, .r = lw_rank(in[0])};
  p.batch = lw_norm_axis(cx, lw_attr_int(cx, "batch_axis", 1), p.r);
  p.time = p.batch < 0 ? -1 : lw_norm_axis(cx, lw_attr_int(cx, "time_axis", 0), p.r);
  if (p.time < 0) return O2M_ERR_INVALID;
  if (p.time == p.batch) return lw_error(cx, "batch_axis and time_axis are the same");
  lw_ix dims[LW_MAX_RANK];
  for (int k = 0; k < p.r; k++) dims[k] = lw_ix_dim(cx, p.x, k);
  p.steps = dims[p.time];
  return gather_out(cx, p.r, dims, 0, NULL, NULL, reverse_body, &p);
}
