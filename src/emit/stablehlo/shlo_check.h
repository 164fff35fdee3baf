/* shlo_check.h - checking an emitted module against the StableHLO spec.
 *
 * Owns: the in-tree conformance check of stablehlo.* ops written in generic
 * form into a context that allows unregistered dialects (StableHLO is not
 * part of upstream MLIR, so nothing else verifies them). The rules come
 * from the table in shlo_spec.def (openxla/stablehlo docs/spec.md at
 * 6b4e61fe, StableHLO 1.13.8).
 */
#ifndef O2M_SHLO_CHECK_H
#define O2M_SHLO_CHECK_H

#include <mlir-c/IR.h>

#include "onnx2mlir.h" /* o2m_status, o2m_diag */

/* Checks every stablehlo.* op in `module` (nested regions included) against
 * the spec table; on the first violation fails (O2M_ERR_INVALID through
 * o2m_fail from util/diag.h) with a message naming the op, its location,
 * and the rule broken. Ops of other dialects (func.*) are skipped, though
 * their regions are walked; an unknown stablehlo.* op name is a violation.
 * Attributes not in an op's row are violations too, except discardable
 * extensions: names starting with '_' or containing a '.' (mhlo.sharding,
 * mhlo.frontend_attributes, ...). */
o2m_status o2m_shlo_check_module(MlirModule module, o2m_diag *diag);

#endif
