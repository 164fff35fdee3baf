/* rt_branch.c - the stop of a call that takes an If branch the compiler
 * could not build for the compiled shapes (rt_abi.h, O2M_BRANCH_FAILED_FN).
 *
 * The generated code calls O2M_BRANCH_FAILED_FN(id) and would go on with
 * placeholder values, which later ops may not survive; the function
 * therefore jumps back (longjmp) to the o2m_rt_guarded_call that started
 * the call, on the same thread. Generated code holds no cleanups to skip;
 * the buffers it had allocated in that call are lost, which an error path
 * can afford.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/rt_internal.h"

typedef struct guard {
  jmp_buf back;
  volatile int id;
  struct guard *outer;
} guard;

static _Thread_local guard *current;

void o2m_rt_branch_failed(int32_t id) {
  guard *g = current;
  if (!g) return; /* not inside o2m_rt_guarded_call: nothing to stop */
  g->id = id;
  longjmp(g->back, 1);
}

RT_CALLS_GENERATED_CODE int o2m_rt_guarded_call(void (*fn)(void **), void **args) {
  guard g;
  g.id = -1;
  g.outer = current;
  current = &g;
  if (setjmp(g.back) == 0) fn(args);
  current = g.outer;
  return g.id;
}

o2m_rt_symbol rt_branch_failed_symbol(void) {
  return (o2m_rt_symbol){O2M_BRANCH_FAILED_FN, (void *)(uintptr_t)o2m_rt_branch_failed};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void onnx2mlir_branch_failed(int32_t id) { o2m_rt_branch_failed(id); }
#endif
