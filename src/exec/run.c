/* run.c - o2m_run_model and o2m_run_mlir_file (see run.h): the phases of
 * running, each reported before it starts and timed (o2m_run_timings), the
 * repeated calls of `run --repeat`, and the table from target to the
 * emitter that builds an MLIR module in memory.
 */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "emit/emit.h"
#include "exec/exec.h"
#include "exec/exec_internal.h"
#include "exec/run.h"
#include "exec/run_cache.h"
#include "emit/linalg/lower.h"
#include "util/diag.h"

/* Builds the module for a target; NULL rows are not implemented yet. */
typedef o2m_status (*module_builder)(o2m_model *model, MlirContext mc, int profile, const o2m_io_value *inputs,
                                     o2m_io_value *outputs, MlirModule *out, o2m_diag *diag);

static int env_on(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

int o2m_run_quant_kernels(void) { return !env_on("ONNX2MLIR_NO_QUANT_KERNELS"); }

int o2m_run_linalg_flags(int profile) {
  /* ONNX2MLIR_WEIGHTS_IN_CODE=1: weights compiled in as constants (for comparison) */
  int weight_args = env_on("ONNX2MLIR_WEIGHTS_IN_CODE") ? 0 : O2M_JIT_WEIGHT_ARGS;
  return O2M_JIT | O2M_JIT_KERNELS | weight_args | (o2m_rt_blas_available() ? O2M_JIT_SGEMM : 0) |
         (o2m_rt_dnnl_available() ? O2M_JIT_DNNL : 0) | (profile ? O2M_JIT_PROFILE : 0) |
         (o2m_run_quant_kernels() ? O2M_JIT_QUANT : 0);
}

static o2m_status build_linalg(o2m_model *model, MlirContext mc, int profile, const o2m_io_value *inputs,
                               o2m_io_value *outputs, MlirModule *out, o2m_diag *diag) {
  return o2m_emit_linalg_module_io(model, mc, o2m_run_linalg_flags(profile), inputs, outputs, out, diag);
}

static o2m_status build_tosa(o2m_model *model, MlirContext mc, int profile, const o2m_io_value *inputs,
                             o2m_io_value *outputs, MlirModule *out, o2m_diag *diag) {
  if (profile) return o2m_fail(diag, O2M_ERR_USAGE, "--profile takes the Linalg target");
  return o2m_emit_tosa_module_io(model, mc, inputs, outputs, out, diag);
}

static const module_builder builders[] = {
    [O2M_TARGET_TORCH] = NULL,
    [O2M_TARGET_ONNX] = NULL,
    [O2M_TARGET_LINALG] = build_linalg,
    [O2M_TARGET_TOSA] = build_tosa,
    [O2M_TARGET_STABLEHLO] = NULL,
};

/* The entry function the emitters name. */
static const char entry_name[] = "main";

typedef struct run_state {
  const o2m_run_options *options;
  o2m_run_phase *failed;
  o2m_run_timings timings; /* copied to options->timings on success */
} run_state;

static void enter(run_state *r, o2m_run_phase phase) {
  *r->failed = phase;
  if (r->options->on_phase) r->options->on_phase(r->options->on_phase_user, phase);
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Calls the compiled code options->repeat times, timing each call; the
 * outputs of all calls but the last go to a scratch arena freed at once.
 * A profile of profile_nodes nodes (0: none) starts again after the first
 * of several calls, which also builds the kernels' state (oneDNN's
 * primitives and packed weights). */
static o2m_status call_repeated(run_state *r, o2m_exec *exec, int n_inputs, const o2m_tensor *const *inputs,
                                int n, o2m_tensor **outs, int profile_nodes, o2m_arena *arena, o2m_diag *diag) {
  int runs = r->options->repeat > 1 ? r->options->repeat : 1;
  double *ms = malloc((size_t)runs * sizeof(double));
  if (!ms) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  o2m_status s = O2M_OK;
  for (int i = 0; i < runs && !s; i++) {
    o2m_arena scratch = {0};
    double t0 = exec_now_ms();
    int threads = o2m_rt_set_call_threads(r->options->threads);
    s = o2m_exec_call(exec, n_inputs, inputs, n, outs, i + 1 < runs ? &scratch : arena, diag);
    o2m_rt_set_call_threads(threads);
    ms[i] = exec_now_ms() - t0;
    o2m_arena_free(&scratch);
    if (!s && i == 0 && runs > 1 && profile_nodes && o2m_rt_profile_begin(profile_nodes))
      s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  }
  if (!s) {
    qsort(ms, (size_t)runs, sizeof(double), compare_doubles);
    r->timings.run_min_ms = ms[0];
    r->timings.run_median_ms = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
    r->timings.runs = runs;
  }
  free(ms);
  return s;
}

/* The inputs followed by the weights the entry takes as arguments (emit.h,
 * O2M_JIT_WEIGHT_ARGS), found by name among the graph's stored tensors
 * (initializers, Constants). */
static o2m_status with_weights(const o2m_exec *exec, const o2m_graph *graph, int n_inputs,
                               const o2m_tensor *const *inputs, o2m_arena *arena, int *n_all,
                               const o2m_tensor *const **all, o2m_diag *diag) {
  int n = o2m_exec_input_count(exec);
  *n_all = n_inputs, *all = inputs;
  if (n <= n_inputs || !graph) return O2M_OK;
  const o2m_tensor **list = o2m_arena_array(arena, (size_t)n, sizeof(*list));
  if (!list) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    if (i < n_inputs) {
      list[i] = inputs[i];
      continue;
    }
    const char *name = o2m_exec_weight_name(exec, i);
    const o2m_value *v = name ? o2m_strmap_get(&graph->value_by_name, name) : NULL;
    if (!o2m_value_stored(v))
      return o2m_fail(diag, O2M_ERR_INTERNAL, "argument %d of the entry is no stored tensor of the graph", i);
    list[i] = o2m_value_stored(v);
  }
  *n_all = n, *all = list;
  return O2M_OK;
}

