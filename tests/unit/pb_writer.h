/* pb_writer.h - for the C unit tests: a small protobuf writer and
 * builders of ONNX messages (tensors, types, nodes, models), plus helpers
 * that decode the result with the reader. Every buffer made by pb_new is
 * released by pb_free_all at the end of a test program.
 */
#ifndef O2M_PB_WRITER_H
#define O2M_PB_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/reader.h"

/* ---- a protobuf writer ---------------------------------------------- */

typedef struct pb {
  uint8_t *b;
  size_t n, cap;
} pb;

static pb *every_pb[16384];
static int n_pbs;

static inline pb *pb_new(void) {
  pb *p = calloc(1, sizeof(*p));
  if (!p || n_pbs == 16384) abort();
  every_pb[n_pbs++] = p;
  return p;
}

static inline void pb_free_all(void) {
  for (int i = 0; i < n_pbs; i++) free(every_pb[i]->b), free(every_pb[i]);
  n_pbs = 0;
}

static inline void put_raw(pb *p, const void *data, size_t n) {
  if (p->n + n > p->cap) {
    p->cap = (p->n + n) * 2 + 64;
    p->b = realloc(p->b, p->cap);
    if (!p->b) abort();
  }
  if (n) memcpy(p->b + p->n, data, n);
  p->n += n;
}

static inline void put_varint(pb *p, uint64_t v) {
  do {
    uint8_t byte = (uint8_t)(v & 0x7F) | (v > 0x7F ? 0x80 : 0);
    put_raw(p, &byte, 1);
    v >>= 7;
  } while (v);
}

static inline void put_tag(pb *p, unsigned field, int type) {
  put_varint(p, (uint64_t)field << 3 | (unsigned)type);
}
static inline void put_int(pb *p, unsigned field, int64_t v) {
  put_tag(p, field, 0);
  put_varint(p, (uint64_t)v);
}
static inline void put_len(pb *p, unsigned field, const void *data, size_t n) {
  put_tag(p, field, 2);
  put_varint(p, n);
  put_raw(p, data, n);
}
static inline void put_str(pb *p, unsigned field, const char *s) {
  put_len(p, field, s, strlen(s));
}
static inline void put_msg(pb *p, unsigned field, const pb *m) {
  put_len(p, field, m->b, m->n);
}
static inline void put_fixed32(pb *p, unsigned field, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                  (uint8_t)(v >> 24)};
  put_tag(p, field, 5);
  put_raw(p, b, 4);
}
static inline void put_fixed64(pb *p, unsigned field, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
  put_tag(p, field, 1);
  put_raw(p, b, 8);
}
static inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline void put_float(pb *p, unsigned field, float f) {
  put_fixed32(p, field, float_bits(f));
}
static inline void put_packed(pb *p, unsigned field, const int64_t *v, int n) {
  pb *run = pb_new();
  for (int i = 0; i < n; i++) put_varint(run, (uint64_t)v[i]);
  put_msg(p, field, run);
}
/* One unknown field of every wire type, a group included. */
static inline void put_unknowns(pb *p) {
  put_int(p, 900, 12345);
  put_fixed64(p, 901, 1);
  put_str(p, 902, "ignored");
  put_fixed32(p, 903, 2);
  put_tag(p, 904, 3);
  put_int(p, 1, 7);
  put_tag(p, 904, 4);
}

/* ---- ONNX message builders ------------------------------------------ */

static inline pb *tensor_pb(const char *name, int dtype, const int64_t *dims,
                     int rank) {
  pb *t = pb_new();
  put_packed(t, 1, dims, rank);
  put_int(t, 2, dtype);
  put_str(t, 8, name);
  return t;
}

/* TypeProto.tensor_type with a shape; dims < 0 have neither value nor
 * param, params[i] (when non-NULL) names a dim. rank < 0: no shape. */
static inline pb *tensor_type_pb(int elem, const int64_t *dims, const char **params,
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

static inline pb *value_info_pb(const char *name, const pb *type) {
  pb *vi = pb_new();
  put_str(vi, 1, name);
  if (type) put_msg(vi, 2, type);
  return vi;
}

static inline pb *node_pb(const char *op, const char *name, const char **inputs,
                   int n_in, const char **outputs, int n_out) {
  pb *n = pb_new();
  for (int i = 0; i < n_in; i++) put_str(n, 1, inputs[i]);
  for (int i = 0; i < n_out; i++) put_str(n, 2, outputs[i]);
  put_str(n, 3, name);
  put_str(n, 4, op);
  return n;
}

static inline pb *model_pb(const pb *graph) {
  pb *m = pb_new(), *opset = pb_new();
  put_int(m, 1, 8);
  put_str(opset, 1, "ai.onnx");
  put_int(opset, 2, 17);
  put_msg(m, 8, opset);
  if (graph) put_msg(m, 7, graph);
  return m;
}

/* A model whose graph holds one node. */
static inline pb *model_with_node(const pb *node) {
  pb *g = pb_new();
  put_msg(g, 1, node);
  put_str(g, 2, "main");
  return model_pb(g);
}

/* ---- decoding -------------------------------------------------------- */

static inline o2m_model *decode_bytes(const uint8_t *bytes, size_t n,
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

static inline o2m_model *decode(const pb *p, o2m_status *st, o2m_diag *diag) {
  return decode_bytes(p->b, p->n, NULL, st, diag);
}

static inline void release(o2m_model *m) {
  for (int i = 0; i < m->n_mappings; i++) o2m_unmap_file(&m->mappings[i]);
  o2m_arena_free(&m->arena);
  free(m);
}

/* Decodes and releases; returns the status and leaves the message. */
static inline o2m_status try_decode(const pb *p, o2m_diag *diag) {
  o2m_status st;
  release(decode(p, &st, diag));
  return st;
}

static inline o2m_status decode_standalone(const pb *t, o2m_arena *arena,
                                    o2m_tensor **out, o2m_diag *diag) {
  memset(diag, 0, sizeof(*diag));
  return o2m_decode_tensor(arena, t->b, t->n, "t.pb", out, diag);
}


#endif
