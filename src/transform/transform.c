/* transform.c - the pass that applies the rewrite rules of rules.def to
 * every node of every graph (subgraphs first), keeping the node order
 * topological, and the rule lookup. A rule that refuses a node leaves it
 * untouched (its reason is kept for the backend's report). */
#include <string.h>
#include <time.h>

#include "transform/transform.h"
#include "util/diag.h"

#define RULE(domain, op, fn) o2m_status fn(o2m_rewriter *rw);
#define DECOMPOSE(domain, op, fn) o2m_status fn(o2m_rewriter *rw);
#include "transform/rules.def"
#undef RULE
#undef DECOMPOSE

static const o2m_rewrite_rule rules[] = {
#define RULE(domain, op, fn) {domain, op, fn, 0},
#define DECOMPOSE(domain, op, fn) {domain, op, fn, 1},
#include "transform/rules.def"
#undef RULE
#undef DECOMPOSE
    {NULL, NULL, NULL, 0}};

const o2m_rewrite_rule *o2m_rewrite_rule_for(const char *domain,
                                             const char *op_type) {
  if (strcmp(domain, "ai.onnx") == 0) domain = "";
  for (const o2m_rewrite_rule *r = rules; r->op_type; r++)
    if (strcmp(r->op_type, op_type) == 0 && strcmp(r->domain, domain) == 0) return r;
  return NULL;
}

/* The decomposition of an op (a DECOMPOSE row), or NULL: an op may have a
 * normalization (its first row, applied first) and a decomposition,
 * applied in the rounds that follow when the target does not keep it. */
static const o2m_rewrite_rule *decomposition_for(const char *domain, const char *op_type) {
  if (strcmp(domain, "ai.onnx") == 0) domain = "";
  for (const o2m_rewrite_rule *r = rules; r->op_type; r++)
    if (r->decomposes && strcmp(r->op_type, op_type) == 0 && strcmp(r->domain, domain) == 0) return r;
  return NULL;
}

/* What the target keeps: ops it lowers itself are not decomposed. */
typedef struct target_ops {
  o2m_keeps_op_fn keeps; /* NULL: the target keeps no op that has a rule */
  void *user;
  int as_written; /* 1: a node the target keeps is not normalized either */
} target_ops;

static int applies(const o2m_rewrite_rule *rule, const o2m_node *n, const target_ops *t) {
  if (!rule || !rule->rewrite) return 0;
  if (t->as_written) return !t->keeps(n, t->user);
  if (!rule->decomposes) return 1;
  return !t->keeps || !t->keeps(n, t->user);
}

static o2m_status transform_graph(o2m_model *model, o2m_graph *g, const target_ops *t,
                                  o2m_diag *diag);

static o2m_status transform_subgraphs(o2m_model *model, o2m_node *n, const target_ops *t,
                                      o2m_diag *diag) {
  for (int a = 0; a < n->n_attrs; a++) {
    o2m_attr *attr = &n->attrs[a];
    if (attr->type == O2M_ATTR_GRAPH && attr->g && !attr->g->unbuildable) {
      o2m_status s = transform_graph(model, attr->g, t, diag);
      if (s) return s;
    }
    for (int k = 0; attr->type == O2M_ATTR_GRAPHS && k < attr->count; k++) {
      o2m_status s = transform_graph(model, attr->graphs[k], t, diag);
      if (s) return s;
    }
  }
  return O2M_OK;
}

/* Keeps the node as it is: appended unchanged to the new list. */
static o2m_status keep(o2m_rewriter *rw, o2m_node *n) {
  if (o2m_rw_append(rw, n)) return o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
  return O2M_OK;
}

/* Takes back the uses of n's inputs (n leaves the graph). */
static void drop_uses(const o2m_node *n) {
  for (int k = 0; k < n->n_inputs; k++)
    if (n->inputs[k]) n->inputs[k]->use_count--;
}

