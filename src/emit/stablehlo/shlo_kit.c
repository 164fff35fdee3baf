/* shlo_kit.c - the StableHLO emitter's toolkit (shlo_kit.h): types,
 * constants, shapes and shape tensors, numpy broadcasting, elementwise
 * ops, data movement, reduce with its reducer region, dot_general. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emit/stablehlo/shlo_kit.h"

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

/* ---- types ----------------------------------------------------------------- */

int sh_rank(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  return mlirTypeIsARankedTensor(t) ? (int)mlirShapedTypeGetRank(t) : -1;
}

int64_t sh_size(MlirValue v, int k) {
  MlirType t = mlirValueGetType(v);
  return mlirShapedTypeIsDynamicDim(t, k) ? -1 : mlirShapedTypeGetDimSize(t, k);
}

int sh_is_static(MlirValue v) { return mlirShapedTypeHasStaticShape(mlirValueGetType(v)); }

MlirType sh_elem(MlirValue v) { return mlirShapedTypeGetElementType(mlirValueGetType(v)); }

int sh_elem_is_float(MlirType e) { return mlirTypeIsAFloat(e); }

int sh_elem_is_bool(MlirType e) { return mlirTypeIsAInteger(e) && mlirIntegerTypeGetWidth(e) == 1; }

int sh_elem_is_unsigned(MlirType e) {
  return mlirTypeIsAInteger(e) && (mlirIntegerTypeIsUnsigned(e) || mlirIntegerTypeGetWidth(e) == 1);
}

int sh_elem_is_complex(MlirType e) { return mlirTypeIsAComplex(e); }

MlirType sh_tensor(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes) {
  (void)cx;
  int64_t shape[SH_MAX_RANK];
  for (int k = 0; k < rank && k < SH_MAX_RANK; k++)
    shape[k] = sizes[k] < 0 ? mlirShapedTypeGetDynamicSize() : sizes[k];
  return mlirRankedTensorTypeGet(rank, shape, elem, mlirAttributeGetNull());
}

MlirType sh_with_elem(lw_ctx *cx, MlirValue v, MlirType elem) {
  int64_t sizes[SH_MAX_RANK];
  int rank = sh_rank(v);
  for (int k = 0; k < rank; k++) sizes[k] = sh_size(v, k);
  return sh_tensor(cx, elem, rank, sizes);
}

MlirType sh_i64(lw_ctx *cx) { return mlirIntegerTypeGet(cx->mc, 64); }
MlirType sh_i32(lw_ctx *cx) { return mlirIntegerTypeGet(cx->mc, 32); }
MlirType sh_i1(lw_ctx *cx) { return mlirIntegerTypeGet(cx->mc, 1); }

MlirType sh_elem_of(lw_ctx *cx, o2m_dtype d) {
  if (d == O2M_DT_COMPLEX64) return mlirComplexTypeGet(mlirF32TypeGet(cx->mc));
  if (d == O2M_DT_COMPLEX128) return mlirComplexTypeGet(mlirF64TypeGet(cx->mc));
  return lw_elem_type(cx, d);
}

const char *sh_compare_type(MlirType e) {
  if (mlirTypeIsAFloat(e) || mlirTypeIsAComplex(e)) return "FLOAT";
  return sh_elem_is_unsigned(e) ? "UNSIGNED" : "SIGNED";
}

/* ---- ops --------------------------------------------------------------------- */

MlirValue sh_op(lw_ctx *cx, const char *name, int n, const MlirValue *operands, MlirType result,
                const char *fmt, ...) {
  for (int i = 0; i < n; i++)
    if (mlirValueIsNull(operands[i])) return (MlirValue){NULL};
  char attrs[4096];
  attrs[0] = 0;
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(attrs, sizeof(attrs), fmt, ap);
    va_end(ap);
  }
  return lw_op1(cx, name, n, operands, result, attrs[0] ? attrs : NULL);
}

static char *join(char *buf, size_t size, const char *open, const char *close, int n,
                  const int64_t *values) {
  size_t len = (size_t)snprintf(buf, size, "%s", open);
  for (int i = 0; i < n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)values[i]);
  if (len < size) snprintf(buf + len, size - len, "%s", close);
  return buf;
}

char *sh_array(char *buf, size_t size, int n, const int64_t *values) {
  return join(buf, size, n ? "array<i64: " : "array<i64", ">", n, values);
}

