/* transform.h - normalization and decomposition: rewriting a linked,
 * inferred model into the core op set that every lowering backend
 * (linalg, tosa, stablehlo) consumes.
 *
 * Owns: the rewrite rules and the pass that applies them. After
 * o2m_transform_to_core every node of every graph is a core op in its
 * core form (O2M_CORE_OPSET semantics: e.g. Reduce* and Squeeze/Unsqueeze
 * take axes as an input, Clip takes min/max inputs, Split takes split as
 * an input, Pad takes pads as an input), and values whose content is known
 * at import time stay known (o2m_value.known), so backends emit them as
 * constants: that is the constant folding.
 *
 * Rules are written with the rewriter below. A rule replaces ONE node by
 * new nodes; the replaced node's output values are reused as the outputs
 * of the last new nodes (o2m_rw_node_into), so no use needs rewiring.
 * Every new node is inferred as it is made (the inference functions are
 * shared with import), so types stay known. A rule returns O2M_OK after
 * rewriting, O2M_ERR_UNSUPPORTED (through o2m_rw_unsupported) when the
 * node's form is beyond it; it must not leave a half-rewritten node.
 */
#ifndef O2M_TRANSFORM_H
#define O2M_TRANSFORM_H

#include "infer/infer.h"

/* The opset whose op semantics the core form uses. */
enum { O2M_CORE_OPSET = 23 };

struct o2m_node;
/* Whether a target lowers a node itself (normally: its lowering table
 * has a row for the op; a target may refuse some forms of an op it
 * lowers, which its decompositions then handle). A node without outputs
 * (n_outputs 0) is a question before a rule makes it (fuse_qdq.c,
 * o2m_rw_target_keeps): whether the target wants the op of these
 * operands. */
typedef int (*o2m_keeps_op_fn)(const struct o2m_node *n, void *user);

typedef struct o2m_rewriter {
  o2m_model *model;
  o2m_diag *diag;
  o2m_graph *graph;      /* the graph being rewritten */
  o2m_node *node;        /* the node being replaced */
  o2m_node **out_nodes;  /* the graph's new node list, in order */
  int n_out_nodes, cap_out_nodes;
  int counter;           /* makes new value/node names unique */
  o2m_keeps_op_fn keeps; /* the target's (NULL: none, or not known) */
  void *keeps_user;
} o2m_rewriter;

/* Whether the target keeps a default-domain `op_type` of these operands
 * (asked with a node of no outputs before a rule writes it); 0 without a
 * target. Lets a rule write an op the target runs well instead of its
 * generic form. */
int o2m_rw_target_keeps(const o2m_rewriter *rw, const char *op_type, int n_inputs, o2m_value *const *inputs);

/* One rule: rewrites rw->node (its inputs, attributes, opset and inferred
 * types are all available), or returns O2M_ERR_UNSUPPORTED untouched. */
typedef o2m_status (*o2m_rewrite_fn)(o2m_rewriter *rw);

typedef struct o2m_rewrite_rule {
  const char *domain, *op_type;
  o2m_rewrite_fn rewrite; /* NULL: the op is core as it is */
  int decomposes;         /* 1: a decomposition (DECOMPOSE in rules.def),
                             skipped for a target that keeps the op;
                             0: a normalization, always applied */
} o2m_rewrite_rule;

/* Rewrites every graph of the model to the core form, decomposing every
 * op that has a decomposition. Nodes whose op has no rule are kept (the
 * backend reports the ones it cannot lower). */
o2m_status o2m_transform_to_core(o2m_model *model, o2m_diag *diag);


/* The same for one target (per-target legality, as torch-mlir's
 * backend-legal-ops): normalizations always apply; a decomposition
 * applies to the nodes of ops that `keeps` says the target does not
 * lower, and again to the nodes that decompositions make, so a target
 * gets every op written in ops it has where rules allow. */
o2m_status o2m_transform_for_target(o2m_model *model, o2m_keeps_op_fn keeps, void *user,
                                    o2m_diag *diag);

/* For a target that writes ops as the model has them (onnx-mlir's ONNX
 * form): a node the target keeps stays exactly as written, not even
 * normalized; a node it does not keep gets its rules (normalization, then
 * decomposition), and so do the nodes they make that it does not keep. */
o2m_status o2m_transform_missing_ops(o2m_model *model, o2m_keeps_op_fn keeps, void *user,
                                     o2m_diag *diag);

