/* normalize_versions.c - old op versions whose semantics differ from the
 * core form (O2M_CORE_OPSET) in more than an attribute-to-input move
 * (those are in normalize_inputs.c):
 *  - Softmax, LogSoftmax, Hardmax before 13 work on the input coerced to
 *    2-D at `axis` (default 1): Flatten -> op on axis 1 -> Reshape back,
 *    or the op on the last axis when `axis` is the last one;
 *  - Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater, Less before 7
 *    broadcast B only with broadcast=1, aligned at `axis`: B gets the
 *    trailing ones that make numpy broadcasting align it there;
 *  - PRelu before 7 applies a 1-D slope per channel (axis 1), which numpy
 *    broadcasting needs as [C, 1, ..., 1];
 *  - Cast-1 names its target type as a string; CastLike is Cast to the
 *    second input's element type;
 *  - Concat before 4 defaults `axis` to 1;
 *  - LpPool-1 gives p as a float, later versions as an int.
 */
#include <string.h>
#include <strings.h>

#include "transform/decompose_kit.h"

/* ---- Softmax, LogSoftmax, Hardmax before 13 ---------------------------------- */

o2m_status o2m_normalize_softmax(o2m_rewriter *rw) {
  if (xk_version(rw) >= 13) return O2M_OK;
  o2m_value *x = o2m_rw_in(rw, 0);
  int rank = xk_rank(x);
  if (rank < 0) return o2m_rw_unsupported(rw, "the input rank is unknown");
  int axis = rank ? xk_axis(o2m_rw_attr_i(rw, "axis", 1), rank) : 0;
  if (axis < 0) return o2m_rw_error(rw, "axis is out of range for rank %d", rank);
  if (axis >= rank - 1) { /* the coerced 2-D form reduces over the last axis only */
    o2m_attr last = o2m_rw_attr_int("axis", -1);
    return o2m_rw_update(rw, 1, &x, &last, 1);
  }
  o2m_attr flat_axis = o2m_rw_attr_int("axis", axis), inner = o2m_rw_attr_int("axis", 1);
  o2m_value *flat = o2m_rw_op(rw, "Flatten", 1, &x, &flat_axis, 1);
  o2m_value *y2 = flat ? o2m_rw_op(rw, rw->node->op_type, 1, &flat, &inner, 1) : NULL;
  return xk_bind(rw, 0, xk_op2(rw, "Reshape", y2, xk_op1(rw, "Shape", x)));
}

/* ---- limited broadcasting before 7 -------------------------------------------- */

o2m_status o2m_normalize_legacy_broadcast(o2m_rewriter *rw) {
  if (xk_version(rw) >= 7) return O2M_OK;
  static const char *const drop[] = {"broadcast", "axis", "consumed_inputs", NULL};
  o2m_value *in[2] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 1)};
  const o2m_attr *axis_attr = o2m_rw_attr(rw, "axis");
  if (o2m_rw_attr_i(rw, "broadcast", 0) && axis_attr) {
    int ra = xk_rank(in[0]), rb = xk_rank(in[1]);
    if (ra < 0 || rb < 0) return o2m_rw_unsupported(rw, "broadcast with axis needs known ranks");
    int axis = xk_axis(axis_attr->i, ra), trailing = ra - axis - rb;
    if (axis < 0 || trailing < 0) return o2m_rw_error(rw, "broadcast axis does not fit B's rank");
    if (trailing > 0) {
      int64_t axes[trailing];
      for (int k = 0; k < trailing; k++) axes[k] = rb + k;
      in[1] = xk_unsqueeze(rw, in[1], axes, trailing);
      if (!in[1]) return xk_failed(rw);
    }
  }
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, drop, 0, &n_attrs);
  return attrs ? o2m_rw_update(rw, 2, in, attrs, n_attrs) : xk_failed(rw);
}

/* ---- PRelu before 7 ------------------------------------------------------------ */

o2m_status o2m_normalize_prelu(o2m_rewriter *rw) {
  if (xk_version(rw) >= 7) return O2M_OK;
  static const char *const drop[] = {"consumed_inputs", NULL};
  o2m_value *in[2] = {o2m_rw_in(rw, 0), o2m_rw_in(rw, 1)};
  int rank = xk_rank(in[0]);
  if (xk_rank(in[1]) == 1 && rank > 2) in[1] = xk_along_axis(rw, in[1], 1, rank);
  else if (xk_rank(in[1]) != 0 && (rank < 0 || xk_rank(in[1]) < 0))
    return o2m_rw_unsupported(rw, "the ranks of X or slope are unknown");
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, drop, 0, &n_attrs);
  return attrs && in[1] ? o2m_rw_update(rw, 2, in, attrs, n_attrs) : xk_failed(rw);
}