char *sh_list(char *buf, size_t size, int n, const int64_t *values) {
  return join(buf, size, "[", "]", n, values);
}

MlirBlock sh_region_block(lw_ctx *cx, MlirOperation op, int index, int n, const MlirType *types) {
  MlirLocation locs[16];
  for (int i = 0; i < n && i < 16; i++) locs[i] = cx->loc;
  MlirBlock b = mlirBlockCreate(n, types, locs);
  mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, index), b);
  return b;
}

/* ---- constants ----------------------------------------------------------------- */

static MlirValue constant(lw_ctx *cx, MlirAttribute value, MlirType type) {
  if (mlirAttributeIsNull(value)) return (MlirValue){NULL};
  MlirNamedAttribute attr = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref("value")), value);
  MlirOperation op = lw_op_attrs(cx, "stablehlo.constant", 0, NULL, 1, &type, 1, &attr, 0);
  return mlirOperationIsNull(op) ? (MlirValue){NULL} : mlirOperationGetResult(op, 0);
}

MlirValue sh_const_splat(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes, double v) {
  MlirType type = sh_tensor(cx, elem, rank, sizes);
  MlirAttribute value;
  if (sh_elem_is_bool(elem))
    value = mlirDenseElementsAttrBoolSplatGet(type, v != 0);
  else if (mlirTypeIsAFloat(elem))
    value = mlirDenseElementsAttrSplatGet(type, mlirFloatAttrDoubleGet(cx->mc, elem, v));
  else if (mlirTypeIsAInteger(elem)) {
    /* out-of-range values (e.g. the lowest of a wider type) keep their low bits */
    int64_t bits = v >= 9.2233720368547758e18 ? INT64_MAX : v <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)v;
    if (mlirIntegerTypeIsUnsigned(elem) && v >= 9.2233720368547758e18) bits = -1;
    value = mlirDenseElementsAttrSplatGet(type, mlirIntegerAttrGet(elem, bits));
  } else
    return (MlirValue){NULL};
  return constant(cx, value, type);
}

MlirValue sh_scalar(lw_ctx *cx, MlirType elem, double v) { return sh_const_splat(cx, elem, 0, NULL, v); }

MlirValue sh_fill_like(lw_ctx *cx, MlirType elem, double v, MlirValue like) {
  int rank = sh_rank(like);
  int64_t sizes[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) sizes[k] = sh_size(like, k);
  if (sh_is_static(like)) return sh_const_splat(cx, elem, rank, sizes, v);
  return sh_broadcast_in_dim(cx, sh_scalar(cx, elem, v), sh_tensor(cx, elem, rank, sizes),
                             sh_shape_of(cx, like), NULL);
}

MlirValue sh_const_i64s(lw_ctx *cx, int n, const int64_t *values) {
  int64_t shape[1] = {n};
  MlirType t = sh_tensor(cx, sh_i64(cx), 1, shape);
  return constant(cx, mlirDenseElementsAttrInt64Get(t, n, values), t);
}

/* ---- shapes ---------------------------------------------------------------------- */

/* Shape tensors of dynamic shapes are made once and reused: results of
 * elementwise ops have the shape of their (broadcast) operands, so each
 * value maps to a root value of the same shape, and the shape tensor of
 * a root, made in a block, serves that block and the regions nested in
 * it. The most recent entries are kept. */
enum { MEMO_CAP = 128 };
typedef struct shape_memo {
  struct { MlirValue value, root; } same[MEMO_CAP];
  struct { MlirValue root, shape; MlirBlock block; } shapes[MEMO_CAP];
  int n_same, n_shapes;
} shape_memo;

static shape_memo *memo(lw_ctx *cx) {
  if (!cx->target_state) cx->target_state = o2m_arena_array(&cx->scratch, 1, sizeof(shape_memo));
  return cx->target_state;
}

static MlirValue root_of(lw_ctx *cx, MlirValue v) {
  shape_memo *m = memo(cx);
  for (int i = 0; m && i < MEMO_CAP && i < m->n_same; i++)
    if (mlirValueEqual(m->same[i].value, v)) return m->same[i].root;
  return v;
}

/* Records that `value` has the shape of `like`. */
static void same_shape(lw_ctx *cx, MlirValue value, MlirValue like) {
  shape_memo *m = memo(cx);
  if (!m || mlirValueIsNull(value) || sh_is_static(value)) return;
  int at = m->n_same++ % MEMO_CAP;
  m->same[at].value = value;
  m->same[at].root = root_of(cx, like);
}

