/* shlo_shape.c - StableHLO lowerings of the shape and index family (rows
 * in shlo_shape.def): re-shaping (Reshape, Flatten, Squeeze, Unsqueeze,
 * DepthToSpace, SpaceToDepth), data movement (Transpose, Concat, Split,
 * Slice, Pad, Tile, Expand, ReverseSequence), masks (Trilu, EyeLike,
 * OneHot), the index ops (Gather, GatherElements, GatherND,
 * ScatterElements, Scatter, ScatterND) through stablehlo.gather and
 * stablehlo.scatter, and shapes as values (Shape, Size, ConstantOfShape,
 * Range).
 *
 * Result shapes come from the inferred output types. Parameters known at
 * import (Slice's starts, Pad's pads) give static slices and pads; where
 * they are only known at run time but the result shape is static, the
 * result is a gather along each axis of indices computed at run time
 * (Slice: start + i * step, clamped as ONNX clamps; Pad: the source
 * position of each result position, by mode). Indices are i64; negative
 * ones are wrapped (idx < 0 ? idx + dim : idx).
 */
#include <stdio.h>
#include <string.h>

#include "emit/stablehlo/shlo_kit.h"
#include "infer/infer.h"

/* ---- shapes and small values ------------------------------------------------ */

/* The static sizes of v (rank, or -1 when a dim is dynamic). */
static int value_sizes(MlirValue v, int64_t *sizes) {
  int rank = sh_rank(v);
  if (rank < 0 || rank > SH_MAX_RANK) return -1;
  for (int k = 0; k < rank; k++)
    if ((sizes[k] = sh_size(v, k)) < 0) return -1;
  return rank;
}

/* The static sizes of output i (rank, or -1). */
static int out_sizes(lw_ctx *cx, int i, int64_t *sizes) {
  const o2m_type *t = lw_out_type(cx, i);
  if (t->kind != O2M_TYPE_TENSOR || t->rank < 0 || t->rank > SH_MAX_RANK) return -1;
  for (int k = 0; k < t->rank; k++)
    if ((sizes[k] = t->dims[k].size) < 0) return -1;
  return t->rank;
}

static int64_t product(int n, const int64_t *sizes) {
  int64_t p = 1;
  for (int k = 0; k < n; k++) p *= sizes[k];
  return p;
}

/* sh_check_node, then input 0 with static sizes (rank returned). */
static o2m_status static_input(lw_ctx *cx, MlirValue *x, int64_t *sizes, int *rank) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  *x = lw_in(cx, 0);
  if (mlirValueIsNull(*x)) return lw_error(cx, "input 0 is missing");
  *rank = value_sizes(*x, sizes);
  if (*rank < 0) return lw_unsupported(cx, "not lowered with dynamic dims (input 0)");
  return O2M_OK;
}

/* The "axis" attribute (dflt when absent) in [0, rank), or an error. */
static o2m_status axis_attr(lw_ctx *cx, int64_t dflt, int rank, int *axis) {
  int64_t a = lw_attr_int(cx, "axis", dflt);
  *axis = sh_axis(a, rank);
  if (*axis < 0) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)a, rank);
  return O2M_OK;
}

static MlirValue i64_scalar(lw_ctx *cx, int64_t v) { return sh_scalar(cx, sh_i64(cx), (double)v); }

static MlirValue as_i64(lw_ctx *cx, MlirValue v) { return sh_convert(cx, v, sh_i64(cx)); }

/* Element j of a 1-D value as a 0-d value. */
static MlirValue element(lw_ctx *cx, MlirValue v, int64_t j) {
  return sh_reshape(cx, sh_slice_axis(cx, v, 0, j, 1), 0, NULL);
}

/* A one-element input (any rank) as a 0-d value. */
static MlirValue scalar_in(lw_ctx *cx, int i) { return sh_reshape(cx, lw_in(cx, i), 0, NULL); }

/* idx < 0 ? idx + dim : idx (dim broadcasting numpy-style against idx). */
/* Whether idx is a stablehlo.constant of i64 or i32 values none of which
 * is negative. */
static int known_non_negative(MlirValue idx) {
  if (!mlirValueIsAOpResult(idx)) return 0;
  MlirOperation op = mlirOpResultGetOwner(idx);
  MlirIdentifier name = mlirOperationGetName(op);
  if (!mlirStringRefEqual(mlirIdentifierStr(name), mlirStringRefCreateFromCString("stablehlo.constant")))
    return 0;
  MlirAttribute v = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("value"));
  if (mlirAttributeIsNull(v) || !mlirAttributeIsADenseElements(v)) return 0;
  MlirType e = sh_elem(idx);
  if (!mlirTypeIsAInteger(e) || mlirIntegerTypeIsUnsigned(e)) return mlirTypeIsAInteger(e);
  unsigned w = mlirIntegerTypeGetWidth(e);
  if (w != 64 && w != 32) return 0;
  intptr_t n = mlirElementsAttrGetNumElements(v);
  int splat = mlirDenseElementsAttrIsSplat(v);
  for (intptr_t i = 0; i < (splat ? 1 : n); i++) {
    int64_t x;
    if (w == 64)
      x = splat ? mlirDenseElementsAttrGetInt64SplatValue(v) : mlirDenseElementsAttrGetInt64Value(v, i);
    else
      x = splat ? mlirDenseElementsAttrGetInt32SplatValue(v) : mlirDenseElementsAttrGetInt32Value(v, i);
    if (x < 0) return 0;
  }
  return 1;
}

/* idx < 0 ? idx + dim : idx (idx itself when known not to be negative). */
static MlirValue wrap_negative(lw_ctx *cx, MlirValue idx, MlirValue dim) {
  if (known_non_negative(idx)) return idx;
  MlirValue negative = sh_compare(cx, "LT", idx, sh_scalar(cx, sh_elem(idx), 0));
  return sh_select(cx, negative, sh_binary(cx, "stablehlo.add", idx, dim), idx);
}

/* An i64 iota of static shape `sizes` along dim. */
static MlirValue iota_i64(lw_ctx *cx, int rank, const int64_t *sizes, int dim) {
  return sh_iota(cx, sh_tensor(cx, sh_i64(cx), rank, sizes), dim);
}

/* Writes "name = [a, b], " into buf at *len, nothing when n is 0 (the
 * dialect's struct attributes omit empty fields). */
static void field(char *buf, size_t size, size_t *len, const char *name, int n,
                  const int64_t *values) {
  if (n == 0 || *len >= size) return;
  char list[512];
  *len += (size_t)snprintf(buf + *len, size - *len, "%s = %s, ", name,
                           sh_list(list, sizeof(list), n, values));
}

/* ---- gather and scatter ----------------------------------------------------- */

typedef struct dim_numbers {
  int n_window, n_collapsed, n_map;
  int64_t window[SH_MAX_RANK], collapsed[SH_MAX_RANK], map[SH_MAX_RANK];
  int64_t index_vector_dim;
} dim_numbers;

/* stablehlo.gather of x at idx (i64) into `type`: window = offset_dims,
 * collapsed = collapsed_slice_dims, map = start_index_map. */
