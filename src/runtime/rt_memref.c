/* rt_memref.c - MLIR's memref.copy between views of any layout
 * (rt_abi.h, O2M_MEMREF_COPY_FN), for generated code.
 */
#include <stdint.h>
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

o2m_rt_symbol rt_memref_copy_symbol(void) {
  return (o2m_rt_symbol){O2M_MEMREF_COPY_FN, (void *)(uintptr_t)o2m_rt_memref_copy};
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the name the generated code calls (rt_abi.h) */
void memrefCopy(int64_t esize, o2m_rt_unranked *src, o2m_rt_unranked *dst) { o2m_rt_memref_copy(esize, src, dst); }
#endif