/* Calls compiled code (options->repeat times) and frees it. `graph`
 * (NULL for an MLIR file) gives the weights the entry takes as arguments. */
static o2m_status call_compiled(run_state *r, o2m_exec *exec, const char *entry, const o2m_graph *graph,
                                int n_inputs, const o2m_tensor *const *inputs, int *n_outputs,
                                o2m_tensor ***outputs, int expected_outputs, o2m_arena *arena, o2m_diag *diag) {
  r->timings.blas_calls = o2m_exec_blas_calls(exec);
  r->timings.cache = o2m_exec_cache_state(exec);
  enter(r, O2M_PHASE_RUN);
  int n = o2m_exec_output_count(exec);
  o2m_status s = O2M_OK;
  if (expected_outputs >= 0 && n != expected_outputs)
    s = o2m_fail(diag, O2M_ERR_INTERNAL, "@%s returns %d results for %d graph outputs", entry, n,
                 expected_outputs);
  o2m_tensor **outs = s ? NULL : o2m_arena_array(arena, (size_t)n + 1, sizeof(o2m_tensor *));
  if (!s && !outs) s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  int n_all = n_inputs;
  const o2m_tensor *const *all = inputs;
  if (!s) s = with_weights(exec, graph, n_inputs, inputs, arena, &n_all, &all, diag);
  int profile = r->options->profile && graph;
  if (!s && profile && o2m_rt_profile_begin(graph->n_nodes)) s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  if (!s) s = call_repeated(r, exec, n_all, all, n, outs, profile ? graph->n_nodes : 0, arena, diag);
  if (!s && profile) {
    double *ms = o2m_arena_array(arena, (size_t)graph->n_nodes + 1, sizeof(double));
    int profiled = r->timings.runs > 1 ? r->timings.runs - 1 : 1; /* all calls but the first */
    if (!ms) s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
    for (int i = 0; ms && i < graph->n_nodes; i++) ms[i] = o2m_rt_profile_sums()[i] / profiled;
    r->timings.node_ms = ms;
    r->timings.n_nodes = graph->n_nodes;
  }
  if (profile) o2m_rt_profile_end();
  r->timings.copied_weight_bytes = o2m_exec_copied_weight_bytes(exec);
  o2m_exec_free(exec);
  if (s) return s;
  if (r->options->timings) *r->options->timings = r->timings;
  *n_outputs = n;
  *outputs = outs;
  return O2M_OK;
}

/* Verifies and compiles (consuming `module`; stored in the cache under
 * cache_key when not NULL). */
