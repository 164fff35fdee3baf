/* torch_types.c - ONNX types as torch dialect types.
 *
 * Owns: the element-type table (ONNX dtype -> the builtin type torch-mlir's
 * importer uses), the text of torch types and the cache that parses each
 * distinct text once per emitter:
 *
 *   tensor            !torch.vtensor<[3,?,5],f32>  (symbolic dims print ?)
 *   unranked tensor   !torch.vtensor<*,f32>
 *   unknown dtype     !torch.vtensor<[2],unk>
 *   sequence          !torch.list<vtensor<[?],si64>>
 *   optional          !torch.optional<vtensor<[],f32>>
 *   map               !torch.dict<str, vtensor<[1],f32>>  (keys: str, int)
 *   sparse tensor     the dense vtensor of the same shape: the torch
 *                     dialect has no sparse value type, and the ONNX ops
 *                     that make sparse values (Constant) yield dense ones
 *
 * Nested torch types drop the !torch. prefix, as torch's printer does.
 * The element types follow torch-mlir's importer (ELEM_TYPE_TO_IR_TYPE_CB).
 * Four ONNX types have no torch dtype: int2, uint2 (ONNX 1.20), float4e2m1
 * and float8e8m0. The torch dialect's type verifier refuses them in a
 * vtensor (isValidTorchDtype, lib/Dialect/Torch/IR/TorchTypes.cpp) and
 * torch-mlir's importer stops at them ("Unknown ONNX tensor element type").
 * Here a value of such a type is a vtensor without a dtype
 * (!torch.vtensor<[2],unk>), so that torch-mlir still parses the model;
 * the builtin type of a constant's value attribute (torch_builtin_tensor_type)
 * keeps the exact element type (tensor<2xsi2>), so no data is lost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/torch/torch_internal.h"

static const char *const element_text[O2M_DT_COUNT] = {
    [O2M_DT_FLOAT] = "f32",
    [O2M_DT_UINT8] = "ui8",
    [O2M_DT_INT8] = "si8",
    [O2M_DT_UINT16] = "ui16",
    [O2M_DT_INT16] = "si16",
    [O2M_DT_INT32] = "si32",
    [O2M_DT_INT64] = "si64",
    [O2M_DT_STRING] = "!torch.str",
    [O2M_DT_BOOL] = "i1",
    [O2M_DT_FLOAT16] = "f16",
    [O2M_DT_DOUBLE] = "f64",
    [O2M_DT_UINT32] = "ui32",
    [O2M_DT_UINT64] = "ui64",
    [O2M_DT_COMPLEX64] = "complex<f32>",
    [O2M_DT_COMPLEX128] = "complex<f64>",
    [O2M_DT_BFLOAT16] = "bf16",
    [O2M_DT_FLOAT8E4M3FN] = "f8E4M3FN",
    [O2M_DT_FLOAT8E4M3FNUZ] = "f8E4M3FNUZ",
    [O2M_DT_FLOAT8E5M2] = "f8E5M2",
    [O2M_DT_FLOAT8E5M2FNUZ] = "f8E5M2FNUZ",
    [O2M_DT_UINT4] = "ui4",
    [O2M_DT_INT4] = "si4",
    [O2M_DT_FLOAT4E2M1] = "f4E2M1FN",
    [O2M_DT_FLOAT8E8M0] = "f8E8M0FNU",
    [O2M_DT_UINT2] = "ui2",
    [O2M_DT_INT2] = "si2",
};

/* torch's names for the scalar types that may key an ONNX map. */
static const char *const map_key_text[O2M_DT_COUNT] = {
    [O2M_DT_STRING] = "str", [O2M_DT_INT8] = "int",   [O2M_DT_INT16] = "int",
    [O2M_DT_INT32] = "int",  [O2M_DT_INT64] = "int",  [O2M_DT_UINT8] = "int",
    [O2M_DT_UINT16] = "int", [O2M_DT_UINT32] = "int", [O2M_DT_UINT64] = "int",
};

static const char *element_name(o2m_dtype dtype) {
  return (unsigned)dtype < O2M_DT_COUNT ? element_text[dtype] : NULL;
}

/* Whether a torch value type can carry `dtype` (see the header). */
static int is_torch_dtype(o2m_dtype dtype) {
  switch (dtype) {
  case O2M_DT_UINT2:
  case O2M_DT_INT2:
  case O2M_DT_FLOAT4E2M1:
  case O2M_DT_FLOAT8E8M0:
    return 0;
  default:
    return 1;
  }
}

/* ---- a growable string with inline storage ----------------------------- */

typedef struct text_buf {
  char *p;
  size_t len, cap;
  int failed;
  char inline_storage[256];
} text_buf;

static void text_init(text_buf *t) {
  t->p = t->inline_storage;
  t->len = 0;
  t->cap = sizeof(t->inline_storage);
  t->failed = 0;
  t->p[0] = '\0';
}

