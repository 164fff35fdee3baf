/* tosa_kit.c - the TOSA emitter's toolkit (tosa_kit.h): dtype checks,
 * shape operands, splat constants and zero points, rank matching for
 * broadcasting, reshapes, transposes, casts with ONNX semantics, and the
 * lowering table. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit/tosa/tosa_kit.h"
#include "util/diag.h"

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

/* ---- dtypes ----------------------------------------------------------------- */

int tw_dtype_ok(o2m_dtype d, int unsigned_ok) {
  switch (d) {
  case O2M_DT_FLOAT8E4M3FN: case O2M_DT_FLOAT8E5M2: /* the fp8 extensions; casts only */
    return 1;
  case O2M_DT_FLOAT: case O2M_DT_FLOAT16: case O2M_DT_BFLOAT16: case O2M_DT_BOOL:
  case O2M_DT_INT8: case O2M_DT_INT16: case O2M_DT_INT32: case O2M_DT_INT64:
    return 1;
  case O2M_DT_UINT8: case O2M_DT_UINT16: case O2M_DT_UINT32: case O2M_DT_UINT64:
    return unsigned_ok;
  case O2M_DT_INT4: case O2M_DT_INT2: /* carried in int8 (tosa_carried.c) */
    return 1;
  case O2M_DT_UINT4: case O2M_DT_UINT2:
    return unsigned_ok;
  default: /* the float8/float4 formats carried as their bits: moved, cast */
    return tw_carrier(d) != d;
  }
}

o2m_status tw_check_dtype(lw_ctx *cx, o2m_dtype d, int unsigned_ok) {
  if (tw_dtype_ok(d, unsigned_ok)) return O2M_OK;
  const char *name = o2m_dtype_name(d);
  if (d == O2M_DT_UINT8 || d == O2M_DT_UINT16 || d == O2M_DT_UINT32 || d == O2M_DT_UINT64)
    return lw_unsupported(cx, "TOSA has no unsigned %s tensors for this op (its integers are signed)", name);
  return lw_unsupported(cx, "TOSA has no %s tensors", name);
}

o2m_status tw_check_node_dtypes(lw_ctx *cx, int unsigned_ok) {
  for (int i = 0; i < cx->node->n_inputs; i++) {
    const o2m_type *t = lw_in_type(cx, i);
    if (lw_in_present(cx, i) && t->kind == O2M_TYPE_TENSOR) {
      o2m_status s = tw_check_dtype(cx, t->elem, unsigned_ok);
      if (s) return s;
    }
  }
  for (int i = 0; i < cx->node->n_outputs; i++) {
    const o2m_type *t = lw_out_type(cx, i);
    if (lw_out_present(cx, i) && t->kind == O2M_TYPE_TENSOR) {
      o2m_status s = tw_check_dtype(cx, t->elem, unsigned_ok);
      if (s) return s;
    }
  }
  return O2M_OK;
}

/* ---- types ------------------------------------------------------------------ */

int tw_rank(MlirValue v) { return (int)mlirShapedTypeGetRank(mlirValueGetType(v)); }

int64_t tw_size(MlirValue v, int k) {
  int64_t s = mlirShapedTypeGetDimSize(mlirValueGetType(v), k);
  return mlirShapedTypeIsDynamicSize(s) ? -1 : s;
}

MlirType tw_elem(MlirValue v) { return mlirShapedTypeGetElementType(mlirValueGetType(v)); }

MlirType tw_tensor(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes) {
  int64_t shape[TW_MAX_RANK];
  if (rank > TW_MAX_RANK) return (MlirType){NULL};
  for (int k = 0; k < rank; k++) shape[k] = sizes[k] < 0 ? mlirShapedTypeGetDynamicSize() : sizes[k];
  (void)cx;
  return mlirRankedTensorTypeGet(rank, shape, elem, mlirAttributeGetNull());
}

