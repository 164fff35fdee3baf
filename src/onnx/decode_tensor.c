/* decode_tensor.c - TensorProto and SparseTensorProto into o2m_tensor and
 * o2m_sparse_tensor, and o2m_decode_tensor for standalone .pb files.
 *
 * raw_data stays a view into the buffer and is never read; the typed
 * repeated fields (float_data, int32_data, ...) are decoded into ONNX's
 * raw little-endian layout in the arena; string_data entries are views;
 * a tensor whose data_location is EXTERNAL gets its external reference and
 * is listed in model->external for o2m_resolve_external_data.
 */
#include <string.h>

#include "onnx/decode.h"
#include "onnx/reader.h"
#include "util/diag.h"

enum {
  TENSOR_DIMS = 1,
  TENSOR_DATA_TYPE = 2,
  TENSOR_SEGMENT = 3,
  TENSOR_FLOAT_DATA = 4,
  TENSOR_INT32_DATA = 5,
  TENSOR_STRING_DATA = 6,
  TENSOR_INT64_DATA = 7,
  TENSOR_NAME = 8,
  TENSOR_RAW_DATA = 9,
  TENSOR_DOUBLE_DATA = 10,
  TENSOR_UINT64_DATA = 11,
  TENSOR_DOC = 12,
  TENSOR_EXTERNAL_DATA = 13,
  TENSOR_DATA_LOCATION = 14,
  TENSOR_FIELD_LIMIT
};

enum { LOCATION_DEFAULT = 0, LOCATION_EXTERNAL = 1 };

/* The numeric typed fields, by field number (string_data is separate). */
static const struct {
  const char *name;
  o2m_wire_scalar kind;
} typed_fields[TENSOR_FIELD_LIMIT] = {
    [TENSOR_FLOAT_DATA] = {"float_data", O2M_SCALAR_FIXED32},
    [TENSOR_INT32_DATA] = {"int32_data", O2M_SCALAR_VARINT},
    [TENSOR_INT64_DATA] = {"int64_data", O2M_SCALAR_VARINT},
    [TENSOR_DOUBLE_DATA] = {"double_data", O2M_SCALAR_FIXED64},
    [TENSOR_UINT64_DATA] = {"uint64_data", O2M_SCALAR_VARINT},
};

/* The field that carries each element type when raw_data is not used. */
static const uint8_t field_of_dtype[O2M_DT_COUNT] = {
    [O2M_DT_FLOAT] = TENSOR_FLOAT_DATA,
    [O2M_DT_COMPLEX64] = TENSOR_FLOAT_DATA,
    [O2M_DT_DOUBLE] = TENSOR_DOUBLE_DATA,
    [O2M_DT_COMPLEX128] = TENSOR_DOUBLE_DATA,
    [O2M_DT_INT64] = TENSOR_INT64_DATA,
    [O2M_DT_UINT32] = TENSOR_UINT64_DATA,
    [O2M_DT_UINT64] = TENSOR_UINT64_DATA,
    [O2M_DT_STRING] = TENSOR_STRING_DATA,
    [O2M_DT_INT32] = TENSOR_INT32_DATA,
    [O2M_DT_INT16] = TENSOR_INT32_DATA,
    [O2M_DT_INT8] = TENSOR_INT32_DATA,
    [O2M_DT_UINT16] = TENSOR_INT32_DATA,
    [O2M_DT_UINT8] = TENSOR_INT32_DATA,
    [O2M_DT_BOOL] = TENSOR_INT32_DATA,
    [O2M_DT_FLOAT16] = TENSOR_INT32_DATA,
    [O2M_DT_BFLOAT16] = TENSOR_INT32_DATA,
    [O2M_DT_FLOAT8E4M3FN] = TENSOR_INT32_DATA,
    [O2M_DT_FLOAT8E4M3FNUZ] = TENSOR_INT32_DATA,
    [O2M_DT_FLOAT8E5M2] = TENSOR_INT32_DATA,
    [O2M_DT_FLOAT8E5M2FNUZ] = TENSOR_INT32_DATA,
    [O2M_DT_FLOAT8E8M0] = TENSOR_INT32_DATA,
    [O2M_DT_UINT4] = TENSOR_INT32_DATA,
    [O2M_DT_INT4] = TENSOR_INT32_DATA,
    [O2M_DT_FLOAT4E2M1] = TENSOR_INT32_DATA,
    [O2M_DT_UINT2] = TENSOR_INT32_DATA,
    [O2M_DT_INT2] = TENSOR_INT32_DATA,
};

