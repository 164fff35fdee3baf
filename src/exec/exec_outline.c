/* exec_outline.c - exec_outline_entry: the entry function's body cut into
 * consecutive parts, each moved into a function of its own that the
 * entry calls in turn, so that LLVM works on small units and the units
 * compile on every core (exec_units.c).
 *
 * Works on buffers (after bufferization and the BLAS calls, before the
 * loops): the entry's one block is a sequence of top-level ops. Each copy
 * of a block that repeats (a model's layers, exec_repeats.c) is a part,
 * the copies then one function when their code is the same; the other
 * runs of ops are cut into parts of about 1/n of the nested ops left to
 * compile. What a part reads
 * from before it becomes the part's arguments (constants are cloned in
 * instead; a copy of a layer takes one argument per role, a value the
 * copies all read at the same uses, so the first layer, reading one start
 * value where the others read two, has their code) and what later ops
 * read from it its results. A cut is never made where a stack buffer
 * (memref.alloca) would leave its part.
 */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "exec/exec_internal.h"
#include "util/diag.h"

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }


/* ---- a set of operations (open addressing on the pointer) ------------------ */

typedef struct op_set {
  void **slots;
  size_t cap;
} op_set;

static size_t slot_of(const op_set *s, const void *p) {
  size_t i = exec_ptr_slot(p, s->cap);
  while (s->slots[i] && s->slots[i] != p) i = (i + 1) & (s->cap - 1);
  return i;
}
static int set_has(const op_set *s, MlirOperation op) { return s->slots[slot_of(s, op.ptr)] != NULL; }
static void set_add(op_set *s, MlirOperation op) { s->slots[slot_of(s, op.ptr)] = op.ptr; }

/* ---- the parts -------------------------------------------------------------- */

typedef struct body {
  MlirOperation func;
  MlirBlock block;
  int n;              /* top-level ops, the terminator excluded */
  MlirOperation *ops; /* in order */
  long *weight;       /* nested ops of each */
} body;

static MlirWalkResult count_op(MlirOperation op, void *user) {
  (void)op;
  ++*(long *)user;
  return MlirWalkResultAdvance;
}

/* The top-level op of the entry that holds op (itself at top level), or
 * a null op when op is outside the entry. */
static MlirOperation top_level(const body *b, MlirOperation op) {
  while (!mlirOperationIsNull(op)) {
    MlirOperation parent = mlirOperationGetParentOperation(op);
    if (mlirOperationIsNull(parent)) return parent;
    if (mlirOperationEqual(parent, b->func)) return op;
    op = parent;
  }
  return op;
}

/* The top-level op defining v, or a null op for the entry's arguments. */
static MlirOperation defining_top(const body *b, MlirValue v) {
  if (mlirValueIsABlockArgument(v)) {
    MlirBlock owner = mlirBlockArgumentGetOwner(v);
    return mlirBlockEqual(owner, b->block) ? (MlirOperation){NULL} : top_level(b, mlirBlockGetParentOperation(owner));
  }
  return top_level(b, mlirOpResultGetOwner(v));
}

int exec_value_list_add(exec_value_list *vs, MlirValue v) {
  for (int i = 0; i < vs->n; i++)
    if (mlirValueEqual(vs->v[i], v)) return 0;
  if (vs->n == vs->cap) {
    int cap = vs->cap ? 2 * vs->cap : 64;
    MlirValue *grown = realloc(vs->v, (size_t)cap * sizeof(*grown));
    if (!grown) return -1;
    vs->v = grown, vs->cap = cap;
  }
  vs->v[vs->n++] = v;
  return 0;
}

typedef struct part_scan {
  const body *b;
  const op_set *in;
  exec_value_list *ins;
  int failed;
} part_scan;

/* Operands of ops inside the part defined outside it. */
static MlirWalkResult scan_operands(MlirOperation op, void *user) {
  part_scan *p = user;
  for (intptr_t k = 0, n = mlirOperationGetNumOperands(op); k < n; k++) {
    MlirValue v = mlirOperationGetOperand(op, k);
    MlirOperation top = defining_top(p->b, v);
    if ((mlirOperationIsNull(top) || !set_has(p->in, top)) && exec_value_list_add(p->ins, v)) p->failed = 1;
  }
  return MlirWalkResultAdvance;
}

/* ---- the arguments of copies: one per role -------------------------------- */

/* A use inside a part of a value from before it (not a constant), in the
 * order of a walk of the part. */
