/* hash.c - o2m_hash_bytes (hash.h). */
#include "util/hash.h"

#include <string.h>

static const uint64_t K1 = 0x9E3779B97F4A7C15ull, K2 = 0xC2B2AE3D27D4EB4Full, K3 = 0x165667B19E3779F9ull;

static uint64_t rotl(uint64_t v, int r) { return v << r | v >> (64 - r); }

static uint64_t lane(uint64_t acc, uint64_t v) { return rotl(acc + v * K2, 31) * K1; }

static uint64_t read64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* murmur3's fmix64 */
static uint64_t finish(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

uint64_t o2m_hash_bytes(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data;
  uint64_t a = seed + K1 + K2, b = seed + K2, c = seed, d = seed - K1;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a = lane(a, read64(p + i));
    b = lane(b, read64(p + i + 8));
    c = lane(c, read64(p + i + 16));
    d = lane(d, read64(p + i + 24));
  }
  uint64_t h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + (uint64_t)n * K3;
  for (; i + 8 <= n; i += 8) h = rotl(h ^ lane(0, read64(p + i)), 27) * K1 + K3;
  for (; i < n; i++) h = rotl(h ^ (p[i] * K3), 11) * K1;
  return finish(h);
}