/* Whether block `outer` is `inner` or encloses it. */
static int encloses(MlirBlock outer, MlirBlock inner) {
  for (MlirBlock b = inner; !mlirBlockIsNull(b);) {
    if (mlirBlockEqual(b, outer)) return 1;
    MlirOperation op = mlirBlockGetParentOperation(b);
    if (mlirOperationIsNull(op)) return 0;
    b = mlirOperationGetBlock(op);
  }
  return 0;
}

static MlirValue memo_shape(lw_ctx *cx, MlirValue root) {
  shape_memo *m = memo(cx);
  for (int i = 0; m && i < MEMO_CAP && i < m->n_shapes; i++)
    if (mlirValueEqual(m->shapes[i].root, root) && encloses(m->shapes[i].block, cx->block))
      return m->shapes[i].shape;
  return (MlirValue){NULL};
}

static void remember_shape(lw_ctx *cx, MlirValue root, MlirValue shape) {
  shape_memo *m = memo(cx);
  if (!m || mlirValueIsNull(shape)) return;
  int at = m->n_shapes++ % MEMO_CAP;
  m->shapes[at].root = root;
  m->shapes[at].shape = shape;
  m->shapes[at].block = cx->block;
}

MlirValue sh_dim(lw_ctx *cx, MlirValue v, int k) {
  int64_t size = sh_size(v, k);
  if (size >= 0) return sh_scalar(cx, sh_i64(cx), (double)size);
  MlirValue d = sh_op(cx, "stablehlo.get_dimension_size", 1, &v, sh_tensor(cx, sh_i32(cx), 0, NULL),
                      "dimension = %d : i64", k);
  return sh_convert(cx, d, sh_i64(cx));
}

MlirValue sh_shape_from_dims(lw_ctx *cx, int n, const MlirValue *dims) {
  MlirValue parts[SH_MAX_RANK];
  int64_t one[1] = {1};
  if (n == 0) return sh_const_i64s(cx, 0, NULL);
  for (int k = 0; k < n; k++) parts[k] = sh_reshape(cx, dims[k], 1, one);
  return sh_concat(cx, n, parts, 0);
}

MlirValue sh_shape_of(lw_ctx *cx, MlirValue v) {
  int rank = sh_rank(v);
  MlirValue root = root_of(cx, v), shape = memo_shape(cx, root);
  if (!mlirValueIsNull(shape)) return shape;
  MlirValue dims[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) dims[k] = sh_dim(cx, root, k);
  shape = sh_shape_from_dims(cx, rank, dims);
  remember_shape(cx, root, shape);
  return shape;
}

MlirValue sh_reshape(lw_ctx *cx, MlirValue v, int rank, const int64_t *sizes) {
  if (mlirValueIsNull(v)) return v;
  MlirType type = sh_tensor(cx, sh_elem(v), rank, sizes);
  if (mlirTypeEqual(type, mlirValueGetType(v))) return v;
  return sh_op(cx, "stablehlo.reshape", 1, &v, type, NULL);
}

MlirValue sh_reshape_dynamic(lw_ctx *cx, MlirValue v, MlirValue shape, MlirType type) {
  if (mlirShapedTypeHasStaticShape(type)) {
    if (mlirTypeEqual(type, mlirValueGetType(v))) return v;
    return sh_op(cx, "stablehlo.reshape", 1, &v, type, NULL);
  }
  MlirValue ops[2] = {v, shape};
  return sh_op(cx, "stablehlo.dynamic_reshape", 2, ops, type, NULL);
}

MlirValue sh_broadcast_in_dim(lw_ctx *cx, MlirValue v, MlirType type, MlirValue shape,
                              const int64_t *dims) {
  if (mlirValueIsNull(v)) return v;
  int r = sh_rank(v);
  int64_t identity[SH_MAX_RANK];
  if (!dims) /* numpy alignment: operand dims are the trailing result dims */
    for (int k = 0; k < r; k++) identity[k] = mlirShapedTypeGetRank(type) - r + k;
  char a[512];
  sh_array(a, sizeof(a), r, dims ? dims : identity);
  if (mlirShapedTypeHasStaticShape(type)) {
    if (mlirTypeEqual(type, mlirValueGetType(v))) return v;
    return sh_op(cx, "stablehlo.broadcast_in_dim", 1, &v, type, "broadcast_dimensions = %s", a);
  }
  MlirValue ops[2] = {v, shape};
  return sh_op(cx, "stablehlo.dynamic_broadcast_in_dim", 2, ops, type, "broadcast_dimensions = %s", a);
}

