/* om_types.c - ONNX types as onnx-mlir's importer writes them.
 *
 * Owns: the element-type table (convertONNXTypeToMLIRType in onnx-mlir's
 * src/Dialect/ONNX/ONNXOps/OpHelper.cpp: signless i8..i64 for the signed
 * integers, ui8..ui64, i1, i4/ui4, the four float8 types, !onnx.String),
 * the value types built from it and the cache that parses each distinct
 * type text once per emitter:
 *
 *   tensor            tensor<3x?x5xf32>  (a symbolic dim is ?)
 *   unranked tensor   tensor<*xf32>
 *   sequence          !onnx.Seq<tensor<?xf32>>  (of tensors only)
 *   optional          !onnx.Opt<tensor<f32>>, !onnx.Opt<!onnx.Seq<...>>
 *   sparse tensor     the dense tensor type of its shape (ONNX's Constant
 *                     turns a sparse value into a dense one)
 *
 * onnx-mlir has no type for float4e2m1, float8e8m0, int2, uint2 or the
 * complex types (its converter stops at "Unsupported data type"), nor for
 * maps: a value of such a type is refused, never written as another type.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/onnx/om_internal.h"

static const char *const element_text[O2M_DT_COUNT] = {
    [O2M_DT_FLOAT] = "f32",
    [O2M_DT_UINT8] = "ui8",
    [O2M_DT_INT8] = "i8",
    [O2M_DT_UINT16] = "ui16",
    [O2M_DT_INT16] = "i16",
    [O2M_DT_INT32] = "i32",
    [O2M_DT_INT64] = "i64",
    [O2M_DT_STRING] = "!onnx.String",
    [O2M_DT_BOOL] = "i1",
    [O2M_DT_FLOAT16] = "f16",
    [O2M_DT_DOUBLE] = "f64",
    [O2M_DT_UINT32] = "ui32",
    [O2M_DT_UINT64] = "ui64",
    [O2M_DT_BFLOAT16] = "bf16",
    [O2M_DT_FLOAT8E4M3FN] = "f8E4M3FN",
    [O2M_DT_FLOAT8E4M3FNUZ] = "f8E4M3FNUZ",
    [O2M_DT_FLOAT8E5M2] = "f8E5M2",
    [O2M_DT_FLOAT8E5M2FNUZ] = "f8E5M2FNUZ",
    [O2M_DT_UINT4] = "ui4",
    [O2M_DT_INT4] = "i4",
};

static const char *element_name(o2m_dtype dtype) {
  return (unsigned)dtype < O2M_DT_COUNT ? element_text[dtype] : NULL;
}

MlirType om_element_type(om_emitter *em, o2m_dtype dtype) {
  const char *text = element_name(dtype);
  if (!text) return (MlirType){NULL};
  if (mlirTypeIsNull(em->elem_types[dtype]))
    em->elem_types[dtype] = mlirTypeParseGet(em->ctx, om_str(text));
  return em->elem_types[dtype];
}

MlirType om_tensor_type(om_emitter *em, o2m_dtype dtype, int rank, const int64_t *dims) {
  MlirType elem = om_element_type(em, dtype);
  if (mlirTypeIsNull(elem) || rank < 0) return (MlirType){NULL};
  return mlirRankedTensorTypeGetChecked(em->unknown_loc, rank, dims, elem, mlirAttributeGetNull());
}

/* ---- type text --------------------------------------------------------- */

typedef struct text_buf {
  char *p;
  size_t len, cap;
  int failed;
} text_buf;

static void text_add(text_buf *t, const char *s) {
  size_t n = strlen(s);
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 128;
    while (cap < t->len + n + 1) cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) {
      t->failed = 1;
      return;
    }
    t->p = p;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n + 1);
  t->len += n;
}

/* Appends the text of `type`; a static reason when it has none. */
static const char *add_type_text(om_emitter *em, text_buf *t, const o2m_type *type, int depth);

static const char *add_tensor_text(om_emitter *em, text_buf *t, const o2m_type *type) {
  if (type->elem == O2M_DT_UNDEFINED) return "has an unknown element type";
  const char *elem = element_name(type->elem);
  if (!elem) {
    const char *why = o2m_arena_printf(&em->arena, "has element type %s, which onnx-mlir cannot "
                                       "represent", o2m_dtype_name(type->elem));
    return why ? why : "has an element type onnx-mlir cannot represent";
  }
  text_add(t, "tensor<");
  if (type->rank < 0) {
    text_add(t, "*x");
  } else {
    for (int d = 0; d < type->rank; d++) {
      char dim[32];
      if (type->dims[d].size >= 0)
        snprintf(dim, sizeof(dim), "%lldx", (long long)type->dims[d].size);
      else
        snprintf(dim, sizeof(dim), "?x");
      text_add(t, dim);
    }
  }
  text_add(t, elem);
  text_add(t, ">");
  return NULL;
}

static const char *add_type_text(om_emitter *em, text_buf *t, const o2m_type *type, int depth) {
  if (depth > 16) return "nests sequences or optionals too deeply";
  switch (type->kind) {
  case O2M_TYPE_TENSOR:
  case O2M_TYPE_SPARSE_TENSOR:
    return add_tensor_text(em, t, type);
  case O2M_TYPE_SEQUENCE: {
    if (!type->inner || type->inner->kind != O2M_TYPE_TENSOR)
      return "is a sequence of non-tensors, which onnx-mlir cannot represent";
    text_add(t, "!onnx.Seq<");
    const char *why = add_tensor_text(em, t, type->inner);
    text_add(t, ">");
    return why;
  }
  case O2M_TYPE_OPTIONAL: {
    if (!type->inner) return "is an optional of an unknown type";
    text_add(t, "!onnx.Opt<");
    const char *why = add_type_text(em, t, type->inner, depth + 1);
    text_add(t, ">");
    return why;
  }
  case O2M_TYPE_MAP:
    return "is a map, which onnx-mlir cannot represent";
  case O2M_TYPE_UNKNOWN:
  default:
    return "has an unknown type";
  }
}


o2m_status om_type(om_emitter *em, const o2m_type *type, MlirType *out, const char **why) {
  text_buf t = {0};
  const char *reason = add_type_text(em, &t, type, 0);
  o2m_status status = form_type_from_text(em->ctx, &em->type_cache, &em->arena, t.p, t.failed, reason,
                                          out, why);
  free(t.p);
  return status;
}

/* ---- dim_params -------------------------------------------------------- */

const char *om_dim_params(om_emitter *em, const o2m_type *declared) {
  while (declared && (declared->kind == O2M_TYPE_SEQUENCE || declared->kind == O2M_TYPE_OPTIONAL))
    declared = declared->inner;
  if (!declared || declared->kind != O2M_TYPE_TENSOR || declared->rank <= 0) return "";
  text_buf t = {0};
  for (int d = 0; d < declared->rank; d++) {
    const char *sym = declared->dims[d].sym;
    if (declared->dims[d].size >= 0 || !sym || !*sym || o2m_symbol_is_fresh(sym)) continue;
    char index[24];
    snprintf(index, sizeof(index), "%s%d:", t.len ? "," : "", d);
    text_add(&t, index);
    text_add(&t, sym);
  }
  const char *out = t.failed ? NULL : t.len ? o2m_arena_strdup(&em->arena, t.p) : "";
  free(t.p);
  return out;
}
