/* exec_memref.c - tensors to and from memref descriptors.
 *
 * Owns: the table from MLIR element types to ONNX dtypes, the layout of an
 * element in the generated code's memory (one byte for i1 and for sub-byte
 * types, which ONNX packs two or four to a byte), copying an input tensor
 * into a fresh aligned buffer with a row-major descriptor, and copying a
 * result out of a descriptor with any offset and strides.
 */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinTypes.h>

#include "exec/exec_internal.h"
#include "util/diag.h"

/* ---- element types ------------------------------------------------- */

static const struct {
  bool (*isa)(MlirType);
  o2m_dtype dtype;
} float_types[] = {
    {mlirTypeIsAF32, O2M_DT_FLOAT},
    {mlirTypeIsAF64, O2M_DT_DOUBLE},
    {mlirTypeIsAF16, O2M_DT_FLOAT16},
    {mlirTypeIsABF16, O2M_DT_BFLOAT16},
    {mlirTypeIsAFloat8E4M3FN, O2M_DT_FLOAT8E4M3FN},
    {mlirTypeIsAFloat8E4M3FNUZ, O2M_DT_FLOAT8E4M3FNUZ},
    {mlirTypeIsAFloat8E5M2, O2M_DT_FLOAT8E5M2},
    {mlirTypeIsAFloat8E5M2FNUZ, O2M_DT_FLOAT8E5M2FNUZ},
    {mlirTypeIsAFloat8E8M0FNU, O2M_DT_FLOAT8E8M0},
    {mlirTypeIsAFloat4E2M1FN, O2M_DT_FLOAT4E2M1},
};

/* Integers by width: signed and unsigned ONNX dtypes. */
static const struct {
  unsigned width;
  o2m_dtype sint, uint;
} int_types[] = {
    {2, O2M_DT_INT2, O2M_DT_UINT2},     {4, O2M_DT_INT4, O2M_DT_UINT4},
    {8, O2M_DT_INT8, O2M_DT_UINT8},     {16, O2M_DT_INT16, O2M_DT_UINT16},
    {32, O2M_DT_INT32, O2M_DT_UINT32},  {64, O2M_DT_INT64, O2M_DT_UINT64},
};

o2m_dtype exec_dtype_of(MlirType type) {
  for (size_t i = 0; i < sizeof(float_types) / sizeof(float_types[0]); i++)
    if (float_types[i].isa(type)) return float_types[i].dtype;
  if (mlirTypeIsAIndex(type)) return O2M_DT_INT64;
  if (mlirTypeIsAInteger(type)) {
    unsigned width = mlirIntegerTypeGetWidth(type);
    if (width == 1) return O2M_DT_BOOL;
    for (size_t i = 0; i < sizeof(int_types) / sizeof(int_types[0]); i++)
      if (int_types[i].width == width)
        return mlirIntegerTypeIsUnsigned(type) ? int_types[i].uint : int_types[i].sint;
    return O2M_DT_UNDEFINED;
  }
  if (mlirTypeIsAComplex(type)) {
    MlirType part = mlirComplexTypeGetElementType(type);
    if (mlirTypeIsAF32(part)) return O2M_DT_COMPLEX64;
    if (mlirTypeIsAF64(part)) return O2M_DT_COMPLEX128;
  }
  return O2M_DT_UNDEFINED;
}

static int is_integer(o2m_dtype d) {
  for (size_t i = 0; i < sizeof(int_types) / sizeof(int_types[0]); i++)
    if (int_types[i].sint == d || int_types[i].uint == d) return 1;
  return 0;
}

int exec_dtype_feeds(o2m_dtype want, o2m_dtype have) {
  if (want == have) return 1;
  return is_integer(want) && is_integer(have) && o2m_dtype_bits(want) == o2m_dtype_bits(have);
}

size_t exec_elem_bytes(o2m_dtype d) {
  int bits = o2m_dtype_bits(d);
  return bits < 8 ? 1 : (size_t)bits / 8;
}

/* ---- inputs --------------------------------------------------------- */

enum { BUFFER_ALIGN = 64 };

/* Unpacks ONNX's packed sub-byte elements to one (zero-extended) byte. */
static void unpack_sub_byte(const uint8_t *src, uint8_t *dst, int64_t count, int bits) {
  unsigned mask = (1u << bits) - 1, per_byte = 8u / (unsigned)bits;
  for (int64_t k = 0; k < count; k++)
    dst[k] = (uint8_t)((src[k / per_byte] >> ((unsigned)(k % per_byte) * (unsigned)bits)) & mask);
}

