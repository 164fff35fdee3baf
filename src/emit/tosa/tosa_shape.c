/* tosa_shape.c - TOSA lowerings of the shape and index family (rows in
 * tosa_shape.def): re-shaping (Reshape, Flatten, Squeeze, Unsqueeze,
 * DepthToSpace, SpaceToDepth), data movement (Transpose, Concat, Split,
 * Slice, Pad, Tile, Expand, ReverseSequence), masks (Trilu, EyeLike,
 * OneHot) and the index ops (Gather, GatherElements, GatherND,
 * ScatterElements, ScatterND) through tosa.gather / tosa.scatter on
 * flattened [N, K, C] views with i32 indices.
 *
 * Shapes are static: sizes come from the inferred types and the known
 * parameter inputs (core form, src/transform); a dynamic case is refused
 * with its reason.
 */
#include <stdlib.h>
#include <string.h>

#include "emit/tosa/tosa_kit.h"
#include "infer/infer.h"

/* ---- static shapes ------------------------------------------------------------ */

/* The static sizes of v (rank, or -1 when a dim is dynamic). */
static int value_sizes(MlirValue v, int64_t *sizes) {
  int rank = tw_rank(v);
  if (rank > TW_MAX_RANK) return -1;
  for (int k = 0; k < rank; k++)
    if ((sizes[k] = tw_size(v, k)) < 0) return -1;
  return rank;
}

/* The static sizes of output i (rank, or -1). */
static int out_sizes(lw_ctx *cx, int i, int64_t *sizes) {
  const o2m_type *t = lw_out_type(cx, i);
  if (t->kind != O2M_TYPE_TENSOR || t->rank < 0 || t->rank > TW_MAX_RANK) return -1;
  for (int k = 0; k < t->rank; k++)
    if ((sizes[k] = t->dims[k].size) < 0) return -1;
  return t->rank;
}

static int64_t product(int n, const int64_t *sizes) {
  int64_t p = 1;
  for (int k = 0; k < n; k++) p *= sizes[k];
  return p;
}

/* Input 0 with static sizes (into *x, sizes; rank returned), or a refusal. */
static o2m_status static_input(lw_ctx *cx, int i, MlirValue *x, int64_t *sizes, int *rank) {
  *x = lw_in(cx, i);
  if (mlirValueIsNull(*x)) return lw_error(cx, "input %d is missing", i);
  *rank = value_sizes(*x, sizes);
  if (*rank < 0) return lw_unsupported(cx, "TOSA lowering needs static shapes (input %d is dynamic)", i);
  return O2M_OK;
}

static int norm_axis(int64_t axis, int rank) { return (int)(axis < 0 ? axis + rank : axis); }

/* The "axis" attribute (dflt when absent) in [0, rank), or an error. */
static o2m_status axis_attr(lw_ctx *cx, int64_t dflt, int rank, int *axis) {
  int64_t a = lw_attr_int(cx, "axis", dflt);
  if (a < -rank || a >= rank) return lw_error(cx, "axis %lld is out of range for rank %d", (long long)a, rank);
  *axis = norm_axis(a, rank);
  return O2M_OK;
}

static int has_empty_dim(const o2m_type *t) {
  for (int k = 0; t->kind == O2M_TYPE_TENSOR && k < t->rank; k++)
    if (t->dims[k].size == 0) return 1;
  return 0;
}

/* The node's dtypes (tw_check_node_dtypes) and no empty tensors, which
 * TOSA does not have. */
static o2m_status check_node(lw_ctx *cx, int unsigned_ok) {
  o2m_status s = tw_check_node_dtypes(cx, unsigned_ok);
  for (int i = 0; !s && i < cx->node->n_inputs; i++)
    if (lw_in_present(cx, i) && has_empty_dim(lw_in_type(cx, i)))
      s = lw_unsupported(cx, "TOSA has no empty tensors (input %d)", i);
  for (int i = 0; !s && i < cx->node->n_outputs; i++)
    if (lw_out_present(cx, i) && has_empty_dim(lw_out_type(cx, i)))
      s = lw_unsupported(cx, "TOSA has no empty tensors (output %d)", i);
  return s;
}

/* check_node, then input 0 as static_input reads it. */
static o2m_status checked_input(lw_ctx *cx, int unsigned_ok, MlirValue *x, int64_t *sizes, int *rank) {
  o2m_status s = check_node(cx, unsigned_ok);
  return s ? s : static_input(cx, 0, x, sizes, rank);
}

/* ---- constants ---------------------------------------------------------------- */

static MlirValue const_attr(lw_ctx *cx, MlirType type, MlirAttribute value) {
  MlirNamedAttribute attr =
      mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, mlirStringRefCreateFromCString("values")), value);
  MlirOperation o = lw_op_attrs(cx, "tosa.const", 0, NULL, 1, &type, 1, &attr, 0);
  return mlirOperationIsNull(o) ? (MlirValue){NULL} : mlirOperationGetResult(o, 0);
}

/* An i32 constant of the given shape. */
static MlirValue const_i32(lw_ctx *cx, int rank, const int64_t *sizes, const int32_t *values) {
  MlirType type = tw_tensor(cx, mlirIntegerTypeGet(cx->mc, 32), rank, sizes);
  return const_attr(cx, type, mlirDenseElementsAttrInt32Get(type, product(rank, sizes), values));
}

/* An i1 constant of the given shape. */
static MlirValue const_bool(lw_ctx *cx, int rank, const int64_t *sizes, const int *values) {
  MlirType type = tw_tensor(cx, mlirIntegerTypeGet(cx->mc, 1), rank, sizes);
  return const_attr(cx, type, mlirDenseElementsAttrBoolGet(type, product(rank, sizes), values));
}

/* The coordinates of linear position p in a row-major shape. */
static void coords_of(int64_t p, int rank, const int64_t *sizes, int64_t *c) {
  for (int k = rank - 1; k >= 0; k--) {
    c[k] = sizes[k] ? p % sizes[k] : 0;
    p = sizes[k] ? p / sizes[k] : 0;
  }
}

