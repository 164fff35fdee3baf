/* shlo_check.c - the StableHLO conformance check behind shlo_check.h.
 *
 * Owns: the op table (built from shlo_spec.def), the walk over a module,
 * the count and attribute checks every stablehlo.* op gets, and the type
 * rules by rule id. The ops are unregistered (generic form), so their
 * StableHLO attributes are opaque attributes whose text is parsed here
 * (#stablehlo.dot<...>, #stablehlo.gather<...>, #stablehlo.scatter<...>,
 * #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]> or its `raw`
 * form).
 *
 * Checked fully (the spec's constraints on shapes, ranks, element types and
 * attribute values, up to dynamic dims, which match anything): elementwise
 * ops and their exceptions (abs/real/imag, is_finite, complex, compare,
 * select, clamp, convert, bitcast_convert, reduce_precision), constant,
 * iota, broadcast_in_dim, reshape, transpose, concatenate, slice,
 * dynamic_slice, dynamic_update_slice, pad, reverse, get_dimension_size,
 * gather, scatter, dot_general, convolution, fft, reduce, reduce_window,
 * sort, if, case, while, return (placement), batch_norm_inference,
 * optimization_barrier, tuple, get_tuple_element, rng_bit_generator.
 * Checked in part: dynamic_* ops (ranks and the 1-D shape operands; the
 * shapes those operands carry are run-time values), dynamic_gather and
 * dynamic_conv (no slice sizes / padding to compute result dims from),
 * select_and_scatter (types, window sizes and both regions; not the
 * source's shape), scatter (no window-size bounds on updates), dot_general
 * and convolution (no quantization rules; dot_general's result element
 * type is free, as preferred_element_type allows). Counts and attribute
 * kinds only (rule NONE): real_dynamic_slice, triangular_solve, map, rng,
 * batch_norm_training, batch_norm_grad.
 * is_promotable treats equal types as promotable (the spec's definition
 * leaves i1 -> i1 out, which its own examples use).
 */
#include "emit/stablehlo/shlo_check.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "util/diag.h"

/* ---- the table ------------------------------------------------------------ */

typedef enum {
  K_I64, K_I32, K_BOOL, K_F32, K_ARR_I64, K_ARR_I1, K_DENSE_I64, K_ELEMENTS, K_STRING,
  K_SHLO, K_SHLO_ARRAY
} attr_kind;

static const char *const kind_names[] = {
    [K_I64] = "an i64 integer attribute", [K_I32] = "an i32 integer attribute",
    [K_BOOL] = "a bool attribute", [K_F32] = "an f32 float attribute",
    [K_ARR_I64] = "an array<i64: ...> attribute", [K_ARR_I1] = "an array<i1: ...> attribute",
    [K_DENSE_I64] = "a dense i64 elements attribute", [K_ELEMENTS] = "an elements attribute",
    [K_STRING] = "a string attribute", [K_SHLO] = "a #stablehlo attribute with mnemonic",
    [K_SHLO_ARRAY] = "an array of #stablehlo attributes with mnemonic"};

typedef enum {
  R_NONE, R_ELEMENTWISE, R_SAME_SHAPE, R_TO_REAL, R_IS_FINITE, R_COMPLEX, R_COMPARE, R_SELECT,
  R_CLAMP, R_BITCAST, R_REDUCE_PRECISION, R_CONSTANT, R_IOTA, R_DYNAMIC_IOTA, R_BROADCAST_IN_DIM,
  R_RESHAPE, R_TRANSPOSE, R_CONCATENATE, R_SLICE, R_DYNAMIC_SLICE, R_DYNAMIC_UPDATE_SLICE, R_PAD,
  R_DYNAMIC_PAD, R_REVERSE, R_GET_DIMENSION_SIZE, R_GATHER, R_SCATTER, R_DOT_GENERAL,
  R_CONVOLUTION, R_FFT, R_REDUCE, R_REDUCE_WINDOW, R_SELECT_AND_SCATTER, R_SORT, R_IF, R_CASE,
  R_WHILE, R_RETURN, R_BATCH_NORM_INFERENCE, R_RNG_BIT_GENERATOR, R_SAME_TYPES, R_TUPLE,
  R_GET_TUPLE_ELEMENT, R_COUNT
} rule_id;

typedef struct {
  const char *name; /* NULL ends an op's list */
  attr_kind kind;
  const char *mnemonic; /* K_SHLO, K_SHLO_ARRAY */
  int required;
} attr_spec;

typedef struct {
  const char *name; /* without "stablehlo." */
  int operands_min, operands_max, results_min, results_max, regions_min, regions_max;
  rule_id rule;
  const attr_spec *attrs;
} op_spec;

#define VAR INT_MAX
#define REQ(n, k, m) {n, K_##k, m, 1},
#define OPT(n, k, m) {n, K_##k, m, 0},
#define SHLO_ATTRS(...) __VA_ARGS__
#define OP(name, omin, omax, rmin, rmax, gmin, gmax, rule, attrs)                                  \
  {name, omin, omax, rmin, rmax, gmin, gmax, R_##rule,                                            \
   (const attr_spec[]){SHLO_ATTRS attrs{NULL, K_I64, NULL, 0}}},
static const op_spec ops[] = {
#include "emit/stablehlo/shlo_spec.def"
};
#undef OP
#undef OPT
#undef REQ

/* ---- the op being checked, messages ----------------------------------------- */

#define MAXR 16 /* the largest rank (and variadic group) the checker reads */

typedef struct chk {
  MlirOperation op;
  const op_spec *spec;
  o2m_diag *diag;
  char name[96];
  int nops, nres;
} chk;

#define TRY(x)                                                                                     \
  do {                                                                                             \
    o2m_status s_ = (x);                                                                           \
    if (s_ != O2M_OK) return s_;                                                                   \
  } while (0)

typedef struct { char *s; size_t cap, len; } sbuf;
typedef struct { char s[160]; } tstr;

static void sbuf_put(MlirStringRef str, void *user) {
  sbuf *b = user;
  size_t n = str.length < b->cap - 1 - b->len ? str.length : b->cap - 1 - b->len;
  memcpy(b->s + b->len, str.data, n);
  b->len += n;
  b->s[b->len] = 0;
}

static tstr ts(MlirType t) {
  tstr r = {{0}};
  sbuf b = {r.s, sizeof(r.s), 0};
  mlirTypePrint(t, sbuf_put, &b);
  return r;
}

