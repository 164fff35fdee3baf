/* exec_pipeline.c - from Linalg-on-tensors to the LLVM dialect.
 *
 * Owns: the registration of MLIR's dialects, passes and LLVM translations
 * (once per process / per context), the capture of MLIR diagnostics into
 * messages, verification, and the lowering pipeline: one table of passes,
 * each run on its own so that a failure names the pass that failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <mlir-c/Pass.h>
#include <mlir-c/RegisterEverything.h>

#include "exec/exec_internal.h"
#include "util/diag.h"

/* ---- registration ---------------------------------------------------- */

static pthread_once_t passes_once = PTHREAD_ONCE_INIT;

static void register_passes(void) { mlirRegisterAllPasses(); }

MlirContext o2m_exec_context_create(void) {
  pthread_once(&passes_once, register_passes);
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllLLVMTranslations(ctx);
  return ctx;
}

/* ---- diagnostics ----------------------------------------------------- */

typedef struct text_sink {
  char *buf;
  size_t cap, len;
} text_sink;

static void append(MlirStringRef s, void *user) {
  text_sink *sink = user;
  size_t room = sink->cap - 1 - sink->len;
  size_t n = s.length < room ? s.length : room;
  memcpy(sink->buf + sink->len, s.data, n);
  sink->len += n;
  sink->buf[sink->len] = '\0';
}

static MlirLogicalResult on_diagnostic(MlirDiagnostic d, void *user) {
  enum { MAX_MORE = 15 }; /* a validation pass reports every op it refuses */
  exec_errors *errors = user;
  if (mlirDiagnosticGetSeverity(d) != MlirDiagnosticError) return mlirLogicalResultSuccess();
  if (errors->count++ > MAX_MORE) return mlirLogicalResultSuccess();
  size_t len = strlen(errors->text);
  while (len && (errors->text[len - 1] == '\n' || errors->text[len - 1] == ' ')) errors->text[--len] = '\0';
  text_sink sink = {errors->text, sizeof(errors->text), len};
  if (len) append(mlirStringRefCreateFromCString("\n  "), &sink);
  mlirLocationPrint(mlirDiagnosticGetLocation(d), append, &sink);
  append(mlirStringRefCreateFromCString(": "), &sink);
  mlirDiagnosticPrint(d, append, &sink);
  return mlirLogicalResultSuccess();
}

void exec_capture_begin(exec_errors *errors, MlirContext ctx) {
  errors->text[0] = '\0';
  errors->count = 0;
  errors->ctx = ctx;
  errors->id = mlirContextAttachDiagnosticHandler(ctx, on_diagnostic, errors, NULL);
}

void exec_capture_end(exec_errors *errors) {
  mlirContextDetachDiagnosticHandler(errors->ctx, errors->id);
}

o2m_status o2m_exec_verify(MlirModule module, o2m_diag *diag) {
  exec_errors errors;
  exec_capture_begin(&errors, mlirModuleGetContext(module));
  bool ok = mlirOperationVerify(mlirModuleGetOperation(module));
  exec_capture_end(&errors);
  if (ok) return O2M_OK;
  return o2m_fail(diag, O2M_ERR_INVALID, "the MLIR module does not verify: %s",
                  errors.text[0] ? errors.text : "(no message)");
}

/* ---- the pipeline ---------------------------------------------------- */

/* In order. Bufferization gives every function boundary an identity
 * layout, so results come back contiguous, and lets a loop yield a new
 * buffer each iteration (a carried tensor that grows); the deallocation
 * pipeline frees temporaries and hands every returned buffer to the
 * caller. Math ops on f16/bf16 are computed in f32; those LLVM has no
 * intrinsic for become libm calls (resolved in-process by the JIT). */
/* Each step: the name timings show, and the pipeline text. */
static const struct {
  const char *name, *pipeline;
} lowering[] = {
    {"eliminate-empty-tensors", "eliminate-empty-tensors"},
    {"one-shot-bufferize",
     "one-shot-bufferize{allow-return-allocs-from-loops bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}"},
    /* upstream's buffer-deallocation-pipeline, in two: between them the
     * entry's big dealloc is split (exec_dealloc_split.c) */
    {"buffer-deallocation",
     "expand-realloc{emit-deallocs=false},canonicalize,ownership-based-buffer-deallocation,canonicalize"},
    {"buffer-deallocation-simplification",
     "buffer-deallocation-simplification,bufferization-lower-deallocations,cse,canonicalize"},
    {"convert-bufferization-to-memref", "convert-bufferization-to-memref"},
    /* parallel dims as scf.parallel: exec_parallel.c splits the big ones */
    {"convert-linalg-to-loops", "func.func(convert-linalg-to-parallel-loops)"},
    {"math-extend-to-supported-types", "math-extend-to-supported-types"},
    {"convert-math-to-funcs", "convert-math-to-funcs"},
    {"convert-scf-to-cf", "convert-scf-to-cf"},
    {"expand-strided-metadata", "expand-strided-metadata"},
    {"lower-affine", "lower-affine"},
    {"arith-expand", "arith-expand"},
    {"convert-complex-to-standard", "convert-complex-to-standard"},
    {"convert-math-to-llvm", "convert-math-to-llvm"},
    {"convert-math-to-libm", "convert-math-to-libm"},
    /* buffers from the runtime's allocator (rt_alloc.c), which keeps them
     * for the next call; aligned by it, not by pointer arithmetic here,
     * so that LLVM sees each buffer come from its allocation (exec_units.c
     * says the allocators return fresh memory) */
    {"finalize-memref-to-llvm", "finalize-memref-to-llvm{use-generic-functions=true use-aligned-alloc=true}"},
    /* the other dialects in one conversion (one walk of the module, not six) */
    {"convert-to-llvm", "convert-to-llvm{filter-dialects=arith,index,complex,cf,func,ub}"},
    {"reconcile-unrealized-casts", "reconcile-unrealized-casts"},
};

