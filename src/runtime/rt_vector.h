/* rt_vector.h - what the runtime's vector loops share (rt_nbits.c,
 * rt_dynquant.c): GCC vector extension types of 16 lanes (built for every
 * ISA; 64-byte vectors are never passed to or returned from functions,
 * whose ABI would differ between the clones), and PER_CPU: a function
 * built for AVX-512, AVX2 and the baseline, chosen by the CPU at load
 * (x86-64, not under the sanitizers).
 */
#ifndef O2M_RT_VECTOR_H
#define O2M_RT_VECTOR_H

#include <stdint.h>

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint8_t v16u8 __attribute__((vector_size(16)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define PER_CPU __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PER_CPU
#endif

#endif