static o2m_status bad(chk *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static o2m_status bad(chk *c, const char *fmt, ...) {
  char why[1200], loc[400] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
  sbuf b = {loc, sizeof(loc), 0};
  mlirLocationPrint(mlirOperationGetLocation(c->op), sbuf_put, &b);
  return o2m_fail(c->diag, O2M_ERR_INVALID, "%s at %s breaks the StableHLO spec: %s", c->name, loc,
                  why);
}

static int name_is(MlirOperation op, const char *name) {
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
  return s.length == strlen(name) && memcmp(s.data, name, s.length) == 0;
}

/* ---- types ------------------------------------------------------------------ */

typedef struct {
  MlirType type, elem;
  int rank;
  int64_t dim[MAXR]; /* -1: dynamic */
} tinfo;

static int as_tensor(MlirType t, tinfo *ti) {
  if (!mlirTypeIsARankedTensor(t) || mlirShapedTypeGetRank(t) > MAXR) return 0;
  ti->type = t;
  ti->elem = mlirShapedTypeGetElementType(t);
  ti->rank = (int)mlirShapedTypeGetRank(t);
  for (int i = 0; i < ti->rank; i++)
    ti->dim[i] = mlirShapedTypeIsDynamicDim(t, i) ? -1 : mlirShapedTypeGetDimSize(t, i);
  return 1;
}

static MlirType opnd_type(chk *c, int i) { return mlirValueGetType(mlirOperationGetOperand(c->op, i)); }
static MlirType res_type(chk *c, int i) { return mlirValueGetType(mlirOperationGetResult(c->op, i)); }

/* Value `i` of the op: its operands, then its results. */
static o2m_status val(chk *c, int i, tinfo *t) {
  int is_op = i < c->nops;
  if (as_tensor(is_op ? opnd_type(c, i) : res_type(c, i - c->nops), t)) return O2M_OK;
  return bad(c, "%s #%d is not a ranked tensor of rank <= %d", is_op ? "operand" : "result",
             is_op ? i : i - c->nops, MAXR);
}
static o2m_status opnd(chk *c, int i, tinfo *t) { return val(c, i, t); }
static o2m_status res(chk *c, int i, tinfo *t) { return val(c, c->nops + i, t); }

static int dim_ok(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }
static int shape_ok(const tinfo *a, const tinfo *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (!dim_ok(a->dim[i], b->dim[i])) return 0;
  return 1;
}
static int elem_eq(const tinfo *a, const tinfo *b) { return mlirTypeEqual(a->elem, b->elem); }
static int is_int_w(MlirType e, unsigned w) {
  return mlirTypeIsAInteger(e) && mlirIntegerTypeGetWidth(e) == w;
}
static int is_i1(MlirType e) { return is_int_w(e, 1); }
static int is_plain(MlirType e) { /* not quantized or opaque */
  return mlirTypeIsAInteger(e) || mlirTypeIsAFloat(e) || mlirTypeIsAComplex(e);
}
static int bits(MlirType e) {
  if (mlirTypeIsAInteger(e)) return (int)mlirIntegerTypeGetWidth(e);
  if (mlirTypeIsAFloat(e)) return (int)mlirFloatTypeGetWidth(e);
  if (mlirTypeIsAComplex(e)) return 2 * bits(mlirComplexTypeGetElementType(e));
  return 0;
}
static int promotable(MlirType x, MlirType y) {
  if (mlirTypeEqual(x, y)) return 1;
  if (mlirTypeIsAInteger(x) && mlirTypeIsAInteger(y))
    return !is_i1(x) && !is_i1(y) && mlirIntegerTypeIsUnsigned(x) == mlirIntegerTypeIsUnsigned(y) &&
           bits(x) <= bits(y);
  if (mlirTypeIsAFloat(x) && mlirTypeIsAFloat(y)) return bits(x) <= bits(y);
  if (mlirTypeIsAComplex(x) && mlirTypeIsAComplex(y)) return bits(x) <= bits(y);
  return 0;
}

/* Operand `i` is a 0-d tensor (of an integer type when `integer`). */
static o2m_status scalar_opnd(chk *c, int i, int integer) {
  tinfo t;
  TRY(opnd(c, i, &t));
  if (t.rank != 0 || (integer && !mlirTypeIsAInteger(t.elem)))
    return bad(c, "operand #%d must be a 0-d %stensor, not %s", i, integer ? "integer " : "",
               ts(t.type).s);
  return O2M_OK;
}

/* Operand `i` is a 1-D integer tensor of `n` elements (when static). */
static o2m_status shape_opnd(chk *c, int i, int64_t n) {
  tinfo t;
  TRY(opnd(c, i, &t));
  if (t.rank != 1 || !mlirTypeIsAInteger(t.elem) || !dim_ok(t.dim[0], n))
    return bad(c, "operand #%d must be a 1-D integer tensor of %lld elements, not %s", i,
               (long long)n, ts(t.type).s);
  return O2M_OK;
}

typedef struct { char s[24]; } vname;
static vname vn(chk *c, int i) {
  vname r;
  snprintf(r.s, sizeof(r.s), "%s #%d", i < c->nops ? "operand" : "result", i < c->nops ? i : i - c->nops);
  return r;
}

/* Values `idx` (see val) have one shape, and one element type when `elem`. */
static o2m_status same_all(chk *c, const int *idx, int n, int elem) {
  tinfo a, t;
  TRY(val(c, idx[0], &a));
  for (int k = 1; k < n; k++) {
    TRY(val(c, idx[k], &t));
    if (!shape_ok(&a, &t) || (elem && !elem_eq(&a, &t)))
      return bad(c, "%s (%s) and %s (%s) must have the same %s", vn(c, idx[0]).s, ts(a.type).s,
                 vn(c, idx[k]).s, ts(t.type).s, elem ? "shape and element type" : "shape");
  }
  return O2M_OK;
}

/* ---- attributes ------------------------------------------------------------- */

static MlirAttribute attr(chk *c, const char *name) {
  return mlirOperationGetAttributeByName(c->op, mlirStringRefCreateFromCString(name));
}

/* The entries of an array<i64> attribute (at most `max`); -1 when absent. */
static int i64s(chk *c, const char *name, int64_t *out, int max) {
  MlirAttribute a = attr(c, name);
  if (mlirAttributeIsNull(a)) return -1;
  int n = (int)mlirDenseArrayGetNumElements(a);
  for (int i = 0; i < n && i < max; i++) out[i] = mlirDenseI64ArrayGetElement(a, i);
  return n;
}

/* An array<i64> attribute of `n` entries (>= lo each), or `dflt` each when absent. */
static o2m_status i64s_n(chk *c, const char *name, int64_t *out, int n, int64_t lo, int64_t dflt) {
  int got = i64s(c, name, out, MAXR);
  if (got < 0) {
    for (int i = 0; i < n; i++) out[i] = dflt;
    return O2M_OK;
  }
  if (got != n) return bad(c, "'%s' has %d entries; it must have %d", name, got, n);
  for (int i = 0; i < n; i++)
    if (out[i] < lo) return bad(c, "'%s'[%d] = %lld is below %lld", name, i, (long long)out[i], (long long)lo);
  return O2M_OK;
}

static int64_t int_attr(chk *c, const char *name, int64_t dflt) {
  MlirAttribute a = attr(c, name);
  return mlirAttributeIsNull(a) ? dflt : mlirIntegerAttrGetValueInt(a);
}

/* A padding attribute of shape [n, 2] into lo/hi (zeros when absent). */
static o2m_status padding(chk *c, int n, int64_t *lo, int64_t *hi) {
  MlirAttribute a = attr(c, "padding");
  for (int i = 0; i < n; i++) lo[i] = hi[i] = 0;
  if (mlirAttributeIsNull(a)) return O2M_OK;
  tinfo t;
  if (!as_tensor(mlirAttributeGetType(a), &t) || t.rank != 2 || t.dim[0] != n || t.dim[1] != 2)
    return bad(c, "'padding' must have shape [%d, 2], not %s", n, ts(mlirAttributeGetType(a)).s);
  for (int i = 0; i < n; i++) {
    lo[i] = mlirDenseElementsAttrGetInt64Value(a, 2 * i);
    hi[i] = mlirDenseElementsAttrGetInt64Value(a, 2 * i + 1);
  }
  return O2M_OK;
}

/* The data of an opaque #stablehlo attribute, NUL-terminated. */
static o2m_status shlo_text(chk *c, const char *name, char *buf, size_t cap) {
  MlirStringRef d = mlirOpaqueAttrGetData(attr(c, name));
  if (d.length >= cap) return bad(c, "'%s' is too long for the checker", name);
  memcpy(buf, d.data, d.length);
  buf[d.length] = 0;
  return O2M_OK;
}

static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\t') p++;
  return p;
}

/* A bracketed integer list at `p`; the count, or -1 when malformed. */
static int int_list(const char *p, int64_t *out, int max) {
  int n = 0;
  p = skip_ws(p + 1);
  while (*p != ']') {
    if (n > 0) {
      if (*p != ',') return -1;
      p = skip_ws(p + 1);
    }
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || n >= max) return -1;
    out[n++] = v;
    p = skip_ws(end);
  }
  return n;
}

/* The integers after `key =` in `text`: a bracketed list or one integer.
 * The count (0 when the key is absent: an empty list), -1 when malformed. */
static int kv_ints(const char *text, const char *key, int64_t *out, int max) {
  size_t kl = strlen(key);
  for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
    if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
    const char *q = skip_ws(p + kl);
    if (*q != '=') continue;
    q = skip_ws(q + 1);
    if (*q == '[') return int_list(q, out, max);
    char *end;
    out[0] = strtoll(q, &end, 10);
    return end == q ? -1 : 1;
  }
  return 0;
}

static int unique_in(const int64_t *v, int n, int64_t lo, int64_t hi) {
  for (int i = 0; i < n; i++) {
    if (v[i] < lo || v[i] >= hi) return 0;
    for (int j = 0; j < i; j++)
      if (v[j] == v[i]) return 0;
  }
  return 1;
}
static int contains(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}
static int sorted(const int64_t *v, int n) {
  for (int i = 1; i < n; i++)
    if (v[i - 1] > v[i]) return 0;
  return 1;
}

/* ---- regions ---------------------------------------------------------------- */

/* Region `r` is one block ending in stablehlo.return. */
static o2m_status body(chk *c, int r, MlirBlock *blk, MlirOperation *ret) {
  MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(c->op, r));
  if (mlirBlockIsNull(b) || !mlirBlockIsNull(mlirBlockGetNextInRegion(b)))
    return bad(c, "region #%d must hold exactly one block", r);
  MlirOperation last = {NULL};
  for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o))
    last = o;
  if (mlirOperationIsNull(last) || !name_is(last, "stablehlo.return"))
    return bad(c, "region #%d does not end with stablehlo.return", r);
  *blk = b;
  *ret = last;
  return O2M_OK;
}

static MlirType arg_type(MlirBlock b, int i) { return mlirValueGetType(mlirBlockGetArgument(b, i)); }
static MlirType ret_type(MlirOperation ret, int i) {
  return mlirValueGetType(mlirOperationGetOperand(ret, i));
}

/* A reduction body: (tensor<E0..>, tensor<E0..>) -> (tensor<E0..>) with
 * is_promotable(in[i], Ei); the Ei go to `e`. */
