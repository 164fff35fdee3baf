/* exec_repeats.c - repeated structure in the entry (a model's identical
 * layers), compiled once.
 *
 * exec_find_copies looks at the entry's top-level ops on buffers (after
 * bufferization, the BLAS calls and the fusion: what will be compiled)
 * and finds runs of them that repeat: a block of p ops followed by k-1
 * copies of itself. Each op gets a structural hash: its kind, attributes
 * and types, nested ops and their operands (deallocations and the
 * entry's constants left out of the sequence: the first layer does not
 * free the model's input, the others free the layer before's output),
 * where a constant from outside the op counts by its value, an integer
 * scalar one by its type (it may become a parameter, below), and any
 * other value from outside the op (a weight, the model's input, another
 * op's buffer) by its type only: it becomes an argument of the part, and
 * the first layer reads the model's input where the others read the
 * layer before. The outliner (exec_outline.c) then cuts its parts at the
 * copies' boundaries.
 *
 * The hash only proposes. exec_merge_parts decides: part functions whose
 * printed code is the same, byte for byte, are one function; calls of
 * the others are redirected to it, so a 24-layer encoder compiles one
 * layer, not 24. The one exception: the integer scalar constants a part
 * clones from the entry (a detector's class index, a position) are
 * compared without their values, and those that differ become arguments
 * of the shared function, each call passing its own. Parts that differ
 * in anything else (a shape, an attribute, a float constant) are never
 * merged. ONNX2MLIR_NO_SHARED_LAYERS=1 turns the search off (each part
 * its own function, as before).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "exec/exec_internal.h"

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

/* ---- op -> (top-level op, index in its walk) ------------------------------- */

typedef struct op_place {
  const void *op;
  int top, local;
} op_place;

typedef struct places {
  op_place *slots;
  size_t cap;
  int top, next_local; /* while indexing */
} places;

static size_t slot_for(const places *m, const void *op) {
  size_t i = exec_ptr_slot(op, m->cap);
  while (m->slots[i].op && m->slots[i].op != op) i = (i + 1) & (m->cap - 1);
  return i;
}

static const op_place *place_of(const places *m, MlirOperation op) {
  const op_place *p = &m->slots[slot_for(m, op.ptr)];
  return p->op ? p : NULL;
}

static MlirWalkResult index_op(MlirOperation op, void *user) {
  places *m = user;
  op_place *p = &m->slots[slot_for(m, op.ptr)];
  *p = (op_place){op.ptr, m->top, m->next_local++};
  return MlirWalkResultAdvance;
}

static MlirWalkResult count_nested(MlirOperation op, void *user) {
  (void)op;
  ++*(size_t *)user;
  return MlirWalkResultAdvance;
}

/* ---- the structural hash of a top-level op --------------------------------- */

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9ull;
}

typedef struct hashing {
  const places *m;
  int top;
  uint64_t h;
} hashing;

static int is_integer_scalar(MlirType t) { return mlirTypeIsAInteger(t) || mlirTypeIsAIndex(t); }

/* What an operand contributes: see the file's comment. */
static uint64_t operand_code(const hashing *hs, MlirValue v) {
  uint64_t type = (uintptr_t)mlirValueGetType(v).ptr;
  if (mlirValueIsABlockArgument(v)) {
    MlirOperation owner = mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
    const op_place *p = place_of(hs->m, owner);
    if (!p || p->top != hs->top) return mix(1, type); /* the entry's argument */
    return mix(mix(mix(2, (uint64_t)p->local), (uint64_t)mlirBlockArgumentGetArgNumber(v)), type);
  }
  MlirOperation def = mlirOpResultGetOwner(v);
  const op_place *p = place_of(hs->m, def);
  if (p && p->top == hs->top)
    return mix(mix(mix(4, (uint64_t)p->local), (uint64_t)mlirOpResultGetResultNumber(v)), type);
  if (exec_op_named(def, "arith.constant")) /* an integer by type (it may become a parameter), others by value */
    return is_integer_scalar(mlirValueGetType(v))
               ? mix(6, type)
               : mix(5, (uintptr_t)mlirOperationGetAttributeByName(def, str("value")).ptr);
  return mix(1, type); /* another op's buffer: an argument of the part */
}

