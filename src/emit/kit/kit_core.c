/* kit_core.c - the emitter kit's basics (kit.h): failures, the value map,
 * node inputs/outputs/attributes, types, op creation from text attributes,
 * constants (tensor constants in the target's own constant op), dims,
 * tensor.empty, and the lowering of a graph's nodes through the target's
 * table. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/kit/kit.h"
#include "util/diag.h"

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

/* ---- failures ------------------------------------------------------------ */

static o2m_status node_fail(lw_ctx *cx, o2m_status status, const char *fmt, va_list ap) {
  char reason[1024];
  vsnprintf(reason, sizeof(reason), fmt, ap);
  const o2m_node *n = cx->node;
  if (!n) return o2m_fail(cx->diag, status, "%s: %s", cx->model->path, reason);
  return o2m_fail(cx->diag, status, "%s: node '%s' (%s, domain '%s', opset %lld): %s",
                  cx->model->path, n->name, n->op_type, n->domain[0] ? n->domain : "ai.onnx",
                  (long long)n->opset, reason);
}

o2m_status lw_unsupported(lw_ctx *cx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = node_fail(cx, O2M_ERR_UNSUPPORTED, fmt, ap);
  va_end(ap);
  return s;
}

o2m_status lw_error(lw_ctx *cx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = node_fail(cx, O2M_ERR_INVALID, fmt, ap);
  va_end(ap);
  return s;
}

/* ---- the value map ------------------------------------------------------- */

static size_t hash_ptr(const void *p, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

static lw_value_slot *find_slot(lw_value_slot *slots, size_t cap, const o2m_value *key) {
  size_t i = hash_ptr(key, cap);
  while (slots[i].key && slots[i].key != key) i = (i + 1) & (cap - 1);
  return &slots[i];
}

static const o2m_value *defining(const o2m_value *v) {
  while (v && v->kind == O2M_VALUE_OUTER && v->outer) v = v->outer;
  return v;
}

void lw_map(lw_ctx *cx, const o2m_value *v, MlirValue m) {
  v = defining(v);
  if ((cx->values_count + 1) * 4 >= cx->values_cap * 3) {
    size_t cap = cx->values_cap ? cx->values_cap * 2 : 1024;
    lw_value_slot *slots = o2m_arena_array(&cx->scratch, cap, sizeof(*slots));
    if (!slots) return; /* the lookup then fails and reports */
    for (size_t i = 0; i < cx->values_cap; i++)
      if (cx->values[i].key) *find_slot(slots, cap, cx->values[i].key) = cx->values[i];
    cx->values = slots;
    cx->values_cap = cap;
  }
  lw_value_slot *s = find_slot(cx->values, cx->values_cap, v);
  if (!s->key) cx->values_count++;
  s->key = v;
  s->value = m;
}

MlirValue lw_get(lw_ctx *cx, const o2m_value *v) {
  v = defining(v);
  if (!v) return (MlirValue){NULL};
  if (cx->values_cap) {
    lw_value_slot *s = find_slot(cx->values, cx->values_cap, v);
    if (s->key) return s->value;
  }
  const o2m_tensor *data = v->init ? v->init : v->known;
  if (!data) return (MlirValue){NULL};
  MlirValue c = lw_weight_argument(cx, v);
  if (mlirValueIsNull(c)) c = lw_const_tensor(cx, data);
  if (!mlirValueIsNull(c)) lw_map(cx, v, c);
  return c;
}

/* ---- unrolled sequences and optionals -------------------------------------- */

const lw_seq *lw_seq_get(lw_ctx *cx, const o2m_value *v) {
  v = defining(v);
  for (size_t i = 0; v && i < cx->seqs_count; i++)
    if (cx->seqs[i].key == v) return &cx->seqs[i];
  return NULL;
}

o2m_status lw_seq_map(lw_ctx *cx, const o2m_value *v, int present, int n, const MlirValue *elems) {
  v = defining(v);
  lw_seq *slot = (lw_seq *)lw_seq_get(cx, v);
  if (!slot) {
    if (cx->seqs_count == cx->seqs_cap) {
      size_t cap = cx->seqs_cap ? 2 * cx->seqs_cap : 16;
      cx->seqs = o2m_arena_grow(&cx->scratch, cx->seqs, cx->seqs_count, cap, sizeof(lw_seq));
      if (!cx->seqs) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
      cx->seqs_cap = cap;
    }
    slot = &cx->seqs[cx->seqs_count++];
  }
  MlirValue *copy = n ? o2m_arena_array(&cx->scratch, (size_t)n, sizeof(MlirValue)) : NULL;
  if (n && !copy) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) copy[i] = elems[i];
  *slot = (lw_seq){v, present, n, copy};
  return O2M_OK;
}

