/* compile.c - o2m_model_compile (include/onnx2mlir.h): a model as a shared
 * library or an object with a C ABI, dynamic dims left dynamic.
 *
 * Owns: the steps, in a private temporary folder: the Linalg module with
 * the large initializers as arguments, its object code (exec_object.c),
 * the weights written once into a blob the wrapper assembles in, the
 * header and the wrapper (compile_source.c), then the system's C compiler
 * to build the wrapper and link it with the runtime (src/runtime, whose
 * kernels the code calls: libonnx2mlir_rt.a linked in, or the shared
 * libonnx2mlir_rt.so.0). Only the interface's functions are left
 * global (a version script for a .so, objcopy for a .o), so that several
 * compiled models can share a program. Nothing is written to the output
 * paths unless every step succeeded.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp */
#endif
#include <ctype.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <limits.h>
#include <unistd.h>

#include "core/core.h"
#include "emit/emit.h"
#include "emit/linalg/lower.h"
#include "exec/compile.h"
#include "exec/exec_internal.h"
#include "exec/run.h"
#include "util/diag.h"
#include "util/hash.h"

extern char **environ;

/* ---- the temporary folder ----------------------------------------------- */

typedef struct workdir {
  char path[512];
  char files[16 + EXEC_MAX_UNITS][600];
  int n_files;
} workdir;

static o2m_status workdir_create(workdir *w, o2m_diag *diag) {
  const char *tmp = getenv("TMPDIR");
  /* the blob's path goes into an assembler string: keep it plain */
  if (!tmp || !*tmp || strlen(tmp) > 400 || strpbrk(tmp, "\"\\\n")) tmp = "/tmp";
  snprintf(w->path, sizeof(w->path), "%s/onnx2mlir-compile-XXXXXX", tmp);
  w->n_files = 0;
  if (!mkdtemp(w->path)) return o2m_fail(diag, O2M_ERR_IO, "cannot create a temporary folder in %s", tmp);
  return O2M_OK;
}

/* The path of `name` in the folder, remembered for removal. */
static const char *workdir_file(workdir *w, const char *name) {
  if (w->n_files == (int)(sizeof(w->files) / sizeof(w->files[0]))) return NULL;
  char path[sizeof(w->files[0])];
  snprintf(path, sizeof(path), "%s/%s", w->path, name);
  memcpy(w->files[w->n_files], path, sizeof(path));
  return w->files[w->n_files++];
}

static void workdir_remove(workdir *w) {
  for (int i = 0; i < w->n_files; i++) remove(w->files[i]);
  rmdir(w->path);
}

/* ---- running the C compiler ---------------------------------------------- */

/* Runs argv with its output in `log`; on failure, the message quotes it. */
static o2m_status run_tool(char *const *argv, const char *log, o2m_diag *diag) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err) return o2m_fail(diag, O2M_ERR_IO, "cannot run '%s' (%s): compile needs a C compiler and linker",
                           argv[0], strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return O2M_OK;
  char text[1200] = "";
  FILE *f = fopen(log, "r");
  size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
  if (f) fclose(f);
  text[n] = '\0';
  return o2m_fail(diag, O2M_ERR_IO, "'%s' failed: %s", argv[0], text[0] ? text : "(no output)");
}

/* ---- the plan ------------------------------------------------------------ */

static int is_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/* Whether the library can take or give a tensor of dtype d: a byte or
 * more per element (sub-byte types would need ONNX's packing undone). */
static int dtype_ok(o2m_dtype d) {
  return d == O2M_DT_BOOL || (d != O2M_DT_STRING && o2m_dtype_bits(d) >= 8);
}

static o2m_status check_io(const o2m_model *model, const char *what, const char *name, const o2m_type *t,
                           o2m_diag *diag) {
  if (t->kind != O2M_TYPE_TENSOR || t->rank < 0)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: %s '%s' is not a ranked tensor; compile takes tensors only",
                    model->path, what, name);
  if (!dtype_ok(t->elem))
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: %s '%s' has dtype %s, which the compiled interface does not take",
                    model->path, what, name, o2m_dtype_name(t->elem));
  if (t->rank > COMPILE_MAX_RANK)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: %s '%s' has rank %d (at most %d)", model->path, what, name,
                    t->rank, COMPILE_MAX_RANK);
  return O2M_OK;
}

