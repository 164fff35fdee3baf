/* exec_units.c - exec_compile_units: a module lowered to the LLVM dialect
 * whose entry was cut into parts (exec_outline.c) compiled as several
 * units at once, one thread each, into objects for the JIT (exec_jit.c).
 *
 * Owns: which unit holds which function (the parts dealt round the units; the
 * entry, its C wrapper and the other external functions in unit 0;
 * internal helpers in every unit that calls them), one clone of the
 * module per unit with the other units' functions left as declarations,
 * the translation of each to LLVM IR in a context of its own (on this
 * thread: MLIR's context is shared), the packed wrapper of
 * `_mlir_ciface_<entry>` (what MLIR's ExecutionEngine would add), and the
 * threads that optimise and generate code (exec_llvm_object).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Target/LLVMIR.h>

#include "exec/exec_internal.h"
#include "util/diag.h"

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

int exec_compile_threads(void) {
  const char *limit = getenv("ONNX2MLIR_COMPILE_THREADS");
  long n = limit && *limit ? strtol(limit, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > EXEC_MAX_UNITS ? EXEC_MAX_UNITS : (int)n;
}

/* Four parts a thread, so that a slow part does not hold the others up. */
int exec_parts_for(int threads) {
  if (threads < 2) return 0;
  return 4 * threads < EXEC_MAX_UNITS ? 4 * threads : EXEC_MAX_UNITS - 1;
}



/* The part number of an llvm.func @<entry>_part<i> or of a function made
 * from its loops, @<entry>_part<i>_..., or -1. */
static int part_of(MlirOperation fn, const char *entry) {
  MlirAttribute name = mlirOperationGetAttributeByName(fn, str("sym_name"));
  if (mlirAttributeIsNull(name)) return -1;
  MlirStringRef s = mlirStringAttrGetValue(name);
  size_t n = strlen(entry);
  if (s.length <= n + 5 || memcmp(s.data, entry, n) != 0 || memcmp(s.data + n, "_part", 5) != 0) return -1;
  int v = 0;
  size_t k = n + 5;
  for (; k < s.length && s.data[k] != '_'; k++) {
    if (s.data[k] < '0' || s.data[k] > '9' || v > 100000) return -1;
    v = v * 10 + (s.data[k] - '0');
  }
  return k > n + 5 ? v : -1; /* @<entry>_part<i>_par<k> (exec_parallel.c) too */
}

/* Whether fn is visible outside its module (external linkage). */
static int external(MlirOperation fn) {
  MlirAttribute linkage = mlirOperationGetAttributeByName(fn, str("linkage"));
  MlirAttribute ext = mlirAttributeParseGet(mlirOperationGetContext(fn), str("#llvm.linkage<external>"));
  return mlirAttributeIsNull(linkage) || mlirAttributeEqual(linkage, ext);
}

/* How many parts the module's entry has; 0 also when some global is
 * external (each unit would define it). */
int exec_count_parts(MlirModule module, const char *entry) {
  int n = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(module)); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (exec_op_named(op, "llvm.mlir.global") && external(op)) return 0;
    int p = exec_op_named(op, "llvm.func") && exec_has_body(op) ? part_of(op, entry) : -1;
    if (p >= n) n = p + 1;
  }
  return n;
}


static MlirAttribute sym_name(MlirOperation op) { return mlirOperationGetAttributeByName(op, str("sym_name")); }

/* The module without the bodies of its external functions (the parts,
 * the entry, its C wrapper): what every unit starts from. Internal
 * helpers keep theirs, so each unit has its own copy of those it calls,
 * except those of one part (its split loops, exec_parallel.c), which only
 * that part's unit gets. */
static MlirOperation skeleton_of(MlirOperation module, const char *entry) {
  MlirOperation skeleton = mlirOperationClone(module);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(skeleton, 0));
  for (MlirOperation op = mlirBlockGetFirstOperation(body), next; !mlirOperationIsNull(op); op = next) {
    next = mlirOperationGetNextInBlock(op);
    if (!exec_op_named(op, "llvm.func") || !exec_has_body(op)) continue;
    if (!external(op)) {
      if (part_of(op, entry) >= 0) mlirOperationDestroy(op);
      continue;
    }
    MlirRegion empty = mlirRegionCreate();
    mlirRegionTakeBody(mlirOperationGetRegion(op, 0), empty);
    mlirRegionDestroy(empty);
  }
  return skeleton;
}

