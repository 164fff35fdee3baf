/* plugin_forms.c - the exported table of libonnx2mlir-forms.so: the two
 * as-written emitters alone, torch-mlir's form and onnx-mlir's (see
 * plugin.h and tools/cli_plugin.c). It links MLIR statically and holds no
 * other target, so every other request is refused. */
#include "emit/emit.h"
#include "plugin/plugin.h"
#include "util/diag.h"

static o2m_status import_form(o2m_model *model, const o2m_import_options *options, FILE *out,
                              o2m_diag *diag) {
  static const o2m_import_options defaults = {O2M_TARGET_TORCH};
  if (!options) options = &defaults;
  if (!model || !out) return o2m_fail(diag, O2M_ERR_USAGE, "import: no model or output");
  switch (options->target) {
  case O2M_TARGET_TORCH: return o2m_emit_torch(model, options, out, diag);
  case O2M_TARGET_ONNX: return o2m_emit_onnx(model, options, out, diag);
  default:
    return o2m_fail(diag, O2M_ERR_USAGE,
                    "libonnx2mlir-forms.so emits the torch and onnx forms only, not %s",
                    o2m_target_name(options->target));
  }
}

__attribute__((visibility("default")))
const struct o2m_plugin o2m_plugin_v1 = {
    .abi = O2M_PLUGIN_ABI,
    .import = import_form,
    .run_model = NULL,
    .run_mlir_file = NULL,
};
