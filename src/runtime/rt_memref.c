/* rt_memref.c - MLIR's memref.copy between views of any layout
 * (rt_abi.h, O2M_MEMREF_COPY_FN), for generated code; and the kernels'
 * row-major views of their operands (o2m_rt_dense).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* MLIR lowers a memref.copy between views that are not both contiguous
 * to a call of memrefCopy(element bytes, source, destination), each an
 * unranked descriptor (rank, pointer to the ranked one). MLIR's C runner
 * utilities copy element by element; this one copies the longest run the
 * two views share contiguously (a padded tensor's rows, say) at a time. */
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
  if (inner == 0) {
    memmove(to, from, (size_t)(count * esize));
    return;
  }
  /* run r starts at the outer index r decomposed over dims [0, inner) */
  size_t bytes = (size_t)(run * esize);
  for (int64_t r = 0; r < count / run; r++) {
    int64_t rest = r, so = 0, dof = 0;
    for (int64_t k = inner - 1; k >= 0; k--) {
      int64_t i = rest % sizes[k];
      rest /= sizes[k];
      so += i * ss[k], dof += i * ds[k];
    }
    memcpy(to + dof * esize, from + so * esize, bytes);
  }
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
