/* onnx_mutate.c - ONNX's message schema (field numbers from onnx.proto)
 * and the structure-aware mutations the fuzz targets apply to models
 * (onnx_mutate.h). A mutation picks a field of the parsed model and edits
 * it as what it is: a value name is rewired to another value, an op type
 * becomes another op, an attribute, a dim, a dtype or an opset version gets
 * an edge value, a repeated field loses or gains an element. */
#include "onnx_mutate.h"

#include <stdlib.h>
#include <string.h>

#include "pb_tree.h"

enum kind {
  K_MODEL, K_GRAPH, K_NODE, K_ATTR, K_TENSOR, K_VALUE_INFO, K_TYPE, K_TYPE_TENSOR, K_TYPE_SEQUENCE,
  K_TYPE_MAP, K_TYPE_OPTIONAL, K_SHAPE, K_DIM, K_OPSET, K_FUNCTION, K_SPARSE, K_ENTRY
};

/* which length-delimited field of which message is a message of which kind */
static const struct { int8_t parent; uint8_t number; int8_t child; } SUB_MESSAGES[] = {
  {K_MODEL, 7, K_GRAPH},          {K_MODEL, 8, K_OPSET},         {K_MODEL, 14, K_ENTRY},
  {K_MODEL, 25, K_FUNCTION},      {K_GRAPH, 1, K_NODE},          {K_GRAPH, 5, K_TENSOR},
  {K_GRAPH, 11, K_VALUE_INFO},    {K_GRAPH, 12, K_VALUE_INFO},   {K_GRAPH, 13, K_VALUE_INFO},
  {K_GRAPH, 15, K_SPARSE},        {K_NODE, 5, K_ATTR},           {K_ATTR, 5, K_TENSOR},
  {K_ATTR, 6, K_GRAPH},           {K_ATTR, 10, K_TENSOR},        {K_ATTR, 11, K_GRAPH},
  {K_ATTR, 14, K_TYPE},           {K_ATTR, 15, K_TYPE},          {K_ATTR, 22, K_SPARSE},
  {K_ATTR, 23, K_SPARSE},         {K_TENSOR, 13, K_ENTRY},       {K_VALUE_INFO, 2, K_TYPE},
  {K_TYPE, 1, K_TYPE_TENSOR},     {K_TYPE, 4, K_TYPE_SEQUENCE},  {K_TYPE, 5, K_TYPE_MAP},
  {K_TYPE, 8, K_TYPE_TENSOR},     {K_TYPE, 9, K_TYPE_OPTIONAL},  {K_TYPE_TENSOR, 2, K_SHAPE},
  {K_TYPE_SEQUENCE, 1, K_TYPE},   {K_TYPE_MAP, 2, K_TYPE},       {K_TYPE_OPTIONAL, 1, K_TYPE},
  {K_SHAPE, 1, K_DIM},            {K_FUNCTION, 7, K_NODE},       {K_FUNCTION, 9, K_OPSET},
  {K_FUNCTION, 11, K_ATTR},       {K_FUNCTION, 12, K_VALUE_INFO}, {K_SPARSE, 1, K_TENSOR},
  {K_SPARSE, 2, K_TENSOR},
};

