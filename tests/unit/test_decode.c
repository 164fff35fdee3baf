/* test_decode.c - unit tests of the ONNX reader (src/onnx) on protobuf
 * bytes built by hand: every message kind, old-style attributes, unknown
 * fields of every wire type, wrong wire types, malformed, truncated and
 * corrupted input, and nesting limits. Tensor payloads and external data
 * are test_tensor.c's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pb_writer.h"

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

static char last_warning[512];
static void record_warning(void *user, const char *message) {
  (void)user;
  snprintf(last_warning, sizeof(last_warning), "%s", message);
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
  /* a negative dim_value (read as unknown), and an element type out of range */
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
  {
    o2m_model *m2 = calloc(1, sizeof(*m2));
    if (!m2) abort();
    m2->path = "m.onnx";
    pb *mp = model_pb(g);
    memset(&diag, 0, sizeof(diag));
    diag.warn = record_warning;
    last_warning[0] = 0;
    CHECK(o2m_decode_model(m2, mp->b, mp->n, &diag) == O2M_OK);
    /* old exporters' -1: an unknown dim (a fresh symbol), with a warning */
    CHECK(m2->graph->n_inputs == 1 && m2->graph->inputs[0].type.dims[0].size == -1 &&
          o2m_symbol_is_fresh(m2->graph->inputs[0].type.dims[0].sym));
    CHECK(strstr(last_warning, "input 0 'x' type dim 0: dim_value -5 is read as an unknown dim"));
    release(m2);
  }
  /* dim_param "?" (some exporters' "unknown") gives distinct fresh symbols */
  {
    int64_t unknown[] = {-1, -1};
    const char *qs[] = {"?", "?"};
    pb *g2 = pb_new();
    put_msg(g2, 11, value_info_pb("x", tensor_type_pb(1, unknown, qs, 2)));
    o2m_status st2;
    o2m_model *m3 = decode(model_pb(g2), &st2, &diag);
    const o2m_dim *d = st2 ? NULL : m3->graph->inputs[0].type.dims;
    CHECK(d && o2m_symbol_is_fresh(d[0].sym) && o2m_symbol_is_fresh(d[1].sym) &&
          strcmp(d[0].sym, d[1].sym) != 0);
    release(m3);
  }
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

static int warnings;
static void count_warning(void *user, const char *message) {
  (void)user;
  (void)message;
  warnings++;
}

/* The list attribute kinds the full model leaves out, warnings, and the
 * rarer message fields. */
