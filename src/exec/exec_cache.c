/* exec_cache.c - compiled code kept on disk, so that a second `run` of a
 * model compiles nothing.
 *
 * Owns: the entry of a key, <cache>/<16 hex digits of the key's hash>/
 * holding code0.o, code1.o, ... (the objects the JIT generated, one per
 * compiled unit, position independent) and
 * entry.txt (the whole key, each object's size and hash, the signature of
 * the entry, the weight each argument carries, the messages of branches
 * that fail, the BLAS count); writing an entry (a whole folder of a
 * unique temporary name renamed into place, so concurrent writers never
 * leave a mix); folders made with mode 0700, and the check that a cache
 * folder is private (exec_cache_private: this user's, written by no one
 * else), since its code is run; and loading one into an ORC LLJIT linked
 * against the executor's runtime functions and the process. An entry whose
 * key differs (another model, version, CPU, option) or whose object does
 * not match its size and hash is not loaded: the caller compiles and
 * overwrites it. Storing an entry keeps the cache within its size limit
 * (exec_cache_prune.c). Nothing is printed; a failure to store is silent
 * (the run goes on).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "exec/exec_internal.h"
#include "util/diag.h"
#include "util/hash.h"

enum { FORMAT = 3 }; /* 2: several objects; 3: weights at any address */

/* ---- the host ------------------------------------------------------------ */

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static char host_text[4096];

static void read_host(void) {
  char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures(), *triple = LLVMGetDefaultTargetTriple();
  snprintf(host_text, sizeof(host_text), "host %s %s %s", triple, cpu, features);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  LLVMDisposeMessage(triple);
}

const char *o2m_exec_host(void) {
  pthread_once(&host_once, read_host);
  return host_text;
}

/* ---- paths ---------------------------------------------------------------- */

static int make_dirs(const char *path) {
  char buf[4096];
  if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) return -1;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int exec_cache_private(const char *dir, char *why, size_t size) {
  struct stat st;
  if (lstat(dir, &st) != 0) {
    if (errno == ENOENT) return 1; /* made 0700 when first stored */
    snprintf(why, size, "%s cannot be read (%s)", dir, strerror(errno));
    return 0;
  }
  if (!S_ISDIR(st.st_mode)) snprintf(why, size, "%s is not a folder", dir);
  else if (st.st_uid != geteuid()) snprintf(why, size, "%s belongs to another user (uid %ld)", dir, (long)st.st_uid);
  else if (st.st_mode & (S_IWGRP | S_IWOTH))
    snprintf(why, size, "%s may be written by %s (mode %03o)", dir, st.st_mode & S_IWOTH ? "others" : "its group",
             (unsigned)(st.st_mode & 0777));
  else return 1;
  return 0;
}

/* Removes the folder `path` and the plain files in it. */
static void remove_entry_folder(const char *path) {
  DIR *d = opendir(path);
  struct dirent *e;
  char file[4400];
  while (d && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
    remove(file);
  }
  if (d) closedir(d);
  rmdir(path);
}

static void entry_path(char *out, size_t size, const char *dir, const char *key, const char *file) {
  snprintf(out, size, "%s/%016" PRIx64 "%s%s", dir, o2m_hash_bytes(key, strlen(key), 0), file ? "/" : "", file ? file : "");
}

/* ---- storing -------------------------------------------------------------- */

static void put_string(FILE *f, const char *tag, const char *s) {
  fprintf(f, "%s %zu ", tag, s ? strlen(s) : 0);
  if (s) fputs(s, f);
  fputc('\n', f);
}

static void put_args(FILE *f, const char *tag, int n, const exec_arg *args, const char *const *weights) {
  fprintf(f, "%s %d\n", tag, n);
  for (int i = 0; i < n; i++) {
    fprintf(f, "%d %d %d", (int)args[i].dtype, args[i].rank, args[i].any_align);
    for (int k = 0; k < args[i].rank; k++) fprintf(f, " %" PRId64, args[i].dims[k]);
    fputc('\n', f);
    if (weights) put_string(f, "weight", weights[i]);
  }
}


