/* test_decode.c - unit tests of the ONNX reader (src/onnx) on protobuf
 * bytes built by hand: every message kind, old-style attributes, unknown
 * fields, malformed and truncated input, tensor payloads of every dtype,
 * external data (under a temporary directory in /tmp) and the dtype
 * helpers of ir.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "onnx/reader.h"

/* ---- a protobuf writer ---------------------------------------------- */

typedef struct pb {
  uint8_t *b;
  size_t n, cap;
} pb;

static pb *every_pb[16384];
static int n_pbs;

static pb *pb_new(void) {
  pb *p = calloc(1, sizeof(*p));
  if (!p || n_pbs == 16384) abort();
  every_pb[n_pbs++] = p;
  return p;
}

static void pb_free_all(void) {
  for (int i = 0; i < n_pbs; i++) free(every_pb[i]->b), free(every_pb[i]);
  n_pbs = 0;
}

static void put_raw(pb *p, const void *data, size_t n) {
  if (p->n + n > p->cap) {
    p->cap = (p->n + n) * 2 + 64;
    p->b = realloc(p->b, p->cap);
    if (!p->b) abort();
  }
  if (n) memcpy(p->b + p->n, data, n);
  p->n += n;
}

static void put_varint(pb *p, uint64_t v) {
  do {
    uint8_t byte = (uint8_t)(v & 0x7F) | (v > 0x7F ? 0x80 : 0);
    put_raw(p, &byte, 1);
    v >>= 7;
  } while (v);
}

static void put_tag(pb *p, unsigned field, int type) {
  put_varint(p, (uint64_t)field << 3 | (unsigned)type);
}
static void put_int(pb *p, unsigned field, int64_t v) {
  put_tag(p, field, 0);
  put_varint(p, (uint64_t)v);
}
static void put_len(pb *p, unsigned field, const void *data, size_t n) {
  put_tag(p, field, 2);
  put_varint(p, n);
  put_raw(p, data, n);
}
static void put_str(pb *p, unsigned field, const char *s) {
  put_len(p, field, s, strlen(s));
}
static void put_msg(pb *p, unsigned field, const pb *m) {
  put_len(p, field, m->b, m->n);
}
static void put_fixed32(pb *p, unsigned field, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                  (uint8_t)(v >> 24)};
  put_tag(p, field, 5);
  put_raw(p, b, 4);
}
static void put_fixed64(pb *p, unsigned field, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
  put_tag(p, field, 1);
  put_raw(p, b, 8);
}
static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static void put_float(pb *p, unsigned field, float f) {
  put_fixed32(p, field, float_bits(f));
}
static void put_packed(pb *p, unsigned field, const int64_t *v, int n) {
  pb *run = pb_new();
  for (int i = 0; i < n; i++) put_varint(run, (uint64_t)v[i]);
  put_msg(p, field, run);
}
/* One unknown field of every wire type, a group included. */
static void put_unknowns(pb *p) {
  put_int(p, 900, 12345);
  put_fixed64(p, 901, 1);
  put_str(p, 902, "ignored");
  put_fixed32(p, 903, 2);
  put_tag(p, 904, 3);
  put_int(p, 1, 7);
  put_tag(p, 904, 4);
}

/* ---- ONNX message builders ------------------------------------------ */

static pb *tensor_pb(const char *name, int dtype, const int64_t *dims,
                     int rank) {
  pb *t = pb_new();
  put_packed(t, 1, dims, rank);
  put_int(t, 2, dtype);
  put_str(t, 8, name);
  return t;
}

/* TypeProto.tensor_type with a shape; dims < 0 have neither value nor
 * param, params[i] (when non-NULL) names a dim. rank < 0: no shape. */
static pb *tensor_type_pb(int elem, const int64_t *dims, const char **params,
                          int rank) {
  pb *tt = pb_new(), *shape = pb_new(), *type = pb_new();
  put_int(tt, 1, elem);
  for (int i = 0; i < rank; i++) {
    pb *dim = pb_new();
    if (params && params[i])
      put_str(dim, 2, params[i]);
    else if (dims[i] >= 0)
      put_int(dim, 1, dims[i]);
    put_str(dim, 3, "denotation");
    put_msg(shape, 1, dim);
  }
  if (rank >= 0) put_msg(tt, 2, shape);
  put_msg(type, 1, tt);
  return type;
}

static pb *value_info_pb(const char *name, const pb *type) {
  pb *vi = pb_new();
  put_str(vi, 1, name);
  if (type) put_msg(vi, 2, type);
  return vi;
}

static pb *node_pb(const char *op, const char *name, const char **inputs,
                   int n_in, const char **outputs, int n_out) {
  pb *n = pb_new();
  for (int i = 0; i < n_in; i++) put_str(n, 1, inputs[i]);
  for (int i = 0; i < n_out; i++) put_str(n, 2, outputs[i]);
  put_str(n, 3, name);
  put_str(n, 4, op);
  return n;
}

static pb *model_pb(const pb *graph) {
  pb *m = pb_new(), *opset = pb_new();
  put_int(m, 1, 8);
  put_str(opset, 1, "ai.onnx");
  put_int(opset, 2, 17);
  put_msg(m, 8, opset);
  if (graph) put_msg(m, 7, graph);
  return m;
}

/* A model whose graph holds one node. */
static pb *model_with_node(const pb *node) {
  pb *g = pb_new();
  put_msg(g, 1, node);
  put_str(g, 2, "main");
  return model_pb(g);
}

/* ---- decoding -------------------------------------------------------- */

static o2m_model *decode_bytes(const uint8_t *bytes, size_t n,
                               const char *base_dir, o2m_status *st,
                               o2m_diag *diag) {
  o2m_model *m = calloc(1, sizeof(*m));
  if (!m) abort();
  m->path = "m.onnx";
  m->base_dir = base_dir;
  memset(diag, 0, sizeof(*diag));
  *st = o2m_decode_model(m, bytes, n, diag);
  return m;
}

static o2m_model *decode(const pb *p, o2m_status *st, o2m_diag *diag) {
  return decode_bytes(p->b, p->n, NULL, st, diag);
}

static void release(o2m_model *m) {
  for (int i = 0; i < m->n_mappings; i++) o2m_unmap_file(&m->mappings[i]);
  o2m_arena_free(&m->arena);
  free(m);
}

/* Decodes and releases; returns the status and leaves the message. */
static o2m_status try_decode(const pb *p, o2m_diag *diag) {
  o2m_status st;
  release(decode(p, &st, diag));
  return st;
}

static o2m_status decode_standalone(const pb *t, o2m_arena *arena,
                                    o2m_tensor **out, o2m_diag *diag) {
  memset(diag, 0, sizeof(*diag));
  return o2m_decode_tensor(arena, t->b, t->n, "t.pb", out, diag);
}

