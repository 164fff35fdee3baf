/* rt_internal.h - what the runtime's files share: each file's kernels by
 * symbol (o2m_rt_symbols gathers them). Not for use outside src/runtime.
 */
#ifndef O2M_RT_INTERNAL_H
#define O2M_RT_INTERNAL_H

#include "runtime/runtime.h"

int rt_blas_symbols(o2m_rt_symbol *out);    /* 4 */
int rt_dnnl_symbols(o2m_rt_symbol *out);    /* 4, none when built without oneDNN's header */
int rt_kernel_symbols(o2m_rt_symbol *out);  /* 2 */
o2m_rt_symbol rt_memref_copy_symbol(void);
o2m_rt_symbol rt_branch_failed_symbol(void);
o2m_rt_symbol rt_profile_symbol(void);
o2m_rt_symbol rt_nbits_symbol(void);
o2m_rt_symbol rt_alloc_symbols_at(int i); /* 0..2: alloc, aligned alloc, free */

/* oneDNN's threaded sgemm (rt_dnnl.c) for o2m_rt_gemm when a call has
 * several threads; 0 when it cannot. */
int rt_dnnl_gemm(int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa, const float *b,
                 const int64_t *sb, float *c, const int64_t *sc);

/* The functions behind those symbols that other files call. */
void o2m_rt_memref_copy(int64_t esize, o2m_rt_unranked *src, o2m_rt_unranked *dst);
void o2m_rt_branch_failed(int32_t id);
void o2m_rt_profile_mark(int32_t node);

#endif