/* ---- node inputs, outputs, attributes ------------------------------------ */

int lw_in_present(lw_ctx *cx, int i) {
  return i >= 0 && i < cx->node->n_inputs && cx->node->inputs[i];
}

int lw_out_present(lw_ctx *cx, int i) {
  return i >= 0 && i < cx->node->n_outputs && cx->node->outputs[i];
}

MlirValue lw_in(lw_ctx *cx, int i) {
  return lw_in_present(cx, i) ? lw_get(cx, cx->node->inputs[i]) : (MlirValue){NULL};
}

const o2m_type *lw_in_type(lw_ctx *cx, int i) {
  static const o2m_type none = {O2M_TYPE_UNKNOWN, O2M_DT_UNDEFINED, -1, NULL, NULL};
  return lw_in_present(cx, i) ? &cx->node->inputs[i]->type : &none;
}

const o2m_type *lw_out_type(lw_ctx *cx, int i) {
  static const o2m_type none = {O2M_TYPE_UNKNOWN, O2M_DT_UNDEFINED, -1, NULL, NULL};
  return lw_out_present(cx, i) ? &cx->node->outputs[i]->type : &none;
}

const o2m_tensor *lw_in_known(lw_ctx *cx, int i) {
  if (!lw_in_present(cx, i)) return NULL;
  const o2m_value *v = defining(cx->node->inputs[i]);
  return v->init ? v->init : v->known;
}

int64_t lw_in_known_ints(lw_ctx *cx, int i, int64_t **values) {
  const o2m_tensor *t = lw_in_known(cx, i);
  if (!t || t->dtype == O2M_DT_STRING || (t->count && !t->data)) return -1;
  int64_t *out = o2m_arena_array(&cx->scratch, (size_t)t->count + 1, sizeof(int64_t));
  if (!out) return -1;
  for (int64_t k = 0; k < t->count; k++) {
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case O2M_DT_INT64: { int64_t x; memcpy(&x, p + 8 * k, 8); out[k] = x; break; }
    case O2M_DT_INT32: { int32_t x; memcpy(&x, p + 4 * k, 4); out[k] = x; break; }
    case O2M_DT_UINT64: { uint64_t x; memcpy(&x, p + 8 * k, 8); out[k] = (int64_t)x; break; }
    case O2M_DT_UINT32: { uint32_t x; memcpy(&x, p + 4 * k, 4); out[k] = x; break; }
    case O2M_DT_INT16: { int16_t x; memcpy(&x, p + 2 * k, 2); out[k] = x; break; }
    case O2M_DT_UINT16: { uint16_t x; memcpy(&x, p + 2 * k, 2); out[k] = x; break; }
    case O2M_DT_INT8: out[k] = (int8_t)p[k]; break;
    case O2M_DT_UINT8: case O2M_DT_BOOL: out[k] = p[k]; break;
    default: return -1;
    }
  }
  *values = out;
  return t->count;
}

/* Whether lw_cast_tensor can make tensor type b of a: they differ only by
 * static-vs-dynamic dims (and, through a target's own cast op such as
 * stablehlo.convert, by element type). */
static int cast_compatible(lw_ctx *cx, MlirType a, MlirType b) {
  if (!mlirTypeIsARankedTensor(a) || !mlirTypeIsARankedTensor(b)) return 1; /* the verifier judges */
  if ((!cx->target->cast_op && !mlirTypeEqual(mlirShapedTypeGetElementType(a), mlirShapedTypeGetElementType(b))) ||
      mlirShapedTypeGetRank(a) != mlirShapedTypeGetRank(b))
    return 0;
  for (intptr_t k = 0; k < mlirShapedTypeGetRank(a); k++)
    if (!mlirShapedTypeIsDynamicDim(a, k) && !mlirShapedTypeIsDynamicDim(b, k) &&
        mlirShapedTypeGetDimSize(a, k) != mlirShapedTypeGetDimSize(b, k))
      return 0;
  return 1;
}