/* The global names the unit's llvm.mlir.addressof ops take. */
typedef struct refs {
  int n, cap;
  MlirStringRef *names;
} refs;

static MlirWalkResult collect_ref(MlirOperation op, void *user) {
  refs *r = user;
  if (!exec_op_named(op, "llvm.mlir.addressof")) return MlirWalkResultAdvance;
  MlirAttribute name = mlirOperationGetAttributeByName(op, str("global_name"));
  if (mlirAttributeIsNull(name) || !mlirAttributeIsAFlatSymbolRef(name)) return MlirWalkResultAdvance;
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 256;
    MlirStringRef *grown = realloc(r->names, (size_t)cap * sizeof(*grown));
    if (!grown) return MlirWalkResultInterrupt;
    r->names = grown, r->cap = cap;
  }
  r->names[r->n++] = mlirFlatSymbolRefAttrGetValue(name);
  return MlirWalkResultAdvance;
}

/* Drops the module's internal globals no op of it takes the address of:
 * a model's constants go to the units that read them, not to each. */
static void drop_unread_globals(MlirOperation unit) {
  refs r = {0, 0, NULL};
  mlirOperationWalk(unit, collect_ref, &r, MlirWalkPreOrder);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(unit, 0));
  for (MlirOperation op = mlirBlockGetFirstOperation(body), next; !mlirOperationIsNull(op); op = next) {
    next = mlirOperationGetNextInBlock(op);
    if (!exec_op_named(op, "llvm.mlir.global") || external(op)) continue;
    MlirStringRef name = mlirStringAttrGetValue(sym_name(op));
    int read = 0;
    for (int i = 0; i < r.n && !read; i++) read = mlirStringRefEqual(r.names[i], name);
    if (!read) mlirOperationDestroy(op);
  }
  free(r.names);
}

/* Unit `part` (-1: the one with every external function but the parts;
 * else the parts p with p % n_part_units == part): a clone of the
 * skeleton with the bodies of its functions put back. */
static MlirOperation unit_module(MlirOperation module, MlirOperation skeleton, const char *entry, int part,
                                 int n_part_units) {
  MlirOperation unit = mlirOperationClone(skeleton);
  MlirBlock unit_body = mlirRegionGetFirstBlock(mlirOperationGetRegion(unit, 0));
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0));
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (!exec_op_named(op, "llvm.func") || !exec_has_body(op)) continue;
    int p = part_of(op, entry);
    if (part >= 0 ? p < 0 || p % n_part_units != part : p >= 0) continue;
    if (!external(op)) { /* one part's internal helper: absent from the skeleton */
      if (p >= 0) mlirBlockAppendOwnedOperation(unit_body, mlirOperationClone(op));
      continue;
    }
    MlirAttribute name = sym_name(op);
    for (MlirOperation decl = mlirBlockGetFirstOperation(unit_body); !mlirOperationIsNull(decl);
         decl = mlirOperationGetNextInBlock(decl)) {
      if (!exec_op_named(decl, "llvm.func") || !mlirAttributeEqual(sym_name(decl), name)) continue;
      mlirBlockInsertOwnedOperationBefore(unit_body, decl, mlirOperationClone(op));
      mlirOperationDestroy(decl);
      break;
    }
  }
  drop_unread_globals(unit);
  return unit;
}

/* `void _mlir__mlir_ciface_<entry>(void **args)`: calls the C wrapper
 * with *args[i] as its i-th parameter (all pointers). */
static int add_packed_wrapper(LLVMModuleRef mod, const char *entry) {
  char name[600];
  snprintf(name, sizeof(name), "_mlir_ciface_%s", entry);
  LLVMValueRef target = LLVMGetNamedFunction(mod, name);
  if (!target) return -1;
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0), fn_type = LLVMGlobalGetValueType(target);
  unsigned n = LLVMCountParamTypes(fn_type);
  LLVMTypeRef params[1024];
  if (n > 1024 || LLVMGetTypeKind(LLVMGetReturnType(fn_type)) != LLVMVoidTypeKind) return -1;
  LLVMGetParamTypes(fn_type, params);
  snprintf(name, sizeof(name), "_mlir__mlir_ciface_%s", entry);
  LLVMValueRef wrapper = LLVMAddFunction(mod, name, LLVMFunctionType(LLVMVoidTypeInContext(ctx), &ptr, 1, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, wrapper, "entry"));
  LLVMValueRef args[1024], packed = LLVMGetParam(wrapper, 0);
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef index = LLVMConstInt(LLVMInt64TypeInContext(ctx), i, 0);
    LLVMValueRef slot = LLVMBuildGEP2(b, ptr, packed, &index, 1, "");
    args[i] = LLVMBuildLoad2(b, params[i], LLVMBuildLoad2(b, ptr, slot, ""), "");
  }
  LLVMBuildCall2(b, fn_type, target, args, n, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  return 0;
}

