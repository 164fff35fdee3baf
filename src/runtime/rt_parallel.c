/* rt_parallel.c - the generated code's own loops on the call's threads.
 *
 * Owns: o2m_rt_parallel_for (rt_abi.h's O2M_PARALLEL_FOR_FN), which runs
 * a task over the iterations [lo, hi) of a loop split into one contiguous
 * share per thread, on GNU OpenMP's pool: the same threads oneDNN's
 * primitives run on (rt_dnnl.c), so that a call never has two pools. How
 * many threads: the call's count (rt_threads.c), no more than one per
 * grain of work (the compiler's estimate of a loop iteration's cost
 * times the iterations), no more than the iterations. The OpenMP runtime
 * is the one the process has, else libgomp.so.1 loaded here; without one,
 * and inside another OpenMP region, the loop runs on the calling thread.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/rt_internal.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RT_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(RT_TSAN)
#define RT_TSAN 1
#endif
#ifdef RT_TSAN
/* libgomp is not instrumented: the hand-over of a share to a pool thread
 * and back is told to ThreadSanitizer here */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define HANDED_OVER(p) __tsan_release(p)
#define TAKEN_OVER(p) __tsan_acquire(p)
#else
#define HANDED_OVER(p) ((void)(p))
#define TAKEN_OVER(p) ((void)(p))
#endif

/* The work (ops, as the compiler counts them) worth one more thread:
 * about 10 microseconds here, against about one to wake a pool thread;
 * ONNX2MLIR_PARALLEL_GRAIN=N sets it (tests split every loop with 1). */
static pthread_once_t grain_once = PTHREAD_ONCE_INIT;
static int64_t grain = O2M_RT_DEFAULT_GRAIN;

static void find_grain(void) {
  const char *env = getenv("ONNX2MLIR_PARALLEL_GRAIN");
  char *end = NULL;
  long long n = env && *env ? strtoll(env, &end, 10) : 0;
  if (env && *env && end && !*end && n >= 1) grain = n;
}

int64_t o2m_rt_parallel_grain(void) {
  pthread_once(&grain_once, find_grain);
  return grain;
}

static void (*p_GOMP_parallel)(void (*)(void *), void *, unsigned, unsigned);
static int (*p_omp_get_thread_num)(void);
static int (*p_omp_get_num_threads)(void);
static int (*p_omp_in_parallel)(void);
static pthread_once_t gomp_once = PTHREAD_ONCE_INIT;

static int resolve_from(void *lib) {
  p_GOMP_parallel = (__typeof__(p_GOMP_parallel))(uintptr_t)dlsym(lib, "GOMP_parallel");
  p_omp_get_thread_num = (__typeof__(p_omp_get_thread_num))(uintptr_t)dlsym(lib, "omp_get_thread_num");
  p_omp_get_num_threads = (__typeof__(p_omp_get_num_threads))(uintptr_t)dlsym(lib, "omp_get_num_threads");
  p_omp_in_parallel = (__typeof__(p_omp_in_parallel))(uintptr_t)dlsym(lib, "omp_in_parallel");
  return p_GOMP_parallel && p_omp_get_thread_num && p_omp_get_num_threads && p_omp_in_parallel;
}

/* oneDNN's (which loads libgomp.so.1) or this process's own copy. */
static void find_gomp(void) {
  void *lib = dlopen("libgomp.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib || !resolve_from(lib)) p_GOMP_parallel = NULL;
}

typedef struct share_job {
  o2m_rt_task task;
  void *ctx;
  int64_t lo, hi;
} share_job;

RT_CALLS_GENERATED_CODE static void run_share(void *arg) {
  share_job *job = arg;
  TAKEN_OVER(job);
  int64_t t = p_omp_get_thread_num(), n_threads = p_omp_get_num_threads(), n = job->hi - job->lo;
  int64_t from = job->lo + n * t / n_threads, to = job->lo + n * (t + 1) / n_threads;
  if (from < to) job->task(job->ctx, from, to);
  HANDED_OVER(job);
}

RT_CALLS_GENERATED_CODE void o2m_rt_parallel_for(o2m_rt_task task, void *ctx, int64_t lo, int64_t hi,
                                                 int64_t cost_per_iteration) {
  int64_t n = hi - lo;
  if (n <= 0) return;
  int64_t threads = o2m_rt_call_threads();
  if (threads > n) threads = n;
  if (cost_per_iteration < 1) cost_per_iteration = 1;
  int64_t worth = n > INT64_MAX / cost_per_iteration ? INT64_MAX : n * cost_per_iteration / o2m_rt_parallel_grain();
  if (threads > worth) threads = worth;
  if (threads > 1) pthread_once(&gomp_once, find_gomp);
  if (threads <= 1 || !p_GOMP_parallel || p_omp_in_parallel()) {
    task(ctx, lo, hi);
    return;
  }
  share_job job = {task, ctx, lo, hi};
  HANDED_OVER(&job);
  p_GOMP_parallel(run_share, &job, (unsigned)threads, 0);
  TAKEN_OVER(&job);
}

o2m_rt_symbol rt_parallel_symbol(void) {
  return (o2m_rt_symbol){O2M_PARALLEL_FOR_FN, (void *)(uintptr_t)o2m_rt_parallel_for};
}
