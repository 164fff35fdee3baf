/* type_text.c - see type_text.h. */
#include "ir/type_text.h"

#include <stdio.h>

typedef struct text_buf {
  char *p;
  size_t cap, len;
} text_buf;

static void advance(text_buf *b, int n) {
  if (n > 0) b->len += (size_t)n;
  if (b->len >= b->cap) b->len = b->cap - 1;
}

/* Appends `fmt` with one string argument (NULL prints as "?"). */
static void put(text_buf *b, const char *fmt, const char *s) {
  if (b->len < b->cap) advance(b, snprintf(b->p + b->len, b->cap - b->len, fmt, s ? s : "?"));
}

static void put_int(text_buf *b, long long v) {
  if (b->len < b->cap) advance(b, snprintf(b->p + b->len, b->cap - b->len, "%lld", v));
}

static void write_type(text_buf *b, const o2m_type *t) {
  switch (t->kind) {
  case O2M_TYPE_UNKNOWN:
    put(b, "%s", "unknown");
    return;
  case O2M_TYPE_SEQUENCE:
  case O2M_TYPE_OPTIONAL:
    put(b, "%s<", t->kind == O2M_TYPE_SEQUENCE ? "seq" : "optional");
    if (t->inner) write_type(b, t->inner);
    else put(b, "%s", "unknown");
    put(b, "%s", ">");
    return;
  case O2M_TYPE_MAP:
    put(b, "map<%s,", o2m_dtype_name(t->elem));
    if (t->inner) write_type(b, t->inner);
    put(b, "%s", ">");
    return;
  case O2M_TYPE_SPARSE_TENSOR:
    put(b, "%s", "sparse ");
    /* fall through */
  case O2M_TYPE_TENSOR:
    put(b, "%s", o2m_dtype_name(t->elem));
    if (t->rank < 0) {
      put(b, "%s", "[*]");
      return;
    }
    put(b, "%s", "[");
    for (int k = 0; k < t->rank; k++) {
      if (k) put(b, "%s", ",");
      if (t->dims[k].size >= 0) put_int(b, t->dims[k].size);
      else put(b, "%s", o2m_symbol_is_fresh(t->dims[k].sym) ? "?" : t->dims[k].sym);
    }
    put(b, "%s", "]");
    return;
  }
}

char *o2m_type_text(const o2m_type *t, char *buf, size_t cap) {
  if (!cap) return buf;
  buf[0] = 0;
  text_buf b = {buf, cap, 0};
  write_type(&b, t);
  return buf;
}
