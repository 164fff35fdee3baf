/* torch_internal.h - what the files of the torch-form emitter share.
 *
 * Owns: the emitter state (one per o2m_emit_torch call) and the functions
 * the torch_*.c files call in one another. Nothing here is public: the
 * entry point is o2m_emit_torch in emit/emit.h.
 *
 * Files:
 *   torch_emit.c     entry: context, module, verification, output
 *   torch_graph.c    func.func, blocks, nodes, regions, none, terminators
 *   torch_types.c    ONNX types -> torch types (text, parsed and cached)
 *   torch_attrs.c    node attributes -> torch.onnx.<name> attributes
 * and, shared with onnx-mlir's form, src/emit/form (the value map, tensor
 * attributes, diagnostics and output).
 *
 * Errors: the graph and attribute functions fill em->diag (torch_fail,
 * torch_node_fail: first error wins) and return a status. The type and
 * tensor functions know no context: they return a status and a static
 * reason, and their callers write the message naming graph, node and value.
 */
#ifndef O2M_TORCH_INTERNAL_H
#define O2M_TORCH_INTERNAL_H

#include <mlir-c/IR.h>

#include "emit/emit.h"
#include "emit/form/form.h"
#include "ir/ir.h"
#include "util/arena.h"
#include "util/strmap.h"

typedef struct o2m_torch {
  const o2m_model *model;
  const o2m_import_options *options;
  o2m_diag *diag;
  MlirContext ctx;
  MlirLocation unknown_loc;
  o2m_arena arena; /* emitter-lifetime scratch: cache keys, names */

  o2m_strmap type_cache;             /* type text -> MlirType.ptr */
  MlirType elem_types[O2M_DT_COUNT]; /* builtin element types, lazily */
  MlirType none_type, si64_type, f32_type;
  MlirIdentifier name_id; /* "name", the op-name attribute of torch.operator */

  form_value_map values;
  form_tensor_maker tensors; /* builtin tensor types of the torch form */

  size_t nodes_done, nodes_total;
  char mlir_error[FORM_MLIR_ERROR_CAP]; /* first error MLIR reported */
} o2m_torch;

/* ---- torch_types.c ----------------------------------------------------- */

/* The MLIR type of a value of ONNX type `type`, e.g.
 * !torch.vtensor<[2,?],f32>. On failure returns a status and points *why at
 * a static reason for the caller's message: O2M_ERR_UNSUPPORTED when the
 * type is unknown or has no torch form, O2M_ERR_INTERNAL when MLIR rejects
 * the type text (em->mlir_error says why), O2M_ERR_NOMEM. */
o2m_status torch_type(o2m_torch *em, const o2m_type *type, MlirType *out,
                      const char **why);
/* tensor<d0 x d1 x elem>, the type of a tensor's value attribute (elem:
 * f32, si64, i1, !torch.str, ...); null for an unknown dtype. */
MlirType torch_builtin_tensor_type(o2m_torch *em, o2m_dtype dtype, int rank,
                                   const int64_t *dims);
/* Parses `text` once per emitter and caches it; null on a parse error. */
MlirType torch_parse_type(o2m_torch *em, const char *text);

/* ---- torch_attrs.c ----------------------------------------------------- */

/* Adds every non-graph attribute of `node` to `state` as
 * torch.onnx.<name>; O2M_OK or an error naming the node. */
o2m_status torch_add_node_attrs(o2m_torch *em, const o2m_node *node,
                                MlirOperationState *state);
/* The subgraphs of `node` in region order (attribute names sorted, the
 * graphs of a GRAPHS attribute in list order). Returns the count; `out`
 * (may be NULL) receives up to `cap` graphs. */
int torch_node_regions(const o2m_node *node, o2m_graph **out, int cap);

/* ---- torch_graph.c ----------------------------------------------------- */

/* Builds func.func @<graph name> for the model's main graph at the end of
 * `module_body`. */
o2m_status torch_emit_main_function(o2m_torch *em, MlirBlock module_body);
/* The number of nodes in `graph` and all its subgraphs (for progress). */
size_t torch_count_nodes(const o2m_graph *graph);

/* ---- shared helpers (torch_emit.c) ------------------------------------- */

/* Fails with `status` and the message "<model path>: <fmt ...>", plus the
 * first error MLIR reported when `status` is O2M_ERR_INTERNAL. */
o2m_status torch_fail(o2m_torch *em, o2m_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, naming the node: "<path>: graph 'G': node 'N' (Op, domain 'D',
 * opset V): <fmt ...>". */
o2m_status torch_node_fail(o2m_torch *em, const o2m_node *node,
                           o2m_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A string reference to a NUL-terminated string. */
MlirStringRef torch_str(const char *s);

#endif
