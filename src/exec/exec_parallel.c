/* exec_parallel.c - the generated code's own loops on every core.
 *
 * Owns: which loop nests run split across a call's threads, and how.
 *
 * On buffers, once Linalg became loops (scf.parallel over the parallel
 * dims, reductions as scf.for inside), an outermost scf.parallel whose
 * work (its ops times their trip counts) is worth two threads at least
 * moves into a function @<func>_par<k>(lo, hi, captures...) that runs the
 * iterations [lo, hi) of one of its dims, called where the loop was with
 * the whole range. The function carries its estimated work per iteration
 * (PARALLEL_COST_ATTR).
 *
 * In the LLVM dialect each such function becomes a task of the runtime,
 * @...(frame, lo, hi): a new entry block reads the captured values from a
 * frame of 8-byte slots and branches to the old one (compiled once, as
 * one function). @..._run(lo, hi, captures...) writes the frame and
 * hands the task to the runtime's pool (rt_parallel.c), and the calls
 * go to @..._run. The iterations of a parallel dim are independent (what
 * Linalg means by parallel) and every reduction stays inside an
 * iteration, so results do not depend on the thread count.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/LLVM.h>

#include "exec/exec_internal.h"
#include "util/diag.h"

/* A loop of unknown trip count counts as UNKNOWN_TRIPS; the dim split is
 * the first of WANTED_TRIPS iterations at least when there is one. */
enum { UNKNOWN_TRIPS = 16, WANTED_TRIPS = 16 };

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

int exec_parallel_loops(void) {
  const char *off = getenv("ONNX2MLIR_NO_PARALLEL_LOOPS");
  return !(off && *off && strcmp(off, "0") != 0);
}

/* ---- the work of a loop nest ------------------------------------------------ */

/* v's value when it is an integer or index constant; else 0. */
static int constant_of(MlirValue v, int64_t *out) {
  if (!mlirValueIsAOpResult(v)) return 0;
  MlirOperation def = mlirOpResultGetOwner(v);
  if (!exec_op_named(def, "arith.constant")) return 0;
  MlirAttribute a = mlirOperationGetAttributeByName(def, str("value"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a)) return 0;
  *out = mlirIntegerAttrGetValueInt(a);
  return 1;
}

/* The iterations of dim d of a loop with bounds operands (lbs, ubs,
 * steps of n dims each), or -1 when not constant. */
static int64_t trips_of(MlirOperation loop, int n, int d) {
  int64_t lb, ub, step;
  if (!constant_of(mlirOperationGetOperand(loop, d), &lb) || !constant_of(mlirOperationGetOperand(loop, n + d), &ub) ||
      !constant_of(mlirOperationGetOperand(loop, 2 * n + d), &step) || step <= 0)
    return -1;
  return ub > lb ? (ub - lb + step - 1) / step : 0;
}

static double guessed(int64_t trips) { return trips < 0 ? UNKNOWN_TRIPS : (double)trips; }

/* The dims of an scf.parallel (its body's arguments). */
static int dims_of(MlirOperation loop) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
  return (int)mlirBlockGetNumArguments(body);
}

static double op_work(MlirOperation op);

/* The work of one pass through op's regions. */
static double regions_work(MlirOperation op) {
  double sum = 0;
  for (intptr_t r = 0, nr = mlirOperationGetNumRegions(op); r < nr; r++)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r)); !mlirBlockIsNull(b);
         b = mlirBlockGetNextInRegion(b))
      for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
        sum += op_work(o);
  return sum;
}

/* One for op, and its regions as often as they run. */
static double op_work(MlirOperation op) {
  double inner = regions_work(op);
  if (inner == 0) return 1;
  double times = 1;
  if (exec_op_named(op, "scf.for")) {
    times = guessed(trips_of(op, 1, 0));
  } else if (exec_op_named(op, "scf.parallel")) {
    for (int d = 0, n = dims_of(op); d < n; d++) times *= guessed(trips_of(op, n, d));
  } else if (exec_op_named(op, "scf.while")) {
    times = UNKNOWN_TRIPS;
  }
  return 1 + inner * times;
}

/* ---- the loops worth splitting ------------------------------------------------ */

typedef struct loops {
  int n, cap;
  MlirOperation *ops;
} loops;

