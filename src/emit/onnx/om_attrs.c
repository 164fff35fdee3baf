/* om_attrs.c - ONNX node attributes as onnx-mlir's importer writes them.
 *
 * Owns: the attribute forms (FrontendGenImpl::
 * convertOnnxAttributeProtoToMlirNamedAttribute), checked against the
 * kind the op's table row gives each inherent attribute:
 *
 *   INT -> 5 : si64            FLOAT -> 1.0 : f32        STRING -> "s"
 *   INTS -> [1, 2] (i64)       FLOATS -> [1.0 : f32]     STRINGS -> ["a"]
 *   TENSOR -> dense_resource / dense (src/emit/form)     TYPE_PROTO -> type
 *   Cast's `to` (INT) -> the element type it names, as a type
 * and where onnx-mlir's importer stops, forms that keep the data:
 * SPARSE_TENSOR -> sparse<..>, TENSORS / SPARSE_TENSORS / TYPE_PROTOS ->
 * arrays. A table attribute the node lacks gets the table's default; an
 * attribute the table does not know stays on the op as a discardable one,
 * as onnx-mlir's builders leave it, and so does onnx_node_name.
 */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/onnx/om_internal.h"

typedef struct attr_job {
  om_emitter *em;
  const o2m_node *node;
  const o2m_attr *attr;
} attr_job;

static const char *blob_fallback_name(const o2m_node *node) {
  if (node->n_outputs > 0 && node->output_names[0][0]) return node->output_names[0];
  return node->name[0] ? node->name : "constant";
}

o2m_status om_tensor_attr(om_emitter *em, const o2m_node *node, const o2m_tensor *tensor,
                          const char *fallback_name, MlirAttribute *out) {
  const char *why = NULL;
  o2m_status status = form_tensor_attr(&em->tensors, tensor, fallback_name, out, &why);
  if (status == O2M_OK) return O2M_OK;
  if (!node) return om_fail(em, status, "tensor '%s' %s", tensor->name ? tensor->name : "", why);
  return om_node_fail(em, node, status, "tensor '%s' %s", tensor->name ? tensor->name : "", why);
}

static o2m_status one_sparse(const attr_job *job, const o2m_sparse_tensor *sparse,
                             MlirAttribute *out) {
  const char *why = NULL;
  o2m_status status = form_sparse_attr(&job->em->tensors, sparse, out, &why);
  return status == O2M_OK ? O2M_OK
                          : om_node_fail(job->em, job->node, status, "attribute '%s': %s",
                                         job->attr->name, why);
}

static o2m_status one_type(const attr_job *job, const o2m_type *type, MlirAttribute *out) {
  MlirType t;
  const char *why = NULL;
  o2m_status status = om_type(job->em, type, &t, &why);
  if (status != O2M_OK)
    return om_node_fail(job->em, job->node, status, "attribute '%s': its type %s",
                        job->attr->name, why);
  *out = mlirTypeAttrGet(t);
  return O2M_OK;
}

static MlirAttribute string_attr(om_emitter *em, o2m_bytes s) {
  return mlirStringAttrGet(em->ctx, mlirStringRefCreate((const char *)s.ptr, s.len));
}

static o2m_status list_element(const attr_job *job, int i, MlirAttribute *out) {
  om_emitter *em = job->em;
  const o2m_attr *a = job->attr;
  switch (a->type) {
  case O2M_ATTR_FLOATS:
    *out = mlirFloatAttrDoubleGet(em->ctx, em->f32_type, a->floats[i]);
    return O2M_OK;
  case O2M_ATTR_INTS:
    *out = mlirIntegerAttrGet(em->i64_type, a->ints[i]);
    return O2M_OK;
  case O2M_ATTR_STRINGS:
    *out = string_attr(em, a->strings[i]);
    return O2M_OK;
  case O2M_ATTR_TENSORS:
    return om_tensor_attr(em, job->node, a->tensors[i], blob_fallback_name(job->node), out);
  case O2M_ATTR_SPARSE_TENSORS:
    return one_sparse(job, a->sparses[i], out);
  case O2M_ATTR_TYPE_PROTOS:
    return one_type(job, a->tps[i], out);
  default:
    return om_node_fail(em, job->node, O2M_ERR_INTERNAL, "attribute '%s' is not a list", a->name);
  }
}

static o2m_status list_attr(const attr_job *job, MlirAttribute *out) {
  int count = job->attr->count;
  MlirAttribute *elems = malloc(sizeof(*elems) * (size_t)(count + 1));
  if (!elems) return om_node_fail(job->em, job->node, O2M_ERR_NOMEM, "out of memory");
  o2m_status status = O2M_OK;
  for (int i = 0; i < count && status == O2M_OK; i++) status = list_element(job, i, &elems[i]);
  if (status == O2M_OK) *out = mlirArrayAttrGet(job->em->ctx, count, elems);
  free(elems);
  return status;
}

