/* npy.h - NumPy .npy files (format versions 1, 2 and 3) as o2m_tensors.
 *
 * Owns: the .npy header (magic, version, the Python-literal dictionary
 * with 'descr', 'fortran_order' and 'shape') and the mapping between
 * NumPy dtype descriptions and ONNX dtypes: <f2 <f4 <f8 i1 <i2 <i4 <i8 u1
 * <u2 <u4 <u8 b1 <c8 <c16, and strings as |S<n> (bytes) or <U<n> (UTF-32,
 * read only). Little-endian, C order only; others are refused with a
 * message naming the file. Types NumPy lacks (bfloat16, float8, int4)
 * cannot be written: use TensorProto .pb files for them.
 */
#ifndef O2M_NPY_H
#define O2M_NPY_H

#include <stdio.h>

#include "ir/ir.h"

/* Non-zero when `bytes` start with the .npy magic. */
int o2m_npy_is_npy(const uint8_t *bytes, size_t size);

/* Decodes a .npy file held in `bytes`. Numbers are a view into `bytes`
 * (which must outlive the tensor); dims and strings live in `arena`. */
o2m_status o2m_npy_decode(o2m_arena *arena, const uint8_t *bytes, size_t size,
                          const char *name_for_messages, o2m_tensor **out,
                          o2m_diag *diag);

/* Writes `t` as a .npy file (format version 1; its header always fits). */
o2m_status o2m_npy_write(const o2m_tensor *t, FILE *out,
                         const char *name_for_messages, o2m_diag *diag);

#endif