/* ---- tests ----------------------------------------------------------- */

static void test_full_model(void) {
  pb *g = pb_new();
  /* node 0: Add with a missing optional input, an attribute of each kind */
  const char *in[] = {"x", "", "w"}, *out[] = {"y"};
  pb *n = node_pb("Conv", "conv1", in, 3, out, 1);
  put_str(n, 7, "ai.onnx");
  pb *a = pb_new();
  put_str(a, 1, "pads");
  put_int(a, 20, 7);
  int64_t pads[] = {1, -2, 3};
  put_packed(a, 8, pads, 3);
  put_int(a, 8, 4); /* an unpacked element after the packed run */
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "alpha");
  put_int(a, 20, 1);
  put_float(a, 2, 0.5f);
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "scales");
  put_int(a, 20, 6);
  put_float(a, 7, 1.5f);
  put_float(a, 7, -2.0f);
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "mode");
  put_int(a, 20, 3);
  put_str(a, 4, "linear");
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "names");
  put_int(a, 20, 8);
  put_str(a, 9, "p");
  put_str(a, 9, "qq");
  put_msg(n, 5, a);
  int64_t d3[] = {3};
  pb *t = tensor_pb("", 7, d3, 1);
  int64_t vals[] = {10, -20, 30};
  put_packed(t, 7, vals, 3);
  a = pb_new();
  put_str(a, 1, "value");
  put_int(a, 20, 4);
  put_msg(a, 5, t);
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "dtype");
  put_int(a, 20, 13);
  put_msg(a, 14, tensor_type_pb(1, NULL, NULL, -1));
  put_msg(n, 5, a);
  put_unknowns(n);
  put_msg(g, 1, n);

  /* node 1: If with a subgraph holding one node */
  pb *sub = pb_new();
  const char *sin[] = {"y"}, *sout[] = {"z"};
  put_msg(sub, 1, node_pb("Relu", "", sin, 1, sout, 1));
  put_str(sub, 2, "then");
  put_msg(sub, 12, value_info_pb("z", NULL));
  const char *iin[] = {"c"}, *iout[] = {"r"};
  n = node_pb("If", "if", iin, 1, iout, 1);
  a = pb_new();
  put_str(a, 1, "then_branch");
  put_int(a, 20, 5);
  put_msg(a, 6, sub);
  put_msg(n, 5, a);
  put_str(n, 7, "com.example");
  put_msg(g, 1, n);

  put_str(g, 2, "main");
  put_str(g, 10, "doc");
  /* inputs: a shaped one with value, param and unknown dims; an unranked
   * one; a sequence, a map, an optional and a sparse one */
  int64_t dims[] = {2, -1, -1};
  const char *params[] = {NULL, "N", NULL};
  put_msg(g, 11, value_info_pb("x", tensor_type_pb(1, dims, params, 3)));
  put_msg(g, 11, value_info_pb("u", tensor_type_pb(7, NULL, NULL, -1)));
  pb *seq = pb_new(), *seq_type = pb_new();
  put_msg(seq, 1, tensor_type_pb(1, NULL, NULL, 0));
  put_msg(seq_type, 4, seq);
  put_msg(g, 11, value_info_pb("s", seq_type));
  pb *map = pb_new(), *map_type = pb_new();
  put_int(map, 1, 8);
  put_msg(map, 2, tensor_type_pb(11, NULL, NULL, -1));
  put_msg(map_type, 5, map);
  put_msg(g, 11, value_info_pb("m", map_type));
  pb *opt = pb_new(), *opt_type = pb_new();
  put_msg(opt, 1, seq_type);
  put_msg(opt_type, 9, opt);
  put_str(opt_type, 6, "denotation");
  put_msg(g, 11, value_info_pb("o", opt_type));
  pb *sparse_tt = pb_new(), *sparse_type = pb_new(), *sshape = pb_new(),
     *sdim = pb_new();
  put_int(sparse_tt, 1, 1);
  put_int(sdim, 1, 10);
  put_msg(sshape, 1, sdim);
  put_msg(sparse_tt, 2, sshape);
  put_msg(sparse_type, 8, sparse_tt);
  put_msg(g, 11, value_info_pb("sp", sparse_type));
  put_msg(g, 12, value_info_pb("r", tensor_type_pb(1, NULL, NULL, -1)));
  put_msg(g, 13, value_info_pb("y", NULL));

  /* initializers: raw float [2,3]; sparse [10] with 2 values */
  int64_t d23[] = {2, 3};
  t = tensor_pb("w", 1, d23, 2);
  float raw[6] = {1, 2, 3, 4, 5, 6};
  put_len(t, 9, raw, sizeof(raw));
  put_str(t, 12, "weights");
  put_unknowns(t);
  put_msg(g, 5, t);
  int64_t d2[] = {2}, d10[] = {10};
  pb *sv = tensor_pb("sp", 1, d2, 1), *si = tensor_pb("", 7, d2, 1);
  put_float(sv, 4, 7.0f);
  put_float(sv, 4, 8.0f);
  int64_t idx[] = {1, 9};
  put_packed(si, 7, idx, 2);
  pb *sp = pb_new();
  put_msg(sp, 1, sv);
  put_msg(sp, 2, si);
  put_packed(sp, 3, d10, 1);
  put_msg(g, 15, sp);
  put_unknowns(g);

  pb *m = model_pb(g);
  put_str(m, 2, "producer");
  put_str(m, 3, "1.0");
  put_str(m, 4, "org.test");
  put_int(m, 5, 42);
  pb *kv = pb_new();
  put_str(kv, 1, "key");
  put_str(kv, 2, "value");
  put_msg(m, 14, kv);
  pb *opset = pb_new();
  put_str(opset, 1, "com.example");
  put_int(opset, 2, 3);
  put_msg(m, 8, opset);
  /* a function with an attribute default */
  pb *fn = pb_new();
  put_str(fn, 1, "MyFn");
  put_str(fn, 10, "com.example");
  put_str(fn, 4, "a");
  put_str(fn, 5, "b");
  put_str(fn, 6, "k");
  a = pb_new();
  put_str(a, 1, "k2");
  put_int(a, 20, 2);
  put_int(a, 3, 5);
  put_msg(fn, 11, a);
  const char *fin[] = {"a"}, *fout[] = {"b"};
  pb *fnode = node_pb("Neg", "", fin, 1, fout, 1);
  a = pb_new();
  put_str(a, 1, "kk");
  put_str(a, 21, "k");
  put_int(a, 20, 2);
  put_msg(fnode, 5, a);
  put_msg(fn, 7, fnode);
  put_msg(fn, 9, opset);
  put_msg(m, 25, fn);
  put_unknowns(m);

  o2m_status st;
  o2m_diag diag;
  o2m_model *model = decode(m, &st, &diag);
  CHECK(st == O2M_OK);
  if (st) {
    fprintf(stderr, "%s\n", diag.message);
    release(model);
    return;
  }
  CHECK(model->ir_version == 8 && model->model_version == 42);
  CHECK(!strcmp(model->producer_name, "producer") &&
        !strcmp(model->producer_version, "1.0") &&
        !strcmp(model->domain, "org.test") && !strcmp(model->doc, ""));
  CHECK(model->n_opsets == 2 && !strcmp(model->opsets[0].domain, "") &&
        model->opsets[0].version == 17 &&
        !strcmp(model->opsets[1].domain, "com.example"));
  CHECK(model->n_metadata == 1 && !strcmp(model->metadata[0].key, "key") &&
        !strcmp(model->metadata[0].value, "value"));
  CHECK(model->n_functions == 1);
  const o2m_function *f = &model->functions[0];
  CHECK(!strcmp(f->name, "MyFn") && !strcmp(f->domain, "com.example") &&
        f->n_inputs == 1 && !strcmp(f->inputs[0], "a") && f->n_outputs == 1 &&
        f->n_attr_names == 1 && !strcmp(f->attr_names[0], "k") &&
        f->n_attr_defaults == 1 && f->attr_defaults[0].i == 5 &&
        f->n_nodes == 1 && f->n_opsets == 1 && f->nodes[0]->graph == NULL);
  CHECK(!strcmp(f->nodes[0]->attrs[0].ref_attr_name, "k") &&
        f->nodes[0]->attrs[0].type == O2M_ATTR_INT);

  const o2m_graph *gr = model->graph;
  CHECK(!strcmp(gr->name, "main") && !strcmp(gr->doc, "doc"));
  CHECK(gr->n_nodes == 2 && gr->n_inputs == 6 && gr->n_outputs == 1 &&
        gr->n_value_infos == 1 && gr->n_inits == 1 && gr->n_sparse_inits == 1);
  const o2m_node *conv = gr->nodes[0];
  CHECK(!strcmp(conv->op_type, "Conv") && !strcmp(conv->name, "conv1") &&
        !strcmp(conv->domain, "") && conv->graph == gr);
  CHECK(conv->n_inputs == 3 && !strcmp(conv->input_names[1], "") &&
        !strcmp(conv->input_names[2], "w") && conv->n_outputs == 1);
  CHECK(conv->n_attrs == 7);
  const o2m_attr *at = &conv->attrs[0];
  CHECK(!strcmp(at->name, "pads") && at->type == O2M_ATTR_INTS &&
        at->count == 4 && at->ints[0] == 1 && at->ints[1] == -2 &&
        at->ints[3] == 4);
  at = &conv->attrs[1];
  CHECK(at->type == O2M_ATTR_FLOAT && at->f == 0.5f);
  at = &conv->attrs[2];
  CHECK(at->type == O2M_ATTR_FLOATS && at->count == 2 &&
        at->floats[0] == 1.5f && at->floats[1] == -2.0f);
  at = &conv->attrs[3];
  CHECK(at->type == O2M_ATTR_STRING && at->s.len == 6 &&
        !strcmp((const char *)at->s.ptr, "linear"));
  at = &conv->attrs[4];
  CHECK(at->type == O2M_ATTR_STRINGS && at->count == 2 &&
        at->strings[1].len == 2 && !memcmp(at->strings[1].ptr, "qq", 2));
  at = &conv->attrs[5];
  CHECK(at->type == O2M_ATTR_TENSOR && at->t->dtype == O2M_DT_INT64 &&
        at->t->count == 3 && at->t->origin == O2M_DATA_DECODED);
  int64_t decoded[3];
  memcpy(decoded, at->t->data, sizeof(decoded));
  CHECK(decoded[0] == 10 && decoded[1] == -20 && decoded[2] == 30);
  at = &conv->attrs[6];
  CHECK(at->type == O2M_ATTR_TYPE_PROTO && at->tp->kind == O2M_TYPE_TENSOR &&
        at->tp->rank == -1);

  const o2m_node *iff = gr->nodes[1];
  CHECK(!strcmp(iff->domain, "com.example") && iff->n_attrs == 1);
  const o2m_graph *then = iff->attrs[0].g;
  CHECK(iff->attrs[0].type == O2M_ATTR_GRAPH && then &&
        !strcmp(then->name, "then") && then->n_nodes == 1 &&
        then->owner == iff && then->parent == gr &&
        !strcmp(then->nodes[0]->op_type, "Relu") &&
        then->outputs[0].type.kind == O2M_TYPE_UNKNOWN);

  const o2m_type *x = &gr->inputs[0].type;
  CHECK(x->kind == O2M_TYPE_TENSOR && x->elem == O2M_DT_FLOAT &&
        x->rank == 3 && x->dims[0].size == 2 && !x->dims[0].sym &&
        x->dims[1].size == -1 && !strcmp(x->dims[1].sym, "N") &&
        x->dims[2].size == -1 && o2m_symbol_is_fresh(x->dims[2].sym));
  CHECK(gr->inputs[1].type.rank == -1 &&
        gr->inputs[1].type.elem == O2M_DT_INT64);
  const o2m_type *s = &gr->inputs[2].type;
  CHECK(s->kind == O2M_TYPE_SEQUENCE && s->inner->kind == O2M_TYPE_TENSOR &&
        s->inner->rank == 0);
  const o2m_type *mt = &gr->inputs[3].type;
  CHECK(mt->kind == O2M_TYPE_MAP && mt->elem == O2M_DT_STRING &&
        mt->inner->elem == O2M_DT_DOUBLE);
  const o2m_type *ot = &gr->inputs[4].type;
  CHECK(ot->kind == O2M_TYPE_OPTIONAL &&
        ot->inner->kind == O2M_TYPE_SEQUENCE);
  const o2m_type *spt = &gr->inputs[5].type;
  CHECK(spt->kind == O2M_TYPE_SPARSE_TENSOR && spt->rank == 1 &&
        spt->dims[0].size == 10);
  CHECK(gr->value_infos[0].type.kind == O2M_TYPE_UNKNOWN);

  const o2m_tensor *w = gr->inits[0];
  CHECK(!strcmp(w->name, "w") && w->dtype == O2M_DT_FLOAT && w->rank == 2 &&
        w->count == 6 && w->nbytes == 24 && w->origin == O2M_DATA_INLINE &&
        !strcmp(w->doc, "weights"));
  /* raw_data is a view into the buffer, not a copy */
  CHECK(w->data > m->b && w->data + 24 <= m->b + m->n &&
        !memcmp(w->data, raw, 24));
  const o2m_sparse_tensor *spi = gr->sparse_inits[0];
  CHECK(spi->rank == 1 && spi->dims[0] == 10 && spi->values->count == 2 &&
        spi->indices->dtype == O2M_DT_INT64 &&
        !strcmp(spi->values->name, "sp"));
  CHECK(model->n_external == 0);
  release(model);
}