static o2m_status reducer(chk *c, int r, int n, const MlirType *in, MlirType *e) {
  MlirBlock b;
  MlirOperation ret;
  TRY(body(c, r, &b, &ret));
  if (mlirBlockGetNumArguments(b) != 2 * n || mlirOperationGetNumOperands(ret) != n)
    return bad(c, "region #%d must take %d 0-d tensors and return %d", r, 2 * n, n);
  for (int i = 0; i < n; i++) {
    tinfo a;
    if (!as_tensor(arg_type(b, i), &a) || a.rank != 0 || !mlirTypeEqual(a.type, arg_type(b, n + i)) ||
        !mlirTypeEqual(a.type, ret_type(ret, i)))
      return bad(c, "region #%d: argument #%d, argument #%d and returned value #%d must be the same "
                    "0-d tensor type", r, i, n + i, i);
    if (!promotable(in[i], a.elem))
      return bad(c, "region #%d: %s is not promotable to the region's %s", r, ts(in[i]).s, ts(a.elem).s);
    e[i] = a.elem;
  }
  return O2M_OK;
}

/* Region `r` returns one tensor<i1>. */
static o2m_status returns_pred(chk *c, int r, MlirOperation ret) {
  tinfo t;
  if (mlirOperationGetNumOperands(ret) != 1 || !as_tensor(ret_type(ret, 0), &t) || t.rank != 0 ||
      !is_i1(t.elem))
    return bad(c, "region #%d must return one tensor<i1>", r);
  return O2M_OK;
}

/* A branch (if, case) or while body: arguments of the operand types when
 * `args`, none otherwise; returns the result types. */
static o2m_status branch(chk *c, int r, int args, int ret_results) {
  MlirBlock b;
  MlirOperation ret;
  TRY(body(c, r, &b, &ret));
  int na = mlirBlockGetNumArguments(b);
  if (na != (args ? c->nops : 0)) return bad(c, "region #%d has %d arguments, not %d", r, na, args ? c->nops : 0);
  for (int i = 0; i < na; i++)
    if (!mlirTypeEqual(arg_type(b, i), opnd_type(c, i)))
      return bad(c, "region #%d: argument #%d is %s, not the operand's %s", r, i, ts(arg_type(b, i)).s,
                 ts(opnd_type(c, i)).s);
  if (!ret_results) return returns_pred(c, r, ret);
  if (mlirOperationGetNumOperands(ret) != c->nres)
    return bad(c, "region #%d returns %d values; the op has %d results", r,
               (int)mlirOperationGetNumOperands(ret), c->nres);
  for (int i = 0; i < c->nres; i++)
    if (!mlirTypeEqual(ret_type(ret, i), res_type(c, i)))
      return bad(c, "region #%d returns %s as value #%d; result #%d is %s", r, ts(ret_type(ret, i)).s, i, i,
                 ts(res_type(c, i)).s);
  return O2M_OK;
}

/* ---- the rules -------------------------------------------------------------- */

static o2m_status ew(chk *c, int elem) {
  int idx[8], n = c->nops + c->nres;
  if (n > 8) return bad(c, "too many values for an elementwise op");
  for (int i = 0; i < n; i++) idx[i] = i;
  return same_all(c, idx, n, elem);
}

static o2m_status r_elementwise(chk *c) { return ew(c, 1); }
static o2m_status r_same_shape(chk *c) { return ew(c, 0); }

static o2m_status r_to_real(chk *c) {
  tinfo a, r;
  TRY(ew(c, 0));
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  MlirType want = mlirTypeIsAComplex(a.elem) ? mlirComplexTypeGetElementType(a.elem) : a.elem;
  if (!mlirTypeEqual(r.elem, want))
    return bad(c, "the result element type must be %s, not %s", ts(want).s, ts(r.elem).s);
  return O2M_OK;
}

static o2m_status r_is_finite(chk *c) {
  tinfo r;
  TRY(ew(c, 0));
  TRY(res(c, 0, &r));
  return is_i1(r.elem) ? O2M_OK : bad(c, "the result must be a tensor of i1, not %s", ts(r.type).s);
}

static o2m_status r_complex(chk *c) {
  tinfo a, b, r;
  TRY(ew(c, 0));
  TRY(opnd(c, 0, &a));
  TRY(opnd(c, 1, &b));
  TRY(res(c, 0, &r));
  if (!elem_eq(&a, &b) || !(mlirTypeIsAF32(a.elem) || mlirTypeIsAF64(a.elem)))
    return bad(c, "lhs and rhs must both be f32 or both f64 tensors");
  if (!mlirTypeIsAComplex(r.elem) || !mlirTypeEqual(mlirComplexTypeGetElementType(r.elem), a.elem))
    return bad(c, "the result must be a tensor of complex<%s>", ts(a.elem).s);
  return O2M_OK;
}

static o2m_status r_compare(chk *c) {
  tinfo a, b, r;
  TRY(ew(c, 0));
  TRY(opnd(c, 0, &a));
  TRY(opnd(c, 1, &b));
  TRY(res(c, 0, &r));
  if (!elem_eq(&a, &b)) return bad(c, "lhs and rhs must have the same element type");
  return is_i1(r.elem) ? O2M_OK : bad(c, "the result must be a tensor of i1, not %s", ts(r.type).s);
}

static o2m_status r_select(chk *c) {
  tinfo p, t;
  TRY(opnd(c, 0, &p));
  TRY(opnd(c, 1, &t));
  if (!is_i1(p.elem)) return bad(c, "pred must be a tensor of i1, not %s", ts(p.type).s);
  if (p.rank != 0 && !shape_ok(&p, &t)) return bad(c, "pred must be 0-d or of on_true's shape");
  return same_all(c, (const int[]){1, 2, 3}, 3, 1);
}

static o2m_status r_clamp(chk *c) {
  tinfo lo, x, hi;
  TRY(opnd(c, 0, &lo));
  TRY(opnd(c, 1, &x));
  TRY(opnd(c, 2, &hi));
  if ((lo.rank != 0 && !shape_ok(&lo, &x)) || (hi.rank != 0 && !shape_ok(&hi, &x)))
    return bad(c, "min and max must be 0-d or of the operand's shape");
  if (!elem_eq(&lo, &x) || !elem_eq(&hi, &x)) return bad(c, "min, operand and max must have one element type");
  return same_all(c, (const int[]){1, 3}, 2, 1);
}

static o2m_status r_bitcast(chk *c) {
  tinfo a, r;
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  if (mlirTypeIsAComplex(a.elem) != mlirTypeIsAComplex(r.elem))
    return bad(c, "a complex type converts only to a complex type");
  int ea = bits(a.elem), er = bits(r.elem);
  if (!ea || !er || ea == er) return ea != er || shape_ok(&a, &r) ? O2M_OK : bad(c, "the shapes must match when the bit widths do");
  const tinfo *wide = er < ea ? &r : &a, *narrow = er < ea ? &a : &r;
  int wn = er < ea ? ea : er, nn = er < ea ? er : ea;
  int ok = wide->rank == narrow->rank + 1 && dim_ok(wide->dim[wide->rank - 1], wn / nn);
  for (int i = 0; ok && i < narrow->rank; i++) ok = dim_ok(wide->dim[i], narrow->dim[i]);
  return ok ? O2M_OK : bad(c, "%s cannot bitcast to %s: the narrower side needs a trailing dim of %d", ts(a.type).s,
                        ts(r.type).s, wn / nn);
}

static o2m_status r_reduce_precision(chk *c) {
  TRY(ew(c, 1));
  if (int_attr(c, "exponent_bits", 1) < 1 || int_attr(c, "mantissa_bits", 0) < 0)
    return bad(c, "exponent_bits must be >= 1 and mantissa_bits >= 0");
  return O2M_OK;
}

static o2m_status r_constant(chk *c) {
  MlirType t = mlirAttributeGetType(attr(c, "value"));
  if (!mlirTypeEqual(t, res_type(c, 0)))
    return bad(c, "the value's type %s differs from the result type %s", ts(t).s, ts(res_type(c, 0)).s);
  return O2M_OK;
}

static o2m_status r_iota(chk *c) {
  tinfo r;
  TRY(res(c, 0, &r));
  int64_t d = int_attr(c, "iota_dimension", 0);
  if (d < 0 || d >= r.rank) return bad(c, "iota_dimension %lld is outside [0, %d)", (long long)d, r.rank);
  return c->nops ? shape_opnd(c, 0, r.rank) : O2M_OK;
}

static o2m_status r_broadcast_in_dim(chk *c) {
  tinfo a, r;
  int64_t bd[MAXR];
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  if (!elem_eq(&a, &r)) return bad(c, "operand and result must have the same element type");
  int n = i64s(c, "broadcast_dimensions", bd, MAXR);
  if (n != a.rank) return bad(c, "broadcast_dimensions has %d entries; the operand's rank is %d", n, a.rank);
  if (!unique_in(bd, n, 0, r.rank))
    return bad(c, "broadcast_dimensions must be unique and in [0, %d) (the result's rank)", r.rank);
  for (int i = 0; i < n; i++)
    if (a.dim[i] != 1 && !dim_ok(a.dim[i], r.dim[bd[i]]))
      return bad(c, "operand dim %d (%lld) must be 1 or equal result dim %lld (%lld)", i, (long long)a.dim[i],
                 (long long)bd[i], (long long)r.dim[bd[i]]);
  return c->nops == 2 ? shape_opnd(c, 1, r.rank) : O2M_OK;
}

