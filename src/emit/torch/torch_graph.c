/* torch_graph.c - graphs as func.func bodies and torch.operator regions.
 *
 * Owns: the structure of the torch form (DESIGN.md section 4):
 *   - the main graph becomes func.func @<graph name> whose arguments are
 *     the graph inputs without initializers and whose results are the
 *     graph outputs, with the torch.onnx_meta.* attributes;
 *   - each initializer becomes, at the top of its block,
 *       "torch.operator"() {name = "onnx.Constant",
 *                           torch.onnx.value = dense_resource<NAME>}
 *     (a sparse initializer: torch.onnx.sparse_value = sparse<...>);
 *   - each node becomes "torch.operator"(inputs) {name = "onnx.<op_type>",
 *     torch.onnx.<attr> = ...} with one result per declared output, located
 *     at the node's name. The name is "onnx.<op_type>" in every domain, as
 *     torch-mlir's importer writes it (its com.microsoft patterns match
 *     that name); the domains' versions are in opset_versions;
 *   - a missing optional input is the block's one torch.constant.none,
 *     made when first needed; a missing output has type !torch.none;
 *   - graph attributes become regions of the op, one block each whose
 *     arguments are the subgraph's inputs, ending in
 *     "torch.operator_terminator"(outputs); a subgraph uses outer values
 *     directly (the regions are not isolated from above).
 * It must not change the model.
 */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/torch/torch_internal.h"

/* A block being filled, with its lazily made torch.constant.none. */
typedef struct torch_block {
  MlirBlock block;
  MlirValue none;
} torch_block;

static o2m_status emit_block_body(o2m_torch *em, const o2m_graph *graph,
                                  torch_block *tb, int is_function);

static MlirLocation name_location(o2m_torch *em, const char *name) {
  if (!name || !*name) return em->unknown_loc;
  return mlirLocationNameGet(em->ctx, torch_str(name), em->unknown_loc);
}

/* The node's name, or for a nameless node its first output's name. */
static MlirLocation node_location(o2m_torch *em, const o2m_node *node) {
  if (node->name[0]) return name_location(em, node->name);
  if (node->n_outputs > 0) return name_location(em, node->output_names[0]);
  return em->unknown_loc;
}

static MlirNamedAttribute named(o2m_torch *em, const char *name,
                                MlirAttribute value) {
  return mlirNamedAttributeGet(mlirIdentifierGet(em->ctx, torch_str(name)),
                               value);
}

static MlirAttribute string_attr(o2m_torch *em, const char *s) {
  return mlirStringAttrGet(em->ctx, torch_str(s));
}

/* Creates the op from `state` and destroys it again: the only way the C
 * API offers to release a state abandoned half-way. */
static void abandon_state(MlirOperationState *state) {
  MlirOperation op = mlirOperationCreate(state);
  if (!mlirOperationIsNull(op)) mlirOperationDestroy(op);
}

static o2m_status none_value(o2m_torch *em, torch_block *tb, MlirValue *out) {
  if (mlirValueIsNull(tb->none)) {
    MlirOperationState state =
        mlirOperationStateGet(torch_str("torch.constant.none"), em->unknown_loc);
    mlirOperationStateAddResults(&state, 1, &em->none_type);
    MlirOperation op = mlirOperationCreate(&state);
    if (mlirOperationIsNull(op))
      return torch_fail(em, O2M_ERR_INTERNAL,
                      "MLIR refused torch.constant.none");
    mlirBlockAppendOwnedOperation(tb->block, op);
    tb->none = mlirOperationGetResult(op, 0);
  }
  *out = tb->none;
  return O2M_OK;
}

static o2m_status record(o2m_torch *em, const o2m_value *value, MlirValue def) {
  if (form_values_put(&em->values, value, def) != 0)
    return torch_fail(em, O2M_ERR_NOMEM, "out of memory");
  return O2M_OK;
}

/* The type of a graph-level value (input, output, initializer). */
static o2m_status graph_value_type(o2m_torch *em, const o2m_graph *graph,
                                   const o2m_value *value, const char *role,
                                   MlirType *out) {
  const char *why = NULL;
  o2m_status status = torch_type(em, &value->type, out, &why);
  if (status == O2M_OK) return O2M_OK;
  return torch_fail(em, status, "graph '%s': %s '%s': %s", graph->name,
                  role, value->name, why);
}

/* ---- initializers ------------------------------------------------------ */