/* The attribute in onnx-mlir's form for its ONNX type. */
static o2m_status plain_attr(const attr_job *job, MlirAttribute *out) {
  om_emitter *em = job->em;
  const o2m_attr *a = job->attr;
  switch (a->type) {
  case O2M_ATTR_FLOAT:
    *out = mlirFloatAttrDoubleGet(em->ctx, em->f32_type, a->f);
    return O2M_OK;
  case O2M_ATTR_INT:
    *out = mlirIntegerAttrGet(em->si64_type, a->i);
    return O2M_OK;
  case O2M_ATTR_STRING:
    *out = string_attr(em, a->s);
    return O2M_OK;
  case O2M_ATTR_TENSOR:
    return om_tensor_attr(em, job->node, a->t, blob_fallback_name(job->node), out);
  case O2M_ATTR_SPARSE_TENSOR:
    return one_sparse(job, a->sparse, out);
  case O2M_ATTR_TYPE_PROTO:
    return one_type(job, a->tp, out);
  case O2M_ATTR_FLOATS:
  case O2M_ATTR_INTS:
  case O2M_ATTR_STRINGS:
  case O2M_ATTR_TENSORS:
  case O2M_ATTR_SPARSE_TENSORS:
  case O2M_ATTR_TYPE_PROTOS:
    return list_attr(job, out);
  default:
    return om_node_fail(em, job->node, O2M_ERR_INVALID, "attribute '%s' has undefined type %d",
                        a->name, (int)a->type);
  }
}

/* The ONNX attribute types each table kind takes. */
static int kind_takes(om_attr_kind kind, o2m_attr_type type) {
  switch (kind) {
  case OM_SI64: return type == O2M_ATTR_INT;
  case OM_F32: return type == O2M_ATTR_FLOAT;
  case OM_STR: return type == O2M_ATTR_STRING;
  case OM_I64S: return type == O2M_ATTR_INTS;
  case OM_F32S: return type == O2M_ATTR_FLOATS;
  case OM_STRS: return type == O2M_ATTR_STRINGS;
  case OM_ANY: return type == O2M_ATTR_TENSOR || type == O2M_ATTR_SPARSE_TENSOR;
  case OM_TYPE: return type == O2M_ATTR_INT || type == O2M_ATTR_TYPE_PROTO;
  default: return 0;
  }
}

static const char *const kind_text[OM_KIND_COUNT] = {
    [OM_SI64] = "an INT", [OM_F32] = "a FLOAT", [OM_STR] = "a STRING",
    [OM_I64S] = "INTS", [OM_F32S] = "FLOATS", [OM_STRS] = "STRINGS",
    [OM_ANY] = "a TENSOR", [OM_TYPE] = "a data type",
};

static const char *const onnx_type_text[] = {
    [O2M_ATTR_FLOAT] = "FLOAT", [O2M_ATTR_INT] = "INT", [O2M_ATTR_STRING] = "STRING",
    [O2M_ATTR_TENSOR] = "TENSOR", [O2M_ATTR_GRAPH] = "GRAPH", [O2M_ATTR_FLOATS] = "FLOATS",
    [O2M_ATTR_INTS] = "INTS", [O2M_ATTR_STRINGS] = "STRINGS", [O2M_ATTR_TENSORS] = "TENSORS",
    [O2M_ATTR_GRAPHS] = "GRAPHS", [O2M_ATTR_SPARSE_TENSOR] = "SPARSE_TENSOR",
    [O2M_ATTR_SPARSE_TENSORS] = "SPARSE_TENSORS", [O2M_ATTR_TYPE_PROTO] = "TYPE_PROTO",
    [O2M_ATTR_TYPE_PROTOS] = "TYPE_PROTOS",
};

static const char *onnx_type_name(o2m_attr_type type) {
  size_t n = sizeof(onnx_type_text) / sizeof(onnx_type_text[0]);
  return (size_t)type < n && onnx_type_text[type] ? onnx_type_text[type] : "an undefined type";
}

/* An inherent attribute as the table types it. */
static o2m_status typed_attr(const attr_job *job, const om_attr_def *def, MlirAttribute *out) {
  om_emitter *em = job->em;
  const o2m_attr *a = job->attr;
  if (!kind_takes(def->kind, a->type))
    return om_node_fail(em, job->node, O2M_ERR_INVALID,
                        "attribute '%s' must be %s for onnx-mlir's onnx.%s, not %s", a->name,
                        kind_text[def->kind], job->node->op_type, onnx_type_name(a->type));
  if (def->kind == OM_TYPE && a->type == O2M_ATTR_INT) {
    MlirType elem = om_element_type(em, (o2m_dtype)a->i);
    if (mlirTypeIsNull(elem))
      return om_node_fail(em, job->node, O2M_ERR_UNSUPPORTED,
                          "attribute '%s' names data type %lld, which onnx-mlir cannot represent",
                          a->name, (long long)a->i);
    *out = mlirTypeAttrGet(elem);
    return O2M_OK;
  }
  return plain_attr(job, out);
}

