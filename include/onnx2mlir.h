/* onnx2mlir.h - the public C API of onnx2mlir.
 *
 * Owns: the opaque handles a user of the library sees, the status codes and
 * the diagnostic record. The library never prints and never exits: every
 * function returns an o2m_status and, on failure, fills the caller's
 * o2m_diag with a message naming file, node, op, domain, opset and reason.
 *
 * Ownership: a handle returned through an out-parameter belongs to the
 * caller and is released with the matching *_free function. Strings passed
 * in are borrowed for the duration of the call only.
 */
#ifndef ONNX2MLIR_H
#define ONNX2MLIR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define O2M_VERSION_STRING "0.1.0"

typedef enum o2m_status {
  O2M_OK = 0,
  O2M_ERR_IO,          /* a file could not be opened, mapped or written */
  O2M_ERR_PARSE,       /* the protobuf bytes are malformed */
  O2M_ERR_INVALID,     /* well-formed bytes, but the model breaks ONNX rules */
  O2M_ERR_UNSUPPORTED, /* valid ONNX this version does not handle yet */
  O2M_ERR_USAGE,       /* the caller passed bad arguments */
  O2M_ERR_NOMEM,       /* an allocation failed */
  O2M_ERR_INTERNAL     /* a bug in onnx2mlir */
} o2m_status;

/* Called for each warning (e.g. a value_info type that contradicts the
 * inferred one). The message is only valid during the call. */
typedef void (*o2m_warning_fn)(void *user, const char *message);

/* A diagnostic record filled by the library. Zero-initialise it; set
 * `warn` to receive warnings (NULL drops them). */
typedef struct o2m_diag {
  o2m_status status;
  char message[2048];
  o2m_warning_fn warn;
  void *warn_user;
} o2m_diag;

/* A short English name of a status ("parse error", ...); static storage. */
const char *o2m_status_name(o2m_status status);

/* The library's version, O2M_VERSION_STRING of its build. */
const char *o2m_version(void);

/* Frees memory the library returned (o2m_model_info_text,
 * o2m_model_import_to_buffer). NULL is ignored. */
void o2m_free(void *p);

/* ---- Models ------------------------------------------------------------ */

typedef struct o2m_model o2m_model; /* a loaded, linked, type-inferred model */

typedef struct o2m_load_options {
  const char *data_dir; /* where external data lives; NULL: the model's dir */
  int skip_inference;   /* non-zero: read and link only */
} o2m_load_options;

/* Maps the file at `path`, decodes it, inlines model-local functions,
 * checks the graph and infers every value's type. `options` may be NULL.
 * On success *out owns the mapping and everything decoded from it. */
o2m_status o2m_model_load(const char *path, const o2m_load_options *options,
                          o2m_model **out, o2m_diag *diag);

/* Same, from bytes in memory (borrowed: they must outlive the model).
 * `base_dir` resolves external data; NULL refuses external data. */
o2m_status o2m_model_load_bytes(const void *bytes, size_t size,
                                const char *name_for_messages,
                                const char *base_dir,
                                const o2m_load_options *options,
                                o2m_model **out, o2m_diag *diag);

void o2m_model_free(o2m_model *model);

enum {
  O2M_INFO_TYPES = 1 /* also list every value with its inferred type */
};

/* Writes the human-readable summary that `onnx2mlir info` prints: IR
 * version, opsets, producer, inputs/outputs with types, node count, op
 * histogram, parameters, per-target support. Never reads weight bytes. */
o2m_status o2m_model_write_info(const o2m_model *model, unsigned flags,
                                FILE *out, o2m_diag *diag);

/* The same summary as a NUL-terminated string in *out (free with o2m_free). */
o2m_status o2m_model_info_text(const o2m_model *model, unsigned flags, char **out, o2m_diag *diag);

/* ---- Inputs and outputs -------------------------------------------------- */

/* A graph input or output, typed as the model declares it and inference
 * refines it. Every pointer lives as long as the model. */
typedef struct o2m_value_desc {
  const char *name;
  const char *type;     /* as `info` writes it: "float[N,3]", "seq(int64[?])", ... */
  int is_tensor;        /* 0: a sequence, optional, map or an unknown type */
  int dtype;            /* tensors: ONNX's TensorProto.DataType (1 float, 7 int64,
                           9 bool, ...); 0 when unknown */
  int rank;             /* tensors: -1 when unranked */
  const int64_t *dims;  /* `rank` sizes, -1 for a size not known */
  const char *const *dim_names; /* `rank` entries: the dim's name in the
                                   model (dim_param), or NULL */
} o2m_value_desc;

