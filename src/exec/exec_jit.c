/* exec_jit.c - o2m_exec_compile / o2m_exec_call: the JIT and the calling
 * convention.
 *
 * Owns: choosing how the code is compiled: on a machine with several
 * cores, @entry is cut into parts (exec_outline.c) and, when it was, the
 * parts and the rest compile as units on one thread per core
 * (exec_units.c) into objects an ORC LLJIT links; else MLIR's
 * ExecutionEngine compiles the module whole. Both find MLIR's C runner
 * utilities (loaded from the directory of the libMLIR.so in use) for any
 * runtime function the lowering calls that the runtime's own list,
 * o2m_rt_symbols (src/runtime), does not define. ONNX2MLIR_COMPILE_THREADS=N
 * limits the threads (1: the ExecutionEngine). Also: storing the compiled
 * code in the cache (exec_cache.c) or taking it from there, and the call
 * through the packed wrapper of
 * `_mlir_ciface_<entry>`. That function takes
 * a pointer to the result descriptors first (one descriptor, or a struct of
 * them back to back), then one pointer per argument descriptor.
 *
 * Memory: results are copied into the caller's arena and the buffers the
 * generated code returned are freed (the deallocation pipeline makes the
 * caller own every returned buffer; a buffer is freed once even when
 * several results view it, and never when it is an input or a constant).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/ExecutionEngine.h>

#include "emit/emit.h"
#include "exec/exec_internal.h"
#include "util/diag.h"


/* An argument that carries a weight (emit.h, O2M_WEIGHT_ARG_ATTR): an aligned copy of data not aligned to its
 * element (made at the first call, kept) with the data it copies. */
typedef struct weight_arg {
  void *copy;
  const void *source;
  size_t bytes; /* the copy's */
} weight_arg;

struct o2m_exec {
  MlirExecutionEngine engine;
  void *cached_jit; /* loaded from the cache instead (exec_cache.c) */
  int cache;        /* O2M_CACHE_* */
  packed_fn call;
  char *entry;
  o2m_arena arena; /* the signature, the branch failures */
  exec_branch_failures failures;
  exec_signature sig;
  int blas_calls; /* matrix products through BLAS */
  o2m_compile_times times;
  weight_arg *weights; /* sig.n_args entries */
  /* Guards `weights`: calls may run on several threads at once (a
   * session's), and the first makes the aligned copies. */
  pthread_mutex_t weights_lock;
};

/* What memref.get_global leaves as the allocated pointer of a constant. */
#define CONSTANT_ALLOCATED ((void *)(uintptr_t)0xdeadbeef)

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

/* ---- the engine -------------------------------------------------------- */

typedef struct lib_search {
  char path[4096];
} lib_search;

/* Finds libmlir_c_runner_utils.so next to the loaded libMLIR.so, with
 * libMLIR's version suffix (the runtime package has only that name; the
 * bare .so link comes with the -dev package). */
static int find_runner_utils(struct dl_phdr_info *info, size_t size, void *user) {
  (void)size;
  lib_search *s = user;
  const char *name = info->dlpi_name, *base = strrchr(name, '/');
  if (!base || strncmp(base, "/libMLIR.so", 11) != 0) return 0;
  snprintf(s->path, sizeof(s->path), "%.*s/libmlir_c_runner_utils.so%s", (int)(base - name), name, base + 11);
  if (access(s->path, F_OK) != 0)
    snprintf(s->path, sizeof(s->path), "%.*s/libmlir_c_runner_utils.so", (int)(base - name), name);
  return 1;
}

static o2m_status create_engine(o2m_exec *e, MlirModule module, int opt_level, int for_cache, o2m_diag *diag) {
  lib_search libs = {""};
  dl_iterate_phdr(find_runner_utils, &libs);
  MlirStringRef lib = str(libs.path);
  exec_errors errors;
  exec_capture_begin(&errors, mlirModuleGetContext(module));
  double t0 = exec_now_ms();
  /* creating the engine translates to LLVM IR and optimises; the first
   * look-up generates the code and links it */
  e->engine = mlirExecutionEngineCreate(module, opt_level, libs.path[0] ? 1 : 0, &lib, for_cache, for_cache);
  exec_capture_end(&errors);
  double t1 = exec_now_ms();
  e->times.llvm_ir_ms = t1 - t0;
  if (mlirExecutionEngineIsNull(e->engine))
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "JIT compilation of @%s failed: %s", e->entry,
                    errors.text[0] ? errors.text : "the LLVM IR translation or code generation failed");
  o2m_rt_symbol symbols[O2M_RT_MAX_SYMBOLS];
  for (int i = 0, n = o2m_rt_symbols(symbols); i < n; i++)
    mlirExecutionEngineRegisterSymbol(e->engine, str(symbols[i].name), symbols[i].address);
  mlirExecutionEngineInitialize(e->engine);
  char name[512];
  snprintf(name, sizeof(name), "_mlir_ciface_%s", e->entry);
  e->call = (packed_fn)mlirExecutionEngineLookupPacked(e->engine, str(name));
  e->times.llvm_codegen_ms = exec_now_ms() - t1;
  if (!e->call)
    return o2m_fail(diag, O2M_ERR_INTERNAL, "the JIT has no %s (symbols unresolved?)", name);
  return O2M_OK;
}

