/* shlo_quant.c - StableHLO lowerings of quantized ops through the spec's
 * quantized types: DequantizeLinear of signed 8/16-bit integers with a
 * known scale and zero point per tensor is a
 * stablehlo.bitcast_convert of the integers to
 * !quant.uniform<i8:f32, scale:zero_point> (their storage type) and a
 * stablehlo.uniform_dequantize, (x - zp) * scale as ONNX computes it.
 *
 * QuantizeLinear is not mapped to stablehlo.uniform_quantize: the spec
 * rounds after adding the zero point (round_nearest_even(x / s + zp)),
 * ONNX before (round(x / s) + zp), which differ on ties when zp is odd;
 * it stays in the shared layer's exact elementwise decomposition, as do
 * unsigned storage, per-axis and blocked quantization (per-axis types
 * verify, but the reference interpreter cannot hold them: "Unsupported
 * type" on a bitcast_convert) and unknown scales. */
#include <stdio.h>
#include <string.h>

#include "emit/stablehlo/shlo_check.h"
#include "emit/stablehlo/shlo_kit.h"
#include "infer/infer.h"

static int known_count(const o2m_value *v) {
  const o2m_tensor *t = v ? (v->init ? v->init : v->known) : NULL;
  return t && t->data ? (int)t->count : -1;
}

int sh_dequantize_kept(const o2m_node *n) {
  if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->outputs[0]) return 0;
  o2m_dtype x = n->inputs[0]->type.elem, s = n->inputs[1]->type.elem, y = n->outputs[0]->type.elem;
  if ((x != O2M_DT_INT8 && x != O2M_DT_INT16) || s != O2M_DT_FLOAT || y != O2M_DT_FLOAT) return 0;
  const o2m_attr *block = o2m_node_attr(n, "block_size");
  if (block && block->i) return 0;
  int scales = known_count(n->inputs[1]);
  int zps = n->n_inputs > 2 && n->inputs[2] ? known_count(n->inputs[2]) : scales;
  int rank = n->inputs[0]->type.rank;
  return scales == 1 && zps == 1 && rank >= 0;
}


o2m_status sh_lower_dequantize_linear(lw_ctx *cx) {
  o2m_status s = sh_check_node(cx);
  if (s) return s;
  if (!sh_dequantize_kept(cx->node)) return lw_unsupported(cx, "this DequantizeLinear form");
  MlirValue x = lw_in(cx, 0);
  int rank = sh_rank(x);
  const o2m_tensor *scale = lw_in_known(cx, 1), *zp = lw_in_present(cx, 2) ? lw_in_known(cx, 2) : NULL;
  char shape[512] = "", text[1024];
  size_t len = 0;
  for (int k = 0; k < rank; k++) len += (size_t)snprintf(shape + len, sizeof(shape) - len, "%lldx", (long long)sh_size(x, k));
  const char *storage = lw_in_type(cx, 0)->elem == O2M_DT_INT8 ? "i8" : "i16";
  snprintf(text, sizeof(text), "tensor<%s!quant.uniform<%s:f32, %.9g:%lld>>", shape, storage,
           o2m_tensor_get_float(scale, 0), (long long)(zp ? o2m_tensor_get_float(zp, 0) : 0));
  MlirType qt = lw_type(cx, text);
  if (mlirTypeIsNull(qt)) return lw_error(cx, "internal: cannot make the quantized type %s", text);
  MlirValue q = sh_op(cx, "stablehlo.bitcast_convert", 1, &x, qt, NULL);
  return lw_set_out(cx, 0, sh_op(cx, "stablehlo.uniform_dequantize", 1, &q, sh_out_type(cx, 0), NULL));
}
