/* om_special.c - the special cases of onnx-mlir's importer
 * (FrontendGenImpl::ImportNodeMaxPool, ImportNodeBatchNormalization,
 * ImportNodeDropout, ImportNodePad, ImportNodeSlice), one table row each.
 *
 * Owns:
 *   MaxPool with one output            -> onnx.MaxPoolSingleOut
 *   BatchNormalization with one output -> onnx.BatchNormalizationInferenceMode
 *   Dropout without ratio / training_mode: the missing inputs as constants,
 *       tensor<1xf32> (the node's old `ratio` attribute, else 0.5) and
 *       tensor<1xi1> false
 *   Pad with two inputs: constant_value as a tensor<1x..> zero of the
 *       data's element type
 *   Slice of opset 1 (starts/ends/axes attributes): the attributes as
 *       tensor<Nxi64> constants in the input slots, steps none
 * These apply, as in onnx-mlir, to the op's newest version only (a PadV2
 * or PadV11 is built as written).
 */
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/onnx/om_internal.h"

static const struct {
  const char *op;
  const char *single_output_op;
} single_output_variants[] = {
    {"MaxPool", "MaxPoolSingleOut"},
    {"BatchNormalization", "BatchNormalizationInferenceMode"},
};

const char *om_special_name(const o2m_node *node, const char *versioned) {
  for (size_t i = 0; i < sizeof(single_output_variants) / sizeof(single_output_variants[0]); i++)
    if (strcmp(versioned, single_output_variants[i].op) == 0 && node->n_outputs == 1)
      return single_output_variants[i].single_output_op;
  return versioned;
}

/* ---- constants --------------------------------------------------------- */

static o2m_status splat_constant(om_emitter *em, MlirBlock block, MlirType elem,
                                 MlirAttribute scalar, int64_t count, MlirValue *out) {
  int64_t dims[1] = {count};
  MlirType type = mlirRankedTensorTypeGet(1, dims, elem, mlirAttributeGetNull());
  return om_constant(em, block, em->unknown_loc, "value", mlirDenseElementsAttrSplatGet(type, scalar),
                     type, out);
}

static o2m_status ints_constant(om_emitter *em, MlirBlock block, const o2m_attr *a, MlirValue *out) {
  int64_t dims[1] = {a->count};
  MlirType type = mlirRankedTensorTypeGet(1, dims, em->i64_type, mlirAttributeGetNull());
  MlirAttribute value = mlirDenseElementsAttrInt64Get(type, a->count, a->ints);
  return om_constant(em, block, em->unknown_loc, "value", value, type, out);
}

static const o2m_attr *ints_attr(const o2m_node *node, const char *name) {
  for (int i = 0; i < node->n_attrs; i++)
    if (node->attrs[i].type == O2M_ATTR_INTS && strcmp(node->attrs[i].name, name) == 0)
      return &node->attrs[i];
  return NULL;
}

static float ratio_of(const o2m_node *node) {
  for (int i = 0; i < node->n_attrs; i++)
    if (node->attrs[i].type == O2M_ATTR_FLOAT && strcmp(node->attrs[i].name, "ratio") == 0)
      return node->attrs[i].f;
  return 0.5f;
}

/* ---- the fix-ups ------------------------------------------------------- */

typedef o2m_status (*fixup_fn)(om_emitter *em, const o2m_node *node, MlirBlock block,
                               MlirValue *operands, int *n, int cap);

static o2m_status dropout_inputs(om_emitter *em, const o2m_node *node, MlirBlock block,
                                 MlirValue *operands, int *n, int cap) {
  o2m_status status = O2M_OK;
  if (*n < 2 && cap >= 2) {
    MlirAttribute ratio = mlirFloatAttrDoubleGet(em->ctx, em->f32_type, ratio_of(node));
    status = splat_constant(em, block, em->f32_type, ratio, 1, &operands[(*n)++]);
  }
  if (status == O2M_OK && *n < 3 && cap >= 3) {
    MlirType i1 = mlirIntegerTypeGet(em->ctx, 1);
    status = splat_constant(em, block, i1, mlirIntegerAttrGet(i1, 0), 1, &operands[(*n)++]);
  }
  return status;
}

static o2m_status pad_inputs(om_emitter *em, const o2m_node *node, MlirBlock block,
                             MlirValue *operands, int *n, int cap) {
  if (node->n_inputs != 2 || *n != 2 || cap < 3) return O2M_OK;
  MlirType data = mlirValueGetType(operands[0]);
  if (!mlirTypeIsAShaped(data)) return O2M_OK;
  MlirType elem = mlirShapedTypeGetElementType(data);
  MlirAttribute zero;
  if (mlirTypeIsAFloat(elem)) zero = mlirFloatAttrDoubleGet(em->ctx, elem, 0.0);
  else if (mlirTypeIsAInteger(elem)) zero = mlirIntegerAttrGet(elem, 0);
  else return om_node_fail(em, node, O2M_ERR_UNSUPPORTED, "Pad of a non-numeric tensor");
  return splat_constant(em, block, elem, zero, 1, &operands[(*n)++]);
}

static o2m_status slice_inputs(om_emitter *em, const o2m_node *node, MlirBlock block,
                               MlirValue *operands, int *n, int cap) {
  static const char *const slots[] = {"starts", "ends", "axes", "steps"};
  const o2m_attr *given[4];
  int any = 0;
  for (int k = 0; k < 4; k++) any |= (given[k] = ints_attr(node, slots[k])) != NULL;
  if (!any || cap < 5) return O2M_OK;
  if (*n != 1 || !given[0] || !given[1])
    return om_node_fail(em, node, O2M_ERR_INVALID,
                        "a Slice with starts/ends attributes takes the data as its one input");
  o2m_status status = O2M_OK;
  for (int k = 0; k < 4 && status == O2M_OK; k++)
    status = given[k] ? ints_constant(em, block, given[k], &operands[1 + k])
                      : om_no_value(em, block, &operands[1 + k]);
  *n = 5;
  return status;
}

static const struct {
  const char *op;
  fixup_fn fix;
} fixups[] = {
    {"Dropout", dropout_inputs},
    {"Pad", pad_inputs},
    {"Slice", slice_inputs},
};

o2m_status om_special_operands(om_emitter *em, const o2m_node *node, const char *name,
                               MlirBlock block, MlirValue *operands, int *n, int cap) {
  for (size_t i = 0; i < sizeof(fixups) / sizeof(fixups[0]); i++)
    if (strcmp(name, fixups[i].op) == 0) return fixups[i].fix(em, node, block, operands, n, cap);
  return O2M_OK;
}