MlirType tw_with_elem(lw_ctx *cx, MlirValue v, MlirType elem) {
  int rank = tw_rank(v);
  int64_t sizes[TW_MAX_RANK];
  for (int k = 0; k < rank && k < TW_MAX_RANK; k++) sizes[k] = tw_size(v, k);
  return tw_tensor(cx, elem, rank, sizes);
}

/* ---- constants -------------------------------------------------------------- */

static MlirValue const_op(lw_ctx *cx, const char *op, MlirAttribute value, MlirType type) {
  MlirNamedAttribute attr = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref("values")), value);
  MlirOperation o = lw_op_attrs(cx, op, 0, NULL, 1, &type, 1, &attr, 0);
  return mlirOperationIsNull(o) ? (MlirValue){NULL} : mlirOperationGetResult(o, 0);
}

MlirValue tw_shape(lw_ctx *cx, int n, const int64_t *values) {
  int64_t dim[1] = {n};
  MlirType index_tensor = mlirRankedTensorTypeGet(1, dim, lw_index_type(cx), mlirAttributeGetNull());
  MlirAttribute elems[TW_MAX_RANK * 2 + 2];
  if (n > TW_MAX_RANK * 2 + 2) return (MlirValue){NULL};
  for (int i = 0; i < n; i++) elems[i] = mlirIntegerAttrGet(lw_index_type(cx), values[i]);
  char type_text[32];
  snprintf(type_text, sizeof(type_text), "!tosa.shape<%d>", n);
  return const_op(cx, "tosa.const_shape", mlirDenseElementsAttrGet(index_tensor, n, elems),
                  lw_type(cx, type_text));
}

MlirValue tw_splat(lw_ctx *cx, MlirType elem, int rank, double v) {
  int64_t ones[TW_MAX_RANK];
  for (int k = 0; k < rank && k < TW_MAX_RANK; k++) ones[k] = 1;
  MlirType type = tw_tensor(cx, elem, rank, ones);
  if (!mlirTypeIsAFloat(elem)) { /* integers: v saturated to the type's range */
    unsigned width = mlirIntegerTypeGetWidth(elem);
    double lo = -ldexp(1, (int)width - 1), hi = ldexp(1, (int)width - 1);
    if (width == 1) v = v != 0;
    else v = v != v ? 0 : v < lo ? lo : v >= hi ? hi - (width >= 64 ? 1024 : 1) : v;
  }
  MlirAttribute scalar = mlirTypeIsAFloat(elem) ? mlirFloatAttrDoubleGet(cx->mc, elem, v)
                                               : mlirIntegerAttrGet(elem, (int64_t)v);
  return const_op(cx, "tosa.const", mlirDenseElementsAttrSplatGet(type, scalar), type);
}

MlirValue tw_zero_point(lw_ctx *cx, MlirType elem) { return tw_splat(cx, elem, 1, 0); }

MlirValue tw_const_i32(lw_ctx *cx, int n, const int32_t *values) {
  int64_t dim[1] = {n};
  MlirType type = mlirRankedTensorTypeGet(1, dim, mlirIntegerTypeGet(cx->mc, 32), mlirAttributeGetNull());
  return const_op(cx, "tosa.const", mlirDenseElementsAttrInt32Get(type, n, values), type);
}

MlirValue tw_const_f32(lw_ctx *cx, int rank, const int64_t *sizes, int64_t n, const float *values) {
  MlirType type = tw_tensor(cx, mlirF32TypeGet(cx->mc), rank, sizes);
  return const_op(cx, "tosa.const", mlirDenseElementsAttrFloatGet(type, (intptr_t)n, values), type);
}

/* ---- ops -------------------------------------------------------------------- */

MlirValue tw_reshape(lw_ctx *cx, MlirValue v, int rank, const int64_t *sizes) {
  MlirType type = tw_tensor(cx, tw_elem(v), rank, sizes);
  if (mlirTypeEqual(type, mlirValueGetType(v))) return v;
  MlirValue ops[2] = {v, tw_shape(cx, rank, sizes)};
  return lw_op1(cx, "tosa.reshape", 2, ops, type, NULL);
}