static void strides_of(int rank, const int64_t *sizes, int64_t *strides) {
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; k--) strides[k] = s, s *= sizes[k];
}

/* A constant of shape `sizes` whose element at coordinates c is
 * sum_k c[k] * weight[k] + bias. */
static MlirValue const_affine(lw_ctx *cx, int rank, const int64_t *sizes, const int64_t *weight,
                              int64_t bias) {
  int64_t n = product(rank, sizes), c[TW_MAX_RANK];
  int32_t *v = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(*v));
  if (!v) return (MlirValue){NULL};
  for (int64_t p = 0; p < n; p++) {
    coords_of(p, rank, sizes, c);
    int64_t x = bias;
    for (int k = 0; k < rank; k++) x += c[k] * weight[k];
    v[p] = (int32_t)x;
  }
  return const_i32(cx, rank, sizes, v);
}

/* A splat of the known scalar input i (or dflt when absent) as tensor<1xelem>. */
static MlirValue known_scalar(lw_ctx *cx, int i, MlirType elem, double dflt, int *ok) {
  const o2m_tensor *t = lw_in_known(cx, i);
  *ok = !lw_in_present(cx, i) || (t && t->count == 1);
  return tw_splat(cx, elem, 1, t && t->count == 1 ? o2m_tensor_get_float(t, 0) : dflt);
}

/* ---- ops on static values ----------------------------------------------------- */

static MlirValue slice(lw_ctx *cx, MlirValue v, const int64_t *start, const int64_t *size) {
  int rank = tw_rank(v);
  MlirValue ops[3] = {v, tw_shape(cx, rank, start), tw_shape(cx, rank, size)};
  return lw_op1(cx, "tosa.slice", 3, ops, tw_tensor(cx, tw_elem(v), rank, size), NULL);
}




static MlirValue tile(lw_ctx *cx, MlirValue v, const int64_t *multiples) {
  int64_t sizes[TW_MAX_RANK];
  int rank = value_sizes(v, sizes), same = 1;
  if (rank < 0) return (MlirValue){NULL};
  for (int k = 0; k < rank; k++) sizes[k] *= multiples[k], same &= multiples[k] == 1;
  if (same) return v;
  MlirValue ops[2] = {v, tw_shape(cx, rank, multiples)};
  return lw_op1(cx, "tosa.tile", 2, ops, tw_tensor(cx, tw_elem(v), rank, sizes), NULL);
}

/* tosa.pad by non-negative pads (before0, after0, ...) with pad_const. */
static MlirValue pad(lw_ctx *cx, MlirValue v, const int64_t *pads, MlirValue pad_const) {
  int64_t sizes[TW_MAX_RANK];
  int rank = value_sizes(v, sizes), none = 1;
  if (rank < 0) return (MlirValue){NULL};
  for (int k = 0; k < rank; k++) sizes[k] += pads[2 * k] + pads[2 * k + 1], none &= !pads[2 * k] && !pads[2 * k + 1];
  if (none) return v;
  MlirValue ops[3] = {v, tw_shape(cx, 2 * rank, pads), pad_const};
  return lw_op1(cx, "tosa.pad", 3, ops, tw_tensor(cx, tw_elem(v), rank, sizes), NULL);
}

/* An index tensor as i32 (ONNX indices are int64 or int32): known
 * indices become an i32 constant at import, so no int64 tensor is left. */
static MlirValue index_i32(lw_ctx *cx, int i) {
  const o2m_tensor *t = lw_in_known(cx, i);
  int64_t *v;
  int64_t n = lw_in_known_ints(cx, i, &v);
  int32_t *data = t && n == t->count && n > 0 ? o2m_arena_array(&cx->scratch, (size_t)n, sizeof(int32_t)) : NULL;
  o2m_tensor *c = data ? o2m_arena_alloc(&cx->scratch, sizeof(o2m_tensor)) : NULL;
  for (int64_t k = 0; c && k < n; k++) {
    if (v[k] < INT32_MIN || v[k] > INT32_MAX) c = NULL;
    else data[k] = (int32_t)v[k];
  }
  if (!c) return tw_cast(cx, lw_in(cx, i), lw_in_type(cx, i)->elem, O2M_DT_INT32);
  *c = *t;
  c->name = NULL, c->dtype = O2M_DT_INT32, c->data = (const uint8_t *)data;
  c->nbytes = (size_t)n * sizeof(int32_t), c->external = NULL;
  return lw_const_tensor(cx, c);
}

/* idx + dim where idx < 0 (dims: a tensor broadcasting against idx). */
static MlirValue wrap_negative(lw_ctx *cx, MlirValue idx, MlirValue dims) {
  MlirValue zero = tw_splat(cx, tw_elem(idx), tw_rank(idx), 0);
  return tw_select(cx, tw_compare(cx, "tosa.greater", zero, idx), tw_binary(cx, "tosa.add", idx, dims), idx);
}

/* tosa.gather of values [N,K,C] at indices [N,W] i32 (booleans, which
 * it does not take, gathered as i8; int64 values at int64 indices). */
static MlirValue gather(lw_ctx *cx, MlirValue values, MlirValue indices) {
  if (mlirValueIsNull(values) || mlirValueIsNull(indices)) return (MlirValue){NULL};
  int is_bool = mlirTypeIsAInteger(tw_elem(values)) && mlirIntegerTypeGetWidth(tw_elem(values)) == 1;
  if (is_bool) values = tw_cast(cx, values, O2M_DT_BOOL, O2M_DT_INT8);
  /* the spec pairs int64 values (the int64 extension) with int64 indices only */
  if (mlirTypeIsAInteger(tw_elem(values)) && mlirIntegerTypeGetWidth(tw_elem(values)) == 64 &&
      mlirIntegerTypeGetWidth(tw_elem(indices)) == 32)
    indices = tw_cast(cx, indices, O2M_DT_INT32, O2M_DT_INT64);
  int64_t sizes[3] = {tw_size(values, 0), tw_size(indices, 1), tw_size(values, 2)};
  MlirValue ops[2] = {values, indices};
  MlirValue r = lw_op1(cx, "tosa.gather", 2, ops, tw_tensor(cx, tw_elem(values), 3, sizes), NULL);
  return is_bool ? tw_cast(cx, r, O2M_DT_INT8, O2M_DT_BOOL) : r;
}

