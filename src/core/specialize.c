/* specialize.c - re-inference of a model for concrete input shapes (what
 * `run` and `test` do before lowering, so that generated code is static
 * wherever the data allows). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "infer/infer.h"
#include "ir/type_text.h"
#include "exec/run.h"
#include "util/diag.h"

int o2m_runtime_input_count(const o2m_model *model) {
  int n = 0;
  for (int i = 0; i < model->graph->n_inputs; i++)
    if (model->graph->input_values[i]->kind == O2M_VALUE_INPUT) n++;
  return n;
}

o2m_value *o2m_runtime_input(const o2m_model *model, int index) {
  for (int i = 0, n = 0; i < model->graph->n_inputs; i++) {
    o2m_value *v = model->graph->input_values[i];
    if (v->kind == O2M_VALUE_INPUT && n++ == index) return v;
  }
  return NULL;
}

static void forget_inference(o2m_graph *g) {
  g->inferred = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    for (int a = 0; a < n->n_attrs; a++) {
      if (n->attrs[a].type == O2M_ATTR_GRAPH && n->attrs[a].g) forget_inference(n->attrs[a].g);
      for (int k = 0; n->attrs[a].type == O2M_ATTR_GRAPHS && k < n->attrs[a].count; k++)
        forget_inference(n->attrs[a].graphs[k]);
    }
  }
}

/* Checks one input against its declared type and builds the static type. */
static o2m_status concrete_type(o2m_model *m, const o2m_value *v, const o2m_tensor *t,
                                o2m_type *out, o2m_diag *diag) {
  const o2m_type *want = &v->type;
  char text[512];
  if (want->kind != O2M_TYPE_TENSOR && want->kind != O2M_TYPE_UNKNOWN)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: input '%s' has type %s; only tensor inputs can be given",
                    m->path, v->name, o2m_type_text(want, text, sizeof(text)));
  int dtype_ok = !want->elem || want->elem == t->dtype;
  int rank_ok = want->rank < 0 || want->rank == t->rank;
  for (int k = 0; rank_ok && k < want->rank; k++)
    if (want->dims[k].size >= 0 && want->dims[k].size != t->dims[k]) rank_ok = 0;
  if (!dtype_ok || !rank_ok) {
    char got[512];
    o2m_type given = {O2M_TYPE_TENSOR, t->dtype, 0, NULL, NULL};
    given.rank = t->rank < 64 ? t->rank : 64;
    o2m_dim dims[64];
    for (int k = 0; k < t->rank && k < 64; k++) dims[k] = (o2m_dim){t->dims[k], NULL};
    given.dims = dims;
    return o2m_fail(diag, O2M_ERR_INVALID, "%s: input '%s' expects %s but was given %s",
                    m->path, v->name, o2m_type_text(want, text, sizeof(text)),
                    o2m_type_text(&given, got, sizeof(got)));
  }
  out->kind = O2M_TYPE_TENSOR;
  out->elem = t->dtype;
  out->rank = t->rank;
  out->inner = NULL;
  out->dims = t->rank ? o2m_arena_array(&m->arena, (size_t)t->rank, sizeof(o2m_dim)) : NULL;
  if (t->rank && !out->dims) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int k = 0; k < t->rank; k++) out->dims[k] = (o2m_dim){t->dims[k], NULL};
  return O2M_OK;
}

/* Inputs that decide output shapes or structure rather than carry data:
 * axes, shapes, pads, repeats, slice bounds, K, sizes, scales, a dropout's
 * ratio and training mode, a Compress's condition. A runtime input whose every consumer reads it
 * in such a position is specialized on its value, like its shape; data
 * operands never are, so their computation still runs in the generated
 * code. Bit i marks input i. */