static MlirValue gather(lw_ctx *cx, MlirValue x, MlirValue idx, MlirType type, const dim_numbers *d,
                        const int64_t *slice_sizes) {
  char dn[2048], a[512];
  size_t len = (size_t)snprintf(dn, sizeof(dn), "#stablehlo.gather<");
  field(dn, sizeof(dn), &len, "offset_dims", d->n_window, d->window);
  field(dn, sizeof(dn), &len, "collapsed_slice_dims", d->n_collapsed, d->collapsed);
  field(dn, sizeof(dn), &len, "start_index_map", d->n_map, d->map);
  if (len < sizeof(dn))
    snprintf(dn + len, sizeof(dn) - len, "index_vector_dim = %lld>",
             (long long)d->index_vector_dim);
  MlirValue ops[2] = {x, idx};
  return sh_op(cx, "stablehlo.gather", 2, ops, type,
               "dimension_numbers = %s, slice_sizes = %s, indices_are_sorted = false", dn,
               sh_array(a, sizeof(a), sh_rank(x), slice_sizes));
}

/* ONNX Gather along axis of x (static) at idx (i64, any rank q, already
 * non-negative): x[:axis] + idx.shape + x[axis+1:]. */
static MlirValue gather_axis(lw_ctx *cx, MlirValue x, MlirValue idx, int axis) {
  int64_t dims[SH_MAX_RANK], sizes[SH_MAX_RANK], slice[SH_MAX_RANK];
  int r = value_sizes(x, dims), q = sh_rank(idx), m = 0;
  if (r < 0 || q < 0 || r + q - 1 > SH_MAX_RANK) return (MlirValue){NULL};
  dim_numbers d = {
      .n_collapsed = 1, .n_map = 1, .collapsed = {axis}, .map = {axis}, .index_vector_dim = q};
  for (int k = 0; k < r; k++) slice[k] = k == axis ? 1 : dims[k];
  for (int k = 0; k < axis; k++) d.window[d.n_window++] = m, sizes[m++] = dims[k];
  for (int k = 0; k < q; k++) sizes[m++] = sh_size(idx, k);
  for (int k = axis + 1; k < r; k++) d.window[d.n_window++] = m, sizes[m++] = dims[k];
  return gather(cx, x, idx, sh_tensor(cx, sh_elem(x), m, sizes), &d, slice);
}

/* The coordinates [S..., r] (i64) of the elements GatherElements and
 * ScatterElements address: idx (shape S, rank r, i64) along axis, each
 * element's own coordinate along the other dims. */
static MlirValue element_coords(lw_ctx *cx, MlirValue idx, int axis) {
  int64_t sizes[SH_MAX_RANK + 1];
  int r = value_sizes(idx, sizes);
  if (r < 0 || r >= SH_MAX_RANK) return (MlirValue){NULL};
  MlirValue parts[SH_MAX_RANK];
  sizes[r] = 1;
  for (int k = 0; k < r; k++)
    parts[k] = k == axis ? sh_reshape(cx, idx, r + 1, sizes) : iota_i64(cx, r + 1, sizes, k);
  return sh_concat(cx, r, parts, r);
}

/* x at full coordinates coords [S..., r]: a value of shape S. */
static MlirValue gather_points(lw_ctx *cx, MlirValue x, MlirValue coords) {
  int64_t sizes[SH_MAX_RANK], ones[SH_MAX_RANK];
  int r = sh_rank(x), m = sh_rank(coords) - 1;
  if (mlirValueIsNull(coords) || m < 0) return (MlirValue){NULL};
  dim_numbers d = {.n_collapsed = r, .n_map = r, .index_vector_dim = m};
  for (int k = 0; k < r; k++) d.collapsed[k] = d.map[k] = k, ones[k] = 1;
  for (int k = 0; k < m; k++) sizes[k] = sh_size(coords, k);
  return gather(cx, x, coords, sh_tensor(cx, sh_elem(x), m, sizes), &d, ones);
}

/* How a scatter combines the value in place with an update (NULL: the
 * update replaces it). */
static const struct {
  const char *name, *op;
} reductions[] = {
    {"none", NULL},
    {"add", "stablehlo.add"},
    {"mul", "stablehlo.multiply"},
    {"max", "stablehlo.maximum"},
    {"min", "stablehlo.minimum"},
};

/* The reduction attribute's op (into *op); a refusal for unknown ones. */
static o2m_status reduction_op(lw_ctx *cx, const char **op) {
  const char *mode = lw_attr_string(cx, "reduction", "none");
  for (size_t i = 0; i < sizeof(reductions) / sizeof(reductions[0]); i++)
    if (strcmp(reductions[i].name, mode) == 0) return *op = reductions[i].op, O2M_OK;
  return lw_unsupported(cx, "scatter reduction '%s'", mode);
}

/* stablehlo.scatter of updates into data at idx (i64): window =
 * update_window_dims, collapsed = inserted_window_dims, map =
 * scatter_dims_to_operand_dims; combine: the reduction's op or NULL. */
static MlirValue scatter(lw_ctx *cx, MlirValue data, MlirValue idx, MlirValue updates,
                         const dim_numbers *d, const char *combine) {
  if (mlirValueIsNull(data) || mlirValueIsNull(idx) || mlirValueIsNull(updates))
    return (MlirValue){NULL};
  char dn[2048], attrs[2200];
  size_t len = (size_t)snprintf(dn, sizeof(dn), "#stablehlo.scatter<");
  field(dn, sizeof(dn), &len, "update_window_dims", d->n_window, d->window);
  field(dn, sizeof(dn), &len, "inserted_window_dims", d->n_collapsed, d->collapsed);
  field(dn, sizeof(dn), &len, "scatter_dims_to_operand_dims", d->n_map, d->map);
  if (len < sizeof(dn))
    snprintf(dn + len, sizeof(dn) - len, "index_vector_dim = %lld>",
             (long long)d->index_vector_dim);
  snprintf(attrs, sizeof(attrs),
           "scatter_dimension_numbers = %s, indices_are_sorted = false, unique_indices = false",
           dn);
  MlirType type = mlirValueGetType(data);
  MlirValue ops[3] = {data, idx, updates};
  MlirOperation op = lw_op(cx, "stablehlo.scatter", 3, ops, 1, &type, attrs, 1);
  if (mlirOperationIsNull(op)) return (MlirValue){NULL};
  MlirType scalar = sh_tensor(cx, sh_elem(data), 0, NULL), args[2] = {scalar, scalar};
  MlirBlock body = sh_region_block(cx, op, 0, 2, args);
  MlirBlock saved = cx->block;
  cx->block = body;
  MlirValue in[2] = {mlirBlockGetArgument(body, 0), mlirBlockGetArgument(body, 1)};
  MlirValue r = combine ? lw_op1(cx, combine, 2, in, scalar, NULL) : in[1];
  lw_op(cx, "stablehlo.return", 1, &r, 0, NULL, NULL, 0);
  cx->block = saved;
  return mlirOperationGetResult(op, 0);
}

/* Input i as i64 indices into a dim of size dim, made non-negative. */
static MlirValue index_in(lw_ctx *cx, int i, MlirValue dim) {
  MlirValue idx = as_i64(cx, lw_in(cx, i));
  return mlirValueIsNull(idx) ? idx : wrap_negative(cx, idx, dim);
}