static MlirWalkResult find_outermost(MlirOperation op, void *user) {
  if (!exec_op_named(op, "scf.parallel")) return MlirWalkResultAdvance;
  loops *l = user;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    MlirOperation *grown = realloc(l->ops, (size_t)cap * sizeof(*grown));
    if (!grown) return MlirWalkResultInterrupt;
    l->ops = grown, l->cap = cap;
  }
  l->ops[l->n++] = op;
  return MlirWalkResultSkip; /* a nested one stays inside its share */
}

static MlirWalkResult find_call(MlirOperation op, void *user) {
  if (!exec_op_named(op, "func.call")) return MlirWalkResultAdvance;
  *(int *)user = 1;
  return MlirWalkResultInterrupt;
}

/* The dim to split and the work of one of its iterations, or -1 when the
 * loop is not worth it: the first dim of WANTED_TRIPS iterations or an
 * unknown count, else the longest; its step must be 1. A loop that calls
 * a function stays whole (a failing If branch's stop, say, must run on
 * the calling thread). */
static int split_dim(MlirOperation loop, int64_t *work_per_iteration) {
  if (mlirOperationGetNumResults(loop) != 0) return -1; /* reduces across iterations */
  int calls = 0;
  mlirOperationWalk(loop, find_call, &calls, MlirWalkPreOrder);
  if (calls) return -1;
  int n = dims_of(loop), best = -1;
  int64_t best_trips = 1;
  for (int d = 0; d < n && best_trips != -1 && best_trips < WANTED_TRIPS; d++) {
    int64_t t = trips_of(loop, n, d);
    if (t == -1 || t > best_trips) best = d, best_trips = t;
  }
  int64_t step;
  if (best < 0 || !constant_of(mlirOperationGetOperand(loop, 2 * n + best), &step) || step != 1) return -1;
  double per = regions_work(loop);
  for (int d = 0; d < n; d++)
    if (d != best) per *= guessed(trips_of(loop, n, d));
  /* worth two of the runtime's grains at least */
  if (best_trips != -1 && per * (double)best_trips < 2.0 * (double)o2m_rt_parallel_grain()) return -1;
  *work_per_iteration = per > 1e15 ? (int64_t)1e15 : (int64_t)per + 1;
  return best;
}

/* ---- outlining ---------------------------------------------------------------- */

static int inside(MlirOperation loop, MlirOperation op) {
  for (; !mlirOperationIsNull(op); op = mlirOperationGetParentOperation(op))
    if (mlirOperationEqual(op, loop)) return 1;
  return 0;
}

static MlirOperation defining_op(MlirValue v) {
  if (mlirValueIsABlockArgument(v)) return mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
  return mlirOpResultGetOwner(v);
}

typedef struct captures {
  MlirOperation loop;
  int n, cap, failed;
  MlirValue *v;
} captures;

/* Operands of ops in the loop (the loop's own included) defined outside it. */
static MlirWalkResult capture_operands(MlirOperation op, void *user) {
  captures *c = user;
  for (intptr_t k = 0, nk = mlirOperationGetNumOperands(op); k < nk; k++) {
    MlirValue v = mlirOperationGetOperand(op, k);
    if (inside(c->loop, defining_op(v))) continue;
    int seen = 0;
    for (int i = 0; i < c->n && !seen; i++) seen = mlirValueEqual(c->v[i], v);
    if (seen) continue;
    if (c->n == c->cap) {
      int cap = c->cap ? 2 * c->cap : 32;
      MlirValue *grown = realloc(c->v, (size_t)cap * sizeof(*grown));
      if (!grown) return c->failed = 1, MlirWalkResultInterrupt;
      c->v = grown, c->cap = cap;
    }
    c->v[c->n++] = v;
  }
  return MlirWalkResultAdvance;
}

static int in_loop(MlirOperation owner, void *loop) { return inside(*(MlirOperation *)loop, owner); }

/* Replaces v by with where the loop uses it. */
static int replace_inside(MlirOperation loop, MlirValue v, MlirValue with) {
  return exec_replace_uses_if(v, with, in_loop, &loop);
}

static int is_constant(MlirValue v) {
  return mlirValueIsAOpResult(v) && exec_op_named(mlirOpResultGetOwner(v), "arith.constant");
}

static MlirOperation enclosing_func(MlirOperation op) {
  while (!mlirOperationIsNull(op) && !exec_op_named(op, "func.func")) op = mlirOperationGetParentOperation(op);
  return op;
}

