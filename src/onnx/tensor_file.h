/* tensor_file.h - tensors in files, for `run` and `test`: reading a .npy
 * or TensorProto .pb file into an arena, and writing one.
 *
 * Owns: telling the two formats apart (by the .npy magic bytes, never by
 * the file name) and the copy that lets the file be unmapped at once.
 */
#ifndef O2M_TENSOR_FILE_H
#define O2M_TENSOR_FILE_H

#include "ir/ir.h"

/* Reads the tensor in the file at `path` (.npy or TensorProto). Dims,
 * data and strings are copied into `arena`; nothing refers to the file
 * afterwards. A TensorProto with external data is refused. */
o2m_status o2m_read_tensor_file(o2m_arena *arena, const char *path,
                                o2m_tensor **out, o2m_diag *diag);

typedef enum o2m_tensor_format { O2M_FORMAT_PB, O2M_FORMAT_NPY } o2m_tensor_format;

/* Writes `t` to `path` (created or truncated); a partial file is removed
 * when writing fails. */
o2m_status o2m_write_tensor_file(const o2m_tensor *t, const char *path,
                                 o2m_tensor_format format, o2m_diag *diag);

#endif
