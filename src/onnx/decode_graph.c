/* decode_graph.c - GraphProto, NodeProto, AttributeProto, ValueInfoProto
 * and TypeProto into the "as written" structures of ir/ir.h.
 *
 * Each message is read twice: a counting pass that takes singular fields
 * and sizes the repeated ones, then a filling pass over the byte range
 * that holds the repeated fields. Subgraphs recurse through attributes;
 * the position trail of decode.h bounds the nesting.
 */
#include <string.h>

#include "onnx/decode.h"
#include "util/diag.h"

enum {
  GRAPH_NODE = 1,
  GRAPH_NAME = 2,
  GRAPH_INITIALIZER = 5,
  GRAPH_DOC = 10,
  GRAPH_INPUT = 11,
  GRAPH_OUTPUT = 12,
  GRAPH_VALUE_INFO = 13,
  GRAPH_SPARSE_INITIALIZER = 15
};

enum {
  NODE_INPUT = 1,
  NODE_OUTPUT = 2,
  NODE_NAME = 3,
  NODE_OP_TYPE = 4,
  NODE_ATTRIBUTE = 5,
  NODE_DOC = 6,
  NODE_DOMAIN = 7,
  NODE_OVERLOAD = 8
};

enum {
  ATTR_NAME = 1,
  ATTR_F = 2,
  ATTR_I = 3,
  ATTR_S = 4,
  ATTR_T = 5,
  ATTR_G = 6,
  ATTR_FLOATS = 7,
  ATTR_INTS = 8,
  ATTR_STRINGS = 9,
  ATTR_TENSORS = 10,
  ATTR_GRAPHS = 11,
  ATTR_DOC = 13,
  ATTR_TP = 14,
  ATTR_TYPE_PROTOS = 15,
  ATTR_TYPE = 20,
  ATTR_REF_ATTR_NAME = 21,
  ATTR_SPARSE_TENSOR = 22,
  ATTR_SPARSE_TENSORS = 23,
  ATTR_FIELD_LIMIT
};

enum { VALUE_INFO_NAME = 1, VALUE_INFO_TYPE = 2, VALUE_INFO_DOC = 3 };

enum {
  TYPE_TENSOR = 1,
  TYPE_SEQUENCE = 4,
  TYPE_MAP = 5,
  TYPE_DENOTATION = 6,
  TYPE_OPAQUE = 7,
  TYPE_SPARSE_TENSOR = 8,
  TYPE_OPTIONAL = 9
};

enum { ATTR_TYPE_LIMIT = O2M_ATTR_TYPE_PROTOS + 1 };

/* Per attribute type: its name, the field that carries its value (number
 * and name), and whether that field is repeated. */
static const struct {
  const char *name;
  uint8_t field;
  const char *field_name;
  uint8_t list;
} attr_types[ATTR_TYPE_LIMIT] = {
    [O2M_ATTR_UNDEFINED] = {"UNDEFINED", 0, "", 0},
    [O2M_ATTR_FLOAT] = {"FLOAT", ATTR_F, "f", 0},
    [O2M_ATTR_INT] = {"INT", ATTR_I, "i", 0},
    [O2M_ATTR_STRING] = {"STRING", ATTR_S, "s", 0},
    [O2M_ATTR_TENSOR] = {"TENSOR", ATTR_T, "t", 0},
    [O2M_ATTR_GRAPH] = {"GRAPH", ATTR_G, "g", 0},
    [O2M_ATTR_FLOATS] = {"FLOATS", ATTR_FLOATS, "floats", 1},
    [O2M_ATTR_INTS] = {"INTS", ATTR_INTS, "ints", 1},
    [O2M_ATTR_STRINGS] = {"STRINGS", ATTR_STRINGS, "strings", 1},
    [O2M_ATTR_TENSORS] = {"TENSORS", ATTR_TENSORS, "tensors", 1},
    [O2M_ATTR_GRAPHS] = {"GRAPHS", ATTR_GRAPHS, "graphs", 1},
    [O2M_ATTR_SPARSE_TENSOR] = {"SPARSE_TENSOR", ATTR_SPARSE_TENSOR,
                                "sparse_tensor", 0},
    [O2M_ATTR_SPARSE_TENSORS] = {"SPARSE_TENSORS", ATTR_SPARSE_TENSORS,
                                 "sparse_tensors", 1},
    [O2M_ATTR_TYPE_PROTO] = {"TYPE_PROTO", ATTR_TP, "tp", 0},
    [O2M_ATTR_TYPE_PROTOS] = {"TYPE_PROTOS", ATTR_TYPE_PROTOS, "type_protos",
                              1},
};