int exec_engine_object(MlirExecutionEngine engine, const char *dir, exec_blob *out) {
  char path[4200];
  out->data = NULL, out->size = 0;
  if (make_dirs(dir) != 0) return -1;
  snprintf(path, sizeof(path), "%s/engine.%ld.o", dir, (long)getpid());
  mlirExecutionEngineDumpToObjectFile(engine, mlirStringRefCreateFromCString(path));
  FILE *f = fopen(path, "rb");
  long size = -1;
  if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (out->data = malloc((size_t)size)) != NULL &&
      fread(out->data, 1, (size_t)size, f) == (size_t)size)
    out->size = (size_t)size;
  if (f) fclose(f);
  remove(path);
  if (out->size) return 0;
  free(out->data);
  out->data = NULL;
  return -1;
}

/* A name no other writer uses at the same time: the process, the thread
 * (by a counter) and the time. */
static void unique_suffix(char *out, size_t size) {
  static _Atomic unsigned long counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(out, size, ".tmp.%ld.%lu.%ld", (long)getpid(), (unsigned long)++counter, (long)ts.tv_nsec);
}

int exec_cache_store(const char *dir, const char *key, const exec_blob *objects, int n_objects,
                     const exec_signature *sig, const exec_branch_failures *failures, int blas_calls) {
  /* The entry is written whole into a folder of its own, then renamed into
   * place: a reader sees the old entry, none, or the new one, never a mix,
   * and concurrent writers of one key each leave a whole entry. */
  char entry[4096], tmp[4200], old[4200], suffix[96], path[4400];
  if (n_objects < 1 || n_objects > EXEC_MAX_UNITS) return -1;
  if (make_dirs(dir) != 0) return -1;
  entry_path(entry, sizeof(entry), dir, key, NULL);
  unique_suffix(suffix, sizeof(suffix));
  snprintf(tmp, sizeof(tmp), "%s%s", entry, suffix);
  if (mkdir(tmp, 0700) != 0) return -1;
  int bad = 0;
  for (int i = 0; i < n_objects && !bad; i++) {
    snprintf(path, sizeof(path), "%s/code%d.o", tmp, i);
    bad = exec_blob_write(path, &objects[i]) != 0;
  }
  snprintf(path, sizeof(path), "%s/entry.txt", tmp);
  FILE *f = bad ? NULL : fopen(path, "w");
  if (f) {
    fprintf(f, "onnx2mlir-cache %d\n", FORMAT);
    put_string(f, "key", key);
    fprintf(f, "objects %d\n", n_objects);
    for (int i = 0; i < n_objects; i++)
      fprintf(f, "code %zu %016" PRIx64 "\n", objects[i].size, o2m_hash_bytes(objects[i].data, objects[i].size, 0));
    fprintf(f, "blas %d\n", blas_calls);
    put_args(f, "args", sig->n_args, sig->args, sig->weight_names);
    put_args(f, "results", sig->n_results, sig->results, NULL);
    fprintf(f, "failures %d\n", failures->n);
    for (int i = 0; i < failures->n; i++) put_string(f, "failure", failures->messages[i]);
    fputs("end\n", f);
    bad = fclose(f) != 0;
  } else {
    bad = 1;
  }
  if (!bad && rename(tmp, entry) != 0) {
    /* an entry is there (another key's hash twin, a damaged one, or one
     * another writer just stored): set it aside, then put this one in */
    snprintf(old, sizeof(old), "%s.old%s", entry, suffix);
    if (rename(entry, old) == 0) remove_entry_folder(old);
    bad = rename(tmp, entry) != 0;
  }
  if (bad) {
    remove_entry_folder(tmp);
    return -1;
  }
  const char *name = strrchr(entry, '/');
  exec_cache_prune(dir, name ? name + 1 : entry, exec_cache_limit());
  return 0;
}

/* ---- loading --------------------------------------------------------------- */