static const struct {
  const char *op; /* default domain; a trailing '*' matches a prefix */
  unsigned inputs;
} parameter_inputs[] = {
    {"Reshape", 1u << 1},       {"Expand", 1u << 1},        {"Tile", 1u << 1},
    {"Slice", 0x1eu},           {"Pad", 0xau},              {"Reduce*", 1u << 1},
    {"TopK", 1u << 1},          {"CumSum", 1u << 1},        {"CumProd", 1u << 1},
    {"Squeeze", 1u << 1},       {"Unsqueeze", 1u << 1},     {"Split", 1u << 1},
    {"Range", 0x7u},            {"ConstantOfShape", 1u},    {"OneHot", 1u << 1},
    {"Resize", 0xeu},           {"Upsample", 1u << 1},      {"Trilu", 1u << 1},
    {"CenterCropPad", 1u << 1}, {"Col2Im", 0x6u},           {"MaxUnpool", 1u << 2},
    {"DFT", 0x6u},              {"STFT", 0xau},             {"HannWindow", 1u},
    {"HammingWindow", 1u},      {"BlackmanWindow", 1u},     {"MelWeightMatrix", 0x1fu},
    {"Dropout", 0x6u},          {"SequenceAt", 1u << 1},    {"SequenceInsert", 1u << 2},
    {"SequenceErase", 1u << 1}, {"SplitToSequence", 1u << 1}, {"Loop", 0x3u},
    {"QLinearConv", 0xf6u},     {"QLinearMatMul", 0xf6u},  {"ConvInteger", 0xcu},
    {"MatMulInteger", 0xcu},    {"AffineGrid", 1u << 1},   {"Compress", 1u << 1},
};

static int op_matches(const char *pattern, const char *op) {
  size_t n = strlen(pattern);
  if (n && pattern[n - 1] == '*') return strncmp(pattern, op, n - 1) == 0;
  return strcmp(pattern, op) == 0;
}

static int is_parameter_use(const o2m_node *n, int input) {
  if (n->domain[0]) return 0;
  /* an If with sequence or optional outputs is unrolled on its condition */
  if (strcmp(n->op_type, "If") == 0 && input == 0) {
    for (int i = 0; i < n->n_outputs; i++)
      if (n->outputs[i] && (n->outputs[i]->type.kind == O2M_TYPE_SEQUENCE ||
                            n->outputs[i]->type.kind == O2M_TYPE_OPTIONAL))
        return 1;
    return 0;
  }
  for (size_t i = 0; i < sizeof(parameter_inputs) / sizeof(parameter_inputs[0]); i++)
    if (op_matches(parameter_inputs[i].op, n->op_type))
      return input < 32 && (parameter_inputs[i].inputs >> input & 1u);
  return 0;
}

/* ---- which inputs decide shapes --------------------------------------------
 * A small input is specialized on its value when every use reads it as a
 * parameter, or when it is a 0-D or 1-D number tensor whose value reaches
 * a shape parameter through the small integer arithmetic that models do on
 * sizes (an expanded AffineGrid splits its `size` input into N, C, H, W
 * inside an If, then concatenates them into an Expand's shape; an expanded
 * window function casts its size to float for its Range). Its value
 * then decides the generated code's shapes, so the code is specialized on
 * it anyway; the cache keys such entries by the value (run_cache.c). Values
 * flow only through small integer and float tensors, never through Shape or Size
 * (which read a shape, not a value), and a Loop's or If's control inputs do
 * not count at a distance: a condition computed from the data (t > 0) stays
 * a run-time decision, and data such as token ids, which feed embeddings,
 * is never caught. A Loop's trip count that sizes its scan outputs does
 * count (an expanded Range's: its output has that many elements). */

#define MAX_PARAMETER_ELEMENTS 64

/* Whether every use of v reads it as a parameter. */
static int only_parameter_uses(const o2m_graph *g, const o2m_value *v) {
  int uses = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    for (int k = 0; k < n->n_captures; k++)
      if (n->captures[k] == v) return 0;
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] != v) continue;
      if (!is_parameter_use(n, k)) return 0;
      uses++;
    }
  }
  return uses > 0;
}

typedef struct value_set {
  const o2m_value **slots;
  size_t cap, len;
} value_set;

static int set_has(const value_set *s, const o2m_value *v) {
  for (; v; v = v->kind == O2M_VALUE_OUTER ? v->outer : NULL)
    for (size_t i = (uintptr_t)v / sizeof(void *) & (s->cap - 1); s->slots[i]; i = (i + 1) & (s->cap - 1))
      if (s->slots[i] == v) return 1;
  return 0;
}