static void test_untyped_attributes(void) {
  o2m_diag diag;
  o2m_status st;
  const char *in[] = {"x"}, *out[] = {"y"};
  /* IR version 1: no `type`; the value field says what it is */
  pb *n = node_pb("Foo", "", in, 1, out, 1);
  pb *a = pb_new();
  put_str(a, 1, "i");
  put_int(a, 3, -3);
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "fs");
  put_float(a, 7, 1.0f);
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "g");
  pb *sub = pb_new();
  put_str(sub, 2, "body");
  put_msg(a, 6, sub);
  put_msg(n, 5, a);
  o2m_model *m = decode(model_with_node(n), &st, &diag);
  CHECK(st == O2M_OK);
  if (!st) {
    const o2m_node *node = m->graph->nodes[0];
    CHECK(node->attrs[0].type == O2M_ATTR_INT && node->attrs[0].i == -3);
    CHECK(node->attrs[1].type == O2M_ATTR_FLOATS && node->attrs[1].count == 1);
    CHECK(node->attrs[2].type == O2M_ATTR_GRAPH &&
          !strcmp(node->attrs[2].g->name, "body"));
  }
  release(m);

  /* no type and no value: refused, naming the attribute */
  n = node_pb("Foo", "n", in, 1, out, 1);
  a = pb_new();
  put_str(a, 1, "empty");
  put_msg(n, 5, a);
  st = try_decode(model_with_node(n), &diag);
  CHECK(st == O2M_ERR_INVALID && strstr(diag.message, "attribute 0 'empty'"));
  /* no type and values of two kinds */
  n = node_pb("Foo", "n", in, 1, out, 1);
  a = pb_new();
  put_str(a, 1, "both");
  put_int(a, 3, 1);
  put_float(a, 2, 1.0f);
  put_msg(n, 5, a);
  CHECK(try_decode(model_with_node(n), &diag) == O2M_ERR_INVALID);
  /* a type that does not exist */
  n = node_pb("Foo", "n", in, 1, out, 1);
  a = pb_new();
  put_str(a, 1, "bad");
  put_int(a, 20, 99);
  put_msg(n, 5, a);
  CHECK(try_decode(model_with_node(n), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "not an attribute type"));
  /* GRAPH type without its graph */
  n = node_pb("Foo", "n", in, 1, out, 1);
  a = pb_new();
  put_str(a, 1, "g");
  put_int(a, 20, 5);
  put_msg(n, 5, a);
  CHECK(try_decode(model_with_node(n), &diag) == O2M_ERR_INVALID);
  /* a reference attribute carries no value */
  n = node_pb("Foo", "n", in, 1, out, 1);
  a = pb_new();
  put_str(a, 1, "r");
  put_str(a, 21, "outer");
  put_msg(n, 5, a);
  m = decode(model_with_node(n), &st, &diag);
  CHECK(st == O2M_OK && m->graph->nodes[0]->attrs[0].type ==
                            O2M_ATTR_UNDEFINED);
  release(m);
}

