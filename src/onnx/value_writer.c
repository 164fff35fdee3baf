/* value_writer.c - writing run's values as ONNX protos (value_file.h):
 * a tensor as a TensorProto, a sequence as a SequenceProto (name 1,
 * elem_type 2 = TENSOR, tensor_values 3), an optional as an
 * OptionalProto (name 1, elem_type 2, tensor_value 3 or sequence_value
 * 5; an empty optional has elem_type UNDEFINED). Each nested message is
 * encoded into memory first for its length prefix. */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx/tensor_file.h"
#include "onnx/tensor_writer.h"
#include "onnx/value_file.h"
#include "util/diag.h"

enum { ELEM_UNDEFINED = 0, ELEM_TENSOR = 1, ELEM_SEQUENCE = 3 };

typedef struct buffer {
  char *p;
  size_t len;
} buffer;

static void put_varint(FILE *f, uint64_t v) {
  do {
    fputc((int)((v & 0x7F) | (v > 0x7F ? 0x80 : 0)), f);
    v >>= 7;
  } while (v);
}

static void put_len(FILE *f, unsigned field, const void *p, size_t n) {
  put_varint(f, (uint64_t)field << 3 | 2);
  put_varint(f, n);
  if (n) fwrite(p, 1, n, f);
}

static void put_int(FILE *f, unsigned field, uint64_t v) {
  put_varint(f, (uint64_t)field << 3);
  put_varint(f, v);
}

/* A TensorProto in memory. */
static o2m_status tensor_bytes(const o2m_tensor *t, const char *name, buffer *b, o2m_diag *diag) {
  FILE *m = open_memstream(&b->p, &b->len);
  if (!m) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  o2m_status s = o2m_tensor_write_pb(t, m, name, diag);
  if (fclose(m) != 0 && !s) s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  return s;
}

/* A SequenceProto of v's tensors to f. */
static o2m_status write_sequence(const o2m_io_value *v, const char *name, FILE *f, o2m_diag *diag) {
  if (name && *name) put_len(f, 1, name, strlen(name));
  put_int(f, 2, ELEM_TENSOR);
  for (int i = 0; i < v->count; i++) {
    buffer b = {NULL, 0};
    o2m_status s = tensor_bytes(v->tensors[i], name, &b, diag);
    if (!s) put_len(f, 3, b.p, b.len);
    free(b.p);
    if (s) return s;
  }
  return O2M_OK;
}

static o2m_status write_optional(const o2m_io_value *v, const char *name, FILE *f, o2m_diag *diag) {
  if (name && *name) put_len(f, 1, name, strlen(name));
  int seq = v->elem_kind == O2M_TYPE_SEQUENCE;
  if (!v->present) {
    put_int(f, 2, ELEM_UNDEFINED);
    return O2M_OK;
  }
  put_int(f, 2, seq ? ELEM_SEQUENCE : ELEM_TENSOR);
  buffer b = {NULL, 0};
  o2m_status s;
  if (seq) {
    FILE *m = open_memstream(&b.p, &b.len);
    if (!m) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
    s = write_sequence(v, name, m, diag);
    if (fclose(m) != 0 && !s) s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  } else {
    s = v->count == 1 ? tensor_bytes(v->tensors[0], name, &b, diag)
                      : o2m_fail(diag, O2M_ERR_INTERNAL, "%s: an optional tensor of %d tensors", name, v->count);
  }
  if (!s) put_len(f, seq ? 5 : 3, b.p, b.len);
  free(b.p);
  return s;
}

o2m_status o2m_write_value_file(const o2m_io_value *v, const char *name, const char *path, o2m_diag *diag) {
  if (v->kind == O2M_TYPE_TENSOR) return o2m_write_tensor_file(v->tensors[0], path, O2M_FORMAT_PB, diag);
  if (v->kind != O2M_TYPE_SEQUENCE && v->kind != O2M_TYPE_OPTIONAL)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: only tensors, sequences and optionals can be written", path);
  FILE *f = fopen(path, "wb");
  if (!f) return o2m_fail(diag, O2M_ERR_IO, "%s: cannot create the file", path);
  o2m_status s = v->kind == O2M_TYPE_SEQUENCE ? write_sequence(v, name, f, diag) : write_optional(v, name, f, diag);
  if (fclose(f) != 0 && !s) s = o2m_fail(diag, O2M_ERR_IO, "%s: writing failed", path);
  if (s) unlink(path);
  return s;
}