static int set_add(value_set *s, const o2m_value *v) {
  if (set_has(s, v)) return 1;
  if (2 * (s->len + 1) > s->cap) {
    value_set bigger = {calloc(s->cap * 2, sizeof(void *)), s->cap * 2, 0};
    if (!bigger.slots) return 0;
    for (size_t i = 0; i < s->cap; i++)
      if (s->slots[i]) set_add(&bigger, s->slots[i]);
    free(s->slots);
    *s = bigger;
  }
  size_t i = (uintptr_t)v / sizeof(void *) & (s->cap - 1);
  while (s->slots[i]) i = (i + 1) & (s->cap - 1);
  s->slots[i] = v;
  s->len++;
  return 1;
}

/* Whether v is an integer or float tensor of static shape and at most
 * MAX_PARAMETER_ELEMENTS elements. */
static int is_small_number(const o2m_value *v) {
  if (!v || v->type.kind != O2M_TYPE_TENSOR || !(o2m_dtype_is_int(v->type.elem) || o2m_dtype_is_float(v->type.elem)) ||
      v->type.rank < 0)
    return 0;
  int64_t count = 1;
  for (int k = 0; k < v->type.rank; k++) {
    int64_t size = v->type.dims[k].size;
    if (size < 0 || (size && count > MAX_PARAMETER_ELEMENTS / size)) return 0;
    count *= size;
  }
  return 1;
}

static int is_control(const o2m_node *n) {
  return !n->domain[0] && (strcmp(n->op_type, "Loop") == 0 || strcmp(n->op_type, "If") == 0);
}

/* Whether input k of control node n is a Loop's trip count that sizes
 * its scan outputs (outputs past the carried values). */
static int sizes_scan_outputs(const o2m_node *n, int k) {
  return k == 0 && strcmp(n->op_type, "Loop") == 0 && n->n_outputs > n->n_inputs - 2;
}

static int reads_shape_only(const o2m_node *n) {
  return !n->domain[0] && (strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0);
}

static int reaches_parameter(const o2m_graph *g, value_set *from);

/* Whether node n reads a value of `from` in a parameter position (within
 * its subgraphs too); adds the outputs the value flows into to `from`. */
static int node_reaches_parameter(const o2m_node *n, value_set *from) {
  int reads = 0;
  for (int k = 0; k < n->n_inputs; k++) {
    if (!n->inputs[k] || !set_has(from, n->inputs[k])) continue;
    if (is_parameter_use(n, k) && (!is_control(n) || sizes_scan_outputs(n, k))) return 1;
    reads = 1;
  }
  for (int k = 0; k < n->n_captures && !reads; k++) reads = set_has(from, n->captures[k]);
  if (!reads || reads_shape_only(n)) return 0;
  for (int a = 0; a < n->n_attrs; a++) {
    if (n->attrs[a].type == O2M_ATTR_GRAPH && n->attrs[a].g && reaches_parameter(n->attrs[a].g, from)) return 1;
    for (int k = 0; n->attrs[a].type == O2M_ATTR_GRAPHS && k < n->attrs[a].count; k++)
      if (reaches_parameter(n->attrs[a].graphs[k], from)) return 1;
  }
  for (int i = 0; i < n->n_outputs; i++)
    if (is_small_number(n->outputs[i]) && !set_add(from, n->outputs[i])) return 0;
  return 0;
}

/* Nodes are in topological order, so one pass carries values forward. */
static int reaches_parameter(const o2m_graph *g, value_set *from) {
  for (int i = 0; i < g->n_nodes; i++)
    if (node_reaches_parameter(g->nodes[i], from)) return 1;
  return 0;
}

