/* run.h - running a whole model (or an MLIR module) on given inputs: what
 * `onnx2mlir run` and `onnx2mlir test` call through the plugin.
 *
 * Owns: the order of the phases (specialise to the input shapes, emit for
 * the target, verify, compile, call) and the reporting of which phase
 * failed, so that `test` can classify a failure. This header does not
 * include MLIR, so that the CLI can use it without linking MLIR; the code
 * lives in the plugin (src/exec/run.c).
 */
#ifndef O2M_RUN_H
#define O2M_RUN_H

#include "ir/ir.h"
#include "onnx/value_file.h"

/* The phases of running a model, in order. */
typedef enum o2m_run_phase {
  O2M_PHASE_READ,    /* reading the model or the data */
  O2M_PHASE_INFER,   /* inference, also for the concrete input shapes */
  O2M_PHASE_EMIT,    /* rewriting to the core op set and emitting MLIR */
  O2M_PHASE_VERIFY,  /* MLIR's verifier */
  O2M_PHASE_COMPILE, /* lowering to LLVM, JIT compilation */
  O2M_PHASE_RUN,     /* the call */
  O2M_PHASE_COMPARE, /* against expected outputs (`test` only) */
  O2M_PHASE_COUNT
} o2m_run_phase;

/* Where compiling to machine code went, in milliseconds. */
enum { O2M_MAX_PASS_TIMES = 32 };
typedef struct o2m_compile_times {
  double passes_ms; /* MLIR's passes down to the LLVM dialect (with the BLAS rewrite), */
  int n_passes;     /* pass by pass, in order: */
  const char *pass_names[O2M_MAX_PASS_TIMES];
  double pass_ms[O2M_MAX_PASS_TIMES];
  double llvm_ir_ms;      /* translating to LLVM IR and LLVM's optimisation */
  double llvm_codegen_ms; /* LLVM's code generation and the JIT's linking */
  int units_at_level[4];  /* how many LLVM units were optimised at O0..O3 */
  int part_calls;         /* parts of @main (its code cut into functions it calls) */
  int part_functions;     /* and the distinct functions among them (repeated layers: one) */
  int part_results;       /* the values parts return for later ops */
  int split_loops;        /* loops split across threads (exec_parallel.c), */
  int split_loops_merged; /* of which copies of another, compiled once (exec_parallel_share.c), */
  int split_loops_across; /* and of those, copies of a loop in another part */
} o2m_compile_times;

/* What the compiled-code cache did in a run. */
enum { O2M_CACHE_OFF = 0, O2M_CACHE_HIT, O2M_CACHE_STORED, O2M_CACHE_STORE_FAILED };

/* Where the time of one run went, in milliseconds of CLOCK_MONOTONIC (for
 * `run --repeat`, `run --timings`, benchmarks). */
typedef struct o2m_run_timings {
  double emit_ms;       /* specialising to the input shapes, rewriting and
                           emitting MLIR (for an MLIR file: parsing it), */
  double infer_ms;      /* of which specialising (inference on the shapes) */
  double transform_ms;  /* and rewriting to the target's op set */
  double compile_ms;    /* MLIR's verifier, lowering to LLVM, JIT compiling */
  double passes_ms;     /* of which MLIR's passes down to the LLVM dialect */
  double llvm_ms;       /* and LLVM's translation, optimisation and code generation */
  o2m_compile_times detail; /* both, finer */
  double run_median_ms; /* one call of the compiled code, copying the */
  double run_min_ms;    /* inputs in and the outputs out included */
  int runs;             /* how many calls were timed (options->repeat) */
  int blas_calls;       /* matrix products the compiled code hands to BLAS */
  size_t copied_weight_bytes; /* weights copied to align them (the rest are read where the model lies) */
  int cache;            /* O2M_CACHE_*: loaded from the cache, stored in it */
  /* With options->profile: ms per call in the code of main-graph node i
   * (its index in the graph's node list; 0 for nodes without code), in
   * the arena of the outputs. */
  const double *node_ms;
  int n_nodes;
} o2m_run_timings;

typedef struct o2m_run_options {
  o2m_target target; /* O2M_TARGET_LINALG; others are not implemented */
  int opt_level;     /* LLVM optimisation level 0..3 */
  /* Called as each phase starts (e.g. to report a crash's phase). */
  void (*on_phase)(void *user, o2m_run_phase phase);
  void *on_phase_user;
  /* Calls of the compiled code (compiled once); below 1 means 1. The
   * outputs are those of the last call. */
  int repeat;
  /* Filled on success when not NULL. */
  o2m_run_timings *timings;
  /* Sequence and optional inputs and outputs. When input_values is set it
   * gives every runtime input (n_inputs entries; `inputs` is then
   * ignored and may be NULL): the model is specialized to the lengths of
   * its sequences and to which optionals are present, each element
   * becoming one argument of the generated function. When output_values
   * is set (the graph's output count of entries) it receives every
   * output; outputs[i] is then the tensor of a tensor output and NULL for
   * the others. Without output_values a model with a non-tensor output is
   * refused. */
  const o2m_io_value *input_values;
  o2m_io_value *output_values;
  /* A folder for compiled code (NULL: none): a run whose model, input
   * shapes, options, tool version and CPU match an earlier one's loads its
   * code instead of compiling (tensor inputs, Linalg and TOSA). */
  const char *cache_dir;
  /* Non-zero: time each node of the main graph (Linalg; not cached). */
  int profile;
  /* o2m_run_prepare only. Non-zero: the code keeps the declared dims of
   * the inputs (dynamic ones dynamic) and is specialised only on the
   * values of inputs that act as parameters (o2m_specialize_parameters);
   * zero: on the inputs' shapes too, as o2m_run_model. */
  int generic;
  /* The threads the kernels of each call may use (the runtime's OpenMP
   * pool: oneDNN's convolutions and products); 0: the default
   * (ONNX2MLIR_THREADS, else the CPUs the process may use). */
  int threads;
} o2m_run_options;

/* The Linalg module's routes into the runtime for the JIT (emit.h's
 * for_jit): the kernels this process found, run --profile's marks, and
 * the quantized kernels unless ONNX2MLIR_NO_QUANT_KERNELS=1 (then
 * quantized ops run as their float decompositions, for comparison:
 * o2m_run_quant_kernels says which). */
int o2m_run_linalg_flags(int profile);
int o2m_run_quant_kernels(void);

/* Specialises `model` to the shapes of `inputs` (one per runtime input,
 * o2m_runtime_input order), emits it for options->target, verifies,
 * compiles and calls it. The model is rewritten in place (load it afresh
 * for another run). On success outputs[0..n) (n = the graph's output
 * count) are tensors in `arena`, named and typed as the graph outputs.
 * On failure *failed says in which phase. */
o2m_status o2m_run_model(o2m_model *model, const o2m_run_options *options,
                         int n_inputs, const o2m_tensor *const *inputs,
                         o2m_tensor **outputs, o2m_arena *arena,
                         o2m_run_phase *failed, o2m_diag *diag);


/* Parses the MLIR file at `path` (text or bytecode, Linalg on tensors as
 * `import --to linalg` writes it), compiles it and calls @`entry` with
 * `inputs`. *n_outputs and *outputs (an array in `arena`) receive the
 * results, named "result<i>". */
o2m_status o2m_run_mlir_file(const char *path, const char *entry,
                             const o2m_run_options *options, int n_inputs,
                             const o2m_tensor *const *inputs, int *n_outputs,
                             o2m_tensor ***outputs, o2m_arena *arena,
                             o2m_run_phase *failed, o2m_diag *diag);

#endif