static MlirWalkResult hash_op(MlirOperation op, void *user) {
  hashing *hs = user;
  uint64_t h = mix(hs->h, (uintptr_t)mlirOperationGetName(op).ptr);
  /* a global's name is a weight's: left out, like the entry's arguments */
  int n_attrs = exec_op_named(op, "memref.get_global") ? 0 : (int)mlirOperationGetNumAttributes(op);
  for (int i = 0; i < n_attrs; i++) {
    MlirNamedAttribute a = mlirOperationGetAttribute(op, i);
    h = mix(mix(h, (uintptr_t)a.name.ptr), (uintptr_t)a.attribute.ptr);
  }
  for (intptr_t i = 0, n = mlirOperationGetNumResults(op); i < n; i++)
    h = mix(h, (uintptr_t)mlirValueGetType(mlirOperationGetResult(op, i)).ptr);
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(op); i < n; i++)
    h = mix(h, operand_code(hs, mlirOperationGetOperand(op, i)));
  h = mix(h, (uint64_t)mlirOperationGetNumRegions(op));
  hs->h = h;
  return MlirWalkResultAdvance;
}

/* What a top-level op weighs in choosing a repeat: its nested ops when
 * it has a body (a loop nest), a few for a call (a kernel); buffers,
 * views, weights and deallocations nothing, so that a run of them is no
 * layer. */
static long work_of(MlirOperation op, int nested) {
  if (mlirOperationGetNumRegions(op) > 0) return nested;
  return exec_op_named(op, "func.call") ? 8 : 0;
}

/* ---- the best repeat in a range --------------------------------------------- */

typedef struct exec_repeat {
  int first, period, copies; /* ops [first, first + period * copies): copies of one block */
} exec_repeat;

enum {
  MAX_RUNS = 32,           /* repeated runs looked for */
  MAX_PERIOD = 4096,       /* top-level ops of one copy, at most */
  MIN_COPY_WEIGHT = 64,    /* nested ops of one copy, at least */
  MAX_SEARCHED_OPS = 60000 /* bigger bodies are not searched */
};

/* The run in [lo, hi) that saves the most work: that of one copy (prefix
 * sums of work_of in `sum`) times the copies beyond the first. */
static exec_repeat best_in(const uint64_t *h, const long *sum, int lo, int hi) {
  exec_repeat best = {0, 0, 0};
  long best_saved = 0;
  int max_p = (hi - lo) / 2 < MAX_PERIOD ? (hi - lo) / 2 : MAX_PERIOD;
  for (int p = 1; p <= max_p; p++) {
    for (int i = lo; i + p < hi;) {
      if (h[i] != h[i + p]) {
        i++;
        continue;
      }
      int a = i;
      while (i + p < hi && h[i] == h[i + p]) i++;
      int copies = (i - a + p) / p;
      long weight = sum[a + p] - sum[a];
      if (copies < 2 || weight < MIN_COPY_WEIGHT) continue;
      long saved = weight * (copies - 1);
      if (saved > best_saved) best_saved = saved, best = (exec_repeat){a, p, copies};
    }
  }
  return best;
}

/* The best repeat of [lo, hi), then those of what lies before and after
 * it, in order of position; returns the new count. */
static int find_in(const uint64_t *h, const long *sum, int lo, int hi, exec_repeat *out, int n, int max) {
  if (n >= max || hi - lo < 2) return n;
  exec_repeat r = best_in(h, sum, lo, hi);
  if (r.copies < 2) return n;
  n = find_in(h, sum, lo, r.first, out, n, max);
  if (n < max) out[n++] = r;
  return find_in(h, sum, r.first + r.period * r.copies, hi, out, n, max);
}

int exec_shared_layers(void) {
  const char *off = getenv("ONNX2MLIR_NO_SHARED_LAYERS");
  return !(off && *off && strcmp(off, "0") != 0);
}

int exec_find_copies(const MlirOperation *ops, int n, exec_copy *out, int max) {
  if (n < 2 || n > MAX_SEARCHED_OPS || !exec_shared_layers()) return 0;
  size_t total = 0;
  for (int i = 0; i < n; i++) mlirOperationWalk(ops[i], count_nested, &total, MlirWalkPreOrder);
  places m = {NULL, 1, 0, 0};
  while (m.cap < 2 * total + 2) m.cap *= 2;
  m.slots = calloc(m.cap, sizeof(*m.slots));
  int *kept = malloc(((size_t)n + 1) * sizeof(*kept)); /* the ops but the deallocations */
  uint64_t *h = malloc((size_t)n * sizeof(*h));
  long *sum = malloc(((size_t)n + 1) * sizeof(*sum));
  exec_repeat runs[MAX_RUNS];
  int found = 0, nk = 0;
  if (!m.slots || !kept || !h || !sum) goto done;
  sum[0] = 0;
  for (int i = 0; i < n; i++) {
    /* constants stay in the entry (each part clones those it reads) */
    if (exec_op_named(ops[i], "memref.dealloc") || exec_op_named(ops[i], "arith.constant")) continue;
    m.top = nk, m.next_local = 0;
    mlirOperationWalk(ops[i], index_op, &m, MlirWalkPreOrder);
    sum[nk + 1] = sum[nk] + work_of(ops[i], m.next_local);
    kept[nk++] = i;
  }
  kept[nk] = n;
  for (int k = 0; k < nk; k++) {
    hashing hs = {&m, k, 0x243F6A8885A308D3ull};
    mlirOperationWalk(ops[kept[k]], hash_op, &hs, MlirWalkPreOrder);
    h[k] = hs.h;
  }
  int n_runs = find_in(h, sum, 0, nk, runs, 0, MAX_RUNS);
  /* back to positions among all ops: a copy runs to the next one, the
   * deallocations between them included */
  for (int r = 0; r < n_runs; r++)
    for (int c = 0; c < runs[r].copies && found < max; c++)
      out[found++] = (exec_copy){kept[runs[r].first + c * runs[r].period],
                                 kept[runs[r].first + (c + 1) * runs[r].period], c > 0};
done:
  free(m.slots);
  free(kept);
  free(h);
  free(sum);
  return found;
}

