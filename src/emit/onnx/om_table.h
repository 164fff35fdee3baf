/* om_table.h - onnx-mlir's ONNX dialect op definitions (om_ops.def) and its
 * choice of op version (om_versions.def), as the emitter and the checker
 * read them.
 *
 * Owns: the parsed table (one per emission, in its arena) and the name
 * onnx-mlir's importer gives a node of an ONNX op at a given opset.
 * Plain C: no MLIR.
 */
#ifndef O2M_OM_TABLE_H
#define O2M_OM_TABLE_H

#include <stdint.h>

#include "util/arena.h"
#include "util/strmap.h"

typedef enum om_arity { OM_ONE, OM_OPTIONAL, OM_VARIADIC } om_arity;

typedef struct om_slot {
  const char *name;
  om_arity arity;
} om_slot;

typedef enum om_attr_kind {
  OM_SI64,  /* 3 : si64 */
  OM_F32,   /* 1.0 : f32 */
  OM_STR,   /* "s" */
  OM_I64S,  /* [1, 2] (i64 elements) */
  OM_F32S,  /* [1.0 : f32] */
  OM_STRS,  /* ["a"] */
  OM_ANY,   /* any attribute: a tensor's dense / dense_resource / sparse */
  OM_TYPE,  /* a type: Cast's `to` */
  OM_KIND_COUNT
} om_attr_kind;

typedef enum om_presence { OM_REQUIRED, OM_MAY_LACK, OM_DEFAULTED } om_presence;

typedef struct om_attr_def {
  const char *name;
  om_attr_kind kind;
  om_presence presence;
  const char *dflt; /* OM_DEFAULTED: the default as written in the table */
} om_attr_def;

typedef struct om_op {
  const char *name; /* without the "onnx." prefix: "ResizeV18" */
  int n_operands, n_results, n_regions, n_attrs;
  om_slot *operands, *results;
  const char **regions; /* the graph attribute each region holds */
  om_attr_def *attrs;
  int variadic_operands, variadic_results; /* whether a slot is variadic */
} om_op;

typedef struct om_table {
  o2m_strmap by_name; /* name -> om_op* */
} om_table;

/* Reads both tables into `arena`; -1 when out of memory. */
int om_table_init(om_table *table, o2m_arena *arena);
/* The op called `name` ("ResizeV18"), or NULL. */
const om_op *om_table_find(const om_table *table, const char *name);
/* The definition of attribute `name` of `op`, or NULL. */
const om_attr_def *om_attr_def_find(const om_op *op, const char *name);
/* The smallest and largest operand (result) counts onnx-mlir's importer
 * gives the op: every slot of a fixed-arity op; the fixed slots and any
 * number more for a variadic one (largest INT32_MAX). */
void om_operand_counts(const om_op *op, int *min, int *max);
void om_result_counts(const om_op *op, int *min, int *max);

/* The name onnx-mlir's importer gives ONNX op `op_type` in a model that
 * imports opset `opset` of its domain: the op itself for its newest
 * version, "<op>V<n>" for an older one it keeps (FrontendGenImpl::
 * GetImportVersionOfNode). Written to buf (of size cap). */
const char *om_versioned_name(const char *op_type, int64_t opset, char *buf, int cap);

#endif