/* what a leaf field means, for choosing a fitting edit */
enum role {
  R_OTHER, R_NAME, R_OP_TYPE, R_DOMAIN, R_OPSET_VERSION, R_IR_VERSION, R_DTYPE, R_DIM_VALUE, R_INT,
  R_INTS, R_FLOATS, R_ATTR_TYPE
};
static const struct { int8_t parent; uint8_t number; uint8_t role; } ROLES[] = {
  {K_NODE, 1, R_NAME},           {K_NODE, 2, R_NAME},        {K_NODE, 4, R_OP_TYPE},
  {K_NODE, 7, R_DOMAIN},         {K_VALUE_INFO, 1, R_NAME},  {K_TENSOR, 8, R_NAME},
  {K_FUNCTION, 4, R_NAME},       {K_FUNCTION, 5, R_NAME},    {K_OPSET, 1, R_DOMAIN},
  {K_OPSET, 2, R_OPSET_VERSION}, {K_MODEL, 1, R_IR_VERSION}, {K_TYPE_TENSOR, 1, R_DTYPE},
  {K_TENSOR, 2, R_DTYPE},        {K_TYPE_MAP, 1, R_DTYPE},   {K_DIM, 1, R_DIM_VALUE},
  {K_ATTR, 3, R_INT},            {K_ATTR, 8, R_INTS},        {K_ATTR, 2, R_FLOATS},
  {K_ATTR, 7, R_FLOATS},         {K_ATTR, 20, R_ATTR_TYPE},  {K_TENSOR, 1, R_INTS},
  {K_TENSOR, 4, R_FLOATS},       {K_TENSOR, 5, R_INTS},      {K_TENSOR, 7, R_INTS},
  {K_TENSOR, 11, R_INTS},
};

/* every op type of the default domain (the schema table the arity check uses) */
#define ARITY(domain, op, since, min_in, max_in, required, min_out, max_out, names) op,
static const char *const OP_TYPES[] = {
#include "ir/arity.def"
};
#undef ARITY

/* attribute names ops read, for attributes added to a node */
static const char *const ATTR_NAMES[] = {
  "axis", "axes", "perm", "keepdims", "group", "pads", "strides", "kernel_shape", "dilations", "mode",
  "to", "alpha", "beta", "epsilon", "transA", "transB", "value", "split", "starts", "ends", "k",
  "largest", "sorted", "direction", "auto_pad", "ceil_mode", "count_include_pad", "batch_dims",
  "reduction", "select_last_index", "noop_with_empty_axes", "allowzero", "coordinate_transformation_mode",
  "exclusive", "reverse", "upper", "num_outputs", "stash_type", "output_padding", "output_shape",
  "saturate", "block_size", "output_dtype", "dtype", "seed", "then_branch", "body",
};

static int schema(int parent, uint32_t number) {
  for (size_t i = 0; i < sizeof SUB_MESSAGES / sizeof *SUB_MESSAGES; i++)
    if (SUB_MESSAGES[i].parent == parent && SUB_MESSAGES[i].number == number) return SUB_MESSAGES[i].child;
  return -1;
}

static int role_of(int parent, uint32_t number) {
  for (size_t i = 0; i < sizeof ROLES / sizeof *ROLES; i++)
    if (ROLES[i].parent == parent && ROLES[i].number == number) return ROLES[i].role;
  return R_OTHER;
}

typedef struct rng {
  uint64_t state;
} rng;

static uint64_t next(rng *r) { /* splitmix64 */
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static size_t below(rng *r, size_t n) { return n ? (size_t)(next(r) % n) : 0; }

/* a field of the tree: the message holding it and its index there */
typedef struct site {
  pb_msg *msg;
  size_t index;
} site;

typedef struct sites {
  site *items;
  size_t count, cap;
} sites;

static void collect(pb_msg *m, sites *out) {
  for (size_t i = 0; i < m->count; i++) {
    if (out->count == out->cap) {
      out->cap = out->cap ? 2 * out->cap : 256;
      out->items = realloc(out->items, out->cap * sizeof *out->items);
      if (!out->items) abort();
    }
    out->items[out->count++] = (site){m, i};
    if (m->fields[i].msg) collect(m->fields[i].msg, out);
  }
}

static pb_field *field_of(site s) { return &s.msg->fields[s.index]; }
static int role_at(site s) { return role_of(s.msg->kind, field_of(s)->number); }
static int holds_kind(site s, int kind) { return field_of(s)->msg && field_of(s)->msg->kind == kind; }

static uint64_t edge_int(rng *r, int64_t v) {
  static const int64_t EDGES[] = {0,   1,   -1,   2,     3,     -2,    4,     7,       8,        16,
                                  64,  255, 256,  1023,  65535, 65536, 1 << 20, 2147483647, -2147483647 - 1,
                                  (int64_t)1 << 32, INT64_MAX, INT64_MIN};
  switch (below(r, 6)) {
  case 0: return (uint64_t)v + 1; /* wrapping, in unsigned arithmetic */
  case 1: return (uint64_t)v - 1;
  case 2: return -(uint64_t)v;
  case 3: return (uint64_t)v * 2;
  default: return (uint64_t)EDGES[below(r, sizeof EDGES / sizeof *EDGES)];
  }
}

static uint32_t edge_float(rng *r) {
  static const uint32_t EDGES[] = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
                                   0x7fc00000, 0x00000001, 0x7f7fffff, 0x3f000000, 0x4b000000, 0xcf000000};
  return EDGES[below(r, sizeof EDGES / sizeof *EDGES)];
}

