/* optable.h - the op table: one row per ONNX op this build knows.
 *
 * Owns: the lookup of a (domain, op_type) pair to its row. A row names the
 * op, the opset versions at which its definition changed ("since"
 * versions, as ONNX's Changelog lists them) and its type/shape inference
 * function. The rows themselves live in src/infer/ops_<family>.def, one
 * X-macro file per op family, all compiled into the single table in
 * optable.c:
 *
 *   OP("", "Add", o2m_infer_broadcast_same, 1, 6, 7, 13, 14)
 *
 * The domain is "" for the default ONNX domain.
 */
#ifndef O2M_OPTABLE_H
#define O2M_OPTABLE_H

#include <stdint.h>

#include "onnx2mlir.h"

typedef struct o2m_infer_ctx o2m_infer_ctx;
typedef o2m_status (*o2m_infer_fn)(o2m_infer_ctx *ctx);

enum { O2M_MAX_OP_VERSIONS = 16 };

typedef struct o2m_op_info {
  const char *domain;
  const char *name;
  o2m_infer_fn infer;
  int versions[O2M_MAX_OP_VERSIONS]; /* ascending, 0-terminated */
} o2m_op_info;

/* The row for (domain, op_type); "ai.onnx" is the default domain. NULL
 * when the table has no such op. */
const o2m_op_info *o2m_op_lookup(const char *domain, const char *op_type);

/* The version of the op's definition in effect at `opset` (the largest
 * since-version <= opset); 0 when the op did not exist yet. */
int o2m_op_version(const o2m_op_info *op, int64_t opset);

/* The number of rows and row `i`, for listing. */
int o2m_op_count(void);
const o2m_op_info *o2m_op_at(int i);

#endif
