/* infer_tensor.c - element access to tensors in ONNX raw layout, for data
 * propagation and constant folding: creation, integer/float reads and
 * writes per dtype, float16/bfloat16 conversion. */
#include <math.h>
#include <string.h>

#include "infer/infer.h"

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while (!(mant & 0x400));
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp - 15 + 127) << 23 | mant << 13;
  }
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof(x));
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) /* inf / nan */
    return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 0x1f) return (uint16_t)(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = (uint32_t)exp << 10 | mant >> 13;
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;
  return (uint16_t)(sign | half);
}

static float bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof(x));
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

int o2m_dtype_is_float(o2m_dtype d) {
  return d == O2M_DT_FLOAT || d == O2M_DT_DOUBLE || d == O2M_DT_FLOAT16 ||
         d == O2M_DT_BFLOAT16;
}

int o2m_dtype_is_int(o2m_dtype d) {
  switch (d) {
  case O2M_DT_BOOL: case O2M_DT_INT8: case O2M_DT_UINT8: case O2M_DT_INT16:
  case O2M_DT_UINT16: case O2M_DT_INT32: case O2M_DT_UINT32:
  case O2M_DT_INT64: case O2M_DT_UINT64:
    return 1;
  default:
    return 0;
  }
}

o2m_tensor *o2m_tensor_new(o2m_infer_ctx *ctx, o2m_dtype dtype, int rank,
                           const int64_t *dims) {
  o2m_tensor *t = o2m_arena_alloc(ctx->arena, sizeof(*t));
  if (!t) return NULL;
  t->name = "";
  t->doc = "";
  t->dtype = dtype;
  t->rank = rank;
  t->origin = O2M_DATA_COMPUTED;
  t->count = 1;
  if (rank > 0) {
    t->dims = o2m_arena_array(ctx->arena, (size_t)rank, sizeof(int64_t));
    if (!t->dims) return NULL;
    for (int k = 0; k < rank; k++) {
      if (dims[k] < 0 || (dims[k] && t->count > INT64_MAX / dims[k])) return NULL;
      t->dims[k] = dims[k];
      t->count *= dims[k];
    }
  }
  if (dtype == O2M_DT_STRING) {
    t->strings = o2m_arena_array(ctx->arena, (size_t)t->count + 1,
                                 sizeof(o2m_bytes));
    return t->strings ? t : NULL;
  }
  t->nbytes = o2m_dtype_storage_bytes(dtype, t->count);
  if (t->nbytes == SIZE_MAX) return NULL;
  if (t->count) {
    uint8_t *data = o2m_arena_alloc(ctx->arena, t->nbytes);
    if (!data) return NULL;
    t->data = data;
  }
  return t;
}

#define LOAD(T) ({ T v_; memcpy(&v_, p + (size_t)index * sizeof(T), sizeof(T)); v_; })
#define STORE(T, x) do { T v_ = (T)(x); memcpy(p + (size_t)index * sizeof(T), &v_, sizeof(T)); } while (0)

int64_t o2m_tensor_get_int(const o2m_tensor *t, int64_t index) {
  const uint8_t *p = t->data;
  if (!p || index < 0 || index >= t->count) return 0;
  switch (t->dtype) {
  case O2M_DT_BOOL: case O2M_DT_UINT8: return LOAD(uint8_t);
  case O2M_DT_INT8: return LOAD(int8_t);
  case O2M_DT_INT16: return LOAD(int16_t);
  case O2M_DT_UINT16: return LOAD(uint16_t);
  case O2M_DT_INT32: return LOAD(int32_t);
  case O2M_DT_UINT32: return LOAD(uint32_t);
  case O2M_DT_INT64: return LOAD(int64_t);
  case O2M_DT_UINT64: return (int64_t)LOAD(uint64_t);
  case O2M_DT_FLOAT: case O2M_DT_DOUBLE: case O2M_DT_FLOAT16: case O2M_DT_BFLOAT16: {
    double d = o2m_tensor_get_float(t, index);
    if (isnan(d)) return 0;
    if (d >= 9.2e18) return INT64_MAX;
    if (d <= -9.2e18) return INT64_MIN;
    return (int64_t)d;
  }
  default: return 0;
  }
}

double o2m_tensor_get_float(const o2m_tensor *t, int64_t index) {
  const uint8_t *p = t->data;
  if (!p || index < 0 || index >= t->count) return 0;
  switch (t->dtype) {
  case O2M_DT_FLOAT: return LOAD(float);
  case O2M_DT_DOUBLE: return LOAD(double);
  case O2M_DT_FLOAT16: return half_to_float(LOAD(uint16_t));
  case O2M_DT_BFLOAT16: return bf16_to_float(LOAD(uint16_t));
  case O2M_DT_UINT64: return (double)LOAD(uint64_t);
  default: return (double)o2m_tensor_get_int(t, index);
  }
}

void o2m_tensor_set_int(o2m_tensor *t, int64_t index, int64_t v) {
  uint8_t *p = (uint8_t *)t->data;
  if (!p || index < 0 || index >= t->count) return;
  switch (t->dtype) {
  case O2M_DT_BOOL: STORE(uint8_t, v != 0); break;
  case O2M_DT_UINT8: STORE(uint8_t, v); break;
  case O2M_DT_INT8: STORE(int8_t, v); break;
  case O2M_DT_INT16: STORE(int16_t, v); break;
  case O2M_DT_UINT16: STORE(uint16_t, v); break;
  case O2M_DT_INT32: STORE(int32_t, v); break;
  case O2M_DT_UINT32: STORE(uint32_t, v); break;
  case O2M_DT_INT64: STORE(int64_t, v); break;
  case O2M_DT_UINT64: STORE(uint64_t, v); break;
  case O2M_DT_FLOAT: case O2M_DT_DOUBLE: case O2M_DT_FLOAT16: case O2M_DT_BFLOAT16:
    o2m_tensor_set_float(t, index, (double)v);
    break;
  default: break; /* no numeric storage here (strings, float8, an undefined dtype) */
  }
}

void o2m_tensor_set_float(o2m_tensor *t, int64_t index, double v) {
  uint8_t *p = (uint8_t *)t->data;
  if (!p || index < 0 || index >= t->count) return;
  switch (t->dtype) {
  case O2M_DT_FLOAT: STORE(float, v); break;
  case O2M_DT_DOUBLE: STORE(double, v); break;
  case O2M_DT_FLOAT16: STORE(uint16_t, float_to_half((float)v)); break;
  case O2M_DT_BFLOAT16: STORE(uint16_t, float_to_bf16((float)v)); break;
  default:
    if (isnan(v)) v = 0;
    if (v >= 9.2e18) v = 9.2e18;
    if (v <= -9.2e18) v = -9.2e18;
    if (t->dtype == O2M_DT_BOOL) { STORE(uint8_t, v != 0); break; }
    o2m_tensor_set_int(t, index, (int64_t)v);
    break;
  }
}
