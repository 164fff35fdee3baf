/* runtime.h - the runtime: what a compiled model needs while it runs.
 *
 * Owns: the kernels generated code calls (rt_abi.h names them): products
 * through OpenBLAS, convolutions, pools and packed products through
 * oneDNN (each loaded at run time when present; plain C loops otherwise),
 * TopK and NonMaxSuppression, MatMulNBits on packed weights, strided copies, the branch-failure stop and
 * the profile marks; the pool that runs the generated code's split loops; and the per-model state those kernels keep (oneDNN
 * primitives, packed weights), keyed by an owner the caller names.
 *
 * The runtime links no MLIR or LLVM library. It is built into
 * libonnx2mlir (the JIT binds its kernels by address) and on its own as
 * libonnx2mlir_rt.so / .a, which `compile`'s libraries link (rt_exports.c
 * gives the kernels the names the generated code calls). Every kernel is
 * reentrant: calls on several threads at once are safe.
 */
#ifndef O2M_RUNTIME_H
#define O2M_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/rt_abi.h"

/* A function generated code calls, by its symbol name. */
typedef struct o2m_rt_symbol {
  const char *name;
  void *address;
} o2m_rt_symbol;

/* Every such function; returns how many (at most O2M_RT_MAX_SYMBOLS). */
enum { O2M_RT_MAX_SYMBOLS = 32 };
int o2m_rt_symbols(o2m_rt_symbol *out);

/* Whether OpenBLAS (libopenblas.so.0; not with ONNX2MLIR_NO_BLAS=1) and
 * oneDNN (libdnnl.so.2; not with ONNX2MLIR_NO_DNNL=1) were found. Their
 * kernels run loops without them. */
int o2m_rt_blas_available(void);
int o2m_rt_dnnl_available(void);
/* Whether this runtime was built with oneDNN's header, so that it has the
 * oneDNN kernels at all (they run loops when oneDNN is missing). */
int o2m_rt_dnnl_built(void);

/* Names the loaded model whose code this thread runs now: oneDNN's call
 * sites keep their primitives and packed weights per owner until
 * o2m_rt_release. Returns the owner named before (restore it after). */
const void *o2m_rt_set_owner(const void *owner);
void o2m_rt_release(const void *owner);

/* The buffers generated code allocates (rt_alloc.c): kept per thread
 * for the next call of the same sizes. A buffer the code returns must be
 * freed with o2m_rt_free. */
void *o2m_rt_alloc(size_t size);
void *o2m_rt_aligned_alloc(size_t align, size_t size);
void o2m_rt_free(void *p);

/* The threads the kernels of this thread's calls may use (rt_threads.c):
 * n, or 0 for the default (ONNX2MLIR_THREADS, else the CPUs the process
 * may use). Returns the setting before (restore it after the call). */
int o2m_rt_set_call_threads(int n);
int o2m_rt_call_threads(void);
int o2m_rt_default_threads(void);

/* Runs task(ctx, from, to) over shares of [lo, hi) on the call's threads
 * (rt_parallel.c; rt_abi.h's O2M_PARALLEL_FOR_FN): as many as the work,
 * cost_per_iteration times the iterations, is worth. */
typedef void (*o2m_rt_task)(void *ctx, int64_t from, int64_t to);
void o2m_rt_parallel_for(o2m_rt_task task, void *ctx, int64_t lo, int64_t hi, int64_t cost_per_iteration);
/* The work one more thread must get (ONNX2MLIR_PARALLEL_GRAIN, else the
 * default); the compiler splits loops of two grains or more. */
enum { O2M_RT_DEFAULT_GRAIN = 1 << 15 };
int64_t o2m_rt_parallel_grain(void);

/* Calls fn(args); -1 when it returned, else the id a failing branch passed
 * (the call was stopped there; buffers it had allocated are lost). */
int o2m_rt_guarded_call(void (*fn)(void **), void **args);

/* C [m, n] = beta C + A [m, k] B [k, n], beta 1 or 0 (C's old values
 * unread), strides in elements: BLAS, or loops. */
void o2m_rt_gemm(int64_t m, int64_t n, int64_t k, const float *a, const int64_t *sa, const float *b,
                 const int64_t *sb, float beta, float *c, const int64_t *sc);

/* run --profile: per-node sums (ms per node index) between begin and end;
 * one profile per process at a time. */
int o2m_rt_profile_begin(int n_nodes);
const double *o2m_rt_profile_sums(void);
void o2m_rt_profile_end(void);

/* The strided memref descriptor of a float32 buffer of `rank` dims, as
 * llvm.emit_c_interface passes it. */
#define RT_F32_MEMREF(rank)                      \
  struct {                                       \
    float *allocated, *aligned;                  \
    int64_t offset, sizes[rank], strides[rank];  \
  }

/* What MLIR passes for a memref<*x...>: the rank, then a pointer to the
 * ranked descriptor {allocated, aligned, offset, sizes, strides}. */
typedef struct o2m_rt_unranked {
  int64_t rank;
  int64_t *desc;
} o2m_rt_unranked;

/* Milliseconds of CLOCK_MONOTONIC. */
double o2m_rt_now_ms(void);

#endif