MlirValue tw_to_rank(lw_ctx *cx, MlirValue v, int rank) {
  int have = tw_rank(v);
  if (have >= rank) return v;
  int64_t sizes[TW_MAX_RANK];
  int dynamic = 0;
  for (int k = 0; k < rank; k++) {
    sizes[k] = k < rank - have ? 1 : tw_size(v, k - (rank - have));
    dynamic += sizes[k] < 0;
  }
  if (dynamic > 1) return (MlirValue){NULL};
  return tw_reshape(cx, v, rank, sizes);
}

MlirValue tw_transpose(lw_ctx *cx, MlirValue v, const int *perm) {
  int rank = tw_rank(v), identity = 1;
  int64_t sizes[TW_MAX_RANK];
  char attrs[256];
  size_t len = (size_t)snprintf(attrs, sizeof(attrs), "perms = array<i32");
  for (int k = 0; k < rank; k++) {
    sizes[k] = tw_size(v, perm[k]);
    identity &= perm[k] == k;
    len += (size_t)snprintf(attrs + len, sizeof(attrs) - len, "%s %d", k ? "," : ":", perm[k]);
  }
  snprintf(attrs + len, sizeof(attrs) - len, ">");
  if (identity) return v;
  return lw_op1(cx, "tosa.transpose", 1, &v, tw_tensor(cx, tw_elem(v), rank, sizes), attrs);
}

/* Reshapes the n operands to one rank (into ops) and returns the type of
 * their broadcast with element type elem (null: the first operand's). */
static MlirType match_ranks(lw_ctx *cx, int n, const MlirValue *operands, MlirValue *ops,
                            MlirType elem) {
  int rank = 0;
  for (int i = 0; i < n; i++) {
    if (mlirValueIsNull(operands[i])) return (MlirType){NULL};
    if (tw_rank(operands[i]) > rank) rank = tw_rank(operands[i]);
  }
  int64_t sizes[TW_MAX_RANK];
  for (int k = 0; k < rank; k++) sizes[k] = 1;
  for (int i = 0; i < n; i++) {
    ops[i] = tw_to_rank(cx, operands[i], rank);
    if (mlirValueIsNull(ops[i])) return (MlirType){NULL};
    for (int k = 0; k < rank; k++) {
      int64_t s = tw_size(ops[i], k);
      if (s != 1 && (sizes[k] == 1 || sizes[k] < 0)) sizes[k] = s;
    }
  }
  return tw_tensor(cx, mlirTypeIsNull(elem) ? tw_elem(ops[0]) : elem, rank, sizes);
}

enum { MAX_OPERANDS = 8 };

MlirValue tw_elementwise(lw_ctx *cx, const char *op, int n, const MlirValue *operands,
                         MlirType elem, const char *attrs) {
  MlirValue ops[MAX_OPERANDS];
  if (n > MAX_OPERANDS) return (MlirValue){NULL};
  MlirType type = match_ranks(cx, n, operands, ops, elem);
  if (mlirTypeIsNull(type)) return (MlirValue){NULL};
  return lw_op1(cx, op, n, ops, type, attrs);
}

MlirValue tw_unary(lw_ctx *cx, const char *op, MlirValue x) {
  return tw_elementwise(cx, op, 1, &x, (MlirType){NULL}, NULL);
}

MlirValue tw_binary(lw_ctx *cx, const char *op, MlirValue a, MlirValue b) {
  MlirValue ops[2] = {a, b};
  return tw_elementwise(cx, op, 2, ops, (MlirType){NULL}, NULL);
}