typedef struct site {
  MlirOperation owner;
  intptr_t operand;
  MlirValue value;
} site;

typedef struct sites {
  site *s;
  int n, cap, failed;
  const body *b;
  const op_set *in;
} sites;

static MlirWalkResult collect_site(MlirOperation op, void *user) {
  sites *u = user;
  for (intptr_t k = 0, n = mlirOperationGetNumOperands(op); k < n && !u->failed; k++) {
    MlirValue v = mlirOperationGetOperand(op, k);
    MlirOperation top = defining_top(u->b, v);
    if (!mlirOperationIsNull(top) && set_has(u->in, top)) continue;
    if (mlirValueIsAOpResult(v) && exec_op_named(mlirOpResultGetOwner(v), "arith.constant")) continue;
    if (u->n == u->cap) {
      int cap = u->cap ? 2 * u->cap : 64;
      site *grown = realloc(u->s, (size_t)cap * sizeof(*grown));
      if (!grown) {
        u->failed = 1;
        break;
      }
      u->s = grown, u->cap = cap;
    }
    u->s[u->n++] = (site){op, k, v};
  }
  return MlirWalkResultAdvance;
}

/* Roles of the copies of one layer: which uses read the same value in
 * every copy. The first layer of a loop may read one value where the
 * others read two (the start state twice), and its arguments, one per
 * value, would differ from theirs; one argument per role instead (a value
 * passed twice where it plays two) gives every copy the same function. */
typedef struct roles {
  int first_copy; /* the run's first copy, an index into `copies` */
  int n_sites;
  int *role; /* per use: its role, numbered in order of first use */
  int n_roles;
} roles;

/* role[s]: the number of the role of use s, where uses s and t share a
 * role when each copy reads one value at both. */
static int find_roles(sites *per_copy, int n_copies, roles *r) {
  int n = per_copy[0].n;
  for (int c = 1; c < n_copies; c++)
    if (per_copy[c].n != n) return -1;
  int *first = malloc(((size_t)n + 1) * sizeof(*first)); /* each role's first use */
  free(r->role);
  r->role = malloc(((size_t)n + 1) * sizeof(*r->role));
  if (!first || !r->role) return free(first), -1;
  r->n_sites = n, r->n_roles = 0;
  for (int s = 0; s < n; s++) {
    int found = -1;
    for (int k = 0; k < r->n_roles && found < 0; k++) {
      int same = 1;
      for (int c = 0; c < n_copies && same; c++)
        same = mlirValueEqual(per_copy[c].s[first[k]].value, per_copy[c].s[s].value);
      if (same) found = k;
    }
    if (found < 0) first[found = r->n_roles++] = s;
    r->role[s] = found;
  }
  free(first);
  return 0;
}

/* Whether any use of v is by an op whose top-level op is (inside = 1) or
 * is not (inside = 0) in the part. */
static int used_where(const body *b, const op_set *in, MlirValue v, int inside) {
  for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
    MlirOperation top = top_level(b, mlirOpOperandGetOwner(u));
    if (!mlirOperationIsNull(top) && set_has(in, top) == inside) return 1;
  }
  return 0;
}

/* Whether v is a stack buffer or a view of one. */
static int on_stack(MlirValue v) {
  for (int depth = 0; depth < 64 && mlirValueIsAOpResult(v); depth++) {
    MlirOperation op = mlirOpResultGetOwner(v);
    if (exec_op_named(op, "memref.alloca")) return 1;
    if (mlirOperationGetNumOperands(op) == 0 || !mlirTypeIsAMemRef(mlirValueGetType(mlirOperationGetOperand(op, 0))))
      return 0;
    v = mlirOperationGetOperand(op, 0);
  }
  return 0;
}

int exec_replace_uses_if(MlirValue v, MlirValue with, int (*where)(MlirOperation owner, void *user), void *user) {
  int n = 0, cap = 0;
  struct use {
    MlirOperation owner;
    unsigned index;
  } *uses = NULL;
  for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
    if (!where(mlirOpOperandGetOwner(u), user)) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      struct use *grown = realloc(uses, (size_t)cap * sizeof(*grown));
      if (!grown) return free(uses), -1;
      uses = grown;
    }
    uses[n++] = (struct use){mlirOpOperandGetOwner(u), mlirOpOperandGetOperandNumber(u)};
  }
  for (int i = 0; i < n; i++) mlirOperationSetOperand(uses[i].owner, uses[i].index, with);
  free(uses);
  return 0;
}