int sh_broadcast_all(lw_ctx *cx, int n, MlirValue *values) {
  int rank = 0;
  for (int i = 0; i < n; i++) {
    if (mlirValueIsNull(values[i]) || sh_rank(values[i]) < 0) return 0;
    if (sh_rank(values[i]) > rank) rank = sh_rank(values[i]);
  }
  if (rank > SH_MAX_RANK) return 0;
  int64_t sizes[SH_MAX_RANK];
  int dynamic = 0;
  for (int j = 0; j < rank; j++) {
    sizes[j] = 1;
    for (int i = 0; i < n; i++) {
      int k = j - (rank - sh_rank(values[i]));
      if (k < 0) continue;
      int64_t s = sh_size(values[i], k);
      if (s == 1) continue;
      if (s < 0) {
        if (sizes[j] == 1) sizes[j] = -1;
      } else if (sizes[j] < 0 || sizes[j] == 1) {
        sizes[j] = s;
      } else if (sizes[j] != s) {
        return 0;
      }
    }
    if (sizes[j] < 0) dynamic = 1;
  }
  MlirValue shape = {NULL};
  int full = -1; /* an operand that has the result's shape */
  for (int i = 0; dynamic && i < n && full < 0; i++) {
    if (sh_rank(values[i]) != rank) continue;
    int same = 1;
    for (int j = 0; j < rank; j++) same &= sh_size(values[i], j) == sizes[j];
    if (same) full = i;
  }
  if (full >= 0) {
    /* a dynamic dim of this operand is the result's unless another
     * operand's dim there is dynamic too (it could be 1 here) */
    for (int j = 0; j < rank && full >= 0; j++)
      for (int i = 0; i < n && sizes[j] < 0 && full >= 0; i++) {
        int k = j - (rank - sh_rank(values[i]));
        if (i != full && k >= 0 && sh_size(values[i], k) < 0 &&
            !mlirValueEqual(root_of(cx, values[i]), root_of(cx, values[full])))
          full = -1;
      }
  }
  if (full >= 0) {
    shape = sh_shape_of(cx, values[full]);
  } else if (dynamic) {
    MlirValue dims[SH_MAX_RANK];
    for (int j = 0; j < rank; j++) {
      if (sizes[j] >= 0) {
        dims[j] = sh_scalar(cx, sh_i64(cx), (double)sizes[j]);
        continue;
      }
      /* every dynamic dim here is the size or 1: their maximum is the size */
      MlirValue d = (MlirValue){NULL};
      for (int i = 0; i < n; i++) {
        int k = j - (rank - sh_rank(values[i]));
        if (k < 0 || sh_size(values[i], k) >= 0) continue;
        MlirValue di = sh_dim(cx, values[i], k);
        d = mlirValueIsNull(d) ? di : sh_binary(cx, "stablehlo.maximum", d, di);
      }
      dims[j] = d;
    }
    shape = sh_shape_from_dims(cx, rank, dims);
  }
  for (int i = 0; i < n; i++) {
    MlirType t = sh_tensor(cx, sh_elem(values[i]), rank, sizes);
    if (mlirTypeEqual(t, mlirValueGetType(values[i]))) continue;
    MlirValue b = sh_broadcast_in_dim(cx, values[i], t, shape, NULL);
    if (full >= 0) same_shape(cx, b, values[full]);
    values[i] = b;
  }
  return 1;
}

MlirValue sh_broadcast_like(lw_ctx *cx, MlirValue v, MlirValue like) {
  if (mlirValueIsNull(v) || mlirValueIsNull(like)) return (MlirValue){NULL};
  int rank = sh_rank(like);
  int64_t sizes[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) sizes[k] = sh_size(like, k);
  MlirType t = sh_tensor(cx, sh_elem(v), rank, sizes);
  if (mlirTypeEqual(t, mlirValueGetType(v))) return v;
  return sh_broadcast_in_dim(cx, v, t, sh_is_static(like) ? (MlirValue){NULL} : sh_shape_of(cx, like),
                             NULL);
}

