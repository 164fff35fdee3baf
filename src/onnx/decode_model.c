/* decode_model.c - ModelProto and the messages that hang off it directly:
 * OperatorSetIdProto, StringStringEntryProto (metadata, external data)
 * and FunctionProto. o2m_decode_model is the reader's entry point for a
 * serialized model; graphs, nodes and tensors are decode_graph.c's and
 * decode_tensor.c's.
 */
#include <string.h>

#include "onnx/decode.h"
#include "onnx/reader.h"
#include "util/diag.h"

enum {
  MODEL_IR_VERSION = 1,
  MODEL_PRODUCER_NAME = 2,
  MODEL_PRODUCER_VERSION = 3,
  MODEL_DOMAIN = 4,
  MODEL_MODEL_VERSION = 5,
  MODEL_DOC = 6,
  MODEL_GRAPH = 7,
  MODEL_OPSET_IMPORT = 8,
  MODEL_METADATA_PROPS = 14,
  MODEL_FUNCTIONS = 25
};

enum {
  FUNCTION_NAME = 1,
  FUNCTION_INPUT = 4,
  FUNCTION_OUTPUT = 5,
  FUNCTION_ATTRIBUTE = 6,
  FUNCTION_NODE = 7,
  FUNCTION_DOC = 8,
  FUNCTION_OPSET_IMPORT = 9,
  FUNCTION_DOMAIN = 10,
  FUNCTION_ATTRIBUTE_PROTO = 11,
  FUNCTION_VALUE_INFO = 12,
  FUNCTION_OVERLOAD = 13
};

enum { OPSET_DOMAIN = 1, OPSET_VERSION = 2 };
enum { ENTRY_KEY = 1, ENTRY_VALUE = 2 };

/* ---- StringStringEntryProto ---- */

static o2m_status string_pair_body(o2m_decoder *d, o2m_bytes msg,
                                   o2m_string_pair *out) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  out->key = out->value = "";
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number == ENTRY_KEY)
      st = o2m_dec_string(d, &f, "key", &out->key);
    else if (f.number == ENTRY_VALUE)
      st = o2m_dec_string(d, &f, "value", &out->value);
  }
  return o2m_dec_done(d, st, r);
}

o2m_status o2m_dec_string_pair(o2m_decoder *d, o2m_bytes msg,
                               const char *kind, int64_t index,
                               o2m_string_pair *out) {
  o2m_where where;
  o2m_status st = o2m_dec_push(d, &where, kind, index, o2m_dec_offset(d, msg));
  if (!st) st = string_pair_body(d, msg, out);
  o2m_dec_pop(d, &where);
  return st;
}

/* ---- OperatorSetIdProto ---- */

static o2m_status opset_body(o2m_decoder *d, o2m_bytes msg, o2m_opset *out) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  out->domain = "";
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    if (f.number == OPSET_DOMAIN)
      st = o2m_dec_domain(d, &f, "domain", &out->domain);
    else if (f.number == OPSET_VERSION)
      st = o2m_dec_int64(d, &f, "version", &out->version);
  }
  return o2m_dec_done(d, st, r);
}

static o2m_status decode_opset(o2m_decoder *d, o2m_bytes msg, int64_t index,
                               o2m_opset *out) {
  o2m_where where;
  o2m_status st =
      o2m_dec_push(d, &where, "opset_import", index, o2m_dec_offset(d, msg));
  if (!st) st = opset_body(d, msg, out);
  o2m_dec_pop(d, &where);
  return st;
}

/* ---- FunctionProto ---- */

static o2m_status scan_function(o2m_decoder *d, o2m_bytes msg,
                                o2m_function *fn, o2m_span *span) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    int *count = NULL;
    const char *field = NULL;
    switch (f.number) {
    case FUNCTION_INPUT: count = &fn->n_inputs, field = "input"; break;
    case FUNCTION_OUTPUT: count = &fn->n_outputs, field = "output"; break;
    case FUNCTION_ATTRIBUTE:
      count = &fn->n_attr_names, field = "attribute";
      break;
    case FUNCTION_ATTRIBUTE_PROTO:
      count = &fn->n_attr_defaults, field = "attribute_proto";
      break;
    case FUNCTION_NODE: count = &fn->n_nodes, field = "node"; break;
    case FUNCTION_OPSET_IMPORT:
      count = &fn->n_opsets, field = "opset_import";
      break;
    case FUNCTION_VALUE_INFO:
      count = &fn->n_value_infos, field = "value_info";
      break;
    case FUNCTION_NAME: st = o2m_dec_string(d, &f, "name", &fn->name); break;
    case FUNCTION_DOMAIN:
      st = o2m_dec_domain(d, &f, "domain", &fn->domain);
      break;
    case FUNCTION_OVERLOAD:
      st = o2m_dec_string(d, &f, "overload", &fn->overload);
      break;
    case FUNCTION_DOC: st = o2m_dec_string(d, &f, "doc_string", &fn->doc); break;
    default: break;
    }
    if (count) {
      st = o2m_dec_count_len(d, &f, field, count);
      o2m_span_add(span, d, &f, &w);
    }
  }
  return o2m_dec_done(d, st, r);
}