static void test_node_errors(void) {
  o2m_diag diag;
  const char *in[] = {"x"}, *out[] = {"y"};
  /* the error names file, graph, node, op, attribute and byte */
  pb *n = node_pb("Conv", "conv1", in, 1, out, 1);
  pb *a = pb_new();
  put_str(a, 1, "pads");
  put_int(a, 20, 7);
  uint8_t cut_run[] = {0x01, 0x80};
  put_len(a, 8, cut_run, 2);
  put_msg(n, 5, a);
  pb *m = model_with_node(n);
  CHECK(try_decode(m, &diag) == O2M_ERR_PARSE);
  const char *prefix =
      "m.onnx: graph 'main' node 0 'conv1' (Conv) attribute 0 'pads': ";
  CHECK(!strncmp(diag.message, prefix, strlen(prefix)) &&
        strstr(diag.message, "truncated varint at byte"));
  /* the byte offset points at the offending byte: the last of the run
   * that follows the field's tag (8 << 3 | 2) and length */
  size_t at = 0;
  for (size_t i = 0; i + 4 <= m->n; i++)
    if (m->b[i] == 0x42 && m->b[i + 1] == 2 && m->b[i + 2] == 0x01 &&
        m->b[i + 3] == 0x80)
      at = i + 3;
  char expect[64];
  snprintf(expect, sizeof(expect), "at byte %zu", at);
  CHECK(strstr(diag.message, expect) != NULL);

  /* a node without op_type */
  n = node_pb("", "nameless", in, 1, out, 1);
  CHECK(try_decode(model_with_node(n), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "op_type"));
  /* a wrong wire type for a known field names the field */
  n = node_pb("Relu", "", in, 1, out, 1);
  put_int(n, 3, 5); /* name as a varint */
  CHECK(try_decode(model_with_node(n), &diag) == O2M_ERR_PARSE &&
        strstr(diag.message, "(name)"));
  /* an embedded NUL in a name */
  n = node_pb("Relu", "", in, 1, out, 1);
  put_len(n, 1, "a\0b", 3);
  CHECK(try_decode(model_with_node(n), &diag) == O2M_ERR_INVALID);
}

static void test_model_errors(void) {
  o2m_diag diag;
  o2m_status st;
  /* no graph, and an empty buffer */
  CHECK(try_decode(model_pb(NULL), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "no graph"));
  o2m_model *m = decode_bytes(NULL, 0, NULL, &st, &diag);
  CHECK(st == O2M_ERR_INVALID);
  release(m);
  /* ir_version with the wrong wire type */
  pb *p = pb_new();
  put_str(p, 1, "eight");
  CHECK(try_decode(p, &diag) == O2M_ERR_PARSE &&
        strstr(diag.message, "ir_version"));
  /* a graph given twice */
  pb *g = pb_new();
  put_str(g, 2, "g");
  p = model_pb(g);
  put_msg(p, 7, g);
  CHECK(try_decode(p, &diag) == O2M_ERR_UNSUPPORTED);
  /* a length that runs past the end */
  uint8_t past[] = {0x3A, 0x10, 0x12, 0x01, 'g'};
  m = decode_bytes(past, sizeof(past), NULL, &st, &diag);
  CHECK(st == O2M_ERR_PARSE && strstr(diag.message, "past the end") &&
        strstr(diag.message, "at byte 1"));
  release(m);
  /* a TypeProto with two members */
  pb *type = tensor_type_pb(1, NULL, NULL, -1);
  pb *seq = pb_new();
  put_msg(type, 4, seq);
  g = pb_new();
  put_msg(g, 11, value_info_pb("x", type));
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID);
  /* a negative dim_value, and an element type out of range */
  int64_t neg[] = {-5};
  pb *dim = pb_new(), *shape = pb_new(), *tt = pb_new();
  put_int(dim, 1, neg[0]);
  put_msg(shape, 1, dim);
  put_int(tt, 1, 1);
  put_msg(tt, 2, shape);
  type = pb_new();
  put_msg(type, 1, tt);
  g = pb_new();
  put_msg(g, 11, value_info_pb("x", type));
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "input 0 'x' type dim 0: dim_value is negative"));
  g = pb_new();
  put_msg(g, 11, value_info_pb("x", tensor_type_pb(99, NULL, NULL, -1)));
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID);
}