static int64_t count(const tinfo *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->dim[i] < 0) return -1;
    n *= t->dim[i];
  }
  return n;
}

static o2m_status r_reshape(chk *c) {
  tinfo a, r;
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  if (!elem_eq(&a, &r)) return bad(c, "operand and result must have the same element type");
  if (!dim_ok(count(&a), count(&r)))
    return bad(c, "%s and %s hold different numbers of elements", ts(a.type).s, ts(r.type).s);
  return c->nops == 2 ? shape_opnd(c, 1, r.rank) : O2M_OK;
}

static o2m_status r_transpose(chk *c) {
  tinfo a, r;
  int64_t p[MAXR];
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  int n = i64s(c, "permutation", p, MAXR);
  if (n != a.rank || !unique_in(p, n, 0, n)) return bad(c, "permutation is not a permutation of [0, %d)", a.rank);
  if (r.rank != a.rank || !elem_eq(&a, &r)) return bad(c, "the result must have the operand's rank and element type");
  for (int i = 0; i < n; i++)
    if (!dim_ok(r.dim[i], a.dim[p[i]]))
      return bad(c, "result dim %d must be operand dim %lld (%lld)", i, (long long)p[i], (long long)a.dim[p[i]]);
  return O2M_OK;
}

static o2m_status r_concatenate(chk *c) {
  tinfo a, t, r;
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  int64_t d = int_attr(c, "dimension", 0), sum = 0;
  if (d < 0 || d >= a.rank) return bad(c, "dimension %lld is outside [0, %d)", (long long)d, a.rank);
  for (int i = 0; i < c->nops + 1; i++) {
    TRY(i < c->nops ? opnd(c, i, &t) : res(c, 0, &t));
    if (t.rank != a.rank || !elem_eq(&a, &t)) return bad(c, "all inputs and the result need one rank and element type");
    for (int k = 0; k < a.rank; k++)
      if (k != d && !dim_ok(a.dim[k], t.dim[k])) return bad(c, "inputs differ in dim %d, which is not the dimension", k);
    if (i < c->nops) sum = (sum < 0 || t.dim[d] < 0) ? -1 : sum + t.dim[d];
  }
  if (!dim_ok(sum, r.dim[d]))
    return bad(c, "result dim %lld must be %lld, the sum of the inputs'", (long long)d, (long long)sum);
  return O2M_OK;
}

static o2m_status r_slice(chk *c) {
  tinfo a, r;
  int64_t s[MAXR], l[MAXR], st[MAXR];
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  TRY(i64s_n(c, "start_indices", s, a.rank, 0, 0));
  TRY(i64s_n(c, "limit_indices", l, a.rank, 0, 0));
  TRY(i64s_n(c, "strides", st, a.rank, 1, 1));
  if (r.rank != a.rank || !elem_eq(&a, &r)) return bad(c, "the result must have the operand's rank and element type");
  for (int i = 0; i < a.rank; i++) {
    if (s[i] > l[i] || (a.dim[i] >= 0 && l[i] > a.dim[i]))
      return bad(c, "dim %d: need 0 <= start (%lld) <= limit (%lld) <= dim (%lld)", i, (long long)s[i],
                 (long long)l[i], (long long)a.dim[i]);
    int64_t want = (l[i] - s[i] + st[i] - 1) / st[i];
    if (!dim_ok(r.dim[i], want))
      return bad(c, "result dim %d must be ceil((limit - start) / stride) = %lld", i, (long long)want);
  }
  return O2M_OK;
}

static o2m_status r_dynamic_slice(chk *c) {
  tinfo a, r;
  int64_t sz[MAXR];
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  if (c->nops != 1 + a.rank) return bad(c, "it needs one start index per operand dim: %d operands, not %d", 1 + a.rank, c->nops);
  for (int i = 1; i < c->nops; i++) TRY(scalar_opnd(c, i, 1));
  TRY(i64s_n(c, "slice_sizes", sz, a.rank, 0, 0));
  if (r.rank != a.rank || !elem_eq(&a, &r)) return bad(c, "the result must have the operand's rank and element type");
  for (int i = 0; i < a.rank; i++)
    if ((a.dim[i] >= 0 && sz[i] > a.dim[i]) || !dim_ok(r.dim[i], sz[i]))
      return bad(c, "dim %d: slice size %lld must fit the operand and be the result's dim", i, (long long)sz[i]);
  return O2M_OK;
}

static o2m_status r_dynamic_update_slice(chk *c) {
  tinfo a, u;
  TRY(opnd(c, 0, &a));
  TRY(opnd(c, 1, &u));
  if (c->nops != 2 + a.rank) return bad(c, "it needs one start index per operand dim: %d operands, not %d", 2 + a.rank, c->nops);
  for (int i = 2; i < c->nops; i++) TRY(scalar_opnd(c, i, 1));
  if (u.rank != a.rank || !elem_eq(&a, &u)) return bad(c, "update must have the operand's rank and element type");
  for (int i = 0; i < a.rank; i++)
    if (a.dim[i] >= 0 && u.dim[i] > a.dim[i]) return bad(c, "update dim %d exceeds the operand's", i);
  return same_all(c, (const int[]){0, c->nops}, 2, 1);
}

static o2m_status r_pad(chk *c) {
  tinfo a, v, r;
  int64_t lo[MAXR], hi[MAXR], in[MAXR];
  TRY(opnd(c, 0, &a));
  TRY(opnd(c, 1, &v));
  TRY(res(c, 0, &r));
  if (v.rank != 0 || !elem_eq(&a, &v)) return bad(c, "padding_value must be a 0-d tensor of the operand's element type");
  TRY(i64s_n(c, "edge_padding_low", lo, a.rank, INT64_MIN, 0));
  TRY(i64s_n(c, "edge_padding_high", hi, a.rank, INT64_MIN, 0));
  TRY(i64s_n(c, "interior_padding", in, a.rank, 0, 0));
  if (r.rank != a.rank || !elem_eq(&a, &r)) return bad(c, "the result must have the operand's rank and element type");
  for (int i = 0; i < a.rank; i++) {
    if (a.dim[i] < 0) continue;
    int64_t want = lo[i] + hi[i] + a.dim[i] + (a.dim[i] > 0 ? a.dim[i] - 1 : 0) * in[i];
    if (!dim_ok(r.dim[i], want))
      return bad(c, "result dim %d must be low + high + d + (d - 1) * interior = %lld", i, (long long)want);
  }
  return O2M_OK;
}

static o2m_status r_dynamic_pad(chk *c) {
  tinfo a, v, r;
  TRY(opnd(c, 0, &a));
  TRY(opnd(c, 1, &v));
  TRY(res(c, 0, &r));
  if (v.rank != 0 || !elem_eq(&a, &v)) return bad(c, "padding_value must be a 0-d tensor of the operand's element type");
  for (int i = 2; i < 5; i++) TRY(shape_opnd(c, i, a.rank));
  if (r.rank != a.rank || !elem_eq(&a, &r)) return bad(c, "the result must have the operand's rank and element type");
  return O2M_OK;
}

static o2m_status r_reverse(chk *c) {
  tinfo a;
  int64_t d[MAXR];
  TRY(opnd(c, 0, &a));
  int n = i64s(c, "dimensions", d, MAXR);
  if (n > a.rank || !unique_in(d, n, 0, a.rank)) return bad(c, "dimensions must be unique and in [0, %d)", a.rank);
  return same_all(c, (const int[]){0, 1}, 2, 1);
}

static o2m_status r_get_dimension_size(chk *c) {
  tinfo a, r;
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  int64_t d = int_attr(c, "dimension", 0);
  if (d < 0 || d >= a.rank) return bad(c, "dimension %lld is outside [0, %d)", (long long)d, a.rank);
  if (r.rank != 0 || !is_int_w(r.elem, 32) || !mlirIntegerTypeIsSignless(r.elem))
    return bad(c, "the result must be tensor<i32>, not %s", ts(r.type).s);
  return O2M_OK;
}

/* The lists of a gather/scatter attribute, in the spec's order. */
typedef struct { int n[6]; int64_t v[6][MAXR]; } dimnums;

static o2m_status parse_dimnums(chk *c, const char *name, const char *const keys[6], dimnums *d) {
  char text[1024];
  TRY(shlo_text(c, name, text, sizeof(text)));
  for (int k = 0; k < 6; k++) {
    d->n[k] = kv_ints(text, keys[k], d->v[k], MAXR);
    if (d->n[k] < 0 || (k == 5 && d->n[k] != 1)) return bad(c, "'%s' has a malformed or missing %s", name, keys[k]);
  }
  return O2M_OK;
}

