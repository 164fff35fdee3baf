/* om_graph.c - graphs as onnx-mlir's importer writes them
 * (FrontendGenImpl::importGraph, ImportNode, buildOutputAndOperation).
 *
 * Owns the structure of the form:
 *   - the main graph becomes func.func @main_graph whose arguments are the
 *     graph inputs without initializers and whose results are the graph
 *     outputs, each with {onnx.name = "x"} and, where the model names
 *     dims, {onnx.dim_params = "0:batch,1:seq"}; the body ends with
 *     "onnx.Return"; after the function, "onnx.EntryPoint"() <{func =
 *     @main_graph}>;
 *   - each initializer becomes, at the top of its block,
 *     "onnx.Constant"() <{value = dense_resource<NAME>}> (a sparse one
 *     sparse_value = sparse<..>), located at "Initializer_<name>";
 *   - each node of the default or ai.onnx.ml domain becomes
 *     "onnx.<Op>"(..) <{inherent attributes}> {onnx_node_name = ".."} under
 *     the versioned name of om_table.c and the variants of om_special.c;
 *     a fixed-arity op gets every operand slot (a missing optional input
 *     is a "onnx.NoValue"() : () -> none made just before it) and every
 *     result slot (a missing output has type none);
 *   - a node of another domain, or of an op onnx-mlir lacks that the
 *     shared layer could not write in ops it has, becomes "onnx.Custom"
 *     with function_name = op type and domain_name (as onnx-mlir's
 *     importer does for an op it does not know);
 *   - graph attributes become the op's regions in its table order, one
 *     block each whose arguments are the subgraph's inputs, ending in
 *     "onnx.Yield"; the op records input_names, output_names and
 *     input/output_dim_params of its last graph attribute, as onnx-mlir
 *     does. A subgraph uses outer values directly.
 * Types are the inferred ones (om_types.c), so shapes are filled in where
 * the model leaves them out. It must not change the model.
 */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/onnx/om_internal.h"
#include "util/diag.h"

static o2m_status emit_block_body(om_emitter *em, const o2m_graph *graph, MlirBlock block,
                                  const char *terminator);

static MlirLocation name_location(om_emitter *em, const char *name) {
  if (!name || !*name) return em->unknown_loc;
  return mlirLocationNameGet(em->ctx, om_str(name), em->unknown_loc);
}

static MlirAttribute string_attr(om_emitter *em, const char *s) {
  return mlirStringAttrGet(em->ctx, om_str(s));
}

static o2m_status record(om_emitter *em, const o2m_value *value, MlirValue def) {
  if (form_values_put(&em->values, value, def) != 0) return om_fail(em, O2M_ERR_NOMEM, "out of memory");
  return O2M_OK;
}

/* Creates `state` and appends the op to `block`; null when MLIR refused. */
static MlirOperation append_op(MlirBlock block, MlirOperationState *state) {
  MlirOperation op = mlirOperationCreate(state);
  if (!mlirOperationIsNull(op)) mlirBlockAppendOwnedOperation(block, op);
  return op;
}

o2m_status om_no_value(om_emitter *em, MlirBlock block, MlirValue *out) {
  MlirOperationState state = mlirOperationStateGet(om_str("onnx.NoValue"), em->unknown_loc);
  mlirOperationStateAddResults(&state, 1, &em->none_type);
  MlirOperation op = append_op(block, &state);
  if (mlirOperationIsNull(op)) return om_fail(em, O2M_ERR_INTERNAL, "MLIR refused onnx.NoValue");
  *out = mlirOperationGetResult(op, 0);
  return O2M_OK;
}

o2m_status om_constant(om_emitter *em, MlirBlock block, MlirLocation loc, const char *attr_name,
                       MlirAttribute value, MlirType type, MlirValue *out) {
  if (mlirAttributeIsNull(value) || mlirTypeIsNull(type))
    return om_fail(em, O2M_ERR_NOMEM, "a constant could not be made (out of memory?)");
  MlirOperationState state = mlirOperationStateGet(om_str("onnx.Constant"), loc);
  mlirOperationStateAddResults(&state, 1, &type);
  MlirOperation op = append_op(block, &state);
  if (mlirOperationIsNull(op)) return om_fail(em, O2M_ERR_INTERNAL, "MLIR refused onnx.Constant");
  om_set_inherent(op, attr_name, value);
  *out = mlirOperationGetResult(op, 0);
  return O2M_OK;
}