o2m_status exec_desc_from_tensor(const o2m_tensor *t, exec_word *desc, o2m_diag *diag) {
  size_t esize = exec_elem_bytes(t->dtype);
  if (t->count < 0 || (uint64_t)t->count > SIZE_MAX / esize - BUFFER_ALIGN)
    return o2m_fail(diag, O2M_ERR_INVALID, "input '%s' is too large", t->name ? t->name : "");
  size_t bytes = (size_t)t->count * esize;
  size_t rounded = (bytes + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN;
  uint8_t *buf = aligned_alloc(BUFFER_ALIGN, rounded ? rounded : BUFFER_ALIGN);
  if (!buf) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory copying input '%s'", t->name ? t->name : "");
  int bits = o2m_dtype_bits(t->dtype);
  if (bytes && bits < 8)
    unpack_sub_byte(t->data, buf, t->count, bits);
  else if (bytes)
    memcpy(buf, t->data, bytes);
  exec_desc_view(t, buf, desc);
  return O2M_OK;
}

void exec_desc_free_input(exec_word *desc) { free(desc[0].ptr); }

int exec_desc_borrowable_anywhere(const o2m_tensor *t) {
  return o2m_dtype_bits(t->dtype) >= 8 && t->dtype != O2M_DT_BOOL && t->data;
}

int exec_desc_borrowable(const o2m_tensor *t) {
  return exec_desc_borrowable_anywhere(t) && (uintptr_t)t->data % exec_elem_bytes(t->dtype) == 0;
}

void exec_desc_view(const o2m_tensor *t, const void *data, exec_word *desc) {
  desc[0].ptr = (void *)data;
  desc[1].ptr = (void *)data;
  desc[2].i = 0;
  int64_t stride = 1;
  for (int k = t->rank - 1; k >= 0; k--) {
    desc[3 + k].i = t->dims[k];
    desc[3 + t->rank + k].i = stride;
    stride *= t->dims[k] > 0 ? t->dims[k] : 1;
  }
}

/* ---- results -------------------------------------------------------- */

static void pack_sub_byte(const uint8_t *src, uint8_t *dst, int64_t count, int bits) {
  unsigned mask = (1u << bits) - 1, per_byte = 8u / (unsigned)bits;
  for (int64_t k = 0; k < count; k++)
    dst[k / per_byte] |= (uint8_t)((src[k] & mask) << ((unsigned)(k % per_byte) * (unsigned)bits));
}

/* Copies a strided view element by element, in row-major order. */
static void gather_strided(const uint8_t *base, const int64_t *sizes, const int64_t *strides,
                           int rank, size_t esize, int64_t count, uint8_t *dst, int64_t *index) {
  for (int k = 0; k < rank; k++) index[k] = 0;
  for (int64_t n = 0; n < count; n++) {
    int64_t off = 0;
    for (int k = 0; k < rank; k++) off += index[k] * strides[k];
    memcpy(dst + (size_t)n * esize, base + off * (int64_t)esize, esize);
    for (int k = rank - 1; k >= 0 && ++index[k] == sizes[k]; k--) index[k] = 0;
  }
}

static int is_row_major(const int64_t *sizes, const int64_t *strides, int rank) {
  int64_t want = 1;
  for (int k = rank - 1; k >= 0; k--) {
    if (sizes[k] != 1 && strides[k] != want) return 0;
    want *= sizes[k];
  }
  return 1;
}

o2m_status exec_desc_to_tensor(const exec_word *desc, const exec_arg *sig, int index,
                               o2m_arena *arena, o2m_tensor **out, o2m_diag *diag) {
  int rank = sig->rank;
  const int64_t *sizes = &desc[3].i, *strides = &desc[3 + rank].i;
  o2m_tensor *t = o2m_arena_alloc(arena, sizeof(*t));
  int64_t *dims = rank ? o2m_arena_array(arena, (size_t)rank, sizeof(int64_t)) : NULL;
  int64_t *scratch = rank ? o2m_arena_array(arena, (size_t)rank, sizeof(int64_t)) : NULL;
  if (!t || (rank && (!dims || !scratch))) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  int64_t count = 1;
  for (int k = 0; k < rank; k++) {
    if (sizes[k] < 0 || (sig->dims[k] >= 0 && sizes[k] != sig->dims[k]) ||
        (sizes[k] && count > INT64_MAX / sizes[k]))
      return o2m_fail(diag, O2M_ERR_INTERNAL, "result %d: the generated code returned size %lld for dim %d",
                      index, (long long)sizes[k], k);
    dims[k] = sizes[k];
    count *= sizes[k];
  }
  size_t esize = exec_elem_bytes(sig->dtype);
  size_t nbytes = o2m_dtype_storage_bytes(sig->dtype, count);
  if (nbytes == SIZE_MAX || (uint64_t)count > SIZE_MAX / esize)
    return o2m_fail(diag, O2M_ERR_INTERNAL, "result %d is too large (%lld elements)", index, (long long)count);
  *t = (o2m_tensor){.dtype = sig->dtype, .rank = rank, .dims = dims, .count = count,
                    .nbytes = nbytes, .origin = O2M_DATA_COMPUTED};
  if (count == 0) {
    *out = t;
    return O2M_OK;
  }
  uint8_t *data = o2m_arena_alloc(arena, nbytes);
  int bits = o2m_dtype_bits(sig->dtype);
  uint8_t *unpacked = bits < 8 ? o2m_arena_alloc(arena, (size_t)count) : data;
  if (!data || !unpacked) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory copying result %d", index);
  const uint8_t *base = (const uint8_t *)desc[1].ptr + desc[2].i * (int64_t)esize;
  if (is_row_major(sizes, strides, rank))
    memcpy(unpacked, base, (size_t)count * esize);
  else
    gather_strided(base, sizes, strides, rank, esize, count, unpacked, scratch);
  if (bits < 8) pack_sub_byte(unpacked, data, count, bits);
  t->data = data;
  *out = t;
  return O2M_OK;
}
