/* support.h - per-target op support, as `info` reports it. */
#ifndef O2M_SUPPORT_H
#define O2M_SUPPORT_H

typedef enum o2m_op_support {
  O2M_SUPPORT_NONE,      /* no lowering and no rewrite rule */
  O2M_SUPPORT_LOWERED,   /* the backend lowers the op directly */
  O2M_SUPPORT_REWRITTEN  /* a rewrite rule turns it into other ops first */
} o2m_op_support;

o2m_op_support o2m_linalg_support(const char *domain, const char *op_type);
/* REWRITTEN for TOSA: a rule applies, whose ops TOSA may or may not all
 * lower (the import reports what remains). */
o2m_op_support o2m_tosa_support(const char *domain, const char *op_type);
o2m_op_support o2m_stablehlo_support(const char *domain, const char *op_type);
/* onnx-mlir's form: LOWERED when onnx-mlir has the op (its table,
 * src/emit/onnx/om_ops.def), REWRITTEN when the shared layer writes it in
 * other ops, NONE when it is written as an onnx.Custom. */
o2m_op_support o2m_onnx_support(const char *domain, const char *op_type);

#endif
