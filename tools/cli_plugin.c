/* cli_plugin.c - loads the MLIR side only when a command needs it, so that
 * `info` starts in a few milliseconds. Two plugins exist:
 *   libonnx2mlir-forms.so  the as-written emitters (torch and onnx forms),
 *                          linked statically against the few MLIR libraries
 *                          they need (IR, parser, bytecode writer): a few
 *                          MB, loads in ~20 ms;
 *   libonnx2mlir-mlir.so   every emitter and the JIT, linked against
 *                          Debian's shared libMLIR/libLLVM (~0.2 s to load).
 * `import --to torch|onnx` takes the first when it is there, everything else the
 * second. Search order for a plugin: $ONNX2MLIR_PLUGIN (the full plugin
 * only), next to the executable (the build tree), then
 * O2M_PLUGIN_RELDIR relative to it (<prefix>/<libdir>/onnx2mlir once
 * installed; CMakeLists.txt computes it). Nothing depends on where the
 * project was built. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plugin/plugin.h"
#include "util/diag.h"

#define FULL_PLUGIN "libonnx2mlir-mlir.so"
#define FORMS_PLUGIN "libonnx2mlir-forms.so"

static void *try_open(const char *path, char *errors, size_t cap) {
  /* lazy binding: resolving every function of libMLIR and libLLVM up front
   * costs about 0.1 s (the plugins are linked with --no-undefined) */
  void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    size_t len = strlen(errors);
    snprintf(errors + len, cap - len, "\n  %s", dlerror());
  }
  return h;
}

/* Whether DIR/NAME exists; its path goes to `path`. */
static int found_in(const char *dir, const char *name, char *path, size_t cap) {
  int n = snprintf(path, cap, "%s/%s", dir, name);
  return n > 0 && (size_t)n < cap && access(path, F_OK) == 0;
}

/* Opens the plugin `name` from the first place that has it. When it exists
 * nowhere: NULL, with the reason in `errors` unless `quiet_if_absent`. */
static void *open_plugin(const char *name, int quiet_if_absent, char *errors, size_t cap) {
  const char *env = getenv("ONNX2MLIR_PLUGIN");
  if (env && *env && strcmp(name, FULL_PLUGIN) == 0) return try_open(env, errors, cap);
  char path[2 * PATH_MAX], exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
  if (slash) {
    *slash = 0;
    if (found_in(exe, name, path, sizeof(path))) return try_open(path, errors, cap);
    char lib[PATH_MAX + 64];
    snprintf(lib, sizeof(lib), "%s/%s", exe, O2M_PLUGIN_RELDIR);
    if (found_in(lib, name, path, sizeof(path)) || !quiet_if_absent) return try_open(path, errors, cap);
  }
  if (!quiet_if_absent) snprintf(errors + strlen(errors), cap - strlen(errors), "\n  %s: not found", name);
  return NULL;
}

static const struct o2m_plugin *load(const char *name, int quiet_if_absent, o2m_diag *diag) {
  char errors[2048] = "";
  void *h = open_plugin(name, quiet_if_absent, errors, sizeof(errors));
  if (!h) {
    if (!quiet_if_absent || errors[0])
      o2m_fail(diag, O2M_ERR_IO, "cannot load the MLIR emitters (%s):%s", name, errors);
    return NULL;
  }
  const struct o2m_plugin *p = dlsym(h, O2M_PLUGIN_SYMBOL);
  if (!p || p->abi != O2M_PLUGIN_ABI) {
    o2m_fail(diag, O2M_ERR_IO, "%s does not match this onnx2mlir (ABI)", name);
    return NULL;
  }
  return p;
}

const struct o2m_plugin *cli_load_plugin(o2m_diag *diag) { return load(FULL_PLUGIN, 0, diag); }

cli_import_fn cli_load_import(int target, o2m_diag *diag) {
  const struct o2m_plugin *p = NULL;
  if (target == O2M_TARGET_TORCH || target == O2M_TARGET_ONNX) {
    p = load(FORMS_PLUGIN, 1, diag);
    if (!p && diag->status) return NULL; /* there, but broken */
  }
  if (!p) p = cli_load_plugin(diag);
  return p ? p->import : NULL;
}