typedef struct text_buffer {
  char *buf;
  size_t len, cap;
} text_buffer;

static void append_text(MlirStringRef s, void *user) {
  text_buffer *t = user;
  size_t n = s.length < t->cap - 1 - t->len ? s.length : t->cap - 1 - t->len;
  memcpy(t->buf + t->len, s.data, n);
  t->len += n;
  t->buf[t->len] = '\0';
}

void lw_type_text(MlirType type, char *buf, size_t cap) {
  text_buffer t = {buf, 0, cap};
  if (!cap) return;
  buf[0] = '\0';
  mlirTypePrint(type, append_text, &t);
}

o2m_status lw_set_out(lw_ctx *cx, int i, MlirValue v) {
  if (!lw_out_present(cx, i)) return O2M_OK;
  if (mlirValueIsNull(v)) return lw_error(cx, "output %d was not produced", i);
  MlirType want = lw_tensor_type(cx, lw_out_type(cx, i));
  if (!mlirTypeIsNull(want) && !cast_compatible(cx, want, mlirValueGetType(v))) {
    /* a declared type that overrode inference (infer.c warns) and is wrong */
    char got[128], declared[128];
    lw_type_text(mlirValueGetType(v), got, sizeof(got));
    lw_type_text(want, declared, sizeof(declared));
    return lw_error(cx, "output '%s' is %s, but the model declares it %s", cx->node->outputs[i]->name, got, declared);
  }
  if (!mlirTypeIsNull(want) && !mlirTypeEqual(want, mlirValueGetType(v)))
    v = lw_cast_tensor(cx, v, want);
  lw_map(cx, cx->node->outputs[i], v);
  return O2M_OK;
}

const o2m_attr *lw_attr(lw_ctx *cx, const char *name) { return o2m_node_attr(cx->node, name); }

const o2m_graph *lw_attr_graph(lw_ctx *cx, const char *name) {
  const o2m_attr *a = lw_attr(cx, name);
  return a && a->type == O2M_ATTR_GRAPH ? a->g : NULL;
}

int64_t lw_attr_int(lw_ctx *cx, const char *name, int64_t dflt) {
  const o2m_attr *a = lw_attr(cx, name);
  return a && a->type == O2M_ATTR_INT ? a->i : dflt;
}

float lw_attr_float(lw_ctx *cx, const char *name, float dflt) {
  const o2m_attr *a = lw_attr(cx, name);
  if (a && a->type == O2M_ATTR_FLOAT) return a->f;
  return a && a->type == O2M_ATTR_INT ? (float)a->i : dflt;
}

const char *lw_attr_string(lw_ctx *cx, const char *name, const char *dflt) {
  const o2m_attr *a = lw_attr(cx, name);
  if (!a || a->type != O2M_ATTR_STRING) return dflt;
  const char *s = o2m_arena_strndup(&cx->scratch, (const char *)a->s.ptr, a->s.len);
  return s ? s : dflt;
}

int lw_attr_ints(lw_ctx *cx, const char *name, const int64_t **values) {
  const o2m_attr *a = lw_attr(cx, name);
  if (!a || a->type != O2M_ATTR_INTS) return -1;
  *values = a->ints;
  return a->count;
}

/* ---- types ---------------------------------------------------------------- */

