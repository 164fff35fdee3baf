/* form_tensors.c - tensor data as MLIR attributes, for both as-written
 * forms (the torch form and onnx-mlir's form differ only in the element
 * types of the attribute, which the caller's form_tensor_maker gives).
 *
 * Owns: the choice of attribute for a tensor's value and the blob names.
 *
 *   raw bytes (inline raw_data, external data, computed)
 *       -> dense_resource<NAME> : tensor<...>, an unmanaged blob that views
 *          the mapped bytes: nothing is copied, the model must outlive the
 *          module (it does: the module is written before emit returns)
 *   typed fields (float_data, int64_data, ...: decoded into the arena)
 *       -> dense<...>, as torch-mlir's importer does for them
 *   strings -> dense<["a", "b"]> : tensor<2x!torch.str> (or !onnx.String)
 *   no elements -> dense<> : tensor<0xf32>
 *   4- and 2-bit types (int4, uint4, int2, uint2, float4e2m1): ONNX packs
 *       them two or four to a byte, MLIR stores one per byte, so they are
 *       unpacked into an owned buffer (freed with the context) first
 *
 * Blob names follow torch-mlir: a name that is not an identifier gets a
 * leading '_', and every character outside [A-Za-z0-9_.] becomes '_'.
 * MLIR makes a repeated name unique by appending _1, _2, ...
 * Every blob records alignment 8, as torch-mlir's importer does: that is
 * the alignment readers of the output (text or bytecode) give the blob,
 * enough for every element type. The view itself may sit at any byte of
 * the mapping (a protobuf field is not aligned); that is harmless because
 * it is only ever read as bytes, by the printer or the bytecode writer,
 * before the module is destroyed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/form/form.h"

enum { BLOB_ALIGNMENT = 8 };

static int is_ascii_letter(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static int is_ascii_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_identifier_char(unsigned char c) {
  return is_ascii_letter(c) || is_ascii_digit(c) || c == '_';
}

static int is_identifier(const char *s) {
  if (!*s || !(is_ascii_letter((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!is_identifier_char((unsigned char)*s)) return 0;
  return 1;
}

/* The blob name for a tensor called `name` (in the emitter's arena). */
static const char *blob_name(o2m_arena *arena, const char *name) {
  size_t n = strlen(name);
  int prefix = !is_identifier(name);
  char *out = o2m_arena_alloc(arena, n + (size_t)prefix + 1);
  if (!out) return NULL;
  if (prefix) out[0] = '_';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)name[i];
    out[prefix + i] = is_identifier_char(c) || c == '.' ? (char)c : '_';
  }
  return out;
}

static int is_sub_byte(o2m_dtype dtype) {
  int bits = o2m_dtype_bits(dtype);
  return bits > 0 && bits < 8;
}

/* One byte per element, each holding the element's bits zero-extended
 * (the layout MLIR writes for a narrow integer or float). malloc'd. */
static uint8_t *unpack_sub_byte(const o2m_tensor *tensor) {
  int bits = o2m_dtype_bits(tensor->dtype);
  int per_byte = 8 / bits;
  uint8_t mask = (uint8_t)((1u << bits) - 1);
  uint8_t *out = malloc((size_t)tensor->count);
  if (!out) return NULL;
  for (int64_t i = 0; i < tensor->count; i++) {
    uint8_t byte = tensor->data[i / per_byte];
    out[i] = (uint8_t)(byte >> (bits * (int)(i % per_byte))) & mask;
  }
  return out;
}

static void free_owned_blob(void *user, const void *data, size_t size,
                            size_t align) {
  free(user);
}

static MlirAttribute dense_strings(MlirType type, const o2m_tensor *tensor) {
  MlirStringRef *refs = malloc(sizeof(*refs) * (size_t)(tensor->count + 1));
  if (!refs) return mlirAttributeGetNull();
  for (int64_t i = 0; i < tensor->count; i++)
    refs[i] = mlirStringRefCreate((const char *)tensor->strings[i].ptr,
                                  tensor->strings[i].len);
  MlirAttribute attr =
      mlirDenseElementsAttrStringGet(type, (intptr_t)tensor->count, refs);
  free(refs);
  return attr;
}

