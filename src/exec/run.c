/* run.c - o2m_run_model and o2m_run_mlir_file (see run.h): the phases of
 * running, each reported before it starts, and the table from target to
 * the emitter that builds an MLIR module in memory.
 */

#include "core/core.h"
#include "emit/emit.h"
#include "exec/exec.h"
#include "exec/exec_internal.h"
#include "exec/run.h"
#include "util/diag.h"

/* Builds the module for a target; NULL rows are not implemented yet. */
typedef o2m_status (*module_builder)(o2m_model *model, MlirContext mc, MlirModule *out, o2m_diag *diag);

static o2m_status build_linalg(o2m_model *model, MlirContext mc, MlirModule *out, o2m_diag *diag) {
  return o2m_emit_linalg_module(model, mc, 0, out, diag);
}

static const module_builder builders[] = {
    [O2M_TARGET_TORCH] = NULL,
    [O2M_TARGET_ONNX] = NULL,
    [O2M_TARGET_LINALG] = build_linalg,
    [O2M_TARGET_TOSA] = NULL,
    [O2M_TARGET_STABLEHLO] = NULL,
};

/* The entry function the emitters name. */
static const char entry_name[] = "main";

typedef struct run_state {
  const o2m_run_options *options;
  o2m_run_phase *failed;
} run_state;

static void enter(run_state *r, o2m_run_phase phase) {
  *r->failed = phase;
  if (r->options->on_phase) r->options->on_phase(r->options->on_phase_user, phase);
}

/* Verifies, compiles (consuming `module`) and calls; then frees. */
static o2m_status compile_and_call(run_state *r, MlirModule module, const char *entry, int n_inputs,
                                   const o2m_tensor *const *inputs, int *n_outputs, o2m_tensor ***outputs,
                                   int expected_outputs, o2m_arena *arena, o2m_diag *diag) {
  enter(r, O2M_PHASE_VERIFY);
  o2m_status s = o2m_exec_verify(module, diag);
  if (s) {
    mlirModuleDestroy(module);
    return s;
  }
  enter(r, O2M_PHASE_COMPILE);
  o2m_exec *exec = NULL;
  o2m_exec_options eo = {r->options->opt_level};
  if ((s = o2m_exec_compile(module, entry, &eo, &exec, diag))) return s;
  enter(r, O2M_PHASE_RUN);
  int n = o2m_exec_output_count(exec);
  if (expected_outputs >= 0 && n != expected_outputs)
    s = o2m_fail(diag, O2M_ERR_INTERNAL, "@%s returns %d results for %d graph outputs", entry, n,
                 expected_outputs);
  o2m_tensor **outs = s ? NULL : o2m_arena_array(arena, (size_t)n + 1, sizeof(o2m_tensor *));
  if (!s && !outs) s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  if (!s) s = o2m_exec_call(exec, n_inputs, inputs, n, outs, arena, diag);
  o2m_exec_free(exec);
  if (s) return s;
  *n_outputs = n;
  *outputs = outs;
  return O2M_OK;
}

static const o2m_run_options default_options = {O2M_TARGET_LINALG, 2, NULL, NULL};

static o2m_status target_builder(const o2m_run_options *o, module_builder *out, o2m_diag *diag) {
  if ((unsigned)o->target >= sizeof(builders) / sizeof(builders[0]))
    return o2m_fail(diag, O2M_ERR_USAGE, "unknown target %d", (int)o->target);
  if (!builders[o->target])
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "running the %s target is not implemented yet",
                    o2m_target_name(o->target));
  *out = builders[o->target];
  return O2M_OK;
}

/* Gives the outputs their graph names and the graph's dtype where the
 * generated code could not tell it (signless integers). */
static void label_outputs(const o2m_graph *g, o2m_tensor **outputs) {
  for (int i = 0; i < g->n_outputs; i++) {
    outputs[i]->name = g->outputs[i].name;
    o2m_dtype want = g->output_values[i]->type.elem;
    if (want && exec_dtype_feeds(want, outputs[i]->dtype)) outputs[i]->dtype = want;
  }
}

o2m_status o2m_run_model(o2m_model *model, const o2m_run_options *options, int n_inputs,
                         const o2m_tensor *const *inputs, o2m_tensor **outputs, o2m_arena *arena,
                         o2m_run_phase *failed, o2m_diag *diag) {
  o2m_run_phase ignored;
  run_state r = {options ? options : &default_options, failed ? failed : &ignored};
  module_builder build = NULL;
  *r.failed = O2M_PHASE_EMIT;
  o2m_status s = target_builder(r.options, &build, diag);
  if (s) return s;
  enter(&r, O2M_PHASE_INFER);
  if ((s = o2m_specialize_inputs(model, n_inputs, inputs, diag))) return s;
  enter(&r, O2M_PHASE_EMIT);
  MlirContext mc = o2m_exec_context_create();
  MlirModule module;
  s = build(model, mc, &module, diag);
  int n_out = 0;
  o2m_tensor **outs = NULL;
  if (!s)
    s = compile_and_call(&r, module, entry_name, n_inputs, inputs, &n_out, &outs, model->graph->n_outputs,
                         arena, diag);
  mlirContextDestroy(mc);
  if (s) return s;
  for (int i = 0; i < n_out; i++) outputs[i] = outs[i];
  label_outputs(model->graph, outputs);
  return O2M_OK;
}

o2m_status o2m_run_mlir_file(const char *path, const char *entry, const o2m_run_options *options,
                             int n_inputs, const o2m_tensor *const *inputs, int *n_outputs,
                             o2m_tensor ***outputs, o2m_arena *arena, o2m_run_phase *failed, o2m_diag *diag) {
  o2m_run_phase ignored;
  run_state r = {options ? options : &default_options, failed ? failed : &ignored};
  enter(&r, O2M_PHASE_READ);
  MlirContext mc = o2m_exec_context_create();
  exec_errors errors;
  exec_capture_begin(&errors, mc);
  MlirModule module = mlirModuleCreateParseFromFile(mc, mlirStringRefCreateFromCString(path));
  exec_capture_end(&errors);
  o2m_status s = O2M_OK;
  if (mlirModuleIsNull(module))
    s = o2m_fail(diag, O2M_ERR_PARSE, "%s: not a valid MLIR file: %s", path,
                 errors.text[0] ? errors.text : "cannot read it");
  if (!s)
    s = compile_and_call(&r, module, entry ? entry : entry_name, n_inputs, inputs, n_outputs, outputs, -1, arena,
                         diag);
  mlirContextDestroy(mc);
  for (int i = 0; !s && i < *n_outputs; i++) (*outputs)[i]->name = o2m_arena_printf(arena, "result%d", i);
  return s;
}
