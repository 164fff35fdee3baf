/* wire.c - protobuf wire-format primitives behind wire.h. Every read is
 * bounds-checked against the end of the enclosing message; nothing here
 * allocates or trusts a length. */
#include "onnx/wire.h"

enum { MAX_GROUP_NESTING = 64, MAX_FIELD_NUMBER = 0x1FFFFFFF };

static int fail(o2m_wire_error *err, const char *reason, const uint8_t *base,
                const uint8_t *at) {
  err->reason = reason;
  err->offset = (size_t)(at - base);
  return -1;
}

o2m_wire o2m_wire_sub(const uint8_t *base, const uint8_t *data, size_t len) {
  o2m_wire w = {base, data, data + len};
  return w;
}

const char *o2m_wire_read_varint(const uint8_t **pos, const uint8_t *end,
                                 uint64_t *value) {
  const uint8_t *p = *pos;
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (p == end) return "truncated varint";
    uint8_t b = *p++;
    /* the tenth byte may only carry the 64th bit */
    if (shift == 63 && b > 1)
      return (b & 0x80) ? "varint longer than 10 bytes"
                        : "varint value overflows 64 bits";
    v |= (uint64_t)(b & 0x7F) << shift;
    if (b < 0x80) break;
  }
  *pos = p;
  *value = v;
  return NULL;
}