/* Moves the loop into @name(lo, hi, captures...) running [lo, hi) of dim
 * d, called where the loop was; -1 when out of memory (nothing changed). */
static int outline(MlirOperation loop, int d, int64_t work, MlirOperation func, const char *name) {
  captures c = {loop, 0, 0, 0, NULL};
  mlirOperationWalk(loop, capture_operands, &c, MlirWalkPreOrder);
  int n_dims = dims_of(loop), n_args = 2;
  MlirType *types = malloc(((size_t)c.n + 2) * sizeof(MlirType));
  MlirLocation *locs = malloc(((size_t)c.n + 2) * sizeof(MlirLocation));
  MlirValue *operands = malloc(((size_t)c.n + 2) * sizeof(MlirValue));
  if (c.failed || !types || !locs || !operands) {
    free(c.v), free(types), free(locs), free(operands);
    return -1;
  }
  MlirContext ctx = mlirOperationGetContext(loop);
  MlirLocation loc = mlirOperationGetLocation(loop);
  types[0] = types[1] = mlirIndexTypeGet(ctx);
  locs[0] = locs[1] = loc;
  operands[0] = mlirOperationGetOperand(loop, d);
  operands[1] = mlirOperationGetOperand(loop, n_dims + d);
  for (int i = 0; i < c.n; i++) {
    if (is_constant(c.v[i])) continue;
    types[n_args] = mlirValueGetType(c.v[i]);
    locs[n_args] = loc;
    operands[n_args++] = c.v[i];
  }
  MlirBlock block = mlirBlockCreate(n_args, types, locs);
  MlirRegion region = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(region, block);
  MlirNamedAttribute attrs[3] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("sym_name")), mlirStringAttrGet(ctx, str(name))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("function_type")),
                            mlirTypeAttrGet(mlirFunctionTypeGet(ctx, n_args, types, 0, NULL))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str(PARALLEL_COST_ATTR)),
                            mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), work))};
  MlirOperationState fs = mlirOperationStateGet(str("func.func"), loc);
  mlirOperationStateAddAttributes(&fs, 3, attrs);
  mlirOperationStateAddOwnedRegions(&fs, 1, &region);
  MlirOperation fn = mlirOperationCreate(&fs);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(func), func, fn);

  MlirNamedAttribute callee =
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("callee")), mlirFlatSymbolRefAttrGet(ctx, str(name)));
  MlirOperationState cs = mlirOperationStateGet(str("func.call"), loc);
  mlirOperationStateAddOperands(&cs, n_args, operands);
  mlirOperationStateAddAttributes(&cs, 1, &callee);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(loop), loop, mlirOperationCreate(&cs));

  mlirOperationRemoveFromParent(loop);
  mlirBlockAppendOwnedOperation(block, loop);
  int failed = 0;
  for (int i = 0, a = 2; i < c.n && !failed; i++) {
    MlirValue with;
    if (is_constant(c.v[i])) {
      MlirOperation copy = mlirOperationClone(mlirOpResultGetOwner(c.v[i]));
      mlirBlockInsertOwnedOperationBefore(block, loop, copy);
      with = mlirOperationGetResult(copy, mlirOpResultGetResultNumber(c.v[i]));
    } else {
      with = mlirBlockGetArgument(block, a++);
    }
    failed = replace_inside(loop, c.v[i], with);
  }
  mlirOperationSetOperand(loop, d, mlirBlockGetArgument(block, 0));
  mlirOperationSetOperand(loop, n_dims + d, mlirBlockGetArgument(block, 1));
  MlirOperationState rs = mlirOperationStateGet(str("func.return"), loc);
  mlirBlockAppendOwnedOperation(block, mlirOperationCreate(&rs));
  free(c.v), free(types), free(locs), free(operands);
  return failed ? -1 : 0;
}