/* ---- re-shaping ------------------------------------------------------------------ */

/* The number of elements of v as a 0-d i64 value. */
static MlirValue element_count(lw_ctx *cx, MlirValue v) {
  MlirValue n = i64_scalar(cx, 1);
  for (int k = 0; k < sh_rank(v); k++) n = sh_binary(cx, "stablehlo.multiply", n, sh_dim(cx, v, k));
  return n;
}

/* The size of the result's dynamic dim k as the input's dim of the same
 * symbolic name (a batch or a sequence length that the re-shape keeps);
 * null when the input has none. */
static MlirValue same_named_dim(lw_ctx *cx, MlirValue x, int k) {
  const o2m_type *yt = lw_out_type(cx, 0), *xt = lw_in_type(cx, 0);
  const char *name = yt && k < yt->rank && yt->dims ? yt->dims[k].sym : NULL;
  for (int j = 0; name && xt && xt->dims && j < xt->rank; j++)
    if (xt->dims[j].sym && strcmp(xt->dims[j].sym, name) == 0) return sh_dim(cx, x, j);
  return (MlirValue){NULL};
}

/* Reshape, Flatten, Squeeze, Unsqueeze: a reshape to the inferred shape;
 * a result with dynamic dims is a dynamic_reshape: each dynamic dim named
 * like one of the input's takes that dim's size, and one other dynamic
 * dim at most the input's element count over the sizes known. */
o2m_status sh_lower_reshape(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  MlirType type = sh_out_type(cx, 0);
  int rank = (int)mlirShapedTypeGetRank(type), dynamic = -1, any_dynamic = 0;
  int64_t known = 1;
  MlirValue dims[SH_MAX_RANK], named = i64_scalar(cx, 1);
  for (int k = 0; k < rank; k++) {
    dims[k] = (MlirValue){NULL};
    if (!mlirShapedTypeIsDynamicDim(type, k)) {
      known *= mlirShapedTypeGetDimSize(type, k);
      dims[k] = i64_scalar(cx, mlirShapedTypeGetDimSize(type, k));
      continue;
    }
    any_dynamic = 1;
    dims[k] = same_named_dim(cx, x, k);
    if (!mlirValueIsNull(dims[k])) {
      named = sh_binary(cx, "stablehlo.multiply", named, dims[k]);
      continue;
    }
    if (dynamic >= 0)
      return lw_unsupported(cx, "not lowered with more than one dynamic dim in the result that the input's dims do not name");
    dynamic = k;
  }
  if (!any_dynamic) return lw_set_out(cx, 0, sh_reshape_dynamic(cx, x, (MlirValue){NULL}, type));
  if (dynamic >= 0) {
    if (known == 0) return lw_unsupported(cx, "a dynamic dim next to an empty one");
    MlirValue rest = sh_binary(cx, "stablehlo.multiply", named, i64_scalar(cx, known));
    dims[dynamic] = sh_binary(cx, "stablehlo.divide", element_count(cx, x), rest);
  }
  return lw_set_out(cx, 0, sh_reshape_dynamic(cx, x, sh_shape_from_dims(cx, rank, dims), type));
}

o2m_status sh_lower_transpose(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  int rank = sh_rank(x);
  int64_t perm[SH_MAX_RANK];
  const int64_t *p = NULL;
  int n = lw_attr_ints(cx, "perm", &p);
  if (n >= 0 && n != rank) return lw_error(cx, "perm has %d entries for rank %d", n, rank);
  for (int k = 0; k < rank; k++) {
    perm[k] = n >= 0 ? p[k] : rank - 1 - k;
    if (perm[k] < 0 || perm[k] >= rank)
      return lw_error(cx, "perm entry %lld out of range", (long long)perm[k]);
  }
  return lw_set_out(cx, 0, sh_transpose(cx, x, perm));
}

/* DepthToSpace and SpaceToDepth: reshape to 6 dims, transpose, reshape. */
static o2m_status depth_space(lw_ctx *cx, int to_space) {
  MlirValue x;
  int64_t in[SH_MAX_RANK], out[SH_MAX_RANK];
  int rank;
  o2m_status s = static_input(cx, &x, in, &rank);
  if (s) return s;
  if (rank != 4 || out_sizes(cx, 0, out) != 4)
    return lw_unsupported(cx, "needs a static 4-D input");
  int64_t b = lw_attr_int(cx, "blocksize", 0), mid[6], perm[6];
  if (b <= 0) return lw_error(cx, "blocksize %lld", (long long)b);
  int crd = strcmp(lw_attr_string(cx, "mode", "DCR"), "CRD") == 0;
  lw_depth_space_plan(in, b, to_space, crd, mid, perm);
  MlirValue r = sh_transpose(cx, sh_reshape(cx, x, 6, mid), perm);
  return lw_set_out(cx, 0, sh_reshape(cx, r, 4, out));
}

o2m_status sh_lower_depth_to_space(lw_ctx *cx) { return depth_space(cx, 1); }
o2m_status sh_lower_space_to_depth(lw_ctx *cx) { return depth_space(cx, 0); }

/* ---- data movement ---------------------------------------------------------------- */

o2m_status sh_lower_concat(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  int n = cx->node->n_inputs;
  MlirValue *in = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(*in));
  if (!in) return lw_error(cx, "out of memory");
  for (int i = 0; i < n; i++) {
    in[i] = lw_in(cx, i);
    if (mlirValueIsNull(in[i])) return lw_error(cx, "input %d is missing", i);
  }
  int axis = 0;
  if ((s = axis_attr(cx, 0, sh_rank(in[0]), &axis))) return s;
  return lw_set_out(cx, 0, sh_concat(cx, n, in, axis));
}

/* Split: consecutive slices sized as the inferred outputs. */
o2m_status sh_lower_split(lw_ctx *cx) {
  MlirValue x;
  int64_t in[SH_MAX_RANK];
  int rank, axis = 0;
  o2m_status s = static_input(cx, &x, in, &rank);
  if (s || (s = axis_attr(cx, 0, rank, &axis))) return s;
  int64_t start = 0;
  for (int i = 0; i < cx->node->n_outputs; i++) {
    int64_t out[SH_MAX_RANK];
    if (out_sizes(cx, i, out) != rank)
      return lw_unsupported(cx, "output %d has no static shape", i);
    if (lw_out_present(cx, i) &&
        (s = lw_set_out(cx, i, sh_slice_axis(cx, x, axis, start, out[axis]))))
      return s;
    start += out[axis];
  }
  return O2M_OK;
}

/* Slice with known parameters: a reverse of the axes with negative steps,
 * then one strided slice. */