/* What the counting pass learns about one TensorProto. */
typedef struct tensor_scan {
  size_t start; /* offset of the message, for errors */
  int64_t data_type, location;
  int rank;
  o2m_span dims_span, data_span;
  size_t typed_count[TENSOR_FIELD_LIMIT]; /* elements per typed field */
  int typed_seen;                         /* bit per typed field number */
  int n_strings;
  o2m_bytes raw;
  size_t raw_offset;
} tensor_scan;

static const char *field_name(int field) {
  if (field == TENSOR_STRING_DATA) return "string_data";
  if (field == TENSOR_RAW_DATA) return "raw_data";
  return typed_fields[field].name;
}

/* "[2,3,4]" for messages. */
static const char *dims_text(char *buf, size_t cap, const int64_t *dims,
                             int rank) {
  size_t len = 0;
  buf[len++] = '[';
  for (int i = 0; i < rank && len + 24 < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "",
                            (long long)dims[i]);
  snprintf(buf + len, cap - len, "]");
  return buf;
}

/* Checks dims (none negative) and returns their product (0-d: 1). */
static o2m_status dims_count(o2m_decoder *d, const int64_t *dims, int rank,
                             size_t offset, int64_t *count) {
  int64_t product = 1;
  int has_zero = 0;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return o2m_dec_fail(d, O2M_ERR_INVALID, offset,
                          "dim %d is negative (%lld)", i, (long long)dims[i]);
    has_zero |= dims[i] == 0;
  }
  for (int i = 0; i < rank && !has_zero; i++) {
    if (__builtin_mul_overflow(product, dims[i], &product)) {
      char text[256];
      return o2m_dec_fail(d, O2M_ERR_INVALID, offset,
                          "the product of dims %s overflows int64",
                          dims_text(text, sizeof(text), dims, rank));
    }
  }
  *count = has_zero ? 0 : product;
  return O2M_OK;
}

static o2m_status count_typed(o2m_decoder *d, const o2m_wire_field *f,
                              tensor_scan *s) {
  o2m_wire_error err;
  size_t more;
  if (o2m_wire_count_scalars(d->base, f, typed_fields[f->number].kind, &more,
                             &err) < 0)
    return o2m_dec_fail(d, O2M_ERR_PARSE, err.offset, "%s: %s",
                        typed_fields[f->number].name, err.reason);
  s->typed_count[f->number] += more;
  if (more) s->typed_seen |= 1 << f->number;
  return O2M_OK;
}

/* Counting pass: scalars and views are taken, repeated fields counted. */
static o2m_status scan_tensor(o2m_decoder *d, o2m_bytes msg, o2m_tensor *t,
                              tensor_scan *s) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    switch (f.number) {
    case TENSOR_DIMS:
      st = o2m_dec_count_scalars(d, &f, "dims", O2M_SCALAR_VARINT, &s->rank);
      if (!st) o2m_span_add(&s->dims_span, d, &f, &w);
      break;
    case TENSOR_DATA_TYPE:
      st = o2m_dec_int64(d, &f, "data_type", &s->data_type);
      break;
    case TENSOR_FLOAT_DATA:
    case TENSOR_INT32_DATA:
    case TENSOR_INT64_DATA:
    case TENSOR_DOUBLE_DATA:
    case TENSOR_UINT64_DATA:
      st = count_typed(d, &f, s);
      if (!st) o2m_span_add(&s->data_span, d, &f, &w);
      break;
    case TENSOR_STRING_DATA:
      st = o2m_dec_count_len(d, &f, "string_data", &s->n_strings);
      if (!st) o2m_span_add(&s->data_span, d, &f, &w);
      break;
    case TENSOR_EXTERNAL_DATA:
      st = o2m_dec_expect(d, &f, O2M_WIRE_LEN, "external_data");
      if (!st) o2m_span_add(&s->data_span, d, &f, &w);
      break;
    case TENSOR_NAME:
      st = o2m_dec_string(d, &f, "name", &t->name);
      break;
    case TENSOR_DOC:
      st = o2m_dec_string(d, &f, "doc_string", &t->doc);
      break;
    case TENSOR_RAW_DATA:
      st = o2m_dec_expect(d, &f, O2M_WIRE_LEN, "raw_data");
      s->raw.ptr = f.data;
      s->raw.len = f.len;
      s->raw_offset = f.offset;
      break;
    case TENSOR_DATA_LOCATION:
      st = o2m_dec_int64(d, &f, "data_location", &s->location);
      break;
    default: /* segment, metadata_props and unknown fields */
      break;
    }
  }
  return o2m_dec_done(d, st, r);
}

