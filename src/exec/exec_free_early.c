/* exec_free_early.c - exec_free_early: the entry's buffers freed after
 * their last use, not when it returns.
 *
 * Upstream's buffer deallocation puts each memref.dealloc at the end of
 * the block that allocated the buffer: in the entry's one block, every
 * intermediate buffer of a model lives until the model returns. Here
 * each `memref.dealloc %b` at the entry's top level, of a buffer made by
 * a top-level `memref.alloc`, moves to just after the last top-level op
 * that uses %b or anything computed from it (views, casts, loop results,
 * pointers and sizes read from it: every value that depends on %b counts,
 * as far as the def-use chains reach), so the memory is reused sooner and
 * the entry's parts (exec_outline.c) free what they allocate themselves.
 *
 * Conservative by construction: a buffer whose value reaches anything the
 * chains cannot follow (an op of another block, the entry's return)
 * keeps its dealloc where it was.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_internal.h"

typedef struct top_ops {
  MlirOperation func;
  int n;
  MlirOperation *ops;
  void **keys; /* open addressing: op pointer -> its index */
  int *index;
  size_t cap;
} top_ops;

static size_t key_slot(const top_ops *t, const void *p) {
  size_t i = exec_ptr_slot(p, t->cap);
  while (t->keys[i] && t->keys[i] != p) i = (i + 1) & (t->cap - 1);
  return i;
}

/* The index of the top-level op holding op, or -1 when op is not in the
 * entry's block (nor nested in one of its ops). */
static int top_index(const top_ops *t, MlirOperation op) {
  for (int depth = 0; depth < 256 && !mlirOperationIsNull(op); depth++) {
    size_t s = key_slot(t, op.ptr);
    if (t->keys[s]) return t->index[s];
    MlirOperation parent = mlirOperationGetParentOperation(op);
    if (mlirOperationIsNull(parent) || mlirOperationEqual(parent, t->func)) return -1;
    op = parent;
  }
  return -1;
}

enum { MAX_CHAIN = 4096 }; /* values followed per buffer; beyond: left alone */

/* The index of the last top-level op that uses the buffer `b` (or what
 * depends on it) other than `dealloc`; -1 when it cannot be told. */
static int last_use(const top_ops *t, MlirValue b, MlirOperation dealloc, exec_value_list *c) {
  c->n = 0;
  if (exec_value_list_add(c, b)) return -1;
  int last = 0;
  for (int k = 0; k < c->n; k++) {
    for (MlirOpOperand u = mlirValueGetFirstUse(c->v[k]); !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
      MlirOperation user = mlirOpOperandGetOwner(u);
      if (mlirOperationEqual(user, dealloc)) continue;
      int at = top_index(t, user);
      if (at < 0) return -1; /* the return, or another block */
      if (at > last) last = at;
      for (intptr_t r = 0, nr = mlirOperationGetNumResults(user); r < nr; r++)
        if (exec_value_list_add(c, mlirOperationGetResult(user, r))) return -1;
      /* a value a nested op computes from the buffer may leave through its
       * region's terminator: the op holding it is followed too */
      for (MlirOperation p = mlirOperationGetParentOperation(user);
           !mlirOperationIsNull(p) && !mlirOperationEqual(p, t->func); p = mlirOperationGetParentOperation(p))
        for (intptr_t r = 0, nr = mlirOperationGetNumResults(p); r < nr; r++)
          if (exec_value_list_add(c, mlirOperationGetResult(p, r))) return -1;
      if (c->n > MAX_CHAIN) return -1;
    }
  }
  return last;
}

int exec_free_early(MlirModule module, const char *entry) {
  MlirOperation func = exec_find_entry(module, entry);
  if (mlirOperationIsNull(func)) return 0;
  MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  if (mlirBlockIsNull(block) || !mlirBlockIsNull(mlirBlockGetNextInRegion(block))) return 0;
  top_ops t = {func, 0, NULL, NULL, NULL, 1};
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    t.n++;
  while (t.cap < 2 * (size_t)t.n + 2) t.cap *= 2;
  t.ops = malloc(((size_t)t.n + 1) * sizeof(*t.ops));
  t.keys = calloc(t.cap, sizeof(*t.keys));
  t.index = malloc(t.cap * sizeof(*t.index));
  /* where each dealloc goes: after op after[i] (-1: stays) */
  int *after = malloc(((size_t)t.n + 1) * sizeof(*after));
  exec_value_list c = {0, 0, NULL};
  int moved = 0;
  if (!t.ops || !t.keys || !t.index || !after) goto done;
  int i = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op), i++) {
    t.ops[i] = op;
    size_t s = key_slot(&t, op.ptr);
    t.keys[s] = op.ptr, t.index[s] = i;
  }
  for (i = 0; i < t.n; i++) {
    after[i] = -1;
    MlirOperation op = t.ops[i];
    if (!exec_op_named(op, "memref.dealloc") || mlirOperationGetNumOperands(op) != 1) continue;
    MlirValue b = mlirOperationGetOperand(op, 0);
    if (!mlirValueIsAOpResult(b)) continue;
    MlirOperation alloc = mlirOpResultGetOwner(b);
    if (!exec_op_named(alloc, "memref.alloc") || top_index(&t, alloc) < 0) continue;
    int last = last_use(&t, b, op, &c);
    if (last >= 0 && last < i - 1) after[i] = last;
  }
  /* move them (indices above stay valid: they name ops, not positions) */
  for (i = 0; i < t.n; i++) {
    if (after[i] < 0) continue;
    mlirOperationMoveAfter(t.ops[i], t.ops[after[i]]);
    moved++;
  }
done:
  free(t.ops);
  free(t.keys);
  free(t.index);
  free(after);
  free(c.v);
  return moved;
}