/* ---- defaults ---------------------------------------------------------- */

/* The comma-separated items of a default list, as attributes. */
static MlirAttribute default_list(om_emitter *em, om_attr_kind kind, const char *text) {
  enum { MAX_ITEMS = 64 };
  MlirAttribute items[MAX_ITEMS];
  int n = 0;
  for (const char *p = text; *p && n < MAX_ITEMS;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char item[128];
    snprintf(item, sizeof(item), "%.*s", (int)len, p);
    if (kind == OM_I64S) items[n++] = mlirIntegerAttrGet(em->i64_type, strtoll(item, NULL, 10));
    else if (kind == OM_F32S) items[n++] = mlirFloatAttrDoubleGet(em->ctx, em->f32_type, strtod(item, NULL));
    else items[n++] = mlirStringAttrGet(em->ctx, mlirStringRefCreate(item, strlen(item)));
    p += len + (end ? 1 : 0);
  }
  return mlirArrayAttrGet(em->ctx, n, items);
}

static MlirAttribute default_attr(om_emitter *em, const om_attr_def *def) {
  const char *text = def->dflt;
  switch (def->kind) {
  case OM_SI64: return mlirIntegerAttrGet(em->si64_type, strtoll(text, NULL, 10));
  case OM_F32: /* written "(3.402823e+38)" in places */
    return mlirFloatAttrDoubleGet(em->ctx, em->f32_type, strtod(text + (*text == '('), NULL));
  case OM_STR: return mlirStringAttrGet(em->ctx, om_str(text));
  case OM_I64S:
  case OM_F32S:
  case OM_STRS: return default_list(em, def->kind, text);
  default: return mlirAttributeGetNull();
  }
}

static const o2m_attr *node_attr(const o2m_node *node, const char *name) {
  for (int i = 0; i < node->n_attrs; i++)
    if (strcmp(node->attrs[i].name, name) == 0) return &node->attrs[i];
  return NULL;
}

/* ---- the node ---------------------------------------------------------- */

void om_set_inherent(MlirOperation op, const char *name, MlirAttribute value) {
  mlirOperationSetInherentAttributeByName(op, om_str(name), value);
}

static o2m_status check_attr(om_emitter *em, const o2m_node *node, int index) {
  const o2m_attr *a = &node->attrs[index];
  if (a->ref_attr_name && a->ref_attr_name[0])
    return om_node_fail(em, node, O2M_ERR_INVALID,
                        "attribute '%s' refers to function attribute '%s' outside a function",
                        a->name, a->ref_attr_name);
  for (int j = 0; j < index; j++)
    if (strcmp(node->attrs[j].name, a->name) == 0)
      return om_node_fail(em, node, O2M_ERR_INVALID, "attribute '%s' is given twice", a->name);
  return O2M_OK;
}

o2m_status om_add_node_attrs(om_emitter *em, const o2m_node *node, const om_op *def,
                             MlirOperation op) {
  for (int i = 0; i < node->n_attrs; i++) {
    const o2m_attr *a = &node->attrs[i];
    if (a->type == O2M_ATTR_GRAPH || a->type == O2M_ATTR_GRAPHS) continue;
    o2m_status status = check_attr(em, node, i);
    if (status != O2M_OK) return status;
    attr_job job = {em, node, a};
    const om_attr_def *adef = def ? om_attr_def_find(def, a->name) : NULL;
    MlirAttribute value = mlirAttributeGetNull();
    status = adef ? typed_attr(&job, adef, &value) : plain_attr(&job, &value);
    if (status != O2M_OK) return status;
    if (mlirAttributeIsNull(value))
      return om_node_fail(em, node, O2M_ERR_NOMEM, "attribute '%s': out of memory", a->name);
    if (adef) om_set_inherent(op, a->name, value);
    else mlirOperationSetDiscardableAttributeByName(op, om_str(a->name), value);
  }
  for (int i = 0; def && i < def->n_attrs; i++) {
    const om_attr_def *adef = &def->attrs[i];
    if (node_attr(node, adef->name)) continue;
    if (adef->presence == OM_DEFAULTED) {
      om_set_inherent(op, adef->name, default_attr(em, adef));
    } else if (adef->presence == OM_REQUIRED && strcmp(def->name, "Custom") != 0) {
      return om_node_fail(em, node, O2M_ERR_INVALID, "attribute '%s' is required by onnx.%s",
                          adef->name, def->name);
    }
  }
  if (node->name[0])
    mlirOperationSetDiscardableAttributeByName(
        op, om_str("onnx_node_name"), mlirStringAttrGet(em->ctx, om_str(node->name)));
  return O2M_OK;
}
