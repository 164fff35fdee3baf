/* rt_qmatmul.c - 8-bit matrix products: ONNX's MatMulInteger with a 2-D B
 * on the integer units (rt_abi.h, O2M_QMATMUL_CALL), what the Linalg
 * emitter writes for the JIT's MatMulInteger nodes (lower_quant.c): the
 * form dynamic quantization writes (DynamicQuantizeLinear -> MatMulInteger
 * -> Cast -> Mul by the scales), A's zero point known only at run time.
 *
 * Owns: the call (A [..., K], B [K, N], A's zero point, Y [..., N] int32;
 * params as rt_internal.h's QM_*), through oneDNN's int8 matmul where it is
 * (rt_dnnl_qmatmul: primitive and packed B kept per B and model),
 * else plain loops: the int32 sums of (A - a_zp) (B - b_zp).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

static int32_t element(const void *p, int is_signed, int64_t i) {
  return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static void reference_qmatmul(const rt_qmatmul_call *c) {
  int as = c->p[QM_A_SIGNED] != 0, bs = c->p[QM_B_SIGNED] != 0;
  int32_t bz = (int32_t)c->p[QM_B_ZP];
  memset(c->y, 0, (size_t)(c->m * c->n) * sizeof(int32_t));
  for (int64_t i = 0; i < c->m; i++)
    for (int64_t k = 0; k < c->k; k++) {
      int32_t a = element(c->a, as, i * c->k + k) - c->a_zp;
      if (!a) continue;
      int32_t *row = c->y + i * c->n;
      for (int64_t j = 0; j < c->n; j++) row[j] += a * (element(c->b, bs, k * c->n + j) - bz);
    }
}

/* Y = (A - a_zp) (B - b_zp) as params say; buffers that disagree (the
 * lowering never passes such) leave Y unwritten. */
static void rt_qmatmul(o2m_rt_unranked *a, o2m_rt_unranked *b, o2m_rt_unranked *a_zp, o2m_rt_unranked *y,
                       o2m_rt_unranked *params) {
  if (params->rank != 1 || params->desc[3] < QM_COUNT || a->rank < 1 || b->rank != 2 || y->rank != a->rank ||
      !o2m_rt_row_major(y))
    return;
  const int64_t *p = (const int64_t *)(intptr_t)params->desc[1] + params->desc[2];
  rt_qmatmul_call c = {.p = p, .k = b->desc[3], .n = b->desc[4]};
  if (a->desc[3 + a->rank - 1] != c.k || y->desc[3 + y->rank - 1] != c.n) return;
  c.y = (int32_t *)(intptr_t)y->desc[1] + y->desc[2];
  if (c.k == 0) { /* empty sums */
    memset(c.y, 0, (size_t)o2m_rt_count(y) * sizeof(int32_t));
    return;
  }
  c.m = o2m_rt_count(a) / c.k;
  if (c.m * c.n != o2m_rt_count(y) || (p[QM_HAS_A_ZP] && o2m_rt_count(a_zp) != 1)) return;
  void *owned[3] = {0};
  c.a = o2m_rt_dense(a, 1, &owned[0]);
  c.b = o2m_rt_dense(b, 1, &owned[1]);
  const void *zp = p[QM_HAS_A_ZP] ? o2m_rt_dense(a_zp, 1, &owned[2]) : NULL;
  c.a_zp = zp ? element(zp, p[QM_A_SIGNED] != 0, 0) : 0;
  if (c.a && c.b && (zp || !p[QM_HAS_A_ZP]) && c.m * c.n > 0 && !rt_dnnl_qmatmul(&c)) reference_qmatmul(&c);
  for (int i = 0; i < 3; i++) free(owned[i]);
}

o2m_rt_symbol rt_qmatmul_symbol(void) {
  return (o2m_rt_symbol){"_mlir_ciface_" O2M_QMATMUL_CALL, (void *)(uintptr_t)rt_qmatmul};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void _mlir_ciface_o2m_qmatmul(o2m_rt_unranked *a, o2m_rt_unranked *b, o2m_rt_unranked *a_zp, o2m_rt_unranked *y,
                              o2m_rt_unranked *params) {
  rt_qmatmul(a, b, a_zp, y, params);
}
#endif