static o2m_status slice_known(lw_ctx *cx, MlirValue x, int rank, const int64_t *dims, int n,
                              const int64_t *starts, const int64_t *ends, const int64_t *axes,
                              const int64_t *steps) {
  int64_t start[SH_MAX_RANK], limit[SH_MAX_RANK], stride[SH_MAX_RANK], rev[SH_MAX_RANK];
  int n_rev = 0;
  for (int k = 0; k < rank; k++) start[k] = 0, limit[k] = dims[k], stride[k] = 1;
  for (int i = 0; i < n; i++) {
    int axis = sh_axis(axes ? axes[i] : i, rank);
    int64_t step = steps ? steps[i] : 1, b = starts[i], e = ends[i];
    if (axis < 0 || step == 0) return lw_error(cx, "bad slice axis or step");
    int64_t d = dims[axis], lo = step > 0 ? 0 : -1, hi = step > 0 ? d : d - 1;
    b = b < 0 ? (b < -d ? 0 : b + d) : b, e = e < 0 ? (e < -d - 1 ? -1 : e + d) : e;
    b = b < 0 ? 0 : b > hi ? hi : b;
    e = e < lo ? lo : e > hi ? hi : e;
    int64_t mag = step > 0 ? step : step < -d ? d + 1 : -step; /* no overflow of -INT64_MIN */
    int64_t count =
        step > 0 ? (e > b ? (e - b - 1) / mag + 1 : 0) : (b > e ? (b - e - 1) / mag + 1 : 0);
    if (count <= 1) mag = 1;
    if (step < 0 && count > 0) rev[n_rev++] = axis, b = d - 1 - b;
    if (mag > d) mag = d > 0 ? d : 1;
    start[axis] = count ? b : 0;
    limit[axis] = count ? b + (count - 1) * mag + 1 : 0;
    stride[axis] = mag;
  }
  if (n_rev) x = sh_reverse(cx, x, n_rev, rev);
  int dynamic = 0;
  for (int k = 0; k < rank; k++) dynamic |= limit[k] < 0;
  if (!dynamic) return lw_set_out(cx, 0, sh_slice(cx, x, start, limit, stride));
  /* dims not sliced are dynamic: their limit is their size at run time */
  MlirValue lim[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) lim[k] = limit[k] < 0 ? sh_dim(cx, x, k) : i64_scalar(cx, limit[k]);
  MlirValue ops[4] = {x, sh_const_i64s(cx, rank, start), sh_shape_from_dims(cx, rank, lim),
                      sh_const_i64s(cx, rank, stride)};
  return lw_set_out(cx, 0, sh_op(cx, "stablehlo.real_dynamic_slice", 4, ops, sh_out_type(cx, 0), NULL));
}

/* The start and step of dim k from the runtime parameters, when axes are
 * only known at run time: those of the last entry naming k, else 0, 1. */
static void runtime_axis_params(lw_ctx *cx, int n, int rank, int k, MlirValue starts,
                                MlirValue axes, MlirValue steps, MlirValue *start,
                                MlirValue *step) {
  *start = i64_scalar(cx, 0), *step = i64_scalar(cx, 1);
  for (int j = 0; j < n; j++) {
    MlirValue a = element(cx, axes, j);
    a = wrap_negative(cx, a, i64_scalar(cx, rank));
    MlirValue hit = sh_compare(cx, "EQ", a, i64_scalar(cx, k));
    *start = sh_select(cx, hit, element(cx, starts, j), *start);
    if (!mlirValueIsNull(steps)) *step = sh_select(cx, hit, element(cx, steps, j), *step);
  }
}

/* x gathered along axis at start + i * step (i < count), start clamped as
 * ONNX clamps it ([0, d] for positive steps, [0, d - 1] for negative). */
static MlirValue strided_gather(lw_ctx *cx, MlirValue x, int axis, MlirValue start, MlirValue step,
                                int64_t count) {
  int64_t d = sh_size(x, axis);
  MlirValue positive = sh_compare(cx, "GT", step, i64_scalar(cx, 0));
  start = wrap_negative(cx, start, i64_scalar(cx, d));
  MlirValue hi = sh_select(cx, positive, i64_scalar(cx, d), i64_scalar(cx, d - 1));
  start = sh_binary(cx, "stablehlo.minimum",
                    sh_binary(cx, "stablehlo.maximum", start, i64_scalar(cx, 0)), hi);
  MlirValue idx = iota_i64(cx, 1, &count, 0);
  idx = sh_binary(cx, "stablehlo.add", sh_binary(cx, "stablehlo.multiply", idx, step), start);
  return gather_axis(cx, x, idx, axis);
}

/* Slice with parameters known only at run time (a static result): a
 * dynamic_slice where the axes are known and every step is 1, else a
 * gather along each sliced axis. */
static o2m_status slice_runtime(lw_ctx *cx, MlirValue x, int rank, const int64_t *dims) {
  int64_t out[SH_MAX_RANK], *axes = NULL, *steps = NULL;
  if (out_sizes(cx, 0, out) != rank)
    return lw_unsupported(cx, "Slice parameters known only at run time need a static result");
  MlirValue starts = as_i64(cx, lw_in(cx, 1));
  int n = (int)sh_size(starts, 0);
  if (sh_rank(starts) != 1 || n < 0) return lw_unsupported(cx, "starts of unknown length");
  int known_axes = !lw_in_present(cx, 3) || lw_in_known_ints(cx, 3, &axes) == n;
  int known_steps = !lw_in_present(cx, 4) || lw_in_known_ints(cx, 4, &steps) == n,
      unit = known_steps;
  for (int j = 0; steps && j < n; j++) unit &= steps[j] == 1;
  MlirValue step_in = lw_in_present(cx, 4) ? as_i64(cx, lw_in(cx, 4)) : (MlirValue){NULL};
  if (!known_axes) {
    MlirValue axes_in = as_i64(cx, lw_in(cx, 3));
    for (int k = 0; k < rank; k++) {
      MlirValue start, step;
      runtime_axis_params(cx, n, rank, k, starts, axes_in, step_in, &start, &step);
      x = strided_gather(cx, x, k, start, step, out[k]);
    }
    return lw_set_out(cx, 0, x);
  }
  MlirValue start[SH_MAX_RANK], step[SH_MAX_RANK];
  int sliced[SH_MAX_RANK] = {0};
  for (int k = 0; k < rank; k++) start[k] = i64_scalar(cx, 0), step[k] = i64_scalar(cx, 1);
  for (int j = 0; j < n; j++) {
    int k = sh_axis(axes ? axes[j] : j, rank);
    if (k < 0) return lw_error(cx, "slice axis out of range");
    sliced[k] = 1;
    start[k] = element(cx, starts, j);
    if (!unit) step[k] = steps ? i64_scalar(cx, steps[j]) : element(cx, step_in, j);
  }
  if (unit) {
    MlirValue ops[SH_MAX_RANK + 1];
    ops[0] = x;
    for (int k = 0; k < rank; k++) {
      MlirValue s = wrap_negative(cx, start[k], i64_scalar(cx, dims[k]));
      ops[k + 1] = sh_binary(cx, "stablehlo.maximum", s, i64_scalar(cx, 0));
    }
    char a[512];
    return lw_set_out(cx, 0,
                      sh_op(cx, "stablehlo.dynamic_slice", rank + 1, ops,
                            sh_tensor(cx, sh_elem(x), rank, out), "slice_sizes = %s",
                            sh_array(a, sizeof(a), rank, out)));
  }
  for (int k = 0; k < rank; k++)
    if (sliced[k]) x = strided_gather(cx, x, k, start[k], step[k], out[k]);
  return lw_set_out(cx, 0, x);
}