/* Every prefix of a valid model, and every single-bit corruption of it,
 * decodes or fails cleanly (run under the sanitizers to mean something). */
static void test_truncation_and_corruption(void) {
  pb *g = pb_new();
  const char *in[] = {"x", "w"}, *out[] = {"y"};
  pb *n = node_pb("MatMul", "mm", in, 2, out, 1);
  pb *a = pb_new();
  put_str(a, 1, "perm");
  int64_t perm[] = {1, 0, 300};
  put_packed(a, 8, perm, 3);
  put_msg(n, 5, a);
  put_msg(g, 1, n);
  int64_t dims[] = {2, -1};
  const char *params[] = {NULL, "N"};
  put_msg(g, 11, value_info_pb("x", tensor_type_pb(1, dims, params, 2)));
  int64_t d2[] = {2, 2};
  pb *t = tensor_pb("w", 1, d2, 2);
  for (int i = 0; i < 4; i++) put_float(t, 4, (float)i);
  put_msg(g, 5, t);
  put_str(g, 2, "main");
  pb *m = model_pb(g);
  o2m_diag diag;
  o2m_status st;
  int failed = 0, bad_status = 0;
  for (size_t len = 0; len < m->n; len++) {
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, m->b, len);
    o2m_model *model = decode_bytes(copy, len, NULL, &st, &diag);
    if (st != O2M_OK && !strncmp(diag.message, "m.onnx: ", 8))
      failed++;
    else if (st != O2M_OK)
      bad_status++;
    release(model);
    free(copy);
  }
  CHECK(failed > 0 && bad_status == 0);
  bad_status = 0;
  for (size_t i = 0; i < m->n * 8; i++) {
    uint8_t *copy = malloc(m->n);
    memcpy(copy, m->b, m->n);
    copy[i / 8] ^= (uint8_t)(1u << (i % 8));
    o2m_model *model = decode_bytes(copy, m->n, NULL, &st, &diag);
    if (st != O2M_OK && strncmp(diag.message, "m.onnx: ", 8)) bad_status++;
    release(model);
    free(copy);
  }
  CHECK(bad_status == 0);
}

static void test_nesting_limits(void) {
  o2m_diag diag;
  /* a sequence of a sequence of ... 1000 deep */
  pb *cur = pb_new();
  put_msg(cur, 1, pb_new()); /* innermost: an empty tensor_type */
  for (int i = 0; i < 1000; i++) {
    pb *seq = pb_new(), *type = pb_new();
    put_msg(seq, 1, cur);
    put_msg(type, 4, seq);
    cur = type;
  }
  pb *g = pb_new();
  put_msg(g, 11, value_info_pb("x", cur));
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_UNSUPPORTED &&
        strstr(diag.message, "nested"));
  /* subgraphs nested 300 deep */
  pb *graph = pb_new();
  put_str(graph, 2, "leaf");
  for (int i = 0; i < 300; i++) {
    pb *a = pb_new(), *n = pb_new(), *outer = pb_new();
    put_str(a, 1, "body");
    put_int(a, 20, 5);
    put_msg(a, 6, graph);
    put_str(n, 4, "Loop");
    put_msg(n, 5, a);
    put_msg(outer, 1, n);
    graph = outer;
  }
  CHECK(try_decode(model_pb(graph), &diag) == O2M_ERR_UNSUPPORTED);
}

/* ---- tensors ---- */

/* Decodes a standalone tensor; on success copies its payload to `out`. */
static o2m_status tensor_bytes(const pb *t, uint8_t *out, size_t cap,
                               size_t *nbytes, o2m_diag *diag) {
  o2m_arena arena = {0};
  o2m_tensor *tensor;
  o2m_status st = decode_standalone(t, &arena, &tensor, diag);
  if (!st) {
    *nbytes = tensor->nbytes;
    if (tensor->nbytes <= cap && tensor->data)
      memcpy(out, tensor->data, tensor->nbytes);
  }
  o2m_arena_free(&arena);
  return st;
}

/* int32_data values for `dtype`, packed or one per field occurrence. */
static pb *int32_tensor(int dtype, const int64_t *dims, int rank,
                        const int64_t *vals, int n, int packed) {
  pb *t = tensor_pb("t", dtype, dims, rank);
  if (packed)
    put_packed(t, 5, vals, n);
  else
    for (int i = 0; i < n; i++) put_int(t, 5, vals[i]);
  return t;
}