/* ---- re-shaping ------------------------------------------------------------------ */

/* Reshape, Flatten, Squeeze, Unsqueeze: a reshape to the inferred shape. */
o2m_status tw_lower_reshape(lw_ctx *cx) {
  o2m_status s = check_node(cx, 1);
  if (s) return s;
  int64_t sizes[TW_MAX_RANK];
  int rank = out_sizes(cx, 0, sizes);
  if (rank < 0) return lw_unsupported(cx, "TOSA reshape needs a static result shape");
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  return lw_set_out(cx, 0, tw_reshape(cx, x, rank, sizes));
}

o2m_status tw_lower_transpose(lw_ctx *cx) {
  o2m_status s = check_node(cx, 1);
  if (s) return s;
  MlirValue x = lw_in(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "input 0 is missing");
  int rank = tw_rank(x), perm[TW_MAX_RANK];
  const int64_t *p = NULL;
  int n = lw_attr_ints(cx, "perm", &p);
  if (n >= 0 && n != rank) return lw_error(cx, "perm has %d entries for rank %d", n, rank);
  for (int k = 0; k < rank; k++) perm[k] = n >= 0 ? (int)p[k] : rank - 1 - k;
  return lw_set_out(cx, 0, tw_transpose(cx, x, perm));
}

/* DepthToSpace and SpaceToDepth: reshape to 6 dims, transpose, reshape. */
static o2m_status depth_space(lw_ctx *cx, int to_space) {
  MlirValue x;
  int64_t in[TW_MAX_RANK], out[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, in, &rank);
  if (s) return s;
  if (rank != 4 || out_sizes(cx, 0, out) != 4) return lw_unsupported(cx, "needs a static 4-D input");
  int64_t b = lw_attr_int(cx, "blocksize", 0), mid[6], plan[6];
  if (b <= 0) return lw_error(cx, "blocksize %lld", (long long)b);
  int crd = strcmp(lw_attr_string(cx, "mode", "DCR"), "CRD") == 0, perm[6];
  lw_depth_space_plan(in, b, to_space, crd, mid, plan);
  for (int k = 0; k < 6; k++) perm[k] = (int)plan[k];
  MlirValue r = tw_transpose(cx, tw_reshape(cx, x, 6, mid), perm);
  return lw_set_out(cx, 0, tw_reshape(cx, r, 4, out));
}

o2m_status tw_lower_depth_to_space(lw_ctx *cx) { return depth_space(cx, 1); }
o2m_status tw_lower_space_to_depth(lw_ctx *cx) { return depth_space(cx, 0); }

/* ---- data movement ---------------------------------------------------------------- */

o2m_status tw_lower_concat(lw_ctx *cx) {
  o2m_status s = check_node(cx, 1);
  if (s) return s;
  int n = cx->node->n_inputs;
  MlirValue *in = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(*in));
  if (!in) return lw_error(cx, "out of memory");
  if (n > 64) return lw_unsupported(cx, "more than 64 inputs");
  for (int i = 0; i < n; i++) {
    int64_t sizes[TW_MAX_RANK];
    in[i] = lw_in(cx, i);
    if (mlirValueIsNull(in[i])) return lw_error(cx, "input %d is missing", i);
    if (value_sizes(in[i], sizes) < 0) return lw_unsupported(cx, "TOSA concat needs static shapes");
  }
  int axis = 0;
  if ((s = axis_attr(cx, 0, tw_rank(in[0]), &axis))) return s;
  return lw_set_out(cx, 0, tw_concat(cx, n, in, axis));
}

/* Split: consecutive slices sized as the inferred outputs. */
o2m_status tw_lower_split(lw_ctx *cx) {
  MlirValue x;
  int64_t in[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, in, &rank);
  if (s) return s;
  int axis = 0;
  if ((s = axis_attr(cx, 0, rank, &axis))) return s;
  int64_t start = 0;
  for (int i = 0; i < cx->node->n_outputs; i++) {
    int64_t out[TW_MAX_RANK];
    if (out_sizes(cx, i, out) != rank) return lw_unsupported(cx, "output %d has no static shape", i);
    if (lw_out_present(cx, i) && (s = lw_set_out(cx, i, tw_slice_axis(cx, x, axis, start, out[axis]))))
      return s;
    start += out[axis];
  }
  return O2M_OK;
}

/* Elements start, start + step, ... (count of them, step > 0) of an axis:
 * a slice of count * step elements (padded at the end where the axis is
 * short), viewed as [count, step] and cut to its first column. */
static MlirValue strided_axis(lw_ctx *cx, MlirValue v, int axis, int64_t start, int64_t step,
                              int64_t count) {
  int64_t sizes[TW_MAX_RANK];
  int rank = value_sizes(v, sizes);
  if (rank < 0) return (MlirValue){NULL};
  int64_t span = count * step, avail = sizes[axis] - start;
  v = tw_slice_axis(cx, v, axis, start, span < avail ? span : avail);
  if (step == 1 || count == 0) return v;
  if (span > avail) {
    int64_t pads[2 * TW_MAX_RANK] = {0};
    pads[2 * axis + 1] = span - avail;
    v = pad(cx, v, pads, tw_zero_point(cx, tw_elem(v)));
  }
  int64_t split[TW_MAX_RANK + 1];
  for (int k = 0; k <= rank; k++) split[k] = k < axis ? sizes[k] : k == axis ? count : k == axis + 1 ? step : sizes[k - 1];
  v = tw_reshape(cx, v, rank + 1, split);
  v = tw_slice_axis(cx, v, axis + 1, 0, 1);
  sizes[axis] = count;
  return tw_reshape(cx, v, rank, sizes);
}