/* Shared by gather and scatter: the index vector. `ix` is the indices. */
static o2m_status index_vector(chk *c, const tinfo *ix, const dimnums *d, int *batch_rank) {
  int64_t ivd = d->v[5][0];
  if (ivd < 0 || ivd > ix->rank) return bad(c, "index_vector_dim %lld is outside [0, %d]", (long long)ivd, ix->rank);
  int64_t vec = ivd < ix->rank ? ix->dim[ivd] : 1;
  if (!dim_ok(vec, d->n[4])) return bad(c, "the index vector has %lld entries; the index map has %d", (long long)vec, d->n[4]);
  if (d->n[2] != d->n[3]) return bad(c, "the operand and index batching dims differ in number");
  if (!unique_in(d->v[3], d->n[3], 0, ix->rank) || contains(d->v[3], d->n[3], ivd))
    return bad(c, "the index batching dims must be unique indices dims other than index_vector_dim");
  *batch_rank = ix->rank - (ivd < ix->rank);
  return O2M_OK;
}

static o2m_status r_gather(chk *c) {
  static const char *const keys[6] = {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                                      "start_indices_batching_dims", "start_index_map", "index_vector_dim"};
  tinfo a, ix, r;
  dimnums d;
  int br;
  TRY(opnd(c, 0, &a));
  TRY(opnd(c, 1, &ix));
  TRY(res(c, 0, &r));
  TRY(parse_dimnums(c, "dimension_numbers", keys, &d));
  if (a.rank != d.n[0] + d.n[1] + d.n[2])
    return bad(c, "the operand's rank %d must be size(offset_dims) + size(collapsed_slice_dims) + "
                  "size(operand_batching_dims)", a.rank);
  TRY(index_vector(c, &ix, &d, &br));
  if (!elem_eq(&a, &r)) return bad(c, "operand and result must have the same element type");
  if (r.rank != br + d.n[0]) return bad(c, "the result's rank must be %d", br + d.n[0]);
  int64_t cb[2 * MAXR];
  memcpy(cb, d.v[1], d.n[1] * sizeof(int64_t));
  memcpy(cb + d.n[1], d.v[2], d.n[2] * sizeof(int64_t));
  if (!unique_in(d.v[0], d.n[0], 0, r.rank) || !sorted(d.v[0], d.n[0]) || !unique_in(cb, d.n[1] + d.n[2], 0, a.rank) ||
      !unique_in(d.v[4], d.n[4], 0, a.rank))
    return bad(c, "offset_dims, collapsed_slice_dims, operand_batching_dims or start_index_map are out of range "
                  "or repeat");
  if (c->nops == 3) return shape_opnd(c, 2, a.rank); /* dynamic_gather */
  int64_t ss[MAXR];
  TRY(i64s_n(c, "slice_sizes", ss, a.rank, 0, 0));
  int oi = 0, bi = 0;
  for (int k = 0; k < r.rank; k++) {
    int64_t want;
    if (contains(d.v[0], d.n[0], k)) {
      while (contains(cb, d.n[1] + d.n[2], oi)) oi++;
      want = ss[oi++];
    } else {
      if (bi == d.v[5][0]) bi++;
      want = ix.dim[bi++];
    }
    if (!dim_ok(r.dim[k], want)) return bad(c, "result dim %d must be %lld", k, (long long)want);
  }
  for (int k = 0; k < a.rank; k++)
    if ((a.dim[k] >= 0 && ss[k] > a.dim[k]) || (contains(cb, d.n[1] + d.n[2], k) && ss[k] > 1))
      return bad(c, "slice_sizes[%d] = %lld does not fit the operand", k, (long long)ss[k]);
  return O2M_OK;
}

static o2m_status r_scatter(chk *c) {
  static const char *const keys[6] = {"update_window_dims", "inserted_window_dims", "input_batching_dims",
                                      "scatter_indices_batching_dims", "scatter_dims_to_operand_dims",
                                      "index_vector_dim"};
  int n = (c->nops - 1) / 2, br;
  tinfo a, ix, u, t;
  dimnums d;
  MlirType in[MAXR], e[MAXR];
  if (c->nops % 2 == 0 || n > MAXR || c->nres != n)
    return bad(c, "it takes N inputs, the indices and N updates, and gives N results (N <= %d)", MAXR);
  TRY(opnd(c, 0, &a));
  TRY(opnd(c, n, &ix));
  TRY(opnd(c, n + 1, &u));
  for (int i = 0; i < n; i++) {
    TRY(opnd(c, i, &t));
    in[i] = t.elem;
    if (!shape_ok(&a, &t)) return bad(c, "the inputs must have one shape");
    TRY(res(c, i, &t));
    if (!shape_ok(&a, &t)) return bad(c, "the results must have the inputs' shape");
    TRY(opnd(c, n + 1 + i, &t));
    if (!shape_ok(&u, &t) || !mlirTypeEqual(t.elem, in[i])) return bad(c, "the updates must have one shape and the inputs' element types");
  }
  if (!mlirTypeIsAInteger(ix.elem)) return bad(c, "scatter_indices must be an integer tensor");
  TRY(parse_dimnums(c, "scatter_dimension_numbers", keys, &d));
  if (a.rank != d.n[0] + d.n[1] + d.n[2])
    return bad(c, "the inputs' rank %d must be size(update_window_dims) + size(inserted_window_dims) + "
                  "size(input_batching_dims)", a.rank);
  TRY(index_vector(c, &ix, &d, &br));
  if (u.rank != br + d.n[0]) return bad(c, "the updates' rank must be %d", br + d.n[0]);
  if (!unique_in(d.v[0], d.n[0], 0, u.rank) || !sorted(d.v[0], d.n[0]) || !unique_in(d.v[4], d.n[4], 0, a.rank))
    return bad(c, "update_window_dims or scatter_dims_to_operand_dims are out of range or repeat");
  TRY(reducer(c, 0, n, in, e));
  for (int i = 0; i < n; i++) {
    TRY(res(c, i, &t));
    if (!mlirTypeEqual(t.elem, e[i])) return bad(c, "result #%d must have the region's element type", i);
  }
  return O2M_OK;
}

static o2m_status r_dot_general(chk *c) {
  static const char *const keys[4] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  tinfo l, rh, r;
  char text[1024];
  int n[4];
  int64_t v[4][MAXR], both[2 * MAXR];
  TRY(opnd(c, 0, &l));
  TRY(opnd(c, 1, &rh));
  TRY(res(c, 0, &r));
  TRY(shlo_text(c, "dot_dimension_numbers", text, sizeof(text)));
  for (int k = 0; k < 4; k++)
    if ((n[k] = kv_ints(text, keys[k], v[k], MAXR)) < 0) return bad(c, "dot_dimension_numbers: malformed %s", keys[k]);
  if (n[0] != n[1] || n[2] != n[3]) return bad(c, "lhs and rhs need as many batching and as many contracting dims");
  for (int s = 0; s < 2; s++) {
    const tinfo *t = s ? &rh : &l;
    memcpy(both, v[s], n[s] * sizeof(int64_t));
    memcpy(both + n[s], v[2 + s], n[2 + s] * sizeof(int64_t));
    if (!unique_in(both, n[s] + n[2 + s], 0, t->rank))
      return bad(c, "the %s batching and contracting dims must be unique and in [0, %d)", s ? "rhs" : "lhs", t->rank);
  }
  for (int k = 0; k < 4; k += 2)
    for (int i = 0; i < n[k]; i++)
      if (!dim_ok(l.dim[v[k][i]], rh.dim[v[k + 1][i]]))
        return bad(c, "lhs dim %lld and rhs dim %lld must match", (long long)v[k][i], (long long)v[k + 1][i]);
  int64_t want[3 * MAXR];
  int w = 0;
  for (int i = 0; i < n[0]; i++) want[w++] = l.dim[v[0][i]];
  for (int s = 0; s < 2; s++) {
    const tinfo *t = s ? &rh : &l;
    for (int k = 0; k < t->rank; k++)
      if (!contains(v[s], n[s], k) && !contains(v[2 + s], n[2 + s], k)) want[w++] = t->dim[k];
  }
  int ok = r.rank == w;
  for (int k = 0; ok && k < w; k++) ok = dim_ok(r.dim[k], want[k]);
  if (!ok) return bad(c, "the result shape must be batch dims + lhs free dims + rhs free dims (rank %d)", w);
  if (is_plain(l.elem) && is_plain(rh.elem) && !elem_eq(&l, &rh)) return bad(c, "lhs and rhs must have one element type");
  MlirAttribute pc = attr(c, "precision_config");
  if (!mlirAttributeIsNull(pc) && mlirArrayAttrGetNumElements(pc) != 2) return bad(c, "precision_config must have 2 entries");
  return O2M_OK;
}

/* A convolution layout: per tensor (lhs, rhs, result) the dim holding
 * b/i/b, the one holding f/o/f, and the spatial dims. */
