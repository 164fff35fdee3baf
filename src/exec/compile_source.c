/* compile_source.c - the C text of a compiled model's library: the header
 * users include and the wrapper that turns its tensor structs into the
 * memref descriptors of the compiled entry and back.
 *
 * Owns: the library's C ABI (onnx2mlir_tensor, the dtype and status
 * codes, <name>_run, <name>_free_outputs, the name look-ups,
 * <name>_load_weights, <name>_set_threads), the checks
 * a call makes before it reaches the generated code (counts, dtypes,
 * ranks, fixed dims, dims that share a symbol), the hand-over of result
 * buffers, the weights assembled into the library (or mapped from a file
 * of their own, compile --weights), and the call itself: guarded by the
 * runtime (a branch that could not be compiled stops it) with the model
 * named as the owner of the runtime's per-model state (oneDNN's
 * primitives and packed weights). Everything else the generated code
 * calls is the runtime's (src/runtime, linked with the library).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/compile.h"
#include "onnx2mlir.h"

/* ---- the header ---------------------------------------------------------- */

/* The definitions every compiled model's header shares (guarded, so that
 * several models' headers can be included together). */
static const char shared_definitions[] =
    "#ifndef ONNX2MLIR_TENSOR_DEFINED\n"
    "#define ONNX2MLIR_TENSOR_DEFINED\n"
    "#define ONNX2MLIR_MAX_RANK 16\n"
    "/* A dense tensor: row-major, little-endian, bool one byte each. For\n"
    " * inputs the caller fills it (data is only read); for outputs the\n"
    " * library does, data then being the caller's to release with the\n"
    " * model's _free_outputs (NULL when the tensor is empty). */\n"
    "typedef struct onnx2mlir_tensor {\n"
    "  int32_t dtype; /* ONNX TensorProto.DataType: ONNX2MLIR_FLOAT, ... */\n"
    "  int32_t rank;\n"
    "  int64_t dims[ONNX2MLIR_MAX_RANK]; /* the first `rank` are used */\n"
    "  void *data;\n"
    "} onnx2mlir_tensor;\n"
    "enum onnx2mlir_dtype {\n"
    "  ONNX2MLIR_FLOAT = 1, ONNX2MLIR_UINT8 = 2, ONNX2MLIR_INT8 = 3, ONNX2MLIR_UINT16 = 4,\n"
    "  ONNX2MLIR_INT16 = 5, ONNX2MLIR_INT32 = 6, ONNX2MLIR_INT64 = 7, ONNX2MLIR_BOOL = 9,\n"
    "  ONNX2MLIR_FLOAT16 = 10, ONNX2MLIR_DOUBLE = 11, ONNX2MLIR_UINT32 = 12, ONNX2MLIR_UINT64 = 13,\n"
    "  ONNX2MLIR_COMPLEX64 = 14, ONNX2MLIR_COMPLEX128 = 15, ONNX2MLIR_BFLOAT16 = 16,\n"
    "  ONNX2MLIR_FLOAT8E4M3FN = 17, ONNX2MLIR_FLOAT8E4M3FNUZ = 18, ONNX2MLIR_FLOAT8E5M2 = 19,\n"
    "  ONNX2MLIR_FLOAT8E5M2FNUZ = 20, ONNX2MLIR_FLOAT8E8M0 = 24\n"
    "};\n"
    "/* What a call returns. */\n"
    "enum onnx2mlir_status {\n"
    "  ONNX2MLIR_OK = 0,\n"
    "  ONNX2MLIR_ERR_ARGUMENT = 1, /* wrong count, dtype, rank or dims, or no data */\n"
    "  ONNX2MLIR_ERR_NOMEM = 2,    /* out of memory for the outputs */\n"
    "  ONNX2MLIR_ERR_BRANCH = 3,   /* the inputs took a branch of the model that\n"
    "                                 could not be compiled (see compile's warnings) */\n"
    "  ONNX2MLIR_ERR_WEIGHTS = 4   /* the weights file (compile --weights) is missing,\n"
    "                                 unreadable, or holds other weights */\n"
    "};\n"
    "#endif\n";

