/* test_transform.c - the normalize/decompose rules (src/transform) on the
 * one-node models of tests/lit/inputs/transform/<case>/model.onnx (written
 * by make_transform_models.py): after o2m_transform_to_core each model
 * must hold the expected ops (as a multiset), every node at a known op in
 * topological order, use counts that match the uses, and its graph
 * outputs must keep their types.
 *
 * `test_transform MODEL...` prints the core form of the given models
 * instead (one line per node), for developing rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ir/type_text.h"
#include "transform/transform.h"

typedef struct expectation {
  const char *model; /* transform/<model>/model.onnx */
  const char *ops;   /* the op types of the main graph after the rewrite */
} expectation;

/* Round as decompose_math.c writes it (half to even from Floor):
 * o2m_transform_to_core decomposes the Round of other decompositions. */
#define ROUND_OPS                                                              \
  " Floor Sub Constant Mul Floor Constant Mul Sub Constant Equal Constant "   \
  "Equal And Constant Greater Or Constant Add Where "

static const expectation expectations[] = {
    {"add_6_axis", "Constant Unsqueeze Add"},
    {"attention_gqa_causal",
     "Constant Reshape Transpose Constant Reshape Transpose Constant Reshape Transpose "
     "Constant Shape Gather Constant Constant Range Constant Unsqueeze Constant Shape "
     "Gather Constant Constant Range LessOrEqual Constant Constant Where Constant "
     "Constant Gather Mul Transpose Mul MatMul Add Softmax Constant Greater Cast Constant "
     "ReduceMax Constant Constant Equal Where Constant Gather MatMul Transpose Constant Reshape"},
    {"batchnorm_15_training",
     "Constant ReduceMean Sub Mul Constant ReduceMean Constant Reshape Constant "
     "Reshape Constant Add Sqrt Div Mul Add Constant Reshape Constant Mul Constant Mul "
     "Add Constant Reshape Constant Mul Constant Mul Add"},
    {"batchnorm_9",
     "Constant Add Sqrt Div Constant Reshape Sub Constant Reshape Constant Reshape Mul "
     "Add"},
    {"cast_1", "Cast"},
    {"castlike_15", "Cast"},
    {"clip_6", "Constant Constant Clip"},
    {"concat_1", "Concat"},
    {"convinteger", "Cast Cast Sub Cast Conv"},
    {"dequantize_13_axis", "Constant Reshape Constant Reshape Cast Cast Sub Mul"},
    {"dropout_10_mask", "Identity Shape ConstantOfShape"},
    {"dynamicquantize",
     "Constant ReduceMin Min ReduceMax Max Sub Constant Equal Where Constant Div Div "
     "Sub Constant Clip" ROUND_OPS "Div" ROUND_OPS "Add Constant Constant Clip Cast Identity Cast"},
    {"einsum_batch_matmul", "MatMul"},
    {"einsum_diagonal", "Einsum"}, /* refused: kept for the Einsum lowering */
    {"einsum_groups",
     "Constant Reshape Transpose Constant Reshape MatMul Constant Reshape Transpose"},
    {"einsum_inner", "Constant Reshape Constant Reshape MatMul Constant Reshape"},
    {"einsum_transpose", "Transpose"},
    {"gemm", "Transpose Transpose MatMul Constant Mul Constant Mul Add"},
    {"gemm_plain", "MatMul"},
    {"global_average_pool", "Constant ReduceMean"},
    {"global_lp_pool", "Constant Abs Pow Constant ReduceSum Constant Pow"},
    {"groupnorm_18",
     "Constant Reshape Constant ReduceMean Sub Mul Constant ReduceMean Constant Add "
     "Sqrt Div Shape Constant Reshape Constant Reshape Mul Add Reshape"},
    {"groupnorm_21",
     "Constant Reshape Constant ReduceMean Sub Mul Constant ReduceMean Constant Add "
     "Sqrt Div Shape Reshape Constant Reshape Constant Reshape Mul Add"},
    {"hann_window",
     "Constant Reshape Constant Sub Cast Constant Div Constant Constant Range Cast Mul "
     "Constant Cos Mul Constant Sub Cast"},
    {"instancenorm",
     "Constant ReduceMean Sub Mul Constant ReduceMean Constant Reshape Constant "
     "Reshape Constant Add Sqrt Div Mul Add"},
    {"layernorm",
     "Constant ReduceMean Sub Mul Constant ReduceMean Constant Add Sqrt Reciprocal Mul "
     "Mul Add Identity Identity"},
    {"lp_pool_1", "LpPool"},
    {"lpnorm", "Constant ReduceL1 Constant Div Equal Where"},
    {"lrn",
     "Mul Constant Constant Pad Constant Constant Constant Slice Constant Constant "
     "Constant Slice Add Constant Constant Constant Slice Add Constant Constant Mul "
     "Add Constant Pow Div"},
    {"matmulinteger", "Cast Cast Sub Cast Cast Sub MatMul"},
    {"mvn", "Constant ReduceMean Mul Constant ReduceMean Mul Sub Sqrt Constant Add Sub Div"},
    {"nllloss_ii",
     "Constant Equal Not Constant Where Constant Unsqueeze GatherElements Constant "
     "Squeeze Neg Gather Constant Where Cast Mul Mul ReduceSum ReduceSum Div"},
    {"pad_2", "Constant Constant Pad"},
    {"prelu_6", "Constant Reshape PRelu"},
    {"qlinearmatmul",
     "Cast Cast Sub Cast Cast Sub MatMul Mul Div Cast Mul" ROUND_OPS "Cast Add Constant "
     "Constant Clip Cast"},
    {"quantize_10", "Div" ROUND_OPS "Cast Add Constant Constant Clip Cast"},
    {"quantize_13_axis", "Div" ROUND_OPS "Cast Add Constant Constant Clip Cast"},
    {"reduce_mean_11", "Constant ReduceMean"},
    {"reduce_sum_11", "Constant ReduceSum"},
    {"reshape_4", "Constant Reshape"},
    {"resize_10", "Constant Gather Constant Gather"}, /* nearest: Gathers (decompose_resize.c) */
    {"resize_11_sizes", "Constant Gather Constant Gather"},
    {"rmsnorm", "Mul Constant ReduceMean Constant Add Sqrt Div Mul"},
    {"rotary_interleaved",
     "Constant Reshape Gather Gather Constant Unsqueeze Constant Unsqueeze Constant "
     "Constant Constant Constant Slice Constant Constant Constant Constant Slice Mul "
     "Mul Sub Mul Mul Add Constant Unsqueeze Constant Unsqueeze Concat Constant "
     "Reshape Shape Reshape"},
    {"sce_sum_logprob",
     "LogSoftmax Constant Unsqueeze GatherElements Constant Squeeze Neg ReduceSum "
     "Identity"},
    {"slice_9", "Constant Constant Constant Slice"},
    {"softmax_11_axis1", "Flatten Softmax Shape Reshape"},
    {"softmax_11_last", "LogSoftmax"},
    {"split_11", "Constant Split"},
    {"split_equal_13", "Split"},
    {"squeeze_11", "Constant Squeeze"},
    {"topk_9", "Constant TopK"},
    {"unsqueeze_11", "Constant Unsqueeze"},
    {"upsample_7", "Constant Constant Gather Constant Gather"},
    {"upsample_9", "Constant MatMul Transpose Constant MatMul Transpose"}, /* linear */
};

