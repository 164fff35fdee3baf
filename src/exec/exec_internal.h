/* exec_internal.h - what the files of src/exec share: the entry
 * signature, MLIR diagnostic capture, the lowering pipeline and the memref
 * descriptor marshalling. Not for use outside src/exec.
 */
#ifndef O2M_EXEC_INTERNAL_H
#define O2M_EXEC_INTERNAL_H

#include <assert.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <mlir-c/Diagnostics.h>
#include <mlir-c/ExecutionEngine.h>
#include <mlir-c/IR.h>

struct LLVMOpaqueModule;

#include "exec/exec.h"
#include "runtime/runtime.h"

/* One argument or result of the entry function: a ranked tensor. */
typedef struct exec_arg {
  o2m_dtype dtype; /* the ONNX dtype of the element type (ints signed) */
  int rank;
  int64_t *dims; /* `rank` entries, -1 for a dynamic dim */
  int any_align; /* a weight its code reads at any address (emit.h,
                    O2M_WEIGHT_ANY_ALIGN_ATTR): passed where it lies */
} exec_arg;

/* Milliseconds of CLOCK_MONOTONIC, for the timings. */
static inline double exec_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Whether op is the operation `name` ("linalg.matmul"). */
static inline int exec_op_named(MlirOperation op, const char *name) {
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
  return s.length == strlen(name) && memcmp(s.data, name, s.length) == 0;
}

/* Whether the function op fn has a body (is not a declaration). */
static inline int exec_has_body(MlirOperation fn) {
  return !mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0)));
}

/* What the entry function takes and returns (exec_signature.c). */
typedef struct exec_signature {
  int n_args, n_results;
  exec_arg *args, *results;
  const char **weight_names; /* n_args entries: the initializer an argument
                                carries (O2M_WEIGHT_ARG_ATTR), NULL for a
                                runtime input */
} exec_signature;

/* The func.func @entry of `module`, or a null operation. */
MlirOperation exec_find_entry(MlirModule module, const char *entry);
/* Reads @entry's signature into `sig` (arrays in `arena`) and gives it
 * the `llvm.emit_c_interface` attribute. */
o2m_status exec_read_signature(MlirModule module, const char *entry, o2m_arena *arena,
                               exec_signature *sig, o2m_diag *diag);

/* ---- objects and units ------------------------------------------------ */

/* An object file in memory (malloc'd data). */
typedef struct exec_blob {
  char *data;
  size_t size;
} exec_blob;

/* Optimises an LLVM module (default<O opt_level>, without LLVM's loop
 * unrolling) and generates position-independent code for `cpu` (NULL:
 * the host CPU and its features) into *out, at code_level (0-3: instruction selection and
 * register allocation, as llc's -O); 0, or -1 with a malloc'd *error.
 * Touches nothing but mod and its context, so units compile on threads of
 * their own (the native target initialised first). */
int exec_llvm_object(struct LLVMOpaqueModule *mod, const char *cpu, int opt_level, int code_level, exec_blob *out, char **error);
/* Whether `cpu` names a CPU `compile --cpu` knows for this host's
 * architecture (exec_object.c's table; NULL and "native": the host's);
 * a usage error listing the known names if not. */
o2m_status exec_check_cpu(const char *cpu, o2m_diag *diag);
/* Writes the blob to the file `path`; 0, or -1 when it cannot. */
int exec_blob_write(const char *path, const exec_blob *b);

enum { EXEC_MAX_UNITS = 16 };
/* The threads compilation uses: one per core, EXEC_MAX_UNITS at most, or
 * ONNX2MLIR_COMPILE_THREADS (1: one unit); and how many parts to cut the
 * entry into for them (0 for one thread). */
int exec_compile_threads(void);
int exec_parts_for(int threads);
/* How many @<entry>_part<i> functions (exec_outline_entry) the module,
 * lowered to the LLVM dialect, has; 0 when it cannot be split. */
int exec_count_parts(MlirModule module, const char *entry);
/* Compiles such a module as one unit per part and one for the rest, on
 * n_threads threads (exec_units.c) for `cpu` (NULL: the host's):
 * objects[0..*n_objects) (malloc'd data, the caller's), the first defining `_mlir__mlir_ciface_<entry>`
 * (packed_fn). The module is translated, not changed or destroyed. */
o2m_status exec_compile_units(MlirModule module, const char *entry, const char *cpu, int opt_level, int n_threads,
                              exec_blob *objects, int *n_objects, o2m_compile_times *times, o2m_diag *diag);