static o2m_status read_dims(o2m_decoder *d, o2m_tensor *t,
                            const tensor_scan *s) {
  t->rank = s->rank;
  if (!s->rank) return O2M_OK;
  t->dims = o2m_arena_array(d->arena, (size_t)s->rank, sizeof(int64_t));
  if (!t->dims) return o2m_dec_nomem(d);
  o2m_wire w = o2m_span_wire(d, &s->dims_span);
  o2m_wire_field f;
  int r, n = 0;
  while ((r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number != TENSOR_DIMS) continue;
    o2m_wire_scalars it;
    uint64_t v;
    o2m_wire_scalars_begin(&it, d->base, &f, O2M_SCALAR_VARINT);
    while ((r = o2m_dec_next_scalar(d, &it, &v)) > 0 && n < s->rank)
      t->dims[n++] = (int64_t)v;
    if (r < 0) break;
  }
  return r < 0 ? d->diag->status : O2M_OK;
}

static void store_le(uint8_t *dst, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; i++) dst[i] = (uint8_t)(v >> (8 * i));
}

/* Decodes the typed field `field` into a fresh buffer in raw layout.
 * Sub-byte types come packed (one byte of elements per int32_data entry,
 * as the proto prescribes); one element per entry is accepted too. */
static o2m_status read_typed(o2m_decoder *d, o2m_tensor *t,
                             const tensor_scan *s, int field) {
  int bits = o2m_dtype_bits(t->dtype);
  int complex = t->dtype == O2M_DT_COMPLEX64 || t->dtype == O2M_DT_COMPLEX128;
  size_t width = complex ? (size_t)bits / 16 : bits < 8 ? 1 : (size_t)bits / 8;
  size_t expected = complex ? (size_t)t->count * 2
                    : bits < 8 ? t->nbytes
                               : (size_t)t->count;
  size_t n = s->typed_count[field];
  int one_per_element = bits < 8 && n != expected && n == (size_t)t->count;
  if (n == 0)
    return o2m_dec_fail(d, O2M_ERR_INVALID, s->start,
                        "the tensor has no data: neither raw_data nor %s",
                        field_name(field));
  if (n != expected && !one_per_element) {
    char text[256];
    return o2m_dec_fail(d, O2M_ERR_INVALID, s->start,
                        "%s holds %zu values, but dims %s of %s need %zu",
                        field_name(field), n,
                        dims_text(text, sizeof(text), t->dims, t->rank),
                        o2m_dtype_name(t->dtype), expected);
  }
  uint8_t *out = o2m_arena_alloc(d->arena, t->nbytes);
  if (!out) return o2m_dec_nomem(d);
  uint64_t mask = bits < 8 ? ((uint64_t)1 << bits) - 1 : 0;
  o2m_wire w = o2m_span_wire(d, &s->data_span);
  o2m_wire_field f;
  size_t i = 0;
  int r;
  while ((r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number != (uint32_t)field) continue;
    o2m_wire_scalars it;
    uint64_t v;
    o2m_wire_scalars_begin(&it, d->base, &f, typed_fields[field].kind);
    while ((r = o2m_dec_next_scalar(d, &it, &v)) > 0 && i < n) {
      if (one_per_element)
        out[i * bits / 8] |= (uint8_t)((v & mask) << (i * bits % 8));
      else
        store_le(out + i * width, t->dtype == O2M_DT_BOOL ? v != 0 : v, width);
      i++;
    }
    if (r < 0) return d->diag->status;
  }
  if (r < 0) return d->diag->status;
  t->data = out;
  t->origin = O2M_DATA_DECODED;
  return O2M_OK;
}