MlirValue tw_mul(lw_ctx *cx, MlirValue a, MlirValue b) {
  MlirValue in[2] = {a, b}, ops[3];
  MlirType type = match_ranks(cx, 2, in, ops, (MlirType){NULL});
  if (mlirTypeIsNull(type)) return (MlirValue){NULL};
  ops[2] = tw_zero_point(cx, mlirIntegerTypeGet(cx->mc, 8)); /* shift 0 */
  return lw_op1(cx, "tosa.mul", 3, ops, type, NULL);
}

MlirValue tw_compare(lw_ctx *cx, const char *op, MlirValue a, MlirValue b) {
  MlirValue ops[2] = {a, b};
  return tw_elementwise(cx, op, 2, ops, mlirIntegerTypeGet(cx->mc, 1), NULL);
}

MlirValue tw_select(lw_ctx *cx, MlirValue cond, MlirValue a, MlirValue b) {
  MlirValue ops[3] = {cond, a, b};
  if (mlirValueIsNull(a)) return a;
  return tw_elementwise(cx, "tosa.select", 3, ops, tw_elem(a), NULL);
}

MlirValue tw_negate(lw_ctx *cx, MlirValue x) {
  if (mlirValueIsNull(x)) return x;
  MlirValue zp = tw_zero_point(cx, tw_elem(x));
  MlirValue ops[3] = {x, zp, zp};
  return lw_op1(cx, "tosa.negate", 3, ops, mlirValueGetType(x), NULL);
}

MlirValue tw_fdiv(lw_ctx *cx, MlirValue a, MlirValue b) {
  return tw_mul(cx, a, tw_unary(cx, "tosa.reciprocal", b));
}

/* An attribute text for a scalar of element type elem (infinities in
 * MLIR's hexadecimal float form). */
static void scalar_text(char *buf, size_t size, MlirType elem, double v) {
  if (mlirTypeIsAFloat(elem)) {
    const char *name = mlirTypeIsAF32(elem) ? "f32" : mlirTypeIsAF16(elem) ? "f16" : "bf16";
    unsigned inf = mlirTypeIsAF32(elem) ? 0x7f800000u : mlirTypeIsAF16(elem) ? 0x7c00u : 0x7f80u;
    unsigned sign = mlirTypeIsAF32(elem) ? 0x80000000u : 0x8000u;
    if (isinf(v)) snprintf(buf, size, "0x%X : %s", v > 0 ? inf : inf | sign, name);
    else snprintf(buf, size, "%.9e : %s", v, name);
    return;
  }
  unsigned width = mlirIntegerTypeGetWidth(elem);
  double lo = width >= 64 ? -9.2233720368547758e18 : -ldexp(1, (int)width - 1);
  double hi = width >= 64 ? 9.2233720368547748e18 : ldexp(1, (int)width - 1) - 1;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  snprintf(buf, size, "%lld : i%u", (long long)v, width);
}

MlirValue tw_clamp(lw_ctx *cx, MlirValue x, double lo, double hi) {
  if (mlirValueIsNull(x)) return x;
  char a[96], b[96], attrs[256];
  scalar_text(a, sizeof(a), tw_elem(x), lo);
  scalar_text(b, sizeof(b), tw_elem(x), hi);
  snprintf(attrs, sizeof(attrs), "min_val = %s, max_val = %s", a, b);
  return lw_op1(cx, "tosa.clamp", 1, &x, mlirValueGetType(x), attrs);
}

/* One tosa.cast to dtype `to` (a pair TOSA has). */
static MlirValue cast_op(lw_ctx *cx, MlirValue x, o2m_dtype to) {
  if (mlirValueIsNull(x)) return x;
  MlirType elem = lw_elem_type(cx, to);
  if (mlirTypeEqual(tw_elem(x), elem)) return x;
  return lw_op1(cx, "tosa.cast", 1, &x, tw_with_elem(cx, x, elem), NULL);
}