typedef struct { int n_sp; int64_t x[3], y[3], sp[3][MAXR]; } conv_dims;

static int conv_compact(const char *t, conv_dims *d) {
  static const char letters[3][3] = {"bf", "io", "bf"};
  static const char *const after[3] = {"x", "->", ">"};
  for (int g = 0; g < 3; g++) {
    int pos = 0, nsp = 0;
    uint32_t seen = 0;
    d->x[g] = d->y[g] = -1;
    t = skip_ws(t);
    if (*t++ != '[') return 0;
    for (t = skip_ws(t); *t != ']'; t = skip_ws(t), pos++) {
      if (pos > 0 && *t++ != ',') return 0;
      t = skip_ws(t);
      if (*t == letters[g][0] || *t == letters[g][1]) {
        int64_t *slot = *t == letters[g][0] ? &d->x[g] : &d->y[g];
        if (*slot >= 0) return 0;
        *slot = pos;
        t++;
      } else {
        char *end;
        long s = strtol(t, &end, 10);
        if (end == t || s < 0 || s >= MAXR || (seen >> s & 1)) return 0;
        seen |= 1u << s;
        d->sp[g][s] = pos;
        nsp++;
        t = end;
      }
    }
    t = skip_ws(t + 1);
    if (d->x[g] < 0 || d->y[g] < 0 || seen != (1u << nsp) - 1 || (g > 0 && nsp != d->n_sp)) return 0;
    d->n_sp = nsp;
    if (strncmp(t, after[g], strlen(after[g])) != 0) return 0;
    t += strlen(after[g]);
  }
  return 1;
}

static int conv_raw(const char *t, conv_dims *d) {
  static const char *const keys[3][3] = {
      {"input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions"},
      {"kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions"},
      {"output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions"}};
  for (int g = 0; g < 3; g++) {
    int n = kv_ints(t, keys[g][2], d->sp[g], MAXR);
    if (kv_ints(t, keys[g][0], &d->x[g], 1) != 1 || kv_ints(t, keys[g][1], &d->y[g], 1) != 1 || n < 0 ||
        (g > 0 && n != d->n_sp))
      return 0;
    d->n_sp = n;
  }
  return 1;
}

static o2m_status r_convolution(chk *c) {
  tinfo l, k, r;
  conv_dims d;
  char text[1024];
  TRY(opnd(c, 0, &l));
  TRY(opnd(c, 1, &k));
  TRY(res(c, 0, &r));
  TRY(shlo_text(c, "dimension_numbers", text, sizeof(text)));
  const char *t = text + strlen("conv");
  if (*t == '<') t = skip_ws(t + 1);
  if (!(strncmp(t, "raw", 3) == 0 ? conv_raw(t, &d) : conv_compact(t, &d)))
    return bad(c, "dimension_numbers '%s' is not a layout [b, f, 0, ...]x[o, i, 0, ...]->[b, f, 0, ...]", text);
  int n = l.rank, ns = d.n_sp;
  if (k.rank != n || r.rank != n || ns != n - 2)
    return bad(c, "lhs, rhs and result must have one rank N, and the layout N - 2 = %d spatial dims", ns);
  const tinfo *ts3[3] = {&l, &k, &r};
  for (int g = 0; g < 3; g++) {
    int64_t all[MAXR + 2];
    memcpy(all, d.sp[g], ns * sizeof(int64_t));
    all[ns] = d.x[g];
    all[ns + 1] = d.y[g];
    if (!unique_in(all, ns + 2, 0, ts3[g]->rank)) return bad(c, "the layout of %s repeats or misses a dim", g == 0 ? "lhs" : g == 1 ? "rhs" : "the result");
  }
  int64_t st[MAXR], ld[MAXR], rd[MAXR], lo[MAXR], hi[MAXR];
  TRY(i64s_n(c, "window_strides", st, ns, 1, 1));
  TRY(i64s_n(c, "lhs_dilation", ld, ns, 1, 1));
  TRY(i64s_n(c, "rhs_dilation", rd, ns, 1, 1));
  MlirAttribute wr = attr(c, "window_reversal");
  if (!mlirAttributeIsNull(wr) && mlirDenseArrayGetNumElements(wr) != ns) return bad(c, "window_reversal must have %d entries", ns);
  TRY(padding(c, ns, lo, hi));
  int64_t fg = int_attr(c, "feature_group_count", 1), bg = int_attr(c, "batch_group_count", 1);
  if (fg < 1 || bg < 1 || (fg != 1 && bg != 1)) return bad(c, "feature_group_count and batch_group_count must be >= 1, one of them 1");
  int64_t lb = l.dim[d.x[0]], lf = l.dim[d.y[0]], ki = k.dim[d.x[1]], ko = k.dim[d.y[1]];
  if ((lb >= 0 && lb % bg) || (lf >= 0 && lf % fg) || (ko >= 0 && (ko % bg || ko % fg)))
    return bad(c, "the group counts must divide the batch, input feature and output feature dims");
  if (lf >= 0 && !dim_ok(ki, lf / fg)) return bad(c, "the kernel's input feature dim must be %lld", (long long)(lf / fg));
  if (!dim_ok(r.dim[d.x[2]], lb < 0 ? -1 : lb / bg) || !dim_ok(r.dim[d.y[2]], ko))
    return bad(c, "the result's batch dim must be lhs batch / batch_group_count and its feature dim the kernel's output "
                  "feature dim");
  for (int s = 0; c->nops == 2 && s < ns; s++) {
    int64_t in = l.dim[d.sp[0][s]], win = k.dim[d.sp[1][s]];
    if (in < 0 || win < 0) continue;
    int64_t pin = lo[s] + (in == 0 ? 0 : (in - 1) * ld[s] + 1) + hi[s];
    int64_t dw = win == 0 ? 0 : (win - 1) * rd[s] + 1;
    int64_t want = (pin == 0 || dw > pin) ? 0 : (pin - dw) / st[s] + 1;
    if (!dim_ok(r.dim[d.sp[2][s]], want)) return bad(c, "result spatial dim %d must be %lld windows", s, (long long)want);
  }
  if (is_plain(l.elem) && is_plain(k.elem) && is_plain(r.elem) && (!elem_eq(&l, &k) || !elem_eq(&l, &r)))
    return bad(c, "lhs, rhs and result must have one element type");
  MlirAttribute pc = attr(c, "precision_config");
  if (!mlirAttributeIsNull(pc) && mlirArrayAttrGetNumElements(pc) != 2) return bad(c, "precision_config must have 2 entries");
  return O2M_OK;
}

static o2m_status r_fft(chk *c) {
  tinfo a, r;
  int64_t len[MAXR];
  char text[64];
  TRY(opnd(c, 0, &a));
  TRY(res(c, 0, &r));
  TRY(shlo_text(c, "fft_type", text, sizeof(text)));
  const char *ty = skip_ws(text + strlen("fft_type"));
  int n = i64s(c, "fft_length", len, MAXR);
  if (n < 1 || n > 3 || n > a.rank) return bad(c, "fft_length must have 1 to 3 entries, at most the operand's rank");
  int rfft = strcmp(ty, "RFFT") == 0, irfft = strcmp(ty, "IRFFT") == 0;
  if (!rfft && !irfft && strcmp(ty, "FFT") && strcmp(ty, "IFFT")) return bad(c, "unknown fft_type '%s'", ty);
  const tinfo *cx = irfft ? &a : &r, *re = irfft ? &r : &a;
  int ok = mlirTypeIsAComplex(cx->elem) &&
           ((rfft || irfft) ? mlirTypeIsAFloat(re->elem) && mlirTypeEqual(mlirComplexTypeGetElementType(cx->elem), re->elem)
                            : mlirTypeEqual(a.elem, r.elem));
  if (!ok) return bad(c, "%s needs %s element types", ty, (rfft || irfft) ? "a float and its complex" : "one complex");
  if (a.rank != r.rank) return bad(c, "operand and result must have one rank");
  for (int i = 0; (rfft || irfft) && i < n; i++)
    if (!dim_ok(re->dim[re->rank - n + i], len[i])) return bad(c, "the real side's trailing dims must be fft_length");
  for (int i = 0; i < a.rank; i++) {
    int64_t want = a.dim[i];
    if (i == a.rank - 1 && (rfft || irfft)) {
      int64_t real = re->dim[i];
      want = real < 0 ? -1 : real == 0 ? 0 : real / 2 + 1;
      if (!dim_ok(cx->dim[i], want)) return bad(c, "the complex side's last dim must be %lld", (long long)want);
    } else if (!dim_ok(r.dim[i], want)) {
      return bad(c, "result dim %d must be the operand's", i);
    }
  }
  return O2M_OK;
}

/* Inputs and init values of reduce / reduce_window: N each, one shape,
 * 0-d inits of the inputs' element types; returns the first input. */