static const char *const elem_type_names[O2M_DT_COUNT] = {
    [O2M_DT_FLOAT] = "f32",    [O2M_DT_DOUBLE] = "f64",  [O2M_DT_FLOAT16] = "f16",
    [O2M_DT_BFLOAT16] = "bf16", [O2M_DT_INT8] = "i8",    [O2M_DT_UINT8] = "i8",
    [O2M_DT_INT16] = "i16",    [O2M_DT_UINT16] = "i16",  [O2M_DT_INT32] = "i32",
    [O2M_DT_UINT32] = "i32",   [O2M_DT_INT64] = "i64",   [O2M_DT_UINT64] = "i64",
    [O2M_DT_BOOL] = "i1",
    [O2M_DT_FLOAT8E4M3FN] = "f8E4M3FN", [O2M_DT_FLOAT8E4M3FNUZ] = "f8E4M3FNUZ",
    [O2M_DT_FLOAT8E5M2] = "f8E5M2",     [O2M_DT_FLOAT8E5M2FNUZ] = "f8E5M2FNUZ",
    [O2M_DT_FLOAT8E8M0] = "f8E8M0FNU",  [O2M_DT_FLOAT4E2M1] = "f4E2M1FN",
    [O2M_DT_INT4] = "i4", [O2M_DT_UINT4] = "i4", [O2M_DT_INT2] = "i2", [O2M_DT_UINT2] = "i2",
};

MlirType lw_type(lw_ctx *cx, const char *text) {
  MlirType *cached = o2m_strmap_get(&cx->types, text);
  if (cached) return *cached;
  MlirType t = mlirTypeParseGet(cx->mc, str_ref(text));
  if (mlirTypeIsNull(t)) return t;
  MlirType *box = o2m_arena_alloc(&cx->scratch, sizeof(*box));
  const char *key = o2m_arena_strdup(&cx->scratch, text);
  if (box && key) {
    *box = t;
    o2m_strmap_put(&cx->types, &cx->scratch, key, box);
  }
  return t;
}

MlirType lw_index_type(lw_ctx *cx) { return mlirIndexTypeGet(cx->mc); }

static const char *const unsigned_type_names[O2M_DT_COUNT] = {
    [O2M_DT_UINT8] = "ui8", [O2M_DT_UINT16] = "ui16", [O2M_DT_UINT32] = "ui32",
    [O2M_DT_UINT64] = "ui64", [O2M_DT_UINT4] = "ui4", [O2M_DT_UINT2] = "ui2",
};

o2m_dtype lw_carried_dtype(lw_ctx *cx, o2m_dtype d) {
  return cx->target && cx->target->carrier ? cx->target->carrier(d) : d;
}

MlirType lw_elem_type(lw_ctx *cx, o2m_dtype dtype) {
  dtype = lw_carried_dtype(cx, dtype);
  if ((unsigned)dtype >= O2M_DT_COUNT || !elem_type_names[dtype]) return (MlirType){NULL};
  if (cx->target && cx->target->unsigned_types && unsigned_type_names[dtype])
    return lw_type(cx, unsigned_type_names[dtype]);
  return lw_type(cx, elem_type_names[dtype]);
}

MlirType lw_tensor_type_of(lw_ctx *cx, o2m_dtype dtype, int rank, const int64_t *sizes) {
  MlirType elem = lw_elem_type(cx, dtype);
  if (mlirTypeIsNull(elem) || rank < 0) return (MlirType){NULL};
  int64_t shape[64];
  if (rank > 64) return (MlirType){NULL};
  for (int k = 0; k < rank; k++) shape[k] = sizes[k] < 0 ? mlirShapedTypeGetDynamicSize() : sizes[k];
  return mlirRankedTensorTypeGet(rank, shape, elem, mlirAttributeGetNull());
}

MlirType lw_tensor_type(lw_ctx *cx, const o2m_type *t) {
  if (t->kind != O2M_TYPE_TENSOR || t->rank < 0 || t->rank > 64) return (MlirType){NULL};
  int64_t sizes[64];
  for (int k = 0; k < t->rank; k++) sizes[k] = t->dims[k].size;
  return lw_tensor_type_of(cx, t->elem, t->rank, sizes);
}

int lw_dtype_is_float(o2m_dtype d) {
  return d == O2M_DT_FLOAT || d == O2M_DT_DOUBLE || d == O2M_DT_FLOAT16 || d == O2M_DT_BFLOAT16;
}

int lw_dtype_is_signed(o2m_dtype d) {
  return d == O2M_DT_INT8 || d == O2M_DT_INT16 || d == O2M_DT_INT32 || d == O2M_DT_INT64 ||
         d == O2M_DT_INT4 || d == O2M_DT_INT2;
}