/* The type of a graph-level value (input, output, initializer). */
static o2m_status graph_value_type(om_emitter *em, const o2m_graph *graph, const o2m_value *value,
                                   const char *role, MlirType *out) {
  const char *why = NULL;
  o2m_status status = om_type(em, &value->type, out, &why);
  if (status == O2M_OK) return O2M_OK;
  return om_fail(em, status, "graph '%s': %s '%s' %s", graph->name, role, value->name, why);
}

/* ---- initializers ------------------------------------------------------ */

static o2m_status emit_initializer(om_emitter *em, const o2m_graph *graph, MlirBlock block,
                                   const char *name, const char *attr_name, MlirAttribute attr) {
  const o2m_value *value = o2m_strmap_get(&graph->value_by_name, name);
  if (!value)
    return om_fail(em, O2M_ERR_INTERNAL, "graph '%s': initializer '%s' has no linked value",
                   graph->name, name);
  if (!mlirValueIsNull(form_values_get(&em->values, value)))
    return O2M_OK; /* a subgraph input of the same name takes precedence */
  MlirType type;
  o2m_status status = graph_value_type(em, graph, value, "initializer", &type);
  const char *loc_name = o2m_arena_printf(&em->arena, "Initializer_%s", name);
  if (status == O2M_OK && !loc_name) status = om_fail(em, O2M_ERR_NOMEM, "out of memory");
  MlirValue def;
  if (status == O2M_OK)
    status = om_constant(em, block, name_location(em, loc_name), attr_name, attr, type, &def);
  return status == O2M_OK ? record(em, value, def) : status;
}

static o2m_status emit_initializers(om_emitter *em, const o2m_graph *graph, MlirBlock block) {
  for (int i = 0; i < graph->n_inits; i++) {
    const o2m_tensor *t = graph->inits[i];
    MlirAttribute attr;
    o2m_status status = om_tensor_attr(em, NULL, t, t->name, &attr);
    if (status == O2M_OK) status = emit_initializer(em, graph, block, t->name, "value", attr);
    if (status != O2M_OK) return status;
  }
  for (int i = 0; i < graph->n_sparse_inits; i++) {
    const o2m_sparse_tensor *s = graph->sparse_inits[i];
    const char *name = s->values ? s->values->name : "";
    MlirAttribute attr;
    const char *why = NULL;
    o2m_status status = form_sparse_attr(&em->tensors, s, &attr, &why);
    if (status != O2M_OK)
      return om_fail(em, status, "graph '%s': sparse initializer '%s' %s", graph->name, name, why);
    status = emit_initializer(em, graph, block, name, "sparse_value", attr);
    if (status != O2M_OK) return status;
  }
  return O2M_OK;
}

/* ---- which op ---------------------------------------------------------- */

static int is_onnx_domain(const char *domain) {
  return !domain[0] || strcmp(domain, "ai.onnx") == 0 || strcmp(domain, "ai.onnx.ml") == 0;
}

/* The table row a node becomes; *custom set for onnx.Custom. */
static const om_op *op_for_node(om_emitter *em, const o2m_node *node, int *custom) {
  char versioned[160];
  const om_op *def = NULL;
  if (is_onnx_domain(node->domain)) {
    om_versioned_name(node->op_type, node->opset, versioned, sizeof(versioned));
    def = om_table_find(&em->table, om_special_name(node, versioned));
  }
  *custom = def == NULL;
  return def ? def : om_table_find(&em->table, "Custom");
}

static int has_graph_attr(const o2m_node *node) {
  for (int a = 0; a < node->n_attrs; a++)
    if (node->attrs[a].type == O2M_ATTR_GRAPH || node->attrs[a].type == O2M_ATTR_GRAPHS) return 1;
  return 0;
}

/* ai.onnx.preview, ai.onnx.preview.training: ONNX's own domains for ops
 * onnx-mlir does not know. */
static int is_onnx_family_domain(const char *domain) {
  return is_onnx_domain(domain) || strncmp(domain, "ai.onnx.", 8) == 0;
}

