/* plugin_torch.c - the exported table of libonnx2mlir-torch.so: the
 * torch-form emitter alone (see plugin.h and tools/cli_plugin.c). It links
 * MLIR statically and holds no other target, so every other request is
 * refused. */
#include "emit/emit.h"
#include "plugin/plugin.h"
#include "util/diag.h"

static o2m_status import_torch(o2m_model *model, const o2m_import_options *options, FILE *out,
                               o2m_diag *diag) {
  static const o2m_import_options defaults = {O2M_TARGET_TORCH};
  if (!options) options = &defaults;
  if (options->target != O2M_TARGET_TORCH)
    return o2m_fail(diag, O2M_ERR_USAGE, "libonnx2mlir-torch.so emits the torch form only, not %s",
                    o2m_target_name(options->target));
  if (!model || !out) return o2m_fail(diag, O2M_ERR_USAGE, "import: no model or output");
  return o2m_emit_torch(model, options, out, diag);
}

__attribute__((visibility("default")))
const struct o2m_plugin o2m_plugin_v1 = {
    .abi = O2M_PLUGIN_ABI,
    .import = import_torch,
    .run_model = NULL,
    .run_mlir_file = NULL,
};