static o2m_status read_strings(o2m_decoder *d, o2m_tensor *t,
                               const tensor_scan *s) {
  if ((int64_t)s->n_strings != t->count) {
    char text[256];
    return o2m_dec_fail(d, O2M_ERR_INVALID, s->start,
                        "string_data holds %d strings, but dims %s need %lld",
                        s->n_strings,
                        dims_text(text, sizeof(text), t->dims, t->rank),
                        (long long)t->count);
  }
  if (!s->n_strings) return O2M_OK;
  t->strings = o2m_arena_array(d->arena, (size_t)s->n_strings,
                               sizeof(o2m_bytes));
  if (!t->strings) return o2m_dec_nomem(d);
  o2m_wire w = o2m_span_wire(d, &s->data_span);
  o2m_wire_field f;
  int r, n = 0;
  while ((r = o2m_dec_next(d, &w, &f)) > 0)
    if (f.number == TENSOR_STRING_DATA && n < s->n_strings)
      t->strings[n++] = (o2m_bytes){f.data, f.len};
  return r < 0 ? d->diag->status : O2M_OK;
}

/* Parses a non-negative decimal integer written as a string. */
static int parse_offset(const char *text, int64_t *out) {
  int64_t v = 0;
  if (!*text) return -1;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    if (__builtin_mul_overflow(v, 10, &v) ||
        __builtin_add_overflow(v, *p - '0', &v))
      return -1;
  }
  *out = v;
  return 0;
}

static o2m_status add_external(o2m_decoder *d, o2m_tensor *t) {
  o2m_model *m = d->model;
  if (m->n_external == m->cap_external) {
    int cap = m->cap_external ? m->cap_external * 2 : 16;
    o2m_tensor **grown = o2m_arena_grow(d->arena, m->external,
                                        (size_t)m->n_external, (size_t)cap,
                                        sizeof(*grown));
    if (!grown) return o2m_dec_nomem(d);
    m->external = grown;
    m->cap_external = cap;
  }
  m->external[m->n_external++] = t;
  return O2M_OK;
}

static o2m_status read_external(o2m_decoder *d, o2m_tensor *t,
                                const tensor_scan *s) {
  if (!d->model)
    return o2m_dec_fail(d, O2M_ERR_UNSUPPORTED, s->start,
                        "a standalone tensor cannot refer to external data");
  if (t->dtype == O2M_DT_STRING)
    return o2m_dec_fail(d, O2M_ERR_INVALID, s->start,
                        "a string tensor cannot have external data");
  if (s->raw.ptr || s->typed_seen || s->n_strings)
    return o2m_dec_fail(d, O2M_ERR_INVALID, s->start,
                        "data_location is EXTERNAL but the tensor also "
                        "carries its data inline");
  o2m_external_ref *ext = o2m_arena_alloc(d->arena, sizeof(*ext));
  if (!ext) return o2m_dec_nomem(d);
  ext->location = NULL;
  ext->length = -1;
  o2m_wire w = o2m_span_wire(d, &s->data_span);
  o2m_wire_field f;
  int r, index = 0;
  while ((r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number != TENSOR_EXTERNAL_DATA) continue;
    o2m_string_pair kv;
    o2m_status st = o2m_dec_string_pair(d, (o2m_bytes){f.data, f.len},
                                        "external_data", index++, &kv);
    if (st) return st;
    int64_t *number = strcmp(kv.key, "offset") == 0   ? &ext->offset
                      : strcmp(kv.key, "length") == 0 ? &ext->length
                                                      : NULL;
    if (strcmp(kv.key, "location") == 0)
      ext->location = kv.value;
    else if (number && parse_offset(kv.value, number) < 0)
      return o2m_dec_fail(d, O2M_ERR_INVALID, f.offset,
                          "external_data %s '%s' is not a non-negative "
                          "integer", kv.key, kv.value);
  }
  if (r < 0) return d->diag->status;
  if (!ext->location || !ext->location[0])
    return o2m_dec_fail(d, O2M_ERR_INVALID, s->start,
                        "external data without a location");
  t->external = ext;
  t->origin = O2M_DATA_EXTERNAL;
  return add_external(d, t);
}