/* Reads "TAG LEN BYTES\n" into the arena; NULL on a mismatch. */
static char *get_string(FILE *f, const char *tag, o2m_arena *arena) {
  char got[32];
  size_t len;
  if (fscanf(f, "%31s %zu", got, &len) != 2 || strcmp(got, tag) != 0 || len > (1u << 24) || fgetc(f) != ' ')
    return NULL;
  char *s = o2m_arena_alloc(arena, len + 1);
  if (!s || fread(s, 1, len, f) != len || fgetc(f) != '\n') return NULL;
  s[len] = '\0';
  return s;
}

static int get_args(FILE *f, const char *tag, int *n, exec_arg **args, const char ***weights, o2m_arena *arena) {
  char got[32];
  if (fscanf(f, "%31s %d", got, n) != 2 || strcmp(got, tag) != 0 || *n < 0 || *n > 100000) return -1;
  *args = o2m_arena_array(arena, (size_t)*n + 1, sizeof(exec_arg));
  if (weights) *weights = o2m_arena_array(arena, (size_t)*n + 1, sizeof(char *));
  if (!*args || (weights && !*weights)) return -1;
  for (int i = 0; i < *n; i++) {
    exec_arg *a = &(*args)[i];
    int dtype;
    if (fscanf(f, "%d %d %d", &dtype, &a->rank, &a->any_align) != 3 || a->rank < 0 || a->rank > 64 || dtype <= 0 ||
        dtype >= O2M_DT_COUNT || (a->any_align != 0 && a->any_align != 1))
      return -1;
    a->dtype = (o2m_dtype)dtype;
    a->dims = o2m_arena_array(arena, (size_t)a->rank + 1, sizeof(int64_t));
    if (!a->dims) return -1;
    for (int k = 0; k < a->rank; k++)
      if (fscanf(f, "%" SCNd64, &a->dims[k]) != 1) return -1;
    if (fgetc(f) != '\n') return -1;
    if (!weights) continue;
    char *w = get_string(f, "weight", arena);
    if (!w) return -1;
    (*weights)[i] = w[0] ? w : NULL;
  }
  return 0;
}

/* Reads entry.txt; 0 when it is of this format and this key. */
static int read_entry(const char *path, const char *key, o2m_arena *arena, exec_signature *sig,
                      exec_branch_failures *failures, int *blas_calls, int *n_objects, size_t *code_size,
                      uint64_t *code_hash) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int format = 0, ok = fscanf(f, "onnx2mlir-cache %d\n", &format) == 1 && format == FORMAT;
  const char *stored = ok ? get_string(f, "key", arena) : NULL;
  ok = stored && strcmp(stored, key) == 0;
  ok = ok && fscanf(f, "objects %d\n", n_objects) == 1 && *n_objects >= 1 && *n_objects <= EXEC_MAX_UNITS;
  for (int i = 0; ok && i < *n_objects; i++) ok = fscanf(f, "code %zu %" SCNx64 "\n", &code_size[i], &code_hash[i]) == 2;
  ok = ok && fscanf(f, "blas %d\n", blas_calls) == 1;
  ok = ok && get_args(f, "args", &sig->n_args, &sig->args, &sig->weight_names, arena) == 0;
  ok = ok && get_args(f, "results", &sig->n_results, &sig->results, NULL, arena) == 0;
  ok = ok && fscanf(f, " failures %d\n", &failures->n) == 1 && failures->n >= 0 && failures->n < 100000;
  if (ok) failures->messages = o2m_arena_array(arena, (size_t)failures->n + 1, sizeof(char *));
  for (int i = 0; ok && i < failures->n; i++) ok = (failures->messages[i] = get_string(f, "failure", arena)) != NULL;
  char end[8] = "";
  ok = ok && fscanf(f, "%7s", end) == 1 && strcmp(end, "end") == 0;
  fclose(f);
  return ok ? 0 : -1;
}

static int consume(LLVMErrorRef err) {
  if (!err) return 0;
  LLVMConsumeError(err);
  return -1;
}

