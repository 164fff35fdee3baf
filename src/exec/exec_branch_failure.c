/* exec_branch_failure.c - If branches that cannot be built for the
 * compiled shapes and are taken at run time (emit.h,
 * O2M_BRANCH_FAILED_FN): the messages the module carries, the function the
 * generated code calls, and the call that it stops.
 *
 * The generated code calls O2M_BRANCH_FAILED_FN(id) and would go on with
 * placeholder values, which later ops may not survive; the function
 * therefore jumps back (longjmp) to the exec_guarded_call that started the
 * call, on the same thread. Generated code holds no cleanups to skip; the
 * buffers it had allocated in that call are lost, which an error path can
 * afford.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include <mlir-c/BuiltinAttributes.h>

#include "emit/emit.h"
#include "exec/exec_internal.h"
#include "util/diag.h"

typedef struct guard {
  jmp_buf back;
  volatile int id;
  struct guard *outer;
} guard;

static _Thread_local guard *current;

static void branch_failed(int32_t id) {
  guard *g = current;
  if (!g) return; /* not inside exec_guarded_call: nothing to stop */
  g->id = id;
  longjmp(g->back, 1);
}

int exec_guarded_call(void (*fn)(void **), void **args) {
  guard g;
  g.id = -1;
  g.outer = current;
  current = &g;
  if (setjmp(g.back) == 0) fn(args);
  current = g.outer;
  return g.id;
}

exec_symbol exec_branch_failed_symbol(void) { return (exec_symbol){O2M_BRANCH_FAILED_FN, (void *)(uintptr_t)branch_failed}; }

o2m_status exec_read_branch_failures(MlirModule module, o2m_arena *arena,
                                     exec_branch_failures *out, o2m_diag *diag) {
  *out = (exec_branch_failures){0, NULL};
  MlirAttribute list = mlirOperationGetDiscardableAttributeByName(
      mlirModuleGetOperation(module), mlirStringRefCreateFromCString(O2M_BRANCH_FAILURES_ATTR));
  if (mlirAttributeIsNull(list) || !mlirAttributeIsAArray(list)) return O2M_OK;
  int n = (int)mlirArrayAttrGetNumElements(list);
  const char **messages = o2m_arena_array(arena, (size_t)n + 1, sizeof(*messages));
  if (!messages) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    MlirAttribute a = mlirArrayAttrGetElement(list, i);
    MlirStringRef text = mlirAttributeIsAString(a) ? mlirStringAttrGetValue(a)
                                                   : mlirStringRefCreateFromCString("(no message)");
    if (!(messages[i] = o2m_arena_strndup(arena, text.data, text.length)))
      return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  }
  *out = (exec_branch_failures){n, messages};
  return O2M_OK;
}