static o2m_status verify_and_compile(run_state *r, MlirModule module, const char *entry, const char *cache_key,
                                     o2m_exec **exec, o2m_diag *diag) {
  double t0 = exec_now_ms();
  enter(r, O2M_PHASE_VERIFY);
  o2m_status s = o2m_exec_verify(module, diag);
  if (s) {
    mlirModuleDestroy(module);
    return s;
  }
  enter(r, O2M_PHASE_COMPILE);
  o2m_exec_options eo = {r->options->opt_level, cache_key ? r->options->cache_dir : NULL, cache_key};
  if ((s = o2m_exec_compile(module, entry, &eo, exec, diag))) return s;
  r->timings.compile_ms = exec_now_ms() - t0;
  r->timings.detail = *o2m_exec_compile_times(*exec);
  r->timings.passes_ms = r->timings.detail.passes_ms;
  r->timings.llvm_ms = r->timings.detail.llvm_ir_ms + r->timings.detail.llvm_codegen_ms;
  return O2M_OK;
}

/* Verifies, compiles (as verify_and_compile) and calls; then frees. */
static o2m_status compile_and_call(run_state *r, MlirModule module, const char *entry, const o2m_graph *graph,
                                   const char *cache_key, int n_inputs, const o2m_tensor *const *inputs,
                                   int *n_outputs, o2m_tensor ***outputs, int expected_outputs, o2m_arena *arena,
                                   o2m_diag *diag) {
  o2m_exec *exec = NULL;
  o2m_status s = verify_and_compile(r, module, entry, cache_key, &exec, diag);
  if (s) return s;
  return call_compiled(r, exec, entry, graph, n_inputs, inputs, n_outputs, outputs, expected_outputs, arena, diag);
}

static const o2m_run_options default_options = {O2M_TARGET_LINALG, 2, NULL, NULL, 1, NULL, NULL, NULL, NULL, 0};

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

/* The tensors of the input values, one after the other (in `arena`). */
static o2m_status flatten_inputs(int n, const o2m_io_value *values, o2m_arena *arena, int *n_flat,
                                 const o2m_tensor ***flat, o2m_diag *diag) {
  int total = 0;
  for (int i = 0; i < n; i++) total += values[i].present ? values[i].count : 0;
  const o2m_tensor **t = o2m_arena_array(arena, (size_t)total + 1, sizeof(o2m_tensor *));
  if (!t) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; values[i].present && j < values[i].count; j++) t[k++] = values[i].tensors[j];
  *n_flat = total;
  *flat = t;
  return O2M_OK;
}

/* options without the cache folder when that folder is not private
 * (another user's, or writable by others: its code would run here), with
 * a warning; else options itself. */
static const o2m_run_options *private_cache(const o2m_run_options *o, o2m_run_options *copy, o2m_diag *diag) {
  char why[4500];
  if (!o->cache_dir || exec_cache_private(o->cache_dir, why, sizeof(why))) return o;
  o2m_warn(diag, "the compiled-code cache is not used: %s", why);
  *copy = *o;
  copy->cache_dir = NULL;
  return copy;
}

/* The code of the model specialised to its inputs: loaded from the cache
 * (its "compile": hashing the model, loading the code; on Linalg the
 * rewrite alone then gives the weights it takes, TOSA's code holds its
 * weights), else emitted for the target, verified and compiled (and stored
 * in the cache). `shape` receives what the emitter makes of sequence and
 * optional outputs; such runs are never cached. t0: when the run began. */
static o2m_status obtain_code(run_state *r, o2m_model *model, module_builder build, double t0, int n_inputs,
                              const o2m_tensor *const *inputs, o2m_io_value *shape, o2m_arena *arena, o2m_exec **out,
                              o2m_diag *diag) {
  const o2m_run_options *o = r->options;
  enter(r, O2M_PHASE_EMIT);
  double t_key = exec_now_ms();
  int code_flags = o2m_rt_blas_available() | o2m_rt_dnnl_available() << 1 | o2m_run_quant_kernels() << 2 |
                   exec_parallel_loops() << 3 | exec_shared_layers() << 5; /* the grain: in the key's text */
  const char *key = run_cache_key(model, o, code_flags, n_inputs, inputs, arena);
  o2m_status s;
  if (key && o2m_exec_load_cached(o->cache_dir, key, entry_name, out) == O2M_OK) {
    r->timings.compile_ms = exec_now_ms() - t_key;
    s = o->target == O2M_TARGET_LINALG ? o2m_linalg_prepare(model, o2m_run_linalg_flags(o->profile), diag) : O2M_OK;
    r->timings.emit_ms = exec_now_ms() - t0 - r->timings.compile_ms;
    r->timings.cache = O2M_CACHE_HIT;
  } else {
    MlirContext mc = o2m_exec_context_create();
    MlirModule module;
    s = build(model, mc, o->profile, o->input_values, shape, &module, diag);
    r->timings.emit_ms = exec_now_ms() - t0;
    if (!s) s = verify_and_compile(r, module, entry_name, key, out, diag);
    if (!s) r->timings.cache = o2m_exec_cache_state(*out);
    mlirContextDestroy(mc);
  }
  r->timings.transform_ms = model->transform_ms;
  if (s && *out) {
    o2m_exec_free(*out);
    *out = NULL;
  }
  return s;
}

