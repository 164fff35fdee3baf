/* fuzz_mutator.c - the libFuzzer hooks that make a fuzz target
 * structure-aware: mutants and crossovers of ONNX models made by
 * onnx_mutate.c, byte-level mutation only for what is not a model. */
#include <stddef.h>
#include <stdint.h>

#include "onnx_mutate.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  /* one mutant in 16 stays byte-level, so the decoder's checks keep being fuzzed too */
  size_t n = (seed & 15) ? onnx_mutate(data, size, max_size, seed, LLVMFuzzerMutate) : 0;
  return n ? n : LLVMFuzzerMutate(data, size, max_size);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size, uint8_t *out,
                                 size_t max_size, unsigned int seed) {
  return onnx_crossover(a, a_size, b, b_size, out, max_size, seed);
}