static void text_free(text_buf *t) {
  if (t->p != t->inline_storage) free(t->p);
}

static void text_add(text_buf *t, const char *s) {
  size_t n = strlen(s);
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap * 2;
    while (t->len + n + 1 > cap) cap *= 2;
    char *p = t->p == t->inline_storage ? malloc(cap) : realloc(t->p, cap);
    if (!p) {
      t->failed = 1;
      return;
    }
    if (t->p == t->inline_storage) memcpy(p, t->p, t->len + 1);
    t->p = p;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n + 1);
  t->len += n;
}

/* ---- type text --------------------------------------------------------- */

static const char *add_type_text(text_buf *t, const o2m_type *type,
                                 int nested);

static const char *add_tensor_text(text_buf *t, const o2m_type *type) {
  int no_dtype = type->elem == O2M_DT_UNDEFINED || !is_torch_dtype(type->elem);
  const char *elem = no_dtype ? "unk" : element_name(type->elem);
  if (!elem) return "its element type is not a known ONNX data type";
  if (type->rank > 0 && !type->dims) return "its shape is missing";
  text_add(t, "vtensor<");
  if (type->rank < 0) {
    text_add(t, "*");
  } else {
    text_add(t, "[");
    for (int i = 0; i < type->rank; i++) {
      char num[24] = "?";
      if (type->dims[i].size >= 0)
        snprintf(num, sizeof(num), "%lld", (long long)type->dims[i].size);
      if (i) text_add(t, ",");
      text_add(t, num);
    }
    text_add(t, "]");
  }
  text_add(t, ",");
  text_add(t, elem);
  text_add(t, ">");
  return NULL;
}

static const char *add_wrapped_text(text_buf *t, const char *wrapper,
                                    const o2m_type *inner) {
  if (!inner) return "its element type is unknown";
  text_add(t, wrapper);
  text_add(t, "<");
  const char *why = add_type_text(t, inner, 1);
  text_add(t, ">");
  return why;
}

static const char *add_map_text(text_buf *t, const o2m_type *type) {
  const char *key =
      (unsigned)type->elem < O2M_DT_COUNT ? map_key_text[type->elem] : NULL;
  if (!key) return "its map key type has no torch form";
  if (!type->inner) return "its map value type is unknown";
  text_add(t, "dict<");
  text_add(t, key);
  text_add(t, ", ");
  const char *why = add_type_text(t, type->inner, 1);
  text_add(t, ">");
  return why;
}

/* Appends the text of `type`; returns NULL, or why it has no torch form. */
static const char *add_type_text(text_buf *t, const o2m_type *type,
                                 int nested) {
  if (type->kind == O2M_TYPE_UNKNOWN) return "its type is unknown";
  if (!nested) text_add(t, "!torch.");
  switch (type->kind) {
  case O2M_TYPE_TENSOR:
  case O2M_TYPE_SPARSE_TENSOR:
    return add_tensor_text(t, type);
  case O2M_TYPE_SEQUENCE:
    return add_wrapped_text(t, "list", type->inner);
  case O2M_TYPE_OPTIONAL:
    return add_wrapped_text(t, "optional", type->inner);
  case O2M_TYPE_MAP:
    return add_map_text(t, type);
  case O2M_TYPE_UNKNOWN:
    break;
  }
  return "its type kind is not known";
}

/* ---- parsing with a cache ---------------------------------------------- */

MlirType torch_parse_type(o2m_torch *em, const char *text) {
  return form_parse_type_cached(em->ctx, &em->type_cache, &em->arena, text);
}

o2m_status torch_type(o2m_torch *em, const o2m_type *type, MlirType *out,
                      const char **why) {
  text_buf t;
  text_init(&t);
  const char *reason = add_type_text(&t, type, 0);
  o2m_status status = form_type_from_text(em->ctx, &em->type_cache, &em->arena, t.p, t.failed,
                                          reason, out, why);
  text_free(&t);
  return status;
}

/* The builtin element type of `dtype`; null for an unknown dtype. */
static MlirType element_type(o2m_torch *em, o2m_dtype dtype) {
  const char *text = element_name(dtype);
  if (!text) return (MlirType){NULL};
  if (mlirTypeIsNull(em->elem_types[dtype]))
    em->elem_types[dtype] = mlirTypeParseGet(em->ctx, torch_str(text));
  return em->elem_types[dtype];
}

MlirType torch_builtin_tensor_type(o2m_torch *em, o2m_dtype dtype, int rank,
                                   const int64_t *dims) {
  MlirType elem = element_type(em, dtype);
  if (mlirTypeIsNull(elem) || rank < 0) return (MlirType){NULL};
  return mlirRankedTensorTypeGetChecked(em->unknown_loc, rank, dims, elem,
                                        mlirAttributeGetNull());
}