/* Kept: an op onnx-mlir has, and an op of a domain outside ONNX's, which
 * stays an onnx.Custom as in onnx-mlir, unless it holds graphs (a Custom
 * has no regions: onnx-mlir's importer drops them; here the shared layer
 * writes the node in other ops where it can, else the import fails). An
 * ONNX op onnx-mlir lacks is written in ops it has where the shared layer
 * can (onnx-mlir inlines its ONNX function body, where it has one). */
int om_keeps_node(const o2m_node *node, void *user) {
  om_emitter *em = user;
  int custom;
  op_for_node(em, node, &custom);
  return !custom || (!is_onnx_family_domain(node->domain) && !has_graph_attr(node));
}

/* ---- nodes ------------------------------------------------------------- */

static o2m_status node_operands(om_emitter *em, const o2m_node *node, const om_op *def, int custom,
                                MlirBlock block, MlirValue *operands, int *n, int cap) {
  *n = 0;
  for (int i = 0; i < node->n_inputs; i++) {
    MlirValue v;
    if (!node->inputs[i]) {
      o2m_status status = om_no_value(em, block, &v);
      if (status != O2M_OK) return status;
    } else {
      v = form_values_get(&em->values, node->inputs[i]);
      if (mlirValueIsNull(v))
        return om_node_fail(em, node, O2M_ERR_INVALID, "input '%s' is used before it is defined",
                            node->input_names[i]);
    }
    operands[(*n)++] = v;
  }
  if (custom) return O2M_OK;
  o2m_status status = om_special_operands(em, node, def->name, block, operands, n, cap);
  if (status != O2M_OK || def->variadic_operands) return status;
  if (*n > def->n_operands)
    return om_node_fail(em, node, O2M_ERR_INVALID, "has %d inputs; onnx.%s takes at most %d", *n,
                        def->name, def->n_operands);
  while (status == O2M_OK && *n < def->n_operands) status = om_no_value(em, block, &operands[(*n)++]);
  return status;
}

/* A custom op's output of unknown type: a tensor of the first input's
 * element type, as onnx-mlir's importer assumes. */
static MlirType custom_result_type(om_emitter *em, MlirValue *operands, int n) {
  if (n == 0 || !mlirTypeIsAShaped(mlirValueGetType(operands[0]))) return (MlirType){NULL};
  return mlirUnrankedTensorTypeGet(mlirShapedTypeGetElementType(mlirValueGetType(operands[0])));
}

static o2m_status node_results(om_emitter *em, const o2m_node *node, const om_op *def, int custom,
                               MlirValue *operands, int n_operands, MlirType *types, int *n) {
  *n = node->n_outputs;
  if (!custom && !def->variadic_results && *n > def->n_results)
    return om_node_fail(em, node, O2M_ERR_INVALID, "has %d outputs; onnx.%s has %d", *n, def->name,
                        def->n_results);
  for (int i = 0; i < node->n_outputs; i++) {
    types[i] = em->none_type;
    const o2m_value *out = node->outputs[i];
    if (!out) continue;
    const char *why = NULL;
    o2m_status status = om_type(em, &out->type, &types[i], &why);
    if (status == O2M_ERR_UNSUPPORTED && custom && out->type.kind == O2M_TYPE_UNKNOWN) {
      types[i] = custom_result_type(em, operands, n_operands);
      if (!mlirTypeIsNull(types[i])) continue;
    }
    if (status != O2M_OK)
      return om_node_fail(em, node, status, "output '%s' %s", node->output_names[i], why);
  }
  if (!custom && !def->variadic_results)
    while (*n < def->n_results) types[(*n)++] = em->none_type;
  return O2M_OK;
}

/* The region index of graph attribute `name`, or -1. */
static int region_index(const om_op *def, const char *name) {
  for (int r = 0; r < def->n_regions; r++)
    if (strcmp(def->regions[r], name) == 0) return r;
  return -1;
}