int exec_jit_load(const exec_blob *objects, int n_objects, const char *entry, void **out, packed_fn *call) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  LLVMOrcLLJITRef jit = NULL;
  if (consume(LLVMOrcCreateLLJIT(&jit, NULL))) return -1;
  LLVMOrcJITDylibRef lib = LLVMOrcLLJITGetMainJITDylib(jit);
  LLVMOrcDefinitionGeneratorRef process = NULL;
  int bad = consume(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&process, LLVMOrcLLJITGetGlobalPrefix(jit),
                                                                         NULL, NULL));
  if (!bad) LLVMOrcJITDylibAddGenerator(lib, process);
  o2m_rt_symbol symbols[O2M_RT_MAX_SYMBOLS];
  LLVMOrcCSymbolMapPair pairs[O2M_RT_MAX_SYMBOLS];
  int n = o2m_rt_symbols(symbols);
  for (int i = 0; i < n; i++)
    pairs[i] = (LLVMOrcCSymbolMapPair){LLVMOrcLLJITMangleAndIntern(jit, symbols[i].name),
                                       {(LLVMOrcExecutorAddress)(uintptr_t)symbols[i].address,
                                        {LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0}}};
  bad = bad || consume(LLVMOrcJITDylibDefine(lib, LLVMOrcAbsoluteSymbols(pairs, (size_t)n)));
  for (int i = 0; i < n_objects && !bad; i++) {
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRangeCopy(objects[i].data, objects[i].size, "onnx2mlir-unit");
    bad = !buf || consume(LLVMOrcLLJITAddObjectFile(jit, lib, buf)); /* takes the buffer */
  }
  char name[600];
  snprintf(name, sizeof(name), "_mlir__mlir_ciface_%s", entry);
  LLVMOrcExecutorAddress address = 0;
  bad = bad || consume(LLVMOrcLLJITLookup(jit, &address, name)) || !address;
  if (bad) {
    LLVMConsumeError(LLVMOrcDisposeLLJIT(jit));
    return -1;
  }
  *out = jit;
  *call = (packed_fn)(uintptr_t)address;
  return 0;
}

/* Reads an object file of the entry, checking its size and hash. */
static int read_object(const char *path, size_t size, uint64_t hash, exec_blob *out) {
  out->data = NULL, out->size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  int ok = size > 0 && (out->data = malloc(size + 1)) != NULL && fread(out->data, 1, size, f) == size &&
           fgetc(f) == EOF && o2m_hash_bytes(out->data, size, 0) == hash;
  fclose(f);
  if (ok) {
    out->size = size;
    return 0;
  }
  free(out->data);
  out->data = NULL;
  return -1;
}

int exec_cache_load(const char *dir, const char *key, const char *entry, o2m_arena *arena, exec_signature *sig,
                    exec_branch_failures *failures, int *blas_calls, void **jit, packed_fn *call) {
  char text[4200];
  entry_path(text, sizeof(text), dir, key, "entry.txt");
  int n = 0;
  size_t sizes[EXEC_MAX_UNITS];
  uint64_t hashes[EXEC_MAX_UNITS];
  if (read_entry(text, key, arena, sig, failures, blas_calls, &n, sizes, hashes) != 0) return -1;
  exec_blob objects[EXEC_MAX_UNITS] = {{0}};
  int bad = 0;
  for (int i = 0; i < n && !bad; i++) {
    char code[4200], file[32];
    snprintf(file, sizeof(file), "code%d.o", i);
    entry_path(code, sizeof(code), dir, key, file);
    bad = read_object(code, sizes[i], hashes[i], &objects[i]) != 0;
  }
  if (!bad) bad = exec_jit_load(objects, n, entry, jit, call) != 0;
  if (!bad) exec_cache_touch(text); /* used now: pruning keeps it longest */
  for (int i = 0; i < n; i++) free(objects[i].data);
  return bad ? -1 : 0;
}

void exec_cache_release(void *jit) {
  if (jit) LLVMConsumeError(LLVMOrcDisposeLLJIT(jit));
}