o2m_status tw_lower_slice(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, dims, &rank);
  if (s) return s;
  int64_t *starts, *ends, *axes = NULL, *steps = NULL;
  int n = (int)lw_in_known_ints(cx, 1, &starts);
  if (n < 0 || lw_in_known_ints(cx, 2, &ends) != n ||
      (lw_in_present(cx, 3) && lw_in_known_ints(cx, 3, &axes) != n) ||
      (lw_in_present(cx, 4) && lw_in_known_ints(cx, 4, &steps) != n))
    return lw_unsupported(cx, "TOSA slice needs known starts, ends, axes and steps");
  for (int i = 0; i < n; i++) {
    int axis = norm_axis(axes ? axes[i] : i, rank);
    int64_t step = steps ? steps[i] : 1, b = starts[i], e = ends[i];
    if (axis < 0 || axis >= rank || step == 0) return lw_error(cx, "bad slice axis or step");
    int64_t d = dims[axis], lo = step > 0 ? 0 : -1, hi = step > 0 ? d : d - 1;
    b = b < 0 ? (b < -d ? 0 : b + d) : b, e = e < 0 ? (e < -d - 1 ? -1 : e + d) : e;
    b = b < 0 ? 0 : b > hi ? hi : b;
    e = e < lo ? lo : e > hi ? hi : e;
    int64_t mag = step > 0 ? step : step < -d ? d + 1 : -step; /* no overflow of -INT64_MIN */
    int64_t count = step > 0 ? (e > b ? (e - b - 1) / mag + 1 : 0) : (b > e ? (b - e - 1) / mag + 1 : 0);
    if (count <= 1) step = step > 0 ? 1 : -1; /* one element: no stride */
    if (step < 0) x = tw_reverse(cx, x, axis), b = d - 1 - b, step = -step;
    x = strided_axis(cx, x, axis, b, step, count);
    if (mlirValueIsNull(x)) return lw_error(cx, "internal: slice of axis %d", axis);
  }
  return lw_set_out(cx, 0, x);
}

/* The pieces of a reflect/edge/wrap pad of one axis: before and after. */
static o2m_status pad_axis(lw_ctx *cx, const char *mode, MlirValue *x, int axis, int64_t before,
                           int64_t after) {
  int64_t d = tw_size(*x, axis), mult[TW_MAX_RANK];
  int rank = tw_rank(*x);
  MlirValue pieces[3] = {{NULL}, *x, {NULL}};
  for (int k = 0; k < rank; k++) mult[k] = 1;
  if (strcmp(mode, "edge") == 0) {
    mult[axis] = before, pieces[0] = before ? tile(cx, tw_slice_axis(cx, *x, axis, 0, 1), mult) : pieces[0];
    mult[axis] = after, pieces[2] = after ? tile(cx, tw_slice_axis(cx, *x, axis, d - 1, 1), mult) : pieces[2];
  } else if (strcmp(mode, "reflect") == 0) {
    if (before >= d || after >= d) return lw_unsupported(cx, "reflect pads of at least the dim size");
    if (before) pieces[0] = tw_reverse(cx, tw_slice_axis(cx, *x, axis, 1, before), axis);
    if (after) pieces[2] = tw_reverse(cx, tw_slice_axis(cx, *x, axis, d - 1 - after, after), axis);
  } else if (strcmp(mode, "wrap") == 0) {
    if (before > d || after > d) return lw_unsupported(cx, "wrap pads larger than the dim size");
    if (before) pieces[0] = tw_slice_axis(cx, *x, axis, d - before, before);
    if (after) pieces[2] = tw_slice_axis(cx, *x, axis, 0, after);
  } else {
    return lw_unsupported(cx, "pad mode '%s'", mode);
  }
  MlirValue parts[3];
  int m = 0;
  for (int i = 0; i < 3; i++)
    if (!mlirValueIsNull(pieces[i])) parts[m++] = pieces[i];
  *x = tw_concat(cx, m, parts, axis);
  return O2M_OK;
}

/* A pad by a value known only at run time: a pad with zeros, then that
 * value selected outside the input's region (a constant mask). */
static MlirValue pad_runtime_value(lw_ctx *cx, MlirValue x, const int64_t *pads, MlirValue value) {
  int64_t sizes[TW_MAX_RANK], c[TW_MAX_RANK], ones[TW_MAX_RANK];
  int rank = value_sizes(x, sizes);
  for (int k = 0; k < rank; k++) sizes[k] += pads[2 * k] + pads[2 * k + 1], ones[k] = 1;
  int64_t n = product(rank, sizes);
  int *inside = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(*inside));
  if (!inside || mlirValueIsNull(value)) return (MlirValue){NULL};
  for (int64_t p = 0; p < n; p++) {
    coords_of(p, rank, sizes, c);
    inside[p] = 1;
    for (int k = 0; k < rank; k++) inside[p] &= c[k] >= pads[2 * k] && c[k] < sizes[k] - pads[2 * k + 1];
  }
  MlirValue padded = pad(cx, x, pads, tw_zero_point(cx, tw_elem(x)));
  return tw_select(cx, const_bool(cx, rank, sizes, inside), padded, tw_reshape(cx, value, rank, ones));
}

