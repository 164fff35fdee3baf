/* form.h - what the two as-written emitters share: src/emit/torch
 * (torch-mlir's ONNX import form) and src/emit/onnx (onnx-mlir's ONNX
 * dialect). Both write every ONNX node as one op, with the inferred types,
 * and weights as zero-copy blobs.
 *
 * Files:
 *   form_values.c   the o2m_value -> MlirValue map
 *   form_tensors.c  tensors as dense_resource / dense / sparse attributes
 *   form_output.c   MLIR's diagnostics captured; the module written out
 *   form_common.c   failure messages, the type-text cache
 */
#ifndef O2M_FORM_H
#define O2M_FORM_H

#include <stdarg.h>
#include <stdio.h>

#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>

#include "ir/ir.h"
#include "util/arena.h"
#include "util/strmap.h"

/* ---- form_values.c ----------------------------------------------------- */

/* Open addressing from o2m_value* to the MlirValue that defines it. */
typedef struct form_value_slot {
  const o2m_value *key;
  MlirValue value;
} form_value_slot;

typedef struct form_value_map {
  form_value_slot *slots;
  size_t cap, count;
} form_value_map;

/* Makes room for `count` values at once; -1 when out of memory. */
int form_values_reserve(form_value_map *map, size_t count);
/* Records the definition of `value`; -1 when out of memory. */
int form_values_put(form_value_map *map, const o2m_value *value, MlirValue def);
/* The definition of `value` (following outer references to the enclosing
 * graph's value); a null MlirValue when none was recorded. */
MlirValue form_values_get(const form_value_map *map, const o2m_value *value);
void form_values_free(form_value_map *map);

/* ---- form_tensors.c ---------------------------------------------------- */

/* The builtin tensor type of a constant's value attribute in one form
 * (tensor<2x3xsi64> in the torch form, tensor<2x3xi64> in onnx-mlir's);
 * null when the form has no such type. */
typedef MlirType (*form_tensor_type_fn)(void *user, o2m_dtype dtype, int rank,
                                        const int64_t *dims);

typedef struct form_tensor_maker {
  MlirContext ctx;
  o2m_arena *arena; /* blob names live here */
  form_tensor_type_fn type;
  void *user;
} form_tensor_maker;

/* The value attribute of `tensor`: dense_resource over its bytes (no
 * copy), dense for typed-field and string data, dense<> when empty.
 * `fallback_name` names the blob when the tensor has no name. On failure
 * returns a status and points *why at a static reason for the caller's
 * message. */
o2m_status form_tensor_attr(const form_tensor_maker *maker, const o2m_tensor *tensor,
                            const char *fallback_name, MlirAttribute *out, const char **why);
/* A sparse tensor as a builtin sparse<indices, values> attribute. */
o2m_status form_sparse_attr(const form_tensor_maker *maker, const o2m_sparse_tensor *sparse,
                            MlirAttribute *out, const char **why);

/* ---- form_output.c ----------------------------------------------------- */

enum { FORM_MLIR_ERROR_CAP = 1024 };

/* A diagnostic handler: keeps the first error as "location: message" in
 * `user` (a char[FORM_MLIR_ERROR_CAP], empty to start with) and swallows
 * every diagnostic, so that nothing reaches stderr. */
MlirLogicalResult form_capture_diagnostic(MlirDiagnostic d, void *user);

/* Writes `module` to `out` as text or (bytecode non-zero) MLIR bytecode;
 * weight blobs that lie in `model`'s file mappings are copied by the
 * kernel. 0, or -1 when writing failed. */
int form_write_module(MlirOperation module, const o2m_model *model, int bytecode, FILE *out);

/* ---- form_common.c ---------------------------------------------------- */

/* Fails with `status` and "<model path>: <fmt ...>", plus the first error
 * MLIR reported (`mlir_error`, may be empty) when `status` is
 * O2M_ERR_INTERNAL. */
o2m_status form_failv(o2m_diag *diag, const o2m_model *model, const char *mlir_error,
                      o2m_status status, const char *fmt, va_list ap);
/* The same, naming the node: "<path>: graph 'G': node 'N' (Op, domain
 * 'D', opset V): <fmt ...>". */
o2m_status form_node_failv(o2m_diag *diag, const o2m_model *model, const char *mlir_error,
                           const o2m_node *node, o2m_status status, const char *fmt, va_list ap);
/* `text` parsed as a type once per cache (keys in `arena`); null on a
 * parse error or when out of memory. */
MlirType form_parse_type_cached(MlirContext ctx, o2m_strmap *cache, o2m_arena *arena,
                                const char *text);
/* The status of making a type from its text: `reason` (a static reason:
 * O2M_ERR_UNSUPPORTED) when the type has no text, out of memory when
 * `text_failed`, else the parsed (cached) type in *out or
 * O2M_ERR_INTERNAL; *why gets the reason. */
o2m_status form_type_from_text(MlirContext ctx, o2m_strmap *cache, o2m_arena *arena,
                               const char *text, int text_failed, const char *reason,
                               MlirType *out, const char **why);
/* A fixed buffer that MLIR's printers append to (truncating, always
 * NUL-terminated): pass form_text_append as the callback. */
typedef struct form_text {
  char *buf;
  size_t cap, len;
} form_text;
void form_text_append(MlirStringRef s, void *text);

#endif
