/* rt_symbols.c - the runtime's table of the functions generated code
 * calls, by name (the JIT binds them by address), and its clock.
 */
#include <time.h>

#include "runtime/rt_internal.h"

int o2m_rt_symbols(o2m_rt_symbol *out) {
  int n = 0;
  out[n++] = rt_memref_copy_symbol();
  out[n++] = rt_branch_failed_symbol();
  out[n++] = rt_profile_symbol();
  n += rt_blas_symbols(out + n);
  n += rt_dnnl_symbols(out + n);
  n += rt_kernel_symbols(out + n);
  out[n++] = rt_nbits_symbol();
  out[n++] = rt_qconv_symbol();
  out[n++] = rt_conv_integer_symbol();
  out[n++] = rt_conv_nd_symbol();
  out[n++] = rt_softmax_symbol();
  out[n++] = rt_qmatmul_symbol();
  out[n++] = rt_dynquant_symbol();
  out[n++] = rt_parallel_symbol();
  for (int i = 0; i < 3; i++) out[n++] = rt_alloc_symbols_at(i);
  return n;
}

double o2m_rt_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
