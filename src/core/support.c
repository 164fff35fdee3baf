/* support.c - what each target can do with an op, for `info`: read from
 * the emitters' lowering tables (names only, so the MLIR-free core never
 * links the emitters) and the transform layer's rule table. */
#include <string.h>

#include "core/support.h"

static const char *const linalg_lowered[] = {
#define LOWER(op, fn) op,
#include "emit/linalg/lower_rules.def"
#undef LOWER
    NULL};

static const char *const tosa_lowered[] = {
#define LOWER(op, fn) op,
#include "emit/tosa/tosa_rules.def"
#undef LOWER
    NULL};

static const char *const stablehlo_lowered[] = {
#define LOWER(op, fn) op,
#include "emit/stablehlo/shlo_rules.def"
#undef LOWER
    NULL};

static const char *const onnx_mlir_ops[] = {
#define ONNX_OP(name, operands, results, regions, attrs) name,
#include "emit/onnx/om_ops.def"
#undef ONNX_OP
    NULL};

static const struct {
  const char *domain, *op;
} rewritten[] = {
#define RULE(domain, op, fn) {domain, op},
#define DECOMPOSE(domain, op, fn) {domain, op},
#include "transform/rules.def"
#undef RULE
#undef DECOMPOSE
    {NULL, NULL}};

static int listed(const char *const *names, const char *op_type) {
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], op_type) == 0) return 1;
  return 0;
}

/* Whether rules.def has a rule for the op (rules of other domains, e.g.
 * ai.onnx.preview FlexAttention, count too). */
static int has_rule(const char *domain, const char *op_type) {
  if (strcmp(domain, "ai.onnx") == 0) domain = "";
  for (int i = 0; rewritten[i].op; i++)
    if (strcmp(rewritten[i].op, op_type) == 0 && strcmp(rewritten[i].domain, domain) == 0) return 1;
  return 0;
}

static o2m_op_support support_in(const char *const *lowered, const char *domain,
                                 const char *op_type) {
  if (domain[0] && strcmp(domain, "ai.onnx") != 0)
    return has_rule(domain, op_type) ? O2M_SUPPORT_REWRITTEN : O2M_SUPPORT_NONE;
  if (listed(lowered, op_type)) return O2M_SUPPORT_LOWERED;
  if (has_rule(domain, op_type)) return O2M_SUPPORT_REWRITTEN;
  return O2M_SUPPORT_NONE;
}

o2m_op_support o2m_linalg_support(const char *domain, const char *op_type) {
  return support_in(linalg_lowered, domain, op_type);
}

o2m_op_support o2m_tosa_support(const char *domain, const char *op_type) {
  return support_in(tosa_lowered, domain, op_type);
}

o2m_op_support o2m_stablehlo_support(const char *domain, const char *op_type) {
  return support_in(stablehlo_lowered, domain, op_type);
}

o2m_op_support o2m_onnx_support(const char *domain, const char *op_type) {
  int onnx_domain = !domain[0] || strcmp(domain, "ai.onnx") == 0 || strcmp(domain, "ai.onnx.ml") == 0;
  if (onnx_domain && listed(onnx_mlir_ops, op_type)) return O2M_SUPPORT_LOWERED;
  if (onnx_domain && has_rule("", op_type)) return O2M_SUPPORT_REWRITTEN;
  return O2M_SUPPORT_NONE;
}