static int compare_words(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The words of `text` sorted, space-separated, into buf: op lists compare
 * as multisets (the order rules create independent nodes in may follow
 * the compiler's argument evaluation order). */
static const char *sorted_words(const char *text, char *buf, size_t cap) {
  char copy[2048];
  const char *words[256];
  int n = 0;
  snprintf(copy, sizeof(copy), "%s", text);
  for (char *w = strtok(copy, " "); w && n < 256; w = strtok(NULL, " ")) words[n++] = w;
  qsort(words, (size_t)n, sizeof(words[0]), compare_words);
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < n && len < cap; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", words[i]);
  return buf;
}

/* The op types of g's nodes, space-separated, into buf. */
static const char *op_sequence(const o2m_graph *g, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < g->n_nodes && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", g->nodes[i]->op_type);
  return buf;
}

/* Non-zero when every node input is a graph input, an initializer or the
 * output of an earlier node, and every graph output has a producer. */
static int topological(const o2m_graph *g) {
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_inputs; k++) {
      const o2m_value *v = g->nodes[i]->inputs[k];
      if (v && v->kind == O2M_VALUE_NODE && (!v->producer || v->producer->index >= i ||
                                             g->nodes[v->producer->index] != v->producer))
        return 0;
    }
  for (int k = 0; k < g->n_outputs; k++) {
    const o2m_value *v = g->output_values[k];
    if (v->kind == O2M_VALUE_NODE && (!v->producer || g->nodes[v->producer->index] != v->producer)) return 0;
  }
  return 1;
}

static void print_graph(const o2m_graph *g, int depth) {
  char type[256];
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    printf("%*s%s(", 2 * depth + 2, "", n->op_type);
    for (int k = 0; k < n->n_inputs; k++)
      printf("%s%s", k ? ", " : "", n->inputs[k] ? n->inputs[k]->name : "-");
    printf(") ->");
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k])
        printf(" %s : %s%s", n->outputs[k]->name, o2m_type_text(&n->outputs[k]->type, type, sizeof(type)),
               n->outputs[k]->known ? " (known)" : "");
    printf("%s%s\n", n->rewrite_failure ? "  kept: " : "", n->rewrite_failure ? n->rewrite_failure : "");
    for (int a = 0; a < n->n_attrs; a++) {
      if (n->attrs[a].type == O2M_ATTR_GRAPH && n->attrs[a].g) print_graph(n->attrs[a].g, depth + 1);
      for (int k = 0; n->attrs[a].type == O2M_ATTR_GRAPHS && k < n->attrs[a].count; k++)
        print_graph(n->attrs[a].graphs[k], depth + 1);
    }
  }
}