/* Reads @entry's signature into `sig`, makes its runtime inputs
 * read-only, lowers the module to the LLVM dialect (products in loops,
 * no BLAS) and compiles it to position-independent objects for `cpu`
 * (NULL: the host's; LLVM at opt_level 0..3), objects[0..*n_objects) with malloc'd
 * data, the caller's. The module is changed, not destroyed. */
o2m_status o2m_exec_write_objects(MlirModule module, const char *entry, const char *cpu, int opt_level,
                                  exec_blob *objects, int *n_objects, o2m_arena *arena, exec_signature *sig,
                                  o2m_diag *diag);

/* ---- MLIR diagnostics ---------------------------------------------- */

/* The first MLIR error of a step, "location: message", and how many. */
typedef struct exec_errors {
  char text[2048]; /* the first error, then up to MAX_MORE others, a line each */
  int count;
  MlirContext ctx;
  MlirDiagnosticHandlerID id;
} exec_errors;

/* Routes the context's diagnostics into `errors` until exec_capture_end;
 * nothing reaches stderr meanwhile. */
void exec_capture_begin(exec_errors *errors, MlirContext ctx);
void exec_capture_end(exec_errors *errors);

/* Which of the runtime's kernels the products call: those this process
 * found (the JIT), or all (a library: its process finds its own and runs
 * loops for what it lacks). */
typedef enum exec_kernels { EXEC_KERNELS_FOUND = 0, EXEC_KERNELS_ALL } exec_kernels;

/* Lowers a verified Linalg-on-tensors module to the LLVM dialect in place
 * (bufferization, deallocation, loops, then LLVM), timing each pass into
 * `times` (may be NULL). With blas_calls, the
 * float32 products become BLAS calls (exec_blas.c) and *blas_calls
 * counts them; NULL keeps every product in loops. */
o2m_status exec_lower_to_llvm(MlirModule module, const char *entry, int parts, exec_kernels kernels, int *blas_calls,
                              o2m_compile_times *times, o2m_diag *diag);

/* Cuts @entry's body (on buffers) into consecutive parts, each a function
 * @<entry>_part<i> that @entry calls, when the body holds at least min_ops
 * ops (exec_outline.c): each copy of a repeated block a part (identical
 * parts then merged, exec_merge_parts), the rest into about n_parts (none
 * when n_parts < 2 and nothing repeats). Returns how many functions are
 * left; *out says more. */
typedef struct exec_outlined {
  int calls;     /* parts the entry calls */
  int functions; /* distinct part functions among them */
  int passed;    /* the values parts return for later ops */
} exec_outlined;
int exec_outline_entry(MlirModule module, const char *entry, int n_parts, long min_ops, exec_outlined *out);
enum { EXEC_MIN_OUTLINED_OPS = 256 };
/* The first slot of pointer p in an open-addressing table of `cap` slots
 * (a power of two): the tables of ops the outliner, the repeat search and
 * the early frees keep. */
static inline size_t exec_ptr_slot(const void *p, size_t cap) {
  return ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull & (cap - 1);
}
/* Moves each memref.dealloc of a buffer the entry allocates at its top
 * level to just after the buffer's last use (exec_free_early.c); returns
 * how many moved. */
int exec_free_early(MlirModule module, const char *entry);
/* Moves each top-level memref.alloc of the entry down to its first use
 * and each view to its first use, with a clone before every further
 * top-level user (exec_near_use.c); returns how many ops moved or were
 * made. */
int exec_place_near_use(MlirModule module, const char *entry);
/* Takes out of each bufferization.dealloc at the entry's top level the
 * buffers that can alias none of its other operands, each freed by a
 * memref.dealloc of its own (exec_dealloc_split.c); returns how many. */
int exec_split_entry_deallocs(MlirModule module, const char *entry);
/* Copies of blocks of the entry's top-level ops that repeat (a model's
 * layers; exec_repeats.c): ops [first, end) of each, in order; `again` is
 * 0 for the first copy of a run, 1 for the others. Up to max; returns how
 * many (none with ONNX2MLIR_NO_SHARED_LAYERS=1: exec_shared_layers() is 0). */