/* The inverse: which attribute type a value field belongs to. */
static const uint8_t attr_type_of_field[ATTR_FIELD_LIMIT] = {
    [ATTR_F] = O2M_ATTR_FLOAT,
    [ATTR_I] = O2M_ATTR_INT,
    [ATTR_S] = O2M_ATTR_STRING,
    [ATTR_T] = O2M_ATTR_TENSOR,
    [ATTR_G] = O2M_ATTR_GRAPH,
    [ATTR_FLOATS] = O2M_ATTR_FLOATS,
    [ATTR_INTS] = O2M_ATTR_INTS,
    [ATTR_STRINGS] = O2M_ATTR_STRINGS,
    [ATTR_TENSORS] = O2M_ATTR_TENSORS,
    [ATTR_GRAPHS] = O2M_ATTR_GRAPHS,
    [ATTR_TP] = O2M_ATTR_TYPE_PROTO,
    [ATTR_TYPE_PROTOS] = O2M_ATTR_TYPE_PROTOS,
    [ATTR_SPARSE_TENSOR] = O2M_ATTR_SPARSE_TENSOR,
    [ATTR_SPARSE_TENSORS] = O2M_ATTR_SPARSE_TENSORS,
};

/* ---- TypeProto ---- */

static o2m_status decode_type(o2m_decoder *d, o2m_bytes msg, const char *kind,
                              o2m_type *out);

static o2m_status dim_body(o2m_decoder *d, o2m_bytes msg, o2m_dim *dim) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0, has_value = 0;
  const char *param = NULL;
  size_t value_offset = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    /* dim_value and dim_param form a oneof: the last one wins */
    if (f.number == 1) {
      st = o2m_dec_int64(d, &f, "dim_value", &dim->size);
      has_value = 1;
      param = NULL;
      value_offset = f.offset;
    } else if (f.number == 2) {
      st = o2m_dec_string(d, &f, "dim_param", &param);
      has_value = 0;
    }
  }
  if ((st = o2m_dec_done(d, st, r))) return st;
  if (has_value && dim->size >= 0) return O2M_OK;
  if (has_value) /* old exporters wrote -1 for "unknown" */
    o2m_dec_warn(d, value_offset, "dim_value %lld is read as an unknown dim",
                 (long long)dim->size);
  dim->size = -1;
  /* Names from the model never start with '?': that prefix marks the fresh
   * symbols (distinct unknowns), and a dim_param such as "?" means one. */
  int named = !has_value && param && param[0] && param[0] != '?';
  dim->sym = named ? param : o2m_model_fresh_symbol(d->model);
  return dim->sym ? O2M_OK : o2m_dec_nomem(d);
}

static o2m_status decode_dim(o2m_decoder *d, o2m_bytes msg, int index,
                             o2m_dim *dim) {
  o2m_where where;
  o2m_status st = o2m_dec_push(d, &where, "dim", index, o2m_dec_offset(d, msg));
  if (!st) st = dim_body(d, msg, dim);
  o2m_dec_pop(d, &where);
  return st;
}

static o2m_status shape_body(o2m_decoder *d, o2m_bytes msg, o2m_type *out) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_span span = {0};
  o2m_status st = O2M_OK;
  int r = 0, rank = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number != 1) continue;
    st = o2m_dec_count_len(d, &f, "dim", &rank);
    o2m_span_add(&span, d, &f, &w);
  }
  if ((st = o2m_dec_done(d, st, r))) return st;
  if ((st = o2m_dec_array(d, rank, sizeof(o2m_dim), &out->dims))) return st;
  out->rank = rank;
  w = o2m_span_wire(d, &span);
  int n = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0)
    if (f.number == 1 && n < rank)
      st = decode_dim(d, (o2m_bytes){f.data, f.len}, n, &out->dims[n]), n++;
  return o2m_dec_done(d, st, r);
}

