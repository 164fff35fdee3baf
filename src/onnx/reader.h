/* reader.h - reading ONNX protobuf bytes into the structures of ir/ir.h.
 *
 * Owns: file mapping, the protobuf wire decoder for ModelProto and every
 * message it contains, standalone TensorProto files (.pb) and the
 * resolution of external data. Weights are never copied: raw_data becomes
 * a view into the mapping. Errors name the file and the position in the
 * model (graph, node index and name, op, attribute) and the byte offset.
 */
#ifndef O2M_READER_H
#define O2M_READER_H

#include "ir/ir.h"

/* Maps `path` read-only into `out` (an empty file maps to size 0). */
o2m_status o2m_map_file(const char *path, o2m_mapping *out, o2m_diag *diag);
/* Same, for a symlink-free `path` that must stay inside the resolved `dir`:
 * a symlink at the last component is refused, and the file actually opened
 * is checked to lie inside `dir` (external data). */
o2m_status o2m_map_file_inside(const char *path, const char *dir, o2m_mapping *out,
                               o2m_diag *diag);
void o2m_unmap_file(o2m_mapping *mapping);
/* When [ptr, ptr+len) lies in one of the n mappings, copies it to out_fd
 * (at its file position) with copy_file_range, which moves the bytes
 * inside the kernel (or shares the blocks) without bringing them into the
 * process; returns how many bytes it copied (0: none, the caller writes
 * them; less than len: the caller writes the rest). */
size_t o2m_mapping_copy(const o2m_mapping *mappings, int n, const void *ptr, size_t len,
                        int out_fd);

/* Decodes a ModelProto held in `bytes` into `model` (whose arena, path and
 * base_dir the caller set). Views into `bytes` are kept: they must outlive
 * the model. Tensors with external data are listed in model->external and
 * left without data until o2m_resolve_external_data. */
o2m_status o2m_decode_model(o2m_model *model, const uint8_t *bytes,
                            size_t size, o2m_diag *diag);

/* Maps each external data file once (recorded in model->mappings) and
 * points each external tensor's data at its bytes. A location that is
 * absolute, has a ".." component, or resolves (through symlinks) outside
 * model->base_dir is refused, as is an offset/length outside the file or
 * a length that disagrees with the tensor's dims and dtype. */
o2m_status o2m_resolve_external_data(o2m_model *model, o2m_diag *diag);

/* Decodes a standalone TensorProto (ONNX backend-test input_0.pb). */
o2m_status o2m_decode_tensor(o2m_arena *arena, const uint8_t *bytes,
                             size_t size, const char *name_for_messages,
                             o2m_tensor **out, o2m_diag *diag);

#endif
