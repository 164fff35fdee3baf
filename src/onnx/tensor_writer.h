/* tensor_writer.h - encoding an o2m_tensor as an ONNX TensorProto (.pb),
 * the format of the ONNX backend tests' input_<i>.pb / output_<i>.pb.
 *
 * Owns: the TensorProto fields written: dims, data_type, name (when the
 * tensor has one), raw_data for every numeric and bool type (ONNX raw
 * layout, as o2m_tensor holds it), string_data for strings. The reader
 * side is o2m_decode_tensor (reader.h).
 */
#ifndef O2M_TENSOR_WRITER_H
#define O2M_TENSOR_WRITER_H

#include <stdio.h>

#include "ir/ir.h"

/* Writes `t` as a serialized TensorProto to `out`. */
o2m_status o2m_tensor_write_pb(const o2m_tensor *t, FILE *out,
                               const char *name_for_messages, o2m_diag *diag);

#endif