static uint64_t varint_for(rng *r, int role, uint64_t v) {
  switch (role) {
  case R_DTYPE: return below(r, 27); /* 0 (undefined) .. past the last dtype */
  case R_OPSET_VERSION: return 1 + below(r, 25);
  case R_IR_VERSION: return 1 + below(r, 12);
  case R_ATTR_TYPE: return below(r, 15);
  default: return edge_int(r, (int64_t)v);
  }
}

/* a packed list: one element edited, dropped or repeated, or the list emptied */
static void mutate_packed(rng *r, pb_field *f, int role) {
  size_t width = role == R_FLOATS ? 4 : 0, n = 0, len;
  uint64_t values[256];
  if (width) {
    n = f->len / 4 < 256 ? f->len / 4 : 256;
    for (size_t i = 0; i < n; i++) {
      uint32_t v;
      memcpy(&v, f->bytes + 4 * i, 4);
      values[i] = v;
    }
  } else {
    n = pb_varints_decode(f->bytes, f->len, values, 256);
  }
  size_t at = below(r, n);
  switch (n ? below(r, 4) : 3) {
  case 0: values[at] = width ? edge_float(r) : edge_int(r, (int64_t)values[at]); break;
  case 1: memmove(&values[at], &values[at + 1], (n - at - 1) * sizeof *values), n--; break;
  case 2:
    if (n < 256) memmove(&values[at + 1], &values[at], (n - at) * sizeof *values), n++;
    break;
  default: n = n ? 0 : 1, values[0] = width ? edge_float(r) : edge_int(r, 0); break;
  }
  if (width) {
    uint8_t buf[256 * 4];
    for (size_t i = 0; i < n; i++) {
      uint32_t v = (uint32_t)values[i];
      memcpy(buf + 4 * i, &v, 4);
    }
    pb_set_bytes(f, buf, 4 * n);
    return;
  }
  uint8_t *buf = pb_varints_encode(values, n, &len);
  pb_set_bytes(f, buf, len);
  free(buf);
}

static void mutate_bytes(rng *r, pb_field *f, onnx_bytes_mutator bytes) {
  size_t cap = f->len * 2 + 16;
  uint8_t *buf = malloc(cap);
  if (!buf) abort();
  if (f->len) memcpy(buf, f->bytes, f->len);
  size_t n = f->len;
  if (below(r, 4) == 0) n = below(r, f->len + 1); /* truncated: an initializer of the wrong size */
  else if (bytes) n = bytes(buf, n, cap);
  pb_set_bytes(f, buf, n);
  free(buf);
}

static void set_string(pb_field *f, const char *s) { pb_set_bytes(f, s, strlen(s)); }

/* a site of role `role` other than `not`, or -1 */
static long find_role(rng *r, const sites *all, int role) {
  for (int tries = 0; tries < 64; tries++) {
    size_t i = below(r, all->count);
    if (role_at(all->items[i]) == role && field_of(all->items[i])->wire == PB_BYTES) return (long)i;
  }
  return -1;
}