/* Writes `s` inside a C comment (no comment end, printable ASCII). */
static void comment_text(FILE *out, const char *s) {
  for (const char *p = s ? s : ""; *p; p++)
    fputc(*p == '/' && p > s && p[-1] == '*' ? '|' : (*p >= ' ' && *p < 127 ? *p : '?'), out);
}

static void describe(FILE *out, int i, const compile_tensor *t) {
  fprintf(out, " *   %d '", i);
  comment_text(out, t->name);
  fprintf(out, "': %s [", o2m_dtype_name(t->dtype));
  for (int k = 0; k < t->rank; k++) {
    if (k) fputs(", ", out);
    if (t->dims[k] >= 0)
      fprintf(out, "%" PRId64, t->dims[k]);
    else
      comment_text(out, t->symbols && t->symbols[k] && t->symbols[k][0] != '?' ? t->symbols[k] : "?");
  }
  fputs("]\n", out);
}

int compile_write_header(FILE *out, const compile_plan *p) {
  fprintf(out, "/* %s.h - the C interface of the model ", p->name);
  comment_text(out, p->model_path);
  if (p->cpu && strcmp(p->cpu, "native") != 0)
    fprintf(out, ",\n * compiled by onnx2mlir %s for CPU %s.\n *\n", O2M_VERSION_STRING, p->cpu);
  else
    fprintf(out, ",\n * compiled by onnx2mlir %s for this machine's CPU.\n *\n", O2M_VERSION_STRING);
  fprintf(out, " * Inputs, in this order:\n");
  for (int i = 0; i < p->n_inputs; i++) describe(out, i, &p->inputs[i]);
  fprintf(out, " * Outputs, in this order:\n");
  for (int i = 0; i < p->n_outputs; i++) describe(out, i, &p->outputs[i]);
  fprintf(out,
          " * A dim given by name may take any size; dims of the inputs that share\n"
          " * a name must be equal (checked), '?' dims are the caller's to keep\n"
          " * consistent. Calls may run on several threads at once.\n */\n"
          "#ifndef %s_H_INCLUDED\n#define %s_H_INCLUDED\n\n#include <stdint.h>\n\n%s\n"
          "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
          "enum { %s_INPUT_COUNT = %d, %s_OUTPUT_COUNT = %d };\n\n"
          "/* Runs the model: inputs[0..n_inputs) as listed above, outputs[0..n_outputs)\n"
          " * filled on success (release them with %s_free_outputs). Returns an\n"
          " * onnx2mlir_status; on failure no output is set. */\n"
          "int %s_run(const onnx2mlir_tensor *inputs, int n_inputs, onnx2mlir_tensor *outputs, int n_outputs);\n"
          "/* Frees the data of outputs a successful %s_run filled; sets it to NULL. */\n"
          "void %s_free_outputs(onnx2mlir_tensor *outputs, int n_outputs);\n"
          "/* The model's name of input/output i, NULL when there is none. */\n"
          "const char *%s_input_name(int i);\nconst char *%s_output_name(int i);\n"
          "/* %s\n"
          " * Returns an onnx2mlir_status (ONNX2MLIR_ERR_ARGUMENT once weights are mapped). */\n"
          "int %s_load_weights(const char *path);\n"
          "/* The threads each later run may use (oneDNN's convolutions and\n"
          " * products; the rest runs on the calling thread); 0: the default,\n"
          " * $ONNX2MLIR_THREADS or the CPUs the process may use. */\n"
          "void %s_set_threads(int n);\n\n"
          "#ifdef __cplusplus\n}\n#endif\n#endif\n",
          p->name, p->name, shared_definitions, p->name, p->n_inputs, p->name, p->n_outputs, p->name, p->name,
          p->name, p->name, p->name, p->name,
          p->weights_file ? "The weights are in a file of their own (compile --weights): the first\n"
                            " * run maps the one compile wrote, unless this maps `path` before."
                          : "The weights are inside the library: this does nothing.",
          p->name, p->name);
  return ferror(out) ? -1 : 0;
}

/* ---- the wrapper: per-model tables --------------------------------------- */

static void c_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(out, "\\%c", *c);
    else if (*c >= ' ' && *c < 127 && *c != '?')
      fputc(*c, out);
    else
      fprintf(out, "\\%03o", *c);
  }
  fputc('"', out);
}

