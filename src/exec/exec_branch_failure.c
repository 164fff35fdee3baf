/* exec_branch_failure.c - If branches that cannot be built for the
 * compiled shapes and are taken at run time (emit.h,
 * O2M_BRANCH_FAILED_FN): the messages the module carries. The function
 * the generated code calls, and the call it stops, are the runtime's
 * (src/runtime/rt_branch.c).
 */
#include <stddef.h>
#include <stdint.h>

#include <mlir-c/BuiltinAttributes.h>

#include "emit/emit.h"
#include "exec/exec_internal.h"
#include "util/diag.h"

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