/* The runtime's allocators (rt_alloc.c) return fresh memory, which
 * nothing else points to: said to LLVM, a loop that reads one new buffer
 * and writes another needs no run-time check that they overlap. */
static void mark_allocators(LLVMModuleRef mod) {
  static const char *const allocators[] = {"_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc"};
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  for (size_t i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++) {
    LLVMValueRef fn = LLVMGetNamedFunction(mod, allocators[i]);
    if (fn) LLVMAddAttributeAtIndex(fn, LLVMAttributeReturnIndex, LLVMCreateEnumAttribute(ctx, noalias, 0));
  }
}

/* ---- the opt level of each unit -------------------------------------------- */

/* Whether some function of mod has a loop: a branch back to a block at
 * or before its own in the function's layout (the translation keeps
 * MLIR's block order, where a loop's header comes before its body). */
static int has_loop(LLVMModuleRef mod) {
  enum { SLOTS = 1 << 12 }; /* a function's blocks, numbered in order; hashed by address */
  static _Thread_local struct {
    LLVMBasicBlockRef block;
    int index;
  } seen[SLOTS];
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    unsigned n = LLVMCountBasicBlocks(fn);
    if (n < 2) continue;
    if (n > SLOTS / 2) return 1; /* too many to number: take it as having one */
    memset(seen, 0, sizeof(seen));
    int index = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b), index++) {
      size_t h = ((size_t)b >> 4) & (SLOTS - 1);
      while (seen[h].block) h = (h + 1) & (SLOTS - 1);
      seen[h].block = b, seen[h].index = index;
    }
    index = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b), index++) {
      LLVMValueRef term = LLVMGetBasicBlockTerminator(b);
      unsigned n_succ = term ? LLVMGetNumSuccessors(term) : 0;
      for (unsigned i = 0; i < n_succ; i++) {
        LLVMBasicBlockRef to = LLVMGetSuccessor(term, i);
        size_t h = ((size_t)to >> 4) & (SLOTS - 1);
        while (seen[h].block && seen[h].block != to) h = (h + 1) & (SLOTS - 1);
        if (seen[h].block == to && seen[h].index <= index) return 1;
      }
    }
  }
  return 0;
}

/* The levels a unit is optimised and generated at: those asked for where
 * it has loops (what vectorisation, scheduling and register allocation
 * work on); for straight-line code (the entry's calls of its parts,
 * kernel calls, views) at most O1 and code at O0 (fast instruction
 * selection and register allocation), where the higher levels find
 * nothing more to do and only take time. */
static void unit_levels(LLVMModuleRef mod, int requested, int *opt_level, int *code_level) {
  int loops = has_loop(mod);
  *opt_level = requested > 1 && !loops ? 1 : requested;
  *code_level = loops ? requested : 0;
}

typedef struct unit {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  const char *cpu;
  int opt_level, code_level;
  exec_blob object;
  char *error;
} unit;

/* The units, the next one a thread takes and how many are ready: this
 * thread translates them one by one (MLIR's context is not shared across
 * threads) while the others already compile those translated. */
typedef struct work {
  unit *units;
  int n, next, ready, translated_all;
  pthread_mutex_t lock;
  pthread_cond_t more;
} work;

static void *compile_units(void *user) {
  work *w = user;
  for (;;) {
    pthread_mutex_lock(&w->lock);
    while (w->next == w->ready && !w->translated_all) pthread_cond_wait(&w->more, &w->lock);
    int u = w->next < w->ready ? w->next++ : -1;
    pthread_mutex_unlock(&w->lock);
    if (u < 0) return NULL;
    unit *t = &w->units[u];
    exec_llvm_object(t->mod, t->cpu, t->opt_level, t->code_level, &t->object, &t->error);
  }
}