static o2m_status reduce_ins(chk *c, tinfo *a, MlirType *in) {
  int n = c->nops / 2;
  tinfo t;
  if (c->nops % 2 || n > MAXR || c->nres != n)
    return bad(c, "it takes N inputs and N init values and gives N results (N <= %d); it has %d operands and %d results",
               MAXR, c->nops, c->nres);
  TRY(opnd(c, 0, a));
  for (int i = 0; i < n; i++) {
    TRY(opnd(c, i, &t));
    in[i] = t.elem;
    if (!shape_ok(a, &t)) return bad(c, "the inputs must have one shape");
    TRY(opnd(c, n + i, &t));
    if (t.rank != 0 || !mlirTypeEqual(t.elem, in[i])) return bad(c, "init value #%d must be a 0-d tensor of input #%d's element type", i, i);
  }
  return O2M_OK;
}

static o2m_status r_reduce(chk *c) {
  tinfo a, t;
  MlirType in[MAXR], e[MAXR];
  int64_t dims[MAXR];
  TRY(reduce_ins(c, &a, in));
  int nd = i64s(c, "dimensions", dims, MAXR);
  if (nd > a.rank || !unique_in(dims, nd, 0, a.rank)) return bad(c, "dimensions must be unique and in [0, %d)", a.rank);
  TRY(reducer(c, 0, c->nres, in, e));
  for (int i = 0; i < c->nres; i++) {
    TRY(res(c, i, &t));
    int ok = t.rank == a.rank - nd && mlirTypeEqual(t.elem, e[i]);
    for (int k = 0, j = 0; ok && k < a.rank; k++)
      if (!contains(dims, nd, k)) ok = dim_ok(t.dim[j++], a.dim[k]);
    if (!ok) return bad(c, "result #%d must be the input's shape without the reduced dimensions, of the region's element type", i);
  }
  return O2M_OK;
}

static o2m_status r_reduce_window(chk *c) {
  tinfo a, t;
  MlirType in[MAXR], e[MAXR];
  int64_t wd[MAXR], st[MAXR], bd[MAXR], wdl[MAXR], lo[MAXR], hi[MAXR];
  TRY(reduce_ins(c, &a, in));
  int n = a.rank;
  TRY(i64s_n(c, "window_dimensions", wd, n, 1, 1));
  TRY(i64s_n(c, "window_strides", st, n, 1, 1));
  TRY(i64s_n(c, "base_dilations", bd, n, 1, 1));
  TRY(i64s_n(c, "window_dilations", wdl, n, 1, 1));
  TRY(padding(c, n, lo, hi));
  TRY(reducer(c, 0, c->nres, in, e));
  for (int i = 0; i < c->nres; i++) {
    TRY(res(c, i, &t));
    if (t.rank != n || !mlirTypeEqual(t.elem, e[i])) return bad(c, "result #%d must have the input's rank and the region's element type", i);
    for (int k = 0; k < n; k++) {
      if (a.dim[k] < 0) continue;
      int64_t pin = lo[k] + (a.dim[k] == 0 ? 0 : (a.dim[k] - 1) * bd[k] + 1) + hi[k];
      int64_t dw = (wd[k] - 1) * wdl[k] + 1;
      int64_t want = (pin == 0 || dw > pin) ? 0 : (pin - dw) / st[k] + 1;
      if (!dim_ok(t.dim[k], want)) return bad(c, "result #%d dim %d must be %lld windows", i, k, (long long)want);
    }
  }
  return O2M_OK;
}

static o2m_status r_select_and_scatter(chk *c) {
  tinfo a, v, t;
  MlirType e;
  int64_t wd[MAXR], st[MAXR], lo[MAXR], hi[MAXR];
  MlirBlock b;
  MlirOperation ret;
  TRY(opnd(c, 0, &a));
  TRY(opnd(c, 2, &v));
  if (v.rank != 0 || !elem_eq(&a, &v)) return bad(c, "init_value must be a 0-d tensor of the operand's element type");
  TRY(i64s_n(c, "window_dimensions", wd, a.rank, 1, 1));
  TRY(i64s_n(c, "window_strides", st, a.rank, 1, 1));
  TRY(padding(c, a.rank, lo, hi));
  TRY(body(c, 0, &b, &ret));
  if (mlirBlockGetNumArguments(b) != 2 || !as_tensor(arg_type(b, 0), &t) || t.rank != 0 || !elem_eq(&t, &a) ||
      !mlirTypeEqual(arg_type(b, 1), arg_type(b, 0)))
    return bad(c, "region #0 must take two 0-d tensors of the operand's element type");
  TRY(returns_pred(c, 0, ret));
  TRY(reducer(c, 1, 1, &a.elem, &e));
  TRY(res(c, 0, &t));
  if (!shape_ok(&a, &t) || !mlirTypeEqual(t.elem, e)) return bad(c, "the result must have the operand's shape and the region's element type");
  return O2M_OK;
}

static o2m_status r_sort(chk *c) {
  tinfo a, t;
  MlirBlock b;
  MlirOperation ret;
  TRY(opnd(c, 0, &a));
  if (c->nres != c->nops) return bad(c, "it needs one result per input");
  for (int i = 0; i < c->nops; i++) {
    TRY(opnd(c, i, &t));
    if (!shape_ok(&a, &t) || !mlirTypeEqual(t.type, res_type(c, i))) return bad(c, "the inputs must have one shape, and the results their types");
  }
  int64_t d = int_attr(c, "dimension", -1);
  if (d < -a.rank || d >= a.rank) return bad(c, "dimension %lld is outside [-%d, %d)", (long long)d, a.rank, a.rank);
  TRY(body(c, 0, &b, &ret));
  if (mlirBlockGetNumArguments(b) != 2 * c->nops) return bad(c, "the comparator must take %d 0-d tensors", 2 * c->nops);
  for (int i = 0; i < 2 * c->nops; i++) {
    TRY(opnd(c, i / 2, &a));
    if (!as_tensor(arg_type(b, i), &t) || t.rank != 0 || !elem_eq(&a, &t))
      return bad(c, "comparator argument #%d must be a 0-d tensor of input #%d's element type", i, i / 2);
  }
  return returns_pred(c, 0, ret);
}

static o2m_status r_if(chk *c) {
  tinfo p;
  TRY(opnd(c, 0, &p));
  if (p.rank != 0 || !is_i1(p.elem)) return bad(c, "pred must be tensor<i1>, not %s", ts(p.type).s);
  TRY(branch(c, 0, 0, 1));
  return branch(c, 1, 0, 1);
}

static o2m_status r_case(chk *c) {
  tinfo p;
  TRY(opnd(c, 0, &p));
  if (p.rank != 0 || !is_int_w(p.elem, 32) || !mlirIntegerTypeIsSignless(p.elem))
    return bad(c, "index must be tensor<i32>, not %s", ts(p.type).s);
  for (int r = 0; r < (int)mlirOperationGetNumRegions(c->op); r++) TRY(branch(c, r, 0, 1));
  return O2M_OK;
}

static o2m_status r_same_types(chk *c) {
  if (c->nres != c->nops) return bad(c, "it needs as many results (%d) as operands (%d)", c->nres, c->nops);
  for (int i = 0; i < c->nops; i++)
    if (!mlirTypeEqual(opnd_type(c, i), res_type(c, i)))
      return bad(c, "result #%d is %s; operand #%d is %s", i, ts(res_type(c, i)).s, i, ts(opnd_type(c, i)).s);
  return O2M_OK;
}

static o2m_status r_while(chk *c) {
  TRY(r_same_types(c));
  TRY(branch(c, 0, 1, 0));
  return branch(c, 1, 1, 1); /* the results are the operand types */
}

static o2m_status r_return(chk *c) {
  MlirOperation p = mlirOperationGetParentOperation(c->op);
  MlirStringRef pn = mlirIdentifierStr(mlirOperationGetName(p));
  if (mlirOperationIsNull(p) || pn.length < 10 || memcmp(pn.data, "stablehlo.", 10) != 0)
    return bad(c, "stablehlo.return must end a region of a stablehlo op");
  if (!mlirOperationIsNull(mlirOperationGetNextInBlock(c->op))) return bad(c, "stablehlo.return must be the last op of its block");
  return O2M_OK;
}

static o2m_status r_batch_norm_inference(chk *c) {
  tinfo a, t;
  TRY(opnd(c, 0, &a));
  int64_t f = int_attr(c, "feature_index", 0);
  if (f < 0 || f >= a.rank) return bad(c, "feature_index %lld is outside [0, %d)", (long long)f, a.rank);
  for (int i = 1; i < 5; i++) {
    TRY(opnd(c, i, &t));
    if (t.rank != 1 || !dim_ok(t.dim[0], a.dim[f]) || !elem_eq(&a, &t))
      return bad(c, "operand #%d must be a 1-D tensor of the operand's feature dim and element type", i);
  }
  return same_all(c, (const int[]){0, 5}, 2, 1);
}

static o2m_status r_rng_bit_generator(chk *c) {
  if (!mlirTypeEqual(opnd_type(c, 0), res_type(c, 0))) return bad(c, "output_state must have initial_state's type");
  return O2M_OK;
}