/* Whether a small runtime input's value decides shapes or structure. */
static int is_parameter_input(const o2m_graph *g, const o2m_value *v, const o2m_tensor *t) {
  if (t->dtype == O2M_DT_STRING || t->count > MAX_PARAMETER_ELEMENTS) return 0;
  if (only_parameter_uses(g, v)) return 1;
  if (!(o2m_dtype_is_int(t->dtype) || o2m_dtype_is_float(t->dtype)) || t->rank > 1) return 0;
  value_set from = {calloc(16, sizeof(void *)), 16, 0};
  int found = from.slots && set_add(&from, v) && reaches_parameter(g, &from);
  free(from.slots);
  return found;
}

static o2m_status check_input_count(const o2m_model *model, int n_inputs, o2m_diag *diag) {
  int want = o2m_runtime_input_count(model);
  if (n_inputs == want) return O2M_OK;
  return o2m_fail(diag, O2M_ERR_INVALID, "%s: the model takes %d inputs but %d were given", model->path,
                  want, n_inputs);
}

/* Gives input v the static type of tensor t, and t's value when v only acts
 * as a parameter; the caller keeps t alive until lowering ends. */
static o2m_status specialize_tensor(o2m_model *model, o2m_value *v, const o2m_tensor *t, o2m_diag *diag) {
  o2m_type type;
  o2m_status s = concrete_type(model, v, t, &type, diag);
  if (s) return s;
  v->type = type;
  if (is_parameter_input(model->graph, v, t)) v->known = t;
  return O2M_OK;
}

o2m_status o2m_specialize_inputs(o2m_model *model, int n_inputs,
                                 const o2m_tensor *const *inputs,
                                 o2m_diag *diag) {
  o2m_status s = check_input_count(model, n_inputs, diag);
  for (int i = 0; i < n_inputs && !s; i++) s = specialize_tensor(model, o2m_runtime_input(model, i), inputs[i], diag);
  if (s) return s;
  forget_inference(model->graph);
  return o2m_infer_model(model, diag);
}

int o2m_input_is_parameter(const o2m_model *model, int index, const o2m_tensor *t) {
  const o2m_value *v = o2m_runtime_input(model, index);
  return v && t && is_parameter_input(model->graph, v, t);
}

o2m_status o2m_specialize_parameters(o2m_model *model, int n_inputs, const o2m_tensor *const *inputs,
                                     o2m_diag *diag) {
  o2m_status s = check_input_count(model, n_inputs, diag);
  for (int i = 0; i < n_inputs && !s; i++) {
    o2m_value *v = o2m_runtime_input(model, i);
    if (!is_parameter_input(model->graph, v, inputs[i])) continue;
    s = specialize_tensor(model, v, inputs[i], diag);
  }
  if (s) return s;
  forget_inference(model->graph);
  return o2m_infer_model(model, diag);
}

/* ---- sequence and optional inputs ------------------------------------------ */

/* The type of every element of a sequence: `a` merged with the concrete
 * type `b` (dims that differ become dynamic, ranks that differ unranked). */
static void merge_into(o2m_type *a, const o2m_type *b) {
  if (a->rank != b->rank) {
    a->rank = -1;
    a->dims = NULL;
    return;
  }
  for (int k = 0; k < a->rank; k++)
    if (a->dims[k].size != b->dims[k].size) a->dims[k] = (o2m_dim){-1, NULL};
}

static const char *kind_name(o2m_type_kind k) {
  return k == O2M_TYPE_SEQUENCE ? "a sequence" : k == O2M_TYPE_OPTIONAL ? "an optional" : "a tensor";
}

/* The concrete type of a sequence of `n` tensors whose declared type is
 * `want` (a sequence type or unknown). */
static o2m_status sequence_type(o2m_model *m, const o2m_value *v, const o2m_type *want, int n,
                                o2m_tensor *const *tensors, o2m_type *out, o2m_diag *diag) {
  o2m_value elem_decl = *v;
  elem_decl.type = want && want->inner ? *want->inner : (o2m_type){O2M_TYPE_UNKNOWN, 0, -1, NULL, NULL};
  o2m_type *inner = o2m_arena_alloc(&m->arena, sizeof(o2m_type));
  if (!inner) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  *inner = elem_decl.type;
  for (int k = 0; k < n; k++) {
    o2m_type t;
    o2m_status s = concrete_type(m, &elem_decl, tensors[k], &t, diag);
    if (s) return s;
    if (k == 0) *inner = t;
    else if (inner->elem != t.elem)
      return o2m_fail(diag, O2M_ERR_INVALID, "%s: the elements of input '%s' differ in dtype", m->path, v->name);
    else merge_into(inner, &t);
  }
  *out = (o2m_type){O2M_TYPE_SEQUENCE, O2M_DT_UNDEFINED, 0, NULL, inner->kind ? inner : NULL};
  return O2M_OK;
}