/* TypeProto.Tensor and TypeProto.SparseTensor: elem_type and shape. */
static o2m_status tensor_type_body(o2m_decoder *d, o2m_bytes msg,
                                   o2m_type *out) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_bytes shape = {0};
  int64_t elem = 0;
  size_t elem_offset = o2m_dec_offset(d, msg);
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number == 1) {
      st = o2m_dec_int64(d, &f, "elem_type", &elem);
      elem_offset = f.offset;
    } else if (f.number == 2) {
      st = o2m_dec_message(d, &f, "shape", &shape);
    }
  }
  if ((st = o2m_dec_done(d, st, r))) return st;
  if (elem < 0 || elem >= O2M_DT_COUNT)
    return o2m_dec_fail(d, O2M_ERR_INVALID, elem_offset,
                        "elem_type %lld is not an element type",
                        (long long)elem);
  out->elem = (o2m_dtype)elem;
  out->rank = -1;
  return shape.ptr ? shape_body(d, shape, out) : O2M_OK;
}

/* TypeProto.Sequence, Optional and Map: the element (or value) type. */
static o2m_status inner_type_body(o2m_decoder *d, o2m_bytes msg, int is_map,
                                  o2m_type *out) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_bytes inner = {0};
  int64_t key = 0;
  size_t key_offset = o2m_dec_offset(d, msg);
  const char *inner_field = is_map ? "value_type" : "elem_type";
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (is_map && f.number == 1) {
      st = o2m_dec_int64(d, &f, "key_type", &key);
      key_offset = f.offset;
    } else if (f.number == (is_map ? 2u : 1u)) {
      st = o2m_dec_message(d, &f, inner_field, &inner);
    }
  }
  if ((st = o2m_dec_done(d, st, r))) return st;
  if (is_map && (key < 0 || key >= O2M_DT_COUNT))
    return o2m_dec_fail(d, O2M_ERR_INVALID, key_offset,
                        "key_type %lld is not an element type",
                        (long long)key);
  out->elem = (o2m_dtype)key;
  out->rank = -1;
  out->inner = o2m_arena_alloc(d->arena, sizeof(o2m_type));
  if (!out->inner) return o2m_dec_nomem(d);
  out->inner->rank = -1;
  return inner.ptr ? decode_type(d, inner, inner_field, out->inner) : O2M_OK;
}

/* The members of TypeProto's `value` oneof, by field number. */
static o2m_type_kind type_kind_of_field(uint32_t number) {
  switch (number) {
  case TYPE_TENSOR: return O2M_TYPE_TENSOR;
  case TYPE_SEQUENCE: return O2M_TYPE_SEQUENCE;
  case TYPE_MAP: return O2M_TYPE_MAP;
  case TYPE_SPARSE_TENSOR: return O2M_TYPE_SPARSE_TENSOR;
  case TYPE_OPTIONAL: return O2M_TYPE_OPTIONAL;
  default: return O2M_TYPE_UNKNOWN;
  }
}

static o2m_status type_body(o2m_decoder *d, o2m_bytes msg, o2m_type *out) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_bytes value = {0};
  uint32_t member = 0;
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number == TYPE_DENOTATION ||
        (type_kind_of_field(f.number) == O2M_TYPE_UNKNOWN &&
         f.number != TYPE_OPAQUE))
      continue;
    if (member)
      return o2m_dec_fail(d, O2M_ERR_INVALID, f.offset,
                          "a TypeProto sets more than one of tensor_type, "
                          "sequence_type, map_type, optional_type, "
                          "sparse_tensor_type and opaque_type");
    member = f.number;
    st = o2m_dec_message(d, &f, "type", &value);
  }
  if ((st = o2m_dec_done(d, st, r))) return st;
  out->kind = type_kind_of_field(member);
  out->rank = -1;
  switch (out->kind) {
  case O2M_TYPE_TENSOR:
  case O2M_TYPE_SPARSE_TENSOR:
    return tensor_type_body(d, value, out);
  case O2M_TYPE_SEQUENCE:
  case O2M_TYPE_OPTIONAL:
  case O2M_TYPE_MAP:
    return inner_type_body(d, value, out->kind == O2M_TYPE_MAP, out);
  case O2M_TYPE_UNKNOWN:
    if (member == TYPE_OPAQUE)
      o2m_warn(d->diag, "%s: an opaque type is read as an unknown type",
               d->file);
    return O2M_OK;
  }
  return O2M_OK;
}