/* Points the tensor at its payload, whichever way the proto carries it. */
static o2m_status attach_data(o2m_decoder *d, o2m_tensor *t,
                              const tensor_scan *s) {
  if (s->location != LOCATION_DEFAULT && s->location != LOCATION_EXTERNAL)
    return o2m_dec_fail(d, O2M_ERR_INVALID, s->start,
                        "data_location %lld is neither DEFAULT nor EXTERNAL",
                        (long long)s->location);
  if (s->location == LOCATION_EXTERNAL) return read_external(d, t, s);
  int field = field_of_dtype[t->dtype];
  for (int other = TENSOR_FLOAT_DATA; other < TENSOR_FIELD_LIMIT; other++) {
    int seen = (s->typed_seen >> other & 1) ||
               (other == TENSOR_STRING_DATA && s->n_strings);
    if (seen && (other != field || s->raw.ptr))
      return o2m_dec_fail(d, O2M_ERR_INVALID, s->start, "%s %s",
                          field_name(other),
                          s->raw.ptr ? "and raw_data both hold the data"
                                     : "cannot hold this element type");
  }
  if (t->dtype == O2M_DT_STRING) {
    if (s->raw.ptr)
      return o2m_dec_fail(d, O2M_ERR_INVALID, s->raw_offset,
                          "a string tensor cannot use raw_data");
    return read_strings(d, t, s);
  }
  if (s->raw.ptr) {
    if (s->raw.len != t->nbytes) {
      char text[256];
      return o2m_dec_fail(d, O2M_ERR_INVALID, s->raw_offset,
                          "raw_data holds %zu bytes, but dims %s of %s need "
                          "%zu",
                          s->raw.len,
                          dims_text(text, sizeof(text), t->dims, t->rank),
                          o2m_dtype_name(t->dtype), t->nbytes);
    }
    t->data = t->nbytes ? s->raw.ptr : NULL;
    t->origin = O2M_DATA_INLINE;
    return O2M_OK;
  }
  if (t->count == 0 && !(s->typed_seen >> field & 1)) return O2M_OK;
  return read_typed(d, t, s, field);
}

static o2m_status tensor_body(o2m_decoder *d, o2m_bytes msg, o2m_tensor *t,
                              o2m_where *where) {
  tensor_scan s;
  memset(&s, 0, sizeof(s));
  s.start = o2m_dec_offset(d, msg);
  t->name = t->doc = "";
  where->name = &t->name;
  o2m_status st = scan_tensor(d, msg, t, &s);
  if (st) return st;
  if (!s.data_type)
    return o2m_dec_fail(d, O2M_ERR_INVALID, s.start, "data_type is missing");
  if (s.data_type < 0 || s.data_type >= O2M_DT_COUNT)
    return o2m_dec_fail(d, O2M_ERR_INVALID, s.start,
                        "data_type %lld is not an element type",
                        (long long)s.data_type);
  t->dtype = (o2m_dtype)s.data_type;
  if ((st = read_dims(d, t, &s))) return st;
  if ((st = dims_count(d, t->dims, t->rank, s.start, &t->count)))
    return st;
  t->nbytes = o2m_dtype_storage_bytes(t->dtype, t->count);
  if (t->nbytes == SIZE_MAX)
    return o2m_dec_fail(d, O2M_ERR_UNSUPPORTED, s.start,
                        "%lld elements of %s do not fit in memory",
                        (long long)t->count, o2m_dtype_name(t->dtype));
  return attach_data(d, t, &s);
}

o2m_status o2m_dec_tensor(o2m_decoder *d, o2m_bytes msg, const char *kind,
                          int64_t index, o2m_tensor **out) {
  o2m_where where;
  o2m_status st =
      o2m_dec_push(d, &where, kind, index, o2m_dec_offset(d, msg));
  o2m_tensor *t = NULL;
  if (!st && !(t = o2m_arena_alloc(d->arena, sizeof(*t))))
    st = o2m_dec_nomem(d);
  if (!st) st = tensor_body(d, msg, t, &where);
  o2m_dec_pop(d, &where);
  *out = t;
  return st;
}

/* ---- SparseTensorProto ---- */

enum { SPARSE_VALUES = 1, SPARSE_INDICES = 2, SPARSE_DIMS = 3 };

static o2m_status check_sparse(o2m_decoder *d, const o2m_sparse_tensor *sp,
                               size_t start) {
  const o2m_tensor *v = sp->values, *ix = sp->indices;
  if (v->rank != 1)
    return o2m_dec_fail(d, O2M_ERR_INVALID, start,
                        "values must be 1-D, not rank %d", v->rank);
  int64_t nnz = v->dims[0];
  int linear = ix->rank == 1 && ix->dims[0] == nnz;
  int coords = ix->rank == 2 && ix->dims[0] == nnz && ix->dims[1] == sp->rank;
  if (ix->dtype != O2M_DT_INT64 || !(linear || coords))
    return o2m_dec_fail(d, O2M_ERR_INVALID, start,
                        "indices must be int64 of shape [%lld] or [%lld,%d]",
                        (long long)nnz, (long long)nnz, sp->rank);
  return O2M_OK;
}

