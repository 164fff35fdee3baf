/* dtype.c - facts about ONNX element types (TensorProto.DataType): their
 * ONNX spelling, their width in bits and the bytes a tensor of them takes
 * in ONNX's raw layout. One table, indexed by the dtype number. */
#include <stdint.h>
#include <string.h>

#include "ir/ir.h"

static const struct {
  const char *name;
  int bits;
} dtype_facts[O2M_DT_COUNT] = {
    [O2M_DT_UNDEFINED] = {"undefined", 0},
    [O2M_DT_FLOAT] = {"float", 32},
    [O2M_DT_UINT8] = {"uint8", 8},
    [O2M_DT_INT8] = {"int8", 8},
    [O2M_DT_UINT16] = {"uint16", 16},
    [O2M_DT_INT16] = {"int16", 16},
    [O2M_DT_INT32] = {"int32", 32},
    [O2M_DT_INT64] = {"int64", 64},
    [O2M_DT_STRING] = {"string", 0},
    [O2M_DT_BOOL] = {"bool", 8},
    [O2M_DT_FLOAT16] = {"float16", 16},
    [O2M_DT_DOUBLE] = {"double", 64},
    [O2M_DT_UINT32] = {"uint32", 32},
    [O2M_DT_UINT64] = {"uint64", 64},
    [O2M_DT_COMPLEX64] = {"complex64", 64},
    [O2M_DT_COMPLEX128] = {"complex128", 128},
    [O2M_DT_BFLOAT16] = {"bfloat16", 16},
    [O2M_DT_FLOAT8E4M3FN] = {"float8e4m3fn", 8},
    [O2M_DT_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 8},
    [O2M_DT_FLOAT8E5M2] = {"float8e5m2", 8},
    [O2M_DT_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 8},
    [O2M_DT_UINT4] = {"uint4", 4},
    [O2M_DT_INT4] = {"int4", 4},
    [O2M_DT_FLOAT4E2M1] = {"float4e2m1", 4},
    [O2M_DT_FLOAT8E8M0] = {"float8e8m0", 8},
    [O2M_DT_UINT2] = {"uint2", 2},
    [O2M_DT_INT2] = {"int2", 2},
};

int o2m_dtype_valid(int dtype) {
  return dtype > O2M_DT_UNDEFINED && dtype < O2M_DT_COUNT;
}

int o2m_dtype_bits(o2m_dtype dtype) {
  return o2m_dtype_valid((int)dtype) ? dtype_facts[dtype].bits : 0;
}

const char *o2m_dtype_name(o2m_dtype dtype) {
  return o2m_dtype_valid((int)dtype) ? dtype_facts[dtype].name : "undefined";
}

o2m_dtype o2m_dtype_named(const char *name, size_t length) {
  for (int d = 1; d < O2M_DT_COUNT; d++)
    if (dtype_facts[d].name && strlen(dtype_facts[d].name) == length && memcmp(dtype_facts[d].name, name, length) == 0)
      return (o2m_dtype)d;
  return O2M_DT_UNDEFINED;
}

size_t o2m_dtype_storage_bytes(o2m_dtype dtype, int64_t count) {
  if (count < 0) return SIZE_MAX;
  uint64_t bits = (uint64_t)o2m_dtype_bits(dtype);
  if (bits && (uint64_t)count > UINT64_MAX / bits) return SIZE_MAX;
  uint64_t total_bits = (uint64_t)count * bits;
  uint64_t bytes = total_bits / 8 + (total_bits % 8 != 0);
  return bytes >= SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}