static o2m_status fill_function(o2m_decoder *d, const o2m_span *span,
                                o2m_function *fn) {
  o2m_wire w = o2m_span_wire(d, span);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  int n_in = 0, n_out = 0, n_attr = 0, n_def = 0, n_node = 0, n_opset = 0,
      n_vi = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    o2m_bytes msg = {f.data, f.len};
    if (f.number == FUNCTION_INPUT && n_in < fn->n_inputs)
      st = o2m_dec_string(d, &f, "input", &fn->inputs[n_in++]);
    else if (f.number == FUNCTION_OUTPUT && n_out < fn->n_outputs)
      st = o2m_dec_string(d, &f, "output", &fn->outputs[n_out++]);
    else if (f.number == FUNCTION_ATTRIBUTE && n_attr < fn->n_attr_names)
      st = o2m_dec_string(d, &f, "attribute", &fn->attr_names[n_attr++]);
    else if (f.number == FUNCTION_ATTRIBUTE_PROTO &&
             n_def < fn->n_attr_defaults)
      st = o2m_dec_attr(d, msg, n_def, NULL, &fn->attr_defaults[n_def]),
      n_def++;
    else if (f.number == FUNCTION_NODE && n_node < fn->n_nodes)
      st = o2m_dec_node(d, msg, n_node, NULL, &fn->nodes[n_node]), n_node++;
    else if (f.number == FUNCTION_OPSET_IMPORT && n_opset < fn->n_opsets)
      st = decode_opset(d, msg, n_opset, &fn->opsets[n_opset]), n_opset++;
    else if (f.number == FUNCTION_VALUE_INFO && n_vi < fn->n_value_infos)
      st = o2m_dec_value_info(d, msg, "value_info", n_vi,
                              &fn->value_infos[n_vi]),
      n_vi++;
  }
  return o2m_dec_done(d, st, r);
}

static o2m_status function_body(o2m_decoder *d, o2m_bytes msg,
                                o2m_function *fn, o2m_where *where) {
  o2m_span span = {0};
  fn->name = fn->domain = fn->overload = fn->doc = "";
  where->name = &fn->name;
  o2m_status st = scan_function(d, msg, fn, &span);
  if (st) return st;
  if (!fn->name[0])
    return o2m_dec_fail(d, O2M_ERR_INVALID, o2m_dec_offset(d, msg),
                        "function has no name");
  if ((st = o2m_dec_array(d, fn->n_inputs, sizeof(char *), &fn->inputs)) ||
      (st = o2m_dec_array(d, fn->n_outputs, sizeof(char *), &fn->outputs)) ||
      (st = o2m_dec_array(d, fn->n_attr_names, sizeof(char *),
                        &fn->attr_names)) ||
      (st = o2m_dec_array(d, fn->n_attr_defaults, sizeof(o2m_attr),
                        &fn->attr_defaults)) ||
      (st = o2m_dec_array(d, fn->n_nodes, sizeof(o2m_node *), &fn->nodes)) ||
      (st = o2m_dec_array(d, fn->n_opsets, sizeof(o2m_opset), &fn->opsets)) ||
      (st = o2m_dec_array(d, fn->n_value_infos, sizeof(o2m_value_info),
                        &fn->value_infos)))
    return st;
  return fill_function(d, &span, fn);
}

static o2m_status decode_function(o2m_decoder *d, o2m_bytes msg,
                                  int64_t index, o2m_function *out) {
  o2m_where where;
  o2m_status st =
      o2m_dec_push(d, &where, "function", index, o2m_dec_offset(d, msg));
  if (!st) st = function_body(d, msg, out, &where);
  o2m_dec_pop(d, &where);
  return st;
}

/* ---- ModelProto ---- */