static o2m_status emit_constant(o2m_torch *em, const o2m_graph *graph,
                                torch_block *tb, const char *name,
                                const char *attr_name, MlirAttribute value_attr) {
  const o2m_value *value = o2m_strmap_get(&graph->value_by_name, name);
  if (!value)
    return torch_fail(em, O2M_ERR_INTERNAL,
                    "graph '%s': initializer '%s' has no linked value",
                    graph->name, name);
  if (!mlirValueIsNull(form_values_get(&em->values, value)))
    return O2M_OK; /* a subgraph input of the same name takes precedence */
  MlirType type;
  o2m_status status = graph_value_type(em, graph, value, "initializer", &type);
  if (status != O2M_OK) return status;
  MlirNamedAttribute attrs[2] = {
      mlirNamedAttributeGet(em->name_id, string_attr(em, "onnx.Constant")),
      named(em, attr_name, value_attr)};
  MlirOperationState state = mlirOperationStateGet(
      torch_str("torch.operator"), name_location(em, name));
  mlirOperationStateAddResults(&state, 1, &type);
  mlirOperationStateAddAttributes(&state, 2, attrs);
  MlirOperation op = mlirOperationCreate(&state);
  if (mlirOperationIsNull(op))
    return torch_fail(em, O2M_ERR_INTERNAL,
                    "graph '%s': MLIR refused the constant for '%s'",
                    graph->name, name);
  mlirBlockAppendOwnedOperation(tb->block, op);
  return record(em, value, mlirOperationGetResult(op, 0));
}

static o2m_status emit_initializers(o2m_torch *em, const o2m_graph *graph,
                                    torch_block *tb) {
  for (int i = 0; i < graph->n_inits; i++) {
    const o2m_tensor *t = graph->inits[i];
    MlirAttribute attr;
    const char *why = NULL;
    o2m_status status = form_tensor_attr(&em->tensors, t, t->name, &attr, &why);
    if (status != O2M_OK)
      return torch_fail(em, status, "graph '%s': initializer '%s' %s",
                      graph->name, t->name, why);
    status = emit_constant(em, graph, tb, t->name, "torch.onnx.value", attr);
    if (status != O2M_OK) return status;
  }
  for (int i = 0; i < graph->n_sparse_inits; i++) {
    const o2m_sparse_tensor *s = graph->sparse_inits[i];
    const char *name = s->values ? s->values->name : "";
    MlirAttribute attr;
    const char *why = NULL;
    o2m_status status = form_sparse_attr(&em->tensors, s, &attr, &why);
    if (status != O2M_OK)
      return torch_fail(em, status,
                      "graph '%s': sparse initializer '%s' %s", graph->name,
                      name, why);
    status = emit_constant(em, graph, tb, name, "torch.onnx.sparse_value", attr);
    if (status != O2M_OK) return status;
  }
  return O2M_OK;
}

/* ---- nodes ------------------------------------------------------------- */

static o2m_status add_operands(o2m_torch *em, const o2m_node *node,
                               torch_block *tb, MlirOperationState *state) {
  for (int i = 0; i < node->n_inputs; i++) {
    MlirValue v;
    if (!node->inputs[i]) {
      o2m_status status = none_value(em, tb, &v);
      if (status != O2M_OK) return status;
    } else {
      v = form_values_get(&em->values, node->inputs[i]);
      if (mlirValueIsNull(v))
        return torch_node_fail(em, node, O2M_ERR_INVALID,
                               "input '%s' is used before it is defined",
                               node->input_names[i]);
    }
    mlirOperationStateAddOperands(state, 1, &v);
  }
  return O2M_OK;
}

static o2m_status add_results(o2m_torch *em, const o2m_node *node,
                              MlirOperationState *state) {
  for (int i = 0; i < node->n_outputs; i++) {
    MlirType type = em->none_type;
    if (node->outputs[i]) {
      const char *why = NULL;
      o2m_status status = torch_type(em, &node->outputs[i]->type, &type, &why);
      if (status != O2M_OK)
        return torch_node_fail(em, node, status, "output '%s': %s",
                               node->output_names[i], why);
    }
    mlirOperationStateAddResults(state, 1, &type);
  }
  return O2M_OK;
}