/* The target's module builder, and the model specialised as the options
 * say: to the values given (sequences, optionals), to the inputs' shapes,
 * or (generic) to the values of parameter inputs alone. t0: when the run
 * began. */
static o2m_status specialize(run_state *r, o2m_model *model, int n_inputs, const o2m_tensor *const *inputs, double t0,
                             module_builder *build, o2m_diag *diag) {
  const o2m_run_options *o = r->options;
  *r->failed = O2M_PHASE_EMIT;
  o2m_status s = target_builder(o, build, diag);
  if (s) return s;
  enter(r, O2M_PHASE_INFER);
  s = o->input_values ? o2m_specialize_values(model, n_inputs, o->input_values, diag)
      : o->generic    ? o2m_specialize_parameters(model, n_inputs, inputs, diag)
                      : o2m_specialize_inputs(model, n_inputs, inputs, diag);
  r->timings.infer_ms = exec_now_ms() - t0;
  return s;
}

o2m_status o2m_run_model(o2m_model *model, const o2m_run_options *options, int n_inputs,
                         const o2m_tensor *const *inputs, o2m_tensor **outputs, o2m_arena *arena,
                         o2m_run_phase *failed, o2m_diag *diag) {
  o2m_run_phase ignored;
  o2m_run_options uncached;
  run_state r = {options ? options : &default_options, failed ? failed : &ignored};
  const o2m_run_options *o = r.options = private_cache(r.options, &uncached, diag);
  double t0 = exec_now_ms();
  module_builder build = NULL;
  o2m_status s = specialize(&r, model, n_inputs, inputs, t0, &build, diag);
  if (s) return s;
  int n_graph_out = model->graph->n_outputs, n_flat_in = n_inputs;
  const o2m_tensor *const *flat_in = inputs;
  if (o->input_values) {
    const o2m_tensor **f = NULL;
    if ((s = flatten_inputs(n_inputs, o->input_values, arena, &n_flat_in, &f, diag))) return s;
    flat_in = f;
  }
  o2m_io_value *shape = o->output_values;
  int n_out = 0, n_flat_out = n_graph_out;
  o2m_tensor **outs = NULL;
  o2m_exec *exec = NULL;
  s = obtain_code(&r, model, build, t0, n_inputs, inputs, shape, arena, &exec, diag);
  for (int i = 0; !s && shape && i < n_graph_out; i++) n_flat_out += shape[i].count - 1; /* the emitter counted */
  if (!s)
    s = call_compiled(&r, exec, entry_name, model->graph, n_flat_in, flat_in, &n_out, &outs, n_flat_out, arena, diag);
  if (s) return s;
  if (!shape) {
    for (int i = 0; i < n_out; i++) outputs[i] = outs[i];
    label_outputs(model->graph, outputs);
    return O2M_OK;
  }
  const o2m_graph *g = model->graph;
  for (int i = 0, k = 0; i < n_graph_out; i++) {
    o2m_io_value *v = &shape[i];
    v->tensors = outs + k;
    const o2m_type *t = &g->output_values[i]->type;
    if (v->kind != O2M_TYPE_TENSOR) {
      t = t->inner;
      if (t && t->kind == O2M_TYPE_SEQUENCE) t = t->inner;
    }
    for (int j = 0; j < v->count; j++, k++) {
      outs[k]->name = g->outputs[i].name;
      o2m_dtype want = t ? t->elem : O2M_DT_UNDEFINED;
      if (want && exec_dtype_feeds(want, outs[k]->dtype)) outs[k]->dtype = want;
    }
    outputs[i] = v->kind == O2M_TYPE_TENSOR ? v->tensors[0] : NULL;
  }
  return O2M_OK;
}