o2m_status tw_lower_pad(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, dims, &rank);
  if (s) return s;
  int64_t *given, *axes = NULL, pads[2 * TW_MAX_RANK] = {0};
  int n = (int)lw_in_known_ints(cx, 1, &given);
  int n_axes = lw_in_present(cx, 3) ? (int)lw_in_known_ints(cx, 3, &axes) : rank;
  if (n < 0 || n_axes < 0) return lw_unsupported(cx, "TOSA pad needs known pads and axes");
  if (n != 2 * n_axes) return lw_error(cx, "%d pads for %d axes", n, n_axes);
  for (int i = 0; i < n_axes; i++) {
    int axis = norm_axis(axes ? axes[i] : i, rank);
    if (axis < 0 || axis >= rank) return lw_error(cx, "pad axis out of range");
    pads[2 * axis] = given[i], pads[2 * axis + 1] = given[i + n_axes];
  }
  /* negative pads crop first */
  int64_t start[TW_MAX_RANK], size[TW_MAX_RANK];
  int crop = 0;
  for (int k = 0; k < rank; k++) {
    int64_t b = pads[2 * k] < 0 ? -pads[2 * k] : 0, a = pads[2 * k + 1] < 0 ? -pads[2 * k + 1] : 0;
    start[k] = b, size[k] = dims[k] - b - a, crop |= b || a;
    if (size[k] < 0) return lw_error(cx, "pads crop more than dim %d", k);
    pads[2 * k] = pads[2 * k] < 0 ? 0 : pads[2 * k], pads[2 * k + 1] = pads[2 * k + 1] < 0 ? 0 : pads[2 * k + 1];
  }
  if (crop) x = slice(cx, x, start, size);
  const char *mode = lw_attr_string(cx, "mode", "constant");
  if (strcmp(mode, "constant") == 0) {
    int ok;
    MlirValue value = known_scalar(cx, 2, tw_elem(x), 0, &ok);
    if (ok) return lw_set_out(cx, 0, pad(cx, x, pads, value));
    return lw_set_out(cx, 0, pad_runtime_value(cx, x, pads, lw_in(cx, 2)));
  }
  for (int k = 0; k < rank; k++)
    if (pads[2 * k] || pads[2 * k + 1])
      if ((s = pad_axis(cx, mode, &x, k, pads[2 * k], pads[2 * k + 1]))) return s;
  return lw_set_out(cx, 0, x);
}

o2m_status tw_lower_tile(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK], *repeats;
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, dims, &rank);
  if (s) return s;
  if (lw_in_known_ints(cx, 1, &repeats) != rank) return lw_unsupported(cx, "TOSA tile needs known repeats");
  return lw_set_out(cx, 0, tile(cx, x, repeats));
}

/* Expand: the input at the result's rank, tiled along its size-1 dims. */
o2m_status tw_lower_expand(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK], out[TW_MAX_RANK], mult[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, dims, &rank);
  if (s) return s;
  int r = out_sizes(cx, 0, out);
  if (r < rank) return lw_unsupported(cx, "TOSA expand needs a static result shape");
  x = tw_to_rank(cx, x, r);
  for (int k = 0; k < r; k++) {
    int64_t d = tw_size(x, k);
    mult[k] = d == out[k] ? 1 : out[k];
    if (d != out[k] && d != 1) return lw_error(cx, "cannot expand dim %d of size %lld", k, (long long)d);
    if (out[k] == 0 && d == 1) return lw_unsupported(cx, "expanding to an empty dim");
  }
  return lw_set_out(cx, 0, tile(cx, x, mult));
}

/* ReverseSequence: a gather along time, per batch, of len-1-t (t < len). */
o2m_status tw_lower_reverse_sequence(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, dims, &rank);
  if (s) return s;
  int batch = (int)lw_attr_int(cx, "batch_axis", 1), perm[TW_MAX_RANK];
  if (rank < 2) return lw_error(cx, "ReverseSequence needs rank 2 or more");
  for (int k = 0; k < rank; k++) perm[k] = k;
  perm[0] = batch, perm[1] = 1 - batch; /* batch first, then time */
  MlirValue t = tw_transpose(cx, x, perm);
  int64_t sizes[TW_MAX_RANK];
  value_sizes(t, sizes);
  int64_t nb = sizes[0], nt = sizes[1], c = product(rank - 2, sizes + 2);
  int64_t view[3] = {nb, nt, c}, row[2] = {1, nt}, col[2] = {nb, 1}, w[2] = {0, 1};
  MlirValue iota = const_affine(cx, 2, row, w, 0);
  MlirValue len = tw_reshape(cx, index_i32(cx, 1), 2, col);
  MlirValue last = tw_binary(cx, "tosa.sub", len, tw_splat(cx, tw_elem(len), 2, 1));
  MlirValue idx = tw_select(cx, tw_compare(cx, "tosa.greater", len, iota),
                            tw_binary(cx, "tosa.sub", last, iota), iota);
  MlirValue g = tw_reshape(cx, gather(cx, tw_reshape(cx, t, 3, view), idx), rank, sizes);
  return lw_set_out(cx, 0, tw_transpose(cx, g, perm));
}

/* ---- masks ---------------------------------------------------------------------- */

/* A [rows, cols] i1 constant, true where col - row compares with k
 * (cmp: >= when 1, <= when -1, == when 0), at rank `rank`. */
static MlirValue diagonal_mask(lw_ctx *cx, int rank, int64_t rows, int64_t cols, int64_t k, int cmp) {
  int64_t n = rows * cols, sizes[TW_MAX_RANK];
  int *v = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(*v));
  if (!v) return (MlirValue){NULL};
  for (int64_t p = 0; p < n; p++) {
    int64_t diff = p % cols - p / cols;
    v[p] = cmp > 0 ? diff >= k : cmp < 0 ? diff <= k : diff == k;
  }
  for (int j = 0; j < rank; j++) sizes[j] = j == rank - 2 ? rows : j == rank - 1 ? cols : 1;
  return const_bool(cx, rank, sizes, v);
}

o2m_status tw_lower_trilu(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK], *kv, k = 0;
  int rank = 0;
  o2m_status s = checked_input(cx, 0, &x, dims, &rank);
  if (s) return s;
  if (lw_in_present(cx, 1)) {
    if (lw_in_known_ints(cx, 1, &kv) != 1) return lw_unsupported(cx, "TOSA Trilu needs a known k");
    k = kv[0];
  }
  if (rank < 2 || product(rank, dims) == 0) return lw_unsupported(cx, "Trilu of an empty or 1-D tensor");
  int upper = (int)lw_attr_int(cx, "upper", 1);
  MlirValue mask = diagonal_mask(cx, rank, dims[rank - 2], dims[rank - 1], k, upper ? 1 : -1);
  return lw_set_out(cx, 0, tw_select(cx, mask, x, tw_splat(cx, tw_elem(x), rank, 0)));
}