/* ---- merging identical parts ------------------------------------------------ */

static void set_callee(MlirOperation call, const char *name) {
  MlirContext ctx = mlirOperationGetContext(call);
  mlirOperationSetAttributeByName(call, str("callee"), mlirFlatSymbolRefAttrGet(ctx, str(name)));
}

static void set_noinline(MlirOperation fn) {
  MlirContext ctx = mlirOperationGetContext(fn);
  mlirOperationSetAttributeByName(fn, str("passthrough"), mlirAttributeParseGet(ctx, str("[\"noinline\"]")));
}

/* ---- integer constants that become parameters ------------------------------ */

/* A part's leading integer constants: the clones of the entry's constants
 * it reads, one per use, which move_part (exec_outline.c) puts first.
 * Copies that differ only in these (a detector's class index, a layer's
 * position) share one function that takes the differing ones as
 * arguments. */
typedef struct leading {
  int n;
  MlirOperation *op;
  MlirAttribute *value;
} leading;

static int find_leading(MlirOperation fn, leading *l) {
  MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
  int cap = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(op) && exec_op_named(op, "arith.constant");
       op = mlirOperationGetNextInBlock(op))
    cap++;
  l->n = 0;
  l->op = malloc(((size_t)cap + 1) * sizeof(*l->op));
  l->value = malloc(((size_t)cap + 1) * sizeof(*l->value));
  if (!l->op || !l->value) return -1;
  for (MlirOperation op = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(op) && exec_op_named(op, "arith.constant");
       op = mlirOperationGetNextInBlock(op)) {
    if (!is_integer_scalar(mlirValueGetType(mlirOperationGetResult(op, 0)))) continue;
    l->op[l->n] = op;
    l->value[l->n++] = mlirOperationGetAttributeByName(op, str("value"));
  }
  return 0;
}

/* Sets the leading constants' values to 0 (masked) or back. */
static void mask_leading(const leading *l, int masked) {
  for (int k = 0; k < l->n; k++) {
    MlirType t = mlirValueGetType(mlirOperationGetResult(l->op[k], 0));
    mlirOperationSetAttributeByName(l->op[k], str("value"), masked ? mlirIntegerAttrGet(t, 0) : l->value[k]);
  }
}

/* Members (same_as[i] == r) of representative r whose leading constants
 * differ from r's: those positions become arguments of r's function,
 * each call passes its own value (a copy of its constant, before it).
 * -1 when out of memory (nothing changed then). */