o2m_status o2m_run_prepare(o2m_model *model, const o2m_run_options *options, int n_inputs,
                           const o2m_tensor *const *inputs, o2m_exec **out, o2m_run_timings *timings,
                           o2m_run_phase *failed, o2m_diag *diag) {
  o2m_run_phase ignored;
  o2m_run_options uncached;
  run_state r = {options ? options : &default_options, failed ? failed : &ignored};
  r.options = private_cache(r.options, &uncached, diag);
  *out = NULL;
  double t0 = exec_now_ms();
  module_builder build = NULL;
  o2m_status s = specialize(&r, model, n_inputs, inputs, t0, &build, diag);
  if (s) return s;
  o2m_arena scratch = {0};
  s = obtain_code(&r, model, build, t0, n_inputs, inputs, NULL, &scratch, out, diag);
  o2m_arena_free(&scratch);
  if (!s && o2m_exec_output_count(*out) != model->graph->n_outputs)
    s = o2m_fail(diag, O2M_ERR_INTERNAL, "@%s returns %d results for %d graph outputs", entry_name,
                 o2m_exec_output_count(*out), model->graph->n_outputs);
  if (s) {
    o2m_exec_free(*out);
    *out = NULL;
    return s;
  }
  r.timings.blas_calls = o2m_exec_blas_calls(*out);
  if (timings) *timings = r.timings;
  return O2M_OK;
}

o2m_status o2m_run_weights(const o2m_exec *exec, const o2m_model *model, o2m_arena *arena, int *n_args,
                           const o2m_tensor ***args, o2m_diag *diag) {
  int n_inputs = o2m_runtime_input_count(model);
  const o2m_tensor **list = o2m_arena_array(arena, (size_t)o2m_exec_input_count(exec) + 1, sizeof(*list));
  if (!list) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  int n = 0;
  const o2m_tensor *const *all = NULL;
  o2m_status s = with_weights(exec, model->graph, n_inputs, list, arena, &n, &all, diag);
  if (s) return s;
  *n_args = n;
  *args = (const o2m_tensor **)all;
  return O2M_OK;
}

void o2m_run_label_outputs(const o2m_model *model, o2m_tensor **outputs) { label_outputs(model->graph, outputs); }

static MlirWalkResult count_tosa_ops(MlirOperation op, void *user) {
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (name.length > 5 && memcmp(name.data, "tosa.", 5) == 0) ++*(int *)user;
  return MlirWalkResultAdvance;
}

o2m_status o2m_run_mlir_file(const char *path, const char *entry, const o2m_run_options *options,
                             int n_inputs, const o2m_tensor *const *inputs, int *n_outputs,
                             o2m_tensor ***outputs, o2m_arena *arena, o2m_run_phase *failed, o2m_diag *diag) {
  o2m_run_phase ignored;
  run_state r = {options ? options : &default_options, failed ? failed : &ignored};
  double t0 = exec_now_ms();
  enter(&r, O2M_PHASE_READ);
  MlirContext mc = o2m_exec_context_create();
  exec_errors errors;
  exec_capture_begin(&errors, mc);
  MlirModule module = mlirModuleCreateParseFromFile(mc, mlirStringRefCreateFromCString(path));
  exec_capture_end(&errors);
  r.timings.emit_ms = exec_now_ms() - t0;
  o2m_status s = O2M_OK;
  if (mlirModuleIsNull(module))
    s = o2m_fail(diag, O2M_ERR_PARSE, "%s: not a valid MLIR file: %s", path,
                 errors.text[0] ? errors.text : "cannot read it");
  /* a TOSA module (import --to tosa) is lowered to Linalg first */
  int tosa_ops = 0;
  if (!s) mlirOperationWalk(mlirModuleGetOperation(module), count_tosa_ops, &tosa_ops, MlirWalkPreOrder);
  if (!s && tosa_ops && (s = o2m_tosa_to_linalg(module, diag))) mlirModuleDestroy(module);
  if (!s)
    s = compile_and_call(&r, module, entry ? entry : entry_name, NULL, NULL, n_inputs, inputs, n_outputs, outputs, -1,
                         arena, diag);
  mlirContextDestroy(mc);
  for (int i = 0; !s && i < *n_outputs; i++) (*outputs)[i]->name = o2m_arena_printf(arena, "result%d", i);
  return s;
}