/* Unit u ready (done: no more will be). */
static void hand_over(work *w, int done) {
  pthread_mutex_lock(&w->lock);
  if (done) w->translated_all = 1;
  else w->ready++;
  pthread_cond_broadcast(&w->more);
  pthread_mutex_unlock(&w->lock);
}

o2m_status exec_compile_units(MlirModule module, const char *entry, const char *cpu, int opt_level, int n_threads,
                              exec_blob *objects, int *n_objects, o2m_compile_times *times, o2m_diag *diag) {
  *n_objects = 0;
  int n_parts = exec_count_parts(module, entry);
  if (n_parts < 2) n_parts = 0;                           /* one unit: the whole module */
  int n_part_units = n_parts < EXEC_MAX_UNITS ? n_parts : EXEC_MAX_UNITS - 1; /* parts dealt round */
  int n_units = n_part_units + 1;
  if (n_threads > n_units) n_threads = n_units;
  unit units[EXEC_MAX_UNITS];
  memset(units, 0, sizeof(units));
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  double t0 = exec_now_ms(), translating = 0;
  work w = {units, n_units, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
  pthread_t threads[EXEC_MAX_UNITS];
  int started[EXEC_MAX_UNITS] = {0};
  for (int t = 1; t < n_threads; t++) started[t] = pthread_create(&threads[t], NULL, compile_units, &w) == 0;
  exec_errors errors;
  exec_capture_begin(&errors, mlirModuleGetContext(module));
  MlirOperation whole = mlirModuleGetOperation(module);
  MlirOperation skeleton = n_parts ? skeleton_of(whole, entry) : (MlirOperation){NULL};
  o2m_status s = O2M_OK;
  for (int u = 0; u < n_units && !s; u++) {
    double t_unit = exec_now_ms();
    /* unit 0: the entry and the other external functions; unit 1 + i: parts i, i + n_part_units, ... */
    MlirOperation m = n_parts ? unit_module(whole, skeleton, entry, u - 1, n_part_units) : whole;
    units[u].ctx = LLVMContextCreate();
    units[u].mod = mlirTranslateModuleToLLVMIR(m, units[u].ctx);
    if (!mlirOperationEqual(m, whole)) mlirOperationDestroy(m);
    if (!units[u].mod)
      s = o2m_fail(diag, O2M_ERR_UNSUPPORTED, "the translation to LLVM IR failed: %s",
                   errors.text[0] ? errors.text : "(no message)");
    else if (u == 0 && add_packed_wrapper(units[0].mod, entry) != 0)
      s = o2m_fail(diag, O2M_ERR_INTERNAL, "the JIT module has no _mlir_ciface_%s", entry);
    if (s) break;
    mark_allocators(units[u].mod);
    units[u].cpu = cpu;
    unit_levels(units[u].mod, opt_level, &units[u].opt_level, &units[u].code_level);
    if (times) times->units_at_level[units[u].opt_level]++;
    translating += exec_now_ms() - t_unit;
    hand_over(&w, 0);
  }
  if (n_parts) mlirOperationDestroy(skeleton);
  exec_capture_end(&errors);
  hand_over(&w, 1);
  compile_units(&w); /* this thread too; it finishes what no thread could start */
  for (int t = 1; t < n_threads; t++)
    if (started[t]) pthread_join(threads[t], NULL);
  for (int u = 0; u < n_units; u++) {
    if (!s && units[u].error) s = o2m_fail(diag, O2M_ERR_UNSUPPORTED, "LLVM failed on unit %d: %s", u, units[u].error);
    free(units[u].error);
    if (units[u].mod) LLVMDisposeModule(units[u].mod);
    if (units[u].ctx) LLVMContextDispose(units[u].ctx);
    if (s) free(units[u].object.data);
  }
  if (times) { /* the translation (while the first units compile); the rest: the units' optimisation and code */
    times->llvm_ir_ms = translating;
    times->llvm_codegen_ms = exec_now_ms() - t0 - translating;
  }
  if (s) return s;
  for (int u = 0; u < n_units; u++) objects[u] = units[u].object;
  *n_objects = n_units;
  return O2M_OK;
}
