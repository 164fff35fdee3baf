/* optable.c - the single op table built from src/infer/ops_*.def, and its
 * lookup (a linear scan: a few hundred rows, done once per node). */
#include "ir/optable.h"

#include <stdlib.h>
#include <string.h>

#include "infer/infer.h"

static const o2m_op_info op_rows[] = {
#define OP(domain, name, fn, ...) {domain, name, fn, {__VA_ARGS__}},
#include "infer/ops_all.def"
#undef OP
};

enum { OP_ROW_COUNT = sizeof(op_rows) / sizeof(op_rows[0]) };
_Static_assert(OP_ROW_COUNT > 200, "the op table lost its rows");

static const char *canonical_domain(const char *domain) {
  if (!domain || strcmp(domain, "ai.onnx") == 0) return "";
  return domain;
}

const o2m_op_info *o2m_op_lookup(const char *domain, const char *op_type) {
  domain = canonical_domain(domain);
  for (int i = 0; i < OP_ROW_COUNT; i++)
    if (strcmp(op_rows[i].name, op_type) == 0 &&
        strcmp(op_rows[i].domain, domain) == 0)
      return &op_rows[i];
  return NULL;
}

int o2m_op_version(const o2m_op_info *op, int64_t opset) {
  int best = 0;
  for (int i = 0; i < O2M_MAX_OP_VERSIONS && op->versions[i]; i++)
    if (op->versions[i] <= opset) best = op->versions[i];
  return best;
}

int o2m_op_count(void) { return OP_ROW_COUNT; }

const o2m_op_info *o2m_op_at(int i) {
  return i >= 0 && i < OP_ROW_COUNT ? &op_rows[i] : NULL;
}