/* Applies n's rule; on refusal restores what the rule touched. */
static o2m_status apply_rule(o2m_rewriter *rw, o2m_node *n, const o2m_rewrite_rule *rule,
                             o2m_diag *diag) {
  enum { MAX_SAVED = 32 };
  o2m_value saved[MAX_SAVED];
  int n_saved = n->n_outputs < MAX_SAVED ? n->n_outputs : MAX_SAVED;
  for (int k = 0; k < n_saved; k++)
    if (n->outputs[k]) saved[k] = *n->outputs[k];
  int mark = rw->n_out_nodes;
  o2m_diag scratch = {0};
  scratch.warn = diag->warn;
  scratch.warn_user = diag->warn_user;
  rw->node = n;
  rw->diag = &scratch;
  o2m_status s = rule->rewrite(rw);
  rw->diag = diag;
  if (s == O2M_OK && rw->n_out_nodes == mark) return keep(rw, n);
  if (s == O2M_OK) {
    drop_uses(n);
    return O2M_OK;
  }
  if (s != O2M_ERR_UNSUPPORTED || n->n_outputs > MAX_SAVED) {
    o2m_fail(diag, s, "%s", scratch.message);
    return s;
  }
  for (int i = mark; i < rw->n_out_nodes; i++) drop_uses(rw->out_nodes[i]);
  rw->n_out_nodes = mark;
  for (int k = 0; k < n_saved; k++)
    if (n->outputs[k]) *n->outputs[k] = saved[k];
  n->rewrite_failure = o2m_arena_strdup(&rw->model->arena, scratch.message);
  return keep(rw, n);
}

/* Decompositions may make ops the target does not keep either (a TOSA
 * decomposition written in ops that Linalg lowers, say): the nodes made
 * by rules are decomposed again, up to this many rounds. */
enum { MAX_ROUNDS = 8 };

int o2m_rw_target_keeps(const o2m_rewriter *rw, const char *op_type, int n_inputs, o2m_value *const *inputs) {
  if (!rw->keeps || !rw->node) return 0;
  o2m_node probe = *rw->node;
  probe.domain = "";
  probe.op_type = op_type;
  probe.inputs = (o2m_value **)inputs;
  probe.n_inputs = n_inputs;
  probe.outputs = NULL;
  probe.n_outputs = 0;
  probe.n_attrs = 0;
  return rw->keeps(&probe, rw->keeps_user);
}

static o2m_status transform_graph(o2m_model *model, o2m_graph *g, const target_ops *t,
                                  o2m_diag *diag) {
  o2m_rewriter rw = {model, diag, g, NULL, NULL, 0, 0, 0, t->as_written ? NULL : t->keeps, t->user};
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_node *n = g->nodes[i];
    o2m_status s = transform_subgraphs(model, n, t, diag);
    if (s) return s;
    const o2m_rewrite_rule *rule = o2m_rewrite_rule_for(n->domain, n->op_type);
    s = applies(rule, n, t) ? apply_rule(&rw, n, rule, diag) : keep(&rw, n);
    if (s) return s;
  }
  g->nodes = rw.out_nodes;
  g->n_nodes = rw.n_out_nodes;
  int counter = rw.counter;
  for (int round = 0; round < MAX_ROUNDS; round++) {
    int changed = 0;
    o2m_rewriter again = {model, diag, g, NULL, NULL, 0, 0, counter};
    for (int i = 0; i < g->n_nodes; i++) {
      o2m_node *n = g->nodes[i];
      const o2m_rewrite_rule *rule = decomposition_for(n->domain, n->op_type);
      int redo = rule && !n->rewrite_failure && applies(rule, n, t);
      int before = again.n_out_nodes;
      o2m_status s = redo ? apply_rule(&again, n, rule, diag) : keep(&again, n);
      if (s) return s;
      changed |= redo && !(again.n_out_nodes == before + 1 && again.out_nodes[before] == n);
    }
    g->nodes = again.out_nodes;
    g->n_nodes = again.n_out_nodes;
    counter = again.counter;
    if (!changed) break;
  }
  return O2M_OK;
}