static MlirAttribute dense_bools(MlirType type, const o2m_tensor *tensor) {
  int *values = malloc(sizeof(int) * (size_t)(tensor->count + 1));
  if (!values) return mlirAttributeGetNull();
  for (int64_t i = 0; i < tensor->count; i++) values[i] = tensor->data[i] != 0;
  MlirAttribute attr =
      mlirDenseElementsAttrBoolGet(type, (intptr_t)tensor->count, values);
  free(values);
  return attr;
}

/* A dense<...> attribute holding a copy of the tensor's elements. */
static MlirAttribute dense_copy(MlirType type, const o2m_tensor *tensor) {
  if (tensor->dtype == O2M_DT_STRING) return dense_strings(type, tensor);
  if (tensor->count == 0) return mlirDenseElementsAttrRawBufferGet(type, 0, "");
  if (tensor->dtype == O2M_DT_BOOL) return dense_bools(type, tensor);
  if (!is_sub_byte(tensor->dtype))
    return mlirDenseElementsAttrRawBufferGet(type, tensor->nbytes,
                                             tensor->data);
  uint8_t *bytes = unpack_sub_byte(tensor);
  if (!bytes) return mlirAttributeGetNull();
  MlirAttribute attr =
      mlirDenseElementsAttrRawBufferGet(type, (size_t)tensor->count, bytes);
  free(bytes);
  return attr;
}

/* A dense_resource<...> attribute over the tensor's bytes. */
static MlirAttribute dense_resource(MlirType type,
                                    const o2m_tensor *tensor,
                                    const char *name) {
  if (!is_sub_byte(tensor->dtype))
    return mlirUnmanagedDenseResourceElementsAttrGet(
        type, mlirStringRefCreateFromCString(name), (void *)tensor->data, tensor->nbytes,
        BLOB_ALIGNMENT, false, NULL, NULL);
  uint8_t *bytes = unpack_sub_byte(tensor);
  if (!bytes) return mlirAttributeGetNull();
  return mlirUnmanagedDenseResourceElementsAttrGet(
      type, mlirStringRefCreateFromCString(name), bytes, (size_t)tensor->count,
      BLOB_ALIGNMENT, false, free_owned_blob, bytes);
}

/* Checks that a non-string tensor's bytes are all there. */
static const char *check_payload(const o2m_tensor *tensor) {
  if (tensor->dtype == O2M_DT_STRING)
    return tensor->count > 0 && !tensor->strings ? "has no string data" : NULL;
  if (tensor->count == 0) return NULL;
  if (!tensor->data) return "has no data (unresolved external data?)";
  if (tensor->nbytes != o2m_dtype_storage_bytes(tensor->dtype, tensor->count))
    return "has a data size that does not match its shape and type";
  return NULL;
}

static const char *const cannot_hold =
    "has an element type or shape the output form cannot hold";

o2m_status form_tensor_attr(const form_tensor_maker *maker, const o2m_tensor *tensor,
                            const char *fallback_name, MlirAttribute *out, const char **why) {
  MlirType type = maker->type(maker->user, tensor->dtype, tensor->rank, tensor->dims);
  if (mlirTypeIsNull(type)) {
    *why = cannot_hold;
    return O2M_ERR_UNSUPPORTED;
  }
  if ((*why = check_payload(tensor))) return O2M_ERR_INVALID;
  int copy = tensor->dtype == O2M_DT_STRING || tensor->count == 0 ||
             tensor->origin == O2M_DATA_DECODED;
  if (copy) {
    *out = dense_copy(type, tensor);
  } else {
    const char *name = blob_name(
        maker->arena, tensor->name && *tensor->name ? tensor->name : fallback_name);
    *out = name ? dense_resource(type, tensor, name)
                : mlirAttributeGetNull();
  }
  if (mlirAttributeIsNull(*out)) {
    *why = "could not be made into an attribute (out of memory?)";
    return O2M_ERR_NOMEM;
  }
  return O2M_OK;
}

