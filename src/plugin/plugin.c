/* plugin.c - the exported table of libonnx2mlir-mlir.so (see plugin.h). */
#include "plugin/plugin.h"

__attribute__((visibility("default")))
const struct o2m_plugin o2m_plugin_v1 = {
    .abi = O2M_PLUGIN_ABI,
    .import = o2m_model_import,
    .run_model = o2m_run_model,
    .run_mlir_file = o2m_run_mlir_file,
    .compile = o2m_model_compile,
};