static o2m_status decode_type(o2m_decoder *d, o2m_bytes msg, const char *kind,
                              o2m_type *out) {
  o2m_where where;
  o2m_status st = o2m_dec_push(d, &where, kind, -1, o2m_dec_offset(d, msg));
  if (!st) st = type_body(d, msg, out);
  o2m_dec_pop(d, &where);
  return st;
}

/* ---- ValueInfoProto ---- */

static o2m_status value_info_body(o2m_decoder *d, o2m_bytes msg,
                                  o2m_value_info *out, o2m_where *where) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_bytes type = {0};
  o2m_status st = O2M_OK;
  int r = 0;
  out->name = out->doc = "";
  out->type.rank = -1;
  where->name = &out->name;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number == VALUE_INFO_NAME)
      st = o2m_dec_string(d, &f, "name", &out->name);
    else if (f.number == VALUE_INFO_TYPE)
      st = o2m_dec_message(d, &f, "type", &type);
    else if (f.number == VALUE_INFO_DOC)
      st = o2m_dec_string(d, &f, "doc_string", &out->doc);
  }
  if ((st = o2m_dec_done(d, st, r))) return st;
  return type.ptr ? decode_type(d, type, "type", &out->type) : O2M_OK;
}

o2m_status o2m_dec_value_info(o2m_decoder *d, o2m_bytes msg,
                              const char *kind, int64_t index,
                              o2m_value_info *out) {
  o2m_where where;
  o2m_status st = o2m_dec_push(d, &where, kind, index, o2m_dec_offset(d, msg));
  if (!st) st = value_info_body(d, msg, out, &where);
  o2m_dec_pop(d, &where);
  return st;
}

/* ---- AttributeProto ---- */

/* What the counting pass of an attribute learns. */
typedef struct attr_scan {
  int64_t type;
  int has_type;
  unsigned seen;                    /* bit per attribute type with a field */
  int counts[ATTR_TYPE_LIMIT];      /* list lengths */
  o2m_bytes views[ATTR_TYPE_LIMIT]; /* singular payloads (s, t, g, ...) */
  o2m_span span;                    /* the list fields */
} attr_scan;

static o2m_status scan_value_field(o2m_decoder *d, const o2m_wire_field *f,
                                   const o2m_wire *w, o2m_attr *a,
                                   attr_scan *s) {
  int type = attr_type_of_field[f->number];
  const char *name = attr_types[type].field_name;
  s->seen |= 1u << type;
  switch (type) {
  case O2M_ATTR_FLOAT: {
    o2m_status st = o2m_dec_expect(d, f, O2M_WIRE_I32, name);
    uint32_t bits = (uint32_t)f->value;
    memcpy(&a->f, &bits, sizeof(bits));
    return st;
  }
  case O2M_ATTR_INT:
    return o2m_dec_int64(d, f, name, &a->i);
  case O2M_ATTR_STRING: /* a bytes field: the last occurrence wins */
    s->views[type].ptr = NULL;
    return o2m_dec_message(d, f, name, &s->views[type]);
  case O2M_ATTR_TENSOR:
  case O2M_ATTR_GRAPH:
  case O2M_ATTR_SPARSE_TENSOR:
  case O2M_ATTR_TYPE_PROTO:
    return o2m_dec_message(d, f, name, &s->views[type]);
  case O2M_ATTR_FLOATS:
  case O2M_ATTR_INTS: {
    o2m_status st = o2m_dec_count_scalars(
        d, f, name,
        type == O2M_ATTR_FLOATS ? O2M_SCALAR_FIXED32 : O2M_SCALAR_VARINT,
        &s->counts[type]);
    if (!st) o2m_span_add(&s->span, d, f, w);
    return st;
  }
  default: { /* lists of strings or messages */
    o2m_status st = o2m_dec_count_len(d, f, name, &s->counts[type]);
    if (!st) o2m_span_add(&s->span, d, f, w);
    return st;
  }
  }
}