/* The inputs a caller feeds (graph inputs without an initializer), and
 * the graph outputs; o2m_model_input/output describe the i-th one. */
int o2m_model_input_count(const o2m_model *model);
int o2m_model_output_count(const o2m_model *model);
o2m_status o2m_model_input(o2m_model *model, int index, o2m_value_desc *out, o2m_diag *diag);
o2m_status o2m_model_output(o2m_model *model, int index, o2m_value_desc *out, o2m_diag *diag);

/* ---- Import to MLIR ---------------------------------------------------- */

typedef enum o2m_target {
  O2M_TARGET_TORCH = 0, /* torch-mlir's ONNX import form */
  O2M_TARGET_ONNX,
  O2M_TARGET_LINALG,
  O2M_TARGET_TOSA,
  O2M_TARGET_STABLEHLO
} o2m_target;

/* Parses "torch", "linalg", ...; returns -1 for an unknown name. */
int o2m_target_from_name(const char *name);
const char *o2m_target_name(o2m_target target);

/* Progress callback: `done` of `total` nodes emitted. */
typedef void (*o2m_progress_fn)(void *user, size_t done, size_t total);

typedef struct o2m_import_options {
  o2m_target target;
  int bytecode; /* non-zero: MLIR bytecode instead of text */
  o2m_progress_fn progress;
  void *progress_user;
  /* tosa: the TOSA specification version the module declares and is
   * validated against, "1.1.draft" (NULL: the default; int64 tensors and
   * dynamic dims) or "1.0". */
  const char *tosa_spec;
} o2m_import_options;

/* Emits the model as MLIR and writes it to `out`. The torch and onnx
 * forms emit the ops as written; the lowering targets (linalg, tosa,
 * stablehlo) first rewrite the model in place to the core op set
 * (normalization, decomposition), so emit those forms last or from a
 * fresh load. */
o2m_status o2m_model_import(o2m_model *model,
                            const o2m_import_options *options, FILE *out,
                            o2m_diag *diag);

/* The same into memory: *out (free with o2m_free) holds *size bytes of
 * text or bytecode, followed by a NUL. */
o2m_status o2m_model_import_to_buffer(o2m_model *model, const o2m_import_options *options,
                                      void **out, size_t *size, o2m_diag *diag);

/* ---- Compiling to a library -------------------------------------------- */

typedef struct o2m_compile_options {
  /* The file to write: a shared library (NAME.so) or a relocatable object
   * (NAME.o) for this machine's CPU (or `cpu`'s), exporting only NAME_run,
   * NAME_free_outputs, NAME_input_name and NAME_output_name. */
  const char *output;
  const char *header; /* where to write the C header declaring them (NULL: none) */
  const char *name;   /* NAME: a C identifier (NULL: "model") */
  int opt_level;      /* LLVM's level: 1..3, 0 for the default (2), -1 for none */
  const char *cc;     /* the C compiler that builds the wrapper and links
                         (NULL: $CC, else "cc"; a .o also needs objcopy) */
  /* NULL: the weights go into the library. Else the file to write them to
   * instead (a header, then the blob); the library maps it read-only at
   * its first call, from this path made absolute, or from the path given
   * to NAME_load_weights before, and refuses a file of other weights. */
  const char *weights;
  /* The runtime the code calls (kernels through OpenBLAS and oneDNN when
   * present, loops otherwise; TopK, NonMaxSuppression, copies): 0 links
   * it into the library (one self-contained file, the default); 1 links
   * libonnx2mlir_rt.so.0, found next to the library ($ORIGIN), then where
   * it was at compile time, then on the system's path (a .o then needs
   * -lonnx2mlir_rt when linked). */
  int shared_runtime;
  /* The CPU the code is for: NULL or "native" this machine's, with its
   * features (as -march=native); else a name the library deploys to:
   * x86-64, x86-64-v2, x86-64-v3 (AVX2), x86-64-v4 (AVX-512), haswell,
   * skylake-avx512, cascadelake, icelake-server, sapphirerapids,
   * graniterapids, znver2..znver5; on aarch64 generic, neoverse-n1, -n2,
   * -v1, -v2, apple-m1. The runtime's kernels choose their code as they
   * load, whatever this says. */
  const char *cpu;
} o2m_compile_options;

