/* tensor_writer.c - a TensorProto encoder (see tensor_writer.h). Fields are
 * written in field-number order, dims unpacked as proto2 onnx.proto
 * declares them, so that protobuf's own parser and ONNX's tools read the
 * result unchanged. */
#include <string.h>

#include "onnx/tensor_writer.h"
#include "util/diag.h"

enum {
  FIELD_DIMS = 1,
  FIELD_DATA_TYPE = 2,
  FIELD_STRING_DATA = 6,
  FIELD_NAME = 8,
  FIELD_RAW_DATA = 9
};
enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

typedef struct writer {
  FILE *out;
  int failed;
} writer;

static void put_bytes(writer *w, const void *p, size_t n) {
  if (!w->failed && n && fwrite(p, 1, n, w->out) != n) w->failed = 1;
}

static void put_varint(writer *w, uint64_t v) {
  uint8_t buf[10];
  size_t n = 0;
  do {
    buf[n++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    v >>= 7;
  } while (v);
  put_bytes(w, buf, n);
}

static void put_tag(writer *w, unsigned field, unsigned wire) {
  put_varint(w, (uint64_t)field << 3 | wire);
}

static void put_len(writer *w, unsigned field, const void *p, size_t n) {
  put_tag(w, field, WIRE_LEN);
  put_varint(w, n);
  put_bytes(w, p, n);
}

o2m_status o2m_tensor_write_pb(const o2m_tensor *t, FILE *out, const char *name, o2m_diag *diag) {
  if (!name) name = "<tensor>";
  if (!o2m_dtype_valid((int)t->dtype))
    return o2m_fail(diag, O2M_ERR_INVALID, "%s: cannot write a tensor of dtype %d", name, (int)t->dtype);
  if (t->dtype != O2M_DT_STRING && t->count && (!t->data || t->nbytes != o2m_dtype_storage_bytes(t->dtype, t->count)))
    return o2m_fail(diag, O2M_ERR_INTERNAL, "%s: the tensor's data does not match its dims", name);
  writer w = {out, 0};
  for (int k = 0; k < t->rank; k++) {
    put_tag(&w, FIELD_DIMS, WIRE_VARINT);
    put_varint(&w, (uint64_t)t->dims[k]);
  }
  put_tag(&w, FIELD_DATA_TYPE, WIRE_VARINT);
  put_varint(&w, (uint64_t)t->dtype);
  if (t->dtype == O2M_DT_STRING)
    for (int64_t i = 0; i < t->count; i++) put_len(&w, FIELD_STRING_DATA, t->strings[i].ptr, t->strings[i].len);
  if (t->name && t->name[0]) put_len(&w, FIELD_NAME, t->name, strlen(t->name));
  if (t->dtype != O2M_DT_STRING) put_len(&w, FIELD_RAW_DATA, t->data, t->count ? t->nbytes : 0);
  if (w.failed) return o2m_fail(diag, O2M_ERR_IO, "%s: writing the tensor failed", name);
  return O2M_OK;
}