int lw_dtype_is_unsigned(o2m_dtype d) {
  return d == O2M_DT_UINT8 || d == O2M_DT_UINT16 || d == O2M_DT_UINT32 ||
         d == O2M_DT_UINT64 || d == O2M_DT_BOOL || d == O2M_DT_UINT4 || d == O2M_DT_UINT2;
}

/* ---- ops ------------------------------------------------------------------ */

MlirAttribute lw_attr_parse(lw_ctx *cx, const char *text) {
  return mlirAttributeParseGet(cx->mc, str_ref(text));
}

MlirOperation lw_op_attrs(lw_ctx *cx, const char *name, int n_operands,
                          const MlirValue *operands, int n_results,
                          const MlirType *results, int n_attrs,
                          const MlirNamedAttribute *attrs, int n_regions) {
  MlirOperationState st = mlirOperationStateGet(str_ref(name), cx->loc);
  if (n_operands) mlirOperationStateAddOperands(&st, n_operands, operands);
  if (n_results) mlirOperationStateAddResults(&st, n_results, results);
  if (n_attrs) mlirOperationStateAddAttributes(&st, n_attrs, attrs);
  if (n_regions) {
    MlirRegion regions[4];
    for (int i = 0; i < n_regions && i < 4; i++) regions[i] = mlirRegionCreate();
    mlirOperationStateAddOwnedRegions(&st, n_regions < 4 ? n_regions : 4, regions);
  }
  MlirOperation op = mlirOperationCreate(&st);
  if (!mlirOperationIsNull(op)) mlirBlockAppendOwnedOperation(cx->block, op);
  return op;
}

MlirAttribute lw_attr_dict_parse(lw_ctx *cx, const char *attrs) {
  size_t n = strlen(attrs);
  char *text = o2m_arena_alloc(&cx->scratch, n + 3); /* any length: a Resize's weight table, say */
  if (!text) return mlirAttributeGetNull();
  text[0] = '{';
  memcpy(text + 1, attrs, n);
  text[n + 1] = '}', text[n + 2] = '\0';
  return lw_attr_parse(cx, text);
}

MlirOperation lw_op(lw_ctx *cx, const char *name, int n_operands,
                    const MlirValue *operands, int n_results,
                    const MlirType *results, const char *attrs, int n_regions) {
  MlirNamedAttribute named[32];
  int n_named = 0;
  if (attrs && attrs[0]) {
    MlirAttribute dict = lw_attr_dict_parse(cx, attrs);
    if (mlirAttributeIsNull(dict) || !mlirAttributeIsADictionary(dict)) {
      lw_error(cx, "internal: bad attribute text for %s: {%s}", name, attrs);
      return (MlirOperation){NULL};
    }
    n_named = (int)mlirDictionaryAttrGetNumElements(dict);
    if (n_named > 32) n_named = 32;
    for (int i = 0; i < n_named; i++) named[i] = mlirDictionaryAttrGetElement(dict, i);
  }
  return lw_op_attrs(cx, name, n_operands, operands, n_results, results, n_named, named, n_regions);
}

MlirValue lw_op1(lw_ctx *cx, const char *name, int n_operands,
                 const MlirValue *operands, MlirType result, const char *attrs) {
  MlirOperation op = lw_op(cx, name, n_operands, operands, 1, &result, attrs, 0);
  return mlirOperationIsNull(op) ? (MlirValue){NULL} : mlirOperationGetResult(op, 0);
}

/* ---- constants ------------------------------------------------------------ */

static MlirValue constant_op(lw_ctx *cx, MlirAttribute value, MlirType type) {
  MlirNamedAttribute attr = mlirNamedAttributeGet(
      mlirIdentifierGet(cx->mc, str_ref("value")), value);
  MlirOperation op = lw_op_attrs(cx, "arith.constant", 0, NULL, 1, &type, 1, &attr, 0);
  return mlirOperationGetResult(op, 0);
}

MlirValue lw_const_index(lw_ctx *cx, int64_t v) {
  MlirType t = lw_index_type(cx);
  return constant_op(cx, mlirIntegerAttrGet(t, v), t);
}

