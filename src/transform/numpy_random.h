/* numpy_random.h - the Mersenne Twister (MT19937) seeded from a 32-bit
 * integer as numpy's legacy RandomState seeds it, and its doubles in
 * [0, 1): the draws of the ONNX reference implementation's seeded random
 * ops, which re-seed at every evaluation. */
#ifndef O2M_NUMPY_RANDOM_H
#define O2M_NUMPY_RANDOM_H

#include <stdint.h>

enum { O2M_MT_STATE = 624 };

typedef struct o2m_mt19937 {
  uint32_t key[O2M_MT_STATE];
  int pos;
} o2m_mt19937;

void o2m_mt_seed(o2m_mt19937 *mt, uint32_t seed);
uint32_t o2m_mt_next32(o2m_mt19937 *mt);
/* 53 random bits as a double in [0, 1), as numpy's random_sample. */
double o2m_mt_next_double(o2m_mt19937 *mt);

#endif