/* x != 0 as i1. */
static MlirValue nonzero(lw_ctx *cx, MlirValue x) {
  if (mlirValueIsNull(x)) return x;
  MlirValue zero = tw_splat(cx, tw_elem(x), tw_rank(x), 0);
  return tw_unary(cx, "tosa.logical_not", tw_compare(cx, "tosa.equal", x, zero));
}

/* x & mask (x's own type). */
static MlirValue mask_bits(lw_ctx *cx, MlirValue x, double mask) {
  if (mlirValueIsNull(x)) return x;
  return tw_binary(cx, "tosa.bitwise_and", x, tw_splat(cx, tw_elem(x), tw_rank(x), mask));
}

/* int64 to float: TOSA casts no int64 to float, so the value is split
 * into parts that fit i32 (bits 32.., 16..31, 0..15), each cast and
 * scaled; within an ulp or so of the rounded value. */
static MlirValue int64_to_float(lw_ctx *cx, MlirValue x, o2m_dtype to) {
  MlirType i64 = tw_elem(x);
  int rank = tw_rank(x);
  MlirValue hi = tw_elementwise(cx, "tosa.arithmetic_right_shift", 2,
                                (MlirValue[]){x, tw_splat(cx, i64, rank, 32)}, (MlirType){NULL}, "round = false");
  MlirValue mid = mask_bits(cx, tw_elementwise(cx, "tosa.logical_right_shift", 2,
                                               (MlirValue[]){x, tw_splat(cx, i64, rank, 16)}, (MlirType){NULL}, NULL),
                            0xffff);
  MlirValue lo = mask_bits(cx, x, 0xffff);
  MlirValue parts[3] = {hi, mid, lo};
  double scale[3] = {4294967296.0, 65536.0, 1.0};
  MlirValue sum = (MlirValue){NULL};
  for (int i = 0; i < 3; i++) {
    MlirValue f = cast_op(cx, cast_op(cx, parts[i], O2M_DT_INT32), to);
    if (mlirValueIsNull(f)) return f;
    if (scale[i] != 1.0) f = tw_mul(cx, f, tw_splat(cx, tw_elem(f), rank, scale[i]));
    sum = i ? tw_binary(cx, "tosa.add", sum, f) : f;
  }
  return sum;
}

static int is_narrow_unsigned(o2m_dtype d) { return d == O2M_DT_UINT8 || d == O2M_DT_UINT16; }

MlirValue tw_cast(lw_ctx *cx, MlirValue x, o2m_dtype from, o2m_dtype to) {
  if (mlirValueIsNull(x) || mlirTypeIsNull(lw_elem_type(cx, to))) return (MlirValue){NULL};
  if (mlirTypeEqual(tw_elem(x), lw_elem_type(cx, to))) return x; /* same bits */
  /* unsigned sources: zero-extended into a wider signed type */
  if (is_narrow_unsigned(from)) {
    x = mask_bits(cx, cast_op(cx, x, O2M_DT_INT32), from == O2M_DT_UINT8 ? 0xff : 0xffff);
    from = O2M_DT_INT32;
  } else if (from == O2M_DT_UINT32) {
    x = mask_bits(cx, cast_op(cx, x, O2M_DT_INT64), 4294967295.0);
    from = O2M_DT_INT64;
  } else if (from == O2M_DT_UINT64) {
    from = O2M_DT_INT64; /* read as int64: exact below 2^63 */
  }
  if (mlirTypeEqual(tw_elem(x), lw_elem_type(cx, to))) return x;
  /* unsigned targets: computed in a wider signed type, then its low bits */
  if (is_narrow_unsigned(to) || to == O2M_DT_UINT32)
    return cast_op(cx, tw_cast(cx, x, from, to == O2M_DT_UINT32 ? O2M_DT_INT64 : O2M_DT_INT32), to);
  if (to == O2M_DT_UINT64) to = O2M_DT_INT64;
  if (to == O2M_DT_BOOL && (lw_dtype_is_float(from) || from == O2M_DT_INT64)) return nonzero(cx, x);
  if (from == O2M_DT_BOOL && lw_dtype_is_float(to)) return cast_op(cx, cast_op(cx, x, O2M_DT_INT32), to);
  if (from == O2M_DT_INT64 && lw_dtype_is_float(to)) return int64_to_float(cx, x, to);
  if (lw_dtype_is_float(from) && !lw_dtype_is_float(to) && to != O2M_DT_BOOL) {
    /* ONNX truncates toward zero; TOSA's cast rounds to nearest */
    MlirValue zero = tw_splat(cx, tw_elem(x), tw_rank(x), 0);
    MlirValue negative = tw_compare(cx, "tosa.greater", zero, x);
    x = tw_select(cx, negative, tw_unary(cx, "tosa.ceil", x), tw_unary(cx, "tosa.floor", x));
    /* TOSA casts no float to int64: through int32 (saturating there) */
    if (to == O2M_DT_INT64) return cast_op(cx, cast_op(cx, x, O2M_DT_INT32), to);
  }
  return cast_op(cx, x, to);
}

