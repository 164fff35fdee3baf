/* fuse_qdq.c - QDQ models to integer ops, for targets that lower the
 * integer ops themselves (TOSA: 8-bit convolutions and matmuls with i32
 * accumulators and a rescale). A quantizer exports
 *   y = QuantizeLinear(Conv(DequantizeLinear(x), DequantizeLinear(w)[, b]))
 * (or MatMul), which in integer form is QLinearConv / QLinearMatMul of
 * the quantized tensors: this pass finds those patterns before the
 * normalizations and decompositions (which would otherwise turn the Q/DQ
 * nodes into float arithmetic) and replaces each QuantizeLinear by the
 * integer op, dropping the Conv/MatMul and the DequantizeLinear nodes
 * nothing else reads (one that also feeds another node, e.g. the Add of a
 * residual, stays for it). A Relu between the Conv and the QuantizeLinear becomes a
 * Max with the output zero point.
 *
 * Applies only where the quantization is per tensor for activations (per
 * output channel allowed for weights, axis 0 of a Conv weight or the last
 * axis of a MatMul's right operand), with 8-bit integers, and a Conv bias
 * that is absent, an int32 tensor dequantized with scale x_scale *
 * w_scale, or a float constant (quantized here with that scale). Other
 * forms are left as they are (the decompositions then apply).
 *
 * Whether the target keeps the integer op is asked before it is made, of a
 * probe: the op with its first 8 operands and no outputs (transform.h).
 * A target may want the fusion and still not keep the op it makes (the
 * JIT: QLinearMatMul then decomposes into MatMulInteger, which its kernel
 * takes); the made node is asked again.
 *
 * Must not: change a model for a target that does not keep the integer op.
 */
#include <math.h>
#include <string.h>

#include "infer/infer.h"
#include "transform/decompose_kit.h"
#include "util/diag.h"

/* The node producing v when it is a single-output default-domain `op`
 * whose output nothing else reads. */
static o2m_node *sole_producer(o2m_value *v, const char *op) {
  if (!v || v->kind != O2M_VALUE_NODE || !v->producer || v->use_count != 1) return NULL;
  o2m_node *n = v->producer;
  return !n->domain[0] && strcmp(n->op_type, op) == 0 ? n : NULL;
}

/* The node producing v when it is a single-output default-domain `op`,
 * however many nodes read v (a DequantizeLinear that also feeds an Add of
 * a residual, say). */
static o2m_node *producer(o2m_value *v, const char *op) {
  if (!v || v->kind != O2M_VALUE_NODE || !v->producer || v->producer->n_outputs != 1) return NULL;
  o2m_node *n = v->producer;
  return !n->domain[0] && strcmp(n->op_type, op) == 0 ? n : NULL;
}

/* Adds a DequantizeLinear the fused op replaces to the dead list when
 * nothing else reads it. */
static void drop_if_unread(o2m_node *dq, o2m_node **dead, int *n_dead) {
  if (dq->outputs[0] && dq->outputs[0]->use_count == 1) dead[(*n_dead)++] = dq;
}

static const o2m_tensor *known(const o2m_value *v) {
  return v ? (v->known ? v->known : v->init) : NULL;
}

static int is_8bit(o2m_dtype d) { return d == O2M_DT_INT8 || d == O2M_DT_UINT8; }

/* A DequantizeLinear node (its x, scale, zero point) of an 8-bit tensor
 * with known scale and zero point, per tensor or along `axis` (-1: per
 * tensor only). */
static int dq_operands(const o2m_node *dq, int axis, o2m_value **x, o2m_value **scale, o2m_value **zp) {
  if (!dq || dq->n_inputs < 2 || !dq->inputs[0] || !is_8bit(dq->inputs[0]->type.elem)) return 0;
  const o2m_tensor *s = known(dq->inputs[1]), *z = dq->n_inputs > 2 ? known(dq->inputs[2]) : NULL;
  if (!s || (dq->n_inputs > 2 && dq->inputs[2] && !z)) return 0;
  if (o2m_node_attr(dq, "block_size") && o2m_node_attr(dq, "block_size")->i) return 0;
  if (s->count > 1) {
    const o2m_attr *a = o2m_node_attr(dq, "axis");
    int rank = dq->inputs[0]->type.rank;
    int64_t at = a ? a->i : 1;
    if (axis < 0 || rank < 1 || (at < 0 ? at + rank : at) != axis) return 0;
  }
  *x = dq->inputs[0];
  *scale = dq->inputs[1];
  *zp = dq->n_inputs > 2 ? dq->inputs[2] : NULL;
  return 1;
}

/* A DequantizeLinear per tensor or along axis 0 (a bias). */
static int dq_operands_any(const o2m_node *dq, o2m_value **x, o2m_value **scale, o2m_value **zp) {
  if (!dq || dq->n_inputs < 2 || !dq->inputs[0] || !known(dq->inputs[1])) return 0;
  *x = dq->inputs[0];
  *scale = dq->inputs[1];
  *zp = dq->n_inputs > 2 ? dq->inputs[2] : NULL;
  return 1;
}