static o2m_status scan_attr(o2m_decoder *d, o2m_bytes msg, o2m_attr *a,
                            attr_scan *s) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number == ATTR_NAME)
      st = o2m_dec_string(d, &f, "name", &a->name);
    else if (f.number == ATTR_REF_ATTR_NAME)
      st = o2m_dec_string(d, &f, "ref_attr_name", &a->ref_attr_name);
    else if (f.number == ATTR_DOC)
      st = o2m_dec_string(d, &f, "doc_string", &a->doc);
    else if (f.number == ATTR_TYPE) {
      st = o2m_dec_int64(d, &f, "type", &s->type);
      s->has_type = 1;
    } else if (f.number < ATTR_FIELD_LIMIT && attr_type_of_field[f.number])
      st = scan_value_field(d, &f, &w, a, s);
  }
  return o2m_dec_done(d, st, r);
}

/* The attribute's type: as written, or (IR version 1 models, which lack
 * the field) the one whose value field is present. */
static o2m_status settle_type(o2m_decoder *d, const attr_scan *s,
                              size_t offset, o2m_attr *a) {
  if (s->type < 0 || s->type >= ATTR_TYPE_LIMIT)
    return o2m_dec_fail(d, O2M_ERR_INVALID, offset,
                        "type %lld is not an attribute type",
                        (long long)s->type);
  unsigned seen = s->seen;
  if (s->type != O2M_ATTR_UNDEFINED) {
    a->type = (o2m_attr_type)s->type;
    if (seen & ~(1u << s->type))
      o2m_warn(d->diag,
               "%s: attribute '%s' of type %s also carries values of other "
               "types; they are ignored",
               d->file, a->name, attr_types[s->type].name);
    return O2M_OK;
  }
  if (seen && !(seen & (seen - 1))) {
    a->type = (o2m_attr_type)__builtin_ctz(seen);
    return O2M_OK;
  }
  if (!seen && a->ref_attr_name[0]) return O2M_OK;
  return o2m_dec_fail(d, O2M_ERR_INVALID, offset,
                      seen ? "no type, and values of several types"
                           : "neither a type nor a value");
}

static o2m_status read_singular_value(o2m_decoder *d, const attr_scan *s,
                                      size_t offset, o2m_node *owner,
                                      o2m_attr *a) {
  o2m_bytes view = s->views[a->type];
  if (a->type == O2M_ATTR_STRING) {
    char *copy = o2m_arena_strndup(d->arena, (const char *)view.ptr, view.len);
    if (!copy) return o2m_dec_nomem(d);
    a->s = (o2m_bytes){(const uint8_t *)copy, view.len};
    return O2M_OK;
  }
  if (!view.ptr) {
    if (a->ref_attr_name[0]) return O2M_OK;
    return o2m_dec_fail(d, O2M_ERR_INVALID, offset,
                        "an attribute of type %s without its value",
                        attr_types[a->type].name);
  }
  switch (a->type) {
  case O2M_ATTR_TENSOR:
    return o2m_dec_tensor(d, view, "tensor", -1, &a->t);
  case O2M_ATTR_GRAPH:
    return o2m_dec_graph(d, view, "graph", -1, owner, &a->g);
  case O2M_ATTR_SPARSE_TENSOR:
    return o2m_dec_sparse_tensor(d, view, "sparse_tensor", -1, &a->sparse);
  default: /* TYPE_PROTO */
    a->tp = o2m_arena_alloc(d->arena, sizeof(o2m_type));
    return a->tp ? decode_type(d, view, "type", a->tp) : o2m_dec_nomem(d);
  }
}

/* One element of a list attribute: `v` for numbers, `f` for the rest. */
static o2m_status read_list_element(o2m_decoder *d, o2m_attr *a, int i,
                                    uint64_t v, const o2m_wire_field *f,
                                    o2m_node *owner) {
  o2m_bytes msg = {f->data, f->len};
  switch (a->type) {
  case O2M_ATTR_FLOATS: {
    uint32_t bits = (uint32_t)v;
    memcpy(&a->floats[i], &bits, sizeof(bits));
    return O2M_OK;
  }
  case O2M_ATTR_INTS:
    a->ints[i] = (int64_t)v;
    return O2M_OK;
  case O2M_ATTR_STRINGS: {
    char *copy = o2m_arena_strndup(d->arena, (const char *)f->data, f->len);
    if (!copy) return o2m_dec_nomem(d);
    a->strings[i] = (o2m_bytes){(const uint8_t *)copy, f->len};
    return O2M_OK;
  }
  case O2M_ATTR_TENSORS:
    return o2m_dec_tensor(d, msg, "tensor", i, &a->tensors[i]);
  case O2M_ATTR_GRAPHS:
    return o2m_dec_graph(d, msg, "graph", i, owner, &a->graphs[i]);
  case O2M_ATTR_SPARSE_TENSORS:
    return o2m_dec_sparse_tensor(d, msg, "sparse_tensor", i, &a->sparses[i]);
  default: /* TYPE_PROTOS */
    a->tps[i] = o2m_arena_alloc(d->arena, sizeof(o2m_type));
    return a->tps[i] ? decode_type(d, msg, "type", a->tps[i])
                     : o2m_dec_nomem(d);
  }
}

