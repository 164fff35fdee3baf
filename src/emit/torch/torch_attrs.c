/* torch_attrs.c - ONNX node attributes as torch.onnx.<name> attributes.
 *
 * Owns: one handler per ONNX attribute type, as torch-mlir's importer maps
 * them, and the region order of graph attributes:
 *
 *   INT -> 5 : si64          FLOAT -> 1.0 : f32        STRING -> "s"
 *   INTS / FLOATS / STRINGS -> [..] arrays of the same
 *   TENSOR -> dense_resource or dense (torch_tensors.c)   TENSORS -> array
 *   GRAPH -> no attribute: a region of the op (torch_graph.c)
 * and, where torch-mlir's importer gives up, forms that keep the data:
 *   GRAPHS -> no attribute: one region per graph, in list order
 *   SPARSE_TENSOR -> sparse<indices, values> : tensor<...>   SPARSE_TENSORS
 *       -> array of them (ONNX Constant's sparse_value yields a dense
 *       tensor, so the attribute keeps the full shape)
 *   TYPE_PROTO -> the torch type as a type attribute (!torch.vtensor<...>)
 *       TYPE_PROTOS -> array of them
 * Regions come in the order of their attribute names (If: else_branch,
 * then_branch), as torch-mlir sorts them.
 */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/torch/torch_internal.h"

typedef struct attr_job {
  o2m_torch *em;
  const o2m_node *node;
  const o2m_attr *attr;
} attr_job;

/* Reports a failure of the attribute in `job` and returns `status`: "its
 * <what> '<name>' <why>", or "<why>" alone when `what` is NULL. */
static o2m_status attr_fail(const attr_job *job, o2m_status status,
                            const char *what, const char *name,
                            const char *why) {
  if (!what)
    return torch_node_fail(job->em, job->node, status, "attribute '%s': %s",
                           job->attr->name, why);
  return torch_node_fail(job->em, job->node, status,
                         "attribute '%s': %s '%s' %s", job->attr->name, what,
                         name, why);
}

static const char *blob_fallback_name(const o2m_node *node) {
  if (node->n_outputs > 0 && node->output_names[0][0])
    return node->output_names[0];
  return node->name[0] ? node->name : "constant";
}

static o2m_status one_tensor(const attr_job *job, const o2m_tensor *tensor,
                             MlirAttribute *out) {
  const char *why = NULL;
  o2m_status status = form_tensor_attr(&job->em->tensors, tensor,
                                        blob_fallback_name(job->node), out,
                                        &why);
  return status == O2M_OK ? O2M_OK
                          : attr_fail(job, status, "tensor", tensor->name, why);
}

static o2m_status one_sparse(const attr_job *job,
                             const o2m_sparse_tensor *sparse,
                             MlirAttribute *out) {
  const char *why = NULL;
  o2m_status status = form_sparse_attr(&job->em->tensors, sparse, out, &why);
  const char *name = sparse->values ? sparse->values->name : "";
  return status == O2M_OK ? O2M_OK
                          : attr_fail(job, status, "sparse tensor", name, why);
}

static o2m_status one_type(const attr_job *job, const o2m_type *type,
                           MlirAttribute *out) {
  MlirType t;
  const char *why = NULL;
  o2m_status status = torch_type(job->em, type, &t, &why);
  if (status != O2M_OK) return attr_fail(job, status, NULL, NULL, why);
  *out = mlirTypeAttrGet(t);
  return O2M_OK;
}

/* Element `i` of the list attribute in `job`. */
static o2m_status list_element(const attr_job *job, int i,
                               MlirAttribute *out) {
  o2m_torch *em = job->em;
  const o2m_attr *a = job->attr;
  switch (a->type) {
  case O2M_ATTR_FLOATS:
    *out = mlirFloatAttrDoubleGet(em->ctx, em->f32_type, a->floats[i]);
    return O2M_OK;
  case O2M_ATTR_INTS:
    *out = mlirIntegerAttrGet(em->si64_type, a->ints[i]);
    return O2M_OK;
  case O2M_ATTR_STRINGS:
    *out = mlirStringAttrGet(
        em->ctx,
        mlirStringRefCreate((const char *)a->strings[i].ptr, a->strings[i].len));
    return O2M_OK;
  case O2M_ATTR_TENSORS:
    return one_tensor(job, a->tensors[i], out);
  case O2M_ATTR_SPARSE_TENSORS:
    return one_sparse(job, a->sparses[i], out);
  case O2M_ATTR_TYPE_PROTOS:
    return one_type(job, a->tps[i], out);
  default:
    return torch_node_fail(em, job->node, O2M_ERR_INTERNAL,
                           "attribute '%s' is not a list", a->name);
  }
}

static o2m_status list_attr(const attr_job *job, MlirAttribute *out) {
  int count = job->attr->count;
  MlirAttribute *elems = malloc(sizeof(*elems) * (size_t)(count + 1));
  if (!elems)
    return torch_node_fail(job->em, job->node, O2M_ERR_NOMEM,
                           "out of memory");
  o2m_status status = O2M_OK;
  for (int i = 0; i < count && status == O2M_OK; i++)
    status = list_element(job, i, &elems[i]);
  if (status == O2M_OK) *out = mlirArrayAttrGet(job->em->ctx, count, elems);
  free(elems);
  return status;
}