/* Slice: known parameters slice statically (with dims that are not
 * sliced dynamic: real_dynamic_slice), runtime ones need static dims. */
o2m_status sh_lower_slice(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  int rank = sh_rank(x);
  int64_t dims[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) dims[k] = sh_size(x, k);
  int64_t *starts, *ends, *axes = NULL, *steps = NULL;
  int n = (int)lw_in_known_ints(cx, 1, &starts);
  if (n < 0 || lw_in_known_ints(cx, 2, &ends) != n ||
      (lw_in_present(cx, 3) && lw_in_known_ints(cx, 3, &axes) != n) ||
      (lw_in_present(cx, 4) && lw_in_known_ints(cx, 4, &steps) != n)) {
    if ((s = static_input(cx, &x, dims, &rank))) return s;
    return slice_runtime(cx, x, rank, dims);
  }
  for (int i = 0; i < n; i++) {
    int axis = sh_axis(axes ? axes[i] : i, rank);
    if (axis >= 0 && dims[axis] < 0) return lw_unsupported(cx, "slicing a dynamic dim (%d)", axis);
  }
  return slice_known(cx, x, rank, dims, n, starts, ends, axes, steps);
}

/* The pieces of a reflect/edge/wrap pad of one axis (known pads). */
static o2m_status pad_axis(lw_ctx *cx, const char *mode, MlirValue *x, int axis, int64_t before,
                           int64_t after) {
  int64_t d = sh_size(*x, axis), sizes[SH_MAX_RANK], bdims[SH_MAX_RANK];
  int rank = sh_rank(*x);
  MlirValue pieces[3] = {{NULL}, *x, {NULL}};
  if (strcmp(mode, "edge") == 0) {
    if (d == 0) return lw_unsupported(cx, "edge pad of an empty dim");
    for (int k = 0; k < rank; k++) sizes[k] = sh_size(*x, k), bdims[k] = k;
    MlirType elem = sh_elem(*x);
    sizes[axis] = before;
    if (before)
      pieces[0] = sh_broadcast_in_dim(cx, sh_slice_axis(cx, *x, axis, 0, 1),
                                      sh_tensor(cx, elem, rank, sizes), (MlirValue){NULL}, bdims);
    sizes[axis] = after;
    if (after)
      pieces[2] = sh_broadcast_in_dim(cx, sh_slice_axis(cx, *x, axis, d - 1, 1),
                                      sh_tensor(cx, elem, rank, sizes), (MlirValue){NULL}, bdims);
  } else if (strcmp(mode, "reflect") == 0) {
    int64_t ax = axis;
    if (before >= d || after >= d)
      return lw_unsupported(cx, "reflect pads of at least the dim size");
    if (before) pieces[0] = sh_reverse(cx, sh_slice_axis(cx, *x, axis, 1, before), 1, &ax);
    if (after)
      pieces[2] = sh_reverse(cx, sh_slice_axis(cx, *x, axis, d - 1 - after, after), 1, &ax);
  } else if (strcmp(mode, "wrap") == 0) {
    if (before > d || after > d) return lw_unsupported(cx, "wrap pads larger than the dim size");
    if (before) pieces[0] = sh_slice_axis(cx, *x, axis, d - before, before);
    if (after) pieces[2] = sh_slice_axis(cx, *x, axis, 0, after);
  } else {
    return lw_unsupported(cx, "pad mode '%s'", mode);
  }
  MlirValue parts[3];
  int m = 0;
  for (int i = 0; i < 3; i++)
    if (!mlirValueIsNull(pieces[i])) parts[m++] = pieces[i];
  *x = sh_concat(cx, m, parts, axis);
  return O2M_OK;
}

/* The pad value: input 2 as a 0-d value of x's type, or 0. */
static MlirValue pad_value(lw_ctx *cx, MlirValue x) {
  if (lw_in_present(cx, 2)) return scalar_in(cx, 2);
  return sh_scalar(cx, sh_elem(x), 0);
}

static o2m_status pad_known(lw_ctx *cx, MlirValue x, int rank, const int64_t *dims, int64_t *pads,
                            const char *mode) {
  if (strcmp(mode, "constant") == 0) {
    int64_t lo[SH_MAX_RANK], hi[SH_MAX_RANK], interior[SH_MAX_RANK], sizes[SH_MAX_RANK];
    char a[512], b[512], c[512];
    for (int k = 0; k < rank; k++) {
      lo[k] = pads[2 * k], hi[k] = pads[2 * k + 1], interior[k] = 0;
      sizes[k] = dims[k] + lo[k] + hi[k];
      if (sizes[k] < 0) return lw_error(cx, "pads crop more than dim %d", k);
    }
    MlirValue ops[2] = {x, pad_value(cx, x)};
    return lw_set_out(cx, 0,
                      sh_op(cx, "stablehlo.pad", 2, ops, sh_tensor(cx, sh_elem(x), rank, sizes),
                            "edge_padding_low = %s, edge_padding_high = %s, interior_padding = %s",
                            sh_array(a, sizeof(a), rank, lo), sh_array(b, sizeof(b), rank, hi),
                            sh_array(c, sizeof(c), rank, interior)));
  }
  /* negative pads crop first */
  int64_t start[SH_MAX_RANK], limit[SH_MAX_RANK], stride[SH_MAX_RANK];
  int crop = 0;
  for (int k = 0; k < rank; k++) {
    int64_t b = pads[2 * k] < 0 ? -pads[2 * k] : 0, e = pads[2 * k + 1] < 0 ? -pads[2 * k + 1] : 0;
    start[k] = b, limit[k] = dims[k] - e, stride[k] = 1, crop |= b || e;
    if (limit[k] < b) return lw_error(cx, "pads crop more than dim %d", k);
    pads[2 * k] = pads[2 * k] < 0 ? 0 : pads[2 * k],
             pads[2 * k + 1] = pads[2 * k + 1] < 0 ? 0 : pads[2 * k + 1];
  }
  if (crop) x = sh_slice(cx, x, start, limit, stride);
  o2m_status s;
  for (int k = 0; k < rank; k++)
    if (pads[2 * k] || pads[2 * k + 1])
      if ((s = pad_axis(cx, mode, &x, k, pads[2 * k], pads[2 * k + 1]))) return s;
  return lw_set_out(cx, 0, x);
}

/* ((a rem m) + m) rem m: a modulo m, non-negative (m > 0). */
static MlirValue modulo(lw_ctx *cx, MlirValue a, int64_t m) {
  MlirValue mv = i64_scalar(cx, m);
  MlirValue r = sh_binary(cx, "stablehlo.remainder", a, mv);
  return sh_binary(cx, "stablehlo.remainder", sh_binary(cx, "stablehlo.add", r, mv), mv);
}

/* The source positions [count] (i64) of a pad's result positions along a
 * dim of size d, `before` (0-d) elements added in front; *inside: whether
 * each is inside the input (constant mode). */
