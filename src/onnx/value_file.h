/* value_file.h - run/test values that are not plain tensors: ONNX
 * SequenceProto and OptionalProto files (backend-test input_<i>.pb and
 * output_<i>.pb of sequence and optional values), flattened to a list of
 * tensors.
 *
 * Owns: the flat form of a value as `run` passes it (a tensor, a sequence
 * of tensors, an optional tensor or an optional sequence of tensors),
 * reading it from a file and writing it to one. Maps, sparse tensors and
 * deeper nesting are refused.
 */
#ifndef O2M_VALUE_FILE_H
#define O2M_VALUE_FILE_H

#include "ir/ir.h"

typedef struct o2m_io_value {
  o2m_type_kind kind;      /* O2M_TYPE_TENSOR, _SEQUENCE or _OPTIONAL */
  o2m_type_kind elem_kind; /* optional: what it holds (TENSOR or SEQUENCE) */
  int present;             /* optional: whether it holds a value; else 1 */
  int count;               /* tensors: 1; sequence: its length; optional
                              tensor: 0 or 1; optional sequence: its length */
  o2m_tensor **tensors;    /* `count` entries */
} o2m_io_value;

/* Reads the file at `path` as a value of `kind`: a TensorProto (or .npy)
 * for O2M_TYPE_TENSOR, a SequenceProto or an OptionalProto. Everything is
 * copied into `arena`. */
o2m_status o2m_read_value_file(o2m_arena *arena, const char *path, o2m_type_kind kind,
                               o2m_io_value *out, o2m_diag *diag);

/* Writes `v` to `path` (created or truncated) as a TensorProto, a
 * SequenceProto or an OptionalProto named `name`; a partial file is
 * removed when writing fails. */
o2m_status o2m_write_value_file(const o2m_io_value *v, const char *name, const char *path, o2m_diag *diag);

#endif