static o2m_status alloc_list(o2m_decoder *d, o2m_attr *a, int n) {
  switch (a->type) {
  case O2M_ATTR_FLOATS: return o2m_dec_array(d, n, sizeof(float), &a->floats);
  case O2M_ATTR_INTS: return o2m_dec_array(d, n, sizeof(int64_t), &a->ints);
  case O2M_ATTR_STRINGS:
    return o2m_dec_array(d, n, sizeof(o2m_bytes), &a->strings);
  case O2M_ATTR_TENSORS:
    return o2m_dec_array(d, n, sizeof(o2m_tensor *), &a->tensors);
  case O2M_ATTR_GRAPHS:
    return o2m_dec_array(d, n, sizeof(o2m_graph *), &a->graphs);
  case O2M_ATTR_SPARSE_TENSORS:
    return o2m_dec_array(d, n, sizeof(o2m_sparse_tensor *), &a->sparses);
  default: /* TYPE_PROTOS */
    return o2m_dec_array(d, n, sizeof(o2m_type *), &a->tps);
  }
}

static o2m_status read_list(o2m_decoder *d, const attr_scan *s,
                            o2m_node *owner, o2m_attr *a) {
  int n = s->counts[a->type];
  o2m_status st = alloc_list(d, a, n);
  if (st) return st;
  a->count = n;
  uint32_t field = attr_types[a->type].field;
  int numeric = a->type == O2M_ATTR_FLOATS || a->type == O2M_ATTR_INTS;
  o2m_wire w = o2m_span_wire(d, &s->span);
  o2m_wire_field f;
  int r = 0, i = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number != field) continue;
    if (!numeric) {
      if (i < n) st = read_list_element(d, a, i++, 0, &f, owner);
      continue;
    }
    o2m_wire_scalars it;
    uint64_t v;
    o2m_wire_scalars_begin(&it, d->base, &f,
                           a->type == O2M_ATTR_FLOATS ? O2M_SCALAR_FIXED32
                                                      : O2M_SCALAR_VARINT);
    while (!st && (r = o2m_dec_next_scalar(d, &it, &v)) > 0 && i < n)
      st = read_list_element(d, a, i++, v, &f, owner);
    if (r < 0) break;
  }
  return o2m_dec_done(d, st, r);
}

static o2m_status attr_body(o2m_decoder *d, o2m_bytes msg, o2m_node *owner,
                            o2m_attr *a, o2m_where *where) {
  attr_scan s;
  memset(&s, 0, sizeof(s));
  a->name = a->ref_attr_name = a->doc = "";
  where->name = &a->name;
  o2m_status st = scan_attr(d, msg, a, &s);
  if (st) return st;
  size_t offset = o2m_dec_offset(d, msg);
  if (!a->name[0])
    return o2m_dec_fail(d, O2M_ERR_INVALID, offset, "attribute has no name");
  if ((st = settle_type(d, &s, offset, a))) return st;
  if (a->type == O2M_ATTR_UNDEFINED || a->type == O2M_ATTR_FLOAT ||
      a->type == O2M_ATTR_INT)
    return O2M_OK;
  if (attr_types[a->type].list) return read_list(d, &s, owner, a);
  return read_singular_value(d, &s, offset, owner, a);
}

