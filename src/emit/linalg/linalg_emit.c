/* linalg_emit.c - the Linalg target: its entry in the emitter kit (name,
 * lowering table, dialects, arith.constant), the module for run/test, and
 * `import --to linalg`. */
#include <mlir-c/Dialect/Arith.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/Linalg.h>
#include <mlir-c/Dialect/Math.h>
#include <mlir-c/Dialect/SCF.h>
#include <mlir-c/Dialect/Tensor.h>

#include <string.h>

#include "emit/emit.h"
#include "emit/linalg/lower.h"

static void load_dialects(MlirContext mc) {
  MlirDialectHandle handles[] = {
      mlirGetDialectHandle__func__(),   mlirGetDialectHandle__arith__(),
      mlirGetDialectHandle__math__(),   mlirGetDialectHandle__linalg__(),
      mlirGetDialectHandle__tensor__(), mlirGetDialectHandle__scf__(),
  };
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++)
    mlirDialectHandleLoadDialect(handles[i], mc);
}

o2m_status o2m_emit_linalg_module(o2m_model *model, MlirContext mc, int for_jit,
                                  MlirModule *out, o2m_diag *diag) {
  return o2m_emit_linalg_module_io(model, mc, for_jit, NULL, NULL, out, diag);
}

/* The JIT's channels-last convolutions and max pools (O2M_JIT_DNNL) and
 * quantized kernels (O2M_JIT_QUANT, the nodes lw_jit_keeps_quant keeps). */
static lw_lower_fn jit_lowering_for(int for_jit, const char *domain, const char *op_type) {
  static const struct {
    int flag;
    const char *op_type;
    lw_lower_fn lower;
  } rows[] = {
      {O2M_JIT_DNNL, "NhwcFusedConv", lw_lower_dnnl_conv},
      {O2M_JIT_DNNL, "NhwcMaxPool", lw_lower_dnnl_max_pool},
      {O2M_JIT_QUANT, "MatMulNBits", lw_lower_matmul_nbits},
      {O2M_JIT_QUANT, "NhwcQLinearConv", lw_lower_qlinear_conv},
  };
  if (!domain[0] && (for_jit & O2M_JIT_QUANT) && (for_jit & O2M_JIT_DNNL)) {
    if (strcmp(op_type, "QLinearConv") == 0) return lw_lower_qlinear_conv;
    if (strcmp(op_type, "MatMulInteger") == 0) return lw_lower_matmul_integer;
    if (strcmp(op_type, "ConvInteger") == 0) return lw_lower_conv_integer;
  }
  if (!domain[0] && (for_jit & O2M_JIT_QUANT) && strcmp(op_type, "DynamicQuantizeLinear") == 0)
    return lw_lower_dynamic_quantize;
  if (strcmp(domain, "com.microsoft") != 0) return NULL;
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
    if ((for_jit & rows[i].flag) && strcmp(op_type, rows[i].op_type) == 0) return rows[i].lower;
  return NULL;
}

/* Whether the Linalg lowering takes this node of an op in its table: a
 * Loop only when it carries tensors (lw_loop_carries_tensors). */
static int linalg_keeps(const o2m_node *n) {
  return n->domain[0] || strcmp(n->op_type, "Loop") != 0 || lw_loop_carries_tensors(n);
}

static const lw_target linalg_target = {.name = "Linalg",
                                        .lowering_for = lw_lowering_for,
                                        .keeps = linalg_keeps,
                                        .load_dialects = load_dialects,
                                        .const_op = "arith.constant",
                                        .const_attr = "value",
                                        .jit_lowering_for = jit_lowering_for,
                                        .jit_keeps = lw_jit_keeps_quant};

o2m_status o2m_emit_linalg_module_io(o2m_model *model, MlirContext mc, int for_jit,
                                     const struct o2m_io_value *inputs, struct o2m_io_value *outputs,
                                     MlirModule *out, o2m_diag *diag) {
  return lw_emit_module(&linalg_target, model, mc, for_jit, inputs, outputs, out, diag);
}

o2m_status o2m_linalg_prepare(o2m_model *model, int for_jit, o2m_diag *diag) {
  return lw_prepare_model(&linalg_target, model, for_jit, diag);
}

/* ---- import --to linalg ------------------------------------------------------ */

o2m_status o2m_emit_linalg(o2m_model *model, const o2m_import_options *options, FILE *out,
                           o2m_diag *diag) {
  MlirContext mc = mlirContextCreate();
  MlirModule module;
  o2m_status s = o2m_emit_linalg_module(model, mc, 0, &module, diag);
  if (!s) {
    lw_print_module(module, options && options->bytecode, out);
    mlirModuleDestroy(module);
  }
  mlirContextDestroy(mc);
  return s;
}