/* ---- elementwise --------------------------------------------------------------- */

MlirValue sh_elementwise(lw_ctx *cx, const char *op, int n, const MlirValue *operands,
                         MlirType elem, const char *attrs) {
  MlirValue vs[8];
  if (n > 8) return (MlirValue){NULL};
  for (int i = 0; i < n; i++) vs[i] = operands[i];
  if (!sh_broadcast_all(cx, n, vs)) return (MlirValue){NULL};
  MlirType t = sh_with_elem(cx, vs[0], mlirTypeIsNull(elem) ? sh_elem(vs[0]) : elem);
  MlirValue r = lw_op1(cx, op, n, vs, t, attrs);
  same_shape(cx, r, vs[0]);
  return r;
}

MlirValue sh_unary(lw_ctx *cx, const char *op, MlirValue x) {
  return sh_elementwise(cx, op, 1, &x, (MlirType){NULL}, NULL);
}

MlirValue sh_binary(lw_ctx *cx, const char *op, MlirValue a, MlirValue b) {
  MlirValue vs[2] = {a, b};
  return sh_elementwise(cx, op, 2, vs, (MlirType){NULL}, NULL);
}

MlirValue sh_compare(lw_ctx *cx, const char *direction, MlirValue a, MlirValue b) {
  if (mlirValueIsNull(a) || mlirValueIsNull(b)) return (MlirValue){NULL};
  char attrs[160];
  snprintf(attrs, sizeof(attrs),
           "comparison_direction = #stablehlo<comparison_direction %s>, "
           "compare_type = #stablehlo<comparison_type %s>",
           direction, sh_compare_type(sh_elem(a)));
  MlirValue vs[2] = {a, b};
  return sh_elementwise(cx, "stablehlo.compare", 2, vs, sh_i1(cx), attrs);
}

MlirValue sh_select(lw_ctx *cx, MlirValue pred, MlirValue a, MlirValue b) {
  MlirValue vs[3] = {pred, a, b};
  for (int i = 0; i < 3; i++)
    if (mlirValueIsNull(vs[i])) return vs[i];
  if (!sh_broadcast_all(cx, 3, vs)) return (MlirValue){NULL};
  MlirValue r = lw_op1(cx, "stablehlo.select", 3, vs, mlirValueGetType(vs[1]), NULL);
  same_shape(cx, r, vs[1]);
  return r;
}

MlirValue sh_convert(lw_ctx *cx, MlirValue v, MlirType elem) {
  if (mlirValueIsNull(v) || mlirTypeEqual(sh_elem(v), elem)) return v;
  MlirValue r = sh_op(cx, "stablehlo.convert", 1, &v, sh_with_elem(cx, v, elem), NULL);
  same_shape(cx, r, v);
  return r;
}

MlirValue sh_clamp(lw_ctx *cx, MlirValue lo, MlirValue x, MlirValue hi) {
  MlirValue vs[3] = {lo, x, hi};
  return sh_op(cx, "stablehlo.clamp", 3, vs, mlirValueGetType(x), NULL);
}

/* ---- data movement ------------------------------------------------------------- */

MlirValue sh_transpose(lw_ctx *cx, MlirValue v, const int64_t *perm) {
  if (mlirValueIsNull(v)) return v;
  int rank = sh_rank(v), identity = 1;
  int64_t sizes[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    sizes[k] = sh_size(v, (int)perm[k]);
    identity &= perm[k] == k;
  }
  if (identity) return v;
  char a[256];
  return sh_op(cx, "stablehlo.transpose", 1, &v, sh_tensor(cx, sh_elem(v), rank, sizes),
               "permutation = %s", sh_array(a, sizeof(a), rank, perm));
}

MlirValue sh_slice(lw_ctx *cx, MlirValue v, const int64_t *start, const int64_t *limit,
                   const int64_t *stride) {
  if (mlirValueIsNull(v)) return v;
  int rank = sh_rank(v);
  int64_t sizes[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    int64_t span = limit[k] - start[k];
    sizes[k] = span <= 0 ? 0 : (span + stride[k] - 1) / stride[k];
  }
  char a[256], b[256], c[256];
  return sh_op(cx, "stablehlo.slice", 1, &v, sh_tensor(cx, sh_elem(v), rank, sizes),
               "start_indices = %s, limit_indices = %s, strides = %s", sh_array(a, sizeof(a), rank, start),
               sh_array(b, sizeof(b), rank, limit), sh_array(c, sizeof(c), rank, stride));
}