/* The units' objects into an ORC LLJIT, with MLIR's C runner utilities
 * loaded into the process for what the executor does not define. */
static o2m_status load_units(o2m_exec *e, const exec_blob *objects, int n_objects, o2m_diag *diag) {
  lib_search libs = {""};
  dl_iterate_phdr(find_runner_utils, &libs);
  if (libs.path[0]) dlopen(libs.path, RTLD_NOW | RTLD_GLOBAL); /* kept loaded */
  double t0 = exec_now_ms();
  int bad = exec_jit_load(objects, n_objects, e->entry, &e->cached_jit, &e->call);
  e->times.llvm_codegen_ms += exec_now_ms() - t0;
  return bad ? o2m_fail(diag, O2M_ERR_UNSUPPORTED, "the JIT could not link the %d compiled units of @%s", n_objects,
                        e->entry)
             : O2M_OK;
}

static o2m_exec *exec_new(void) {
  o2m_exec *e = calloc(1, sizeof(*e));
  if (e) pthread_mutex_init(&e->weights_lock, NULL);
  return e;
}

o2m_status o2m_exec_compile(MlirModule module, const char *entry, const o2m_exec_options *options,
                            o2m_exec **out, o2m_diag *diag) {
  *out = NULL;
  o2m_exec *e = exec_new();
  if (!e || !(e->entry = strdup(entry ? entry : ""))) {
    free(e);
    mlirModuleDestroy(module);
    return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  }
  int opt_level = options && options->opt_level >= 0 && options->opt_level <= 3 ? options->opt_level : 2;
  o2m_status s = exec_read_signature(module, e->entry, &e->arena, &e->sig, diag);
  if (!s && !(e->weights = o2m_arena_array(&e->arena, (size_t)e->sig.n_args + 1, sizeof(*e->weights))))
    s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  if (!s) s = exec_read_branch_failures(module, &e->arena, &e->failures, diag);
  int cores = exec_compile_threads();
  if (!s) s = exec_lower_to_llvm(module, e->entry, exec_parts_for(cores), EXEC_KERNELS_FOUND, &e->blas_calls, &e->times, diag);
  const char *dir = options ? options->cache_dir : NULL, *key = options ? options->cache_key : NULL;
  exec_blob objects[EXEC_MAX_UNITS];
  int n_objects = 0;
  /* parts (made for the cores, or for repeated layers): a unit each, each
   * at its own opt level; else one unit through the ExecutionEngine */
  if (!s && exec_count_parts(module, e->entry) > 1) {
    s = exec_compile_units(module, e->entry, NULL, opt_level, cores, objects, &n_objects, &e->times, diag);
    if (!s) s = load_units(e, objects, n_objects, diag);
  } else if (!s) {
    s = create_engine(e, module, opt_level, dir && key, diag);
    if (!s && dir && key) n_objects = exec_engine_object(e->engine, dir, &objects[0]) == 0;
  }
  if (!s && dir && key)
    e->cache = n_objects && exec_cache_store(dir, key, objects, n_objects, &e->sig, &e->failures, e->blas_calls) == 0
                   ? O2M_CACHE_STORED
                   : O2M_CACHE_STORE_FAILED;
  for (int i = 0; i < n_objects; i++) free(objects[i].data);
  mlirModuleDestroy(module);
  if (s) {
    o2m_exec_free(e);
    return s;
  }
  *out = e;
  return O2M_OK;
}

int o2m_exec_output_count(const o2m_exec *exec) { return exec->sig.n_results; }

int o2m_exec_blas_calls(const o2m_exec *exec) { return exec->blas_calls; }

