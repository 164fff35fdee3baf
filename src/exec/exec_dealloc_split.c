/* exec_dealloc_split.c - exec_split_entry_deallocs: the entry's one big
 * `bufferization.dealloc` made small before upstream simplifies it.
 *
 * Ownership-based deallocation ends the entry's block with a single
 * bufferization.dealloc of every buffer the block allocated (a detector's
 * entry: 1900 of them), retaining the returned buffers. Upstream's
 * simplification then asks, pair by pair, which of them may alias which
 * (1.3 s of a 5 s compile there). Most need no asking: a buffer made by a
 * top-level memref.alloc, owned unconditionally, from which no other
 * operand of the dealloc is computed (its def-use chains, through views,
 * casts, loop and branch results, pointers and sizes, reach none of them)
 * can alias none of them, since every alias of a fresh buffer is computed
 * from it. Each such buffer gets a memref.dealloc of its own (what
 * lowering the dealloc would give it) and leaves the list; the rest stay
 * for upstream's analysis.
 */
#include <stdlib.h>

#include <mlir-c/BuiltinAttributes.h>

#include "exec/exec_internal.h"

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

enum { MAX_CHAIN = 256 }; /* values followed per buffer; beyond: left to upstream */

/* A set of values (open addressing on the pointer), with a count each. */
typedef struct value_set {
  const void **keys;
  int *count;
  size_t cap;
} value_set;

static size_t value_slot(const value_set *s, const void *p) {
  size_t i = exec_ptr_slot(p, s->cap);
  while (s->keys[i] && s->keys[i] != p) i = (i + 1) & (s->cap - 1);
  return i;
}

static int is_true(MlirValue v) {
  if (!mlirValueIsAOpResult(v) || !exec_op_named(mlirOpResultGetOwner(v), "arith.constant")) return 0;
  MlirAttribute a = mlirOperationGetAttributeByName(mlirOpResultGetOwner(v), str("value"));
  return mlirAttributeIsAInteger(a) && mlirIntegerAttrGetValueInt(a) != 0;
}

/* Whether some value computed from the buffer b (b itself excluded) is an
 * operand of the dealloc, or b is one twice; 1 also when the chains are
 * too long to tell. */
static int may_alias_others(MlirValue b, MlirOperation dealloc, const value_set *operands, exec_value_list *c) {
  if (operands->count[value_slot(operands, b.ptr)] > 1) return 1;
  c->n = 0;
  if (exec_value_list_add(c, b)) return 1;
  for (int k = 0; k < c->n; k++) {
    for (MlirOpOperand u = mlirValueGetFirstUse(c->v[k]); !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
      MlirOperation user = mlirOpOperandGetOwner(u);
      if (mlirOperationEqual(user, dealloc)) continue;
      for (intptr_t r = 0, nr = mlirOperationGetNumResults(user); r < nr; r++)
        if (exec_value_list_add(c, mlirOperationGetResult(user, r))) return 1;
      /* what a nested op computes may leave through its regions' results */
      for (MlirOperation p = mlirOperationGetParentOperation(user); !mlirOperationIsNull(p);
           p = mlirOperationGetParentOperation(p)) {
        if (exec_op_named(p, "func.func")) break;
        for (intptr_t r = 0, nr = mlirOperationGetNumResults(p); r < nr; r++)
          if (exec_value_list_add(c, mlirOperationGetResult(p, r))) return 1;
      }
      if (c->n > MAX_CHAIN) return 1;
    }
  }
  for (int k = 1; k < c->n; k++)
    if (operands->keys[value_slot(operands, c->v[k].ptr)]) return 1;
  return 0;
}

/* Splits the buffers of one dealloc at the entry's top level; returns how
 * many left its list. */