int exec_outline_parallel(MlirModule module) {
  loops found = {0, 0, NULL};
  mlirOperationWalk(mlirModuleGetOperation(module), find_outermost, &found, MlirWalkPreOrder);
  int made = 0;
  for (int i = 0; i < found.n; i++) {
    int64_t work = 0;
    int d = split_dim(found.ops[i], &work);
    MlirOperation func = enclosing_func(found.ops[i]);
    if (d < 0 || mlirOperationIsNull(func)) continue;
    MlirStringRef fname = mlirStringAttrGetValue(mlirOperationGetAttributeByName(func, str("sym_name")));
    char name[400];
    snprintf(name, sizeof(name), "%.*s_par%d", (int)(fname.length < 300 ? fname.length : 300), fname.data, made);
    if (outline(found.ops[i], d, work, func, name) != 0) break;
    made++;
  }
  free(found.ops);
  return made;
}

/* ---- the helpers that hand a split loop to the runtime --------------------- */

typedef exec_text text;

static void put(text *t, const char *s, size_t n) { exec_text_put(t, s, n); }

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(text *t, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof(buf)) t->failed = 1;
  else put(t, buf, (size_t)n);
}

static void put_type(text *t, MlirType type) { mlirTypePrint(type, exec_text_append, t); }

/* Whether a value of this type fits a slot of the frame: pointers, and
 * integers and floats of 64 bits at most. */
static int frame_type(MlirType t) {
  if (mlirTypeIsALLVMPointerType(t)) return 1;
  if (mlirTypeIsAInteger(t)) return mlirIntegerTypeGetWidth(t) <= 64;
  return mlirTypeIsAF16(t) || mlirTypeIsABF16(t) || mlirTypeIsAF32(t) || mlirTypeIsAF64(t);
}

/* The frame: one 8-byte slot per captured value (an i64 when none). */
static void put_frame(text *t, int n) { putf(t, "!llvm.array<%d x i64>", n > 2 ? n - 2 : 1); }

static void put_field(text *t, int i) {
  putf(t, "  %%p%d = llvm.getelementptr %%frame[%d] : (!llvm.ptr) -> !llvm.ptr, i64\n", i, i - 2);
}

static void put_arg_types(text *t, MlirType fn_type, int n) {
  for (int i = 0; i < n; i++) {
    if (i) puts_(t, ", ");
    put_type(t, mlirLLVMFunctionTypeGetInput(fn_type, i));
  }
}

/* @<name>_frame(frame, lo, hi): the captures read from the frame, in
 * order; its block becomes @<name>'s new entry (become_task). */
static void write_frame_reader(text *t, const char *name, MlirType fn_type, int n) {
  putf(t, "llvm.func @%s_frame(%%frame: !llvm.ptr, %%a0: i64, %%a1: i64) {\n", name);
  for (int i = 2; i < n; i++) {
    put_field(t, i);
    putf(t, "  %%a%d = llvm.load %%p%d : !llvm.ptr -> ", i, i);
    put_type(t, mlirLLVMFunctionTypeGetInput(fn_type, i));
    puts_(t, "\n");
  }
  puts_(t, "  llvm.return\n}\n");
}

/* @<name>_run(lo, hi, captures...): the frame written, the task handed
 * to the runtime; external when other units call it (shared). */
static void write_run(text *t, const char *name, MlirType fn_type, int n, int64_t work, int shared) {
  putf(t, "llvm.func %s@%s_run(", shared ? "" : "internal ", name);
  for (int i = 0; i < n; i++) {
    putf(t, i ? ", %%a%d: " : "%%a%d: ", i);
    put_type(t, mlirLLVMFunctionTypeGetInput(fn_type, i));
  }
  puts_(t, ") {\n  %one = llvm.mlir.constant(1 : i64) : i64\n  %frame = llvm.alloca %one x ");
  put_frame(t, n);
  puts_(t, " : (i64) -> !llvm.ptr\n");
  for (int i = 2; i < n; i++) {
    put_field(t, i);
    putf(t, "  llvm.store %%a%d, %%p%d : ", i, i);
    put_type(t, mlirLLVMFunctionTypeGetInput(fn_type, i));
    puts_(t, ", !llvm.ptr\n");
  }
  putf(t, "  %%task = llvm.mlir.addressof @%s : !llvm.ptr\n", name);
  putf(t, "  %%work = llvm.mlir.constant(%lld : i64) : i64\n", (long long)work);
  putf(t, "  llvm.call @%s(%%task, %%frame, %%a0, %%a1, %%work) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()\n",
       O2M_PARALLEL_FOR_FN);
  puts_(t, "  llvm.return\n}\n");
}

/* @name's declaration and its helpers, for the text of a module that
 * declares what they call (a parsed module must verify). */
