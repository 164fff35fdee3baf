/* hash.h - a fast 64-bit hash of bytes, for keys (the compiled-code
 * cache), not for security: four lanes of 64-bit multiply-rotate mixing
 * over 32-byte blocks, then murmur3's 64-bit finaliser. */
#ifndef O2M_HASH_H
#define O2M_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t o2m_hash_bytes(const void *data, size_t n, uint64_t seed);

#endif