static int split(MlirOperation dealloc, MlirBlock entry_block) {
  intptr_t n_ops = mlirOperationGetNumOperands(dealloc);
  MlirAttribute sizes = mlirOperationGetAttributeByName(dealloc, str("operandSegmentSizes"));
  if (mlirAttributeIsNull(sizes) || !mlirAttributeIsADenseI32Array(sizes) || mlirDenseArrayGetNumElements(sizes) != 3)
    return 0;
  int32_t n = mlirDenseI32ArrayGetElement(sizes, 0), n_retained = mlirDenseI32ArrayGetElement(sizes, 2);
  if (n < 1 || mlirDenseI32ArrayGetElement(sizes, 1) != n || 2 * (intptr_t)n + n_retained != n_ops) return 0;
  value_set operands = {NULL, NULL, 1};
  while (operands.cap < 2 * (size_t)n_ops + 2) operands.cap *= 2;
  operands.keys = calloc(operands.cap, sizeof(*operands.keys));
  operands.count = calloc(operands.cap, sizeof(*operands.count));
  MlirValue *kept = malloc(((size_t)n_ops + 1) * sizeof(*kept));
  char *alone = calloc((size_t)n + 1, 1);
  exec_value_list c = {0, 0, NULL};
  int n_alone = 0;
  if (!operands.keys || !operands.count || !kept || !alone) goto done;
  for (intptr_t i = 0; i < n_ops; i++) {
    if (i >= n && i < 2 * (intptr_t)n) continue; /* the conditions */
    MlirValue v = mlirOperationGetOperand(dealloc, i);
    size_t s = value_slot(&operands, v.ptr);
    operands.keys[s] = v.ptr, operands.count[s]++;
  }
  for (int32_t i = 0; i < n; i++) {
    MlirValue b = mlirOperationGetOperand(dealloc, i);
    if (!is_true(mlirOperationGetOperand(dealloc, n + i)) || !mlirValueIsAOpResult(b)) continue;
    MlirOperation alloc = mlirOpResultGetOwner(b);
    if (!exec_op_named(alloc, "memref.alloc") || !mlirBlockEqual(mlirOperationGetBlock(alloc), entry_block)) continue;
    if (may_alias_others(b, dealloc, &operands, &c)) continue;
    alone[i] = 1, n_alone++;
  }
  if (!n_alone) goto done;
  MlirLocation loc = mlirOperationGetLocation(dealloc);
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++) {
    MlirValue b = mlirOperationGetOperand(dealloc, i);
    if (!alone[i]) {
      kept[m++] = b;
      continue;
    }
    MlirOperationState st = mlirOperationStateGet(str("memref.dealloc"), loc);
    mlirOperationStateAddOperands(&st, 1, &b);
    mlirBlockInsertOwnedOperationBefore(entry_block, dealloc, mlirOperationCreate(&st));
  }
  for (int32_t i = 0, k = m; i < n; i++)
    if (!alone[i]) kept[k++] = mlirOperationGetOperand(dealloc, n + i);
  for (int32_t r = 0; r < n_retained; r++) kept[2 * m + r] = mlirOperationGetOperand(dealloc, 2 * n + r);
  mlirOperationSetOperands(dealloc, 2 * m + n_retained, kept);
  int32_t segments[3] = {m, m, n_retained};
  mlirOperationSetAttributeByName(dealloc, str("operandSegmentSizes"),
                                  mlirDenseI32ArrayGet(mlirOperationGetContext(dealloc), 3, segments));
done:
  free(operands.keys);
  free(operands.count);
  free(kept);
  free(alone);
  free(c.v);
  return n_alone;
}

int exec_split_entry_deallocs(MlirModule module, const char *entry) {
  MlirOperation func = exec_find_entry(module, entry);
  if (mlirOperationIsNull(func)) return 0;
  MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  if (mlirBlockIsNull(block) || !mlirBlockIsNull(mlirBlockGetNextInRegion(block))) return 0;
  int total = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    if (exec_op_named(op, "bufferization.dealloc")) total += split(op, block);
  return total;
}
