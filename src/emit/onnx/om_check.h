/* om_check.h - checking an emitted module against onnx-mlir's op table.
 *
 * Owns: the structural check of onnx.* ops written in generic form into a
 * context that allows unregistered dialects (onnx-mlir's dialect is not
 * upstream MLIR's, so nothing else verifies them). The rules come from
 * om_ops.def (onnx-mlir commit ec744fe6).
 */
#ifndef O2M_OM_CHECK_H
#define O2M_OM_CHECK_H

#include <mlir-c/IR.h>

#include "emit/onnx/om_table.h"
#include "onnx2mlir.h" /* o2m_status, o2m_diag */

/* Checks every op of `module` (nested regions included): each onnx.* op
 * must be an op of the table or one onnx-mlir's importer makes besides
 * (NoValue, Return, Yield, EntryPoint), with the operand and result
 * counts of its row (none only in optional slots), its regions each one
 * block ending in onnx.Yield, its required attributes present, every
 * attribute the row names inherent (<{...}>) and of the row's kind;
 * func.func @main_graph must end in onnx.Return of its result types and
 * be named by the module's one onnx.EntryPoint. On the first violation
 * fails (O2M_ERR_INVALID through o2m_fail) naming the op, its location
 * and the rule. Ops of other dialects are walked, not checked. */
o2m_status om_check_module(MlirModule module, const om_table *table, o2m_diag *diag);

#endif