static MlirAttribute op_name_attr(o2m_torch *em, const char *op_type) {
  static const char prefix[] = "onnx.";
  size_t n = sizeof(prefix) - 1 + strlen(op_type);
  char local[128];
  char *text = n < sizeof(local) ? local : malloc(n + 1);
  if (!text) return mlirAttributeGetNull();
  memcpy(text, prefix, sizeof(prefix) - 1);
  memcpy(text + sizeof(prefix) - 1, op_type, n - (sizeof(prefix) - 1));
  MlirAttribute attr = mlirStringAttrGet(em->ctx, mlirStringRefCreate(text, n));
  if (text != local) free(text);
  return attr;
}

/* Fills the op's regions (already created, empty) from the node's graphs. */
static o2m_status emit_regions(o2m_torch *em, const o2m_node *node,
                               MlirOperation op, MlirLocation loc) {
  int n = torch_node_regions(node, NULL, 0);
  if (n == 0) return O2M_OK;
  o2m_graph **graphs = malloc(sizeof(*graphs) * (size_t)n);
  if (!graphs) return torch_node_fail(em, node, O2M_ERR_NOMEM, "out of memory");
  torch_node_regions(node, graphs, n);
  o2m_status status = O2M_OK;
  for (int r = 0; r < n && status == O2M_OK; r++) {
    const o2m_graph *g = graphs[r];
    if (!g) {
      status = torch_node_fail(em, node, O2M_ERR_INVALID,
                               "graph attribute %d has no graph", r);
      break;
    }
    MlirType *types = malloc(sizeof(MlirType) * (size_t)(g->n_inputs + 1));
    MlirLocation *locs =
        malloc(sizeof(MlirLocation) * (size_t)(g->n_inputs + 1));
    for (int i = 0; types && locs && i < g->n_inputs && status == O2M_OK; i++) {
      locs[i] = loc;
      status = g->input_values[i]
                   ? graph_value_type(em, g, g->input_values[i], "input", &types[i])
                   : torch_fail(em, O2M_ERR_INVALID, "graph '%s': input %d is not linked",
                                g->name, i);
    }
    if (!types || !locs)
      status = torch_fail(em, O2M_ERR_NOMEM, "out of memory");
    if (status == O2M_OK) {
      torch_block tb = {mlirBlockCreate(g->n_inputs, types, locs), {NULL}};
      mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, r), tb.block);
      for (int i = 0; i < g->n_inputs && status == O2M_OK; i++)
        status = record(em, g->input_values[i], mlirBlockGetArgument(tb.block, i));
      if (status == O2M_OK) status = emit_block_body(em, g, &tb, 0);
    }
    free(types);
    free(locs);
  }
  free(graphs);
  return status;
}

static o2m_status emit_node(o2m_torch *em, const o2m_node *node,
                            torch_block *tb) {
  MlirLocation loc = node_location(em, node);
  MlirOperationState state =
      mlirOperationStateGet(torch_str("torch.operator"), loc);
  MlirAttribute name = op_name_attr(em, node->op_type);
  if (mlirAttributeIsNull(name))
    return torch_node_fail(em, node, O2M_ERR_NOMEM, "out of memory");
  MlirNamedAttribute name_attr = mlirNamedAttributeGet(em->name_id, name);
  mlirOperationStateAddAttributes(&state, 1, &name_attr);
  o2m_status status = add_operands(em, node, tb, &state);
  if (status == O2M_OK) status = add_results(em, node, &state);
  if (status == O2M_OK) status = torch_add_node_attrs(em, node, &state);
  for (int r = torch_node_regions(node, NULL, 0); r > 0; r--) {
    MlirRegion region = mlirRegionCreate();
    mlirOperationStateAddOwnedRegions(&state, 1, &region);
  }
  if (status != O2M_OK) {
    abandon_state(&state);
    return status;
  }
  MlirOperation op = mlirOperationCreate(&state);
  if (mlirOperationIsNull(op))
    return torch_node_fail(em, node, O2M_ERR_INTERNAL,
                           "MLIR refused the torch.operator");
  mlirBlockAppendOwnedOperation(tb->block, op);
  for (int i = 0; i < node->n_outputs && status == O2M_OK; i++)
    if (node->outputs[i])
      status = record(em, node->outputs[i], mlirOperationGetResult(op, i));
  if (status == O2M_OK) status = emit_regions(em, node, op, loc);
  em->nodes_done++;
  if (status == O2M_OK && em->options->progress)
    em->options->progress(em->options->progress_user, em->nodes_done,
                          em->nodes_total);
  return status;
}

/* ---- blocks ------------------------------------------------------------ */