static void add_attribute(rng *r, pb_msg *node) {
  pb_msg *attr = calloc(1, sizeof *attr);
  if (!attr) abort();
  attr->kind = K_ATTR;
  pb_field name = {.number = 1, .wire = PB_BYTES}, type = {.number = 20, .wire = PB_VARINT};
  const char *n = ATTR_NAMES[below(r, sizeof ATTR_NAMES / sizeof *ATTR_NAMES)];
  name.bytes = (uint8_t *)n, name.len = strlen(n);
  pb_insert(attr, 0, &name);
  pb_field value = {0};
  switch (below(r, 4)) {
  case 0: type.value = 2, value = (pb_field){.number = 3, .wire = PB_VARINT, .value = edge_int(r, 0)}; break;
  case 1: type.value = 1, value = (pb_field){.number = 2, .wire = PB_FIXED32, .value = edge_float(r)}; break;
  case 2: type.value = 3, value = (pb_field){.number = 4, .wire = PB_BYTES, .bytes = (uint8_t *)"NOTSET", .len = 6}; break;
  default: {
    uint64_t ints[3] = {edge_int(r, 0), edge_int(r, 1), edge_int(r, 2)};
    size_t len;
    uint8_t *packed = pb_varints_encode(ints, 1 + below(r, 3), &len);
    type.value = 7, value = (pb_field){.number = 8, .wire = PB_BYTES, .bytes = packed, .len = len};
    pb_insert(attr, 1, &value);
    free(packed);
    value.number = 0;
  }
  }
  if (value.number) pb_insert(attr, 1, &value);
  pb_insert(attr, attr->count, &type);
  pb_field wrapper = {.number = 5, .wire = PB_BYTES, .msg = attr};
  pb_insert(node, node->count, &wrapper);
  pb_free(attr);
}

/* one mutation of the tree; 0 when the chosen kind found no site */
static int mutate_once(rng *r, pb_msg *model, onnx_bytes_mutator bytes) {
  sites all = {0};
  collect(model, &all);
  int done = 0;
  for (int tries = 0; tries < 32 && !done && all.count; tries++) {
    site s = all.items[below(r, all.count)];
    pb_field *f = field_of(s);
    int role = role_at(s);
    switch (below(r, 10)) {
    case 0: /* drop a field: an input, an output, a node, an attribute, a dim, ... */
      pb_remove(s.msg, s.index);
      done = 1;
      break;
    case 1: /* repeat a field */
      pb_insert(s.msg, s.index + 1, f);
      done = 1;
      break;
    case 2: /* swap two fields of one number (node order, input order, dims) */
      for (size_t j = 0; j < s.msg->count && !done; j++) {
        size_t k = (s.index + 1 + j) % s.msg->count;
        if (k != s.index && s.msg->fields[k].number == f->number) {
          pb_field t = *f;
          *f = s.msg->fields[k];
          s.msg->fields[k] = t;
          done = 1;
        }
      }
      break;
    case 3: /* a number: an edge value fitting the field */
      if (f->wire == PB_VARINT) f->value = varint_for(r, role, f->value), done = 1;
      else if (f->wire == PB_FIXED32) f->value = edge_float(r), done = 1;
      break;
    case 4: /* a packed list */
      if (f->wire == PB_BYTES && !f->msg && (role == R_INTS || role == R_FLOATS)) mutate_packed(r, f, role), done = 1;
      break;
    case 5: /* a value name rewired: another value's, none (an absent optional input), or a new one */
      if (role == R_NAME && f->wire == PB_BYTES) {
        long other = find_role(r, &all, R_NAME);
        int pick = (int)below(r, 4);
        if (pick < 2 && other >= 0) {
          pb_field *o = field_of(all.items[other]);
          uint8_t *copy = malloc(o->len + 1);
          if (!copy) abort();
          memcpy(copy, o->bytes, o->len);
          pb_set_bytes(f, copy, o->len);
          free(copy);
        } else {
          set_string(f, pick == 2 ? "" : "fuzz_value");
        }
        done = 1;
      }
      break;
    case 6: /* another op */
      if (role == R_OP_TYPE) set_string(f, OP_TYPES[below(r, sizeof OP_TYPES / sizeof *OP_TYPES)]), done = 1;
      else if (role == R_DOMAIN) set_string(f, below(r, 2) ? "" : "com.microsoft"), done = 1;
      break;
    case 7: /* bytes: raw data resized, strings changed */
      if (f->wire == PB_BYTES && !f->msg && role != R_NAME) mutate_bytes(r, f, bytes), done = 1;
      break;
    case 8: /* a node gains an attribute or an input */
      if (holds_kind(s, K_NODE)) {
        if (below(r, 2)) {
          add_attribute(r, f->msg);
        } else {
          long other = find_role(r, &all, R_NAME);
          pb_field in = {.number = 1, .wire = PB_BYTES};
          if (other >= 0) in.bytes = field_of(all.items[other])->bytes, in.len = field_of(all.items[other])->len;
          pb_insert(f->msg, 0, &in);
        }
        done = 1;
      }
      break;
    default: /* a declared shape: rank changed or a dim made symbolic */
      if (holds_kind(s, K_DIM)) {
        pb_msg *dim = f->msg;
        for (size_t j = 0; j < dim->count; j++) pb_remove(dim, 0);
        pb_field sym = {.number = 2, .wire = PB_BYTES, .bytes = (uint8_t *)"N", .len = 1};
        pb_field val = {.number = 1, .wire = PB_VARINT, .value = below(r, 2) ? 0 : 1 + below(r, 4)};
        pb_insert(dim, 0, below(r, 2) ? &sym : &val);
        done = 1;
      }
      break;
    }
  }
  free(all.items);
  return done;
}

