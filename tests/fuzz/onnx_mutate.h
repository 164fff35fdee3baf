/* onnx_mutate.h - structure-aware mutations of a serialized ONNX
 * ModelProto for the fuzz targets: nodes, inputs, outputs, attributes,
 * declared shapes and dtypes, initializers, opsets and subgraphs are
 * edited as protobuf fields (pb_tree.h), so that a mutant still decodes
 * and reaches inference, the transforms and the emitters. */
#ifndef O2M_FUZZ_ONNX_MUTATE_H
#define O2M_FUZZ_ONNX_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/* A byte-level mutator (libFuzzer's LLVMFuzzerMutate) for leaves such as
 * raw_data and strings. */
typedef size_t (*onnx_bytes_mutator)(uint8_t *data, size_t size, size_t max_size);

/* Applies one to three mutations chosen by `seed` to the model in
 * data[0..size) and writes the result back (at most max_size bytes).
 * Returns the new size, or 0 when the bytes are not a model (the caller
 * mutates them as bytes instead). */
size_t onnx_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed, onnx_bytes_mutator bytes);

/* Copies a node, an initializer or an attribute of model `b` into model
 * `a`; the result goes to out (at most max_size bytes). Returns its size,
 * 0 when either is not a model. */
size_t onnx_crossover(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size, uint8_t *out,
                      size_t max_size, unsigned seed);

#endif