/* Compiles the model's main graph, dynamic dims kept dynamic, weights
 * inside the library (or in options->weights). Rewrites the model in place, as the lowering
 * imports do. On failure nothing is left at options->output or
 * options->header; a model with nodes the Linalg target cannot lower is
 * refused with the list of them, as import refuses it. */
o2m_status o2m_model_compile(o2m_model *model, const o2m_compile_options *options, o2m_diag *diag);

/* ---- Running ------------------------------------------------------------- */

/* A dense tensor given to or returned by o2m_model_run, in ONNX's raw
 * layout: row-major, little-endian, bool one byte each. */
typedef struct o2m_tensor_data {
  const char *name;    /* inputs: NULL, or the input's name (checked) */
  int dtype;           /* ONNX's TensorProto.DataType */
  int rank;
  const int64_t *dims; /* `rank` sizes */
  const void *data;    /* nbytes bytes (NULL when empty) */
  size_t nbytes;
} o2m_tensor_data;

typedef struct o2m_run_config {
  o2m_target target; /* O2M_TARGET_LINALG or O2M_TARGET_TOSA */
  int opt_level;     /* LLVM's optimisation level 0..3 */
} o2m_run_config;

typedef struct o2m_results o2m_results; /* the outputs of one run */

/* Runs the model on `inputs` (o2m_model_input_count of them, in input
 * order): specialises it to their shapes, lowers it for the target,
 * compiles it and calls it. `config` NULL: Linalg, -O2. The model is
 * rewritten in place, so load it again for another run or import. Models
 * with sequence or optional inputs or outputs are refused here (the CLI's
 * `run` takes them). On success *out holds the graph's outputs. */
o2m_status o2m_model_run(o2m_model *model, const o2m_run_config *config, int n_inputs,
                         const o2m_tensor_data *inputs, o2m_results **out, o2m_diag *diag);
int o2m_results_count(const o2m_results *results);
/* Output `index` (named as the graph output); NULL when out of range.
 * Valid until o2m_results_free. */
const o2m_tensor_data *o2m_results_get(const o2m_results *results, int index);
void o2m_results_free(o2m_results *results);

/* ---- Sessions: compile once, call many times ---------------------------- */

/* A session holds one model and the code compiled for it, and runs it on
 * tensors any number of times, from any number of threads at once.
 *
 * Variants. The code is compiled when a call first needs it, and kept. A
 * variant is keyed by the values of the inputs that act as parameters (an
 * input read only as a shape, axes, pads, sizes, K: its value is folded
 * into the code) and, per the `shapes` option, by the input sizes. By
 * default (O2M_SHAPES_AUTO) the first call's sizes get code specialised to
 * them (the code `onnx2mlir run` makes); the first call with other sizes
 * compiles the generic variant, whose dynamic dims stay dynamic (as
 * `compile` keeps them), and that variant serves every later size. So a
 * generation loop compiles twice (prefill, then its first decode step),
 * never once per token. A model whose dynamic dims the generic code cannot
 * keep (the emitter refuses them) falls back to a variant per size.
 * Variants are kept up to `max_variants` (the least recently used one is
 * dropped first; a call in flight keeps its own alive) and in the disk
 * cache.
 *
 * Threads. Every o2m_session_* function may be called from any number of
 * threads at once on one session, except o2m_session_free: call it once,
 * after the last call on the session returned; a later call with the
 * freed handle returns O2M_ERR_USAGE. Calls on variants that exist run
 * concurrently; a call that needs a new variant compiles it while calls on
 * existing variants go on. Each call runs on its calling thread.
 *
 * Diagnostics. Each o2m_session_* call starts by clearing the diag's
 * status and message, so one o2m_diag may serve many calls (one per
 * thread). */
typedef struct o2m_session o2m_session;

typedef enum o2m_session_shapes {
  O2M_SHAPES_AUTO = 0,   /* the first sizes specialised, then one generic variant */
  O2M_SHAPES_GENERIC,    /* one generic variant from the first call on */
  O2M_SHAPES_SPECIALIZE  /* a variant per distinct set of input sizes */
} o2m_session_shapes;