typedef struct part_side {
  const body *b;
  const op_set *in;
  int inside;
} part_side;

static int on_side(MlirOperation owner, void *user) {
  const part_side *p = user;
  MlirOperation top = top_level(p->b, owner);
  return !mlirOperationIsNull(top) && set_has(p->in, top) == p->inside;
}

/* Replaces v by with in the uses whose top-level op is (inside) or is not
 * in the part. */
static int replace_uses(const body *b, const op_set *in, MlirValue v, MlirValue with, int inside) {
  part_side side = {b, in, inside};
  return exec_replace_uses_if(v, with, on_side, &side);
}

typedef struct part {
  int first, end; /* top-level ops [first, end) */
  exec_value_list ins, outs;
} part;

/* Whether top-level op i frees a buffer from before the part: it stays in
 * the entry, after the part's call (so the first layer, which reads the
 * model's input, has the code of the others, which free the layer before's
 * output). */
static int frees_from_before(const body *b, const op_set *in, int i) {
  if (!exec_op_named(b->ops[i], "memref.dealloc") || mlirOperationGetNumOperands(b->ops[i]) != 1) return 0;
  MlirOperation def = defining_top(b, mlirOperationGetOperand(b->ops[i], 0));
  return mlirOperationIsNull(def) || !set_has(in, def);
}

/* The ops of top-level ops [first, end) that move into the part, in `in`. */
static void fill_in_set(const body *b, op_set *in, int first, int end) {
  memset(in->slots, 0, in->cap * sizeof(void *));
  /* constants stay in the entry: a part clones those it reads, so one
   * read by later parts does not become a result (a loop bound passed as
   * an argument); and a global's buffer (a weight) too, which the parts
   * that read it take as an argument */
  for (int i = first; i < end; i++)
    if (!exec_op_named(b->ops[i], "memref.dealloc") && !exec_op_named(b->ops[i], "arith.constant") &&
        !exec_op_named(b->ops[i], "memref.get_global"))
      set_add(in, b->ops[i]);
  for (int i = first; i < end; i++)
    if (exec_op_named(b->ops[i], "memref.dealloc") && !frees_from_before(b, in, i)) set_add(in, b->ops[i]);
}

/* The uses in top-level ops [first, end) of values from before them (the
 * ops left in `in`); -1 when out of memory. */
static int collect_sites(const body *b, op_set *in, int first, int end, sites *u) {
  fill_in_set(b, in, first, end);
  u->n = u->failed = 0, u->b = b, u->in = in;
  for (int i = first; i < end && !u->failed; i++)
    if (set_has(in, b->ops[i])) mlirOperationWalk(b->ops[i], collect_site, u, MlirWalkPreOrder);
  return u->failed ? -1 : 0;
}

/* The roles of the run of copies holding copy c, found when its first
 * copy is the part being made (later copies of the run then find them
 * in r); r->role is NULL when there are none. */
static void roles_for(const body *b, op_set *in, const exec_copy *copies, int n_copies, int c, roles *r) {
  int run = c, end = c + 1;
  while (run > 0 && copies[run].again) run--;
  while (end < n_copies && copies[end].again) end++;
  if (r->first_copy == run) return;
  free(r->role);
  r->role = NULL, r->first_copy = run;
  if (c != run || end - run < 2) return; /* the first copy went into a bigger part */
  sites *per_copy = calloc((size_t)(end - run), sizeof(*per_copy));
  int failed = !per_copy;
  for (int k = run; k < end && !failed; k++)
    failed = collect_sites(b, in, copies[k].first, copies[k].end, &per_copy[k - run]) != 0;
  if (failed || find_roles(per_copy, end - run, r) != 0) free(r->role), r->role = NULL;
  for (int k = 0; per_copy && k < end - run; k++) free(per_copy[k].s);
  free(per_copy);
}

/* The copy that is exactly top-level ops [first, end), or -1. */
static int copy_at(const exec_copy *copies, int n_copies, int first, int end) {
  for (int k = 0; k < n_copies; k++)
    if (copies[k].first == first && copies[k].end == end) return k;
  return -1;
}