static size_t write_out(const pb_msg *m, uint8_t *out, size_t max_size) {
  size_t n = pb_size(m);
  if (n > max_size || n == 0) return 0;
  pb_write(m, out);
  return n;
}

size_t onnx_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed, onnx_bytes_mutator bytes) {
  pb_msg *model = pb_parse(data, size, K_MODEL, schema);
  if (!model) return 0;
  rng r = {seed * 0x2545f4914f6cdd1dull + size};
  size_t rounds = 1 + below(&r, 3), n = 0;
  for (size_t i = 0; i < rounds; i++) mutate_once(&r, model, bytes);
  n = write_out(model, data, max_size);
  pb_free(model);
  return n;
}

size_t onnx_crossover(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size, uint8_t *out,
                      size_t max_size, unsigned seed) {
  pb_msg *into = pb_parse(a, a_size, K_MODEL, schema), *from = pb_parse(b, b_size, K_MODEL, schema);
  size_t n = 0;
  if (into && from) {
    rng r = {seed};
    sites src = {0}, dst = {0};
    collect(from, &src);
    collect(into, &dst);
    /* a node or initializer into a graph, an attribute into a node */
    for (int tries = 0; tries < 64 && src.count && dst.count; tries++) {
      site s = src.items[below(&r, src.count)], d = dst.items[below(&r, dst.count)];
      int kind = field_of(s)->msg ? field_of(s)->msg->kind : -1;
      int host = (kind == K_NODE || kind == K_TENSOR) ? K_GRAPH : kind == K_ATTR ? K_NODE : -1;
      if (host < 0 || !holds_kind(d, host)) continue;
      pb_msg *target = field_of(d)->msg;
      pb_insert(target, below(&r, target->count + 1), field_of(s));
      break;
    }
    free(src.items);
    free(dst.items);
    n = write_out(into, out, max_size);
  }
  pb_free(into);
  pb_free(from);
  return n;
}