MlirValue tw_slice_axis(lw_ctx *cx, MlirValue v, int axis, int64_t start, int64_t len) {
  if (mlirValueIsNull(v)) return v;
  int rank = tw_rank(v);
  int64_t begin[TW_MAX_RANK], sizes[TW_MAX_RANK];
  for (int k = 0; k < rank; k++) begin[k] = 0, sizes[k] = tw_size(v, k);
  if (start == 0 && len == sizes[axis]) return v;
  begin[axis] = start, sizes[axis] = len;
  MlirValue ops[3] = {v, tw_shape(cx, rank, begin), tw_shape(cx, rank, sizes)};
  return lw_op1(cx, "tosa.slice", 3, ops, tw_tensor(cx, tw_elem(v), rank, sizes), NULL);
}

MlirValue tw_concat(lw_ctx *cx, int n, const MlirValue *vs, int axis) {
  for (int i = 0; i < n; i++)
    if (mlirValueIsNull(vs[i])) return vs[i];
  if (n == 1) return vs[0];
  int rank = tw_rank(vs[0]);
  int64_t sizes[TW_MAX_RANK];
  for (int k = 0; k < rank; k++) sizes[k] = tw_size(vs[0], k);
  for (int i = 1; i < n; i++) sizes[axis] += tw_size(vs[i], axis);
  char attrs[32];
  snprintf(attrs, sizeof(attrs), "axis = %d : i32", axis);
  return lw_op1(cx, "tosa.concat", n, vs, tw_tensor(cx, tw_elem(vs[0]), rank, sizes), attrs);
}

MlirValue tw_reverse(lw_ctx *cx, MlirValue v, int axis) {
  if (mlirValueIsNull(v)) return v;
  char attrs[32];
  snprintf(attrs, sizeof(attrs), "axis = %d : i32", axis);
  return lw_op1(cx, "tosa.reverse", 1, &v, mlirValueGetType(v), attrs);
}

MlirValue tw_reduce(lw_ctx *cx, const char *op, MlirValue x, int axis) {
  if (mlirValueIsNull(x)) return x;
  int rank = tw_rank(x);
  int64_t sizes[TW_MAX_RANK];
  for (int k = 0; k < rank; k++) sizes[k] = k == axis ? 1 : tw_size(x, k);
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "axis = %d : i32", axis);
  return lw_op1(cx, op, 1, &x, tw_tensor(cx, tw_elem(x), rank, sizes), attrs);
}

/* ---- the lowering table ----------------------------------------------------- */

static const lw_lowering lowerings[] = {
#define LOWER(op, fn) {op, fn},
#include "emit/tosa/tosa_rules.def"
#undef LOWER
    {NULL, NULL}};

lw_lower_fn tw_lowering_for(const char *domain, const char *op_type) {
  return lw_lowering_in(lowerings, domain, op_type);
}