/* For the JIT with oneDNN's convolutions (emit.h, O2M_JIT_DNNL): the main
 * graph's float32 2-D Convs as com.microsoft NhwcFusedConv, channels last,
 * with the values between them, and with qconvs its QLinearConvs as
 * NhwcQLinearConv (layout_channels_last.c). */
o2m_status o2m_layout_channels_last(o2m_model *model, int qconvs, o2m_diag *diag);

/* The rule for an op, or NULL when it has none. */
const o2m_rewrite_rule *o2m_rewrite_rule_for(const char *domain,
                                             const char *op_type);

/* ---- the rewriter ------------------------------------------------------- */

/* Appends an existing node to the graph's new node list (the pass uses it
 * for nodes it keeps); -1 when out of memory. */
int o2m_rw_append(o2m_rewriter *rw, o2m_node *n);

/* Input i of the node being replaced (NULL when missing). */
o2m_value *o2m_rw_in(o2m_rewriter *rw, int i);
/* Output i of the node being replaced (NULL when unused). */
o2m_value *o2m_rw_out(o2m_rewriter *rw, int i);

/* Appends a new default-domain node `op_type` at O2M_CORE_OPSET with the
 * given inputs (NULL = missing optional input) and attributes, infers it
 * and returns its `n_out` fresh output values (an arena array), or NULL
 * after filling the diag. */
o2m_value **o2m_rw_node(o2m_rewriter *rw, const char *op_type, int n_in,
                        o2m_value *const *inputs, int n_out,
                        const o2m_attr *attrs, int n_attrs);
/* o2m_rw_node with one output. */
o2m_value *o2m_rw_op(o2m_rewriter *rw, const char *op_type, int n_in,
                     o2m_value *const *inputs, const o2m_attr *attrs,
                     int n_attrs);
/* Like o2m_rw_node, but the new node produces the given existing values
 * (normally the replaced node's outputs; NULL entries = unused). */
o2m_status o2m_rw_node_into(o2m_rewriter *rw, const char *op_type, int n_in,
                            o2m_value *const *inputs, int n_out,
                            o2m_value *const *outputs, const o2m_attr *attrs,
                            int n_attrs);
/* o2m_rw_node_into for an op of another domain (one the op table has,
 * e.g. com.microsoft), at opset 1 of that domain's table row. */
o2m_status o2m_rw_domain_node_into(o2m_rewriter *rw, const char *domain, const char *op_type,
                                   int n_in, o2m_value *const *inputs, int n_out,
                                   o2m_value *const *outputs, const o2m_attr *attrs, int n_attrs);
/* Keeps the node being replaced but changes it in place (new inputs,
 * attributes and O2M_CORE_OPSET), re-inferring it: the usual way to
 * normalize an old form (attribute -> input). */
o2m_status o2m_rw_update(o2m_rewriter *rw, int n_in, o2m_value *const *inputs,
                         const o2m_attr *attrs, int n_attrs);

/* Constants: a Constant node holding the data, with a known value. */
o2m_value *o2m_rw_const_ints(o2m_rewriter *rw, const int64_t *values, int n);
o2m_value *o2m_rw_const_scalar(o2m_rewriter *rw, o2m_dtype dtype, double v);
/* A new tensor of the model's arena (a constant's value to fill; its data
 * zeroed), or NULL after reporting out of memory. */
o2m_tensor *o2m_rw_new_tensor(o2m_rewriter *rw, o2m_dtype dtype, int rank, const int64_t *dims);
o2m_value *o2m_rw_const_tensor(o2m_rewriter *rw, const o2m_tensor *t);

/* Attribute values for new nodes. */
o2m_attr o2m_rw_attr_int(const char *name, int64_t v);
o2m_attr o2m_rw_attr_float(const char *name, float v);
o2m_attr o2m_rw_attr_ints(o2m_rewriter *rw, const char *name,
                          const int64_t *v, int n);
o2m_attr o2m_rw_attr_string(o2m_rewriter *rw, const char *name,
                            const char *s);

/* The replaced node's attributes, as in inference. */
const o2m_attr *o2m_rw_attr(o2m_rewriter *rw, const char *name);
int64_t o2m_rw_attr_i(o2m_rewriter *rw, const char *name, int64_t dflt);
float o2m_rw_attr_f(o2m_rewriter *rw, const char *name, float dflt);

/* Failure helpers: the message names the node, op, domain and opset. */
o2m_status o2m_rw_unsupported(o2m_rewriter *rw, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
o2m_status o2m_rw_error(o2m_rewriter *rw, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
