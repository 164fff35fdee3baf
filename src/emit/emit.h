/* emit.h - the MLIR emitters, one per target.
 *
 * Owns: the entry point of each emitter. Emitters read a loaded, linked and
 * inferred model (they never change it) and write MLIR text or bytecode
 * to a FILE through the MLIR C API. They are the only code, with
 * src/exec, that links against MLIR.
 */
#ifndef O2M_EMIT_H
#define O2M_EMIT_H

#include <stdio.h>

#include "ir/ir.h"

/* torch-mlir's ONNX import form, as DESIGN.md section 4 specifies. */
o2m_status o2m_emit_torch(const o2m_model *model,
                          const o2m_import_options *options, FILE *out,
                          o2m_diag *diag);

#endif
