/* exec_profile.c - the time of each node of the main graph in calls of
 * code built with O2M_JIT_PROFILE (emit.h): `run --profile`.
 *
 * Owns: O2M_PROFILE_FN, which the generated code calls before its first
 * node (-1) and after each node's code, and the per-node sums: the time
 * since the previous mark goes to the node just finished. One profile at
 * a time per process (the CLI's run); exec_profile_begin sizes it. Time
 * in a node's code includes the allocations and copies it makes.
 */
#include <stdlib.h>
#include <time.h>

#include "emit/emit.h"
#include "exec/exec_internal.h"

static double *sums;
static int n_sums;
static double last;

static void profile_mark(int32_t node) {
  double t = exec_now_ms();
  if (node >= 0 && node < n_sums) sums[node] += t - last;
  last = exec_now_ms(); /* the mark's own time is not the next node's */
}

exec_symbol exec_profile_symbol(void) { return (exec_symbol){O2M_PROFILE_FN, (void *)(uintptr_t)profile_mark}; }

int exec_profile_begin(int n_nodes) {
  free(sums);
  sums = calloc((size_t)n_nodes + 1, sizeof(double));
  n_sums = sums ? n_nodes : 0;
  last = exec_now_ms();
  return sums ? 0 : -1;
}

const double *exec_profile_sums(void) { return sums; }

void exec_profile_end(void) {
  free(sums);
  sums = NULL;
  n_sums = 0;
}