static o2m_status scan_model(o2m_decoder *d, o2m_bytes msg, o2m_model *m,
                             o2m_bytes *graph, o2m_span *span) {
  o2m_wire w = o2m_wire_sub(d->base, msg.ptr, msg.len);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    int *count = NULL;
    const char *field = NULL;
    switch (f.number) {
    case MODEL_IR_VERSION:
      st = o2m_dec_int64(d, &f, "ir_version", &m->ir_version);
      break;
    case MODEL_MODEL_VERSION:
      st = o2m_dec_int64(d, &f, "model_version", &m->model_version);
      break;
    case MODEL_PRODUCER_NAME:
      st = o2m_dec_string(d, &f, "producer_name", &m->producer_name);
      break;
    case MODEL_PRODUCER_VERSION:
      st = o2m_dec_string(d, &f, "producer_version", &m->producer_version);
      break;
    case MODEL_DOMAIN: st = o2m_dec_string(d, &f, "domain", &m->domain); break;
    case MODEL_DOC: st = o2m_dec_string(d, &f, "doc_string", &m->doc); break;
    case MODEL_GRAPH: st = o2m_dec_message(d, &f, "graph", graph); break;
    case MODEL_OPSET_IMPORT:
      count = &m->n_opsets, field = "opset_import";
      break;
    case MODEL_METADATA_PROPS:
      count = &m->n_metadata, field = "metadata_props";
      break;
    case MODEL_FUNCTIONS: count = &m->n_functions, field = "functions"; break;
    default: break; /* training_info, configuration and unknown fields */
    }
    if (count) {
      st = o2m_dec_count_len(d, &f, field, count);
      o2m_span_add(span, d, &f, &w);
    }
  }
  return o2m_dec_done(d, st, r);
}

static o2m_status fill_model(o2m_decoder *d, const o2m_span *span,
                             o2m_model *m) {
  o2m_wire w = o2m_span_wire(d, span);
  o2m_wire_field f;
  o2m_status st = O2M_OK;
  int r = 0, n_opset = 0, n_meta = 0, n_fn = 0;
  while (!st && (r = o2m_dec_next(d, &w, &f)) > 0) {
    o2m_bytes msg = {f.data, f.len};
    if (f.number == MODEL_OPSET_IMPORT && n_opset < m->n_opsets)
      st = decode_opset(d, msg, n_opset, &m->opsets[n_opset]), n_opset++;
    else if (f.number == MODEL_METADATA_PROPS && n_meta < m->n_metadata)
      st = o2m_dec_string_pair(d, msg, "metadata_props", n_meta,
                               &m->metadata[n_meta]),
      n_meta++;
    else if (f.number == MODEL_FUNCTIONS && n_fn < m->n_functions)
      st = decode_function(d, msg, n_fn, &m->functions[n_fn]), n_fn++;
  }
  return o2m_dec_done(d, st, r);
}

o2m_status o2m_decode_model(o2m_model *model, const uint8_t *bytes,
                            size_t size, o2m_diag *diag) {
  static const uint8_t empty[1];
  o2m_diag scratch = {0};
  if (!diag) diag = &scratch; /* the decoders read back the status */
  const char *file = model->path ? model->path : "<model>";
  if (!bytes) {
    if (size) return o2m_fail(diag, O2M_ERR_USAGE, "%s: no bytes", file);
    bytes = empty;
  }
  o2m_decoder d = {
      .model = model,
      .arena = &model->arena,
      .diag = diag,
      .file = file,
      .base = bytes,
      .release = model->n_mappings > 0 && bytes == model->mappings[0].addr,
  };
  model->producer_name = model->producer_version = model->domain =
      model->doc = "";
  o2m_bytes msg = {bytes, size}, graph = {0};
  o2m_span span = {0};
  o2m_status st = scan_model(&d, msg, model, &graph, &span);
  if (st) return st;
  if ((st = o2m_dec_array(&d, model->n_opsets, sizeof(o2m_opset),
                        &model->opsets)) ||
      (st = o2m_dec_array(&d, model->n_metadata, sizeof(o2m_string_pair),
                        &model->metadata)) ||
      (st = o2m_dec_array(&d, model->n_functions, sizeof(o2m_function),
                        &model->functions)) ||
      (st = fill_model(&d, &span, model)))
    return st;
  if (!graph.ptr)
    return o2m_dec_fail(&d, O2M_ERR_INVALID, O2M_NO_OFFSET,
                        "the model has no graph");
  return o2m_dec_graph(&d, graph, "graph", -1, NULL, &model->graph);
}
