/* specialize.c - re-inference of a model for concrete input shapes (what
 * `run` and `test` do before lowering, so that generated code is static
 * wherever the data allows). */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "infer/infer.h"
#include "ir/type_text.h"
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
 * ratio and training mode. A runtime input whose every consumer reads it
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
    {"HammingWindow", 1u},      {"BlackmanWindow", 1u},     {"MelWeightMatrix", 0x7u},
    {"Dropout", 0x6u},
};

static int op_matches(const char *pattern, const char *op) {
  size_t n = strlen(pattern);
  if (n && pattern[n - 1] == '*') return strncmp(pattern, op, n - 1) == 0;
  return strcmp(pattern, op) == 0;
}

static int is_parameter_use(const o2m_node *n, int input) {
  if (n->domain[0]) return 0;
  for (size_t i = 0; i < sizeof(parameter_inputs) / sizeof(parameter_inputs[0]); i++)
    if (op_matches(parameter_inputs[i].op, n->op_type))
      return input < 32 && (parameter_inputs[i].inputs >> input & 1u);
  return 0;
}

/* Whether a small runtime input is only ever read as a parameter. */
static int is_parameter_input(const o2m_graph *g, const o2m_value *v, const o2m_tensor *t) {
  if (t->dtype == O2M_DT_STRING || t->count > 64) return 0;
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

o2m_status o2m_specialize_inputs(o2m_model *model, int n_inputs,
                                 const o2m_tensor *const *inputs,
                                 o2m_diag *diag) {
  int want = o2m_runtime_input_count(model);
  if (n_inputs != want)
    return o2m_fail(diag, O2M_ERR_INVALID, "%s: the model takes %d inputs but %d were given",
                    model->path, want, n_inputs);
  for (int i = 0; i < n_inputs; i++) {
    o2m_value *v = o2m_runtime_input(model, i);
    o2m_type t;
    o2m_status s = concrete_type(model, v, inputs[i], &t, diag);
    if (s) return s;
    v->type = t;
    /* the caller keeps the input tensors alive until lowering ends */
    if (is_parameter_input(model->graph, v, inputs[i])) v->known = inputs[i];
  }
  forget_inference(model->graph);
  return o2m_infer_model(model, diag);
}