static MlirValue pad_source(lw_ctx *cx, const char *mode, MlirValue before, int64_t d,
                            int64_t count, MlirValue *inside) {
  MlirValue p = sh_binary(cx, "stablehlo.subtract", iota_i64(cx, 1, &count, 0), before);
  MlirValue zero = i64_scalar(cx, 0), last = i64_scalar(cx, d - 1);
  MlirValue clamped =
      sh_binary(cx, "stablehlo.minimum", sh_binary(cx, "stablehlo.maximum", p, zero), last);
  if (strcmp(mode, "constant") == 0) {
    *inside = sh_compare(cx, "EQ", p, clamped);
    return clamped;
  }
  if (strcmp(mode, "edge") == 0) return clamped;
  if (strcmp(mode, "wrap") == 0) return modulo(cx, p, d);
  if (d == 1) return sh_binary(cx, "stablehlo.multiply", p, zero);
  int64_t period = 2 * (d - 1);
  MlirValue q = modulo(cx, p, period);
  MlirValue mirrored = sh_binary(cx, "stablehlo.subtract", i64_scalar(cx, period), q);
  return sh_select(cx, sh_compare(cx, "GE", q, i64_scalar(cx, d)), mirrored, q);
}

/* Pad by pads known only at run time (a static result): a gather along
 * each dim of the source positions, the pad value selected outside the
 * input in constant mode. */
static o2m_status pad_runtime(lw_ctx *cx, MlirValue x, int rank, const int64_t *dims,
                              const char *mode) {
  int64_t out[SH_MAX_RANK], *axes = NULL;
  if (out_sizes(cx, 0, out) != rank)
    return lw_unsupported(cx, "pads known only at run time need a static result");
  if (strcmp(mode, "constant") && strcmp(mode, "edge") && strcmp(mode, "reflect") &&
      strcmp(mode, "wrap"))
    return lw_unsupported(cx, "pad mode '%s'", mode);
  for (int k = 0; k < rank; k++)
    if (dims[k] == 0) return lw_unsupported(cx, "pads known only at run time of an empty dim");
  MlirValue pads = as_i64(cx, lw_in(cx, 1));
  int n = (int)sh_size(pads, 0) / 2;
  int known_axes = !lw_in_present(cx, 3) || lw_in_known_ints(cx, 3, &axes) == n;
  MlirValue before[SH_MAX_RANK], mask = {NULL}, unused;
  for (int k = 0; k < rank; k++) before[k] = i64_scalar(cx, 0);
  for (int j = 0; known_axes && j < n; j++) {
    int k = sh_axis(axes ? axes[j] : j, rank);
    if (k < 0) return lw_error(cx, "pad axis out of range");
    before[k] = element(cx, pads, j);
  }
  for (int k = 0; !known_axes && k < rank; k++) /* the pads before: the first n entries */
    runtime_axis_params(cx, n, rank, k, pads, as_i64(cx, lw_in(cx, 3)), (MlirValue){NULL},
                        &before[k], &unused);
  MlirValue r = x;
  for (int k = 0; k < rank; k++) {
    MlirValue inside = {NULL};
    MlirValue src = pad_source(cx, mode, before[k], dims[k], out[k], &inside);
    r = gather_axis(cx, r, src, k);
    if (mlirValueIsNull(inside)) continue;
    int64_t shape[SH_MAX_RANK], bdim = k;
    for (int j = 0; j < rank; j++) shape[j] = out[j];
    inside = sh_broadcast_in_dim(cx, inside, sh_tensor(cx, sh_i1(cx), rank, shape),
                                 (MlirValue){NULL}, &bdim);
    mask = mlirValueIsNull(mask) ? inside : sh_binary(cx, "stablehlo.and", mask, inside);
  }
  if (!mlirValueIsNull(mask)) r = sh_select(cx, mask, r, pad_value(cx, x));
  return lw_set_out(cx, 0, r);
}

o2m_status sh_lower_pad(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK];
  int rank;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s) return s;
  const char *mode = lw_attr_string(cx, "mode", "constant");
  int64_t *given, *axes = NULL, pads[2 * SH_MAX_RANK] = {0};
  int n = (int)lw_in_known_ints(cx, 1, &given);
  int n_axes = lw_in_present(cx, 3) ? (int)lw_in_known_ints(cx, 3, &axes) : rank;
  if (n < 0 || n_axes < 0) return pad_runtime(cx, x, rank, dims, mode);
  if (n != 2 * n_axes) return lw_error(cx, "%d pads for %d axes", n, n_axes);
  for (int i = 0; i < n_axes; i++) {
    int axis = sh_axis(axes ? axes[i] : i, rank);
    if (axis < 0) return lw_error(cx, "pad axis out of range");
    pads[2 * axis] = given[i], pads[2 * axis + 1] = given[i + n_axes];
  }
  return pad_known(cx, x, rank, dims, pads, mode);
}

/* Tile: x broadcast into [r0, d0, r1, d1, ...], reshaped to the result
 * (repeats: result / input sizes, both static). */
o2m_status sh_lower_tile(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK], out[SH_MAX_RANK];
  int rank;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s) return s;
  if (out_sizes(cx, 0, out) != rank)
    return lw_unsupported(cx, "not lowered with dynamic dims (the result)");
  if (2 * rank > SH_MAX_RANK)
    return lw_unsupported(cx, "Tile of rank %d (at most %d)", rank, SH_MAX_RANK / 2);
  int64_t inter[SH_MAX_RANK], bdims[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    inter[2 * k] = dims[k] ? out[k] / dims[k] : 0;
    inter[2 * k + 1] = dims[k], bdims[k] = 2 * k + 1;
  }
  MlirType t = sh_tensor(cx, sh_elem(x), 2 * rank, inter);
  MlirValue b = sh_broadcast_in_dim(cx, x, t, (MlirValue){NULL}, bdims);
  return lw_set_out(cx, 0, sh_reshape(cx, b, rank, out));
}

/* Expand: numpy broadcasting to the inferred result; where it has
 * dynamic dims, a dynamic broadcast to the maximum of the shape input and
 * the input's shape (padded with 1s in front). */
o2m_status sh_lower_expand(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  MlirType type = sh_out_type(cx, 0);
  int r = (int)mlirShapedTypeGetRank(type), xr = sh_rank(x);
  if (r < xr) return lw_error(cx, "the result's rank %d is below the input's %d", r, xr);
  MlirValue shape = {NULL};
  if (!mlirShapedTypeHasStaticShape(type)) {
    MlirValue dims[SH_MAX_RANK];
    for (int k = 0; k < r; k++)
      dims[k] = k < r - xr ? i64_scalar(cx, 1) : sh_dim(cx, x, k - (r - xr));
    MlirValue given = as_i64(cx, lw_in(cx, 1));
    if (sh_rank(given) != 1 || sh_size(given, 0) != r)
      return lw_unsupported(cx, "a shape input of unknown length");
    shape = sh_binary(cx, "stablehlo.maximum", given, sh_shape_from_dims(cx, r, dims));
  }
  return lw_set_out(cx, 0, sh_broadcast_in_dim(cx, x, type, shape, NULL));
}