static o2m_status check_regions(om_emitter *em, const o2m_node *node, const om_op *def, int custom) {
  int filled = 0;
  for (int a = 0; a < node->n_attrs; a++) {
    const o2m_attr *attr = &node->attrs[a];
    if (attr->type == O2M_ATTR_GRAPHS)
      return om_node_fail(em, node, O2M_ERR_UNSUPPORTED,
                          "attribute '%s' is a list of graphs, which onnx-mlir has no op for",
                          attr->name);
    if (attr->type != O2M_ATTR_GRAPH) continue;
    if (custom || region_index(def, attr->name) < 0)
      return om_node_fail(em, node, O2M_ERR_UNSUPPORTED, "onnx.%s has no region for graph '%s'",
                          def->name, attr->name);
    if (!attr->g)
      return om_node_fail(em, node, O2M_ERR_INVALID, "graph attribute '%s' has no graph",
                          attr->name);
    filled++;
  }
  if (!custom && filled != def->n_regions)
    return om_node_fail(em, node, O2M_ERR_INVALID, "onnx.%s takes %d graph attributes, %d given",
                        def->name, def->n_regions, filled);
  return O2M_OK;
}

/* input_names, output_names, input_dim_params, output_dim_params of the
 * subgraph, on the op (the last graph attribute's win, as in onnx-mlir). */
static o2m_status add_subgraph_names(om_emitter *em, MlirOperation op, const o2m_graph *g) {
  int n_in = 0, n_out = 0, n_out_params = 0;
  MlirAttribute *names = malloc(sizeof(MlirAttribute) * (size_t)(g->n_inputs + g->n_outputs + 1));
  MlirAttribute *params = malloc(sizeof(MlirAttribute) * (size_t)(g->n_inputs + g->n_outputs + 1));
  o2m_status status = names && params ? O2M_OK : om_fail(em, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; status == O2M_OK && i < g->n_inputs; i++) {
    const o2m_value *v = g->input_values[i];
    if (v && v->kind == O2M_VALUE_INITIALIZER) continue;
    const char *dims = om_dim_params(em, &g->inputs[i].type);
    if (!dims) status = om_fail(em, O2M_ERR_NOMEM, "out of memory");
    names[n_in] = string_attr(em, g->inputs[i].name);
    params[n_in++] = string_attr(em, dims ? dims : "");
  }
  if (status == O2M_OK && n_in) {
    mlirOperationSetDiscardableAttributeByName(op, om_str("input_names"),
                                               mlirArrayAttrGet(em->ctx, n_in, names));
    mlirOperationSetDiscardableAttributeByName(op, om_str("input_dim_params"),
                                               mlirArrayAttrGet(em->ctx, n_in, params));
  }
  for (int i = 0; status == O2M_OK && i < g->n_outputs; i++) {
    const char *dims = om_dim_params(em, &g->outputs[i].type);
    if (!dims) status = om_fail(em, O2M_ERR_NOMEM, "out of memory");
    names[n_out++] = string_attr(em, g->outputs[i].name);
    if (dims && *dims) params[n_out_params++] = string_attr(em, dims);
  }
  if (status == O2M_OK && n_out)
    mlirOperationSetDiscardableAttributeByName(op, om_str("output_names"),
                                               mlirArrayAttrGet(em->ctx, n_out, names));
  if (status == O2M_OK && n_out_params)
    mlirOperationSetDiscardableAttributeByName(op, om_str("output_dim_params"),
                                               mlirArrayAttrGet(em->ctx, n_out_params, params));
  free(names);
  free(params);
  return status;
}

static o2m_status emit_region(om_emitter *em, const o2m_node *node, MlirOperation op, int r,
                              const o2m_graph *g) {
  int n = 0;
  MlirType *types = malloc(sizeof(MlirType) * (size_t)(g->n_inputs + 1));
  MlirLocation *locs = malloc(sizeof(MlirLocation) * (size_t)(g->n_inputs + 1));
  const o2m_value **args = malloc(sizeof(*args) * (size_t)(g->n_inputs + 1));
  o2m_status status = types && locs && args ? O2M_OK : om_fail(em, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; status == O2M_OK && i < g->n_inputs; i++) {
    const o2m_value *v = g->input_values[i];
    if (!v) {
      status = om_node_fail(em, node, O2M_ERR_INVALID, "graph '%s': input %d is not linked",
                            g->name, i);
      break;
    }
    if (v->kind == O2M_VALUE_INITIALIZER) continue;
    locs[n] = em->unknown_loc;
    args[n] = v;
    status = graph_value_type(em, g, v, "input", &types[n++]);
  }
  if (status == O2M_OK) {
    MlirBlock block = mlirBlockCreate(n, types, locs);
    mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, r), block);
    for (int i = 0; i < n && status == O2M_OK; i++)
      status = record(em, args[i], mlirBlockGetArgument(block, i));
    if (status == O2M_OK) status = emit_block_body(em, g, block, "onnx.Yield");
  }
  free(types);
  free(locs);
  free(args);
  return status;
}