MlirValue sh_slice_axis(lw_ctx *cx, MlirValue v, int axis, int64_t start, int64_t len) {
  if (mlirValueIsNull(v)) return v;
  int rank = sh_rank(v);
  if (start == 0 && sh_size(v, axis) == len) return v;
  int64_t s[SH_MAX_RANK], l[SH_MAX_RANK], st[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) s[k] = 0, l[k] = sh_size(v, k), st[k] = 1;
  s[axis] = start;
  l[axis] = start + len;
  return sh_slice(cx, v, s, l, st);
}

MlirValue sh_concat(lw_ctx *cx, int n, const MlirValue *vs, int axis) {
  if (n == 1) return vs[0];
  int rank = sh_rank(vs[0]);
  int64_t sizes[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) sizes[k] = sh_size(vs[0], k);
  for (int i = 1; i < n; i++) {
    if (mlirValueIsNull(vs[i])) return vs[i];
    int64_t s = sh_size(vs[i], axis);
    sizes[axis] = sizes[axis] < 0 || s < 0 ? -1 : sizes[axis] + s;
    for (int k = 0; k < rank; k++)
      if (k != axis && sizes[k] < 0) sizes[k] = sh_size(vs[i], k);
  }
  return sh_op(cx, "stablehlo.concatenate", n, vs, sh_tensor(cx, sh_elem(vs[0]), rank, sizes),
               "dimension = %d : i64", axis);
}

MlirValue sh_iota(lw_ctx *cx, MlirType type, int dim) {
  return sh_op(cx, "stablehlo.iota", 0, NULL, type, "iota_dimension = %d : i64", dim);
}

MlirValue sh_reverse(lw_ctx *cx, MlirValue v, int n, const int64_t *dims) {
  char a[256];
  return sh_op(cx, "stablehlo.reverse", 1, &v, mlirValueGetType(v), "dimensions = %s",
               sh_array(a, sizeof(a), n, dims));
}

/* ---- reductions and contractions -------------------------------------------------- */

MlirValue sh_reduce(lw_ctx *cx, MlirValue x, MlirValue init, const char *body_op, int n_dims,
                    const int64_t *dims) {
  if (mlirValueIsNull(x) || mlirValueIsNull(init)) return (MlirValue){NULL};
  int rank = sh_rank(x), m = 0;
  int64_t sizes[SH_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    int reduced = 0;
    for (int i = 0; i < n_dims; i++) reduced |= dims[i] == k;
    if (!reduced) sizes[m++] = sh_size(x, k);
  }
  MlirType elem = sh_elem(x), result = sh_tensor(cx, elem, m, sizes);
  char a[256], attrs[300];
  snprintf(attrs, sizeof(attrs), "dimensions = %s", sh_array(a, sizeof(a), n_dims, dims));
  MlirValue ops[2] = {x, init};
  MlirOperation op = lw_op(cx, "stablehlo.reduce", 2, ops, 1, &result, attrs, 1);
  if (mlirOperationIsNull(op)) return (MlirValue){NULL};
  MlirType scalar = sh_tensor(cx, elem, 0, NULL), args[2] = {scalar, scalar};
  MlirBlock body = sh_region_block(cx, op, 0, 2, args);
  MlirBlock saved = cx->block;
  cx->block = body;
  MlirValue in[2] = {mlirBlockGetArgument(body, 0), mlirBlockGetArgument(body, 1)};
  MlirValue r = lw_op1(cx, body_op, 2, in, scalar, NULL);
  lw_op(cx, "stablehlo.return", 1, &r, 0, NULL, NULL, 0);
  cx->block = saved;
  return mlirOperationGetResult(op, 0);
}

MlirType sh_accumulator(lw_ctx *cx, MlirType elem) {
  return mlirTypeIsAF16(elem) || mlirTypeIsABF16(elem) ? mlirF32TypeGet(cx->mc) : elem;
}

