/* run_cache.c - the key under which a run's compiled code is cached
 * (exec_cache.c stores and loads it): everything the code depends on.
 *
 * Owns: the key's text, one fact a line: the tool's version and the
 * cache's format, the build (the library holding this code: path, size,
 * modification time, so that a rebuilt compiler never reuses an older
 * one's code), the host (LLVM's triple, CPU and features), the target,
 * the optimisation level and which kernel libraries (BLAS, oneDNN) are in use, the model file's size
 * and hash (its bytes, read once), each external data file by path, size,
 * device, inode and modification time (weights are arguments, read in
 * place, but small ones are compiled in), and each input's dtype and dims
 * (and the value of one read only as a parameter, which specialising
 * folded into the code).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core.h"
#include "exec/exec.h"
#include "exec/exec_internal.h"
#include "exec/run_cache.h"
#include "runtime/runtime.h"
#include "util/hash.h"

enum { CACHE_FORMAT = 1 };

typedef struct text {
  char *buf;
  size_t cap, len;
  int full;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= t->cap - t->len) t->full = 1;
  else t->len += (size_t)n;
}

/* The file this code was loaded from (the plugin or libonnx2mlir.so). */
static const char *build_identity(o2m_arena *arena) {
  Dl_info info;
  struct stat st;
  if (!dladdr((void *)(uintptr_t)build_identity, &info) || !info.dli_fname || stat(info.dli_fname, &st) != 0)
    return "build unknown";
  return o2m_arena_printf(arena, "build %s %lld %lld.%09ld", info.dli_fname, (long long)st.st_size,
                          (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
}

const char *run_cache_key(const o2m_model *model, const o2m_run_options *o, int kernels, int n_inputs,
                          const o2m_tensor *const *inputs, o2m_arena *arena) {
  if (!o->cache_dir || o->profile || (o->target != O2M_TARGET_LINALG && o->target != O2M_TARGET_TOSA) ||
      o->input_values || o->output_values ||
      model->n_mappings < 1 ||
      !model->mappings[0].addr)
    return NULL;
  enum { CAP = 1 << 16 };
  text t = {o2m_arena_alloc(arena, CAP), CAP, 0, 0};
  if (!t.buf) return NULL;
  t.buf[0] = '\0';
  add(&t, "onnx2mlir %s cache %d\n%s\n%s\n", O2M_VERSION_STRING, CACHE_FORMAT, build_identity(arena), o2m_exec_host());
  const char *in_code = getenv("ONNX2MLIR_WEIGHTS_IN_CODE");
  add(&t, "target %s O%d kernels %d weights-in-code %s\n", o2m_target_name(o->target), o->opt_level, kernels,
      in_code ? in_code : "");
  /* which loops are split for threads depends on the grain (exec_parallel.c) */
  add(&t, "parallel grain %" PRId64 "\n", o2m_rt_parallel_grain());
  const o2m_mapping *m = &model->mappings[0];
  add(&t, "model %zu %016" PRIx64 "\n", m->size, o2m_hash_bytes(m->addr, m->size, 0));
  for (int i = 1; i < model->n_mappings; i++) {
    struct stat st;
    m = &model->mappings[i];
    if (!m->path || stat(m->path, &st) != 0) return NULL;
    add(&t, "data %s %zu %" PRIu64 " %" PRIu64 " %lld.%09ld\n", m->path, m->size, m->dev, m->ino,
        (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
  }
  if (o->generic) add(&t, "generic\n");
  for (int i = 0; i < n_inputs; i++) {
    add(&t, "input %d %d", i, (int)inputs[i]->dtype);
    /* an input read only as a parameter was folded in: its value counts */
    const o2m_value *v = o2m_runtime_input(model, i);
    if (o->generic && !(v && v->known)) /* the code takes any sizes of this rank */
      add(&t, " rank %d", inputs[i]->rank);
    else
      for (int k = 0; k < inputs[i]->rank; k++) add(&t, "%s%lld", k ? "," : " ", (long long)inputs[i]->dims[k]);
    if (v && v->known && v->known->data)
      add(&t, " value %016" PRIx64, o2m_hash_bytes(v->known->data, v->known->nbytes, 0));
    add(&t, "\n");
  }
  return t.full ? NULL : t.buf;
}