/* ReverseSequence: each element gathered from time len-1-t (t < len). */
o2m_status sh_lower_reverse_sequence(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK];
  int rank;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s) return s;
  if (rank < 2) return lw_error(cx, "ReverseSequence needs rank 2 or more");
  int batch = sh_axis(lw_attr_int(cx, "batch_axis", 1), rank),
      time = sh_axis(lw_attr_int(cx, "time_axis", 0), rank);
  if (batch < 0 || time < 0 || batch == time) return lw_error(cx, "bad batch_axis or time_axis");
  int64_t bdim = batch;
  MlirValue t = iota_i64(cx, rank, dims, time);
  MlirValue len = sh_broadcast_in_dim(cx, as_i64(cx, lw_in(cx, 1)), mlirValueGetType(t),
                                      (MlirValue){NULL}, &bdim);
  MlirValue last = sh_binary(cx, "stablehlo.subtract", len, i64_scalar(cx, 1));
  MlirValue idx =
      sh_select(cx, sh_compare(cx, "LT", t, len), sh_binary(cx, "stablehlo.subtract", last, t), t);
  return lw_set_out(cx, 0, gather_points(cx, x, element_coords(cx, idx, time)));
}

/* ---- masks ---------------------------------------------------------------------- */

/* col - row over a [rows, cols] grid compared with k (GE, LE or EQ). */
static MlirValue diagonal_mask(lw_ctx *cx, int64_t rows, int64_t cols, MlirValue k,
                               const char *dir) {
  int64_t grid[2] = {rows, cols};
  MlirValue diff =
      sh_binary(cx, "stablehlo.subtract", iota_i64(cx, 2, grid, 1), iota_i64(cx, 2, grid, 0));
  return sh_compare(cx, dir, diff, k);
}

o2m_status sh_lower_trilu(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK];
  int rank;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s) return s;
  if (rank < 2) return lw_error(cx, "Trilu needs rank 2 or more");
  MlirValue k = lw_in_present(cx, 1) ? as_i64(cx, scalar_in(cx, 1)) : i64_scalar(cx, 0);
  const char *dir = lw_attr_int(cx, "upper", 1) ? "GE" : "LE";
  MlirValue mask = diagonal_mask(cx, dims[rank - 2], dims[rank - 1], k, dir);
  return lw_set_out(cx, 0, sh_select(cx, mask, x, sh_scalar(cx, sh_elem(x), 0)));
}

o2m_status sh_lower_eye_like(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  int64_t out[SH_MAX_RANK];
  if (s) return s;
  if (out_sizes(cx, 0, out) != 2) return lw_unsupported(cx, "EyeLike needs a static 2-D shape");
  MlirType type = sh_out_type(cx, 0);
  MlirValue mask = diagonal_mask(cx, out[0], out[1], i64_scalar(cx, lw_attr_int(cx, "k", 0)), "EQ");
  return lw_set_out(cx, 0, sh_convert(cx, mask, mlirShapedTypeGetElementType(type)));
}

/* OneHot: an iota along the new axis compared with the indices. */
o2m_status sh_lower_onehot(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK], out[SH_MAX_RANK], shape[SH_MAX_RANK];
  int rank, axis = 0;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s) return s;
  if (rank + 1 > SH_MAX_RANK || out_sizes(cx, 0, out) != rank + 1)
    return lw_unsupported(cx, "OneHot needs a static result");
  if ((s = axis_attr(cx, -1, rank + 1, &axis))) return s;
  for (int k = 0; k <= rank; k++) shape[k] = k == axis ? 1 : dims[k < axis ? k : k - 1];
  MlirValue idx = sh_reshape(cx, as_i64(cx, x), rank + 1, shape);
  idx = wrap_negative(cx, idx, i64_scalar(cx, out[axis]));
  MlirValue hit = sh_compare(cx, "EQ", idx, iota_i64(cx, rank + 1, out, axis));
  MlirValue values = lw_in(cx, 2);
  return lw_set_out(cx, 0, sh_select(cx, hit, element(cx, values, 1), element(cx, values, 0)));
}

/* ---- gathers and scatters ------------------------------------------------------- */

o2m_status sh_lower_gather(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK];
  int rank, axis = 0;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s || (s = axis_attr(cx, 0, rank, &axis))) return s;
  /* one constant index (a dim picked from a shape): a slice, which
   * StableHLO's shape refinement folds where a gather stays */
  const o2m_value *at = cx->node->n_inputs > 1 ? cx->node->inputs[1] : NULL;
  const o2m_tensor *one = at && at->known && at->known->data && at->known->count == 1 ? at->known : NULL;
  int64_t out[SH_MAX_RANK];
  if (one && one->rank <= 1 && out_sizes(cx, 0, out) == rank - 1 + one->rank) {
    int64_t i = o2m_tensor_get_int(one, 0);
    if (i < 0) i += dims[axis];
    if (i < 0 || i >= dims[axis]) return lw_error(cx, "index %lld out of range", (long long)o2m_tensor_get_int(one, 0));
    return lw_set_out(cx, 0, sh_reshape(cx, sh_slice_axis(cx, x, axis, i, 1), rank - 1 + one->rank, out));
  }
  MlirValue idx = index_in(cx, 1, i64_scalar(cx, dims[axis]));
  MlirValue r = gather_axis(cx, x, idx, axis);
  return mlirValueIsNull(r) ? lw_unsupported(cx, "Gather of rank %d indices", sh_rank(idx))
                            : lw_set_out(cx, 0, r);
}

o2m_status sh_lower_gather_elements(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK], isz[SH_MAX_RANK];
  int rank, axis = 0;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s || (s = axis_attr(cx, 0, rank, &axis))) return s;
  MlirValue idx = index_in(cx, 1, i64_scalar(cx, dims[axis]));
  if (value_sizes(idx, isz) != rank)
    return lw_unsupported(cx, "not lowered with dynamic dims (the indices)");
  return lw_set_out(cx, 0, gather_points(cx, x, element_coords(cx, idx, axis)));
}

/* GatherND/ScatterND indices [..., q] (input i) into the dims of x from
 * `batch` on, made non-negative, then (batch) the coordinates of the
 * batch dims in front: [..., batch + q]. */
static MlirValue nd_indices(lw_ctx *cx, int i, const int64_t *dims, int rank, int batch) {
  MlirValue idx = as_i64(cx, lw_in(cx, i));
  int64_t isz[SH_MAX_RANK];
  int m = mlirValueIsNull(idx) ? -1 : value_sizes(idx, isz);
  if (m < 1) return (MlirValue){NULL};
  int q = (int)isz[m - 1];
  if (batch + q > rank) return (MlirValue){NULL};
  idx = wrap_negative(cx, idx, sh_const_i64s(cx, q, dims + batch));
  if (!batch) return idx;
  MlirValue parts[SH_MAX_RANK + 1];
  isz[m - 1] = 1;
  for (int k = 0; k < batch; k++) parts[k] = iota_i64(cx, m, isz, k);
  parts[batch] = idx;
  return sh_concat(cx, batch + 1, parts, m - 1);
}