static void test_more_kinds(void) {
  const char *in[] = {"x"}, *out[] = {"y"};
  pb *n = node_pb("Foo", "", in, 1, out, 1);
  pb *a = pb_new(), *g1 = pb_new(), *g2 = pb_new();
  put_str(g1, 2, "g1");
  put_str(g2, 2, "g2");
  put_str(a, 1, "graphs");
  put_int(a, 20, 10);
  put_msg(a, 11, g1);
  put_msg(a, 11, g2);
  put_msg(n, 5, a);
  int64_t d1[] = {1}, d4[] = {4};
  pb *sv = tensor_pb("v", 1, d1, 1), *si = tensor_pb("", 7, d1, 1);
  put_float(sv, 4, 1.0f);
  put_int(si, 7, 3);
  pb *sp = pb_new();
  put_msg(sp, 1, sv);
  put_msg(sp, 2, si);
  put_packed(sp, 3, d4, 1);
  a = pb_new();
  put_str(a, 1, "sparse");
  put_int(a, 20, 11);
  put_msg(a, 22, sp);
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "sparses");
  put_int(a, 20, 12);
  put_msg(a, 23, sp);
  put_msg(a, 23, sp);
  put_msg(n, 5, a);
  a = pb_new();
  put_str(a, 1, "types");
  put_int(a, 20, 14);
  put_msg(a, 15, tensor_type_pb(1, NULL, NULL, -1));
  pb *opaque = pb_new(), *opaque_type = pb_new();
  put_str(opaque, 1, "dom");
  put_msg(opaque_type, 7, opaque);
  put_msg(a, 15, opaque_type);
  put_msg(n, 5, a);
  a = pb_new(); /* typed INT, but also carrying floats: warned, ignored */
  put_str(a, 1, "mixed");
  put_str(a, 13, "doc");
  put_int(a, 20, 2);
  put_int(a, 3, 9);
  put_float(a, 7, 1.0f);
  put_msg(n, 5, a);
  pb *m = model_with_node(n);
  pb *fn = pb_new();
  put_str(fn, 1, "F");
  put_str(fn, 13, "variant");
  put_str(fn, 8, "doc");
  put_msg(fn, 12, value_info_pb("t", tensor_type_pb(1, NULL, NULL, -1)));
  put_msg(m, 25, fn);

  o2m_status st;
  o2m_diag diag;
  o2m_model *model = calloc(1, sizeof(*model));
  model->path = "m.onnx";
  memset(&diag, 0, sizeof(diag));
  diag.warn = count_warning;
  warnings = 0;
  st = o2m_decode_model(model, m->b, m->n, &diag);
  CHECK(st == O2M_OK && warnings == 2);
  if (!st) {
    const o2m_node *node = model->graph->nodes[0];
    CHECK(node->attrs[0].count == 2 &&
          !strcmp(node->attrs[0].graphs[1]->name, "g2") &&
          node->attrs[0].graphs[1]->owner == node);
    CHECK(node->attrs[1].sparse->rank == 1 &&
          node->attrs[1].sparse->values->count == 1);
    CHECK(node->attrs[2].count == 2 && node->attrs[2].sparses[1]->dims[0] == 4);
    CHECK(node->attrs[3].count == 2 &&
          node->attrs[3].tps[0]->kind == O2M_TYPE_TENSOR &&
          node->attrs[3].tps[1]->kind == O2M_TYPE_UNKNOWN);
    CHECK(node->attrs[4].type == O2M_ATTR_INT && node->attrs[4].i == 9 &&
          node->attrs[4].floats == NULL && !strcmp(node->attrs[4].doc, "doc"));
    const o2m_function *f = &model->functions[0];
    CHECK(!strcmp(f->overload, "variant") && !strcmp(f->doc, "doc") &&
          f->n_value_infos == 1 && !strcmp(f->value_infos[0].name, "t"));
  }
  release(model);

  /* a function without a name; a map with a bad key type; sparse values
   * that are not 1-D; a data_location that does not exist */
  fn = pb_new();
  put_str(fn, 4, "a");
  m = model_pb(pb_new());
  put_msg(m, 25, fn);
  CHECK(try_decode(m, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "function 0: function has no name"));
  pb *map = pb_new(), *map_type = pb_new(), *g = pb_new();
  put_int(map, 1, -4);
  put_msg(map_type, 5, map);
  put_msg(g, 11, value_info_pb("m", map_type));
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "key_type"));
  int64_t d11[] = {1, 1};
  sv = tensor_pb("v", 1, d11, 2);
  put_float(sv, 4, 1.0f);
  sp = pb_new();
  put_msg(sp, 1, sv);
  put_msg(sp, 2, si);
  g = pb_new();
  put_msg(g, 15, sp);
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "1-D"));
  pb *t = tensor_pb("t", 1, d1, 1);
  put_float(t, 4, 1.0f);
  put_int(t, 14, 2);
  g = pb_new();
  put_msg(g, 5, t);
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "initializer 0 't': data_location 2"));
}

int main(void) {
  test_full_model();
  test_untyped_attributes();
  test_node_errors();
  test_model_errors();
  test_truncation_and_corruption();
  test_nesting_limits();
  test_more_kinds();
  pb_free_all();
  return CHECK_SUMMARY();
}