static uint64_t load_le(const uint8_t *p, int nbytes) {
  uint64_t v = 0;
  for (int i = nbytes - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* Reads one field without treating groups specially: a start-group or
 * end-group tag comes back as a field without payload. */
static int read_field(o2m_wire *w, o2m_wire_field *f, o2m_wire_error *err) {
  const uint8_t *start = w->pos;
  uint64_t tag;
  const char *why = o2m_wire_read_varint(&w->pos, w->end, &tag);
  if (why) return fail(err, why, w->base, start);
  if ((tag >> 3) == 0 || (tag >> 3) > MAX_FIELD_NUMBER)
    return fail(err, "invalid field number", w->base, start);
  f->number = (uint32_t)(tag >> 3);
  f->type = (int)(tag & 7);
  f->offset = (size_t)(start - w->base);
  f->value = 0;
  f->data = NULL;
  f->len = 0;
  const uint8_t *at = w->pos;
  size_t left = (size_t)(w->end - w->pos);
  switch (f->type) {
  case O2M_WIRE_VARINT:
    why = o2m_wire_read_varint(&w->pos, w->end, &f->value);
    return why ? fail(err, why, w->base, at) : 1;
  case O2M_WIRE_I64:
    if (left < 8) return fail(err, "truncated fixed64", w->base, at);
    f->value = load_le(w->pos, 8);
    w->pos += 8;
    return 1;
  case O2M_WIRE_I32:
    if (left < 4) return fail(err, "truncated fixed32", w->base, at);
    f->value = load_le(w->pos, 4);
    w->pos += 4;
    return 1;
  case O2M_WIRE_LEN: {
    uint64_t len;
    why = o2m_wire_read_varint(&w->pos, w->end, &len);
    if (why) return fail(err, why, w->base, at);
    if (len > (uint64_t)(w->end - w->pos))
      return fail(err, "length runs past the end of the message", w->base,
                  at);
    f->data = w->pos;
    f->len = (size_t)len;
    w->pos += len;
    return 1;
  }
  case O2M_WIRE_SGROUP:
  case O2M_WIRE_EGROUP:
    return 1;
  default:
    return fail(err, "invalid wire type", w->base, start);
  }
}

/* Skips the body of a group whose start tag was just read, up to and
 * including its matching end tag. */
static int skip_group(o2m_wire *w, uint32_t number, o2m_wire_error *err) {
  uint32_t open[MAX_GROUP_NESTING];
  int depth = 0;
  open[depth++] = number;
  while (depth > 0) {
    if (w->pos >= w->end)
      return fail(err, "group without an end-group tag", w->base, w->pos);
    o2m_wire_field f;
    const uint8_t *at = w->pos;
    if (read_field(w, &f, err) < 0) return -1;
    if (f.type == O2M_WIRE_SGROUP) {
      if (depth == MAX_GROUP_NESTING)
        return fail(err, "groups nested too deeply", w->base, at);
      open[depth++] = f.number;
    } else if (f.type == O2M_WIRE_EGROUP) {
      if (open[depth - 1] != f.number)
        return fail(err, "end-group tag does not match its start-group",
                    w->base, at);
      depth--;
    }
  }
  return 0;
}

int o2m_wire_next(o2m_wire *w, o2m_wire_field *f, o2m_wire_error *err) {
  if (w->pos >= w->end) return 0;
  const uint8_t *at = w->pos;
  if (read_field(w, f, err) < 0) return -1;
  if (f->type == O2M_WIRE_EGROUP)
    return fail(err, "end-group tag without a start-group", w->base, at);
  if (f->type == O2M_WIRE_SGROUP && skip_group(w, f->number, err) < 0)
    return -1;
  return 1;
}

const char *o2m_wire_type_name(int type) {
  static const char *const names[] = {
      [O2M_WIRE_VARINT] = "varint",          [O2M_WIRE_I64] = "fixed64",
      [O2M_WIRE_LEN] = "length-delimited",   [O2M_WIRE_SGROUP] = "start-group",
      [O2M_WIRE_EGROUP] = "end-group",       [O2M_WIRE_I32] = "fixed32",
  };
  if (type < 0 || type > O2M_WIRE_I32) return "invalid";
  return names[type];
}

/* Per scalar kind: its unpacked wire type, its fixed width (0 = varint)
 * and the complaint when a field has neither suitable wire type. */
static const struct {
  int wire_type;
  size_t width;
  const char *wrong_type;
} scalar_kinds[] = {
    [O2M_SCALAR_VARINT] = {O2M_WIRE_VARINT, 0,
                           "wire type is neither varint nor packed"},
    [O2M_SCALAR_FIXED32] = {O2M_WIRE_I32, 4,
                            "wire type is neither fixed32 nor packed"},
    [O2M_SCALAR_FIXED64] = {O2M_WIRE_I64, 8,
                            "wire type is neither fixed64 nor packed"},
};

int o2m_wire_count_scalars(const uint8_t *base, const o2m_wire_field *f,
                           o2m_wire_scalar kind, size_t *count,
                           o2m_wire_error *err) {
  const uint8_t *at = base + f->offset;
  if (f->type == scalar_kinds[kind].wire_type) {
    *count = 1;
    return 0;
  }
  if (f->type != O2M_WIRE_LEN)
    return fail(err, scalar_kinds[kind].wrong_type, base, at);
  size_t width = scalar_kinds[kind].width;
  if (width) {
    if (f->len % width)
      return fail(err,
                  width == 4 ? "packed fixed32 run is not a multiple of 4 bytes"
                             : "packed fixed64 run is not a multiple of 8 bytes",
                  base, at);
    *count = f->len / width;
    return 0;
  }
  /* a varint ends at each byte below 0x80 */
  size_t n = 0;
  for (size_t i = 0; i < f->len; i++) n += f->data[i] < 0x80;
  if (f->len && f->data[f->len - 1] >= 0x80)
    return fail(err, "truncated varint", base, f->data + f->len - 1);
  *count = n;
  return 0;
}

void o2m_wire_scalars_begin(o2m_wire_scalars *it, const uint8_t *base,
                            const o2m_wire_field *f, o2m_wire_scalar kind) {
  it->kind = kind;
  it->base = base;
  if (f->type == O2M_WIRE_LEN) {
    it->pos = f->data;
    it->end = f->data + f->len;
    it->single_left = 0;
  } else {
    it->pos = it->end = NULL;
    it->single = f->value;
    it->single_left = 1;
  }
}

int o2m_wire_scalars_next(o2m_wire_scalars *it, uint64_t *value,
                          o2m_wire_error *err) {
  if (it->single_left) {
    it->single_left = 0;
    *value = it->single;
    return 1;
  }
  if (it->pos >= it->end) return 0;
  size_t width = scalar_kinds[it->kind].width;
  if (width) {
    /* counted beforehand: the run is a whole number of elements */
    *value = load_le(it->pos, (int)width);
    it->pos += width;
    return 1;
  }
  const uint8_t *at = it->pos;
  const char *why = o2m_wire_read_varint(&it->pos, it->end, value);
  return why ? fail(err, why, it->base, at) : 1;
}