o2m_status tw_lower_eye_like(lw_ctx *cx) {
  o2m_status s = check_node(cx, 0);
  int64_t out[TW_MAX_RANK];
  if (s) return s;
  if (out_sizes(cx, 0, out) != 2) return lw_unsupported(cx, "EyeLike needs a static 2-D shape");
  MlirType elem = lw_elem_type(cx, lw_out_type(cx, 0)->elem);
  MlirValue mask = diagonal_mask(cx, 2, out[0], out[1], lw_attr_int(cx, "k", 0), 0);
  return lw_set_out(cx, 0, tw_select(cx, mask, tw_splat(cx, elem, 2, 1), tw_splat(cx, elem, 2, 0)));
}

/* OneHot: an i32 iota along the new axis compared with the indices. */
o2m_status tw_lower_onehot(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK], *depth_v, out[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 0, &x, dims, &rank);
  if (s) return s;
  const o2m_tensor *dt = lw_in_known(cx, 1);
  if (!dt || dt->count != 1) return lw_unsupported(cx, "TOSA OneHot needs a known depth");
  int64_t depth = lw_in_known_ints(cx, 1, &depth_v) == 1 ? depth_v[0] : (int64_t)o2m_tensor_get_float(dt, 0);
  if (out_sizes(cx, 0, out) != rank + 1) return lw_unsupported(cx, "OneHot needs a static result");
  int axis = 0;
  if ((s = axis_attr(cx, -1, rank + 1, &axis))) return s;
  int64_t shape[TW_MAX_RANK], w[TW_MAX_RANK] = {0}, one[1] = {1};
  for (int k = 0; k <= rank; k++) shape[k] = k == axis ? 1 : dims[k < axis ? k : k - 1];
  MlirValue idx = tw_reshape(cx, index_i32(cx, 0), rank + 1, shape);
  idx = wrap_negative(cx, idx, tw_splat(cx, tw_elem(idx), rank + 1, (double)depth));
  for (int k = 0; k <= rank; k++) shape[k] = k == axis ? depth : 1;
  w[axis] = 1;
  MlirValue hit = tw_compare(cx, "tosa.equal", idx, const_affine(cx, rank + 1, shape, w, 0));
  MlirValue values = lw_in(cx, 2);
  for (int k = 0; k <= rank; k++) shape[k] = 1;
  MlirValue off = tw_reshape(cx, slice(cx, values, (int64_t[]){0}, one), rank + 1, shape);
  MlirValue on = tw_reshape(cx, slice(cx, values, (int64_t[]){1}, one), rank + 1, shape);
  return lw_set_out(cx, 0, tw_select(cx, hit, on, off));
}

/* ---- gathers and scatters ------------------------------------------------------- */

/* Gather: data viewed as [N, K, C] around the axis; the indices, made
 * non-negative, repeated for each of the N rows. */
o2m_status tw_lower_gather(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK], out[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, dims, &rank);
  if (s) return s;
  int axis = 0, r = out_sizes(cx, 0, out);
  if ((s = axis_attr(cx, 0, rank, &axis))) return s;
  if (r < 0) return lw_unsupported(cx, "TOSA gather needs a static result");
  int64_t n = product(axis, dims), k = dims[axis], c = product(rank - axis - 1, dims + axis + 1);
  MlirValue idx = index_i32(cx, 1);
  int64_t isz[TW_MAX_RANK];
  int ir = mlirValueIsNull(idx) ? -1 : value_sizes(idx, isz);
  if (ir < 0) return lw_unsupported(cx, "TOSA gather needs static indices");
  int64_t view[3] = {n, k, c}, row[2] = {1, product(ir, isz)}, mult[2] = {n, 1};
  idx = tw_reshape(cx, idx, 2, row);
  idx = tile(cx, wrap_negative(cx, idx, tw_splat(cx, tw_elem(idx), 2, (double)k)), mult);
  return lw_set_out(cx, 0, tw_reshape(cx, gather(cx, tw_reshape(cx, x, 3, view), idx), r, out));
}

/* The flat positions in data (shape dims) that GatherElements and
 * ScatterElements address: the index along `axis` (made non-negative),
 * the coordinates of each element elsewhere; as [1, W] i32. */
static MlirValue element_positions(lw_ctx *cx, int rank, const int64_t *dims, int axis, int in) {
  int64_t isz[TW_MAX_RANK], strides[TW_MAX_RANK], w[TW_MAX_RANK];
  MlirValue idx = index_i32(cx, in);
  if (mlirValueIsNull(idx) || value_sizes(idx, isz) != rank) return (MlirValue){NULL};
  strides_of(rank, dims, strides);
  memcpy(w, strides, sizeof(int64_t) * (size_t)rank);
  w[axis] = 0;
  idx = wrap_negative(cx, idx, tw_splat(cx, tw_elem(idx), rank, (double)dims[axis]));
  MlirValue pos = tw_binary(cx, "tosa.add", tw_mul(cx, idx, tw_splat(cx, tw_elem(idx), rank, (double)strides[axis])),
                            const_affine(cx, rank, isz, w, 0));
  int64_t row[2] = {1, product(rank, isz)};
  return tw_reshape(cx, pos, 2, row);
}

o2m_status tw_lower_gather_elements(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK], out[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 1, &x, dims, &rank);
  if (s) return s;
  int axis = 0;
  if ((s = axis_attr(cx, 0, rank, &axis))) return s;
  MlirValue pos = element_positions(cx, rank, dims, axis, 1);
  if (mlirValueIsNull(pos) || out_sizes(cx, 0, out) != rank) return lw_unsupported(cx, "TOSA GatherElements needs static shapes");
  int64_t view[3] = {1, product(rank, dims), 1};
  return lw_set_out(cx, 0, tw_reshape(cx, gather(cx, tw_reshape(cx, x, 3, view), pos), rank, out));
}

/* How a scatter combines the data at a position with the updates that
 * match it: the value where nothing matches the selects (fill: 0 or 1,
 * or the data itself), the reduction over the matches, and the op joining
 * that with the data (NULL: the reduction where some update matches). */