static const char **symbols_of(const o2m_type *t, int rank, o2m_arena *arena) {
  const char **s = o2m_arena_array(arena, (size_t)rank + 1, sizeof(char *));
  for (int k = 0; s && k < rank && t->rank == rank; k++) s[k] = t->dims[k].size < 0 ? t->dims[k].sym : NULL;
  return s;
}

enum { BLOB_ALIGN = 64 };

/* Fills the plan from the graph and the compiled entry's signature, and
 * writes the weights the entry takes to `blob_path` (after the weights
 * file's header when p->weights_file is set). */
static o2m_status make_plan(o2m_model *model, const exec_signature *sig, const char *blob_path, o2m_arena *arena,
                            compile_plan *p, o2m_diag *diag) {
  int external = p->weights_file != NULL;
  const o2m_graph *g = model->graph;
  int n_in = o2m_runtime_input_count(model);
  if (n_in > sig->n_args || sig->n_results != g->n_outputs)
    return o2m_fail(diag, O2M_ERR_INTERNAL, "@%s does not match the graph's inputs and outputs", p->entry);
  p->n_inputs = n_in, p->n_outputs = g->n_outputs, p->n_weights = sig->n_args - n_in;
  p->inputs = o2m_arena_array(arena, (size_t)n_in + 1, sizeof(compile_tensor));
  p->outputs = o2m_arena_array(arena, (size_t)p->n_outputs + 1, sizeof(compile_tensor));
  p->weights = o2m_arena_array(arena, (size_t)p->n_weights + 1, sizeof(compile_tensor));
  if (!p->inputs || !p->outputs || !p->weights) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n_in; i++) {
    const o2m_value *v = o2m_runtime_input(model, i);
    p->inputs[i] = (compile_tensor){v->name, v->type.elem, sig->args[i].rank, sig->args[i].dims,
                                    symbols_of(&v->type, sig->args[i].rank, arena), 0};
  }
  for (int i = 0; i < p->n_outputs; i++) {
    const o2m_value *v = g->output_values[i];
    p->outputs[i] = (compile_tensor){g->outputs[i].name, v->type.elem, sig->results[i].rank, sig->results[i].dims,
                                     symbols_of(&v->type, sig->results[i].rank, arena), 0};
  }
  FILE *blob = p->n_weights || external ? fopen(blob_path, "wb") : NULL;
  if ((p->n_weights || external) && !blob) return o2m_fail(diag, O2M_ERR_IO, "cannot write %s", blob_path);
  uint64_t at = 0, id = 0;
  static const char zeros[BLOB_ALIGN];
  o2m_status s = O2M_OK;
  if (external && fwrite(zeros, 1, COMPILE_WEIGHTS_HEADER, blob) != COMPILE_WEIGHTS_HEADER)
    s = o2m_fail(diag, O2M_ERR_IO, "writing %s failed", blob_path);
  for (int i = 0; i < p->n_weights && !s; i++) {
    const char *name = sig->weight_names[n_in + i];
    const o2m_value *v = name ? o2m_strmap_get(&g->value_by_name, name) : NULL;
    const o2m_tensor *t = o2m_value_stored(v);
    if (!t || !t->data) {
      s = o2m_fail(diag, O2M_ERR_INTERNAL, "argument %d of @%s is no stored tensor of the graph", n_in + i, p->entry);
      break;
    }
    uint64_t pad = (BLOB_ALIGN - at % BLOB_ALIGN) % BLOB_ALIGN;
    if (fwrite(zeros, 1, pad, blob) != pad || fwrite(t->data, 1, t->nbytes, blob) != t->nbytes)
      s = o2m_fail(diag, O2M_ERR_IO, "writing %s failed", blob_path);
    if (external) id = o2m_hash_bytes(t->data, t->nbytes, id ^ (at + pad));
    at += pad;
    p->weights[i] = (compile_tensor){name, t->dtype, sig->args[n_in + i].rank, sig->args[n_in + i].dims, NULL, at};
    at += t->nbytes;
  }
  if (external && !s) { /* the header, now that the id is known */
    unsigned char header[COMPILE_WEIGHTS_HEADER] = {0};
    memcpy(header, COMPILE_WEIGHTS_MAGIC, sizeof(COMPILE_WEIGHTS_MAGIC));
    for (int b = 0; b < 8; b++) header[16 + b] = (unsigned char)(id >> (8 * b)), header[24 + b] = (unsigned char)(at >> (8 * b));
    if (fseek(blob, 0, SEEK_SET) != 0 || fwrite(header, 1, sizeof(header), blob) != sizeof(header))
      s = o2m_fail(diag, O2M_ERR_IO, "writing %s failed", blob_path);
  }
  if (blob && fclose(blob) != 0 && !s) s = o2m_fail(diag, O2M_ERR_IO, "writing %s failed", blob_path);
  p->blob_path = p->n_weights && !external ? blob_path : NULL;
  p->blob_bytes = at;
  p->weights_id = id;
  return s;
}