MlirValue lw_const_int(lw_ctx *cx, MlirType type, int64_t v) {
  return constant_op(cx, mlirIntegerAttrGet(type, v), type);
}

MlirValue lw_const_scalar(lw_ctx *cx, o2m_dtype dtype, double v) {
  MlirType t = lw_elem_type(cx, dtype);
  if (mlirTypeIsNull(t)) return (MlirValue){NULL};
  if (lw_dtype_is_float(dtype)) return constant_op(cx, mlirFloatAttrDoubleGet(cx->mc, t, v), t);
  return constant_op(cx, mlirIntegerAttrGet(t, dtype == O2M_DT_BOOL ? v != 0 : (int64_t)v), t);
}

MlirValue lw_const_i64_tensor(lw_ctx *cx, const int64_t *values, int n) {
  int64_t shape[1] = {n};
  MlirType t = mlirRankedTensorTypeGet(1, shape, lw_elem_type(cx, O2M_DT_INT64), mlirAttributeGetNull());
  return constant_op(cx, mlirDenseElementsAttrInt64Get(t, n, values), t);
}

/* The dense attribute of a raw-layout tensor, or null when unsupported. */
static MlirAttribute tensor_attr(lw_ctx *cx, const o2m_tensor *t, MlirType type) {
  int width = o2m_dtype_bits(t->dtype);
  if (width < 8 && t->dtype != O2M_DT_BOOL) {
    /* ONNX packs sub-byte elements, low bits first; MLIR stores one a
     * byte, and a signed one carried in a byte is sign-extended */
    uint8_t *bytes = o2m_arena_alloc(&cx->scratch, (size_t)t->count + 1);
    if (!bytes) return mlirAttributeGetNull();
    unsigned per_byte = 8u / (unsigned)width, mask = (1u << width) - 1, sign = 1u << (width - 1);
    int extend = lw_carried_dtype(cx, t->dtype) != t->dtype && lw_dtype_is_signed(t->dtype);
    for (int64_t i = 0; i < t->count; i++) {
      unsigned v = (t->data[i / per_byte] >> ((unsigned)(i % per_byte) * (unsigned)width)) & mask;
      bytes[i] = (uint8_t)(extend && (v & sign) ? v | ~mask : v);
    }
    return mlirDenseElementsAttrRawBufferGet(type, (size_t)t->count, bytes);
  }
  if (t->dtype == O2M_DT_BOOL) {
    int *bits = o2m_arena_array(&cx->scratch, (size_t)t->count + 1, sizeof(int));
    if (!bits) return mlirAttributeGetNull();
    for (int64_t i = 0; i < t->count; i++) bits[i] = t->data[i] != 0;
    return mlirDenseElementsAttrBoolGet(type, (intptr_t)t->count, bits);
  }
  if (!cx->target->dense_constants && t->origin != O2M_DATA_COMPUTED && t->count > 16 && t->name &&
      t->name[0]) {
    size_t bytes = (size_t)o2m_dtype_bits(t->dtype) / 8;
    size_t align = bytes ? bytes : 1;
    while (align > 1 && ((uintptr_t)t->data % align)) align /= 2;
    return mlirUnmanagedDenseResourceElementsAttrGet(type, str_ref(t->name), (void *)t->data,
                                                     t->nbytes, align, 0, NULL, NULL);
  }
  return mlirDenseElementsAttrRawBufferGet(type, t->nbytes, t->data);
}

MlirValue lw_const_tensor(lw_ctx *cx, const o2m_tensor *t) {
  int64_t sizes[64];
  if (t->rank > 64) return (MlirValue){NULL};
  for (int k = 0; k < t->rank; k++) sizes[k] = t->dims[k];
  MlirType type = lw_tensor_type_of(cx, t->dtype, t->rank, sizes);
  if (mlirTypeIsNull(type) || (t->count && !t->data)) return (MlirValue){NULL};
  MlirAttribute value = t->count ? tensor_attr(cx, t, type)
                                 : mlirDenseElementsAttrRawBufferGet(type, 0, NULL);
  if (mlirAttributeIsNull(value)) return (MlirValue){NULL};
  /* constants live at the top of the entry block, visible everywhere */
  MlirBlock saved = cx->block;
  cx->block = cx->entry;
  MlirNamedAttribute attr = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref(cx->target->const_attr)), value);
  MlirOperationState st = mlirOperationStateGet(str_ref(cx->target->const_op), cx->loc);
  mlirOperationStateAddResults(&st, 1, &type);
  mlirOperationStateAddAttributes(&st, 1, &attr);
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperation(cx->entry, 0, op);
  cx->block = saved;
  return mlirOperationGetResult(op, 0);
}

