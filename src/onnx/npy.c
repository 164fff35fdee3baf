/* npy.c - reading and writing NumPy .npy files (see npy.h).
 *
 * The header is a Python dict literal; this file parses exactly the
 * subset NumPy writes: quoted keys, quoted strings, True/False, and tuples
 * of integers. The data after the header is C-order little-endian, which
 * is ONNX's raw layout, so numbers are never converted.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/npy.h"
#include "util/diag.h"

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* NumPy's kind letter and item size for each ONNX dtype it can hold. */
static const struct {
  char kind;
  int size;
  o2m_dtype dtype;
} npy_types[] = {
    {'f', 2, O2M_DT_FLOAT16}, {'f', 4, O2M_DT_FLOAT},     {'f', 8, O2M_DT_DOUBLE},
    {'i', 1, O2M_DT_INT8},    {'i', 2, O2M_DT_INT16},     {'i', 4, O2M_DT_INT32},
    {'i', 8, O2M_DT_INT64},   {'u', 1, O2M_DT_UINT8},     {'u', 2, O2M_DT_UINT16},
    {'u', 4, O2M_DT_UINT32},  {'u', 8, O2M_DT_UINT64},    {'b', 1, O2M_DT_BOOL},
    {'c', 8, O2M_DT_COMPLEX64}, {'c', 16, O2M_DT_COMPLEX128},
};
enum { N_TYPES = sizeof(npy_types) / sizeof(npy_types[0]) };

int o2m_npy_is_npy(const uint8_t *bytes, size_t size) {
  return size >= sizeof(magic) && memcmp(bytes, magic, sizeof(magic)) == 0;
}

/* ---- the header dictionary ------------------------------------------ */

typedef struct header {
  const char *p, *end;
  const char *file;
  o2m_diag *diag;
  char descr[32];
  int fortran, have_descr, have_order, have_shape;
  int rank;
  int64_t dims[64];
} header;

static o2m_status bad(header *h, const char *what) {
  return o2m_fail(h->diag, O2M_ERR_PARSE, "%s: malformed .npy header: %s", h->file, what);
}