static void write_helpers(text *t, const char *name, MlirType fn_type, int n, int64_t work, int shared) {
  putf(t, "llvm.func @%s(", name);
  put_arg_types(t, fn_type, n);
  puts_(t, ")\n");
  write_frame_reader(t, name, fn_type, n);
  write_run(t, name, fn_type, n, work, shared);
}

/* The split functions: each one's name and the name of its _run helper,
 * which its calls now target. */
typedef struct split_fn {
  MlirOperation fn;
  MlirStringRef name;
  char run[420];
} split_fn;

typedef struct split_fns {
  int n;
  split_fn *fns;
} split_fns;

typedef struct redirects {
  const char *call_op;
  int n;
  const MlirStringRef *from;
  const MlirAttribute *to;
} redirects;

static MlirWalkResult redirect_call(MlirOperation op, void *user) {
  redirects *r = user;
  if (!exec_op_named(op, r->call_op)) return MlirWalkResultAdvance;
  MlirAttribute callee = mlirOperationGetAttributeByName(op, str("callee"));
  if (mlirAttributeIsNull(callee) || !mlirAttributeIsAFlatSymbolRef(callee)) return MlirWalkResultAdvance;
  MlirStringRef target = mlirFlatSymbolRefAttrGetValue(callee);
  for (int i = 0; i < r->n; i++)
    if (mlirStringRefEqual(target, r->from[i])) {
      mlirOperationSetAttributeByName(op, str("callee"), r->to[i]);
      break;
    }
  return MlirWalkResultAdvance;
}

void exec_redirect_calls(MlirOperation root, const char *call_op, int n, const MlirStringRef *from,
                         const MlirAttribute *to) {
  redirects r = {call_op, n, from, to};
  if (n) mlirOperationWalk(root, redirect_call, &r, MlirWalkPreOrder);
}

static MlirStringRef name_of(MlirOperation op) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, str("sym_name"));
  return mlirAttributeIsNull(a) ? str("") : mlirStringAttrGetValue(a);
}

/* The helpers of every split function whose arguments fit the frame,
 * written as one module's text: per function its declaration, frame
 * reader and _run, then the runtime's function. Those functions become
 * internal (their tasks are their only callers afterwards). Returns
 * whether the module declares the runtime's function already. */
static int write_all(MlirModule module, text *t, split_fns *s) {
  MlirContext ctx = mlirModuleGetContext(module);
  int declared = 0;
  putf(t, "module {\n");
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(module)); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (!exec_op_named(op, "llvm.func")) continue;
    declared |= mlirStringRefEqual(name_of(op), str(O2M_PARALLEL_FOR_FN));
    MlirAttribute cost = mlirOperationGetAttributeByName(op, str(PARALLEL_COST_ATTR));
    if (mlirAttributeIsNull(cost)) continue;
    int64_t work = mlirIntegerAttrGetValueInt(cost);
    mlirOperationRemoveAttributeByName(op, str(PARALLEL_COST_ATTR));
    int shared = mlirOperationRemoveAttributeByName(op, str(PARALLEL_SHARED_ATTR));
    MlirType fn_type = mlirTypeAttrGetValue(mlirOperationGetAttributeByName(op, str("function_type")));
    int n = (int)mlirLLVMFunctionTypeGetNumInputs(fn_type), fits = exec_has_body(op) && n >= 2;
    for (int i = 0; i < n && fits; i++) fits = frame_type(mlirLLVMFunctionTypeGetInput(fn_type, i));
    if (!fits) continue; /* called as it is: the whole range on the calling thread */
    MlirStringRef name = name_of(op);
    split_fn *f = &s->fns[s->n++];
    f->fn = op;
    f->name = name;
    char base[410];
    snprintf(base, sizeof(base), "%.*s", (int)(name.length < 400 ? name.length : 400), name.data);
    snprintf(f->run, sizeof(f->run), "%s_run", base);
    write_helpers(t, base, fn_type, n, work, shared);
    mlirOperationSetAttributeByName(op, str("linkage"), mlirAttributeParseGet(ctx, str("#llvm.linkage<internal>")));
  }
  putf(t, "llvm.func @%s(!llvm.ptr, !llvm.ptr, i64, i64, i64)\n}\n", O2M_PARALLEL_FOR_FN);
  return declared;
}