/* ---- dims and empty tensors ------------------------------------------------ */

MlirValue lw_dim(lw_ctx *cx, MlirValue tensor, int k) {
  MlirType t = mlirValueGetType(tensor);
  int64_t size = mlirShapedTypeGetDimSize(t, k);
  if (!mlirShapedTypeIsDynamicSize(size)) return lw_const_index(cx, size);
  MlirValue ops[2] = {tensor, lw_const_index(cx, k)};
  return lw_op1(cx, "tensor.dim", 2, ops, lw_index_type(cx), NULL);
}

MlirValue lw_empty(lw_ctx *cx, MlirType type, const MlirValue *dims) {
  MlirValue dyn[64];
  int n = 0;
  int rank = (int)mlirShapedTypeGetRank(type);
  for (int k = 0; k < rank && k < 64; k++)
    if (mlirShapedTypeIsDynamicDim(type, k)) dyn[n++] = dims[k];
  return lw_op1(cx, "tensor.empty", n, dyn, type, NULL);
}

MlirValue lw_cast_tensor(lw_ctx *cx, MlirValue v, MlirType type) {
  if (mlirTypeEqual(mlirValueGetType(v), type)) return v;
  return lw_op1(cx, cx->target->cast_op ? cx->target->cast_op : "tensor.cast", 1, &v, type, NULL);
}

/* ---- lowering a graph's nodes --------------------------------------------- */

lw_lower_fn lw_lowering_in(const lw_lowering *table, const char *domain, const char *op_type) {
  if (domain[0] && strcmp(domain, "ai.onnx") != 0) return NULL;
  for (int i = 0; table[i].op_type; i++)
    if (strcmp(table[i].op_type, op_type) == 0) return table[i].lower;
  return NULL;
}

int lw_node_needs_code(const o2m_node *n) {
  for (int i = 0; i < n->n_outputs; i++)
    if (n->outputs[i] && !n->outputs[i]->known) return 1;
  return n->n_outputs == 0;
}

/* The profile mark of node `index` (emit.h, O2M_JIT_PROFILE). */
static o2m_status profile_mark(lw_ctx *cx, int index) {
  MlirValue v = lw_const_int(cx, mlirIntegerTypeGet(cx->mc, 32), index);
  if (mlirOperationIsNull(lw_op(cx, "func.call", 1, &v, 0, NULL, "callee = @" O2M_PROFILE_FN, 0)))
    return lw_error(cx, "internal: cannot create the profile call");
  cx->profiled = 1;
  return O2M_OK;
}

o2m_status lw_lower_graph_nodes(lw_ctx *cx, const o2m_graph *g) {
  int profile = (cx->for_jit & O2M_JIT_PROFILE) && g == cx->model->graph;
  o2m_status marked = profile ? profile_mark(cx, -1) : O2M_OK;
  if (marked) return marked;
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    if (!lw_node_needs_code(n)) continue;
    cx->node = n;
    cx->loc = mlirLocationNameGet(cx->mc, str_ref(n->name[0] ? n->name : n->op_type),
                                  mlirLocationUnknownGet(cx->mc));
    lw_lower_fn lower = cx->for_jit && cx->target->jit_lowering_for
                            ? cx->target->jit_lowering_for(cx->for_jit, n->domain, n->op_type)
                            : NULL;
    if (!lower) lower = cx->target->lowering_for(n->domain, n->op_type);
    if (!lower) return lw_unsupported(cx, "no %s lowering", cx->target->name);
    o2m_status s = lower(cx);
    if (!s && profile) s = profile_mark(cx, i);
    if (s) return s;
  }
  return O2M_OK;
}
