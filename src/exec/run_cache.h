/* run_cache.h - the compiled-code cache's key and folder (run_cache.c).
 */
#ifndef O2M_RUN_CACHE_H
#define O2M_RUN_CACHE_H

#include "exec/run.h"

/* The key of running `model` (specialised to `inputs`) with `o` and the
 * kernel libraries `kernels` (bit 0 BLAS, bit 1 oneDNN); NULL
 * when such a run is not cached (no cache folder, another target than
 * Linalg, sequence or optional inputs, a model not read from a file). */
const char *run_cache_key(const o2m_model *model, const o2m_run_options *o, int kernels, int n_inputs,
                          const o2m_tensor *const *inputs, o2m_arena *arena);

#endif