int o2m_fuse_qdq(o2m_rewriter *rw, o2m_node **dead, int *n_dead, o2m_keeps_op_fn keeps, void *user) {
  o2m_node *q = rw->node;
  if (q->n_inputs < 2 || !q->outputs[0] || !is_8bit(q->outputs[0]->type.elem) || !known(q->inputs[1]) ||
      known(q->inputs[1])->count != 1 || (q->n_inputs > 2 && q->inputs[2] && !known(q->inputs[2])))
    return 0;
  o2m_value *y = q->inputs[0];
  o2m_node *relu = sole_producer(y, "Relu");
  o2m_value *pre = relu ? relu->inputs[0] : y;
  o2m_node *op = sole_producer(pre, "Conv");
  int conv = op != NULL;
  if (!op) op = sole_producer(pre, "MatMul");
  if (!op || op->n_inputs < 2) return 0;
  int w_rank = op->inputs[1] ? op->inputs[1]->type.rank : -1;
  o2m_node *dqx = producer(op->inputs[0], "DequantizeLinear");
  o2m_node *dqw = producer(op->inputs[1], "DequantizeLinear");
  o2m_value *x, *xs, *xzp, *w, *ws, *wzp;
  if (!dq_operands(dqx, -1, &x, &xs, &xzp) || !dq_operands(dqw, conv ? 0 : w_rank - 1, &w, &ws, &wzp)) return 0;
  const char *fused = conv ? "QLinearConv" : "QLinearMatMul";
  o2m_value *ins[9] = {x, xs, xzp, w, ws, wzp, q->inputs[1], q->n_inputs > 2 ? q->inputs[2] : NULL, NULL};
  /* the question to the target: the fused op with its operands (the bias
   * not yet made) and no outputs, before it is made (transform.h) */
  o2m_node probe = *q;
  probe.op_type = fused;
  probe.inputs = ins;
  probe.n_inputs = 8;
  probe.outputs = NULL;
  probe.n_outputs = 0;
  if (!keeps(&probe, user)) return 0;
  o2m_value *bias = NULL;
  if (conv && op->n_inputs > 2 && op->inputs[2]) {
    /* int32 bias: from a DequantizeLinear of scale x_scale * w_scale, or
     * a float constant quantized with it */
    o2m_value *b = op->inputs[2], *bq, *bs, *bzp;
    o2m_node *dqb = sole_producer(b, "DequantizeLinear");
    const o2m_tensor *xst = known(xs), *wst = known(ws), *bt = known(b);
    if (dqb && dqb->inputs[0] && dqb->inputs[0]->type.elem == O2M_DT_INT32 && dq_operands_any(dqb, &bq, &bs, &bzp)) {
      const o2m_tensor *bst = known(bs);
      int64_t n = bst && bst->count > wst->count ? bst->count : wst->count;
      for (int64_t c = 0; bst && c < n; c++) { /* every channel: b_scale = x_scale * w_scale */
        double want = o2m_tensor_get_float(xst, 0) * o2m_tensor_get_float(wst, wst->count > 1 ? c : 0);
        if (fabs(o2m_tensor_get_float(bst, bst->count > 1 ? c : 0) - want) > 1e-6 * want) bst = NULL;
      }
      if (!bst || (bzp && known(bzp) && o2m_tensor_get_float(known(bzp), 0) != 0)) return 0;
      bias = bq;
      dead[(*n_dead)++] = dqb;
    } else if (bt && bt->data && o2m_dtype_is_float(bt->dtype) && bt->count <= 65536) {
      double *v = o2m_arena_array(&rw->model->arena, (size_t)bt->count + 1, sizeof(double));
      if (!v) return 0;
      for (int64_t c = 0; c < bt->count; c++)
        v[c] = nearbyint(o2m_tensor_get_float(bt, c) /
                         (o2m_tensor_get_float(xst, 0) * o2m_tensor_get_float(wst, wst->count > 1 ? c : 0)));
      bias = xk_const_1d(rw, O2M_DT_INT32, v, (int)bt->count);
      if (!bias) return 0;
    } else {
      return 0;
    }
  }
  ins[8] = bias;
  int n_attrs;
  o2m_node *saved = rw->node;
  rw->node = op; /* the fused op keeps the Conv's window attributes */
  o2m_attr *attrs = xk_attrs_except(rw, (const char *const[]){NULL}, 0, &n_attrs);
  rw->node = saved;
  if (!attrs) return 0;
  if (!ins[7]) ins[7] = xk_scalar(rw, q->outputs[0]->type.elem, 0);
  o2m_value *out = q->outputs[0];
  o2m_status s;
  if (relu) { /* relu(y) quantized: max(q, zero point) */
    o2m_value **made = o2m_rw_node(rw, fused, conv ? 9 : 8, ins, 1, attrs, conv ? n_attrs : 0);
    o2m_value *mx[2] = {made ? made[0] : NULL, ins[7]};
    s = made ? o2m_rw_node_into(rw, "Max", 2, mx, 1, &out, NULL, 0) : xk_failed(rw);
  } else {
    s = o2m_rw_node_into(rw, fused, conv ? 9 : 8, ins, 1, &out, attrs, conv ? n_attrs : 0);
  }
  if (s) return -1;
  dead[(*n_dead)++] = op;
  drop_if_unread(dqx, dead, n_dead);
  drop_if_unread(dqw, dead, n_dead);
  if (relu) dead[(*n_dead)++] = relu;
  return 1;
}
