/* rt_memref.c - MLIR's memref.copy between views of any layout
 * (rt_abi.h, O2M_MEMREF_COPY_FN), for generated code; and the kernels'
 * row-major views of their operands (o2m_rt_dense).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* A copy cut into pieces for the call's threads (rt_parallel.c): runs of
 * `run_bytes` at the outer indices [lo, hi) over dims [0, inner), or for
 * one contiguous block (inner 0) its chunks of CHUNK bytes. */
enum { CHUNK = 64 << 10 };

typedef struct copy_job {
  const char *from;
  char *to;
  const int64_t *sizes, *ss, *ds;
  int64_t inner, esize, total_bytes;
  size_t run_bytes;
} copy_job;

static void copy_runs(void *arg, int64_t lo, int64_t hi) {
  const copy_job *j = arg;
  if (j->inner == 0) {
    int64_t end = hi * CHUNK < j->total_bytes ? hi * CHUNK : j->total_bytes;
    memcpy(j->to + lo * CHUNK, j->from + lo * CHUNK, (size_t)(end - lo * CHUNK));
    return;
  }
  for (int64_t r = lo; r < hi; r++) {
    int64_t rest = r, so = 0, dof = 0;
    for (int64_t k = j->inner - 1; k >= 0; k--) {
      int64_t i = rest % j->sizes[k];
      rest /= j->sizes[k];
      so += i * j->ss[k], dof += i * j->ds[k];
    }
    memcpy(j->to + dof * j->esize, j->from + so * j->esize, j->run_bytes);
  }
}

/* MLIR lowers a memref.copy between views that are not both contiguous
 * to a call of memrefCopy(element bytes, source, destination), each an
 * unranked descriptor (rank, pointer to the ranked one). MLIR's C runner
 * utilities copy element by element; this one copies the longest run the
 * two views share contiguously (a padded tensor's rows, a channels-last
 * concatenation's pixels) at a time, the runs spread over the call's
 * threads when there is enough to copy (a float copied counting as one
 * op of rt_parallel.c's grain). */
void o2m_rt_memref_copy(int64_t esize, o2m_rt_unranked *src, o2m_rt_unranked *dst) {
  int64_t rank = src->rank, *s = src->desc, *d = dst->desc;
  const int64_t *sizes = s + 3, *ss = s + 3 + rank, *ds = d + 3 + rank;
  const char *from = (const char *)(intptr_t)s[1] + s[2] * esize;
  char *to = (char *)(intptr_t)d[1] + d[2] * esize;
  int64_t count = 1;
  for (int64_t k = 0; k < rank; k++) count *= sizes[k];
  if (count == 0 || (from == to && memcmp(ss, ds, (size_t)rank * sizeof(int64_t)) == 0))
    return; /* nothing, or a view onto itself (bufferization leaves such copies) */
  /* the innermost dims both views hold contiguously: one run */
  int64_t inner = rank, run = 1;
  while (inner > 0 && (sizes[inner - 1] == 1 || (ss[inner - 1] == run && ds[inner - 1] == run))) run *= sizes[--inner];
  int64_t total = count * esize;
  copy_job job = {from, to, sizes, ss, ds, inner, esize, total, (size_t)(run * esize)};
  if (inner == 0) {
    if (from < to + total && to < from + total) { /* overlapping: in order */
      memmove(to, from, (size_t)total);
      return;
    }
    o2m_rt_parallel_for(copy_runs, &job, 0, (total + CHUNK - 1) / CHUNK, CHUNK / 4);
    return;
  }
  o2m_rt_parallel_for(copy_runs, &job, 0, count / run, (int64_t)job.run_bytes / 4 + 8);
}

int64_t o2m_rt_count(const o2m_rt_unranked *m) {
  int64_t count = 1;
  for (int64_t d = 0; d < m->rank; d++) count *= m->desc[3 + d];
  return count;
}

int o2m_rt_row_major(const o2m_rt_unranked *m) {
  const int64_t *d = m->desc;
  for (int64_t k = m->rank - 1, expect = 1; k >= 0; k--) {
    if (d[3 + k] != 1 && d[3 + m->rank + k] != expect) return 0;
    expect *= d[3 + k];
  }
  return 1;
}

enum { MAX_RANK = 16 };

const void *o2m_rt_dense(o2m_rt_unranked *m, int64_t esize, void **owned) {
  const int64_t *d = m->desc;
  const char *at = (const char *)(intptr_t)d[1] + d[2] * esize;
  int64_t count = o2m_rt_count(m);
  *owned = NULL;
  if (o2m_rt_row_major(m) || count == 0) return at;
  char *copy = m->rank <= MAX_RANK ? malloc((size_t)(count * esize)) : NULL;
  if (!copy) return NULL;
  int64_t desc[3 + 2 * MAX_RANK] = {(int64_t)(intptr_t)copy, (int64_t)(intptr_t)copy, 0};
  for (int64_t k = m->rank - 1, stride = 1; k >= 0; k--) {
    desc[3 + k] = d[3 + k];
    desc[3 + m->rank + k] = stride;
    stride *= d[3 + k];
  }
  o2m_rt_unranked to = {m->rank, desc};
  o2m_rt_memref_copy(esize, m, &to);
  *owned = copy;
  return copy;
}

o2m_rt_symbol rt_memref_copy_symbol(void) {
  return (o2m_rt_symbol){O2M_MEMREF_COPY_FN, (void *)(uintptr_t)o2m_rt_memref_copy};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void memrefCopy(int64_t esize, o2m_rt_unranked *src, o2m_rt_unranked *dst) { o2m_rt_memref_copy(esize, src, dst); }
#endif
