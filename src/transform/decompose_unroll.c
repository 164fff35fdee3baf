/* decompose_unroll.c - Scan (opset 9 and later) and Loop unrolled over
 * their known lengths, for targets that do not lower them (TOSA has no
 * loop that writes a growing result; the Linalg target lowers both).
 *
 * Loop: with a known trip count (at most MAX_STEPS) and a condition that
 * cannot end it early (absent or known true, and passed on unchanged by
 * the body), step i copies the body with (i, true, the carried values);
 * each scan output is the Concat of its per-step values along a new
 * axis 0.
 *
 * Step t slices element t of every scan input along its axis (from the
 * end for a reverse direction), copies the body's nodes with the states
 * and those elements as its inputs (xk_inline), and carries the new
 * states on; each scan output is the Concat of its per-step elements
 * along its axis, in reverse order for a reverse direction. The body must
 * be inlinable (no nested subgraphs or other domains) and the scanned
 * length static; Scan-8 (batch axis, sequence_lens) is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "transform/decompose_kit.h"

enum { MAX_STEPS = 1024, MAX_VALUES = 64 };

/* Attribute `name` (INTS) entry i, or dflt. */
static int64_t int_at(o2m_rewriter *rw, const char *name, int i, int64_t dflt) {
  const o2m_attr *a = o2m_rw_attr(rw, name);
  return a && a->type == O2M_ATTR_INTS && i < a->count ? a->ints[i] : dflt;
}

/* x[t] along axis, the axis dropped. */
static o2m_value *element(o2m_rewriter *rw, o2m_value *x, int64_t axis, int64_t t) {
  int64_t end = t + 1;
  o2m_value *in[4] = {x, o2m_rw_const_ints(rw, &t, 1), o2m_rw_const_ints(rw, &end, 1),
                      o2m_rw_const_ints(rw, &axis, 1)};
  o2m_value *s = in[1] && in[2] && in[3] ? o2m_rw_op(rw, "Slice", 4, in, NULL, 0) : NULL;
  return xk_squeeze(rw, s, &axis, 1);
}

o2m_status o2m_decompose_scan(o2m_rewriter *rw) {
  const o2m_attr *body_attr = o2m_rw_attr(rw, "body");
  const o2m_graph *body = body_attr && body_attr->type == O2M_ATTR_GRAPH ? body_attr->g : NULL;
  if (!body) return o2m_rw_error(rw, "the body is missing");
  if (xk_version(rw) < 9) return o2m_rw_unsupported(rw, "Scan-8 (batched, with sequence_lens)");
  if (!xk_inlinable(body)) return o2m_rw_unsupported(rw, "a body with subgraphs or ops of other domains");
  int n_in = rw->node->n_inputs, m = (int)o2m_rw_attr_i(rw, "num_scan_inputs", -1);
  int n_states = n_in - m, k_outs = rw->node->n_outputs - n_states;
  if (m < 1 || n_states < 0 || k_outs < 0 || n_in > MAX_VALUES || rw->node->n_outputs > MAX_VALUES)
    return o2m_rw_error(rw, "num_scan_inputs %d does not fit %d inputs", m, n_in);
  o2m_value *scans[MAX_VALUES], *state[MAX_VALUES], *args[MAX_VALUES], *outs[MAX_VALUES];
  int64_t axes[MAX_VALUES], steps = -1;
  for (int j = 0; j < m; j++) {
    o2m_value *x = o2m_rw_in(rw, n_states + j);
    int64_t dims[16];
    int rank = xk_rank(x);
    axes[j] = xk_axis(int_at(rw, "scan_input_axes", j, 0), rank);
    if (rank < 1 || rank > 16 || axes[j] < 0 || !XK_STATIC_DIMS(x, dims))
      return o2m_rw_unsupported(rw, "scan input %d needs static dims to unroll", j);
    if (steps >= 0 && dims[axes[j]] != steps) return o2m_rw_error(rw, "the scan inputs have different lengths");
    steps = dims[axes[j]];
    scans[j] = x;
  }
  if (steps < 1 || steps > MAX_STEPS)
    return o2m_rw_unsupported(rw, "%lld steps (unrolled for 1..%d)", (long long)steps, MAX_STEPS);
  o2m_value **elems = calloc((size_t)(k_outs ? k_outs : 1) * (size_t)steps, sizeof(o2m_value *));
  if (!elems) return o2m_rw_error(rw, "out of memory");
  for (int i = 0; i < n_states; i++) state[i] = o2m_rw_in(rw, i);
  o2m_status s = O2M_OK;
  for (int64_t t = 0; !s && t < steps; t++) {
    for (int i = 0; i < n_states; i++) args[i] = state[i];
    for (int j = 0; j < m; j++) {
      int64_t at = int_at(rw, "scan_input_directions", j, 0) ? steps - 1 - t : t;
      args[n_states + j] = element(rw, scans[j], axes[j], at);
    }
    s = xk_inline(rw, body, n_states + m, args, outs);
    for (int i = 0; !s && i < n_states; i++) state[i] = outs[i];
    for (int k = 0; !s && k < k_outs; k++) elems[k * steps + t] = outs[n_states + k];
  }
  for (int i = 0; !s && i < n_states; i++) s = xk_bind(rw, i, state[i]);
  for (int k = 0; !s && k < k_outs; k++) {
    o2m_value **e = elems + k * steps;
    int reverse = int_at(rw, "scan_output_directions", k, 0) != 0;
    int64_t axis = xk_axis(int_at(rw, "scan_output_axes", k, 0), xk_rank(e[0]) + 1);
    if (axis < 0) {
      s = o2m_rw_error(rw, "scan_output_axes entry %d is out of range", k);
      break;
    }
    for (int64_t t = 0; t < steps / 2 && reverse; t++) {
      o2m_value *tmp = e[t];
      e[t] = e[steps - 1 - t];
      e[steps - 1 - t] = tmp;
    }
    for (int64_t t = 0; t < steps; t++) e[t] = xk_unsqueeze(rw, e[t], &axis, 1);
    o2m_attr cat = o2m_rw_attr_int("axis", axis);
    o2m_value *stacked = steps == 1 ? e[0] : o2m_rw_op(rw, "Concat", (int)steps, e, &cat, 1);
    s = xk_bind(rw, n_states + k, stacked);
  }
  free(elems);
  return s;
}

