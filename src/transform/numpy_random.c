/* numpy_random.c - MT19937 (Matsumoto and Nishimura's generator) with
 * numpy's legacy integer seeding; see numpy_random.h. */
#include "transform/numpy_random.h"

enum { SHIFT = 397 };

void o2m_mt_seed(o2m_mt19937 *mt, uint32_t seed) {
  for (int i = 0; i < O2M_MT_STATE; i++) {
    mt->key[i] = seed;
    seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1u;
  }
  mt->pos = O2M_MT_STATE;
}

/* The next 624 words of state, all at once. */
static void regenerate(o2m_mt19937 *mt) {
  for (int i = 0; i < O2M_MT_STATE; i++) {
    uint32_t y = (mt->key[i] & 0x80000000u) | (mt->key[(i + 1) % O2M_MT_STATE] & 0x7fffffffu);
    mt->key[i] = mt->key[(i + SHIFT) % O2M_MT_STATE] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
  mt->pos = 0;
}

uint32_t o2m_mt_next32(o2m_mt19937 *mt) {
  if (mt->pos >= O2M_MT_STATE) regenerate(mt);
  uint32_t y = mt->key[mt->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  return y ^ (y >> 18);
}

double o2m_mt_next_double(o2m_mt19937 *mt) {
  uint32_t high = o2m_mt_next32(mt) >> 5, low = o2m_mt_next32(mt) >> 6; /* 27 + 26 bits */
  return ((double)high * 67108864.0 + (double)low) / 9007199254740992.0;
}
