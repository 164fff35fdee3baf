/* decode_common.c - the decoding context of decode.h: the position trail,
 * error messages that name the file, the trail and the byte offset, and
 * the field readers that check wire types before trusting a field. */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "onnx/decode.h"
#include "util/diag.h"

o2m_status o2m_dec_push(o2m_decoder *d, o2m_where *w, const char *kind,
                        int64_t index, size_t offset) {
  w->outer = d->where;
  w->kind = kind;
  w->index = index;
  w->name = NULL;
  w->op = NULL;
  d->where = w;
  d->depth++;
  if (d->depth > O2M_MAX_NESTING)
    return o2m_dec_fail(d, O2M_ERR_UNSUPPORTED, offset,
                        "messages nested more than %d deep", O2M_MAX_NESTING);
  return O2M_OK;
}

void o2m_dec_pop(o2m_decoder *d, const o2m_where *w) {
  d->where = w->outer;
  d->depth--;
}

/* Appends one position ("node 3 'conv1' (Conv)") to buf at *len. */
static void describe(char *buf, size_t cap, size_t *len, const o2m_where *w) {
  if (*len >= cap) return;
  int n = snprintf(buf + *len, cap - *len, "%s%s", *len ? " " : "", w->kind);
  if (n > 0) *len += (size_t)n;
  if (w->index >= 0 && *len < cap) {
    n = snprintf(buf + *len, cap - *len, " %lld", (long long)w->index);
    if (n > 0) *len += (size_t)n;
  }
  if (w->name && *w->name && (*w->name)[0] && *len < cap) {
    n = snprintf(buf + *len, cap - *len, " '%s'", *w->name);
    if (n > 0) *len += (size_t)n;
  }
  if (w->op && *w->op && (*w->op)[0] && *len < cap) {
    n = snprintf(buf + *len, cap - *len, " (%s)", *w->op);
    if (n > 0) *len += (size_t)n;
  }
}

/* "<trail>: <reason> at byte N" for the decoder's current position. */
static void located(const o2m_decoder *d, size_t offset, char *out, size_t size, const char *fmt,
                    va_list ap) {
  const o2m_where *chain[O2M_MAX_NESTING + 1];
  int n = 0;
  for (const o2m_where *w = d->where; w && n <= O2M_MAX_NESTING; w = w->outer)
    chain[n++] = w;
  char trail[1024];
  size_t len = 0;
  trail[0] = 0;
  while (n > 0) describe(trail, sizeof(trail), &len, chain[--n]);
  char reason[768];
  vsnprintf(reason, sizeof(reason), fmt, ap);
  char at[40] = "";
  if (offset != O2M_NO_OFFSET) snprintf(at, sizeof(at), " at byte %zu", offset);
  snprintf(out, size, "%s%s%s%s", trail, trail[0] ? ": " : "", reason, at);
}

o2m_status o2m_dec_fail(o2m_decoder *d, o2m_status status, size_t offset,
                        const char *fmt, ...) {
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  located(d, offset, text, sizeof(text), fmt, ap);
  va_end(ap);
  return o2m_fail(d->diag, status, "%s: %s", d->file, text);
}

void o2m_dec_warn(o2m_decoder *d, size_t offset, const char *fmt, ...) {
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  located(d, offset, text, sizeof(text), fmt, ap);
  va_end(ap);
  o2m_warn(d->diag, "%s: %s", d->file, text);
}

o2m_status o2m_dec_wire_fail(o2m_decoder *d, const o2m_wire_error *err) {
  return o2m_dec_fail(d, O2M_ERR_PARSE, err->offset, "%s", err->reason);
}

o2m_status o2m_dec_nomem(o2m_decoder *d) {
  return o2m_dec_fail(d, O2M_ERR_NOMEM, O2M_NO_OFFSET, "out of memory");
}

size_t o2m_dec_offset(const o2m_decoder *d, o2m_bytes msg) {
  return (size_t)(msg.ptr - d->base);
}

o2m_status o2m_dec_array(o2m_decoder *d, int n, size_t size, void *out) {
  void *p = NULL;
  if (n > 0 && !(p = o2m_arena_array(d->arena, (size_t)n, size)))
    return o2m_dec_nomem(d);
  memcpy(out, &p, sizeof(p));
  return O2M_OK;
}

o2m_status o2m_dec_done(const o2m_decoder *d, o2m_status st, int r) {
  return st ? st : r < 0 ? d->diag->status : O2M_OK;
}

/* Reading a header makes the kernel map up to a megabyte of the file
 * around it, so without this every weight byte would end up resident
 * though never read. A pass walks the file forward: once it is 2 MiB past
 * the last release point, the pages behind it (but the last 64 KiB) are
 * dropped from the process. Views into them stay valid: the bytes come
 * back from the page cache when read. */