/* ---- the steps ----------------------------------------------------------- */

static o2m_status write_text(const char *path, const compile_plan *p, const char *header_name, o2m_diag *diag) {
  FILE *f = fopen(path, "w");
  if (!f) return o2m_fail(diag, O2M_ERR_IO, "cannot write %s", path);
  int bad = header_name ? compile_write_wrapper(f, p, header_name) : compile_write_header(f, p);
  if (fclose(f) != 0 || bad) return o2m_fail(diag, O2M_ERR_IO, "writing %s failed", path);
  return O2M_OK;
}

/* Moves the built file to where the user asked (a copy across file systems). */
static o2m_status move_file(const char *from, const char *to, o2m_diag *diag) {
  if (rename(from, to) == 0) return O2M_OK;
  FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
  char buf[1 << 16];
  size_t n;
  int bad = !in || !out;
  while (!bad && (n = fread(buf, 1, sizeof(buf), in)) > 0) bad = fwrite(buf, 1, n, out) != n;
  if (in) fclose(in);
  if (out && fclose(out) != 0) bad = 1;
  if (!bad) return O2M_OK;
  if (out) remove(to);
  return o2m_fail(diag, O2M_ERR_IO, "cannot write %s", to);
}

/* `path` made absolute (its folder resolved, the file need not exist):
 * non-zero on success. */