static const struct {
  const char *name, *reduce, *join;
  int fill; /* 0, 1, or -1: the data */
} scatter_modes[] = {
    {"none", "tosa.reduce_sum", NULL, 0},
    {"add", "tosa.reduce_sum", "tosa.add", 0},
    {"mul", "tosa.reduce_product", "tosa.mul", 1},
    {"max", "tosa.reduce_max", "tosa.maximum", -1},
    {"min", "tosa.reduce_min", "tosa.minimum", -1},
};

enum { SCATTER_MAX_MATCHES = 1 << 24 }; /* elements of the [P, W, C] match */

/* A scatter of updates [W, C] into data [P, C] at flat positions pos
 * [1, W], as a dense match of every position with every update (upstream
 * MLIR does not lower tosa.scatter to Linalg, and it has no reductions):
 * M[p, w] = pos[w] == p, then each position reduces the updates it
 * matches. Returns data's shape. */
static o2m_status dense_scatter(lw_ctx *cx, MlirValue data, MlirValue pos, MlirValue updates,
                                int64_t p, int64_t c) {
  const char *mode = lw_attr_string(cx, "reduction", "none");
  size_t m = 0;
  while (m < sizeof(scatter_modes) / sizeof(scatter_modes[0]) && strcmp(scatter_modes[m].name, mode)) m++;
  if (m == sizeof(scatter_modes) / sizeof(scatter_modes[0])) return lw_unsupported(cx, "scatter reduction '%s'", mode);
  if (mlirValueIsNull(pos) || mlirValueIsNull(updates)) return lw_unsupported(cx, "TOSA scatter needs static shapes");
  int64_t w = tw_size(pos, 1), dims[TW_MAX_RANK];
  int rank = value_sizes(data, dims);
  if (p * w * c > SCATTER_MAX_MATCHES) return lw_unsupported(cx, "scatter too large for a dense match");
  int64_t col[2] = {p, 1}, wt[2] = {1, 0}, d3[3] = {p, 1, c}, u3[3] = {1, w, c}, m3[3] = {p, w, 1};
  MlirValue match = tw_reshape(cx, tw_compare(cx, "tosa.equal", pos, const_affine(cx, 2, col, wt, 0)), 3, m3);
  MlirValue d = tw_reshape(cx, data, 3, d3), u = tw_reshape(cx, updates, 3, u3);
  MlirValue fill = scatter_modes[m].fill < 0 ? d : tw_splat(cx, tw_elem(d), 3, scatter_modes[m].fill);
  MlirValue r = tw_reduce(cx, scatter_modes[m].reduce, tw_select(cx, match, u, fill), 1);
  if (scatter_modes[m].join)
    r = strcmp(scatter_modes[m].join, "tosa.mul") == 0 ? tw_mul(cx, d, r) : tw_binary(cx, scatter_modes[m].join, d, r);
  else
    r = tw_select(cx, tw_reduce(cx, "tosa.reduce_any", match, 1), r, d);
  return lw_set_out(cx, 0, tw_reshape(cx, r, rank, dims));
}

o2m_status tw_lower_scatter_elements(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK];
  int rank = 0;
  o2m_status s = checked_input(cx, 0, &x, dims, &rank);
  if (s) return s;
  int axis = 0;
  if ((s = axis_attr(cx, 0, rank, &axis))) return s;
  MlirValue pos = element_positions(cx, rank, dims, axis, 1), updates = lw_in(cx, 2);
  int64_t flat[1] = {mlirValueIsNull(pos) ? 0 : tw_size(pos, 1)};
  if (!mlirValueIsNull(updates)) updates = tw_reshape(cx, updates, 1, flat);
  return dense_scatter(cx, x, pos, updates, product(rank, dims), 1);
}

/* The flat positions of GatherND/ScatterND: indices [..., q] (q leading
 * dims of data after `batch` batch dims) as [1, W] i32, counting slices
 * of the remaining dims. */
static MlirValue nd_positions(lw_ctx *cx, int rank, const int64_t *dims, int batch, int in, int *q_out) {
  int64_t isz[TW_MAX_RANK], w[TW_MAX_RANK] = {0}, strides[TW_MAX_RANK];
  MlirValue idx = index_i32(cx, in);
  int ir = mlirValueIsNull(idx) ? -1 : value_sizes(idx, isz);
  if (ir < 1) return (MlirValue){NULL};
  int q = (int)isz[ir - 1];
  if (batch + q > rank) return (MlirValue){NULL};
  strides_of(batch + q, dims, strides);
  int32_t qdims[TW_MAX_RANK], qstr[TW_MAX_RANK];
  for (int j = 0; j < q; j++) qdims[j] = (int32_t)dims[batch + j], qstr[j] = (int32_t)strides[batch + j];
  int64_t qshape[TW_MAX_RANK];
  for (int k = 0; k < ir; k++) qshape[k] = k == ir - 1 ? q : 1;
  idx = wrap_negative(cx, idx, const_i32(cx, ir, qshape, qdims));
  MlirValue pos = tw_reduce(cx, "tosa.reduce_sum", tw_mul(cx, idx, const_i32(cx, ir, qshape, qstr)), ir - 1);
  for (int k = 0; k < batch; k++) w[k] = strides[k];
  isz[ir - 1] = 1;
  if (batch) pos = tw_binary(cx, "tosa.add", pos, const_affine(cx, ir, isz, w, 0));
  int64_t row[2] = {1, product(ir - 1, isz)};
  *q_out = q;
  return tw_reshape(cx, pos, 2, row);
}

o2m_status tw_lower_gather_nd(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK], out[TW_MAX_RANK];
  int rank = 0, q = 0;
  o2m_status s = checked_input(cx, 1, &x, dims, &rank);
  if (s) return s;
  int batch = (int)lw_attr_int(cx, "batch_dims", 0), r = out_sizes(cx, 0, out);
  MlirValue pos = nd_positions(cx, rank, dims, batch, 1, &q);
  if (mlirValueIsNull(pos) || r < 0) return lw_unsupported(cx, "TOSA GatherND needs static shapes");
  int64_t view[3] = {1, product(batch + q, dims), product(rank - batch - q, dims + batch + q)};
  return lw_set_out(cx, 0, tw_reshape(cx, gather(cx, tw_reshape(cx, x, 3, view), pos), r, out));
}

