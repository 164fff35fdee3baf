/* compile.h - what the two halves of `onnx2mlir compile` share: the plan
 * of the library's interface that compile.c draws from the model and the
 * compiled entry, and that compile_source.c writes out as the header and
 * the C wrapper around the entry. Not for use outside src/exec.
 */
#ifndef O2M_COMPILE_H
#define O2M_COMPILE_H

#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"

enum { COMPILE_MAX_RANK = 16 }; /* ONNX2MLIR_MAX_RANK of the header */

/* One input, output or weight of the library. */
typedef struct compile_tensor {
  const char *name;
  o2m_dtype dtype;
  int rank;
  const int64_t *dims;   /* -1 for a dim the caller chooses */
  const char **symbols;  /* inputs/outputs: each dim's symbol or NULL */
  uint64_t offset;       /* weights: where its bytes start in the blob */
} compile_tensor;

typedef struct compile_plan {
  const char *name;       /* the functions' prefix, a C identifier */
  const char *model_path; /* for the header's comment */
  const char *entry;      /* the compiled function's name */
  int n_inputs, n_outputs, n_weights;
  compile_tensor *inputs, *outputs, *weights;
  const char *blob_path;  /* the weights, assembled in (.incbin); NULL when none */
  uint64_t blob_bytes;
  /* Non-NULL: the weights are in a file of their own (COMPILE_WEIGHTS_HEADER
   * bytes, then the blob), mapped from this path at the first call. */
  const char *weights_file;
  uint64_t weights_id; /* the blob's hash, in the file's header and the library */
  const char *cpu;     /* the CPU the code is for (NULL: this machine's) */
} compile_plan;

/* The weights file's header: COMPILE_WEIGHTS_MAGIC (16 bytes), the id
 * (8, little-endian), the blob's size (8), zeros to 64 bytes. */
enum { COMPILE_WEIGHTS_HEADER = 64 };
#define COMPILE_WEIGHTS_MAGIC "onnx2mlir-wts-1"

/* Writes the header `#include`d by the wrapper and given to users. */
int compile_write_header(FILE *out, const compile_plan *plan);
/* Writes the C wrapper: the tables, the checks, the call, the results. */
int compile_write_wrapper(FILE *out, const compile_plan *plan, const char *header_name);

#endif