size_t o2m_exec_copied_weight_bytes(o2m_exec *exec) {
  size_t bytes = 0;
  pthread_mutex_lock(&exec->weights_lock);
  for (int i = 0; exec->weights && i < exec->sig.n_args; i++)
    if (exec->weights[i].copy) bytes += exec->weights[i].bytes;
  pthread_mutex_unlock(&exec->weights_lock);
  return bytes;
}

const o2m_compile_times *o2m_exec_compile_times(const o2m_exec *exec) { return &exec->times; }

int o2m_exec_input_count(const o2m_exec *exec) { return exec->sig.n_args; }

const char *o2m_exec_weight_name(const o2m_exec *exec, int index) {
  return index >= 0 && index < exec->sig.n_args ? exec->sig.weight_names[index] : NULL;
}

o2m_status o2m_exec_load_cached(const char *dir, const char *key, const char *entry, o2m_exec **out) {
  *out = NULL;
  o2m_exec *e = exec_new();
  if (!e || !(e->entry = strdup(entry))) {
    free(e);
    return O2M_ERR_NOMEM;
  }
  if (exec_cache_load(dir, key, entry, &e->arena, &e->sig, &e->failures, &e->blas_calls, &e->cached_jit, &e->call) ||
      !(e->weights = o2m_arena_array(&e->arena, (size_t)e->sig.n_args + 1, sizeof(*e->weights)))) {
    o2m_exec_free(e);
    return O2M_ERR_IO;
  }
  e->cache = O2M_CACHE_HIT;
  *out = e;
  return O2M_OK;
}

int o2m_exec_cache_state(const o2m_exec *exec) { return exec->cache; }

void o2m_exec_free(o2m_exec *exec) {
  if (!exec) return;
  o2m_rt_release(exec);
  if (!mlirExecutionEngineIsNull(exec->engine)) mlirExecutionEngineDestroy(exec->engine);
  exec_cache_release(exec->cached_jit);
  for (int i = 0; exec->weights && i < exec->sig.n_args; i++) free(exec->weights[i].copy);
  o2m_arena_free(&exec->arena);
  pthread_mutex_destroy(&exec->weights_lock);
  free(exec->entry);
  free(exec);
}

/* ---- the call ------------------------------------------------------------ */

static o2m_status check_input(const o2m_exec *e, int i, const o2m_tensor *t, o2m_diag *diag) {
  const exec_arg *a = &e->sig.args[i];
  const char *name = t && t->name && t->name[0] ? t->name : "";
  if (!t) return o2m_fail(diag, O2M_ERR_USAGE, "@%s: input %d is missing", e->entry, i);
  int ok = exec_dtype_feeds(a->dtype, t->dtype) && a->rank == t->rank;
  for (int k = 0; ok && k < a->rank; k++)
    if (a->dims[k] >= 0 && a->dims[k] != t->dims[k]) ok = 0;
  if (ok && t->count && !t->data)
    return o2m_fail(diag, O2M_ERR_INVALID, "@%s: input %d '%s' has no data", e->entry, i, name);
  if (ok) return O2M_OK;
  char want[256] = "", got[256] = "";
  for (int k = 0; k < a->rank; k++)
    if (a->dims[k] < 0)
      snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s?", k ? "," : "");
    else
      snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%lld", k ? "," : "", (long long)a->dims[k]);
  for (int k = 0; k < t->rank; k++)
    snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%lld", k ? "," : "", (long long)t->dims[k]);
  return o2m_fail(diag, O2M_ERR_INVALID, "@%s: input %d '%s' must be %s [%s] but is %s [%s]", e->entry, i,
                  name, o2m_dtype_name(a->dtype), want, o2m_dtype_name(t->dtype), got);
}

/* Frees the result buffers the generated code allocated (see the top). */
static void free_results(const o2m_exec *e, exec_word *results, exec_word *inputs) {
  exec_word *r = results;
  for (int i = 0; i < e->sig.n_results; r += exec_desc_words(e->sig.results[i].rank), i++) {
    void *p = r[0].ptr;
    int keep = p == CONSTANT_ALLOCATED;
    exec_word *in = inputs;
    for (int k = 0; !keep && k < e->sig.n_args; in += exec_desc_words(e->sig.args[k].rank), k++)
      keep = in[0].ptr == p;
    exec_word *before = results;
    for (int k = 0; !keep && k < i; before += exec_desc_words(e->sig.results[k].rank), k++)
      keep = before[0].ptr == p;
    if (!keep) o2m_rt_free(p);
  }
}