/* Numbers the inputs' symbolic dims, flattened input by input: dims with
 * the same symbol share a number, -1 for a fixed dim or one without a
 * symbol. Returns how many numbers there are. */
static int symbol_groups(const compile_plan *p, int *groups) {
  const char *seen[4096];
  int n_seen = 0, at = 0;
  for (int i = 0; i < p->n_inputs; i++)
    for (int k = 0; k < p->inputs[i].rank; k++, at++) {
      const char *sym = p->inputs[i].symbols ? p->inputs[i].symbols[k] : NULL;
      groups[at] = -1;
      if (!sym || p->inputs[i].dims[k] >= 0) continue;
      int g = 0;
      while (g < n_seen && strcmp(seen[g], sym) != 0) g++;
      if (g == n_seen && n_seen < 4096) seen[n_seen++] = sym;
      if (g < n_seen) groups[at] = g;
    }
  return n_seen;
}

typedef enum { TABLE_DTYPE, TABLE_RANK, TABLE_BYTES, TABLE_DIMS, TABLE_GROUPS, TABLE_OFFSET } table_kind;

static void table(FILE *out, const char *ctype, const char *name, const int *groups, const compile_tensor *t, int n,
                  table_kind kind) {
  fprintf(out, "static const %s %s[] = {", ctype, name);
  int items = 0;
  for (int i = 0; i < n; i++) {
    if (kind == TABLE_DIMS || kind == TABLE_GROUPS) {
      for (int k = 0; k < t[i].rank; k++, items++)
        fprintf(out, "%s%" PRId64, items ? ", " : "", kind == TABLE_DIMS ? t[i].dims[k] : (int64_t)groups[items]);
      continue;
    }
    int64_t v = kind == TABLE_DTYPE ? (int64_t)t[i].dtype
                : kind == TABLE_RANK ? t[i].rank
                : kind == TABLE_BYTES ? (o2m_dtype_bits(t[i].dtype) < 8 ? 1 : o2m_dtype_bits(t[i].dtype) / 8)
                                      : (int64_t)t[i].offset;
    fprintf(out, "%s%" PRId64, items++ ? ", " : "", v);
  }
  fprintf(out, "%s};\n", items ? "" : "0");
}

static size_t words_of(const compile_tensor *t, int n) {
  size_t w = 0;
  for (int i = 0; i < n; i++) w += 3 + 2 * (size_t)t[i].rank;
  return w;
}