static o2m_status r_tuple(chk *c) {
  MlirType t = res_type(c, 0);
  if (!mlirTypeIsATuple(t) || mlirTupleTypeGetNumTypes(t) != c->nops) return bad(c, "the result must be a tuple of the operand types");
  for (int i = 0; i < c->nops; i++)
    if (!mlirTypeEqual(mlirTupleTypeGetType(t, i), opnd_type(c, i))) return bad(c, "tuple element #%d differs from operand #%d", i, i);
  return O2M_OK;
}

static o2m_status r_get_tuple_element(chk *c) {
  MlirType t = opnd_type(c, 0);
  int64_t i = int_attr(c, "index", 0);
  if (!mlirTypeIsATuple(t) || i < 0 || i >= mlirTupleTypeGetNumTypes(t)) return bad(c, "index %lld is not an element of the operand tuple", (long long)i);
  if (!mlirTypeEqual(mlirTupleTypeGetType(t, i), res_type(c, 0))) return bad(c, "the result must be the tuple's element #%lld", (long long)i);
  return O2M_OK;
}

static o2m_status (*const rules[R_COUNT])(chk *) = {
    [R_ELEMENTWISE] = r_elementwise, [R_SAME_SHAPE] = r_same_shape, [R_TO_REAL] = r_to_real,
    [R_IS_FINITE] = r_is_finite, [R_COMPLEX] = r_complex, [R_COMPARE] = r_compare,
    [R_SELECT] = r_select, [R_CLAMP] = r_clamp, [R_BITCAST] = r_bitcast,
    [R_REDUCE_PRECISION] = r_reduce_precision, [R_CONSTANT] = r_constant, [R_IOTA] = r_iota,
    [R_DYNAMIC_IOTA] = r_iota, [R_BROADCAST_IN_DIM] = r_broadcast_in_dim, [R_RESHAPE] = r_reshape,
    [R_TRANSPOSE] = r_transpose, [R_CONCATENATE] = r_concatenate, [R_SLICE] = r_slice,
    [R_DYNAMIC_SLICE] = r_dynamic_slice, [R_DYNAMIC_UPDATE_SLICE] = r_dynamic_update_slice,
    [R_PAD] = r_pad, [R_DYNAMIC_PAD] = r_dynamic_pad, [R_REVERSE] = r_reverse,
    [R_GET_DIMENSION_SIZE] = r_get_dimension_size, [R_GATHER] = r_gather, [R_SCATTER] = r_scatter,
    [R_DOT_GENERAL] = r_dot_general, [R_CONVOLUTION] = r_convolution, [R_FFT] = r_fft,
    [R_REDUCE] = r_reduce, [R_REDUCE_WINDOW] = r_reduce_window,
    [R_SELECT_AND_SCATTER] = r_select_and_scatter, [R_SORT] = r_sort, [R_IF] = r_if,
    [R_CASE] = r_case, [R_WHILE] = r_while, [R_RETURN] = r_return,
    [R_BATCH_NORM_INFERENCE] = r_batch_norm_inference, [R_RNG_BIT_GENERATOR] = r_rng_bit_generator,
    [R_SAME_TYPES] = r_same_types, [R_TUPLE] = r_tuple, [R_GET_TUPLE_ELEMENT] = r_get_tuple_element,
};

/* ---- counts, attributes, the walk ----------------------------------------------- */

static const op_spec *find_op(const char *name) {
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
    if (strcmp(ops[i].name, name) == 0) return &ops[i];
  return NULL;
}

static o2m_status count_ok(chk *c, const char *what, int n, int lo, int hi) {
  if (n >= lo && n <= hi) return O2M_OK;
  if (hi == VAR) return bad(c, "it has %d %s; the spec wants at least %d", n, what, lo);
  if (lo == hi) return bad(c, "it has %d %s; the spec wants %d", n, what, lo);
  return bad(c, "it has %d %s; the spec wants %d to %d", n, what, lo, hi);
}

static int shlo_ok(MlirAttribute v, const char *m) {
  if (!mlirAttributeIsAOpaque(v)) return 0;
  MlirStringRef ns = mlirOpaqueAttrGetDialectNamespace(v), d = mlirOpaqueAttrGetData(v);
  size_t ml = strlen(m);
  return ns.length == 9 && memcmp(ns.data, "stablehlo", 9) == 0 && d.length >= ml &&
         memcmp(d.data, m, ml) == 0 && (d.length == ml || d.data[ml] == '<' || d.data[ml] == ' ');
}

static int int_width(MlirAttribute v) {
  MlirType t = mlirAttributeGetType(v);
  return mlirAttributeIsAInteger(v) && mlirTypeIsAInteger(t) ? (int)mlirIntegerTypeGetWidth(t) : 0;
}

static int kind_ok(MlirAttribute v, const attr_spec *a) {
  switch (a->kind) {
  case K_I64: return int_width(v) == 64;
  case K_I32: return int_width(v) == 32;
  case K_BOOL: return mlirAttributeIsABool(v);
  case K_F32: return mlirAttributeIsAFloat(v) && mlirTypeIsAF32(mlirAttributeGetType(v));
  case K_ARR_I64: return mlirAttributeIsADenseI64Array(v);
  case K_ARR_I1: return mlirAttributeIsADenseBoolArray(v);
  case K_DENSE_I64:
    return mlirAttributeIsADenseIntElements(v) && is_int_w(mlirShapedTypeGetElementType(mlirAttributeGetType(v)), 64);
  case K_ELEMENTS: return mlirAttributeIsAElements(v);
  case K_STRING: return mlirAttributeIsAString(v);
  case K_SHLO: return shlo_ok(v, a->mnemonic);
  case K_SHLO_ARRAY:
    if (!mlirAttributeIsAArray(v)) return 0;
    for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(v); i++)
      if (!shlo_ok(mlirArrayAttrGetElement(v, i), a->mnemonic)) return 0;
    return 1;
  }
  return 0;
}

/* Discardable extensions (mhlo.sharding, _xla_...) are not the spec's. */
static int extension(MlirStringRef n) {
  return (n.length > 0 && n.data[0] == '_') || memchr(n.data, '.', n.length) != NULL;
}

static o2m_status check_attrs(chk *c) {
  for (const attr_spec *a = c->spec->attrs; a->name; a++) {
    MlirAttribute v = attr(c, a->name);
    if (mlirAttributeIsNull(v)) {
      if (a->required) return bad(c, "the required attribute '%s' is missing", a->name);
    } else if (!kind_ok(v, a)) {
      return bad(c, "attribute '%s' must be %s%s%s%s", a->name, kind_names[a->kind], a->mnemonic ? " '" : "",
                 a->mnemonic ? a->mnemonic : "", a->mnemonic ? "'" : "");
    }
  }
  for (intptr_t i = 0; i < mlirOperationGetNumAttributes(c->op); i++) {
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetAttribute(c->op, i).name);
    if (extension(n)) continue;
    const attr_spec *a = c->spec->attrs;
    while (a->name && !(strlen(a->name) == n.length && memcmp(a->name, n.data, n.length) == 0)) a++;
    if (!a->name) return bad(c, "attribute '%.*s' is not one of this op's attributes", (int)n.length, n.data);
  }
  return O2M_OK;
}

static o2m_status check_op(MlirOperation op, o2m_diag *diag) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  if (n.length < 10 || memcmp(n.data, "stablehlo.", 10) != 0) return O2M_OK;
  chk c = {op, NULL, diag, "", (int)mlirOperationGetNumOperands(op), (int)mlirOperationGetNumResults(op)};
  snprintf(c.name, sizeof(c.name), "%.*s", (int)n.length, n.data);
  if (!(c.spec = find_op(c.name + 10))) return bad(&c, "unknown op: it is not in the spec table");
  TRY(count_ok(&c, "operands", c.nops, c.spec->operands_min, c.spec->operands_max));
  TRY(count_ok(&c, "results", c.nres, c.spec->results_min, c.spec->results_max));
  TRY(count_ok(&c, "regions", (int)mlirOperationGetNumRegions(op), c.spec->regions_min, c.spec->regions_max));
  TRY(check_attrs(&c));
  return rules[c.spec->rule] ? rules[c.spec->rule](&c) : O2M_OK;
}

static o2m_status walk(MlirOperation op, o2m_diag *diag) {
  TRY(check_op(op, diag));
  for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r)); !mlirBlockIsNull(b);
         b = mlirBlockGetNextInRegion(b))
      for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
           o = mlirOperationGetNextInBlock(o))
        TRY(walk(o, diag));
  return O2M_OK;
}

o2m_status o2m_shlo_check_module(MlirModule module, o2m_diag *diag) {
  if (mlirModuleIsNull(module)) return o2m_fail(diag, O2M_ERR_USAGE, "o2m_shlo_check_module: no module");
  return walk(mlirModuleGetOperation(module), diag);
}
