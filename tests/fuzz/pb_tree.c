/* pb_tree.c - parsing, writing, copying and editing a protobuf message as
 * a tree of fields (pb_tree.h). */
#include "pb_tree.h"

#include <stdlib.h>
#include <string.h>

enum { PB_MAX_DEPTH = 48 };

static void *grow(void *p, size_t size) {
  void *q = realloc(p, size);
  if (!q) abort(); /* a fuzzer's helper: out of memory ends the run */
  return q;
}

static int read_varint(const uint8_t *data, size_t size, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= size) return 0;
    uint8_t b = data[(*pos)++];
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return 0;
}

static size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static uint8_t *write_varint(uint8_t *out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *out++ = (uint8_t)v;
  return out;
}

static pb_field *append(pb_msg *m) {
  if (m->count == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 8;
    m->fields = grow(m->fields, m->cap * sizeof *m->fields);
  }
  pb_field *f = &m->fields[m->count++];
  memset(f, 0, sizeof *f);
  return f;
}

static pb_msg *parse_depth(const uint8_t *data, size_t size, int kind, pb_schema_fn schema, int depth) {
  if (depth > PB_MAX_DEPTH) return NULL;
  pb_msg *m = calloc(1, sizeof *m);
  if (!m) abort();
  m->kind = kind;
  size_t pos = 0;
  while (pos < size) {
    uint64_t key, len;
    if (!read_varint(data, size, &pos, &key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) goto bad;
    pb_field *f = append(m);
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint8_t)(key & 7);
    switch (f->wire) {
    case PB_VARINT:
      if (!read_varint(data, size, &pos, &f->value)) goto bad;
      break;
    case PB_FIXED64:
    case PB_FIXED32: {
      size_t n = f->wire == PB_FIXED64 ? 8 : 4;
      if (size - pos < n) goto bad;
      for (size_t i = 0; i < n; i++) f->value |= (uint64_t)data[pos + i] << (8 * i);
      pos += n;
      break;
    }
    case PB_BYTES: {
      if (!read_varint(data, size, &pos, &len) || len > size - pos) goto bad;
      int child = schema(kind, f->number);
      if (child >= 0) f->msg = parse_depth(data + pos, (size_t)len, child, schema, depth + 1);
      if (!f->msg) pb_set_bytes(f, data + pos, (size_t)len);
      pos += (size_t)len;
      break;
    }
    default:
      goto bad;
    }
  }
  return m;
bad:
  pb_free(m);
  return NULL;
}

pb_msg *pb_parse(const uint8_t *data, size_t size, int kind, pb_schema_fn schema) {
  return parse_depth(data, size, kind, schema, 0);
}

static size_t field_payload(const pb_field *f) {
  switch (f->wire) {
  case PB_VARINT: return varint_size(f->value);
  case PB_FIXED64: return 8;
  case PB_FIXED32: return 4;
  default: {
    size_t len = f->msg ? pb_size(f->msg) : f->len;
    return varint_size(len) + len;
  }
  }
}

size_t pb_size(const pb_msg *m) {
  size_t n = 0;
  for (size_t i = 0; i < m->count; i++)
    n += varint_size((uint64_t)m->fields[i].number << 3 | m->fields[i].wire) + field_payload(&m->fields[i]);
  return n;
}

static uint8_t *write_msg(const pb_msg *m, uint8_t *out) {
  for (size_t i = 0; i < m->count; i++) {
    const pb_field *f = &m->fields[i];
    out = write_varint(out, (uint64_t)f->number << 3 | f->wire);
    switch (f->wire) {
    case PB_VARINT: out = write_varint(out, f->value); break;
    case PB_FIXED64:
    case PB_FIXED32:
      for (int b = 0; b < (f->wire == PB_FIXED64 ? 8 : 4); b++) *out++ = (uint8_t)(f->value >> (8 * b));
      break;
    default:
      if (f->msg) {
        out = write_varint(out, pb_size(f->msg));
        out = write_msg(f->msg, out);
      } else {
        out = write_varint(out, f->len);
        if (f->len) memcpy(out, f->bytes, f->len);
        out += f->len;
      }
    }
  }
  return out;
}

void pb_write(const pb_msg *m, uint8_t *out) { write_msg(m, out); }

static void copy_field(pb_field *dst, const pb_field *src) {
  *dst = *src;
  dst->bytes = NULL;
  dst->msg = NULL;
  if (src->msg) dst->msg = pb_clone(src->msg);
  else if (src->wire == PB_BYTES) pb_set_bytes(dst, src->bytes, src->len);
}

pb_msg *pb_clone(const pb_msg *m) {
  pb_msg *c = calloc(1, sizeof *c);
  if (!c) abort();
  c->kind = m->kind;
  for (size_t i = 0; i < m->count; i++) copy_field(append(c), &m->fields[i]);
  return c;
}

static void free_field(pb_field *f) {
  free(f->bytes);
  if (f->msg) pb_free(f->msg);
}

void pb_free(pb_msg *m) {
  if (!m) return;
  for (size_t i = 0; i < m->count; i++) free_field(&m->fields[i]);
  free(m->fields);
  free(m);
}

void pb_insert(pb_msg *m, size_t at, const pb_field *field) {
  pb_field copy;
  copy_field(&copy, field); /* before append: `field` may live in m */
  append(m);
  if (at > m->count - 1) at = m->count - 1;
  memmove(&m->fields[at + 1], &m->fields[at], (m->count - 1 - at) * sizeof *m->fields);
  m->fields[at] = copy;
}

void pb_remove(pb_msg *m, size_t at) {
  if (at >= m->count) return;
  free_field(&m->fields[at]);
  memmove(&m->fields[at], &m->fields[at + 1], (m->count - at - 1) * sizeof *m->fields);
  m->count--;
}

void pb_set_bytes(pb_field *f, const void *data, size_t len) {
  uint8_t *copy = malloc(len ? len : 1);
  if (!copy) abort();
  if (len) memcpy(copy, data, len);
  free(f->bytes);
  if (f->msg) pb_free(f->msg);
  f->msg = NULL;
  f->bytes = copy;
  f->len = len;
  f->wire = PB_BYTES;
}

size_t pb_varints_decode(const uint8_t *data, size_t len, uint64_t *out, size_t max) {
  size_t pos = 0, n = 0;
  while (pos < len && n < max && read_varint(data, len, &pos, &out[n])) n++;
  return n;
}

uint8_t *pb_varints_encode(const uint64_t *values, size_t n, size_t *len) {
  uint8_t *buf = malloc(n * 10 + 1), *p = buf;
  if (!buf) abort();
  for (size_t i = 0; i < n; i++) p = write_varint(p, values[i]);
  *len = (size_t)(p - buf);
  return buf;
}
