/* type_text.c - see type_text.h. */
#include "ir/type_text.h"

#include <stdio.h>

typedef struct text_buf {
  char *p;
  size_t cap, len;
} text_buf;

static void put(text_buf *b, const char *fmt, const char *s, long long v) {
  if (b->len >= b->cap) return;
  int n = s ? snprintf(b->p + b->len, b->cap - b->len, fmt, s)
            : snprintf(b->p + b->len, b->cap - b->len, fmt, v);
  if (n > 0) b->len += (size_t)n;
  if (b->len >= b->cap) b->len = b->cap - 1;
}

static void write_type(text_buf *b, const o2m_type *t) {
  switch (t->kind) {
  case O2M_TYPE_UNKNOWN:
    put(b, "%s", "unknown", 0);
    return;
  case O2M_TYPE_SEQUENCE:
  case O2M_TYPE_OPTIONAL:
    put(b, "%s<", t->kind == O2M_TYPE_SEQUENCE ? "seq" : "optional", 0);
    if (t->inner) write_type(b, t->inner);
    else put(b, "%s", "unknown", 0);
    put(b, "%s", ">", 0);
    return;
  case O2M_TYPE_MAP:
    put(b, "map<%s,", o2m_dtype_name(t->elem), 0);
    if (t->inner) write_type(b, t->inner);
    put(b, "%s", ">", 0);
    return;
  case O2M_TYPE_SPARSE_TENSOR:
    put(b, "%s", "sparse ", 0);
    /* fall through */
  case O2M_TYPE_TENSOR:
    put(b, "%s", o2m_dtype_name(t->elem), 0);
    if (t->rank < 0) {
      put(b, "%s", "[*]", 0);
      return;
    }
    put(b, "%s", "[", 0);
    for (int k = 0; k < t->rank; k++) {
      if (k) put(b, "%s", ",", 0);
      if (t->dims[k].size >= 0) put(b, "%lld", NULL, t->dims[k].size);
      else put(b, "%s", o2m_symbol_is_fresh(t->dims[k].sym) ? "?" : t->dims[k].sym, 0);
    }
    put(b, "%s", "]", 0);
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