static o2m_status scalar_attr(const attr_job *job, MlirAttribute *out) {
  o2m_torch *em = job->em;
  const o2m_attr *a = job->attr;
  switch (a->type) {
  case O2M_ATTR_FLOAT:
    *out = mlirFloatAttrDoubleGet(em->ctx, em->f32_type, a->f);
    return O2M_OK;
  case O2M_ATTR_INT:
    *out = mlirIntegerAttrGet(em->si64_type, a->i);
    return O2M_OK;
  case O2M_ATTR_STRING:
    *out = mlirStringAttrGet(
        em->ctx, mlirStringRefCreate((const char *)a->s.ptr, a->s.len));
    return O2M_OK;
  case O2M_ATTR_TENSOR:
    return one_tensor(job, a->t, out);
  case O2M_ATTR_SPARSE_TENSOR:
    return one_sparse(job, a->sparse, out);
  case O2M_ATTR_TYPE_PROTO:
    return one_type(job, a->tp, out);
  default:
    return torch_node_fail(em, job->node, O2M_ERR_INTERNAL,
                           "attribute '%s' is not a scalar", a->name);
  }
}

typedef enum attr_form { FORM_NONE, FORM_SCALAR, FORM_LIST, FORM_REGION } attr_form;

static const attr_form form_of_type[] = {
    [O2M_ATTR_UNDEFINED] = FORM_NONE,
    [O2M_ATTR_FLOAT] = FORM_SCALAR,
    [O2M_ATTR_INT] = FORM_SCALAR,
    [O2M_ATTR_STRING] = FORM_SCALAR,
    [O2M_ATTR_TENSOR] = FORM_SCALAR,
    [O2M_ATTR_GRAPH] = FORM_REGION,
    [O2M_ATTR_FLOATS] = FORM_LIST,
    [O2M_ATTR_INTS] = FORM_LIST,
    [O2M_ATTR_STRINGS] = FORM_LIST,
    [O2M_ATTR_TENSORS] = FORM_LIST,
    [O2M_ATTR_GRAPHS] = FORM_REGION,
    [O2M_ATTR_SPARSE_TENSOR] = FORM_SCALAR,
    [O2M_ATTR_SPARSE_TENSORS] = FORM_LIST,
    [O2M_ATTR_TYPE_PROTO] = FORM_SCALAR,
    [O2M_ATTR_TYPE_PROTOS] = FORM_LIST,
};

static attr_form form_of(o2m_attr_type type) {
  size_t n = sizeof(form_of_type) / sizeof(form_of_type[0]);
  return (size_t)type < n ? form_of_type[type] : FORM_NONE;
}

/* "torch.onnx.<name>" as an identifier. */
static MlirIdentifier attr_identifier(o2m_torch *em, const char *name) {
  static const char prefix[] = "torch.onnx.";
  char local[256];
  size_t n = sizeof(prefix) - 1 + strlen(name);
  char *text = n < sizeof(local) ? local : malloc(n + 1);
  if (!text) return (MlirIdentifier){NULL};
  memcpy(text, prefix, sizeof(prefix) - 1);
  memcpy(text + sizeof(prefix) - 1, name, n - (sizeof(prefix) - 1));
  MlirIdentifier id =
      mlirIdentifierGet(em->ctx, mlirStringRefCreate(text, n));
  if (text != local) free(text);
  return id;
}

static o2m_status check_attr(o2m_torch *em, const o2m_node *node, int index) {
  const o2m_attr *a = &node->attrs[index];
  if (a->ref_attr_name && a->ref_attr_name[0])
    return torch_node_fail(em, node, O2M_ERR_INVALID,
                           "attribute '%s' refers to function attribute '%s' "
                           "outside a function",
                           a->name, a->ref_attr_name);
  if (form_of(a->type) == FORM_NONE)
    return torch_node_fail(em, node, O2M_ERR_INVALID,
                           "attribute '%s' has undefined type %d", a->name,
                           (int)a->type);
  for (int j = 0; j < index; j++)
    if (strcmp(node->attrs[j].name, a->name) == 0)
      return torch_node_fail(em, node, O2M_ERR_INVALID,
                             "attribute '%s' is given twice", a->name);
  return O2M_OK;
}

o2m_status torch_add_node_attrs(o2m_torch *em, const o2m_node *node,
                                MlirOperationState *state) {
  for (int i = 0; i < node->n_attrs; i++) {
    o2m_status status = check_attr(em, node, i);
    if (status != O2M_OK) return status;
    attr_job job = {em, node, &node->attrs[i]};
    MlirAttribute value = mlirAttributeGetNull();
    switch (form_of(job.attr->type)) {
    case FORM_SCALAR:
      status = scalar_attr(&job, &value);
      break;
    case FORM_LIST:
      status = list_attr(&job, &value);
      break;
    case FORM_REGION:
    case FORM_NONE:
      continue;
    }
    if (status != O2M_OK) return status;
    MlirIdentifier id = attr_identifier(em, job.attr->name);
    if (!id.ptr || mlirAttributeIsNull(value))
      return torch_node_fail(em, node, O2M_ERR_NOMEM,
                             "attribute '%s': out of memory", job.attr->name);
    MlirNamedAttribute named = mlirNamedAttributeGet(id, value);
    mlirOperationStateAddAttributes(state, 1, &named);
  }
  return O2M_OK;
}

int torch_node_regions(const o2m_node *node, o2m_graph **out, int cap) {
  int count = 0;
  const char *prev = NULL;
  for (;;) {
    /* the graph attribute with the next name in sorted order */
    const o2m_attr *next = NULL;
    for (int i = 0; i < node->n_attrs; i++) {
      const o2m_attr *a = &node->attrs[i];
      if (form_of(a->type) != FORM_REGION) continue;
      if (prev && strcmp(a->name, prev) <= 0) continue;
      if (!next || strcmp(a->name, next->name) < 0) next = a;
    }
    if (!next) return count;
    int n = next->type == O2M_ATTR_GRAPH ? 1 : next->count;
    for (int j = 0; j < n; j++, count++)
      if (out && count < cap)
        out[count] = next->type == O2M_ATTR_GRAPH ? next->g : next->graphs[j];
    prev = next->name;
  }
}