/* The part's ops (in `in`), arguments and results; -1 when out of memory. */
static int scan_part(const body *b, op_set *in, part *p) {
  fill_in_set(b, in, p->first, p->end);
  p->ins.n = p->outs.n = 0;
  part_scan scan = {b, in, &p->ins, 0};
  for (int i = p->first; i < p->end; i++)
    if (set_has(in, b->ops[i])) mlirOperationWalk(b->ops[i], scan_operands, &scan, MlirWalkPreOrder);
  for (int i = p->first; i < p->end && !scan.failed; i++)
    for (intptr_t r = 0, nr = set_has(in, b->ops[i]) ? mlirOperationGetNumResults(b->ops[i]) : 0; r < nr; r++) {
      MlirValue v = mlirOperationGetResult(b->ops[i], r);
      if (used_where(b, in, v, 0) && exec_value_list_add(&p->outs, v)) scan.failed = 1;
    }
  return scan.failed ? -1 : 0;
}

static int leaves_stack_buffer(const part *p) {
  for (int i = 0; i < p->outs.n; i++)
    if (on_stack(p->outs.v[i])) return 1;
  return 0;
}

/* Each use of one of the entry's constants inside a moved op gets a
 * clone of its own at the part's start, in the order of a walk of the
 * part: two copies of a layer then hold the same constants in the same
 * places, whichever of them the entry happened to share (a class index 1
 * and a loop step 1 are one value there). */
typedef struct constant_cloner {
  MlirBlock entry, block;
  MlirOperation anchor; /* the part's first moved op: clones go before it */
} constant_cloner;

static MlirWalkResult clone_constants(MlirOperation op, void *user) {
  constant_cloner *c = user;
  for (intptr_t k = 0, n = mlirOperationGetNumOperands(op); k < n; k++) {
    MlirValue v = mlirOperationGetOperand(op, k);
    if (!mlirValueIsAOpResult(v)) continue;
    MlirOperation def = mlirOpResultGetOwner(v);
    if (!exec_op_named(def, "arith.constant") || !mlirBlockEqual(mlirOperationGetBlock(def), c->entry)) continue;
    MlirOperation clone = mlirOperationClone(def);
    mlirBlockInsertOwnedOperationBefore(c->block, c->anchor, clone);
    mlirOperationSetOperand(op, k, mlirOperationGetResult(clone, 0));
  }
  return MlirWalkResultAdvance;
}

/* Moves the part into a new function `name` before the entry, called
 * where the part was; the function and its call. Its arguments: one per
 * value it reads from before it, or, for a copy of a layer (r and its
 * uses `at` given), one per role; NULL fn when out of memory. */