/* ---- Cast, CastLike --------------------------------------------------------------- */

o2m_status o2m_normalize_cast(o2m_rewriter *rw) {
  const o2m_attr *to = o2m_rw_attr(rw, "to");
  if (!to || to->type != O2M_ATTR_STRING) return O2M_OK;
  static const char *const drop[] = {"to", NULL};
  for (int d = 1; d < O2M_DT_COUNT; d++) {
    const char *name = o2m_dtype_name((o2m_dtype)d);
    if (strlen(name) != to->s.len || strncasecmp(name, (const char *)to->s.ptr, to->s.len)) continue;
    int n_attrs;
    o2m_attr *attrs = xk_attrs_except(rw, drop, 1, &n_attrs);
    if (!attrs) return xk_failed(rw);
    attrs[n_attrs++] = o2m_rw_attr_int("to", d);
    o2m_value *x = o2m_rw_in(rw, 0);
    return o2m_rw_update(rw, 1, &x, attrs, n_attrs);
  }
  return o2m_rw_error(rw, "'to' names no element type");
}

o2m_status o2m_normalize_cast_like(o2m_rewriter *rw) {
  o2m_dtype to = xk_elem(o2m_rw_in(rw, 1));
  if (!to) return o2m_rw_unsupported(rw, "the element type of the target is unknown");
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, NULL, 1, &n_attrs);
  if (!attrs) return xk_failed(rw);
  attrs[n_attrs++] = o2m_rw_attr_int("to", to);
  o2m_value *x = o2m_rw_in(rw, 0), *y = o2m_rw_out(rw, 0);
  return o2m_rw_node_into(rw, "Cast", 1, &x, 1, &y, attrs, n_attrs);
}

/* ---- Concat before 4 --------------------------------------------------------------- */

/* Whether input v of a Concat on `axis` is known to be empty along it
 * (a KV cache's past at prefill): it adds nothing. */
static int empty_along(const o2m_value *v, int64_t axis) {
  if (!v || v->type.kind != O2M_TYPE_TENSOR || v->type.rank <= 0) return 0;
  int64_t a = axis < 0 ? axis + v->type.rank : axis;
  return a >= 0 && a < v->type.rank && v->type.dims[a].size == 0;
}

/* Concat-1..3's default axis 1 made explicit; inputs empty along the axis
 * dropped while another remains (for every target: TOSA has no empty
 * tensors, and the others copy nothing for them). */
o2m_status o2m_normalize_concat(o2m_rewriter *rw) {
  const o2m_attr *axis_attr = o2m_rw_attr(rw, "axis");
  int64_t axis = axis_attr ? axis_attr->i : 1;
  o2m_node *n = rw->node;
  int kept = 0;
  for (int i = 0; i < n->n_inputs; i++) kept += !empty_along(n->inputs[i], axis);
  int drop = kept > 0 && kept < n->n_inputs;
  if (!drop && (xk_version(rw) >= 4 || axis_attr)) return O2M_OK;
  o2m_value **inputs = n->inputs;
  int n_inputs = n->n_inputs;
  if (drop) {
    inputs = o2m_arena_array(&rw->model->arena, (size_t)kept, sizeof(*inputs));
    if (!inputs) return xk_failed(rw);
    n_inputs = 0;
    for (int i = 0; i < n->n_inputs; i++)
      if (!empty_along(n->inputs[i], axis)) inputs[n_inputs++] = n->inputs[i];
  }
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, NULL, 1, &n_attrs);
  if (!attrs) return xk_failed(rw);
  if (!axis_attr) attrs[n_attrs++] = o2m_rw_attr_int("axis", 1);
  return o2m_rw_update(rw, n_inputs, inputs, attrs, n_attrs);
}

/* ---- LpPool-1 ------------------------------------------------------------------------ */

o2m_status o2m_normalize_lp_pool(o2m_rewriter *rw) {
  const o2m_attr *p = o2m_rw_attr(rw, "p");
  if (!p || p->type != O2M_ATTR_FLOAT) return O2M_OK;
  if (p->f != (float)(int64_t)p->f) return o2m_rw_unsupported(rw, "a fractional p");
  static const char *const drop[] = {"p", NULL};
  int n_attrs;
  o2m_attr *attrs = xk_attrs_except(rw, drop, 1, &n_attrs);
  if (!attrs) return xk_failed(rw);
  attrs[n_attrs++] = o2m_rw_attr_int("p", (int64_t)p->f);
  return o2m_rw_update(rw, rw->node->n_inputs, rw->node->inputs, attrs, n_attrs);
}