/* ---- sparse tensors ---------------------------------------------------- */

static int64_t read_int64(const uint8_t *p) {
  int64_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

/* The [NNZ, rank] coordinates of a sparse tensor's indices, whether ONNX
 * gave them linearised ([NNZ]) or as coordinates, into *out (malloc'd). */
static o2m_status sparse_coordinates(const o2m_sparse_tensor *sparse,
                                     int64_t nnz, int64_t **out,
                                     const char **why) {
  const o2m_tensor *idx = sparse->indices;
  int rank = sparse->rank;
  int linear = idx->rank == 1;
  if (idx->dtype != O2M_DT_INT64 || !(linear || idx->rank == 2) ||
      idx->dims[0] != nnz || (!linear && idx->dims[1] != rank) ||
      check_payload(idx)) {
    *why = "has indices that are not int64 [NNZ] or [NNZ, rank]";
    return O2M_ERR_INVALID;
  }
  int64_t *coords = malloc(sizeof(int64_t) * (size_t)(nnz * rank + 1));
  if (!coords) {
    *why = "out of memory";
    return O2M_ERR_NOMEM;
  }
  for (int64_t i = 0; i < nnz; i++) {
    int64_t *c = coords + i * rank;
    if (linear) {
      int64_t flat = read_int64(idx->data + 8 * i);
      for (int d = rank - 1; d >= 0; d--) {
        int64_t size = sparse->dims[d] ? sparse->dims[d] : 1;
        c[d] = flat % size;
        flat /= size;
      }
    } else {
      for (int d = 0; d < rank; d++)
        c[d] = read_int64(idx->data + 8 * (i * rank + d));
    }
    for (int d = 0; d < rank; d++) {
      if (c[d] < 0 || c[d] >= sparse->dims[d]) {
        *why = "has an index outside its shape";
        free(coords);
        return O2M_ERR_INVALID;
      }
    }
  }
  *out = coords;
  return O2M_OK;
}

o2m_status form_sparse_attr(const form_tensor_maker *maker, const o2m_sparse_tensor *sparse,
                            MlirAttribute *out, const char **why) {
  const o2m_tensor *values = sparse->values;
  if (!values || !sparse->indices || values->rank != 1) {
    *why = "lacks 1-D values or indices";
    return O2M_ERR_INVALID;
  }
  if ((*why = check_payload(values))) return O2M_ERR_INVALID;
  int64_t nnz = values->count;
  MlirType type = maker->type(maker->user, values->dtype, sparse->rank, sparse->dims);
  MlirType values_type = maker->type(maker->user, values->dtype, 1, &nnz);
  int64_t index_shape[2] = {nnz, sparse->rank};
  MlirType index_type = mlirRankedTensorTypeGet(
      2, index_shape, mlirIntegerTypeGet(maker->ctx, 64), mlirAttributeGetNull());
  if (mlirTypeIsNull(type) || mlirTypeIsNull(values_type)) {
    *why = cannot_hold;
    return O2M_ERR_UNSUPPORTED;
  }
  int64_t *coords = NULL;
  o2m_status status = sparse_coordinates(sparse, nnz, &coords, why);
  if (status != O2M_OK) return status;
  MlirAttribute indices = mlirDenseElementsAttrRawBufferGet(
      index_type, sizeof(int64_t) * (size_t)(nnz * sparse->rank), coords);
  free(coords);
  MlirAttribute dense_values = dense_copy(values_type, values);
  if (mlirAttributeIsNull(indices) || mlirAttributeIsNull(dense_values)) {
    *why = "could not be made into an attribute (out of memory?)";
    return O2M_ERR_NOMEM;
  }
  *out = mlirSparseElementsAttribute(type, indices, dense_values);
  return O2M_OK;
}