o2m_status o2m_dec_attr(o2m_decoder *d, o2m_bytes msg, int64_t index,
                        o2m_node *owner, o2m_attr *out) {
  o2m_where where;
  o2m_status st =
      o2m_dec_push(d, &where, "attribute", index, o2m_dec_offset(d, msg));
  if (!st) st = attr_body(d, msg, owner, out, &where);
  o2m_dec_pop(d, &where);
  return st;
}

/* ---- NodeProto ---- */

static o2m_status node_body(o2m_decoder *d, o2m_bytes msg, o2m_node *node,
                            o2m_where *where) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_span span = {0};
  o2m_status st = O2M_OK;
  int r = 0;
  node->name = node->op_type = node->domain = node->overload = node->doc = "";
  where->name = &node->name;
  where->op = &node->op_type;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    switch (f.number) {
    case NODE_INPUT:
      st = o2m_dec_count_len(d, &f, "input", &node->n_inputs);
      o2m_span_add(&span, d, &f, &w);
      break;
    case NODE_OUTPUT:
      st = o2m_dec_count_len(d, &f, "output", &node->n_outputs);
      o2m_span_add(&span, d, &f, &w);
      break;
    case NODE_ATTRIBUTE:
      st = o2m_dec_count_len(d, &f, "attribute", &node->n_attrs);
      o2m_span_add(&span, d, &f, &w);
      break;
    case NODE_NAME: st = o2m_dec_string(d, &f, "name", &node->name); break;
    case NODE_OP_TYPE:
      st = o2m_dec_string(d, &f, "op_type", &node->op_type);
      break;
    case NODE_DOMAIN: st = o2m_dec_domain(d, &f, "domain", &node->domain); break;
    case NODE_OVERLOAD:
      st = o2m_dec_string(d, &f, "overload", &node->overload);
      break;
    case NODE_DOC: st = o2m_dec_string(d, &f, "doc_string", &node->doc); break;
    default: break;
    }
  }
  if ((st = o2m_dec_done(d, st, r))) return st;
  if (!node->op_type[0])
    return o2m_dec_fail(d, O2M_ERR_INVALID, o2m_dec_offset(d, msg),
                        "node has no op_type");
  if ((st = o2m_dec_array(d, node->n_inputs, sizeof(char *),
                        &node->input_names)) ||
      (st = o2m_dec_array(d, node->n_outputs, sizeof(char *),
                        &node->output_names)) ||
      (st = o2m_dec_array(d, node->n_attrs, sizeof(o2m_attr), &node->attrs)))
    return st;
  w = o2m_span_wire(d, &span);
  int n_in = 0, n_out = 0, n_attr = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number == NODE_INPUT && n_in < node->n_inputs)
      st = o2m_dec_string(d, &f, "input", &node->input_names[n_in++]);
    else if (f.number == NODE_OUTPUT && n_out < node->n_outputs)
      st = o2m_dec_string(d, &f, "output", &node->output_names[n_out++]);
    else if (f.number == NODE_ATTRIBUTE && n_attr < node->n_attrs)
      st = o2m_dec_attr(d, (o2m_bytes){f.data, f.len}, n_attr,
                        node, &node->attrs[n_attr]),
      n_attr++;
  }
  return o2m_dec_done(d, st, r);
}

o2m_status o2m_dec_node(o2m_decoder *d, o2m_bytes msg, int64_t index,
                        o2m_graph *graph, o2m_node **out) {
  o2m_where where;
  o2m_status st = o2m_dec_push(d, &where, "node", index, o2m_dec_offset(d, msg));
  o2m_node *node = NULL;
  if (!st && !(node = o2m_arena_alloc(d->arena, sizeof(*node))))
    st = o2m_dec_nomem(d);
  if (!st) {
    node->graph = graph;
    st = node_body(d, msg, node, &where);
  }
  o2m_dec_pop(d, &where);
  *out = node;
  return st;
}

/* ---- GraphProto ---- */