static o2m_status emit_regions(om_emitter *em, const o2m_node *node, const om_op *def,
                               MlirOperation op) {
  const o2m_graph *last = NULL;
  for (int a = 0; a < node->n_attrs; a++) {
    const o2m_attr *attr = &node->attrs[a];
    if (attr->type != O2M_ATTR_GRAPH) continue;
    o2m_status status = emit_region(em, node, op, region_index(def, attr->name), attr->g);
    if (status != O2M_OK) return status;
    last = attr->g;
  }
  return last ? add_subgraph_names(em, op, last) : O2M_OK;
}

static o2m_status create_node_op(om_emitter *em, const o2m_node *node, const om_op *def, int custom,
                                 MlirBlock block, MlirValue *operands, int n_operands,
                                 MlirType *types, int n_types, MlirOperation *out) {
  char name[192];
  snprintf(name, sizeof(name), "onnx.%s", def->name);
  MlirLocation loc = name_location(em, node->name);
  MlirOperationState state = mlirOperationStateGet(om_str(name), loc);
  mlirOperationStateAddOperands(&state, n_operands, operands);
  mlirOperationStateAddResults(&state, n_types, types);
  for (int r = custom ? 0 : def->n_regions; r > 0; r--) {
    MlirRegion region = mlirRegionCreate();
    mlirOperationStateAddOwnedRegions(&state, 1, &region);
  }
  *out = append_op(block, &state);
  if (mlirOperationIsNull(*out)) return om_node_fail(em, node, O2M_ERR_INTERNAL, "MLIR refused %s", name);
  o2m_status status = om_add_node_attrs(em, node, custom ? NULL : def, *out);
  if (status == O2M_OK && custom) {
    om_set_inherent(*out, "function_name", string_attr(em, node->op_type));
    mlirOperationSetDiscardableAttributeByName(*out, om_str("domain_name"),
                                               string_attr(em, node->domain));
  }
  return status;
}

static o2m_status emit_node(om_emitter *em, const o2m_node *node, MlirBlock block) {
  int custom;
  const om_op *def = op_for_node(em, node, &custom);
  if (!def) return om_node_fail(em, node, O2M_ERR_INTERNAL, "the op table lacks onnx.Custom");
  if (custom && is_onnx_family_domain(node->domain))
    o2m_warn(em->diag, "%s: graph '%s': node '%s' (%s): onnx-mlir has no op %s, and the shared "
             "layer could not write it in ops it has: written as onnx.Custom",
             em->model->path ? em->model->path : "<model>", node->graph ? node->graph->name : "",
             node->name, node->op_type, node->op_type);
  int cap = node->n_inputs + (custom ? 0 : def->n_operands) + 8;
  int rcap = node->n_outputs + (custom ? 0 : def->n_results) + 1;
  MlirValue *operands = malloc(sizeof(MlirValue) * (size_t)cap);
  MlirType *types = malloc(sizeof(MlirType) * (size_t)rcap);
  int n_operands = 0, n_types = 0;
  MlirOperation op = {NULL};
  o2m_status status = operands && types ? O2M_OK : om_fail(em, O2M_ERR_NOMEM, "out of memory");
  if (status == O2M_OK) status = check_regions(em, node, def, custom);
  if (status == O2M_OK)
    status = node_operands(em, node, def, custom, block, operands, &n_operands, cap);
  if (status == O2M_OK)
    status = node_results(em, node, def, custom, operands, n_operands, types, &n_types);
  if (status == O2M_OK)
    status = create_node_op(em, node, def, custom, block, operands, n_operands, types, n_types, &op);
  for (int i = 0; status == O2M_OK && i < node->n_outputs; i++)
    if (node->outputs[i]) status = record(em, node->outputs[i], mlirOperationGetResult(op, i));
  if (status == O2M_OK && !custom) status = emit_regions(em, node, def, op);
  free(operands);
  free(types);
  em->nodes_done++;
  if (status == O2M_OK && em->options->progress)
    em->options->progress(em->options->progress_user, em->nodes_done, em->nodes_total);
  return status;
}