static void pipeline_error(MlirStringRef s, void *user) { append(s, user); }

static o2m_status run_pass(MlirModule module, const char *pass, o2m_diag *diag) {
  pthread_once(&passes_once, register_passes);
  MlirContext ctx = mlirModuleGetContext(module);
  char text[512], parse_error[512] = "";
  snprintf(text, sizeof(text), "builtin.module(%s)", pass);
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  text_sink sink = {parse_error, sizeof(parse_error), 0};
  MlirLogicalResult parsed = mlirParsePassPipeline(mlirPassManagerGetAsOpPassManager(pm),
                                                   mlirStringRefCreateFromCString(text),
                                                   pipeline_error, &sink);
  if (mlirLogicalResultIsFailure(parsed)) {
    mlirPassManagerDestroy(pm);
    return o2m_fail(diag, O2M_ERR_INTERNAL, "this MLIR has no pass '%s': %s", pass, parse_error);
  }
  exec_errors errors;
  exec_capture_begin(&errors, ctx);
  MlirLogicalResult ran = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  exec_capture_end(&errors);
  mlirPassManagerDestroy(pm);
  if (mlirLogicalResultIsSuccess(ran)) return O2M_OK;
  return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "pass %s failed: %s", pass,
                  errors.text[0] ? errors.text : "(no message)");
}

o2m_status o2m_exec_run_pass(MlirModule module, const char *pass, o2m_diag *diag) {
  return run_pass(module, pass, diag);
}

static void record(o2m_compile_times *times, const char *name, double ms) {
  if (!times) return;
  times->passes_ms += ms;
  if (times->n_passes == O2M_MAX_PASS_TIMES) return;
  times->pass_names[times->n_passes] = name;
  times->pass_ms[times->n_passes++] = ms;
}

o2m_status exec_lower_to_llvm(MlirModule module, const char *entry, int parts, exec_kernels kernels, int *blas_calls,
                              o2m_compile_times *times,
                              o2m_diag *diag) {
  double t_fuse = exec_now_ms();
  o2m_status fused = exec_fuse_elementwise(module, diag);
  record(times, "elementwise fusion", exec_now_ms() - t_fuse);
  if (fused) return fused;
  if (blas_calls) {
    double t0 = exec_now_ms();
    o2m_status s = exec_convs_to_products(module, kernels, diag);
    record(times, "im2col transform", exec_now_ms() - t0);
    if (s) return s;
  }
  for (size_t i = 0; i < sizeof(lowering) / sizeof(lowering[0]); i++) {
    double t0 = exec_now_ms();
    o2m_status s = run_pass(module, lowering[i].pipeline, diag);
    record(times, lowering[i].name, exec_now_ms() - t0);
    if (!s && strcmp(lowering[i].name, "buffer-deallocation") == 0) {
      t0 = exec_now_ms();
      exec_split_entry_deallocs(module, entry);
      record(times, "dealloc split", exec_now_ms() - t0);
    }
    /* on buffers, before the loops: the products tagged for BLAS, the
     * entry's buffers freed after their last use and made at their first,
     * then the entry cut into parts */
    if (!s && strcmp(lowering[i].name, "convert-bufferization-to-memref") == 0) {
      if (blas_calls) {
        t0 = exec_now_ms();
        s = exec_lower_blas_calls(module, kernels, blas_calls, diag);
        record(times, "BLAS calls", exec_now_ms() - t0);
      }
      if (!s) {
        t0 = exec_now_ms();
        exec_free_early(module, entry);
        record(times, "free after last use", exec_now_ms() - t0);
        t0 = exec_now_ms();
        exec_place_near_use(module, entry);
        record(times, "buffers and views near use", exec_now_ms() - t0);
        t0 = exec_now_ms();
        exec_outlined outlined;
        exec_outline_entry(module, entry, parts, EXEC_MIN_OUTLINED_OPS, &outlined);
        record(times, "outlining", exec_now_ms() - t0);
        if (times)
          times->part_calls = outlined.calls, times->part_functions = outlined.functions,
          times->part_results = outlined.passed;
      }
    }
    if (!s && strcmp(lowering[i].name, "convert-linalg-to-loops") == 0 && exec_parallel_loops()) {
      t0 = exec_now_ms();
      int split = exec_outline_parallel(module), across = 0, merged = split > 1 ? exec_share_parallel(module, &across) : 0;
      if (times) times->split_loops = split, times->split_loops_merged = merged, times->split_loops_across = across;
      record(times, "parallel loops", exec_now_ms() - t0);
    }
    if (s) return s;
  }
  double t0 = exec_now_ms();
  o2m_status s = exec_dispatch_parallel(module, diag);
  record(times, "parallel loop helpers", exec_now_ms() - t0);
  return s;
}
