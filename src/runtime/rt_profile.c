/* rt_profile.c - the time of each node of the main graph in calls of
 * code built with O2M_JIT_PROFILE (emit.h): `run --profile`.
 *
 * Owns: O2M_PROFILE_FN, which the generated code calls before its first
 * node (-1) and after each node's code, and the per-node sums: the time
 * since the previous mark goes to the node just finished. One profile at
 * a time per process (the CLI's run); o2m_rt_profile_begin sizes it. Time
 * in a node's code includes the allocations and copies it makes.
 */
#include <stdlib.h>
#include <time.h>

#include "runtime/rt_internal.h"

static double *sums;
static int n_sums;
static double last;

void o2m_rt_profile_mark(int32_t node) {
  double t = o2m_rt_now_ms();
  if (node >= 0 && node < n_sums) sums[node] += t - last;
  last = o2m_rt_now_ms(); /* the mark's own time is not the next node's */
}

o2m_rt_symbol rt_profile_symbol(void) { return (o2m_rt_symbol){O2M_PROFILE_FN, (void *)(uintptr_t)o2m_rt_profile_mark}; }

int o2m_rt_profile_begin(int n_nodes) {
  free(sums);
  sums = calloc((size_t)n_nodes + 1, sizeof(double));
  n_sums = sums ? n_nodes : 0;
  last = o2m_rt_now_ms();
  return sums ? 0 : -1;
}

const double *o2m_rt_profile_sums(void) { return sums; }

void o2m_rt_profile_end(void) {
  free(sums);
  sums = NULL;
  n_sums = 0;
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void onnx2mlir_profile(int32_t node) { o2m_rt_profile_mark(node); }
#endif
