/* normalize_inputs.c - the "attribute became an input" normalizations: old
 * versions of Reduce*, Squeeze, Unsqueeze, Split, Clip, Pad, Slice, TopK
 * and Reshape carry as attributes what their core form (O2M_CORE_OPSET)
 * takes as inputs. One table row per such attribute; the rule turns each
 * present attribute into a constant input and re-infers the node at the
 * core opset. Semantics are otherwise unchanged between these versions,
 * except Split, which needs num_outputs in its core form when no split is
 * given. Legacy `consumed_inputs` attributes are dropped.
 */
#include <string.h>

#include "transform/decompose_kit.h"

typedef enum operand_kind {
  OPERAND_INTS,  /* INTS attribute -> 1-D int64 tensor */
  OPERAND_K,     /* INT attribute -> 1-D int64 tensor of one element */
  OPERAND_SCALAR /* FLOAT attribute -> scalar of input 0's element type */
} operand_kind;

typedef struct attr_input {
  const char *op;
  int last_version; /* the last version whose definition has the attribute */
  const char *attr;
  int input; /* the input position it becomes */
  operand_kind kind;
} attr_input;

static const attr_input attr_inputs[] = {
    {"ReduceSum", 12, "axes", 1, OPERAND_INTS},
    {"ReduceMean", 17, "axes", 1, OPERAND_INTS},
    {"ReduceMax", 17, "axes", 1, OPERAND_INTS},
    {"ReduceMin", 17, "axes", 1, OPERAND_INTS},
    {"ReduceProd", 17, "axes", 1, OPERAND_INTS},
    {"ReduceL1", 17, "axes", 1, OPERAND_INTS},
    {"ReduceL2", 17, "axes", 1, OPERAND_INTS},
    {"ReduceLogSum", 17, "axes", 1, OPERAND_INTS},
    {"ReduceLogSumExp", 17, "axes", 1, OPERAND_INTS},
    {"ReduceSumSquare", 17, "axes", 1, OPERAND_INTS},
    {"Squeeze", 12, "axes", 1, OPERAND_INTS},
    {"Unsqueeze", 12, "axes", 1, OPERAND_INTS},
    {"Split", 12, "split", 1, OPERAND_INTS},
    {"Clip", 10, "min", 1, OPERAND_SCALAR},
    {"Clip", 10, "max", 2, OPERAND_SCALAR},
    {"Pad", 10, "paddings", 1, OPERAND_INTS}, /* Pad-1's name */
    {"Pad", 10, "pads", 1, OPERAND_INTS},
    {"Pad", 10, "value", 2, OPERAND_SCALAR},
    {"Slice", 9, "starts", 1, OPERAND_INTS},
    {"Slice", 9, "ends", 2, OPERAND_INTS},
    {"Slice", 9, "axes", 3, OPERAND_INTS},
    {"TopK", 9, "k", 1, OPERAND_K},
    {"Reshape", 4, "shape", 1, OPERAND_INTS},
};

enum { N_ROWS = sizeof(attr_inputs) / sizeof(attr_inputs[0]), MAX_INPUT = 3 };

/* The constant input made from attribute `a` as the row says; NULL with
 * the diag filled when it cannot be made. */
static o2m_value *operand(o2m_rewriter *rw, const attr_input *row, const o2m_attr *a) {
  if (row->kind == OPERAND_INTS && a->type == O2M_ATTR_INTS)
    return o2m_rw_const_ints(rw, a->ints, a->count);
  if (row->kind == OPERAND_K && a->type == O2M_ATTR_INT) return o2m_rw_const_ints(rw, &a->i, 1);
  if (row->kind == OPERAND_SCALAR && (a->type == O2M_ATTR_FLOAT || a->type == O2M_ATTR_INT)) {
    o2m_value *x = o2m_rw_in(rw, 0);
    if (!xk_elem(x)) {
      o2m_rw_unsupported(rw, "the element type of the input is unknown");
      return NULL;
    }
    return xk_scalar_like(rw, x, a->type == O2M_ATTR_FLOAT ? a->f : (double)a->i);
  }
  o2m_rw_error(rw, "attribute '%s' has the wrong type", a->name);
  return NULL;
}

/* Rewrites the node to its core form: attributes of the table become
 * inputs, `extra` attributes are added. Keeps the node when the table has
 * nothing for its version and there is nothing extra. */
static o2m_status to_core_inputs(o2m_rewriter *rw, const o2m_attr *extra, int n_extra) {
  const o2m_node *node = rw->node;
  int version = xk_version(rw), n_in = node->n_inputs, matched = 0;
  int cap = n_in > MAX_INPUT + 1 ? n_in : MAX_INPUT + 1;
  o2m_value *in[cap];
  const char *drop[N_ROWS + 2];
  int n_drop = 0;
  drop[n_drop++] = "consumed_inputs";
  for (int i = 0; i < cap; i++) in[i] = o2m_rw_in(rw, i);
  for (int r = 0; r < N_ROWS; r++) {
    const attr_input *row = &attr_inputs[r];
    if (strcmp(row->op, node->op_type) || version > row->last_version) continue;
    matched = 1;
    drop[n_drop++] = row->attr;
    const o2m_attr *a = o2m_rw_attr(rw, row->attr);
    if (!a) continue;
    in[row->input] = operand(rw, row, a);
    if (!in[row->input]) return xk_failed(rw);
    if (n_in <= row->input) n_in = row->input + 1;
  }
  if (!matched && !n_extra) return O2M_OK;
  drop[n_drop] = NULL;
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, drop, n_extra, &n_attrs);
  if (!attrs) return xk_failed(rw);
  for (int k = 0; k < n_extra; k++) attrs[n_attrs++] = extra[k];
  return o2m_rw_update(rw, n_in, in, attrs, n_attrs);
}

o2m_status o2m_normalize_attr_inputs(o2m_rewriter *rw) { return to_core_inputs(rw, NULL, 0); }

/* Split before 18 splits into equal parts when no sizes are given; the
 * core form says so with num_outputs. */
o2m_status o2m_normalize_split(o2m_rewriter *rw) {
  int given = o2m_rw_in(rw, 1) || o2m_rw_attr(rw, "split");
  if (xk_version(rw) >= 18 || given) return to_core_inputs(rw, NULL, 0);
  o2m_attr num = o2m_rw_attr_int("num_outputs", rw->node->n_outputs);
  return to_core_inputs(rw, &num, 1);
}
