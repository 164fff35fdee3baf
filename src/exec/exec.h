/* exec.h - running emitted MLIR: the lowering pipeline to LLVM, the JIT
 * (upstream MLIR's ExecutionEngine) and the marshalling of tensors to and
 * from memref descriptors of any rank and dtype.
 *
 * Owns: turning a module of Linalg-on-tensors (+ tensor/arith/math/scf)
 * whose entry function takes and returns ranked tensors into machine code,
 * and calling it. Knows nothing about ONNX graphs: callers pass the entry
 * function's name and tensors in ONNX raw layout (o2m_tensor, ir.h).
 *
 * Element types: f32 f64 f16 bf16, the f8/f4 types ONNX has, i1 (bool,
 * one byte each), integers of 2..64 bits (sub-byte ones unpacked to a byte
 * each for the generated code and packed again for ONNX), complex<f32|f64>.
 * Strings are refused. Integer results come back as signed ONNX dtypes
 * (MLIR integers are signless); a caller that knows better relabels them
 * (same storage).
 */
#ifndef O2M_EXEC_H
#define O2M_EXEC_H

#include <mlir-c/IR.h>

#include "exec/run.h"
#include "ir/ir.h"

typedef struct o2m_exec o2m_exec;

/* A context for modules that will be run: every upstream dialect and
 * LLVM translation registered, no multithreading. The caller owns it
 * (mlirContextDestroy); it may be destroyed once o2m_exec_compile
 * returned, the compiled code does not refer to it. */
MlirContext o2m_exec_context_create(void);

/* Runs MLIR's verifier on `module`; on failure the message holds MLIR's
 * first error with its location (then up to 15 more, a line each). */
o2m_status o2m_exec_verify(MlirModule module, o2m_diag *diag);

/* Runs one pass (or pipeline) given in MLIR's textual form, anchored on
 * the module ("tosa-validate", "func.func(canonicalize)", ...); a failure
 * names the pass and MLIR's errors (the first, then up to 15 more). */
o2m_status o2m_exec_run_pass(MlirModule module, const char *pass, o2m_diag *diag);

typedef struct o2m_exec_options {
  int opt_level; /* LLVM optimisation level 0..3 (default 2) */
  /* With both: the compiled code is stored as the entry of `cache_key`
   * in the folder `cache_dir` (exec_cache.c), for o2m_exec_load_cached. */
  const char *cache_dir, *cache_key;
} o2m_exec_options;

/* Lowers `module` to the LLVM dialect and JIT compiles it; the module is
 * destroyed in every case. `entry` names the func.func to call (given the
 * `llvm.emit_c_interface` unit attribute here when it lacks it); its
 * arguments and results must be ranked tensors. `options` may be NULL.
 * A pass that fails is named in the message with MLIR's first error. */
o2m_status o2m_exec_compile(MlirModule module, const char *entry,
                            const o2m_exec_options *options, o2m_exec **out,
                            o2m_diag *diag);

/* The compiled code of `key` stored in `dir` by an earlier compile, ready
 * to call @entry: O2M_OK and *out, else a status (no entry, another key's,
 * a damaged one) and no diagnostic: the caller compiles instead. */
o2m_status o2m_exec_load_cached(const char *dir, const char *key, const char *entry, o2m_exec **out);
/* What the cache did for `exec`: O2M_CACHE_* (run.h). */
int o2m_exec_cache_state(const o2m_exec *exec);
/* The host as the cache keys it: LLVM's triple, CPU name and features. */
const char *o2m_exec_host(void);

/* The number of results of the entry function. */
int o2m_exec_output_count(const o2m_exec *exec);
/* How many matrix products the compiled code hands to BLAS (exec_blas.c). */
int o2m_exec_blas_calls(const o2m_exec *exec);
/* The bytes of weights its calls so far copied because they did not lie
 * aligned to their element (kept with it, for later calls). */
size_t o2m_exec_copied_weight_bytes(o2m_exec *exec);
/* Where compiling went (run.h). */
const o2m_compile_times *o2m_exec_compile_times(const o2m_exec *exec);
/* The entry's argument count, and the initializer argument `index`
 * carries (emit.h, O2M_WEIGHT_ARG_ATTR), or NULL for a runtime input. */
int o2m_exec_input_count(const o2m_exec *exec);
const char *o2m_exec_weight_name(const o2m_exec *exec, int index);

/* Calls the entry function. inputs[i] must match the function's i-th
 * argument (dtype and rank; the sizes of dynamic dims may be anything; an
 * unsigned integer tensor may feed a signless argument of its width).
 * Inputs are copied, never written. Outputs are allocated in `arena`
 * with the result dtypes/ranks of the function and the dims the code
 * produced; the buffers the generated code allocated for them are freed. */
o2m_status o2m_exec_call(o2m_exec *exec, int n_inputs,
                         const o2m_tensor *const *inputs, int n_outputs,
                         o2m_tensor **outputs, o2m_arena *arena,
                         o2m_diag *diag);

void o2m_exec_free(o2m_exec *exec);

/* ---- compiled once, called many times (sessions) ----------------------- */

/* What o2m_run_model does before its call, for tensor inputs: specialises
 * `model` (to the inputs' shapes, or with options->generic only to the
 * values of parameter inputs), loads the code from options->cache_dir or
 * emits, verifies and compiles it, and gives it in *out, callable any
 * number of times (from several threads at once) with the inputs
 * followed by o2m_run_weights' tensors. `model` is rewritten in place and
 * must outlive *out (the weights are read from it). `inputs` are read for
 * their shapes and the values of parameter inputs only. */
o2m_status o2m_run_prepare(o2m_model *model, const o2m_run_options *options, int n_inputs,
                           const o2m_tensor *const *inputs, o2m_exec **out, o2m_run_timings *timings,
                           o2m_run_phase *failed, o2m_diag *diag);
/* The argument list of a prepared exec in `arena`: *n_args entries, the
 * first o2m_runtime_input_count(model) NULL (the caller puts the inputs
 * there), then the model's weights the entry takes. */
o2m_status o2m_run_weights(const o2m_exec *exec, const o2m_model *model, o2m_arena *arena, int *n_args,
                           const o2m_tensor ***args, o2m_diag *diag);
/* Names the outputs of a call as the graph's outputs and gives them the
 * graph's dtypes where the code's signless integers could not tell. */
void o2m_run_label_outputs(const o2m_model *model, o2m_tensor **outputs);

#endif