static void skip_space(header *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static int eat(header *h, char c) {
  skip_space(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return 1;
  }
  return 0;
}

/* A quoted string ('...' or "...") without escapes, into out[cap]. */
static o2m_status read_string(header *h, char *out, size_t cap) {
  skip_space(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return bad(h, "expected a quoted string");
  char quote = *h->p++;
  size_t n = 0;
  while (h->p < h->end && *h->p != quote) {
    if (*h->p == '\\' || n + 1 >= cap) return bad(h, "string too long or escaped");
    out[n++] = *h->p++;
  }
  if (h->p >= h->end) return bad(h, "unterminated string");
  h->p++;
  out[n] = '\0';
  return O2M_OK;
}

static o2m_status read_shape(header *h) {
  if (!eat(h, '(')) return bad(h, "'shape' is not a tuple");
  h->rank = 0;
  while (!eat(h, ')')) {
    skip_space(h);
    int64_t v = 0;
    const char *start = h->p;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
      if (v > (INT64_MAX - 9) / 10) return bad(h, "dimension too large");
      v = v * 10 + (*h->p++ - '0');
    }
    if (h->p == start) return bad(h, "expected a dimension");
    if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2 longs */
    if (h->rank == 64) return bad(h, "more than 64 dimensions");
    h->dims[h->rank++] = v;
    if (!eat(h, ',') && !(skip_space(h), h->p < h->end && *h->p == ')')) return bad(h, "expected ',' or ')'");
  }
  return O2M_OK;
}

static o2m_status read_bool(header *h, int *out) {
  skip_space(h);
  size_t left = (size_t)(h->end - h->p);
  if (left >= 4 && memcmp(h->p, "True", 4) == 0) *out = 1, h->p += 4;
  else if (left >= 5 && memcmp(h->p, "False", 5) == 0) *out = 0, h->p += 5;
  else return bad(h, "'fortran_order' is not True or False");
  return O2M_OK;
}

static o2m_status parse_header(header *h) {
  if (!eat(h, '{')) return bad(h, "expected '{'");
  while (!eat(h, '}')) {
    char key[32];
    o2m_status s = read_string(h, key, sizeof(key));
    if (s) return s;
    if (!eat(h, ':')) return bad(h, "expected ':'");
    if (strcmp(key, "descr") == 0) {
      s = read_string(h, h->descr, sizeof(h->descr));
      h->have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      s = read_bool(h, &h->fortran);
      h->have_order = 1;
    } else if (strcmp(key, "shape") == 0) {
      s = read_shape(h);
      h->have_shape = 1;
    } else {
      return bad(h, "unknown key");
    }
    if (s) return s;
    if (!eat(h, ',') && !(skip_space(h), h->p < h->end && *h->p == '}')) return bad(h, "expected ',' or '}'");
  }
  if (!h->have_descr || !h->have_order || !h->have_shape)
    return bad(h, "'descr', 'fortran_order' or 'shape' is missing");
  return O2M_OK;
}

/* ---- dtypes ------------------------------------------------------------ */

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

/* Parses a descr such as "<f4", "|b1", "|S5", "<U3": kind, item size. */
static o2m_status parse_descr(header *h, char *kind, int *size) {
  const char *d = h->descr;
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return o2m_fail(h->diag, O2M_ERR_UNSUPPORTED, "%s: .npy dtype '%s' is not supported", h->file, d);
  char *end;
  long n = strtol(d + 2, &end, 10);
  if (!d[1] || *end || n <= 0 || n > 1 << 20)
    return o2m_fail(h->diag, O2M_ERR_UNSUPPORTED, "%s: .npy dtype '%s' is not supported", h->file, d);
  *kind = d[1] == 'a' ? 'S' : d[1];
  *size = (int)n;
  int big = order == '>' || (order == '=' && !host_is_little_endian());
  int multibyte = *kind == 'U' || (*kind != 'S' && n > 1);
  if (big && multibyte)
    return o2m_fail(h->diag, O2M_ERR_UNSUPPORTED, "%s: big-endian .npy data ('%s') is not supported", h->file, d);
  return O2M_OK;
}

/* ---- decoding ---------------------------------------------------------- */

static uint32_t load_u32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Encodes code point `c` as UTF-8 at out (4 bytes room); returns bytes. */
static size_t put_utf8(uint32_t c, uint8_t *out) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
  if (c < 0x80) return out[0] = (uint8_t)c, 1;
  if (c < 0x800) return out[0] = (uint8_t)(0xC0 | c >> 6), out[1] = (uint8_t)(0x80 | (c & 0x3F)), 2;
  if (c < 0x10000) {
    out[0] = (uint8_t)(0xE0 | c >> 12);
    out[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    out[2] = (uint8_t)(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = (uint8_t)(0xF0 | c >> 18);
  out[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
  out[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
  out[3] = (uint8_t)(0x80 | (c & 0x3F));
  return 4;
}

/* Fixed-width strings (|S<n> bytes or <U<n> UTF-32) to arena strings,
 * trailing NULs dropped as NumPy does. */
static o2m_status decode_strings(o2m_arena *arena, header *h, char kind, int size, const uint8_t *data,
                                 o2m_tensor *t) {
  size_t item = kind == 'U' ? 4 * (size_t)size : (size_t)size;
  t->strings = t->count ? o2m_arena_array(arena, (size_t)t->count, sizeof(o2m_bytes)) : NULL;
  if (t->count && !t->strings) return o2m_fail(h->diag, O2M_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < t->count; i++) {
    const uint8_t *p = data + (size_t)i * item;
    size_t chars = (size_t)size;
    if (kind == 'S') {
      while (chars && p[chars - 1] == 0) chars--;
      t->strings[i] = (o2m_bytes){p, chars};
      continue;
    }
    while (chars && load_u32le(p + 4 * (chars - 1)) == 0) chars--;
    uint8_t *utf8 = o2m_arena_alloc(arena, 4 * chars + 1);
    if (!utf8) return o2m_fail(h->diag, O2M_ERR_NOMEM, "out of memory");
    size_t len = 0;
    for (size_t c = 0; c < chars; c++) len += put_utf8(load_u32le(p + 4 * c), utf8 + len);
    t->strings[i] = (o2m_bytes){utf8, len};
  }
  return O2M_OK;
}

o2m_status o2m_npy_decode(o2m_arena *arena, const uint8_t *bytes, size_t size, const char *name,
                          o2m_tensor **out, o2m_diag *diag) {
  *out = NULL;
  if (!name) name = "<npy>";
  if (!o2m_npy_is_npy(bytes, size)) return o2m_fail(diag, O2M_ERR_PARSE, "%s: not a .npy file (bad magic)", name);
  if (size < 10) return o2m_fail(diag, O2M_ERR_PARSE, "%s: truncated .npy header", name);
  int major = bytes[6];
  if (major < 1 || major > 3)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: .npy format version %d is not supported", name, major);
  size_t prefix = major == 1 ? 10 : 12;
  if (size < prefix) return o2m_fail(diag, O2M_ERR_PARSE, "%s: truncated .npy header", name);
  size_t hlen = major == 1 ? (size_t)bytes[8] | (size_t)bytes[9] << 8 : load_u32le(bytes + 8);
  if (hlen > size - prefix) return o2m_fail(diag, O2M_ERR_PARSE, "%s: truncated .npy header", name);
  header h = {(const char *)bytes + prefix, (const char *)bytes + prefix + hlen, name, diag};
  o2m_status s = parse_header(&h);
  if (s) return s;
  if (h.fortran)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: Fortran-order .npy data is not supported", name);
  char kind = 0;
  int item = 0;
  if ((s = parse_descr(&h, &kind, &item))) return s;
  o2m_dtype dtype = kind == 'S' || kind == 'U' ? O2M_DT_STRING : O2M_DT_UNDEFINED;
  for (int i = 0; i < N_TYPES && !dtype; i++)
    if (npy_types[i].kind == kind && npy_types[i].size == item) dtype = npy_types[i].dtype;
  if (!dtype) return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: .npy dtype '%s' has no ONNX equivalent", name, h.descr);

  o2m_tensor *t = o2m_arena_alloc(arena, sizeof(*t));
  int64_t *dims = h.rank ? o2m_arena_array(arena, (size_t)h.rank, sizeof(int64_t)) : NULL;
  if (!t || (h.rank && !dims)) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  int64_t count = 1;
  for (int k = 0; k < h.rank; k++) {
    if (h.dims[k] && count > INT64_MAX / h.dims[k]) return o2m_fail(diag, O2M_ERR_PARSE, "%s: .npy shape overflows", name);
    count *= h.dims[k];
    dims[k] = h.dims[k];
  }
  size_t itemsize = kind == 'U' ? 4 * (size_t)item : (size_t)item;
  size_t avail = size - prefix - hlen;
  if ((uint64_t)count > avail / itemsize)
    return o2m_fail(diag, O2M_ERR_PARSE, "%s: truncated .npy data: shape needs %" PRId64 " items of %zu bytes, %zu bytes left",
                    name, count, itemsize, avail);
  const uint8_t *data = bytes + prefix + hlen;
  *t = (o2m_tensor){.name = "", .dtype = dtype, .rank = h.rank, .dims = dims, .count = count,
                    .origin = O2M_DATA_INLINE, .doc = ""};
  if (dtype == O2M_DT_STRING) {
    if ((s = decode_strings(arena, &h, kind, item, data, t))) return s;
  } else {
    t->nbytes = (size_t)count * itemsize;
    t->data = count ? data : NULL;
  }
  *out = t;
  return O2M_OK;
}

/* ---- writing ------------------------------------------------------------- */

o2m_status o2m_npy_write(const o2m_tensor *t, FILE *out, const char *name, o2m_diag *diag) {
  if (!name) name = "<npy>";
  char descr[32] = "";
  size_t max_len = 1;
  if (t->dtype == O2M_DT_STRING) {
    for (int64_t i = 0; i < t->count; i++)
      if (t->strings[i].len > max_len) max_len = t->strings[i].len;
    snprintf(descr, sizeof(descr), "|S%zu", max_len);
  }
  for (int i = 0; i < N_TYPES && !descr[0]; i++)
    if (npy_types[i].dtype == t->dtype)
      snprintf(descr, sizeof(descr), "%c%c%d", npy_types[i].size == 1 ? '|' : '<', npy_types[i].kind,
               npy_types[i].size);
  if (!descr[0])
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: %s has no NumPy dtype; write a .pb file instead", name,
                    o2m_dtype_name(t->dtype));
  if (t->rank > 64) return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: rank %d is too large for .npy", name, t->rank);
  char dict[64 * 24 + 128];
  int n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int k = 0; k < t->rank; k++)
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%" PRId64, k ? ", " : "", t->dims[k]);
  n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }", t->rank == 1 ? "," : "");
  /* pad with spaces and a newline so that the data starts 64-aligned */
  size_t hlen = ((size_t)n + 1 + 10 + 63) / 64 * 64 - 10;
  uint8_t prefix[10];
  memcpy(prefix, magic, 6);
  prefix[6] = 1;
  prefix[7] = 0;
  prefix[8] = (uint8_t)(hlen & 0xFF);
  prefix[9] = (uint8_t)(hlen >> 8);
  int ok = fwrite(prefix, 1, 10, out) == 10 && fwrite(dict, 1, (size_t)n, out) == (size_t)n;
  for (size_t i = (size_t)n; ok && i + 1 < hlen; i++) ok = fputc(' ', out) != EOF;
  ok = ok && fputc('\n', out) != EOF;
  if (t->dtype == O2M_DT_STRING) {
    for (int64_t i = 0; ok && i < t->count; i++) {
      ok = fwrite(t->strings[i].ptr, 1, t->strings[i].len, out) == t->strings[i].len;
      for (size_t k = t->strings[i].len; ok && k < max_len; k++) ok = fputc(0, out) != EOF;
    }
  } else if (t->nbytes) {
    ok = ok && fwrite(t->data, 1, t->nbytes, out) == t->nbytes;
  }
  if (!ok) return o2m_fail(diag, O2M_ERR_IO, "%s: writing the .npy file failed", name);
  return O2M_OK;
}