/* The descriptor of weight argument i: its data read in place (the
 * argument is not writable), or the aligned copy made at the first call
 * when the data is not aligned to its element. Never freed by the call. */
static o2m_status weight_desc(o2m_exec *e, int i, const o2m_tensor *t, exec_word *d, int *owned, o2m_diag *diag) {
  if (exec_desc_borrowable(t) || (e->sig.args[i].any_align && exec_desc_borrowable_anywhere(t))) {
    exec_desc_view(t, t->data, d);
    return O2M_OK;
  }
  weight_arg *w = &e->weights[i];
  o2m_status s = O2M_OK;
  pthread_mutex_lock(&e->weights_lock);
  if (w->copy && w->source == t->data) {
    exec_desc_view(t, w->copy, d);
  } else if (w->copy) {
    /* other data for the same argument (a call of another loaded model's
     * weights): a copy of this call's own, freed with the call */
    s = exec_desc_from_tensor(t, d, diag);
    *owned = !s;
  } else if (!(s = exec_desc_from_tensor(t, d, diag))) {
    w->copy = d[0].ptr, w->source = t->data;
    w->bytes = (size_t)t->count * exec_elem_bytes(t->dtype);
  }
  pthread_mutex_unlock(&e->weights_lock);
  return s;
}

o2m_status o2m_exec_call(o2m_exec *e, int n_inputs, const o2m_tensor *const *inputs, int n_outputs,
                         o2m_tensor **outputs, o2m_arena *arena, o2m_diag *diag) {
  if (n_inputs != e->sig.n_args)
    return o2m_fail(diag, O2M_ERR_USAGE, "@%s takes %d input%s but %d %s given", e->entry, e->sig.n_args,
                    e->sig.n_args == 1 ? "" : "s", n_inputs, n_inputs == 1 ? "was" : "were");
  if (n_outputs != e->sig.n_results)
    return o2m_fail(diag, O2M_ERR_USAGE, "@%s gives %d results, not %d", e->entry, e->sig.n_results, n_outputs);
  size_t in_words = 0, out_words = 0;
  for (int i = 0; i < n_inputs; i++) {
    o2m_status s = check_input(e, i, inputs[i], diag);
    if (s) return s;
    in_words += exec_desc_words(e->sig.args[i].rank);
  }
  for (int i = 0; i < n_outputs; i++) out_words += exec_desc_words(e->sig.results[i].rank);
  exec_word *words = calloc(in_words + out_words + 1, sizeof(exec_word));
  void **slots = calloc(2 * ((size_t)n_inputs + 1), sizeof(void *));
  int *owned = calloc((size_t)n_inputs + 1, sizeof(int)); /* weights copied for this call alone */
  if (!words || !slots || !owned) {
    free(words);
    free(slots);
    free(owned);
    return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  }
  exec_word *in_descs = words, *out_descs = words + in_words;
  /* slots[0..n) hold the pointers the function takes, slots[n..2n) point at them */
  int n = 0;
  if (n_outputs) slots[n++] = out_descs;
  o2m_status s = O2M_OK;
  int built = 0;
  for (exec_word *d = in_descs; built < n_inputs; d += exec_desc_words(e->sig.args[built].rank), built++) {
    if ((s = e->sig.weight_names[built] ? weight_desc(e, built, inputs[built], d, &owned[built], diag)
                               : exec_desc_from_tensor(inputs[built], d, diag)))
      break;
    slots[n++] = d;
  }
  void **args = slots + n;
  for (int k = 0; k < n; k++) args[k] = &slots[k];
  const void *owner = o2m_rt_set_owner(e);
  int failed = s ? -1 : o2m_rt_guarded_call(e->call, args);
  o2m_rt_set_owner(owner);
  if (failed >= 0)
    s = o2m_fail(diag, O2M_ERR_INVALID, "%s",
                 failed < e->failures.n ? e->failures.messages[failed] : "a branch that cannot be built was taken");
  else if (!s) {
    exec_word *r = out_descs;
    for (int i = 0; i < n_outputs; r += exec_desc_words(e->sig.results[i].rank), i++) {
      if ((s = exec_desc_to_tensor(r, &e->sig.results[i], i, arena, &outputs[i], diag))) break;
    }
    free_results(e, out_descs, in_descs);
  }
  exec_word *d = in_descs;
  for (int i = 0; i < built; d += exec_desc_words(e->sig.args[i].rank), i++)
    if (!e->sig.weight_names[i] || owned[i]) exec_desc_free_input(d);
  free(words);
  free(slots);
  free(owned);
  return s;
}