typedef struct exec_copy {
  int first, end, again;
} exec_copy;
int exec_shared_layers(void);
int exec_find_copies(const MlirOperation *ops, int n, exec_copy *out, int max);
/* A part: its function (@<entry>_part<i>) and the entry's call of it. */
typedef struct exec_part {
  MlirOperation fn, call;
} exec_part;
/* The parts[0..n) whose code is the same are made one: the others are
 * destroyed, their calls call the first, and the rest are renumbered
 * @<entry>_part<j> in order. Returns how many functions are left. */
int exec_merge_parts(const char *entry, exec_part *parts, int n);
/* A list of values, each once (exec_outline.c): adds v unless it is
 * there; -1 when out of memory. */
typedef struct exec_value_list {
  int n, cap;
  MlirValue *v;
} exec_value_list;
int exec_value_list_add(exec_value_list *list, MlirValue v);
/* Replaces v by with in the uses whose owner op `where` accepts; -1 when
 * out of memory (nothing replaced). */
int exec_replace_uses_if(MlirValue v, MlirValue with, int (*where)(MlirOperation owner, void *user), void *user);

/* ---- text printed from MLIR (exec_text.c) -------------------------- */

/* Grown as needed and NUL-terminated; `failed` once out of memory. */
typedef struct exec_text {
  char *s;
  size_t len, cap;
  int failed;
} exec_text;
void exec_text_put(exec_text *t, const char *s, size_t n);
void exec_text_append(MlirStringRef s, void *user); /* an MLIR print callback */
/* fn's printed code without its name (from its arguments on); -1 when it
 * could not be printed. */
int exec_function_code(MlirOperation fn, MlirOpPrintingFlags flags, exec_text *t);
uint64_t exec_hash_bytes(const char *p, size_t n);

/* The loops split across a call's threads (exec_parallel.c): on loops,
 * the big outermost scf.parallel ops moved into functions
 * @<func>_par<k>(lo, hi, captures...) (returns how many); in the LLVM
 * dialect, their calls routed through the runtime's pool. Off with
 * ONNX2MLIR_NO_PARALLEL_LOOPS=1 (exec_parallel_loops). */
int exec_parallel_loops(void);
int exec_outline_parallel(MlirModule module);
/* The estimated work of one iteration of a split function's dim; and the
 * mark of one whose calls come from several parts of the entry, whose
 * _run is then external (exec_parallel_share.c). */
#define PARALLEL_COST_ATTR "o2m.parallel_cost"
#define PARALLEL_SHARED_ATTR "o2m.parallel_shared"
/* Every call_op under root ("func.call", "llvm.call") whose callee is
 * from[i] calls to[i] (a FlatSymbolRefAttr) instead. */
void exec_redirect_calls(MlirOperation root, const char *call_op, int n, const MlirStringRef *from,
                         const MlirAttribute *to);
/* Split functions equal but for their names merged into the first; how
 * many went, and how many of those into a function of another part
 * (exec_parallel_share.c). */
int exec_share_parallel(MlirModule module, int *across_parts);
o2m_status exec_dispatch_parallel(MlirModule module, o2m_diag *diag);

/* ---- If branches that fail when taken (exec_branch_failure.c) ------- */

/* The messages of the module's O2M_BRANCH_FAILURES_ATTR (emit.h), copied
 * into `arena`; none when the module has no such attribute. */
typedef struct exec_branch_failures {
  int n;
  const char **messages;
} exec_branch_failures;
o2m_status exec_read_branch_failures(MlirModule module, o2m_arena *arena,
                                     exec_branch_failures *out, o2m_diag *diag);

/* ---- compiled code on disk (exec_cache.c) ----------------------------- */

/* The packed wrapper MLIR's ExecutionEngine adds: args[i] points at the
 * i-th parameter of _mlir_ciface_<entry> (results first). */
typedef void (*packed_fn)(void **args);

/* Writes the entry of `key` under `dir` with these objects; 0 on
 * success (a failure leaves no entry). */
int exec_cache_store(const char *dir, const char *key, const exec_blob *objects, int n_objects,
                     const exec_signature *sig, const exec_branch_failures *failures, int blas_calls);
/* An engine's code (created with object dumps on) as one object. */
int exec_engine_object(MlirExecutionEngine engine, const char *dir, exec_blob *out);
/* An ORC LLJIT holding the objects (copied), linked with each other, the
 * executor's runtime functions and the process: 0 and its packed @entry,
 * or -1. Release it with exec_cache_release. */
int exec_jit_load(const exec_blob *objects, int n_objects, const char *entry, void **jit, packed_fn *call);
/* Loads the entry of `key`: 0 and the JIT holding it (release it with
 * exec_cache_release), its packed @entry and what entry.txt says; -1 when
 * there is none, it is another key's, or its object is damaged. */