static int dump(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    o2m_model *m;
    o2m_diag diag = {0};
    if (o2m_model_load(argv[i], NULL, &m, &diag) || o2m_transform_to_core(m, &diag)) {
      printf("%s: %s\n", argv[i], diag.message);
      continue;
    }
    printf("%s:\n", argv[i]);
    print_graph(m->graph, 0);
    o2m_model_free(m);
  }
  return 0;
}

/* Non-zero when every node of g has a known op. */
static int all_known(const o2m_graph *g) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i]->op) return 0;
  return 1;
}

/* Non-zero when every value's use_count is its number of uses by g's
 * nodes and outputs (the one-node models have no subgraphs). */
static int uses_counted(const o2m_graph *g) {
  for (int v = 0; v < g->n_values; v++) {
    int uses = 0;
    for (int i = 0; i < g->n_nodes; i++)
      for (int k = 0; k < g->nodes[i]->n_inputs; k++) uses += g->nodes[i]->inputs[k] == g->values[v];
    for (int k = 0; k < g->n_outputs; k++) uses += g->output_values[k] == g->values[v];
    if (uses != g->values[v]->use_count) return 0;
  }
  return 1;
}

static void check_model(const char *dir, const expectation *e) {
  char path[1024], before[O2M_MAX_OP_VERSIONS * 16][256], seq[2048], after[256];
  snprintf(path, sizeof(path), "%s/transform/%s/model.onnx", dir, e->model);
  o2m_model *m;
  o2m_diag diag = {0};
  if (o2m_model_load(path, NULL, &m, &diag)) {
    fprintf(stderr, "%s: %s\n", path, diag.message);
    CHECK(!"model loads");
    return;
  }
  int n_out = m->graph->n_outputs < 16 ? m->graph->n_outputs : 16;
  for (int k = 0; k < n_out; k++)
    o2m_type_text(&m->graph->output_values[k]->type, before[k], sizeof(before[k]));
  o2m_status s = o2m_transform_to_core(m, &diag);
  if (s) fprintf(stderr, "%s: %s\n", e->model, diag.message);
  CHECK(s == O2M_OK);
  char got[2048], want[2048];
  sorted_words(op_sequence(m->graph, seq, sizeof(seq)), got, sizeof(got));
  sorted_words(e->ops, want, sizeof(want));
  if (strcmp(got, want)) {
    fprintf(stderr, "%s: got ops '%s'\n", e->model, seq);
    print_graph(m->graph, 0);
  }
  CHECK(strcmp(got, want) == 0);
  CHECK(all_known(m->graph));
  CHECK(topological(m->graph));
  CHECK(uses_counted(m->graph));
  for (int k = 0; k < n_out; k++) {
    o2m_type_text(&m->graph->output_values[k]->type, after, sizeof(after));
    if (strcmp(before[k], after)) fprintf(stderr, "%s: output %d was %s, is %s\n", e->model, k, before[k], after);
    CHECK(strcmp(before[k], after) == 0);
  }
  o2m_model_free(m);
}

int main(int argc, char **argv) {
  if (argc > 1) return dump(argc, argv);
  char dir[1024];
  snprintf(dir, sizeof(dir), "%s", __FILE__);
  char *slash = strrchr(dir, '/');
  snprintf(slash ? slash : dir, sizeof(dir) - (size_t)(slash ? slash - dir : 0), "/../lit/inputs");
  for (size_t i = 0; i < sizeof(expectations) / sizeof(expectations[0]); i++)
    check_model(dir, &expectations[i]);
  return CHECK_SUMMARY();
}