static int parametrize(exec_part *parts, const leading *lead, const int *same_as, int n, int r) {
  int *differs = malloc(((size_t)lead[r].n + 1) * sizeof(*differs)), nd = 0;
  if (!differs) return -1;
  for (int k = 0; k < lead[r].n; k++) {
    int d = 0;
    for (int i = r + 1; i < n && !d; i++)
      if (same_as[i] == r && !mlirAttributeEqual(lead[i].value[k], lead[r].value[k])) d = 1;
    if (d) differs[nd++] = k;
  }
  MlirOperation fn = parts[r].fn;
  MlirType fn_type = mlirTypeAttrGetValue(mlirOperationGetAttributeByName(fn, str("function_type")));
  intptr_t n_in = mlirFunctionTypeGetNumInputs(fn_type), n_out = mlirFunctionTypeGetNumResults(fn_type);
  MlirValue *operands = malloc(((size_t)n_in + nd + 1) * sizeof(*operands));
  MlirType *ins = malloc(((size_t)n_in + nd + 1) * sizeof(*ins)), *outs = malloc(((size_t)n_out + 1) * sizeof(*outs));
  int status = operands && ins && outs ? 0 : -1;
  for (int i = r; i < n && nd && !status; i++) {
    if (same_as[i] != r) continue;
    MlirOperation call = parts[i].call;
    for (intptr_t a = 0; a < n_in; a++) operands[a] = mlirOperationGetOperand(call, a);
    for (int d = 0; d < nd; d++) {
      MlirOperation c = mlirOperationClone(lead[i].op[differs[d]]);
      mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(call), call, c);
      operands[n_in + d] = mlirOperationGetResult(c, 0);
    }
    mlirOperationSetOperands(call, n_in + nd, operands);
  }
  if (nd && !status) {
    MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
    for (intptr_t a = 0; a < n_in; a++) ins[a] = mlirFunctionTypeGetInput(fn_type, a);
    for (intptr_t a = 0; a < n_out; a++) outs[a] = mlirFunctionTypeGetResult(fn_type, a);
    for (int d = 0; d < nd; d++) {
      MlirOperation c = lead[r].op[differs[d]];
      MlirValue v = mlirOperationGetResult(c, 0);
      ins[n_in + d] = mlirValueGetType(v);
      MlirValue arg = mlirBlockAddArgument(block, ins[n_in + d], mlirOperationGetLocation(c));
      mlirValueReplaceAllUsesOfWith(v, arg);
      mlirOperationDestroy(c);
    }
    MlirType grown = mlirFunctionTypeGet(mlirOperationGetContext(fn), n_in + nd, ins, n_out, outs);
    mlirOperationSetAttributeByName(fn, str("function_type"), mlirTypeAttrGet(grown));
  }
  free(differs);
  free(operands);
  free(ins);
  free(outs);
  return status;
}

int exec_merge_parts(const char *entry, exec_part *parts, int n) {
  exec_text *codes = calloc((size_t)n + 1, sizeof(*codes));
  uint64_t *hashes = calloc((size_t)n + 1, sizeof(*hashes));
  int *same_as = malloc(((size_t)n + 1) * sizeof(*same_as));
  int *number = malloc(((size_t)n + 1) * sizeof(*number));
  leading *lead = calloc((size_t)n + 1, sizeof(*lead));
  int kept = n;
  if (!codes || !hashes || !same_as || !number || !lead) goto done;
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsUseLocalScope(flags);
  for (int i = 0; i < n; i++) {
    same_as[i] = i;
    int failed = find_leading(parts[i].fn, &lead[i]) != 0;
    if (!failed) {
      mask_leading(&lead[i], 1); /* compared without their values */
      failed = exec_function_code(parts[i].fn, flags, &codes[i]) != 0;
      mask_leading(&lead[i], 0);
    }
    if (failed) {
      codes[i].failed = 1; /* kept apart */
      continue;
    }
    hashes[i] = exec_hash_bytes(codes[i].s, codes[i].len);
    for (int j = 0; j < i; j++)
      if (same_as[j] == j && !codes[j].failed && hashes[j] == hashes[i] && codes[j].len == codes[i].len &&
          memcmp(codes[j].s, codes[i].s, codes[i].len) == 0) {
        same_as[i] = j;
        break;
      }
  }
  mlirOpPrintingFlagsDestroy(flags);
  for (int i = 0; i < n; i++)
    if (same_as[i] == i && parametrize(parts, lead, same_as, n, i) != 0)
      for (int j = i + 1; j < n; j++) /* out of memory: not merged */
        if (same_as[j] == i) same_as[j] = j;
  kept = 0;
  for (int i = 0; i < n; i++) {
    if (same_as[i] != i) {
      mlirOperationDestroy(parts[i].fn);
      continue;
    }
    number[i] = kept++;
    char name[300];
    snprintf(name, sizeof(name), "%s_part%d", entry, number[i]);
    mlirOperationSetAttributeByName(parts[i].fn, str("sym_name"), mlirStringAttrGet(mlirOperationGetContext(parts[i].fn), str(name)));
  }
  for (int i = 0; i < n; i++) {
    char name[300];
    snprintf(name, sizeof(name), "%s_part%d", entry, number[same_as[i]]);
    set_callee(parts[i].call, name);
    /* compiled once, called per copy: LLVM must not inline the copies back
     * where the module is one unit */
    if (same_as[i] != i) set_noinline(parts[same_as[i]].fn);
  }
done:
  for (int i = 0; codes && i < n; i++) free(codes[i].s);
  free(codes);
  free(hashes);
  free(same_as);
  free(number);
  for (int i = 0; lead && i < n; i++) free(lead[i].op), free(lead[i].value);
  free(lead);
  return kept;
}
