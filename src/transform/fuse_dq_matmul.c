/* fuse_dq_matmul.c - ONNX's blocked 4-bit weights (DequantizeLinear 21's
 * block_size) feeding a MatMul, as onnxruntime's MatMulNBits, for targets
 * that keep that op (the JIT: its kernel reads the packed values, never a
 * float copy of the weights; src/runtime/rt_nbits.c). A quantizer exports
 *   Y = MatMul(A, DequantizeLinear(W [K, N] int4 or uint4, scale
 *       [ceil(K / bs), N], zero point alike?, axis 0, block_size bs))
 * and this pass writes Y = MatMulNBits(A, B, scales, zero points) with B
 * W's columns in MatMulNBits' layout ([N, blocks, bs / 2]: each column's
 * K values in blocks, two a byte, low nibble first), the scales and zero
 * points transposed to [N, blocks], as onnxruntime's own
 * DQMatMulToMatMulNBits graph rewrite does. Signed values are shifted by 8
 * with their zero points (q - z is unchanged), so that an int4 weight
 * without a zero point is MatMulNBits' default zero point 8; a uint4 one
 * without gets zero points of 0.
 *
 * Applies to stored 2-D weights of one MatMul (the DequantizeLinear read by
 * nothing else), float32 scales, bs a power of two of at least 16. The
 * repacked operands are new constants of the packed size (the original
 * weight is then unread); other forms are left to the decompositions.
 *
 * Must not: change a model for a target that does not keep MatMulNBits.
 */
#include <string.h>

#include "infer/infer.h"
#include "transform/decompose_kit.h"
#include "util/diag.h"

static int is_4bit(o2m_dtype d) { return d == O2M_DT_INT4 || d == O2M_DT_UINT4; }

/* Element i of a packed 4-bit tensor, shifted into 0..15 (signed + 8). */
static unsigned nibble(const o2m_tensor *t, int64_t i) {
  unsigned v = (t->data[i / 2] >> (i % 2 * 4)) & 15u;
  return t->dtype == O2M_DT_INT4 ? (v ^ 8u) : v; /* two's complement + 8 */
}

typedef struct blocked_weight {
  const o2m_tensor *w, *scale, *zp; /* zp NULL when absent */
  int64_t k, n, block, blocks;
} blocked_weight;

/* The DequantizeLinear's operands when they are such a weight. */
static int blocked_operands(const o2m_node *dq, blocked_weight *b) {
  const o2m_attr *bs = o2m_node_attr(dq, "block_size"), *axis = o2m_node_attr(dq, "axis");
  if (dq->domain[0] || strcmp(dq->op_type, "DequantizeLinear") != 0 || dq->n_inputs < 2 || !bs || bs->i < 16 ||
      (bs->i & (bs->i - 1)) || (axis && axis->i != 0 && axis->i != -2) || !dq->outputs[0] ||
      dq->outputs[0]->use_count != 1)
    return 0;
  b->w = o2m_value_stored(dq->inputs[0]), b->scale = o2m_value_stored(dq->inputs[1]);
  b->zp = dq->n_inputs > 2 ? o2m_value_stored(dq->inputs[2]) : NULL;
  if (!b->w || !b->w->data || b->w->rank != 2 || !is_4bit(b->w->dtype) || !b->scale || !b->scale->data ||
      b->scale->dtype != O2M_DT_FLOAT || (dq->n_inputs > 2 && dq->inputs[2] && (!b->zp || !b->zp->data)))
    return 0;
  b->k = b->w->dims[0], b->n = b->w->dims[1], b->block = bs->i, b->blocks = (b->k + b->block - 1) / b->block;
  if (b->scale->rank != 2 || b->scale->dims[0] != b->blocks || b->scale->dims[1] != b->n) return 0;
  return !b->zp || (b->zp->dtype == b->w->dtype && b->zp->rank == 2 && b->zp->dims[0] == b->blocks &&
                    b->zp->dims[1] == b->n);
}