/* ---- QDQ fusion (fuse_qdq.c) and blocked 4-bit weights (fuse_dq_matmul.c), before the rules ---- */

int o2m_fuse_qdq(o2m_rewriter *rw, o2m_node **dead, int *n_dead, o2m_keeps_op_fn keeps, void *user);
int o2m_fuse_conv_bn(o2m_rewriter *rw, o2m_node **dead, int *n_dead); /* fuse_bn.c */
int o2m_fuse_dq_matmul(o2m_rewriter *rw, o2m_node **dead, int *n_dead, o2m_keeps_op_fn keeps, void *user);

static int is_dead(o2m_node *const *dead, int n, const o2m_node *node) {
  for (int i = 0; i < n; i++)
    if (dead[i] == node) return 1;
  return 0;
}

static o2m_status fuse_graph(o2m_model *model, o2m_graph *g, const target_ops *t, o2m_diag *diag) {
  enum { MAX_DEAD = 8 };
  o2m_rewriter rw = {model, diag, g, NULL, NULL, 0, 0, 0, NULL, NULL};
  o2m_node **dead = o2m_arena_array(&model->arena, (size_t)g->n_nodes * MAX_DEAD + 1, sizeof(o2m_node *));
  int n_dead = 0, fused = 0;
  if (!dead) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < g->n_nodes; i++) {
    o2m_node *n = g->nodes[i];
    int r = 0, mark = n_dead;
    if (!n->domain[0] && strcmp(n->op_type, "QuantizeLinear") == 0) {
      rw.node = n;
      r = o2m_fuse_qdq(&rw, dead, &n_dead, t->keeps, t->user);
      if (r < 0) return diag->status ? diag->status : o2m_fail(diag, O2M_ERR_INTERNAL, "QDQ fusion failed");
    } else if (!n->domain[0] && strcmp(n->op_type, "MatMul") == 0 && t->keeps) {
      rw.node = n;
      r = o2m_fuse_dq_matmul(&rw, dead, &n_dead, t->keeps, t->user);
      if (r < 0) return diag->status ? diag->status : o2m_fail(diag, O2M_ERR_INTERNAL, "blocked weights' fusion failed");
    } else if (!n->domain[0] && strcmp(n->op_type, "BatchNormalization") == 0) {
      rw.node = n;
      r = o2m_fuse_conv_bn(&rw, dead, &n_dead);
      if (r < 0) return diag->status ? diag->status : o2m_fail(diag, O2M_ERR_NOMEM, "out of memory folding a BatchNormalization");
    }
    if (r > 0) {
      drop_uses(n);
      fused = 1;
      continue;
    }
    n_dead = mark;
    o2m_status s = keep(&rw, n);
    if (s) return s;
  }
  if (!fused) return O2M_OK;
  int kept = 0;
  for (int i = 0; i < rw.n_out_nodes; i++) {
    o2m_node *n = rw.out_nodes[i];
    if (is_dead(dead, n_dead, n)) drop_uses(n);
    else rw.out_nodes[kept++] = n;
  }
  g->nodes = rw.out_nodes;
  g->n_nodes = kept;
  return O2M_OK;
}

o2m_status o2m_transform_to_core(o2m_model *model, o2m_diag *diag) {
  target_ops t = {NULL, NULL, 0};
  return transform_graph(model, model->graph, &t, diag);
}

o2m_status o2m_transform_for_target(o2m_model *model, o2m_keeps_op_fn keeps, void *user,
                                    o2m_diag *diag) {
  target_ops t = {keeps, user, 0};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  o2m_status s = fuse_graph(model, model->graph, &t, diag);
  if (!s) s = transform_graph(model, model->graph, &t, diag);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  model->transform_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  return s;
}

o2m_status o2m_transform_missing_ops(o2m_model *model, o2m_keeps_op_fn keeps, void *user,
                                     o2m_diag *diag) {
  target_ops t = {keeps, user, 1};
  return transform_graph(model, model->graph, &t, diag);
}