/* ---- Loop --------------------------------------------------------------------------- */

/* Whether the body passes its condition input on unchanged (directly or
 * through Identity), or always yields true. */
static int keeps_condition(const o2m_graph *body) {
  const o2m_value *c = body->output_values[0];
  while (c->kind == O2M_VALUE_OUTER && c->outer) c = c->outer;
  if (c->known && c->known->count == 1 && c->known->data) return c->known->data[0] != 0;
  while (c->kind == O2M_VALUE_NODE && c->producer && strcmp(c->producer->op_type, "Identity") == 0 &&
         !c->producer->domain[0] && c->producer->n_inputs == 1 && c->producer->inputs[0])
    c = c->producer->inputs[0];
  return c == body->input_values[1];
}

/* A known scalar input's value (any integer or bool dtype). */
static int known_scalar(o2m_rewriter *rw, int i, int64_t *v) {
  const o2m_value *x = o2m_rw_in(rw, i);
  const o2m_tensor *t = x ? (x->known ? x->known : x->init) : NULL;
  if (!t || t->count != 1 || !t->data) return 0;
  *v = (int64_t)o2m_tensor_get_float(t, 0);
  return 1;
}

/* A constant of the body input's declared rank (0 or 1) holding v. */
static o2m_value *body_scalar(o2m_rewriter *rw, const o2m_value *in, o2m_dtype dtype, double v) {
  o2m_value *s = xk_scalar(rw, dtype, v);
  int64_t zero = 0;
  return in->type.kind == O2M_TYPE_TENSOR && in->type.rank == 1 ? xk_unsqueeze(rw, s, &zero, 1) : s;
}

o2m_status o2m_decompose_loop(o2m_rewriter *rw) {
  const o2m_attr *body_attr = o2m_rw_attr(rw, "body");
  const o2m_graph *body = body_attr && body_attr->type == O2M_ATTR_GRAPH ? body_attr->g : NULL;
  if (!body) return o2m_rw_error(rw, "the body is missing");
  int n_v = rw->node->n_inputs - 2, k_outs = rw->node->n_outputs - n_v;
  if (n_v < 0 || k_outs < 0 || n_v > MAX_VALUES || rw->node->n_outputs > MAX_VALUES ||
      body->n_inputs != n_v + 2 || body->n_outputs != n_v + 1 + k_outs)
    return o2m_rw_error(rw, "the body does not match the loop's %d carried values", n_v);
  int64_t steps, cond = 1;
  if (!o2m_rw_in(rw, 0) || !known_scalar(rw, 0, &steps))
    return o2m_rw_unsupported(rw, "a trip count that is not known at import");
  if (o2m_rw_in(rw, 1) && !known_scalar(rw, 1, &cond))
    return o2m_rw_unsupported(rw, "a condition that is not known at import");
  if (!keeps_condition(body)) return o2m_rw_unsupported(rw, "a body that may end the loop early");
  if (!xk_inlinable(body)) return o2m_rw_unsupported(rw, "a body with subgraphs or ops of other domains");
  if (!cond || steps < 0) steps = 0;
  if (steps > MAX_STEPS) return o2m_rw_unsupported(rw, "%lld steps (unrolled up to %d)", (long long)steps, MAX_STEPS);
  if (steps == 0 && k_outs) return o2m_rw_unsupported(rw, "no steps: the scan outputs would be empty");
  o2m_value *v[MAX_VALUES], *args[MAX_VALUES], *outs[MAX_VALUES];
  o2m_value **elems = calloc((size_t)(k_outs ? k_outs : 1) * (size_t)(steps ? steps : 1), sizeof(o2m_value *));
  if (!elems) return o2m_rw_error(rw, "out of memory");
  for (int i = 0; i < n_v; i++) v[i] = o2m_rw_in(rw, 2 + i);
  o2m_status s = O2M_OK;
  for (int64_t t = 0; !s && t < steps; t++) {
    args[0] = body_scalar(rw, body->input_values[0], O2M_DT_INT64, (double)t);
    args[1] = body_scalar(rw, body->input_values[1], O2M_DT_BOOL, 1);
    for (int i = 0; i < n_v; i++) args[2 + i] = v[i];
    s = xk_inline(rw, body, n_v + 2, args, outs);
    for (int i = 0; !s && i < n_v; i++) v[i] = outs[1 + i];
    for (int k = 0; !s && k < k_outs; k++) elems[k * steps + t] = outs[1 + n_v + k];
  }
  for (int i = 0; !s && i < n_v; i++) s = xk_bind(rw, i, v[i]);
  for (int k = 0; !s && k < k_outs; k++) {
    o2m_value **e = elems + k * steps;
    int64_t zero = 0;
    for (int64_t t = 0; t < steps; t++) e[t] = xk_unsqueeze(rw, e[t], &zero, 1);
    o2m_attr cat = o2m_rw_attr_int("axis", 0);
    s = xk_bind(rw, n_v + k, steps == 1 ? e[0] : o2m_rw_op(rw, "Concat", (int)steps, e, &cat, 1));
  }
  free(elems);
  return s;
}