static o2m_status sparse_body(o2m_decoder *d, o2m_bytes msg,
                              o2m_sparse_tensor *sp, o2m_where *where) {
  const char *name = ""; /* the values' name, once known */
  where->name = &name;
  size_t start = o2m_dec_offset(d, msg);
  o2m_bytes values = {0}, indices = {0};
  o2m_span dims_span = {0};
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number == SPARSE_VALUES)
      st = o2m_dec_message(d, &f, "values", &values);
    else if (f.number == SPARSE_INDICES)
      st = o2m_dec_message(d, &f, "indices", &indices);
    else if (f.number == SPARSE_DIMS) {
      st = o2m_dec_count_scalars(d, &f, "dims", O2M_SCALAR_VARINT, &sp->rank);
      if (!st) o2m_span_add(&dims_span, d, &f, &w);
    }
  }
  if (st || r < 0) return st ? st : d->diag->status;
  if (!values.ptr || !indices.ptr)
    return o2m_dec_fail(d, O2M_ERR_INVALID, start, "%s is missing",
                        values.ptr ? "indices" : "values");
  if (sp->rank) {
    sp->dims = o2m_arena_array(d->arena, (size_t)sp->rank, sizeof(int64_t));
    if (!sp->dims) return o2m_dec_nomem(d);
    o2m_wire dw = o2m_span_wire(d, &dims_span);
    int n = 0;
    while ((r = o2m_dec_next(d, &dw, &f)) > 0) {
      if (f.number != SPARSE_DIMS) continue;
      o2m_wire_scalars it;
      uint64_t v;
      o2m_wire_scalars_begin(&it, d->base, &f, O2M_SCALAR_VARINT);
      while ((r = o2m_dec_next_scalar(d, &it, &v)) > 0 && n < sp->rank)
        sp->dims[n++] = (int64_t)v;
      if (r < 0) return d->diag->status;
    }
    if (r < 0) return d->diag->status;
  }
  int64_t dense_count;
  if ((st = dims_count(d, sp->dims, sp->rank, start, &dense_count)))
    return st;
  if ((st = o2m_dec_tensor(d, values, "values", -1, &sp->values))) return st;
  name = sp->values->name;
  if ((st = o2m_dec_tensor(d, indices, "indices", -1, &sp->indices)))
    return st;
  return check_sparse(d, sp, start);
}

o2m_status o2m_dec_sparse_tensor(o2m_decoder *d, o2m_bytes msg,
                                 const char *kind, int64_t index,
                                 o2m_sparse_tensor **out) {
  o2m_where where;
  o2m_status st =
      o2m_dec_push(d, &where, kind, index, o2m_dec_offset(d, msg));
  o2m_sparse_tensor *sp = NULL;
  if (!st && !(sp = o2m_arena_alloc(d->arena, sizeof(*sp))))
    st = o2m_dec_nomem(d);
  if (!st) st = sparse_body(d, msg, sp, &where);
  o2m_dec_pop(d, &where);
  *out = sp;
  return st;
}

/* ---- standalone TensorProto files ---- */

o2m_status o2m_decode_tensor(o2m_arena *arena, const uint8_t *bytes,
                             size_t size, const char *name_for_messages,
                             o2m_tensor **out, o2m_diag *diag) {
  static const uint8_t empty[1];
  o2m_diag scratch = {0};
  if (!diag) diag = &scratch; /* the decoders read back the status */
  if (!bytes) {
    if (size) return o2m_fail(diag, O2M_ERR_USAGE, "no bytes to decode");
    bytes = empty;
  }
  o2m_decoder d = {
      .model = NULL,
      .arena = arena,
      .diag = diag,
      .file = name_for_messages ? name_for_messages : "<tensor>",
      .base = bytes,
  };
  *out = NULL;
  return o2m_dec_tensor(&d, (o2m_bytes){bytes, size}, "tensor", -1, out);
}
