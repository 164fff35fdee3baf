/* rt_threads.c - how many threads a call's kernels may use.
 *
 * Owns: the count a caller names for the calls it makes on this thread
 * (o2m_rt_set_call_threads; a thread-local setting, so calls on several
 * threads at once each keep theirs), and the default: ONNX2MLIR_THREADS,
 * else the CPUs this process may run on (sched_getaffinity), as
 * onnxruntime's default. The threads themselves are GNU OpenMP's pool, the
 * one oneDNN runs on (rt_dnnl.c): convolutions, pools and products run
 * there with the call's count, and so do the generated code's loops that
 * the compiler split (rt_parallel.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "runtime/rt_internal.h"

static _Thread_local int call_threads; /* 0: the default */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static int default_threads = 1;

static void find_default(void) {
  const char *env = getenv("ONNX2MLIR_THREADS");
  char *end = NULL;
  long n = env && *env ? strtol(env, &end, 10) : 0;
  if (env && *env && end && !*end && n >= 1 && n <= 4096) {
    default_threads = (int)n;
    return;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) default_threads = CPU_COUNT(&set);
}

int o2m_rt_default_threads(void) {
  pthread_once(&default_once, find_default);
  return default_threads;
}

int o2m_rt_set_call_threads(int n) {
  int was = call_threads;
  call_threads = n > 0 ? n : 0;
  return was;
}

int o2m_rt_call_threads(void) { return call_threads > 0 ? call_threads : o2m_rt_default_threads(); }