/* ---- blocks ------------------------------------------------------------ */

static o2m_status emit_terminator(om_emitter *em, const o2m_graph *graph, MlirBlock block,
                                  const char *op_name) {
  MlirOperationState state = mlirOperationStateGet(om_str(op_name), em->unknown_loc);
  for (int i = 0; i < graph->n_outputs; i++) {
    MlirValue v = form_values_get(&em->values, graph->output_values[i]);
    if (mlirValueIsNull(v)) {
      om_abandon_state(&state);
      return om_fail(em, O2M_ERR_INVALID, "graph '%s': output '%s' is never defined", graph->name,
                     graph->outputs[i].name);
    }
    mlirOperationStateAddOperands(&state, 1, &v);
  }
  if (mlirOperationIsNull(append_op(block, &state)))
    return om_fail(em, O2M_ERR_INTERNAL, "MLIR refused %s", op_name);
  return O2M_OK;
}

static o2m_status emit_block_body(om_emitter *em, const o2m_graph *graph, MlirBlock block,
                                  const char *terminator) {
  o2m_status status = emit_initializers(em, graph, block);
  for (int i = 0; i < graph->n_nodes && status == O2M_OK; i++)
    status = emit_node(em, graph->nodes[i], block);
  if (status == O2M_OK) status = emit_terminator(em, graph, block, terminator);
  return status;
}

/* ---- the function ------------------------------------------------------ */

/* {onnx.dim_params = "..", onnx.name = ".."} of a graph input or output. */
static MlirAttribute io_attrs(om_emitter *em, const o2m_value_info *info) {
  const char *dims = om_dim_params(em, &info->type);
  if (!dims) return mlirAttributeGetNull();
  MlirNamedAttribute attrs[2];
  int n = 0;
  if (*dims) attrs[n++] = om_named(em, "onnx.dim_params", string_attr(em, dims));
  attrs[n++] = om_named(em, "onnx.name", string_attr(em, info->name));
  return mlirDictionaryAttrGet(em->ctx, n, attrs);
}

typedef struct signature {
  int n_args, n_results;
  MlirType *arg_types, *result_types;
  MlirLocation *arg_locs;
  MlirAttribute *arg_attrs, *result_attrs;
  const o2m_value **arg_values;
} signature;

static o2m_status build_signature(om_emitter *em, const o2m_graph *graph, signature *sig) {
  size_t n_in = (size_t)graph->n_inputs + 1, n_out = (size_t)graph->n_outputs + 1;
  sig->arg_types = o2m_arena_array(&em->arena, n_in, sizeof(MlirType));
  sig->arg_locs = o2m_arena_array(&em->arena, n_in, sizeof(MlirLocation));
  sig->arg_attrs = o2m_arena_array(&em->arena, n_in, sizeof(MlirAttribute));
  sig->arg_values = o2m_arena_array(&em->arena, n_in, sizeof(o2m_value *));
  sig->result_types = o2m_arena_array(&em->arena, n_out, sizeof(MlirType));
  sig->result_attrs = o2m_arena_array(&em->arena, n_out, sizeof(MlirAttribute));
  if (!sig->arg_types || !sig->arg_locs || !sig->arg_attrs || !sig->arg_values ||
      !sig->result_types || !sig->result_attrs)
    return om_fail(em, O2M_ERR_NOMEM, "out of memory");
  sig->n_args = 0;
  for (int i = 0; i < graph->n_inputs; i++) {
    const o2m_value *v = graph->input_values[i];
    if (!v || v->kind == O2M_VALUE_INITIALIZER) continue;
    int k = sig->n_args++;
    o2m_status status = graph_value_type(em, graph, v, "input", &sig->arg_types[k]);
    if (status != O2M_OK) return status;
    sig->arg_locs[k] = em->unknown_loc;
    sig->arg_values[k] = v;
    sig->arg_attrs[k] = io_attrs(em, &graph->inputs[i]);
    if (mlirAttributeIsNull(sig->arg_attrs[k])) return om_fail(em, O2M_ERR_NOMEM, "out of memory");
  }
  sig->n_results = graph->n_outputs;
  for (int i = 0; i < graph->n_outputs; i++) {
    const o2m_value *v = graph->output_values[i];
    if (!v)
      return om_fail(em, O2M_ERR_INVALID, "graph '%s': output '%s' is never defined", graph->name,
                     graph->outputs[i].name);
    o2m_status status = graph_value_type(em, graph, v, "output", &sig->result_types[i]);
    if (status != O2M_OK) return status;
    sig->result_attrs[i] = io_attrs(em, &graph->outputs[i]);
    if (mlirAttributeIsNull(sig->result_attrs[i])) return om_fail(em, O2M_ERR_NOMEM, "out of memory");
  }
  return O2M_OK;
}