/* B, scales and zero points in MatMulNBits' layout (in[1..3]). */
static int repack(o2m_rewriter *rw, const blocked_weight *b, o2m_value **in) {
  int64_t blob = b->block / 2, zp_row = (b->blocks + 1) / 2;
  int64_t b_dims[3] = {b->n, b->blocks, blob}, s_dims[1] = {b->n * b->blocks}, z_dims[1] = {b->n * zp_row};
  int with_zp = b->zp || b->w->dtype == O2M_DT_UINT4; /* int4 without: MatMulNBits' default 8 */
  o2m_tensor *packed = o2m_rw_new_tensor(rw, O2M_DT_UINT8, 3, b_dims);
  o2m_tensor *scales = o2m_rw_new_tensor(rw, O2M_DT_FLOAT, 1, s_dims);
  o2m_tensor *zeros = with_zp ? o2m_rw_new_tensor(rw, O2M_DT_UINT8, 1, z_dims) : NULL;
  if (!packed || !scales || (with_zp && !zeros)) return 0;
  uint8_t *p = (uint8_t *)(uintptr_t)packed->data, *z = zeros ? (uint8_t *)(uintptr_t)zeros->data : NULL;
  for (int64_t c = 0; c < b->n; c++) {
    for (int64_t k = 0; k < b->k; k++) {
      int64_t at = k % b->block;
      p[(c * b->blocks + k / b->block) * blob + at / 2] |= (uint8_t)(nibble(b->w, k * b->n + c) << (at % 2 * 4));
    }
    for (int64_t j = 0; j < b->blocks; j++) {
      o2m_tensor_set_float(scales, c * b->blocks + j, o2m_tensor_get_float(b->scale, j * b->n + c));
      if (z && b->zp) z[c * zp_row + j / 2] |= (uint8_t)(nibble(b->zp, j * b->n + c) << (j % 2 * 4));
    }
  }
  in[1] = o2m_rw_const_tensor(rw, packed);
  in[2] = o2m_rw_const_tensor(rw, scales);
  in[3] = zeros ? o2m_rw_const_tensor(rw, zeros) : NULL;
  return in[1] && in[2] && (!zeros || in[3]);
}

/* The probe's operand i: a value of the repacked operand's type only. */
static void probe_value(o2m_value *v, o2m_dim *dims, o2m_dtype dtype, int rank, const int64_t *sizes) {
  memset(v, 0, sizeof(*v));
  v->kind = O2M_VALUE_NODE;
  v->type.kind = O2M_TYPE_TENSOR;
  v->type.elem = dtype;
  v->type.rank = rank;
  v->type.dims = dims;
  for (int k = 0; k < rank; k++) dims[k] = o2m_dim_known(sizes[k]);
}

int o2m_fuse_dq_matmul(o2m_rewriter *rw, o2m_node **dead, int *n_dead, o2m_keeps_op_fn keeps, void *user) {
  o2m_node *mm = rw->node;
  o2m_value *a = mm->n_inputs == 2 ? mm->inputs[0] : NULL, *w = a ? mm->inputs[1] : NULL;
  o2m_node *dq = w && w->kind == O2M_VALUE_NODE ? w->producer : NULL;
  blocked_weight b;
  if (!dq || !a || a->type.elem != O2M_DT_FLOAT || a->type.rank < 1 || mm->n_outputs != 1 || !mm->outputs[0] ||
      !blocked_operands(dq, &b))
    return 0;
  o2m_attr attrs[4] = {o2m_rw_attr_int("K", b.k), o2m_rw_attr_int("N", b.n), o2m_rw_attr_int("bits", 4),
                       o2m_rw_attr_int("block_size", b.block)};
  /* the question to the target, with operands of the repacked types (none
   * made yet) and no outputs */
  o2m_value fake[3];
  o2m_dim dims[3][3];
  int with_zp = b.zp || b.w->dtype == O2M_DT_UINT4;
  probe_value(&fake[0], dims[0], O2M_DT_UINT8, 3, (int64_t[]){b.n, b.blocks, b.block / 2});
  probe_value(&fake[1], dims[1], O2M_DT_FLOAT, 1, (int64_t[]){b.n * b.blocks});
  probe_value(&fake[2], dims[2], O2M_DT_UINT8, 1, (int64_t[]){b.n * ((b.blocks + 1) / 2)});
  o2m_value *probe_in[4] = {a, &fake[0], &fake[1], with_zp ? &fake[2] : NULL};
  o2m_node probe = *mm;
  probe.domain = "com.microsoft";
  probe.op_type = "MatMulNBits";
  probe.inputs = probe_in;
  probe.n_inputs = with_zp ? 4 : 3;
  probe.attrs = attrs;
  probe.n_attrs = 4;
  probe.outputs = NULL;
  probe.n_outputs = 0;
  if (!keeps(&probe, user)) return 0;
  o2m_value *in[4] = {a};
  if (!repack(rw, &b, in)) return rw->diag->status ? -1 : 0;
  o2m_value *out = mm->outputs[0];
  if (o2m_rw_domain_node_into(rw, "com.microsoft", "MatMulNBits", in[3] ? 4 : 3, in, 1, &out, attrs, 4)) return -1;
  dead[(*n_dead)++] = dq;
  return 1;
}