o2m_status sh_lower_gather_nd(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK], sizes[SH_MAX_RANK], slice[SH_MAX_RANK];
  int rank;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s) return s;
  int batch = (int)lw_attr_int(cx, "batch_dims", 0);
  if (batch < 0 || batch >= rank) return lw_error(cx, "batch_dims %d", batch);
  MlirValue idx = nd_indices(cx, 1, dims, rank, batch);
  if (mlirValueIsNull(idx))
    return lw_unsupported(cx, "GatherND needs static indices fitting the data");
  int m = sh_rank(idx), c = (int)sh_size(idx, m - 1), n = 0;
  dim_numbers d = {.n_collapsed = c, .n_map = c, .index_vector_dim = m - 1};
  for (int k = 0; k < rank; k++) slice[k] = k < c ? 1 : dims[k];
  for (int k = 0; k < c; k++) d.collapsed[k] = d.map[k] = k;
  for (int k = 0; k < m - 1; k++) sizes[n++] = sh_size(idx, k);
  for (int k = c; k < rank; k++) d.window[d.n_window++] = n, sizes[n++] = dims[k];
  if (n > SH_MAX_RANK) return lw_unsupported(cx, "result rank %d", n);
  return lw_set_out(cx, 0, gather(cx, x, idx, sh_tensor(cx, sh_elem(x), n, sizes), &d, slice));
}

/* ScatterElements (and the older Scatter): one update per index element,
 * at full coordinates. */
o2m_status sh_lower_scatter_elements(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK], isz[SH_MAX_RANK];
  int rank, axis = 0;
  const char *combine = NULL;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s || (s = axis_attr(cx, 0, rank, &axis)) || (s = reduction_op(cx, &combine))) return s;
  MlirValue idx = index_in(cx, 1, i64_scalar(cx, dims[axis]));
  if (value_sizes(idx, isz) != rank)
    return lw_unsupported(cx, "not lowered with dynamic dims (the indices)");
  dim_numbers d = {.n_collapsed = rank, .n_map = rank, .index_vector_dim = rank};
  for (int k = 0; k < rank; k++) d.collapsed[k] = d.map[k] = k;
  MlirValue r = scatter(cx, x, element_coords(cx, idx, axis), lw_in(cx, 2), &d, combine);
  return lw_set_out(cx, 0, r);
}

o2m_status sh_lower_scatter_nd(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[SH_MAX_RANK];
  int rank;
  const char *combine = NULL;
  o2m_status s = static_input(cx, &x, dims, &rank);
  if (s || (s = reduction_op(cx, &combine))) return s;
  MlirValue idx = nd_indices(cx, 1, dims, rank, 0);
  if (mlirValueIsNull(idx))
    return lw_unsupported(cx, "ScatterND needs static indices fitting the data");
  int m = sh_rank(idx), q = (int)sh_size(idx, m - 1);
  dim_numbers d = {.n_collapsed = q, .n_map = q, .index_vector_dim = m - 1};
  for (int k = 0; k < q; k++) d.collapsed[k] = d.map[k] = k;
  for (int k = 0; k < rank - q; k++) d.window[d.n_window++] = m - 1 + k;
  return lw_set_out(cx, 0, scatter(cx, x, idx, lw_in(cx, 2), &d, combine));
}

/* ---- shapes as values: Shape, Size, ConstantOfShape, Range ------------------------ */

/* Shape (start, end): the dims, constants where static
 * (get_dimension_size otherwise). */
o2m_status sh_lower_shape_of(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x) || sh_rank(x) < 0)
    return lw_unsupported(cx, "the input has no known rank");
  int rank = sh_rank(x);
  int64_t start = lw_attr_int(cx, "start", 0), end = lw_attr_int(cx, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < start ? start : end > rank ? rank : end;
  MlirValue dims[SH_MAX_RANK];
  for (int k = (int)start; k < end; k++) dims[k - start] = sh_dim(cx, x, k);
  return lw_set_out(cx, 0, sh_shape_from_dims(cx, (int)(end - start), dims));
}

o2m_status sh_lower_size(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x) || sh_rank(x) < 0)
    return lw_unsupported(cx, "the input has no known rank");
  int64_t dims[SH_MAX_RANK];
  int rank = value_sizes(x, dims);
  if (rank >= 0) return lw_set_out(cx, 0, i64_scalar(cx, product(rank, dims)));
  return lw_set_out(cx, 0, element_count(cx, x));
}

/* ConstantOfShape: the value broadcast into the result (a dynamic
 * broadcast by the shape input where the result has dynamic dims). */
o2m_status sh_lower_constant_of_shape(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  MlirType type = sh_out_type(cx, 0);
  if (mlirTypeIsNull(type)) return lw_unsupported(cx, "the result is not a ranked tensor");
  const o2m_attr *value = lw_attr(cx, "value");
  MlirValue one = value && value->type == O2M_ATTR_TENSOR && value->t
                      ? sh_reshape(cx, lw_const_tensor(cx, value->t), 0, NULL)
                      : sh_scalar(cx, mlirShapedTypeGetElementType(type), 0);
  MlirValue shape =
      mlirShapedTypeHasStaticShape(type) ? (MlirValue){NULL} : as_i64(cx, lw_in(cx, 0));
  return lw_set_out(cx, 0, sh_broadcast_in_dim(cx, one, type, shape, NULL));
}

/* Range: start + iota * delta, of a static number of elements or one
 * computed at run time. */
o2m_status sh_lower_range(lw_ctx *cx) {
  int64_t n;
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  MlirType type = sh_out_type(cx, 0);
  MlirValue iota;
  if (out_sizes(cx, 0, &n) == 1) {
    iota = sh_iota(cx, type, 0);
  } else {
    /* known at run time: max(ceil((limit - start) / delta), 0) elements,
     * a dynamic_iota of them; integers round up by adding delta -+ 1
     * before the division (which truncates), so that StableHLO's shape
     * refinement folds the count; floats go through f64 (exact below 2^53) */
    MlirValue span = sh_binary(cx, "stablehlo.subtract", scalar_in(cx, 1), scalar_in(cx, 0)), delta = scalar_in(cx, 2);
    MlirValue steps;
    if (o2m_dtype_is_int(lw_out_type(cx, 0)->elem)) {
      span = sh_convert(cx, span, sh_i64(cx)), delta = sh_convert(cx, delta, sh_i64(cx));
      MlirValue up = sh_select(cx, sh_compare(cx, "GT", delta, i64_scalar(cx, 0)),
                               sh_binary(cx, "stablehlo.subtract", delta, i64_scalar(cx, 1)),
                               sh_binary(cx, "stablehlo.add", delta, i64_scalar(cx, 1)));
      steps = sh_binary(cx, "stablehlo.divide", sh_binary(cx, "stablehlo.add", span, up), delta);
    } else {
      MlirType f64 = mlirF64TypeGet(cx->mc);
      steps = sh_unary(cx, "stablehlo.ceil", sh_binary(cx, "stablehlo.divide", sh_convert(cx, span, f64), sh_convert(cx, delta, f64)));
      steps = sh_convert(cx, steps, sh_i64(cx));
    }
    MlirValue count = sh_binary(cx, "stablehlo.maximum", steps, i64_scalar(cx, 0));
    MlirValue shape = sh_shape_from_dims(cx, 1, &count);
    iota = mlirValueIsNull(shape) ? shape : sh_op(cx, "stablehlo.dynamic_iota", 1, &shape, type, "iota_dimension = 0 : i64");
  }
  MlirValue r = sh_binary(cx, "stablehlo.multiply", iota, scalar_in(cx, 2));
  return lw_set_out(cx, 0, sh_binary(cx, "stablehlo.add", r, scalar_in(cx, 0)));
}