static o2m_status create_function(om_emitter *em, const signature *sig, MlirBlock module_body,
                                  MlirBlock *entry) {
  MlirType ftype = mlirFunctionTypeGet(em->ctx, sig->n_args, sig->arg_types, sig->n_results,
                                       sig->result_types);
  MlirNamedAttribute attrs[4] = {
      om_named(em, "sym_name", string_attr(em, "main_graph")),
      om_named(em, "function_type", mlirTypeAttrGet(ftype)),
      om_named(em, "arg_attrs", mlirArrayAttrGet(em->ctx, sig->n_args, sig->arg_attrs)),
      om_named(em, "res_attrs", mlirArrayAttrGet(em->ctx, sig->n_results, sig->result_attrs))};
  MlirOperationState state = mlirOperationStateGet(om_str("func.func"), em->unknown_loc);
  mlirOperationStateAddAttributes(&state, 4, attrs);
  *entry = mlirBlockCreate(sig->n_args, sig->arg_types, sig->arg_locs);
  MlirRegion body = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(body, *entry);
  mlirOperationStateAddOwnedRegions(&state, 1, &body);
  if (mlirOperationIsNull(append_op(module_body, &state)))
    return om_fail(em, O2M_ERR_INTERNAL, "MLIR refused func.func @main_graph");
  return O2M_OK;
}

static o2m_status emit_entry_point(om_emitter *em, MlirBlock module_body) {
  MlirOperationState state = mlirOperationStateGet(om_str("onnx.EntryPoint"), em->unknown_loc);
  MlirOperation op = append_op(module_body, &state);
  if (mlirOperationIsNull(op)) return om_fail(em, O2M_ERR_INTERNAL, "MLIR refused onnx.EntryPoint");
  om_set_inherent(op, "func", mlirFlatSymbolRefAttrGet(em->ctx, om_str("main_graph")));
  return O2M_OK;
}

o2m_status om_emit_main_function(om_emitter *em, MlirBlock module_body) {
  const o2m_graph *graph = em->model->graph;
  if (form_values_reserve(&em->values, (size_t)graph->n_values) != 0)
    return om_fail(em, O2M_ERR_NOMEM, "out of memory");
  signature sig = {0};
  MlirBlock entry = {NULL};
  o2m_status status = build_signature(em, graph, &sig);
  if (status == O2M_OK) status = create_function(em, &sig, module_body, &entry);
  for (int i = 0; i < sig.n_args && status == O2M_OK; i++)
    status = record(em, sig.arg_values[i], mlirBlockGetArgument(entry, i));
  if (status == O2M_OK) status = emit_block_body(em, graph, entry, "onnx.Return");
  if (status == O2M_OK) status = emit_entry_point(em, module_body);
  return status;
}

size_t om_count_nodes(const o2m_graph *graph) {
  size_t total = 0;
  for (int i = 0; i < graph->n_nodes; i++) {
    const o2m_node *node = graph->nodes[i];
    total++;
    for (int a = 0; a < node->n_attrs; a++)
      if (node->attrs[a].type == O2M_ATTR_GRAPH && node->attrs[a].g)
        total += om_count_nodes(node->attrs[a].g);
  }
  return total;
}