int exec_cache_load(const char *dir, const char *key, const char *entry, o2m_arena *arena, exec_signature *sig,
                    exec_branch_failures *failures, int *blas_calls, void **jit, packed_fn *call);
void exec_cache_release(void *jit);
/* Whether the cache folder `dir` may hold code this process will load:
 * missing (it is made with mode 0700), or a folder of this user that its
 * group and others cannot write; else 0 and the reason in `why`. */
int exec_cache_private(const char *dir, char *why, size_t size);
/* The cache's size limit (exec_cache_prune.c): ONNX2MLIR_CACHE_LIMIT_MB,
 * default 2048 MiB, 0 for none; removes the least recently used entries
 * of `dir` but `keep` (an entry's folder name) until the rest fit; marks
 * an entry used (its entry.txt). */
uint64_t exec_cache_limit(void);
void exec_cache_prune(const char *dir, const char *keep, uint64_t limit);
void exec_cache_touch(const char *entry_file);

/* ---- products as calls of the runtime's kernels (exec_blas.c) -------- */

/* On a bufferized module: every float32 product (linalg.matmul,
 * linalg.batch_matmul, the im2col contraction) becomes a call of its
 * kernel in the runtime (memref.cast to strided memrefs, func.call, the
 * private declaration with llvm.emit_c_interface); *count receives how
 * many. */
o2m_status exec_lower_blas_calls(MlirModule module, exec_kernels kernels, int *count, o2m_diag *diag);
/* Before bufferization: NHWC convolutions (upstream tosa-to-linalg's)
 * become an im2col gather and a product for BLAS, by upstream's
 * transform dialect (convert_conv2d_to_img2col); nothing without BLAS. */
o2m_status exec_convs_to_products(MlirModule module, exec_kernels kernels, o2m_diag *diag);

/* Upstream's elementwise fusion on tensors, the float products kept as
 * named ops for the kernels (exec_fusion.c). */
o2m_status exec_fuse_elementwise(MlirModule module, o2m_diag *diag);

/* ---- element types and memref descriptors --------------------------- */

/* The ONNX dtype of an MLIR element type; O2M_DT_UNDEFINED when the
 * executor cannot marshal it. */
o2m_dtype exec_dtype_of(MlirType type);
/* Non-zero when a tensor of dtype `have` can feed an argument of `want`. */
int exec_dtype_feeds(o2m_dtype want, o2m_dtype have);

/* A memref descriptor as the generated code lays it out (MLIR's LLVM
 * lowering of memref<...>): allocated and aligned pointers, the offset,
 * then `rank` sizes and `rank` strides, all 8 bytes. Several results are
 * laid out one after the other in a struct without padding. */
typedef union exec_word {
  void *ptr;
  int64_t i;
} exec_word;
static_assert(sizeof(void *) == sizeof(int64_t), "64-bit targets only");

/* Words a descriptor of `rank` takes. */
static inline size_t exec_desc_words(int rank) { return 3 + 2 * (size_t)rank; }

/* Fills `desc` (exec_desc_words(t->rank) words) with a fresh, aligned
 * copy of t's data in the generated code's layout (sub-byte elements one
 * per byte). Free the buffer with exec_desc_free_input. */
o2m_status exec_desc_from_tensor(const o2m_tensor *t, exec_word *desc,
                                 o2m_diag *diag);
void exec_desc_free_input(exec_word *desc);
/* Whether t's own data has the generated code's layout (8 bits and up,
 * not bool, aligned to its element), so that it can be read in place. */
int exec_desc_borrowable(const o2m_tensor *t);
/* Bytes one element of d takes in the generated code's memory (sub-byte
 * types one each). */
size_t exec_elem_bytes(o2m_dtype d);
/* The same at any address (for exec_arg.any_align). */
int exec_desc_borrowable_anywhere(const o2m_tensor *t);
/* Fills `desc` for t's dims over `data` (t's layout, not copied). */
void exec_desc_view(const o2m_tensor *t, const void *data, exec_word *desc);


/* Copies the result described by `desc` (of signature `sig`) into a new
 * tensor in `arena`, in ONNX raw layout. */
o2m_status exec_desc_to_tensor(const exec_word *desc, const exec_arg *sig,
                               int index, o2m_arena *arena, o2m_tensor **out,
                               o2m_diag *diag);

#endif