static void test_typed_fields(void) {
  o2m_diag diag;
  uint8_t out[64];
  size_t nb;
  int64_t d3[] = {3}, d2[] = {2}, d1[] = {1};

  /* float_data, packed and unpacked */
  pb *t = tensor_pb("f", 1, d2, 1);
  put_float(t, 4, 1.5f);
  put_float(t, 4, -3.0f);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 8 &&
        ((float *)out)[0] == 1.5f && ((float *)out)[1] == -3.0f);
  t = tensor_pb("f", 1, d2, 1);
  float fl[2] = {2.5f, 4.0f};
  put_len(t, 4, fl, 8);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && ((float *)out)[1] == 4.0f);
  /* complex64 in float_data: two floats per element */
  t = tensor_pb("c", 14, d1, 1);
  put_len(t, 4, fl, 8);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 8 &&
        ((float *)out)[0] == 2.5f);
  /* double and complex128 in double_data */
  t = tensor_pb("d", 11, d1, 1);
  double dv = -0.25;
  uint64_t dbits;
  memcpy(&dbits, &dv, 8);
  put_fixed64(t, 10, dbits);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 8 &&
        ((double *)out)[0] == -0.25);
  t = tensor_pb("z", 15, d1, 1);
  put_fixed64(t, 10, dbits);
  put_fixed64(t, 10, dbits);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 16 &&
        ((double *)out)[1] == -0.25);
  /* int64_data, uint64_data for uint64 and uint32 */
  int64_t i64[] = {-1, INT64_MAX, 0};
  t = tensor_pb("i", 7, d3, 1);
  put_packed(t, 7, i64, 3);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 24 &&
        ((int64_t *)out)[0] == -1 && ((int64_t *)out)[1] == INT64_MAX);
  t = tensor_pb("u", 13, d1, 1);
  put_int(t, 11, -1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) &&
        ((uint64_t *)out)[0] == UINT64_MAX);
  t = tensor_pb("u", 12, d2, 1);
  int64_t u32[] = {4000000000, 7};
  put_packed(t, 11, u32, 2);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 8 &&
        ((uint32_t *)out)[0] == 4000000000u && ((uint32_t *)out)[1] == 7);
  /* int32_data for every narrower type, packed and unpacked */
  int64_t small[] = {-2, 127, 5};
  for (int packed = 0; packed < 2; packed++) {
    t = int32_tensor(3, d3, 1, small, 3, packed); /* int8 */
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 3 &&
          (int8_t)out[0] == -2 && out[1] == 127);
    t = int32_tensor(5, d3, 1, small, 3, packed); /* int16 */
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 6 &&
          ((int16_t *)out)[0] == -2);
    t = int32_tensor(6, d3, 1, small, 3, packed); /* int32 */
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 12 &&
          ((int32_t *)out)[0] == -2 && ((int32_t *)out)[2] == 5);
  }
  int64_t u8[] = {255, 0, 128};
  t = int32_tensor(2, d3, 1, u8, 3, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && out[0] == 255 &&
        out[2] == 128);
  int64_t u16[] = {65535, 1, 2};
  t = int32_tensor(4, d3, 1, u16, 3, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) &&
        ((uint16_t *)out)[0] == 65535);
  int64_t bools[] = {0, 1, 2};
  t = int32_tensor(9, d3, 1, bools, 3, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 3 && out[0] == 0 &&
        out[1] == 1 && out[2] == 1);
  int64_t halfs[] = {0x3C00, 0xBC00};
  t = int32_tensor(10, d2, 1, halfs, 2, 1); /* float16 bit patterns */
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 4 &&
        ((uint16_t *)out)[0] == 0x3C00 && ((uint16_t *)out)[1] == 0xBC00);
  t = int32_tensor(16, d2, 1, halfs, 2, 0); /* bfloat16 */
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 4 &&
        ((uint16_t *)out)[1] == 0xBC00);
  int64_t f8[] = {0x38, 0xFF};
  for (int dtype = 17; dtype <= 20; dtype++) {
    t = int32_tensor(dtype, d2, 1, f8, 2, 1);
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2 &&
          out[0] == 0x38 && out[1] == 0xFF);
  }
  t = int32_tensor(24, d2, 1, f8, 2, 1); /* float8e8m0 */
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2);
  /* 4-bit types: one byte of two elements per entry, as the proto says */
  int64_t nibbles[] = {0x21, 0x03};
  for (int dtype = 21; dtype <= 23; dtype++) {
    t = int32_tensor(dtype, d3, 1, nibbles, 2, 1);
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2 &&
          out[0] == 0x21 && out[1] == 0x03);
  }
  /* ... and one element per entry, from older writers */
  int64_t elems[] = {1, 2, -1};
  t = int32_tensor(22, d3, 1, elems, 3, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2 &&
        out[0] == 0x21 && out[1] == 0x0F);
  /* 2-bit types: four elements per byte */
  int64_t crumbs[] = {0xE4, 0x01};
  int64_t d5[] = {5};
  for (int dtype = 25; dtype <= 26; dtype++) {
    t = int32_tensor(dtype, d5, 1, crumbs, 2, 1);
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2 &&
          out[0] == 0xE4 && out[1] == 0x01);
  }
  int64_t two_bit[] = {0, 1, 2, 3, 1};
  t = int32_tensor(25, d5, 1, two_bit, 5, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && out[0] == 0xE4 &&
        out[1] == 0x01);

  /* strings: views, count checked */
  o2m_arena arena = {0};
  o2m_tensor *st_t;
  t = tensor_pb("s", 8, d2, 1);
  put_str(t, 6, "hello");
  put_str(t, 6, "");
  CHECK(!decode_standalone(t, &arena, &st_t, &diag) && st_t->count == 2 &&
        st_t->strings[0].len == 5 &&
        !memcmp(st_t->strings[0].ptr, "hello", 5) &&
        st_t->strings[1].len == 0 && st_t->data == NULL);
  o2m_arena_free(&arena);
  t = tensor_pb("s", 8, d3, 1);
  put_str(t, 6, "one");
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
  t = tensor_pb("s", 8, d1, 1);
  put_len(t, 9, "x", 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
}

static void test_tensor_errors(void) {
  o2m_diag diag;
  uint8_t out[64];
  size_t nb;
  int64_t d2[] = {2}, d23[] = {2, 3};
  /* raw_data shorter than the dims need */
  pb *t = tensor_pb("r", 1, d23, 2);
  put_len(t, 9, "12345678", 8);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "raw_data holds 8 bytes") &&
        strstr(diag.message, "[2,3]") && strstr(diag.message, "need 24"));
  /* dims whose product overflows int64, and a negative dim */
  int64_t huge[] = {INT64_C(1) << 40, INT64_C(1) << 40};
  t = tensor_pb("h", 1, huge, 2);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "overflows"));
  int64_t with_zero[] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
  t = tensor_pb("z", 1, with_zero, 3);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 0);
  int64_t too_big[] = {INT64_C(1) << 62}; /* fits int64, not in bytes */
  t = tensor_pb("b", 1, too_big, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_UNSUPPORTED);
  int64_t negative[] = {-3};
  t = tensor_pb("n", 1, negative, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "negative"));
  /* the wrong typed field for the dtype */
  t = tensor_pb("w", 7, d2, 1);
  put_float(t, 4, 1.0f);
  put_float(t, 4, 1.0f);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "float_data"));
  /* too few values, and raw_data next to a typed field */
  t = tensor_pb("c", 1, d2, 1);
  put_float(t, 4, 1.0f);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "holds 1 values"));
  t = tensor_pb("c", 1, d2, 1);
  put_float(t, 4, 1.0f);
  put_float(t, 4, 1.0f);
  put_len(t, 9, "12345678", 8);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
  /* no data_type, an unknown one */
  t = pb_new();
  put_packed(t, 1, d2, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "data_type is missing"));
  t = tensor_pb("u", 77, d2, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
  /* a 0-d tensor holds one element; an empty one has no data */
  t = tensor_pb("s", 6, NULL, 0);
  put_int(t, 5, 9);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 4 &&
        ((int32_t *)out)[0] == 9);
  int64_t d0[] = {0};
  t = tensor_pb("e", 1, d0, 1);
  o2m_arena arena = {0};
  o2m_tensor *tensor;
  CHECK(!decode_standalone(t, &arena, &tensor, &diag) && tensor->count == 0 &&
        tensor->data == NULL && tensor->nbytes == 0);
  o2m_arena_free(&arena);
  /* a standalone tensor cannot point at external data */
  t = tensor_pb("x", 1, d2, 1);
  pb *kv = pb_new();
  put_str(kv, 1, "location");
  put_str(kv, 2, "w.bin");
  put_msg(t, 13, kv);
  put_int(t, 14, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_UNSUPPORTED);
  /* an empty buffer is a tensor without data_type */
  memset(&diag, 0, sizeof(diag));
  CHECK(o2m_decode_tensor(&arena, NULL, 0, "e.pb", &tensor, &diag) ==
            O2M_ERR_INVALID &&
        !strncmp(diag.message, "e.pb: tensor: ", 14));
  o2m_arena_free(&arena);
}

