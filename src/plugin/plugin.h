/* plugin.h - the interface of libonnx2mlir-mlir.so, the module holding
 * everything that links MLIR.
 *
 * Owns: the one structure the plugin exports. The CLI dlopen()s the plugin
 * only for commands that need MLIR, looks up the symbol
 * O2M_PLUGIN_SYMBOL and checks `abi` before calling through it, so that
 * commands like `info` never load libMLIR.so. Bump O2M_PLUGIN_ABI whenever
 * this structure or the meaning of a member changes.
 */
#ifndef O2M_PLUGIN_H
#define O2M_PLUGIN_H

#include <stdio.h>

#include "exec/run.h"
#include "onnx2mlir.h"

#define O2M_PLUGIN_ABI 7 /* 7: compile */
#define O2M_PLUGIN_SYMBOL "o2m_plugin_v1"

struct o2m_plugin {
  int abi; /* O2M_PLUGIN_ABI of the plugin's build */
  /* o2m_model_import: emits the model for options->target into `out`. */
  o2m_status (*import)(o2m_model *model,
                       const o2m_import_options *options, FILE *out,
                       o2m_diag *diag);
  /* o2m_run_model (exec/run.h): runs the model on concrete inputs. */
  o2m_status (*run_model)(o2m_model *model, const o2m_run_options *options,
                          int n_inputs, const o2m_tensor *const *inputs,
                          o2m_tensor **outputs, o2m_arena *arena,
                          o2m_run_phase *failed, o2m_diag *diag);
  /* o2m_run_mlir_file (exec/run.h): runs an MLIR module from a file. */
  o2m_status (*run_mlir_file)(const char *path, const char *entry,
                              const o2m_run_options *options, int n_inputs,
                              const o2m_tensor *const *inputs, int *n_outputs,
                              o2m_tensor ***outputs, o2m_arena *arena,
                              o2m_run_phase *failed, o2m_diag *diag);
  /* o2m_model_compile: the model as a library with a C ABI. */
  o2m_status (*compile)(o2m_model *model, const o2m_compile_options *options, o2m_diag *diag);
};

extern const struct o2m_plugin o2m_plugin_v1;

#endif