static o2m_status value_type(o2m_model *m, const o2m_value *v, const o2m_io_value *x, o2m_type *out,
                             o2m_diag *diag) {
  const o2m_type *want = &v->type;
  if (want->kind != O2M_TYPE_UNKNOWN && want->kind != x->kind)
    return o2m_fail(diag, O2M_ERR_INVALID, "%s: input '%s' is %s but was given %s", m->path, v->name,
                    kind_name(want->kind), kind_name(x->kind));
  if (x->kind == O2M_TYPE_SEQUENCE) return sequence_type(m, v, want, x->count, x->tensors, out, diag);
  /* an optional */
  const o2m_type *decl = want->kind == O2M_TYPE_OPTIONAL ? want->inner : NULL;
  o2m_type_kind holds = x->elem_kind ? x->elem_kind : decl ? decl->kind : O2M_TYPE_UNKNOWN;
  if (decl && decl->kind && holds != decl->kind)
    return o2m_fail(diag, O2M_ERR_INVALID, "%s: input '%s' holds %s but was given one holding %s", m->path,
                    v->name, kind_name(decl->kind), kind_name(holds));
  o2m_type *inner = o2m_arena_alloc(&m->arena, sizeof(o2m_type));
  if (!inner) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  if (holds == O2M_TYPE_SEQUENCE) {
    o2m_status s = sequence_type(m, v, decl, x->present ? x->count : 0, x->tensors, inner, diag);
    if (s) return s;
  } else if (x->present) {
    if (x->count != 1) return o2m_fail(diag, O2M_ERR_INVALID, "%s: optional input '%s' holds %d tensors", m->path, v->name, x->count);
    o2m_value elem_decl = *v;
    elem_decl.type = decl ? *decl : (o2m_type){O2M_TYPE_UNKNOWN, 0, -1, NULL, NULL};
    o2m_status s = concrete_type(m, &elem_decl, x->tensors[0], inner, diag);
    if (s) return s;
  } else if (decl) {
    *inner = *decl;
  } else {
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: empty optional input '%s' has no declared type", m->path, v->name);
  }
  *out = (o2m_type){O2M_TYPE_OPTIONAL, O2M_DT_UNDEFINED, 0, NULL, inner};
  return O2M_OK;
}

o2m_status o2m_specialize_values(o2m_model *model, int n_inputs, const o2m_io_value *inputs, o2m_diag *diag) {
  o2m_status s = check_input_count(model, n_inputs, diag);
  if (s) return s;
  for (int i = 0; i < n_inputs; i++) {
    o2m_value *v = o2m_runtime_input(model, i);
    const o2m_io_value *x = &inputs[i];
    o2m_type t;
    if (x->kind == O2M_TYPE_TENSOR) {
      if (x->count != 1 || !x->tensors || !x->tensors[0])
        return o2m_fail(diag, O2M_ERR_INVALID, "%s: input '%s' has no tensor", model->path, v->name);
      if ((s = specialize_tensor(model, v, x->tensors[0], diag))) return s;
      continue;
    }
    if (x->kind != O2M_TYPE_SEQUENCE && x->kind != O2M_TYPE_OPTIONAL)
      return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: input '%s' is neither a tensor, a sequence nor an optional",
                      model->path, v->name);
    if ((s = value_type(model, v, x, &t, diag))) return s;
    v->type = t;
    v->seq_length = x->kind == O2M_TYPE_SEQUENCE ? x->count : -1;
  }
  forget_inference(model->graph);
  return o2m_infer_model(model, diag);
}