static void test_sparse_errors(void) {
  o2m_diag diag;
  int64_t d2[] = {2}, d21[] = {2, 1}, d10[] = {10};
  pb *sv = tensor_pb("sp", 1, d2, 1), *si = tensor_pb("", 6, d2, 1);
  put_float(sv, 4, 1.0f);
  put_float(sv, 4, 2.0f);
  int64_t idx[] = {0, 1};
  put_packed(si, 5, idx, 2);
  pb *sp = pb_new();
  put_msg(sp, 1, sv);
  put_msg(sp, 2, si); /* int32 indices: refused */
  put_packed(sp, 3, d10, 1);
  pb *g = pb_new();
  put_msg(g, 15, sp);
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "sparse_initializer 0 'sp'"));
  si = tensor_pb("", 7, d21, 2);
  put_packed(si, 7, idx, 2);
  sp = pb_new();
  put_msg(sp, 1, sv);
  put_msg(sp, 2, si); /* [2,1] coordinates for a 1-D tensor: fine */
  put_packed(sp, 3, d10, 1);
  g = pb_new();
  put_msg(g, 15, sp);
  CHECK(try_decode(model_pb(g), &diag) == O2M_OK);
  sp = pb_new();
  put_msg(sp, 2, si);
  g = pb_new();
  put_msg(g, 15, sp);
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "values is missing"));
}

/* ---- external data ---- */

static char tmpdir[64];

static void write_file(const char *name, const void *data, size_t n) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (n) fwrite(data, 1, n, f);
  fclose(f);
}

/* A model with one float initializer of `count` elements stored in
 * `location` at `offset`/`length` (NULL: not written). */
static pb *external_model(const char *name, int64_t count,
                          const char *location, const char *offset,
                          const char *length) {
  pb *t = tensor_pb(name, 1, &count, 1);
  const char *keys[] = {"location", "offset", "length", "checksum"};
  const char *values[] = {location, offset, length, "abc"};
  for (int i = 0; i < 4; i++) {
    if (!values[i]) continue;
    pb *kv = pb_new();
    put_str(kv, 1, keys[i]);
    put_str(kv, 2, values[i]);
    put_msg(t, 13, kv);
  }
  put_int(t, 14, 1);
  pb *g = pb_new();
  put_msg(g, 5, t);
  return model_pb(g);
}

/* Decodes and resolves against the temp dir; returns the status. */
static o2m_status resolve(const pb *p, const char *base, o2m_diag *diag,
                          o2m_model **keep) {
  o2m_status st;
  o2m_model *m = decode_bytes(p->b, p->n, base, &st, diag);
  if (!st) st = o2m_resolve_external_data(m, diag);
  if (keep)
    *keep = m;
  else
    release(m);
  return st;
}