static void release_behind(o2m_decoder *d, const uint8_t *pos) {
  enum { STEP = 2 << 20, KEEP = 64 << 10 };
  if (!d->release) return;
  if (!d->release_mark || pos < d->release_mark) { /* a pass begins */
    d->release_mark = pos;
    return;
  }
  if ((size_t)(pos - d->release_mark) < STEP) return;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t from = (uintptr_t)d->release_mark & ~(page - 1);
  uintptr_t to = (uintptr_t)(pos - KEEP) & ~(page - 1);
  if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
  d->release_mark = pos - KEEP;
}

int o2m_dec_next(o2m_decoder *d, o2m_wire *w, o2m_wire_field *f) {
  o2m_wire_error err;
  int r = o2m_wire_next(w, f, &err);
  if (r > 0) release_behind(d, d->base + f->offset);
  if (r < 0) o2m_dec_wire_fail(d, &err);
  return r;
}

o2m_status o2m_dec_expect(o2m_decoder *d, const o2m_wire_field *f, int type,
                          const char *field) {
  if (f->type == type) return O2M_OK;
  return o2m_dec_fail(d, O2M_ERR_PARSE, f->offset,
                      "field %u (%s) has wire type %s, expected %s", f->number,
                      field, o2m_wire_type_name(f->type),
                      o2m_wire_type_name(type));
}

o2m_status o2m_dec_string(o2m_decoder *d, const o2m_wire_field *f,
                          const char *field, const char **out) {
  o2m_status st = o2m_dec_expect(d, f, O2M_WIRE_LEN, field);
  if (st) return st;
  if (memchr(f->data, 0, f->len))
    return o2m_dec_fail(d, O2M_ERR_INVALID, f->offset,
                        "%s contains a NUL byte", field);
  char *s = o2m_arena_strndup(d->arena, (const char *)f->data, f->len);
  if (!s) return o2m_dec_nomem(d);
  *out = s;
  return O2M_OK;
}

o2m_status o2m_dec_domain(o2m_decoder *d, const o2m_wire_field *f,
                          const char *field, const char **out) {
  o2m_status st = o2m_dec_string(d, f, field, out);
  if (!st && strcmp(*out, "ai.onnx") == 0) *out = "";
  return st;
}

o2m_status o2m_dec_int64(o2m_decoder *d, const o2m_wire_field *f,
                         const char *field, int64_t *out) {
  o2m_status st = o2m_dec_expect(d, f, O2M_WIRE_VARINT, field);
  if (!st) *out = (int64_t)f->value;
  return st;
}

o2m_status o2m_dec_message(o2m_decoder *d, const o2m_wire_field *f,
                           const char *field, o2m_bytes *out) {
  o2m_status st = o2m_dec_expect(d, f, O2M_WIRE_LEN, field);
  if (st) return st;
  if (out->ptr)
    return o2m_dec_fail(d, O2M_ERR_UNSUPPORTED, f->offset,
                        "%s appears more than once", field);
  out->ptr = f->data;
  out->len = f->len;
  return O2M_OK;
}

static o2m_status add_count(o2m_decoder *d, const o2m_wire_field *f,
                            const char *field, size_t more, int *n) {
  if (more > (size_t)(INT_MAX - *n))
    return o2m_dec_fail(d, O2M_ERR_UNSUPPORTED, f->offset,
                        "more than %d entries in %s", INT_MAX, field);
  *n += (int)more;
  return O2M_OK;
}

o2m_status o2m_dec_count_len(o2m_decoder *d, const o2m_wire_field *f,
                             const char *field, int *n) {
  o2m_status st = o2m_dec_expect(d, f, O2M_WIRE_LEN, field);
  return st ? st : add_count(d, f, field, 1, n);
}

o2m_status o2m_dec_count_scalars(o2m_decoder *d, const o2m_wire_field *f,
                                 const char *field, o2m_wire_scalar kind,
                                 int *n) {
  o2m_wire_error err;
  size_t more;
  if (o2m_wire_count_scalars(d->base, f, kind, &more, &err) < 0)
    return o2m_dec_fail(d, O2M_ERR_PARSE, err.offset, "field %u (%s): %s",
                        f->number, field, err.reason);
  return add_count(d, f, field, more, n);
}

int o2m_dec_next_scalar(o2m_decoder *d, o2m_wire_scalars *it,
                        uint64_t *value) {
  o2m_wire_error err;
  int r = o2m_wire_scalars_next(it, value, &err);
  if (r < 0) o2m_dec_wire_fail(d, &err);
  return r;
}

void o2m_span_add(o2m_span *span, const o2m_decoder *d,
                  const o2m_wire_field *f, const o2m_wire *w) {
  if (!span->from) span->from = d->base + f->offset;
  span->to = w->pos;
}

o2m_wire o2m_span_wire(const o2m_decoder *d, const o2m_span *span) {
  if (!span->from) return o2m_wire_sub(d->base, d->base, 0);
  return o2m_wire_sub(d->base, span->from, (size_t)(span->to - span->from));
}