o2m_status tw_lower_scatter_nd(lw_ctx *cx) {
  MlirValue x;
  int64_t dims[TW_MAX_RANK];
  int rank = 0, q = 0;
  o2m_status s = checked_input(cx, 0, &x, dims, &rank);
  if (s) return s;
  MlirValue pos = nd_positions(cx, rank, dims, 0, 1, &q), updates = lw_in(cx, 2);
  int64_t c = product(rank - q, dims + q), flat[2] = {mlirValueIsNull(pos) ? 0 : tw_size(pos, 1), c};
  if (!mlirValueIsNull(updates)) updates = tw_reshape(cx, updates, 2, flat);
  return dense_scatter(cx, x, pos, updates, product(q, dims), c);
}

/* ---- shapes as values: Shape, Size, ConstantOfShape, Range ------------------------ */

/* A constant of output 0's (static) type from int64 values (cast to the
 * output's dtype by lw_const_tensor's raw layout). */
static MlirValue const_int64s(lw_ctx *cx, int rank, const int64_t *sizes, const int64_t *values) {
  int64_t n = product(rank, sizes);
  o2m_tensor *t = o2m_arena_alloc(&cx->scratch, sizeof(o2m_tensor));
  int64_t *dims = o2m_arena_array(&cx->scratch, (size_t)rank + 1, sizeof(int64_t));
  int64_t *data = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(int64_t));
  if (!t || !dims || !data) return (MlirValue){NULL};
  memset(t, 0, sizeof(*t));
  for (int k = 0; k < rank; k++) dims[k] = sizes[k];
  memcpy(data, values, (size_t)n * sizeof(int64_t));
  t->dtype = O2M_DT_INT64, t->rank = rank, t->dims = dims, t->count = n;
  t->data = (const uint8_t *)data, t->nbytes = (size_t)n * sizeof(int64_t), t->origin = O2M_DATA_COMPUTED;
  return lw_const_tensor(cx, t);
}

/* Shape (start, end) and Size of a statically shaped input: constants. */
o2m_status tw_lower_shape_of(lw_ctx *cx) {
  const o2m_type *x = lw_in_type(cx, 0);
  if (x->kind != O2M_TYPE_TENSOR || x->rank < 0) return lw_unsupported(cx, "the input has no known rank");
  int64_t dims[TW_MAX_RANK], count = 1;
  for (int k = 0; k < x->rank && k < TW_MAX_RANK; k++) {
    if ((dims[k] = x->dims[k].size) < 0) return lw_unsupported(cx, "dim %d is dynamic (TOSA has no shape op on tensors)", k);
    count *= dims[k];
  }
  if (strcmp(cx->node->op_type, "Size") == 0) return lw_set_out(cx, 0, const_int64s(cx, 0, NULL, &count));
  int64_t start = lw_attr_int(cx, "start", 0), end = lw_attr_int(cx, "end", x->rank);
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < start ? start : end > x->rank ? x->rank : end;
  int64_t n = end - start;
  if (n == 0) return lw_unsupported(cx, "TOSA has no empty tensors (an empty shape)");
  return lw_set_out(cx, 0, const_int64s(cx, 1, &n, dims + start));
}

/* ConstantOfShape and Range whose results have a static shape: the value
 * broadcast (tosa.tile of the one-element value), start + arange(n) *
 * delta. */
o2m_status tw_lower_constant_of_shape(lw_ctx *cx) {
  int64_t sizes[TW_MAX_RANK];
  int rank = out_sizes(cx, 0, sizes);
  o2m_status s = check_node(cx, 1);
  if (s) return s;
  if (rank < 0) return lw_unsupported(cx, "the result's shape is not known at import");
  const o2m_attr *value = lw_attr(cx, "value");
  o2m_dtype d = lw_out_type(cx, 0)->elem;
  MlirValue one = value && value->type == O2M_ATTR_TENSOR && value->t ? lw_const_tensor(cx, value->t)
                                                                       : tw_splat(cx, lw_elem_type(cx, d), 1, 0);
  int64_t ones[TW_MAX_RANK];
  for (int k = 0; k < rank; k++) ones[k] = 1;
  one = tw_reshape(cx, one, rank, ones);
  return lw_set_out(cx, 0, tile(cx, one, sizes));
}

enum { MAX_RANGE_CONSTANT = 1 << 26 };

o2m_status tw_lower_range(lw_ctx *cx) {
  int64_t n;
  o2m_status s = check_node(cx, 0);
  if (s) return s;
  if (out_sizes(cx, 0, &n) != 1) return lw_unsupported(cx, "the number of elements is not known at import");
  /* the indices become a constant of the module */
  if (n > MAX_RANGE_CONSTANT)
    return lw_unsupported(cx, "a Range of %lld elements (at most %d are written as a constant)", (long long)n,
                          MAX_RANGE_CONSTANT);
  o2m_dtype d = lw_out_type(cx, 0)->elem;
  MlirValue iota;
  if (d == O2M_DT_INT64) {
    int64_t *idx = o2m_arena_array(&cx->scratch, (size_t)n + 1, sizeof(int64_t));
    if (!idx) return lw_error(cx, "out of memory");
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    iota = const_int64s(cx, 1, &n, idx);
  } else { /* 0..n-1 as i32, cast once to the result's type */
    int64_t one = 1;
    iota = tw_cast(cx, const_affine(cx, 1, &n, &one, 0), O2M_DT_INT32, d);
  }
  MlirValue start = tw_reshape(cx, lw_in(cx, 0), 1, (int64_t[]){1});
  MlirValue delta = tw_reshape(cx, lw_in(cx, 2), 1, (int64_t[]){1});
  return lw_set_out(cx, 0, tw_binary(cx, "tosa.add", start, tw_mul(cx, iota, delta)));
}
