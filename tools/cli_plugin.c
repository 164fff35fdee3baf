/* cli_plugin.c - loads libonnx2mlir-mlir.so (the emitters, linked against
 * libMLIR.so) only when a command needs MLIR, so that `info` starts in a
 * few milliseconds. Search order: $ONNX2MLIR_PLUGIN, next to the
 * executable, ../lib/onnx2mlir/ relative to it, then the build tree. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plugin/plugin.h"
#include "util/diag.h"

static void *try_open(const char *path, char *errors, size_t cap) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    size_t len = strlen(errors);
    snprintf(errors + len, cap - len, "\n  %s", dlerror());
  }
  return h;
}

static void *open_plugin(char *errors, size_t cap) {
  const char *env = getenv("ONNX2MLIR_PLUGIN");
  if (env && *env) return try_open(env, errors, cap);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
      char path[PATH_MAX + 64];
      snprintf(path, sizeof(path), "%s/libonnx2mlir-mlir.so", exe);
      if (access(path, F_OK) == 0) return try_open(path, errors, cap);
      snprintf(path, sizeof(path), "%s/../lib/onnx2mlir/libonnx2mlir-mlir.so", exe);
      if (access(path, F_OK) == 0) return try_open(path, errors, cap);
    }
  }
  return try_open(O2M_PLUGIN_BUILD_PATH, errors, cap);
}

const struct o2m_plugin *cli_load_plugin(o2m_diag *diag) {
  char errors[2048] = "";
  void *h = open_plugin(errors, sizeof(errors));
  if (!h) {
    o2m_fail(diag, O2M_ERR_IO, "cannot load the MLIR emitters (libonnx2mlir-mlir.so):%s", errors);
    return NULL;
  }
  const struct o2m_plugin *p = dlsym(h, O2M_PLUGIN_SYMBOL);
  if (!p || p->abi != O2M_PLUGIN_ABI) {
    o2m_fail(diag, O2M_ERR_IO, "libonnx2mlir-mlir.so does not match this onnx2mlir (ABI)");
    return NULL;
  }
  return p;
}

cli_import_fn cli_load_import(o2m_diag *diag) {
  const struct o2m_plugin *p = cli_load_plugin(diag);
  return p ? p->import : NULL;
}