/* The loop function fn(lo, hi, captures...) becomes the task fn(frame,
 * lo, hi): the frame reader's block, its return replaced by a branch to
 * fn's old entry with lo, hi and the values read, is fn's new entry. */
static int become_task(MlirOperation fn, MlirOperation reader) {
  MlirRegion region = mlirOperationGetRegion(fn, 0);
  MlirBlock old_entry = mlirRegionGetFirstBlock(region), entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(reader, 0));
  MlirValue *values = malloc(((size_t)mlirBlockGetNumArguments(old_entry) + 1) * sizeof(MlirValue));
  if (!values) return -1;
  int n = 0;
  values[n++] = mlirBlockGetArgument(entry, 1);
  values[n++] = mlirBlockGetArgument(entry, 2);
  for (MlirOperation op = mlirBlockGetFirstOperation(entry); !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
    if (exec_op_named(op, "llvm.load")) values[n++] = mlirOperationGetResult(op, 0);
  mlirOperationDestroy(mlirBlockGetTerminator(entry));
  MlirOperationState br = mlirOperationStateGet(str("llvm.br"), mlirOperationGetLocation(fn));
  mlirOperationStateAddOperands(&br, n, values);
  mlirOperationStateAddSuccessors(&br, 1, &old_entry);
  mlirBlockAppendOwnedOperation(entry, mlirOperationCreate(&br));
  mlirBlockDetach(entry);
  mlirRegionInsertOwnedBlockBefore(region, old_entry, entry);
  mlirOperationSetAttributeByName(fn, str("function_type"), mlirOperationGetAttributeByName(reader, str("function_type")));
  free(values);
  return 0;
}

o2m_status exec_dispatch_parallel(MlirModule module, o2m_diag *diag) {
  MlirBlock body = mlirModuleGetBody(module);
  int count = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    count += exec_op_named(op, "llvm.func") &&
             !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, str(PARALLEL_COST_ATTR)));
  if (count == 0) return O2M_OK;
  split_fns s = {0, calloc((size_t)count, sizeof(split_fn))};
  text t = {NULL, 0, 0, 0};
  if (!s.fns) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory splitting loops across threads");
  int declared = write_all(module, &t, &s);
  MlirModule parsed = {NULL};
  int broken = 0;
  if (s.n && !t.failed) parsed = mlirModuleCreateParse(mlirModuleGetContext(module), mlirStringRefCreate(t.s, t.len));
  if (s.n && !mlirModuleIsNull(parsed)) {
    /* in the parsed module's order: per function its declaration, frame
     * reader and _run; the runtime's function last */
    MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(parsed));
    for (int i = 0; i < s.n; i++) {
      MlirOperation reader = mlirOperationGetNextInBlock(op), run = mlirOperationGetNextInBlock(reader);
      op = mlirOperationGetNextInBlock(run);
      broken |= become_task(s.fns[i].fn, reader);
      mlirOperationRemoveFromParent(run);
      mlirBlockAppendOwnedOperation(body, run);
    }
    if (!declared) {
      mlirOperationRemoveFromParent(op);
      mlirBlockAppendOwnedOperation(body, op);
    }
    mlirModuleDestroy(parsed);
    /* the calls, in every function but the tasks (which call none) */
    MlirStringRef *from = malloc((size_t)s.n * sizeof(*from));
    MlirAttribute *to = malloc((size_t)s.n * sizeof(*to));
    MlirContext ctx = mlirModuleGetContext(module);
    for (int i = 0; from && to && i < s.n; i++)
      from[i] = s.fns[i].name, to[i] = mlirFlatSymbolRefAttrGet(ctx, str(s.fns[i].run));
    broken |= !from || !to;
    for (op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op) && !broken; op = mlirOperationGetNextInBlock(op)) {
      int task = 0;
      for (int i = 0; i < s.n && !task; i++) task = mlirOperationEqual(op, s.fns[i].fn);
      if (!task && exec_op_named(op, "llvm.func")) exec_redirect_calls(op, "llvm.call", s.n, from, to);
    }
    free(from), free(to);
  }
  broken |= s.n && mlirModuleIsNull(parsed);
  free(s.fns);
  free(t.s);
  if (broken) return o2m_fail(diag, O2M_ERR_INTERNAL, "the helpers of the loops split across threads failed");
  return O2M_OK;
}