MlirValue sh_dot_general(lw_ctx *cx, MlirValue lhs, MlirValue rhs, int n_batch,
                         const int64_t *lhs_batch, const int64_t *rhs_batch, int n_contract,
                         const int64_t *lhs_contract, const int64_t *rhs_contract, MlirType elem) {
  if (mlirValueIsNull(lhs) || mlirValueIsNull(rhs)) return (MlirValue){NULL};
  MlirType acc = sh_accumulator(cx, elem);
  if (!mlirTypeEqual(acc, elem)) {
    MlirValue wide = sh_dot_general(cx, sh_convert(cx, lhs, acc), sh_convert(cx, rhs, acc), n_batch,
                                    lhs_batch, rhs_batch, n_contract, lhs_contract, rhs_contract, acc);
    return sh_convert(cx, wide, elem);
  }
  int64_t sizes[SH_MAX_RANK];
  int m = 0;
  for (int i = 0; i < n_batch; i++) sizes[m++] = sh_size(lhs, (int)lhs_batch[i]);
  for (int side = 0; side < 2; side++) {
    MlirValue v = side ? rhs : lhs;
    const int64_t *b = side ? rhs_batch : lhs_batch, *c = side ? rhs_contract : lhs_contract;
    for (int k = 0; k < sh_rank(v); k++) {
      int used = 0;
      for (int i = 0; i < n_batch; i++) used |= b[i] == k;
      for (int i = 0; i < n_contract; i++) used |= c[i] == k;
      if (!used) sizes[m++] = sh_size(v, k);
    }
  }
  char lb[128], rb[128], lc[128], rc[128];
  MlirValue ops[2] = {lhs, rhs};
  return sh_op(cx, "stablehlo.dot_general", 2, ops, sh_tensor(cx, elem, m, sizes),
               "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = %s, "
               "rhs_batching_dimensions = %s, lhs_contracting_dimensions = %s, "
               "rhs_contracting_dimensions = %s>",
               sh_list(lb, sizeof(lb), n_batch, lhs_batch), sh_list(rb, sizeof(rb), n_batch, rhs_batch),
               sh_list(lc, sizeof(lc), n_contract, lhs_contract),
               sh_list(rc, sizeof(rc), n_contract, rhs_contract));
}

/* ---- node helpers ------------------------------------------------------------------ */

MlirType sh_out_type(lw_ctx *cx, int i) {
  const o2m_type *t = lw_out_type(cx, i);
  if (t->kind != O2M_TYPE_TENSOR || t->rank < 0 || t->rank > SH_MAX_RANK) return (MlirType){NULL};
  MlirType elem = sh_elem_of(cx, t->elem);
  if (mlirTypeIsNull(elem)) return elem;
  int64_t sizes[SH_MAX_RANK];
  for (int k = 0; k < t->rank; k++) sizes[k] = t->dims[k].size;
  return sh_tensor(cx, elem, t->rank, sizes);
}

static o2m_status check_type(lw_ctx *cx, const o2m_type *t, const char *what, int i) {
  if (t->kind != O2M_TYPE_TENSOR || t->rank < 0)
    return lw_unsupported(cx, "%s %d is not a ranked tensor", what, i);
  if (t->rank > SH_MAX_RANK) return lw_unsupported(cx, "%s %d has rank %d (at most %d)", what, i, t->rank, SH_MAX_RANK);
  if (mlirTypeIsNull(sh_elem_of(cx, t->elem)))
    return lw_unsupported(cx, "%s %d is %s, which StableHLO does not have", what, i, o2m_dtype_name(t->elem));
  return O2M_OK;
}

o2m_status sh_check_node(lw_ctx *cx) {
  o2m_status s = O2M_OK;
  for (int i = 0; i < cx->node->n_inputs && !s; i++)
    if (lw_in_present(cx, i)) s = check_type(cx, lw_in_type(cx, i), "input", i);
  for (int i = 0; i < cx->node->n_outputs && !s; i++)
    if (lw_out_present(cx, i)) s = check_type(cx, lw_out_type(cx, i), "output", i);
  return s;
}

int sh_axis(int64_t axis, int rank) {
  if (axis < 0) axis += rank;
  return axis < 0 || axis >= (rank ? rank : 1) ? -1 : (int)axis;
}

/* ---- the lowering table ---------------------------------------------------------- */

static const lw_lowering lowerings[] = {
#define LOWER(op, fn) {op, fn},
#include "emit/stablehlo/shlo_rules.def"
#undef LOWER
    {NULL, NULL},
};

lw_lower_fn sh_lowering_for(const char *domain, const char *op_type) {
  return lw_lowering_in(lowerings, domain, op_type);
}
