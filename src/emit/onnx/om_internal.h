/* om_internal.h - what the files of the onnx-mlir-form emitter share.
 *
 * Owns: the emitter state (one per o2m_emit_onnx call) and the functions
 * the om_*.c files call in one another. Nothing here is public: the entry
 * point is o2m_emit_onnx in emit/emit.h.
 *
 * Files:
 *   om_emit.c     entry: context, missing ops through the shared layer,
 *                 module, checks, output
 *   om_table.c    om_ops.def and om_versions.def (om_table.h)
 *   om_types.c    ONNX types -> tensor<..>, !onnx.Seq, !onnx.Opt; dim_params
 *   om_attrs.c    node attributes as onnx-mlir types them, defaults
 *   om_graph.c    func.func @main_graph, blocks, nodes, regions, terminators
 *   om_special.c  the input fix-ups of onnx-mlir's importer (Dropout, Pad,
 *                 Slice) and its single-output op variants
 *   om_check.c    the structural check of an emitted module (om_check.h)
 * and, shared with the torch form, src/emit/form.
 *
 * Errors: as in the torch form, the graph and attribute functions fill
 * em->diag (om_fail, om_node_fail: first error wins); the type functions
 * return a status and a static reason for their callers' messages.
 */
#ifndef O2M_OM_INTERNAL_H
#define O2M_OM_INTERNAL_H

#include <mlir-c/IR.h>

#include "emit/emit.h"
#include "emit/form/form.h"
#include "emit/onnx/om_table.h"
#include "ir/ir.h"
#include "util/arena.h"
#include "util/strmap.h"

typedef struct om_emitter {
  const o2m_model *model;
  const o2m_import_options *options;
  o2m_diag *diag;
  MlirContext ctx;
  MlirLocation unknown_loc;
  o2m_arena arena; /* emitter-lifetime scratch: the table, cache keys, names */
  om_table table;

  o2m_strmap type_cache;             /* type text -> MlirType.ptr */
  MlirType elem_types[O2M_DT_COUNT]; /* element types, lazily */
  MlirType none_type, si64_type, f32_type, i64_type;

  form_value_map values;
  form_tensor_maker tensors; /* element types of onnx-mlir's form */

  size_t nodes_done, nodes_total;
  char mlir_error[FORM_MLIR_ERROR_CAP]; /* first error MLIR reported */
} om_emitter;

/* ---- om_types.c -------------------------------------------------------- */

/* The MLIR type of a value of ONNX type `type`: tensor<3x?xf32>,
 * tensor<*xf32> when the rank is unknown, !onnx.Seq<tensor<..>>,
 * !onnx.Opt<..>. Fails (O2M_ERR_UNSUPPORTED, a static reason in *why) for
 * what onnx-mlir cannot represent: unknown types, maps, sequences of
 * non-tensors, and the element types float4e2m1, float8e8m0, int2, uint2,
 * complex64, complex128. */
o2m_status om_type(om_emitter *em, const o2m_type *type, MlirType *out, const char **why);
/* The element type of `dtype` (i64, ui8, !onnx.String, ...); null when
 * onnx-mlir has none. */
MlirType om_element_type(om_emitter *em, o2m_dtype dtype);
/* tensor<dims x elem> of a constant; null when the element type has no
 * onnx-mlir form. */
MlirType om_tensor_type(om_emitter *em, o2m_dtype dtype, int rank, const int64_t *dims);
/* "0:batch,2:seq" for the dims the model names in a declared type (looking inside a
 * sequence or optional), in the arena; "" when none is named. */
const char *om_dim_params(om_emitter *em, const o2m_type *declared);

/* ---- om_attrs.c -------------------------------------------------------- */

/* Adds the node's attributes to `op` (just created): those `def` names
 * become inherent attributes (properties, <{...}>) in the types it gives
 * them, with its defaults filled in for the ones the node lacks; the rest,
 * and onnx_node_name, discardable ones. `def` NULL (onnx.Custom): all
 * discardable. GRAPH attributes become regions elsewhere. */
o2m_status om_add_node_attrs(om_emitter *em, const o2m_node *node, const om_op *def,
                             MlirOperation op);
/* Sets inherent attribute `name` of `op`. */
void om_set_inherent(MlirOperation op, const char *name, MlirAttribute value);
/* The value attribute of a tensor (dense_resource, dense, sparse). */
o2m_status om_tensor_attr(om_emitter *em, const o2m_node *node, const o2m_tensor *tensor,
                          const char *fallback_name, MlirAttribute *out);

/* ---- om_graph.c -------------------------------------------------------- */

/* Builds func.func @main_graph and onnx.EntryPoint at the end of
 * `module_body`. */
o2m_status om_emit_main_function(om_emitter *em, MlirBlock module_body);
/* Whether onnx-mlir has an op for the node (the o2m_keeps_op_fn of the
 * shared layer: nodes it is false for are written in other ops first);
 * `user` is the emitter. */
int om_keeps_node(const o2m_node *node, void *user);
/* The number of nodes in `graph` and all its subgraphs (for progress). */
size_t om_count_nodes(const o2m_graph *graph);
/* "onnx.NoValue"() : () -> none at the end of the block. */
o2m_status om_no_value(om_emitter *em, MlirBlock block, MlirValue *out);
/* "onnx.Constant"() <{value = ...}> at the end of the block. */
o2m_status om_constant(om_emitter *em, MlirBlock block, MlirLocation loc, const char *attr_name,
                       MlirAttribute value, MlirType type, MlirValue *out);

/* ---- om_special.c ------------------------------------------------------ */

/* The op a default-domain node becomes besides its versioned name:
 * MaxPool and BatchNormalization with one output become
 * MaxPoolSingleOut and BatchNormalizationInferenceMode. */
const char *om_special_name(const o2m_node *node, const char *versioned);
/* Rewrites the operand list of a node as onnx-mlir's importer does for
 * Dropout (missing ratio / training_mode given as constants), Pad (a
 * missing constant_value given as a zero of the data's type) and Slice
 * (the starts/ends/axes/steps attributes of old opsets given as
 * constants). `operands` holds room for `cap` values and *n of them;
 * constants are made at the end of the block (before the op). */
o2m_status om_special_operands(om_emitter *em, const o2m_node *node, const char *name,
                               MlirBlock block, MlirValue *operands, int *n, int cap);

/* ---- om_emit.c --------------------------------------------------------- */

o2m_status om_fail(om_emitter *em, o2m_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "<path>: graph 'G': node 'N' (Op, domain 'D', opset V): <fmt ...>". */
o2m_status om_node_fail(om_emitter *em, const o2m_node *node, o2m_status status,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
MlirStringRef om_str(const char *s);
MlirNamedAttribute om_named(om_emitter *em, const char *name, MlirAttribute value);
/* Creates the op from `state` and destroys it again: the only way the C
 * API offers to release a state abandoned half-way. */
void om_abandon_state(MlirOperationState *state);

#endif