static exec_part move_part(const body *b, op_set *in, const part *p, const char *name, const roles *r,
                           const sites *at) {
  MlirContext ctx = mlirOperationGetContext(b->func);
  MlirLocation loc = mlirOperationGetLocation(b->ops[p->first]);
  int max_args = (r ? r->n_roles : p->ins.n) + 1;
  MlirType *in_types = malloc((size_t)max_args * sizeof(MlirType));
  MlirType *out_types = malloc(((size_t)p->outs.n + 1) * sizeof(MlirType));
  MlirLocation *locs = malloc((size_t)max_args * sizeof(MlirLocation));
  MlirValue *args = malloc((size_t)max_args * sizeof(MlirValue));
  if (!in_types || !out_types || !locs || !args) {
    free(in_types), free(out_types), free(locs), free(args);
    return (exec_part){{NULL}, {NULL}};
  }
  int n_args = 0;
  for (int s = 0; r && s < r->n_sites; s++)
    if (r->role[s] == n_args) args[n_args++] = at->s[s].value; /* roles are numbered by first use */
  for (int i = 0; !r && i < p->ins.n; i++) {
    MlirValue v = p->ins.v[i];
    if (mlirValueIsAOpResult(v) && exec_op_named(mlirOpResultGetOwner(v), "arith.constant")) continue;
    args[n_args++] = v;
  }
  for (int a = 0; a < n_args; a++) in_types[a] = mlirValueGetType(args[a]), locs[a] = loc;
  for (int i = 0; i < p->outs.n; i++) out_types[i] = mlirValueGetType(p->outs.v[i]);
  MlirType fn_type = mlirFunctionTypeGet(ctx, n_args, in_types, p->outs.n, out_types);
  MlirBlock block = mlirBlockCreate(n_args, in_types, locs);
  MlirRegion region = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(region, block);
  MlirNamedAttribute attrs[2] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("sym_name")), mlirStringAttrGet(ctx, str(name))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("function_type")), mlirTypeAttrGet(fn_type))};
  MlirOperationState fs = mlirOperationStateGet(str("func.func"), loc);
  mlirOperationStateAddAttributes(&fs, 2, attrs);
  mlirOperationStateAddOwnedRegions(&fs, 1, &region);
  MlirOperation fn = mlirOperationCreate(&fs);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(b->func), b->func, fn);

  /* the call, where the part's first moved op was (after the ops that
   * stay in the entry before it: the globals it may read); later ops
   * read its results */
  int at_op = p->first;
  while (at_op + 1 < p->end && !set_has(in, b->ops[at_op])) at_op++;
  MlirNamedAttribute callee =
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("callee")), mlirFlatSymbolRefAttrGet(ctx, str(name)));
  MlirOperationState cs = mlirOperationStateGet(str("func.call"), loc);
  mlirOperationStateAddOperands(&cs, n_args, args);
  mlirOperationStateAddResults(&cs, p->outs.n, out_types);
  mlirOperationStateAddAttributes(&cs, 1, &callee);
  MlirOperation call = mlirOperationCreate(&cs);
  mlirBlockInsertOwnedOperationBefore(b->block, b->ops[at_op], call);
  for (int i = 0; i < p->outs.n; i++) replace_uses(b, in, p->outs.v[i], mlirOperationGetResult(call, i), 0);

  /* inside: the arguments instead of the values, then clones of the
   * constants */
  for (int s = 0; r && s < r->n_sites; s++)
    mlirOperationSetOperand(at->s[s].owner, at->s[s].operand, mlirBlockGetArgument(block, r->role[s]));
  for (int i = 0, a = 0; !r && i < p->ins.n; i++) {
    MlirValue v = p->ins.v[i];
    if (mlirValueIsAOpResult(v) && exec_op_named(mlirOpResultGetOwner(v), "arith.constant")) continue;
    replace_uses(b, in, v, mlirBlockGetArgument(block, a++), 1);
  }
  MlirOperation first_moved = {NULL};
  for (int i = p->first; i < p->end; i++) {
    if (!set_has(in, b->ops[i])) continue; /* a free of a buffer from before: after the call */
    mlirOperationRemoveFromParent(b->ops[i]);
    mlirBlockAppendOwnedOperation(block, b->ops[i]);
    if (mlirOperationIsNull(first_moved)) first_moved = b->ops[i];
  }
  constant_cloner cloner = {b->block, block, first_moved};
  for (int i = p->first; i < p->end && !mlirOperationIsNull(first_moved); i++)
    if (set_has(in, b->ops[i])) mlirOperationWalk(b->ops[i], clone_constants, &cloner, MlirWalkPreOrder);
  MlirOperationState rs = mlirOperationStateGet(str("func.return"), loc);
  mlirOperationStateAddOperands(&rs, p->outs.n, p->outs.v);
  mlirBlockAppendOwnedOperation(block, mlirOperationCreate(&rs));
  free(in_types);
  free(out_types);
  free(locs);
  free(args);
  return (exec_part){fn, call};
}

/* Where parts end, in order (the last at b->n): each copy of a repeat is a
 * part of its own, the ops around them are cut about every `share` ops. */
typedef struct ends {
  int n;
  int *at;
} ends;

static void cut_evenly(const body *b, int lo, int hi, long share, ends *e) {
  long sum = 0;
  for (int i = lo; i < hi; i++) {
    sum += b->weight[i];
    if (i == hi - 1 || sum >= share) e->at[e->n++] = i + 1, sum = 0;
  }
}

static void plan_cuts(const body *b, const exec_copy *copies, int n_copies, long share, ends *e) {
  int pos = 0;
  for (int k = 0; k < n_copies; k++) {
    cut_evenly(b, pos, copies[k].first, share, e);
    e->at[e->n++] = copies[k].end;
    pos = copies[k].end;
  }
  cut_evenly(b, pos, b->n, share, e);
}

/* The entry's memref.get_global ops (no operands: a weight's address)
 * moved to the start of its block, in order: they stay in the entry
 * (fill_in_set) and must come before every part that reads them. Left
 * where the first part happened to hold them, such a part returned every
 * later layer's weights (a DenseNet's 177 buffers from its first part:
 * 1.7 s of LLVM's scheduling for that one return). */