static o2m_status emit_terminator(o2m_torch *em, const o2m_graph *graph,
                                  torch_block *tb, int is_function) {
  const char *op_name = is_function ? "func.return" : "torch.operator_terminator";
  MlirOperationState state =
      mlirOperationStateGet(torch_str(op_name), em->unknown_loc);
  for (int i = 0; i < graph->n_outputs; i++) {
    MlirValue v = form_values_get(&em->values, graph->output_values[i]);
    if (mlirValueIsNull(v)) {
      abandon_state(&state);
      return torch_fail(em, O2M_ERR_INVALID,
                      "graph '%s': output '%s' is never defined", graph->name,
                      graph->outputs[i].name);
    }
    mlirOperationStateAddOperands(&state, 1, &v);
  }
  MlirOperation op = mlirOperationCreate(&state);
  if (mlirOperationIsNull(op))
    return torch_fail(em, O2M_ERR_INTERNAL, "MLIR refused %s", op_name);
  mlirBlockAppendOwnedOperation(tb->block, op);
  return O2M_OK;
}

static o2m_status emit_block_body(o2m_torch *em, const o2m_graph *graph,
                                  torch_block *tb, int is_function) {
  o2m_status status = emit_initializers(em, graph, tb);
  for (int i = 0; i < graph->n_nodes && status == O2M_OK; i++)
    status = emit_node(em, graph->nodes[i], tb);
  if (status == O2M_OK) status = emit_terminator(em, graph, tb, is_function);
  return status;
}

/* ---- the function ------------------------------------------------------ */

static MlirAttribute si64_attr(o2m_torch *em, int64_t v) {
  return mlirIntegerAttrGet(em->si64_type, v);
}