static int absolute_path(const char *path, char *out, size_t size) {
  const char *slash = strrchr(path, '/');
  char dir[4096];
  if (!slash) snprintf(dir, sizeof(dir), ".");
  else if (slash == path) snprintf(dir, sizeof(dir), "/");
  else snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
  char resolved[PATH_MAX];
  if (!realpath(dir, resolved)) return 0;
  const char *base = slash ? slash + 1 : path;
  return *base && (size_t)snprintf(out, size, "%s/%s", strcmp(resolved, "/") ? resolved : "", base) < size;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The folder holding the runtime (libonnx2mlir_rt.a and .so.0): where
 * ONNX2MLIR_RUNTIME_DIR says, else the folder of the library holding this
 * code (the build tree, <prefix>/lib) or its parent (the CLI's plugin in
 * <prefix>/lib/onnx2mlir). */
static o2m_status runtime_dir(char *out, size_t size, o2m_diag *diag) {
  const char *given = getenv("ONNX2MLIR_RUNTIME_DIR");
  Dl_info info;
  char here[PATH_MAX] = "";
  if (given && *given) snprintf(here, sizeof(here), "%s", given);
  else if (dladdr((void *)(uintptr_t)runtime_dir, &info) && info.dli_fname && realpath(info.dli_fname, here)) {
    char *slash = strrchr(here, '/');
    if (slash) *slash = '\0';
  }
  const char *tries[2] = {"%s", "%s/.."};
  for (int i = 0; here[0] && i < (given && *given ? 1 : 2); i++) {
    char dir[PATH_MAX + 8], archive[PATH_MAX + 40];
    snprintf(dir, sizeof(dir), tries[i], here);
    snprintf(archive, sizeof(archive), "%s/libonnx2mlir_rt.a", dir);
    if (access(archive, R_OK) == 0 && realpath(dir, out) && strlen(out) < size) return O2M_OK;
  }
  return o2m_fail(diag, O2M_ERR_IO, "cannot find the runtime (libonnx2mlir_rt.a) beside %s%s", here[0] ? here : "onnx2mlir",
                  given && *given ? " (ONNX2MLIR_RUNTIME_DIR)" : "; set ONNX2MLIR_RUNTIME_DIR to its folder");
}

/* Builds the wrapper and links it with the model's objects and the
 * runtime (its archive, or its shared library) into `output`. */
static o2m_status build_library(workdir *w, const compile_plan *p, const char *cc, const char *wrapper,
                                const char *const *model_objects, int n_objects, const char *runtime,
                                int shared_runtime, const char *output, o2m_diag *diag) {
  const char *log = workdir_file(w, "tool.log"), *wrapper_object = workdir_file(w, "wrapper.o");
  const char *exports = workdir_file(w, "exports");
  if (!log || !wrapper_object || !exports) return o2m_fail(diag, O2M_ERR_INTERNAL, "too many temporary files");
  char include[600];
  snprintf(include, sizeof(include), "-I%s", w->path);
  char *compile[] = {(char *)cc, "-c", "-O2", "-fPIC", "-std=gnu11", include, "-o", (char *)wrapper_object,
                     (char *)wrapper, NULL};
  o2m_status s = run_tool(compile, log, diag);
  if (s) return s;
  static const char *const api[] = {"run", "free_outputs", "input_name", "output_name", "load_weights", "set_threads"};
  int shared = ends_with(output, ".so") || strstr(output, ".so.") != NULL;
  FILE *f = fopen(exports, "w");
  if (!f) return o2m_fail(diag, O2M_ERR_IO, "cannot write %s", exports);
  if (shared) fputs("{\n  global:\n", f);
  for (size_t i = 0; i < sizeof(api) / sizeof(api[0]); i++) fprintf(f, shared ? "    %s_%s;\n" : "%s_%s\n", p->name, api[i]);
  if (shared) fputs("  local:\n    *;\n};\n", f);
  if (fclose(f) != 0) return o2m_fail(diag, O2M_ERR_IO, "writing %s failed", exports);
  char script[600];
  snprintf(script, sizeof(script), "-Wl,--version-script=%s", exports);
  const char *combined = shared ? NULL : workdir_file(w, "combined.o");
  if (!shared && !combined) return o2m_fail(diag, O2M_ERR_INTERNAL, "too many temporary files");
  char archive[PATH_MAX + 40], search[PATH_MAX + 8], rpath[PATH_MAX + 40];
  snprintf(archive, sizeof(archive), "%s/libonnx2mlir_rt.a", runtime);
  snprintf(search, sizeof(search), "-L%s", runtime);
  snprintf(rpath, sizeof(rpath), "-Wl,-rpath,$ORIGIN:%s", runtime);
  char *args[24 + EXEC_MAX_UNITS];
  int n = 0;
  args[n++] = (char *)cc;
  args[n++] = shared ? "-shared" : "-r";
  args[n++] = "-o";
  args[n++] = (char *)(shared ? output : combined);
  args[n++] = (char *)wrapper_object;
  for (int i = 0; i < n_objects; i++) args[n++] = (char *)model_objects[i];
  if (!shared_runtime) args[n++] = archive; /* the members the code calls */
  else if (shared) args[n++] = search, args[n++] = "-l:libonnx2mlir_rt.so.0", args[n++] = rpath;
  if (shared)
    args[n++] = script, args[n++] = "-Wl,-z,noexecstack", args[n++] = "-ldl", args[n++] = "-lpthread", args[n++] = "-lm";
  args[n] = NULL;
  if ((s = run_tool(args, log, diag)) || shared) return s;
  char keep[600];
  snprintf(keep, sizeof(keep), "--keep-global-symbols=%s", exports);
  char *localize[] = {"objcopy", keep, (char *)combined, (char *)output, NULL};
  return run_tool(localize, log, diag);
}

o2m_status o2m_model_compile(o2m_model *model, const o2m_compile_options *options, o2m_diag *diag) {
  const char *name = options && options->name ? options->name : "model";
  const char *output = options ? options->output : NULL;
  if (!output || !*output || !(ends_with(output, ".so") || strstr(output, ".so.") || ends_with(output, ".o")))
    return o2m_fail(diag, O2M_ERR_USAGE, "compile writes a .so (shared library) or a .o (object), not '%s'",
                    output ? output : "");
  if (!is_identifier(name) || strlen(name) > 64)
    return o2m_fail(diag, O2M_ERR_USAGE, "the name '%s' is no C identifier (up to 64 characters)", name);
  o2m_status cpu_ok = exec_check_cpu(options->cpu, diag);
  if (cpu_ok) return cpu_ok;
  const char *cc = options && options->cc ? options->cc : getenv("CC");
  if (!cc || !*cc) cc = "cc";
  int opt_level = options && options->opt_level >= 1 && options->opt_level <= 3 ? options->opt_level : 2;
  if (options && options->opt_level < 0) opt_level = 0;
  const o2m_graph *g = model->graph;
  for (int i = 0; i < o2m_runtime_input_count(model); i++) {
    const o2m_value *v = o2m_runtime_input(model, i);
    o2m_status s = check_io(model, "input", v->name, &v->type, diag);
    if (s) return s;
  }
  for (int i = 0; i < g->n_outputs; i++) {
    o2m_status s = check_io(model, "output", g->outputs[i].name, &g->output_values[i]->type, diag);
    if (s) return s;
  }
  workdir w;
  o2m_status s = workdir_create(&w, diag);
  if (s) return s;
  char header_name[80];
  snprintf(header_name, sizeof(header_name), "%s.h", name);
  const char *blob = workdir_file(&w, "weights.bin");
  const char *header = workdir_file(&w, header_name), *wrapper = workdir_file(&w, "wrapper.c");
  const char *built = workdir_file(&w, ends_with(output, ".o") ? "library.o" : "library.so");
  o2m_arena arena = {0};
  compile_plan plan = {name, model->path, "main", 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, 0, options->cpu};
  char weights_at[4096];
  if (options->weights) {
    if (!absolute_path(options->weights, weights_at, sizeof(weights_at)))
      s = o2m_fail(diag, O2M_ERR_USAGE, "the weights file '%s' is in no folder that can be named", options->weights);
    plan.weights_file = weights_at;
  }
  MlirContext mc = o2m_exec_context_create();
  MlirModule module = {NULL};
  /* the JIT's routes into the runtime's kernels, whichever the process
   * that runs the library finds (loops for the rest) */
  int flags = O2M_JIT | O2M_JIT_WEIGHT_ARGS | O2M_JIT_SGEMM | O2M_JIT_KERNELS | (o2m_rt_dnnl_built() ? O2M_JIT_DNNL : 0) |
              (o2m_run_quant_kernels() ? O2M_JIT_QUANT : 0);
  char runtime[PATH_MAX];
  if (!s) s = runtime_dir(runtime, sizeof(runtime), diag);
  if (!s) s = o2m_emit_linalg_module_io(model, mc, flags, NULL, NULL, &module, diag);
  if (!s) s = o2m_exec_verify(module, diag);
  exec_signature sig;
  exec_blob objects[EXEC_MAX_UNITS];
  const char *object_files[EXEC_MAX_UNITS];
  int n_objects = 0;
  if (!s) s = o2m_exec_write_objects(module, plan.entry, options->cpu, opt_level, objects, &n_objects, &arena, &sig, diag);
  if (!mlirModuleIsNull(module)) mlirModuleDestroy(module);
  mlirContextDestroy(mc);
  for (int i = 0; i < n_objects; i++) {
    char file[32];
    snprintf(file, sizeof(file), "model%d.o", i);
    object_files[i] = workdir_file(&w, file);
    if (!s && !object_files[i]) s = o2m_fail(diag, O2M_ERR_INTERNAL, "too many temporary files");
    if (!s && exec_blob_write(object_files[i], &objects[i]) != 0)
      s = o2m_fail(diag, O2M_ERR_IO, "cannot write %s", object_files[i]);
    free(objects[i].data);
  }
  if (!s) s = make_plan(model, &sig, blob, &arena, &plan, diag);
  if (!s) s = write_text(header, &plan, NULL, diag);
  if (!s) s = write_text(wrapper, &plan, header_name, diag);
  if (!s)
    s = build_library(&w, &plan, cc, wrapper, object_files, n_objects, runtime, options->shared_runtime, built, diag);
  if (!s && options->header) s = write_text(options->header, &plan, NULL, diag);
  if (!s && options->weights) s = move_file(blob, options->weights, diag);
  if (!s) s = move_file(built, output, diag);
  if (s && options->header) remove(options->header);
  if (s && options->weights) remove(options->weights);
  workdir_remove(&w);
  o2m_arena_free(&arena);
  return s;
}