static void hoist_globals(MlirBlock block) {
  MlirOperation first = mlirBlockGetFirstOperation(block), last = {NULL};
  for (MlirOperation op = first, next; !mlirOperationIsNull(op); op = next) {
    next = mlirOperationGetNextInBlock(op);
    if (!exec_op_named(op, "memref.get_global")) continue;
    if (mlirOperationIsNull(last)) {
      if (!mlirOperationEqual(op, first)) mlirOperationMoveBefore(op, first);
    } else if (!mlirOperationEqual(mlirOperationGetNextInBlock(last), op)) {
      mlirOperationMoveAfter(op, last);
    }
    last = op;
  }
}

int exec_outline_entry(MlirModule module, const char *entry, int n_parts, long min_ops, exec_outlined *out) {
  memset(out, 0, sizeof(*out));
  MlirOperation func = exec_find_entry(module, entry);
  if (mlirOperationIsNull(func)) return 0;
  MlirRegion region = mlirOperationGetRegion(func, 0);
  MlirBlock block = mlirRegionGetFirstBlock(region);
  if (mlirBlockIsNull(block) || !mlirBlockIsNull(mlirBlockGetNextInRegion(block))) return 0;
  hoist_globals(block);
  body b = {func, block, 0, NULL, NULL};
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    b.n++;
  b.n--; /* the terminator stays */
  if (b.n < 2) return 0;
  b.ops = malloc((size_t)b.n * sizeof(*b.ops));
  b.weight = malloc((size_t)b.n * sizeof(*b.weight));
  ends e = {0, malloc(((size_t)b.n + 1) * sizeof(int))};
  exec_part *made = malloc(((size_t)b.n + 1) * sizeof(*made));
  exec_copy *copies = malloc(((size_t)b.n + 1) * sizeof(*copies));
  op_set in = {NULL, 1};
  while (in.cap < 4 * (size_t)b.n) in.cap *= 2;
  in.slots = calloc(in.cap, sizeof(void *));
  part p = {0};
  roles r = {-1, 0, NULL, 0};
  sites at = {0};
  int n_made = 0;
  long total = 0;
  if (!b.ops || !b.weight || !e.at || !made || !copies || !in.slots) goto done;
  MlirOperation op = mlirBlockGetFirstOperation(block);
  for (int i = 0; i < b.n; i++, op = mlirOperationGetNextInBlock(op)) {
    b.ops[i] = op;
    b.weight[i] = 0;
    mlirOperationWalk(op, count_op, &b.weight[i], MlirWalkPreOrder);
    total += b.weight[i];
  }
  if (total < min_ops) goto done;
  int n_copies = exec_find_copies(b.ops, b.n, copies, b.n);
  if (!n_copies && (n_parts < 2 || b.n < 2 * n_parts)) goto done;
  long unique = total; /* what is left to compile once the copies are one */
  for (int k = 0; k < n_copies; k++)
    for (int i = copies[k].first; copies[k].again && i < copies[k].end; i++) unique -= b.weight[i];
  plan_cuts(&b, copies, n_copies, unique / (n_parts > 1 ? n_parts : 1) + 1, &e);
  int first = 0;
  for (int k = 0; k < e.n; k++) {
    p.first = first, p.end = e.at[k];
    if (p.end <= p.first) continue;
    int c = copy_at(copies, n_copies, p.first, p.end);
    if (c >= 0) roles_for(&b, &in, copies, n_copies, c, &r);
    if (scan_part(&b, &in, &p) != 0) break;
    if (p.end != b.n && leaves_stack_buffer(&p)) continue; /* cut later */
    /* a copy's uses, to give it one argument per role */
    int by_role = c >= 0 && r.role && collect_sites(&b, &in, p.first, p.end, &at) == 0 && at.n == r.n_sites;
    char name[300];
    snprintf(name, sizeof(name), "%s_part%d", entry, n_made);
    made[n_made] = move_part(&b, &in, &p, name, by_role ? &r : NULL, &at);
    if (mlirOperationIsNull(made[n_made].fn)) break; /* out of memory: the rest stays in the entry */
    n_made++;
    out->passed += p.outs.n;
    first = p.end;
  }
  out->calls = n_made;
  out->functions = n_made;
  if (n_copies) out->functions = exec_merge_parts(entry, made, n_made);
done:
  free(r.role);
  free(at.s);
  free(p.ins.v);
  free(p.outs.v);
  free(in.slots);
  free(b.ops);
  free(b.weight);
  free(e.at);
  free(made);
  free(copies);
  return out->functions;
}