static int write_tables(FILE *out, const compile_plan *p) {
  size_t in_dims = 0;
  for (int i = 0; i < p->n_inputs; i++) in_dims += (size_t)p->inputs[i].rank;
  int *groups = malloc((in_dims + 1) * sizeof(int));
  if (!groups) return -1;
  int n_groups = symbol_groups(p, groups);
  fprintf(out, "#define N_IN %d\n#define N_OUT %d\n#define N_WEIGHTS %d\n#define N_GROUPS %d\n", p->n_inputs,
          p->n_outputs, p->n_weights, n_groups);
  fprintf(out, "#define IN_WORDS %zu\n#define OUT_WORDS %zu\n#define WEIGHT_WORDS %zu\n",
          words_of(p->inputs, p->n_inputs), words_of(p->outputs, p->n_outputs), words_of(p->weights, p->n_weights));
  table(out, "int32_t", "in_dtype", groups, p->inputs, p->n_inputs, TABLE_DTYPE);
  table(out, "int32_t", "in_rank", groups, p->inputs, p->n_inputs, TABLE_RANK);
  table(out, "int64_t", "in_dims", groups, p->inputs, p->n_inputs, TABLE_DIMS);
  table(out, "int32_t", "in_group", groups, p->inputs, p->n_inputs, TABLE_GROUPS);
  table(out, "int32_t", "out_dtype", groups, p->outputs, p->n_outputs, TABLE_DTYPE);
  table(out, "int32_t", "out_rank", groups, p->outputs, p->n_outputs, TABLE_RANK);
  table(out, "int32_t", "out_bytes", groups, p->outputs, p->n_outputs, TABLE_BYTES);
  table(out, "int32_t", "weight_rank", groups, p->weights, p->n_weights, TABLE_RANK);
  table(out, "int64_t", "weight_dims", groups, p->weights, p->n_weights, TABLE_DIMS);
  table(out, "uint64_t", "weight_offset", groups, p->weights, p->n_weights, TABLE_OFFSET);
  fputs("static const char *const input_names[] = {", out);
  for (int i = 0; i < p->n_inputs; i++) c_string(out, p->inputs[i].name), fputs(", ", out);
  fputs("0};\nstatic const char *const output_names[] = {", out);
  for (int i = 0; i < p->n_outputs; i++) c_string(out, p->outputs[i].name), fputs(", ", out);
  fputs("0};\n", out);
  /* the weights, 64-byte aligned, in the library's read-only data */
  if (p->weights_file) {
    fputs("#define EXTERNAL_WEIGHTS 1\nstatic const char weights_path[] = ", out);
    c_string(out, p->weights_file);
    fprintf(out, ";\n#define WEIGHTS_ID UINT64_C(%" PRIu64 ")\n#define WEIGHTS_HEADER %d\n#define WEIGHTS_MAGIC ",
            p->weights_id, COMPILE_WEIGHTS_HEADER);
    c_string(out, COMPILE_WEIGHTS_MAGIC);
    fputs("\nstatic const unsigned char *o2m_weights;\n", out);
  } else if (p->blob_path) {
    fputs("__asm__(\".section .rodata\\n.balign 64\\n.globl o2m_weights\\n.hidden o2m_weights\\n"
          ".type o2m_weights, @object\\no2m_weights:\\n.incbin ",
          out);
    fputs("\\\"", out);
    for (const char *c = p->blob_path; *c; c++) fputc(*c, out); /* checked plain by compile.c */
    fprintf(out, "\\\"\\n.size o2m_weights, %" PRIu64 "\\n.previous\\n\");\n", p->blob_bytes);
    fputs("extern const unsigned char o2m_weights[] __attribute__((visibility(\"hidden\")));\n", out);
  } else {
    fputs("static const unsigned char o2m_weights[1];\n", out);
  }
  fprintf(out, "#define WEIGHT_BYTES %" PRIu64 "\n", p->blob_bytes);
  /* the compiled entry and a call of it with every argument */
  int n_args = p->n_inputs + p->n_weights;
  fprintf(out, "void _mlir_ciface_%s(void *results", p->entry);
  for (int i = 0; i < n_args; i++) fprintf(out, ", void *a%d", i);
  fprintf(out, ");\nstatic void call_entry(void *results, void **args) {\n  (void)args;\n  _mlir_ciface_%s(results",
          p->entry);
  for (int i = 0; i < n_args; i++) fprintf(out, ", args[%d]", i);
  fputs(");\n}\n", out);
  free(groups);
  return 0;
}

/* ---- the wrapper: the same for every model -------------------------------- */

/* The weights in a file of their own: mapped once, checked against the
 * library's id and size. */
static const char external_weights_text[] =
    "#include <fcntl.h>\n#include <pthread.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n"
    "static pthread_mutex_t weights_lock = PTHREAD_MUTEX_INITIALIZER;\n"
    "static uint64_t read_u64(const unsigned char *p) {\n"
    "  uint64_t v = 0;\n"
    "  for (int b = 7; b >= 0; b--) v = v << 8 | p[b];\n"
    "  return v;\n"
    "}\n"
    "/* Maps the file at `path` (weights_lock held). */\n"
    "static int map_weights(const char *path) {\n"
    "  int fd = open(path, O_RDONLY | O_CLOEXEC);\n"
    "  if (fd < 0) return ONNX2MLIR_ERR_WEIGHTS;\n"
    "  struct stat st;\n"
    "  void *m = MAP_FAILED;\n"
    "  if (fstat(fd, &st) == 0 && (uint64_t)st.st_size == WEIGHTS_HEADER + (uint64_t)WEIGHT_BYTES)\n"
    "    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);\n"
    "  close(fd);\n"
    "  if (m == MAP_FAILED) return ONNX2MLIR_ERR_WEIGHTS;\n"
    "  const unsigned char *h = m;\n"
    "  if (memcmp(h, WEIGHTS_MAGIC, sizeof(WEIGHTS_MAGIC)) != 0 || read_u64(h + 16) != WEIGHTS_ID ||\n"
    "      read_u64(h + 24) != (uint64_t)WEIGHT_BYTES) {\n"
    "    munmap(m, (size_t)st.st_size);\n"
    "    return ONNX2MLIR_ERR_WEIGHTS;\n"
    "  }\n"
    "  __atomic_store_n(&o2m_weights, h + WEIGHTS_HEADER, __ATOMIC_RELEASE);\n"
    "  return ONNX2MLIR_OK;\n"
    "}\n"
    "int MODEL(load_weights)(const char *path) {\n"
    "  if (!path) return ONNX2MLIR_ERR_ARGUMENT;\n"
    "  pthread_mutex_lock(&weights_lock);\n"
    "  int status = o2m_weights ? ONNX2MLIR_ERR_ARGUMENT : map_weights(path);\n"
    "  pthread_mutex_unlock(&weights_lock);\n"
    "  return status;\n"
    "}\n"
    "static int weights_ready(void) {\n"
    "  if (__atomic_load_n(&o2m_weights, __ATOMIC_ACQUIRE)) return ONNX2MLIR_OK;\n"
    "  pthread_mutex_lock(&weights_lock);\n"
    "  int status = o2m_weights ? ONNX2MLIR_OK : map_weights(weights_path);\n"
    "  pthread_mutex_unlock(&weights_lock);\n"
    "  return status;\n"
    "}\n";