typedef struct o2m_session_options {
  /* O2M_TARGET_LINALG or O2M_TARGET_TOSA; O2M_TARGET_TORCH (0, what a
   * zero-initialised struct holds) means Linalg. */
  o2m_target target;
  int opt_level;          /* LLVM's level 1..3; 0: 2 */
  int threads;            /* 0 or 1: each call on its calling thread (the only mode today) */
  int no_cache;           /* non-zero: never read or write the disk cache */
  const char *cache_dir;  /* NULL: $XDG_CACHE_HOME/onnx2mlir, else ~/.cache/onnx2mlir */
  int max_variants;       /* 0: 8 */
  o2m_session_shapes shapes;
  const char *data_dir;   /* external data (NULL: the model's folder) */
} o2m_session_options;

/* Loads the model at `path` (options may be NULL) and checks that the
 * target can lower every node (else O2M_ERR_UNSUPPORTED listing them all).
 * A model whose inputs all have fixed sizes and none acts as a parameter
 * is compiled (or loaded from the disk cache) here; others at the first
 * call that needs a variant. */
o2m_status o2m_session_create(const char *path, const o2m_session_options *options, o2m_session **out,
                              o2m_diag *diag);
/* The same from a model in memory; the bytes are copied. External data is
 * refused, and such a session does not use the disk cache. */
o2m_status o2m_session_create_from_bytes(const void *bytes, size_t size, const char *name_for_messages,
                                         const o2m_session_options *options, o2m_session **out, o2m_diag *diag);
/* Frees the session and its code. NULL is ignored. */
void o2m_session_free(o2m_session *session);

/* The inputs the caller feeds and the graph's outputs, as the model
 * declares them (pointers valid until o2m_session_free). */
int o2m_session_input_count(const o2m_session *session);
int o2m_session_output_count(const o2m_session *session);
o2m_status o2m_session_input(const o2m_session *session, int index, o2m_value_desc *out, o2m_diag *diag);
o2m_status o2m_session_output(const o2m_session *session, int index, o2m_value_desc *out, o2m_diag *diag);

/* Runs the model on `inputs` (o2m_session_input_count of them, in input
 * order; a non-NULL `name` must be that input's). Each is checked against
 * the declared input: dtype, rank, fixed sizes, equal sizes for dims that
 * share a name, nbytes, and data present when nbytes > 0. On success *out
 * owns the outputs (o2m_results_*). Inputs are read during the call only. */
o2m_status o2m_session_run(o2m_session *session, int n_inputs, const o2m_tensor_data *inputs, o2m_results **out,
                           o2m_diag *diag);

/* An output written into memory the caller owns: set `data` and
 * `capacity`; the call fills the rest. */
enum { O2M_MAX_RANK = 16 };
typedef struct o2m_output_buffer {
  void *data;
  size_t capacity;
  int dtype, rank;            /* filled */
  int64_t dims[O2M_MAX_RANK]; /* filled */
  size_t nbytes;              /* filled: the bytes the output takes */
} o2m_output_buffer;

/* o2m_session_run with the outputs copied into `outputs` (n_outputs =
 * o2m_session_output_count). An output larger than its capacity, or of a
 * rank above O2M_MAX_RANK, fails the call with O2M_ERR_USAGE: every
 * output's nbytes and dims are filled, no data is written. */
o2m_status o2m_session_run_into(o2m_session *session, int n_inputs, const o2m_tensor_data *inputs, int n_outputs,
                                o2m_output_buffer *outputs, o2m_diag *diag);

/* What a session did so far. */
typedef struct o2m_session_stats {
  int64_t calls;       /* calls that ran the model */
  int64_t compiles;    /* variants compiled */
  int64_t cache_loads; /* variants loaded from the disk cache instead */
  int64_t evictions;   /* variants dropped past max_variants */
  int variants;        /* variants held now */
  int generic;         /* 1 when the generic variant is among them */
  double compile_ms;   /* time spent making variants (compiling or loading) */
  /* Why the generic variant could not be built (the target needs static
   * sizes for some node: TOSA's lowering often does), so that each size
   * gets a variant of its own; NULL when it was not refused. Valid until
   * o2m_session_free. */
  const char *generic_refused;
} o2m_session_stats;
o2m_status o2m_session_get_stats(const o2m_session *session, o2m_session_stats *out, o2m_diag *diag);

#ifdef __cplusplus
}
#endif
#endif /* ONNX2MLIR_H */