static int is_default_domain(const char *domain) {
  return !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

/* Whether an opset before index `i` names the same domain (a dictionary
 * key must appear once). */
static int imported_before(const o2m_model *m, int i) {
  for (int j = 0; j < i; j++)
    if (strcmp(m->opsets[j].domain, m->opsets[i].domain) == 0) return 1;
  return 0;
}

/* Adds the torch.onnx_meta.* attributes torch-mlir's importer writes. */
static o2m_status add_meta_attrs(o2m_torch *em, MlirOperationState *state) {
  const o2m_model *m = em->model;
  int64_t default_version = 0;
  int n_other = 0;
  MlirNamedAttribute *others =
      malloc(sizeof(*others) * (size_t)(m->n_opsets + 1));
  if (!others) return torch_fail(em, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < m->n_opsets; i++) {
    const o2m_opset *o = &m->opsets[i];
    if (is_default_domain(o->domain))
      default_version = o->version;
    else if (!imported_before(m, i))
      others[n_other++] = named(em, o->domain, si64_attr(em, o->version));
  }
  MlirNamedAttribute meta[5];
  int n = 0;
  meta[n++] = named(em, "torch.onnx_meta.ir_version", si64_attr(em, m->ir_version));
  if (default_version)
    meta[n++] = named(em, "torch.onnx_meta.opset_version",
                      si64_attr(em, default_version));
  if (n_other)
    meta[n++] = named(em, "torch.onnx_meta.opset_versions",
                      mlirDictionaryAttrGet(em->ctx, n_other, others));
  meta[n++] = named(em, "torch.onnx_meta.producer_name",
                    string_attr(em, m->producer_name ? m->producer_name : ""));
  meta[n++] = named(em, "torch.onnx_meta.producer_version",
                    string_attr(em, m->producer_version ? m->producer_version : ""));
  mlirOperationStateAddAttributes(state, n, meta);
  free(others);
  return O2M_OK;
}

/* Argument types and locations: the graph inputs without initializers. */
static o2m_status function_arguments(o2m_torch *em, const o2m_graph *graph,
                                     MlirType *types, MlirLocation *locs,
                                     const o2m_value **values, int *count) {
  *count = 0;
  for (int i = 0; i < graph->n_inputs; i++) {
    const o2m_value *v = graph->input_values[i];
    if (!v || v->kind == O2M_VALUE_INITIALIZER) continue;
    o2m_status status = graph_value_type(em, graph, v, "input", &types[*count]);
    if (status != O2M_OK) return status;
    locs[*count] = name_location(em, v->name);
    values[(*count)++] = v;
  }
  return O2M_OK;
}

static o2m_status function_results(o2m_torch *em, const o2m_graph *graph,
                                   MlirType *types) {
  for (int i = 0; i < graph->n_outputs; i++) {
    const o2m_value *v = graph->output_values[i];
    if (!v)
      return torch_fail(em, O2M_ERR_INVALID,
                      "graph '%s': output '%s' is never defined", graph->name,
                      graph->outputs[i].name);
    o2m_status status = graph_value_type(em, graph, v, "output", &types[i]);
    if (status != O2M_OK) return status;
  }
  return O2M_OK;
}

/* Creates the func.func with an empty entry block; *entry receives it. */
static o2m_status create_function(o2m_torch *em, const o2m_graph *graph,
                                  MlirBlock module_body, MlirBlock *entry,
                                  const o2m_value **arg_values, int *n_args) {
  size_t n_in = (size_t)graph->n_inputs + 1, n_out = (size_t)graph->n_outputs + 1;
  MlirType *in_types = malloc(sizeof(MlirType) * n_in);
  MlirLocation *in_locs = malloc(sizeof(MlirLocation) * n_in);
  MlirType *out_types = malloc(sizeof(MlirType) * n_out);
  o2m_status status = O2M_OK;
  if (!in_types || !in_locs || !out_types)
    status = torch_fail(em, O2M_ERR_NOMEM, "out of memory");
  if (status == O2M_OK)
    status = function_arguments(em, graph, in_types, in_locs, arg_values, n_args);
  if (status == O2M_OK) status = function_results(em, graph, out_types);
  if (status == O2M_OK) {
    const char *name = graph->name[0] ? graph->name : "main_graph";
    MlirType ftype = mlirFunctionTypeGet(em->ctx, *n_args, in_types,
                                         graph->n_outputs, out_types);
    MlirNamedAttribute attrs[2] = {
        named(em, "sym_name", string_attr(em, name)),
        named(em, "function_type", mlirTypeAttrGet(ftype))};
    MlirOperationState state =
        mlirOperationStateGet(torch_str("func.func"), name_location(em, name));
    mlirOperationStateAddAttributes(&state, 2, attrs);
    status = add_meta_attrs(em, &state);
    *entry = mlirBlockCreate(*n_args, in_types, in_locs);
    MlirRegion body = mlirRegionCreate();
    mlirRegionAppendOwnedBlock(body, *entry);
    mlirOperationStateAddOwnedRegions(&state, 1, &body);
    MlirOperation func = mlirOperationCreate(&state);
    if (mlirOperationIsNull(func))
      status = torch_fail(em, O2M_ERR_INTERNAL, "MLIR refused func.func @%s",
                        name);
    else if (status != O2M_OK)
      mlirOperationDestroy(func);
    else
      mlirBlockAppendOwnedOperation(module_body, func);
  }
  free(in_types);
  free(in_locs);
  free(out_types);
  return status;
}

o2m_status torch_emit_main_function(o2m_torch *em, MlirBlock module_body) {
  const o2m_graph *graph = em->model->graph;
  if (form_values_reserve(&em->values, (size_t)graph->n_values) != 0)
    return torch_fail(em, O2M_ERR_NOMEM, "out of memory");
  const o2m_value **args =
      malloc(sizeof(*args) * (size_t)(graph->n_inputs + 1));
  if (!args) return torch_fail(em, O2M_ERR_NOMEM, "out of memory");
  MlirBlock entry = {NULL};
  int n_args = 0;
  o2m_status status =
      create_function(em, graph, module_body, &entry, args, &n_args);
  for (int i = 0; i < n_args && status == O2M_OK; i++)
    status = record(em, args[i], mlirBlockGetArgument(entry, i));
  free(args);
  if (status != O2M_OK) return status;
  torch_block tb = {entry, {NULL}};
  return emit_block_body(em, graph, &tb, 1);
}

size_t torch_count_nodes(const o2m_graph *graph) {
  size_t total = 0;
  for (int i = 0; i < graph->n_nodes; i++) {
    const o2m_node *node = graph->nodes[i];
    total++;
    for (int a = 0; a < node->n_attrs; a++) {
      const o2m_attr *attr = &node->attrs[a];
      if (attr->type == O2M_ATTR_GRAPH && attr->g)
        total += torch_count_nodes(attr->g);
      for (int j = 0; attr->type == O2M_ATTR_GRAPHS && j < attr->count; j++)
        if (attr->graphs[j]) total += torch_count_nodes(attr->graphs[j]);
    }
  }
  return total;
}