static o2m_status scan_graph(o2m_decoder *d, o2m_bytes msg, o2m_graph *g,
                             o2m_span *span) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    int *count = NULL;
    const char *field = NULL;
    switch (f.number) {
    case GRAPH_NODE: count = &g->n_nodes, field = "node"; break;
    case GRAPH_INITIALIZER: count = &g->n_inits, field = "initializer"; break;
    case GRAPH_SPARSE_INITIALIZER:
      count = &g->n_sparse_inits, field = "sparse_initializer";
      break;
    case GRAPH_INPUT: count = &g->n_inputs, field = "input"; break;
    case GRAPH_OUTPUT: count = &g->n_outputs, field = "output"; break;
    case GRAPH_VALUE_INFO:
      count = &g->n_value_infos, field = "value_info";
      break;
    case GRAPH_NAME: st = o2m_dec_string(d, &f, "name", &g->name); break;
    case GRAPH_DOC: st = o2m_dec_string(d, &f, "doc_string", &g->doc); break;
    default: break;
    }
    if (count) {
      st = o2m_dec_count_len(d, &f, field, count);
      o2m_span_add(span, d, &f, &w);
    }
  }
  return o2m_dec_done(d, st, r);
}

static o2m_status fill_graph(o2m_decoder *d, const o2m_span *span,
                             o2m_graph *g) {
  o2m_wire w = o2m_span_wire(d, span);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  int n_node = 0, n_init = 0, n_sparse = 0, n_in = 0, n_out = 0, n_vi = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    o2m_bytes msg = {f.data, f.len};
    if (f.number == GRAPH_NODE && n_node < g->n_nodes)
      st = o2m_dec_node(d, msg, n_node, g, &g->nodes[n_node]), n_node++;
    else if (f.number == GRAPH_INITIALIZER && n_init < g->n_inits)
      st = o2m_dec_tensor(d, msg, "initializer", n_init, &g->inits[n_init]),
      n_init++;
    else if (f.number == GRAPH_SPARSE_INITIALIZER &&
             n_sparse < g->n_sparse_inits)
      st = o2m_dec_sparse_tensor(d, msg, "sparse_initializer", n_sparse,
                                 &g->sparse_inits[n_sparse]),
      n_sparse++;
    else if (f.number == GRAPH_INPUT && n_in < g->n_inputs)
      st = o2m_dec_value_info(d, msg, "input", n_in, &g->inputs[n_in]),
      n_in++;
    else if (f.number == GRAPH_OUTPUT && n_out < g->n_outputs)
      st = o2m_dec_value_info(d, msg, "output", n_out, &g->outputs[n_out]),
      n_out++;
    else if (f.number == GRAPH_VALUE_INFO && n_vi < g->n_value_infos)
      st = o2m_dec_value_info(d, msg, "value_info", n_vi,
                              &g->value_infos[n_vi]),
      n_vi++;
  }
  return o2m_dec_done(d, st, r);
}

static o2m_status graph_body(o2m_decoder *d, o2m_bytes msg, o2m_graph *g,
                             o2m_where *where) {
  o2m_span span = {0};
  g->name = g->doc = "";
  where->name = &g->name;
  o2m_status st = scan_graph(d, msg, g, &span);
  if (st) return st;
  if ((st = o2m_dec_array(d, g->n_nodes, sizeof(o2m_node *), &g->nodes)) ||
      (st = o2m_dec_array(d, g->n_inits, sizeof(o2m_tensor *), &g->inits)) ||
      (st = o2m_dec_array(d, g->n_sparse_inits, sizeof(o2m_sparse_tensor *),
                        &g->sparse_inits)) ||
      (st = o2m_dec_array(d, g->n_inputs, sizeof(o2m_value_info),
                        &g->inputs)) ||
      (st = o2m_dec_array(d, g->n_outputs, sizeof(o2m_value_info),
                        &g->outputs)) ||
      (st = o2m_dec_array(d, g->n_value_infos, sizeof(o2m_value_info),
                        &g->value_infos)))
    return st;
  return fill_graph(d, &span, g);
}

o2m_status o2m_dec_graph(o2m_decoder *d, o2m_bytes msg, const char *kind,
                         int64_t index, o2m_node *owner, o2m_graph **out) {
  o2m_where where;
  o2m_status st = o2m_dec_push(d, &where, kind, index, o2m_dec_offset(d, msg));
  o2m_graph *g = NULL;
  if (!st && !(g = o2m_arena_alloc(d->arena, sizeof(*g))))
    st = o2m_dec_nomem(d);
  if (!st) {
    g->owner = owner;
    g->parent = owner ? owner->graph : NULL;
    st = graph_body(d, msg, g, &where);
  }
  o2m_dec_pop(d, &where);
  *out = g;
  return st;
}