static void test_external_data(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/o2m_test_XXXXXX");
  if (!mkdtemp(tmpdir)) abort();
  float weights[16];
  for (int i = 0; i < 16; i++) weights[i] = (float)i;
  write_file("w.bin", weights, sizeof(weights));
  write_file("empty.bin", NULL, 0);
  char sub[128], link[128], linked_dir[128];
  snprintf(sub, sizeof(sub), "%s/sub", tmpdir);
  mkdir(sub, 0700);
  write_file("sub/v.bin", weights, 8);
  snprintf(link, sizeof(link), "%s/escape", tmpdir);
  if (symlink("/etc", link) != 0) abort();
  snprintf(linked_dir, sizeof(linked_dir), "%s/linked", tmpdir);
  if (symlink("sub", linked_dir) != 0) abort();
  o2m_diag diag;
  o2m_model *m;

  /* an offset and length inside the file: a view into its mapping */
  pb *p = external_model("w", 2, "w.bin", "16", "8");
  CHECK(resolve(p, tmpdir, &diag, &m) == O2M_OK);
  if (m->n_external == 1) {
    const o2m_tensor *t = m->external[0];
    CHECK(t->origin == O2M_DATA_EXTERNAL && t->external->offset == 16 &&
          t->external->length == 8 && !strcmp(t->external->location, "w.bin"));
    CHECK(t->data && ((const float *)t->data)[0] == 4.0f &&
          ((const float *)t->data)[1] == 5.0f && m->n_mappings == 1);
  } else {
    CHECK(!"one external tensor");
  }
  release(m);

  /* two tensors in one file and one in a subdirectory: two mappings */
  pb *t1 = tensor_pb("a", 1, (int64_t[]){16}, 1),
     *t2 = tensor_pb("b", 1, (int64_t[]){2}, 1),
     *t3 = tensor_pb("c", 1, (int64_t[]){2}, 1);
  const char *locs[] = {"w.bin", "./w.bin", "sub/v.bin"};
  pb *ts[] = {t1, t2, t3};
  pb *g = pb_new();
  for (int i = 0; i < 3; i++) {
    pb *kv = pb_new();
    put_str(kv, 1, "location");
    put_str(kv, 2, locs[i]);
    put_msg(ts[i], 13, kv);
    if (i == 1) {
      kv = pb_new();
      put_str(kv, 1, "length");
      put_str(kv, 2, "8");
      put_msg(ts[i], 13, kv);
    }
    put_int(ts[i], 14, 1);
    put_msg(g, 5, ts[i]);
  }
  CHECK(resolve(model_pb(g), tmpdir, &diag, &m) == O2M_OK &&
        m->n_external == 3 && m->n_mappings == 2 &&
        m->external[0]->data == m->external[1]->data);
  release(m);

  /* a zero-element tensor in an empty file */
  CHECK(resolve(external_model("e", 0, "empty.bin", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_OK);
  /* refusals */
  CHECK(resolve(external_model("w", 2, "../w.bin", NULL, NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "'..'"));
  CHECK(resolve(external_model("w", 2, "sub/../../x", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_ERR_INVALID);
  CHECK(resolve(external_model("w", 2, "/etc/passwd", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "absolute"));
  CHECK(resolve(external_model("w", 2, "escape/passwd", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "outside"));
  CHECK(resolve(external_model("w", 2, "missing.bin", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_ERR_IO);
  CHECK(resolve(external_model("w", 2, "sub", NULL, NULL), tmpdir, &diag,
                NULL) == O2M_ERR_IO);
  CHECK(resolve(external_model("w", 2, "w.bin", "100", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "past the end"));
  CHECK(resolve(external_model("w", 2, "w.bin", "60", "8"), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "past the end"));
  CHECK(resolve(external_model("w", 2, "w.bin", "0", "12"), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "holds 12 bytes"));
  /* without a length the rest of the file must fit exactly */
  CHECK(resolve(external_model("w", 2, "w.bin", "0", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID);
  CHECK(resolve(external_model("w", 16, "w.bin", NULL, NULL), tmpdir, &diag,
                NULL) == O2M_OK);
  /* malformed numbers and a missing location fail at decode time */
  CHECK(resolve(external_model("w", 2, "w.bin", "12a", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "offset '12a'"));
  CHECK(resolve(external_model("w", 2, "w.bin", "-8", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID);
  CHECK(resolve(external_model("w", 2, "w.bin", "99999999999999999999", NULL),
                tmpdir, &diag, NULL) == O2M_ERR_INVALID);
  CHECK(resolve(external_model("w", 2, NULL, "0", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID);
  /* no data directory */
  CHECK(resolve(external_model("w", 2, "w.bin", NULL, NULL), NULL, &diag,
                NULL) == O2M_ERR_INVALID);
  /* a data directory reached through a symlink: fine, and confined */
  CHECK(resolve(external_model("v", 2, "v.bin", NULL, NULL), linked_dir,
                &diag, NULL) == O2M_OK);
  CHECK(resolve(external_model("w", 16, "../w.bin", NULL, NULL), linked_dir,
                &diag, NULL) == O2M_ERR_INVALID);
  /* the mapping table is full */
  p = external_model("w", 16, "w.bin", NULL, NULL);
  o2m_status st;
  m = decode_bytes(p->b, p->n, tmpdir, &st, &diag);
  m->n_mappings = 64;
  for (int i = 0; i < 64; i++) m->mappings[i].path = "";
  CHECK(!st && o2m_resolve_external_data(m, &diag) == O2M_ERR_UNSUPPORTED);
  m->n_mappings = 0;
  release(m);
  /* inline data next to data_location EXTERNAL */
  g = pb_new();
  t1 = tensor_pb("w", 1, (int64_t[]){2}, 1);
  pb *kv = pb_new();
  put_str(kv, 1, "location");
  put_str(kv, 2, "w.bin");
  put_msg(t1, 13, kv);
  put_int(t1, 14, 1);
  put_len(t1, 9, weights, 8);
  put_msg(g, 5, t1);
  CHECK(resolve(model_pb(g), tmpdir, &diag, NULL) == O2M_ERR_INVALID);

  char path[256];
  const char *names[] = {"w.bin", "empty.bin", "sub/v.bin", "escape",
                         "linked"};
  for (int i = 0; i < 5; i++) {
    snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
    unlink(path);
  }
  rmdir(sub);
  rmdir(tmpdir);
}

static void test_map_file(void) {
  char dir[] = "/tmp/o2m_map_XXXXXX";
  if (!mkdtemp(dir)) abort();
  char path[64];
  snprintf(path, sizeof(path), "%s/empty", dir);
  FILE *f = fopen(path, "wb");
  fclose(f);
  o2m_mapping mapping;
  o2m_diag diag = {0};
  CHECK(o2m_map_file(path, &mapping, &diag) == O2M_OK && mapping.size == 0 &&
        mapping.addr == NULL);
  o2m_unmap_file(&mapping);
  f = fopen(path, "wb");
  fputs("abc", f);
  fclose(f);
  CHECK(o2m_map_file(path, &mapping, &diag) == O2M_OK && mapping.size == 3 &&
        !memcmp(mapping.addr, "abc", 3));
  o2m_unmap_file(&mapping);
  CHECK(mapping.addr == NULL && mapping.size == 0);
  CHECK(o2m_map_file(dir, &mapping, &diag) == O2M_ERR_IO &&
        strstr(diag.message, "not a regular file"));
  unlink(path);
  memset(&diag, 0, sizeof(diag));
  CHECK(o2m_map_file(path, &mapping, &diag) == O2M_ERR_IO &&
        strstr(diag.message, path));
  rmdir(dir);
}

static void test_dtypes(void) {
  CHECK(o2m_dtype_bits(O2M_DT_FLOAT) == 32 && o2m_dtype_bits(O2M_DT_BOOL) == 8);
  CHECK(o2m_dtype_bits(O2M_DT_INT4) == 4 && o2m_dtype_bits(O2M_DT_UINT2) == 2);
  CHECK(o2m_dtype_bits(O2M_DT_COMPLEX128) == 128);
  CHECK(o2m_dtype_bits(O2M_DT_STRING) == 0 &&
        o2m_dtype_bits(O2M_DT_UNDEFINED) == 0);
  CHECK(o2m_dtype_bits((o2m_dtype)99) == 0);
  CHECK(!strcmp(o2m_dtype_name(O2M_DT_FLOAT8E4M3FN), "float8e4m3fn"));
  CHECK(!strcmp(o2m_dtype_name(O2M_DT_BFLOAT16), "bfloat16"));
  CHECK(!strcmp(o2m_dtype_name(O2M_DT_INT2), "int2"));
  CHECK(!strcmp(o2m_dtype_name((o2m_dtype)-1), "undefined"));
  CHECK(o2m_dtype_valid(1) && o2m_dtype_valid(26) && !o2m_dtype_valid(0) &&
        !o2m_dtype_valid(27) && !o2m_dtype_valid(-3));
  CHECK(o2m_dtype_storage_bytes(O2M_DT_FLOAT, 6) == 24);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_INT4, 3) == 2);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_UINT2, 5) == 2);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_UINT2, 0) == 0);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_STRING, 10) == 0);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_COMPLEX128, INT64_MAX) == SIZE_MAX);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_UINT2, INT64_MAX) ==
        (size_t)(INT64_MAX / 4 + 1));
  CHECK(o2m_dtype_storage_bytes(O2M_DT_FLOAT, -1) == SIZE_MAX);
}

int main(void) {
  test_full_model();
  test_untyped_attributes();
  test_node_errors();
  test_model_errors();
  test_truncation_and_corruption();
  test_nesting_limits();
  test_typed_fields();
  test_tensor_errors();
  test_sparse_errors();
  test_external_data();
  test_map_file();
  test_dtypes();
  pb_free_all();
  return CHECK_SUMMARY();
}