static const char embedded_weights_text[] =
    "int MODEL(load_weights)(const char *path) {\n"
    "  (void)path;\n"
    "  return ONNX2MLIR_OK;\n"
    "}\n"
    "static int weights_ready(void) { return ONNX2MLIR_OK; }\n";

static const char runtime_text[] =
    "#define CONSTANT_ALLOCATED ((void *)(uintptr_t)0xdeadbeef) /* memref.get_global's */\n"
    "\n"
    "/* Copies a strided view into dense memory (the results). */\n"
    "static void copy_strided(int64_t esize, int64_t rank, const int64_t *sizes, const char *src,\n"
    "                         const int64_t *src_strides, char *dst, const int64_t *dst_strides) {\n"
    "  int64_t count = 1, inner = rank, run = 1;\n"
    "  for (int64_t k = 0; k < rank; k++) count *= sizes[k];\n"
    "  if (count == 0) return;\n"
    "  /* the innermost dims both views hold contiguously: one run */\n"
    "  while (inner > 0 && (sizes[inner - 1] == 1 || (src_strides[inner - 1] == run && dst_strides[inner - 1] == run)))\n"
    "    run *= sizes[--inner];\n"
    "  for (int64_t r = 0; r < count / run; r++) {\n"
    "    int64_t rest = r, s = 0, d = 0;\n"
    "    for (int64_t k = inner - 1; k >= 0; k--) {\n"
    "      int64_t i = rest % sizes[k];\n"
    "      rest /= sizes[k];\n"
    "      s += i * src_strides[k], d += i * dst_strides[k];\n"
    "    }\n"
    "    memcpy(dst + d * esize, src + s * esize, (size_t)(run * esize));\n"
    "  }\n"
    "}\n"
    "\n"
    "/* The runtime (src/runtime/runtime.h): the guarded call, and the owner of\n"
    " * the per-model state its kernels keep. */\n"
    "int o2m_rt_guarded_call(void (*fn)(void **), void **args);\n"
    "const void *o2m_rt_set_owner(const void *owner);\n"
    "int o2m_rt_set_call_threads(int n);\n"
    "static int model_threads; /* MODEL(set_threads) */\n"
    "void MODEL(set_threads)(int n) { __atomic_store_n(&model_threads, n > 0 ? n : 0, __ATOMIC_RELAXED); }\n"
    "void o2m_rt_free(void *p);\n"
    "static const char model_owner = 0;\n"
    "static void call_packed(void **p) { call_entry(p[0], (void **)p[1]); }\n"
    "\n"
    "static void describe(int64_t *d, void *data, int rank, const int64_t *dims) {\n"
    "  d[0] = d[1] = (int64_t)(intptr_t)data;\n"
    "  d[2] = 0;\n"
    "  int64_t stride = 1;\n"
    "  for (int k = rank - 1; k >= 0; k--) {\n"
    "    d[3 + k] = dims[k];\n"
    "    d[3 + rank + k] = stride;\n"
    "    stride *= dims[k] > 0 ? dims[k] : 1;\n"
    "  }\n"
    "}\n"
    "\n"
    "static int check_inputs(const onnx2mlir_tensor *inputs) {\n"
    "  int64_t group_size[N_GROUPS + 1];\n"
    "  for (int g = 0; g <= N_GROUPS; g++) group_size[g] = -1;\n"
    "  const int64_t *dims = in_dims;\n"
    "  const int32_t *groups = in_group;\n"
    "  for (int i = 0; i < N_IN; i++) {\n"
    "    const onnx2mlir_tensor *t = &inputs[i];\n"
    "    if (t->dtype != in_dtype[i] || t->rank != in_rank[i]) return ONNX2MLIR_ERR_ARGUMENT;\n"
    "    int64_t count = 1;\n"
    "    for (int k = 0; k < t->rank; k++) {\n"
    "      int64_t d = t->dims[k];\n"
    "      if (d < 0 || (dims[k] >= 0 && d != dims[k])) return ONNX2MLIR_ERR_ARGUMENT;\n"
    "      if (groups[k] >= 0 && group_size[groups[k]] >= 0 && group_size[groups[k]] != d) return ONNX2MLIR_ERR_ARGUMENT;\n"
    "      if (groups[k] >= 0) group_size[groups[k]] = d;\n"
    "      if (d && count > INT64_MAX / d) return ONNX2MLIR_ERR_ARGUMENT;\n"
    "      count *= d;\n"
    "    }\n"
    "    if (count && !t->data) return ONNX2MLIR_ERR_ARGUMENT;\n"
    "    dims += t->rank, groups += t->rank;\n"
    "  }\n"
    "  return ONNX2MLIR_OK;\n"
    "}\n"
    "\n"
    "/* Whether the generated code allocated the buffer `p` of result i (not an\n"
    " * input, a weight, a constant, or a buffer an earlier result has). */\n"
    "static int owned(void *p, const onnx2mlir_tensor *inputs, const int64_t *results, int i) {\n"
    "  if (!p || p == CONSTANT_ALLOCATED) return 0;\n"
    "  const unsigned char *w = o2m_weights;\n"
    "  if (w && (const unsigned char *)p >= w && (const unsigned char *)p < w + WEIGHT_BYTES) return 0;\n"
    "  for (int k = 0; k < N_IN; k++)\n"
    "    if (inputs[k].data == p) return 0;\n"
    "  for (int k = 0; k < i; results += 3 + 2 * out_rank[k], k++)\n"
    "    if ((void *)(intptr_t)results[0] == p) return 0;\n"
    "  return 1;\n"
    "}\n"
    "\n"
    "/* Copies each result out into memory of malloc's (what NAME_free_outputs\n"
    " * frees) and gives the buffers the generated code allocated back to the\n"
    " * runtime's allocator, which keeps them for the next call. */\n"
    "static int take_results(const onnx2mlir_tensor *inputs, int64_t *results, onnx2mlir_tensor *outputs) {\n"
    "  void *to_free[N_OUT + 1];\n"
    "  int n_free = 0, status = ONNX2MLIR_OK;\n"
    "  int64_t *r = results;\n"
    "  for (int i = 0; i < N_OUT; r += 3 + 2 * out_rank[i], i++) {\n"
    "    int rank = out_rank[i];\n"
    "    int64_t esize = out_bytes[i], count = 1;\n"
    "    void *allocated = (void *)(intptr_t)r[0];\n"
    "    char *start = (char *)(intptr_t)r[1] + r[2] * esize;\n"
    "    onnx2mlir_tensor *t = &outputs[i];\n"
    "    t->dtype = out_dtype[i], t->rank = rank, t->data = NULL;\n"
    "    for (int k = 0; k < rank; k++) count *= (t->dims[k] = r[3 + k]);\n"
    "    if (owned(allocated, inputs, results, i)) to_free[n_free++] = allocated;\n"
    "    if (!count) continue;\n"
    "    if (!(t->data = malloc((size_t)(count * esize)))) {\n"
    "      status = ONNX2MLIR_ERR_NOMEM;\n"
    "      continue;\n"
    "    }\n"
    "    int64_t strides[ONNX2MLIR_MAX_RANK + 1], stride = 1;\n"
    "    for (int k = rank - 1; k >= 0; k--) strides[k] = stride, stride *= t->dims[k];\n"
    "    copy_strided(esize, rank, r + 3, start, r + 3 + rank, t->data, strides);\n"
    "  }\n"
    "  for (int k = 0; k < n_free; k++) o2m_rt_free(to_free[k]);\n"
    "  if (status != ONNX2MLIR_OK)\n"
    "    for (int i = 0; i < N_OUT; i++) free(outputs[i].data), outputs[i].data = NULL;\n"
    "  return status;\n"
    "}\n"
    "\n"
    "int MODEL(run)(const onnx2mlir_tensor *inputs, int n_inputs, onnx2mlir_tensor *outputs, int n_outputs) {\n"
    "  if (n_inputs != N_IN || n_outputs != N_OUT || (N_IN && !inputs) || !outputs) return ONNX2MLIR_ERR_ARGUMENT;\n"
    "  int status = check_inputs(inputs);\n"
    "  if (status == ONNX2MLIR_OK) status = weights_ready();\n"
    "  if (status != ONNX2MLIR_OK) return status;\n"
    "  int64_t *words = calloc(IN_WORDS + WEIGHT_WORDS + OUT_WORDS + 1, sizeof(int64_t));\n"
    "  void **args = calloc(N_IN + N_WEIGHTS + 1, sizeof(void *));\n"
    "  if (!words || !args) {\n"
    "    free(words), free(args);\n"
    "    return ONNX2MLIR_ERR_NOMEM;\n"
    "  }\n"
    "  int64_t *d = words, *results = words + IN_WORDS + WEIGHT_WORDS;\n"
    "  for (int i = 0; i < N_IN; d += 3 + 2 * in_rank[i], i++)\n"
    "    describe(d, inputs[i].data, in_rank[i], inputs[i].dims), args[i] = d;\n"
    "  const int64_t *wd = weight_dims;\n"
    "  for (int i = 0; i < N_WEIGHTS; wd += weight_rank[i], d += 3 + 2 * weight_rank[i], i++)\n"
    "    describe(d, (void *)(o2m_weights + weight_offset[i]), weight_rank[i], wd), args[N_IN + i] = d;\n"
    "  void *packed[2] = {results, args};\n"
    "  const void *owner = o2m_rt_set_owner(&model_owner);\n"
    "  int threads = o2m_rt_set_call_threads(__atomic_load_n(&model_threads, __ATOMIC_RELAXED));\n"
    "  int failed = o2m_rt_guarded_call(call_packed, packed);\n"
    "  o2m_rt_set_call_threads(threads);\n"
    "  o2m_rt_set_owner(owner);\n"
    "  if (failed >= 0) {\n"
    "    free(words), free(args);\n"
    "    return ONNX2MLIR_ERR_BRANCH; /* what that call had allocated is lost */\n"
    "  }\n"
    "  status = take_results(inputs, results, outputs);\n"
    "  free(words), free(args);\n"
    "  return status;\n"
    "}\n"
    "\n"
    "void MODEL(free_outputs)(onnx2mlir_tensor *outputs, int n_outputs) {\n"
    "  for (int i = 0; outputs && i < n_outputs; i++) free(outputs[i].data), outputs[i].data = NULL;\n"
    "}\n"
    "\n"
    "const char *MODEL(input_name)(int i) { return i >= 0 && i < N_IN ? input_names[i] : 0; }\n"
    "const char *MODEL(output_name)(int i) { return i >= 0 && i < N_OUT ? output_names[i] : 0; }\n";

int compile_write_wrapper(FILE *out, const compile_plan *p, const char *header_name) {
  fprintf(out, "/* the wrapper of %s's compiled entry, written by onnx2mlir %s */\n", p->name, O2M_VERSION_STRING);
  fputs("#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n", out);
  fputs("#include ", out);
  c_string(out, header_name);
  fprintf(out, "\n#define MODEL(f) %s_##f\n", p->name);
  if (write_tables(out, p)) return -1;
  fputs(p->weights_file ? external_weights_text : embedded_weights_text, out);
  fputs(runtime_text, out);
  return ferror(out) ? -1 : 0;
}
