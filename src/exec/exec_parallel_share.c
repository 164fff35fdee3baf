/* exec_parallel_share.c - identical split loops compiled once.
 *
 * Owns: after exec_outline_parallel, the merging of the functions
 * @<func>_par<k> whose printed code is the same but for their names
 * (same argument types, same loops, same constants, same cost): every
 * call goes to the first of them and the others are erased. A model that
 * applies one op to several tensors of one shape (a recurrent update
 * block, a decoder's steps written out, the same normalisation in each
 * branch) had one copy of the loop per use; RAFT-small had a quarter of
 * its LLVM IR in such copies.
 *
 * Copies inside one function merge freely. Copies in two different parts
 * of the entry (@<entry>_part<i>, exec_outline.c), which become different
 * LLVM units (exec_units.c), merge too: the kept function is marked
 * PARALLEL_SHARED_ATTR, so that its _run helper is external
 * (exec_parallel.c) and the other units call it by declaration. Loops of
 * a function that is not a part stay with it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>

#include "exec/exec_internal.h"

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

typedef struct split_loop {
  MlirOperation fn;
  MlirStringRef name;
  size_t owner_len; /* the name's length without its _par<k> */
  int is_part;      /* the owner is a part of the entry: ..._part<i> */
  uint64_t hash;
  exec_text text;
} split_loop;

/* The length of name without its last "_par<digits>", or 0. */
static size_t owner_length(MlirStringRef name) {
  for (size_t k = name.length; k >= 4; k--) {
    if (memcmp(name.data + k - 4, "_par", 4) != 0) continue;
    int digits = k < name.length;
    for (size_t j = k; j < name.length && digits; j++) digits = name.data[j] >= '0' && name.data[j] <= '9';
    return digits ? k - 4 : 0;
  }
  return 0;
}

/* Whether the first n bytes of s end in "_part<digits>". */
static int ends_in_part(const char *s, size_t n) {
  size_t k = n;
  while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
  return k < n && k >= 5 && memcmp(s + k - 5, "_part", 5) == 0;
}

static int same_owner(const split_loop *a, const split_loop *b) {
  return a->owner_len == b->owner_len && memcmp(a->name.data, b->name.data, a->owner_len) == 0;
}

/* Whether the copy may be replaced by the kept function. */
static int mergeable(const split_loop *kept, const split_loop *copy) {
  if (kept->hash != copy->hash || kept->text.len != copy->text.len) return 0;
  if (!same_owner(kept, copy) && !(kept->is_part && copy->is_part)) return 0;
  return memcmp(kept->text.s, copy->text.s, kept->text.len) == 0;
}

int exec_share_parallel(MlirModule module, int *across_parts) {
  MlirBlock body = mlirModuleGetBody(module);
  int n = 0, merged = 0;
  *across_parts = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
    n += exec_op_named(op, "func.func") && !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, str(PARALLEL_COST_ATTR)));
  if (n < 2) return 0;
  split_loop *loops = calloc((size_t)n, sizeof(*loops));
  if (!loops) return 0;
  int k = 0;
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate(); /* each on its own, not numbered in the module */
  mlirOpPrintingFlagsUseLocalScope(flags);
  mlirOpPrintingFlagsAssumeVerified(flags);
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op) && k < n;
       op = mlirOperationGetNextInBlock(op)) {
    if (!exec_op_named(op, "func.func") || mlirAttributeIsNull(mlirOperationGetAttributeByName(op, str(PARALLEL_COST_ATTR))))
      continue;
    split_loop *l = &loops[k++];
    l->fn = op;
    l->name = mlirStringAttrGetValue(mlirOperationGetAttributeByName(op, str("sym_name")));
    l->owner_len = owner_length(l->name);
    l->is_part = l->owner_len && ends_in_part(l->name.data, l->owner_len);
    if (exec_function_code(op, flags, &l->text) != 0) l->text.failed = 1; /* unprinted: like no other */
    else l->hash = exec_hash_bytes(l->text.s, l->text.len);
  }
  mlirOpPrintingFlagsDestroy(flags);
  MlirContext ctx = mlirModuleGetContext(module);
  /* the merged copies' names, and the names their calls take now */
  MlirStringRef *from = malloc((size_t)k * sizeof(*from));
  MlirAttribute *to = malloc((size_t)k * sizeof(*to));
  for (int i = 0; i < k && from && to; i++) {
    if (mlirOperationIsNull(loops[i].fn) || loops[i].text.failed) continue;
    for (int j = i + 1; j < k; j++) {
      if (mlirOperationIsNull(loops[j].fn) || loops[j].text.failed || !mergeable(&loops[i], &loops[j])) continue;
      from[merged] = loops[j].name; /* the context keeps the name's storage */
      to[merged++] = mlirFlatSymbolRefAttrGet(ctx, loops[i].name);
      if (!same_owner(&loops[i], &loops[j])) {
        mlirOperationSetAttributeByName(loops[i].fn, str(PARALLEL_SHARED_ATTR), mlirUnitAttrGet(ctx));
        ++*across_parts;
      }
      mlirOperationDestroy(loops[j].fn);
      loops[j].fn = (MlirOperation){NULL};
    }
  }
  exec_redirect_calls(mlirModuleGetOperation(module), "func.call", merged, from, to);
  free(from), free(to);
  for (int i = 0; i < k; i++) free(loops[i].text.s);
  free(loops);
  return merged;
}
