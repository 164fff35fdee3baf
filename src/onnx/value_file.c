/* value_file.c - reading SequenceProto and OptionalProto files (see
 * value_file.h). The file is copied into the arena whole, so that the
 * decoded tensors may view into it after the mapping is gone. */
#include <string.h>

#include "onnx/reader.h"
#include "onnx/tensor_file.h"
#include "onnx/value_file.h"
#include "onnx/wire.h"
#include "util/diag.h"

/* elem_type of SequenceProto / OptionalProto */
/* (onnx.proto numbers these as below, unlike TypeProto's field order) */
enum { ELEM_UNDEFINED = 0, ELEM_TENSOR = 1, ELEM_SPARSE = 2, ELEM_SEQUENCE = 3, ELEM_MAP = 4, ELEM_OPTIONAL = 5 };

typedef struct reader {
  o2m_arena *arena;
  const char *path;
  o2m_diag *diag;
  const uint8_t *base;
} reader;

static o2m_status bad_wire(reader *r, const o2m_wire_error *e) {
  return o2m_fail(r->diag, O2M_ERR_PARSE, "%s: malformed protobuf at byte %zu: %s", r->path, e->offset, e->reason);
}

static o2m_status push_tensor(reader *r, o2m_io_value *v, int *cap, const o2m_wire_field *f) {
  if (v->count == *cap) {
    int n = *cap ? 2 * *cap : 8;
    v->tensors = o2m_arena_grow(r->arena, v->tensors, (size_t)v->count, (size_t)n, sizeof(o2m_tensor *));
    if (!v->tensors) return o2m_fail(r->diag, O2M_ERR_NOMEM, "out of memory");
    *cap = n;
  }
  return o2m_decode_tensor(r->arena, f->data, f->len, r->path, &v->tensors[v->count++], r->diag);
}

static o2m_status unsupported_elem(reader *r, const char *what) {
  return o2m_fail(r->diag, O2M_ERR_UNSUPPORTED, "%s: %s values are not supported (only tensors, sequences of "
                  "tensors and optionals of those)", r->path, what);
}

/* A SequenceProto of tensors into v (kind SEQUENCE). */
static o2m_status read_sequence(reader *r, const uint8_t *data, size_t len, o2m_io_value *v) {
  o2m_wire w = o2m_wire_sub(r->base, data, len);
  o2m_wire_field f;
  o2m_wire_error e;
  int cap = 0, got;
  v->kind = O2M_TYPE_SEQUENCE;
  v->present = 1;
  while ((got = o2m_wire_next(&w, &f, &e)) > 0) {
    if (f.number == 2 && f.type == O2M_WIRE_VARINT && f.value != ELEM_TENSOR && f.value != ELEM_UNDEFINED)
      return unsupported_elem(r, f.value == ELEM_SEQUENCE ? "nested sequence" : f.value == ELEM_MAP ? "map" : f.value == ELEM_OPTIONAL ? "sequence of optional" : "sparse tensor");
    if (f.number == 3 && f.type == O2M_WIRE_LEN) {
      o2m_status s = push_tensor(r, v, &cap, &f);
      if (s) return s;
    } else if (f.number >= 4 && f.number <= 7) {
      return unsupported_elem(r, "sequence element of a non-tensor");
    }
  }
  return got < 0 ? bad_wire(r, &e) : O2M_OK;
}

static o2m_status read_optional(reader *r, const uint8_t *data, size_t len, o2m_io_value *v) {
  o2m_wire w = o2m_wire_sub(r->base, data, len);
  o2m_wire_field f;
  o2m_wire_error e;
  int cap = 0, got;
  v->kind = O2M_TYPE_OPTIONAL;
  v->elem_kind = O2M_TYPE_UNKNOWN;
  v->present = 0;
  while ((got = o2m_wire_next(&w, &f, &e)) > 0) {
    if (f.number == 2 && f.type == O2M_WIRE_VARINT) {
      if (f.value == ELEM_TENSOR) v->elem_kind = O2M_TYPE_TENSOR;
      else if (f.value == ELEM_SEQUENCE) v->elem_kind = O2M_TYPE_SEQUENCE;
      else if (f.value != ELEM_UNDEFINED) return unsupported_elem(r, f.value == ELEM_MAP ? "optional map" : "optional of this kind");
    } else if (f.number == 3 && f.type == O2M_WIRE_LEN) {
      if (v->present) return o2m_fail(r->diag, O2M_ERR_INVALID, "%s: the optional holds two values", r->path);
      v->present = 1;
      v->elem_kind = O2M_TYPE_TENSOR;
      o2m_status s = push_tensor(r, v, &cap, &f);
      if (s) return s;
    } else if (f.number == 5 && f.type == O2M_WIRE_LEN) {
      if (v->present) return o2m_fail(r->diag, O2M_ERR_INVALID, "%s: the optional holds two values", r->path);
      o2m_io_value seq = {0};
      o2m_status s = read_sequence(r, f.data, f.len, &seq);
      if (s) return s;
      v->present = 1;
      v->elem_kind = O2M_TYPE_SEQUENCE;
      v->count = seq.count;
      v->tensors = seq.tensors;
    } else if (f.number == 4 || f.number == 6 || f.number == 7) {
      return unsupported_elem(r, "optional of a non-tensor");
    }
  }
  return got < 0 ? bad_wire(r, &e) : O2M_OK;
}

o2m_status o2m_read_value_file(o2m_arena *arena, const char *path, o2m_type_kind kind, o2m_io_value *out,
                               o2m_diag *diag) {
  memset(out, 0, sizeof(*out));
  if (kind == O2M_TYPE_TENSOR || kind == O2M_TYPE_UNKNOWN) {
    out->kind = O2M_TYPE_TENSOR;
    out->present = out->count = 1;
    out->tensors = o2m_arena_array(arena, 1, sizeof(o2m_tensor *));
    if (!out->tensors) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
    return o2m_read_tensor_file(arena, path, &out->tensors[0], diag);
  }
  if (kind != O2M_TYPE_SEQUENCE && kind != O2M_TYPE_OPTIONAL)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: only tensor, sequence and optional values can be read", path);
  o2m_mapping map;
  o2m_status s = o2m_map_file(path, &map, diag);
  if (s) return s;
  uint8_t *copy = map.size ? o2m_arena_alloc(arena, map.size) : NULL;
  if (map.size && !copy) s = o2m_fail(diag, O2M_ERR_NOMEM, "%s: out of memory", path);
  if (copy) memcpy(copy, map.addr, map.size);
  size_t size = map.size;
  o2m_unmap_file(&map);
  if (s) return s;
  reader r = {arena, path, diag, copy};
  return kind == O2M_TYPE_SEQUENCE ? read_sequence(&r, copy, size, out) : read_optional(&r, copy, size, out);
}
