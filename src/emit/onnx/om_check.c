/* om_check.c - the structural check of onnx-mlir-form modules (om_check.h).
 *
 * Owns: one rule per property the table fixes (operand and result counts
 * and none-ness per slot, regions, attribute presence, placement and
 * kind) and the module-level rules (onnx.Return ends @main_graph with its
 * result types; one onnx.EntryPoint names it). Reads the module through
 * the MLIR C API only. Inherent attributes are read by name (the C API
 * cannot list an unregistered op's properties), so every attribute the
 * row names is checked, and a discardable attribute the row names is a
 * violation (it belongs in <{...}>).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/form/form.h"
#include "emit/onnx/om_check.h"
#include "util/diag.h"

typedef struct checker {
  const om_table *table;
  o2m_diag *diag;
  MlirType si64, f32, i64;
  int entry_points;
  char entry_name[256]; /* the symbol the entry point names */
} checker;

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

static o2m_status violation(checker *c, MlirOperation op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static o2m_status violation(checker *c, MlirOperation op, const char *fmt, ...) {
  char reason[512], name[160] = "", loc[256] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof(reason), fmt, ap);
  va_end(ap);
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  snprintf(name, sizeof(name), "%.*s", (int)n.length, n.data);
  form_text t = {loc, sizeof(loc), 0};
  mlirLocationPrint(mlirOperationGetLocation(op), form_text_append, &t);
  return o2m_fail(c->diag, O2M_ERR_INVALID, "onnx-mlir form check: %s at %s: %s", name, loc,
                  reason);
}

static int is_none(MlirType t) { return mlirTypeIsANone(t); }

static int op_is(MlirOperation op, const char *name) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return n.length == strlen(name) && memcmp(n.data, name, n.length) == 0;
}

static MlirOperation last_op(MlirBlock block) {
  MlirOperation last = {NULL};
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    last = op;
  return last;
}

/* ---- counts and slots -------------------------------------------------- */

static const om_slot *slot_at(const om_slot *slots, int n, int i) {
  if (i < n) return &slots[i];
  return n > 0 && slots[n - 1].arity == OM_VARIADIC ? &slots[n - 1] : NULL;
}

static o2m_status check_values(checker *c, MlirOperation op, const om_op *def, int results) {
  int n = (int)(results ? mlirOperationGetNumResults(op) : mlirOperationGetNumOperands(op));
  int min, max;
  if (results) om_result_counts(def, &min, &max);
  else om_operand_counts(def, &min, &max);
  const char *what = results ? "results" : "operands";
  if (n < min || n > max)
    return max == min ? violation(c, op, "has %d %s; the op has %d", n, what, min)
                      : violation(c, op, "has %d %s; the op has at least %d", n, what, min);
  for (int i = 0; i < n; i++) {
    MlirType t = mlirValueGetType(results ? mlirOperationGetResult(op, i)
                                          : mlirOperationGetOperand(op, i));
    const om_slot *slot = slot_at(results ? def->results : def->operands,
                                  results ? def->n_results : def->n_operands, i);
    if (slot && slot->arity == OM_ONE && is_none(t))
      return violation(c, op, "%s %d ('%s') is none, but the op requires it",
                       results ? "result" : "operand", i, slot->name);
  }
  return O2M_OK;
}

static o2m_status check_regions(checker *c, MlirOperation op, const om_op *def) {
  int n = (int)mlirOperationGetNumRegions(op);
  if (n != def->n_regions)
    return violation(c, op, "has %d regions; the op has %d", n, def->n_regions);
  for (int r = 0; r < n; r++) {
    MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
    if (mlirBlockIsNull(block) || !mlirBlockIsNull(mlirBlockGetNextInRegion(block)))
      return violation(c, op, "region '%s' does not hold exactly one block", def->regions[r]);
    MlirOperation last = last_op(block);
    if (mlirOperationIsNull(last) || !op_is(last, "onnx.Yield"))
      return violation(c, op, "region '%s' does not end in onnx.Yield", def->regions[r]);
  }
  return O2M_OK;
}

/* ---- attributes -------------------------------------------------------- */

static int array_of(MlirAttribute a, int (*is)(const checker *, MlirAttribute), const checker *c) {
  if (!mlirAttributeIsAArray(a)) return 0;
  for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(a); i++)
    if (!is(c, mlirArrayAttrGetElement(a, i))) return 0;
  return 1;
}

static int is_i64(const checker *c, MlirAttribute a) {
  return mlirAttributeIsAInteger(a) && mlirTypeEqual(mlirAttributeGetType(a), c->i64);
}
static int is_f32(const checker *c, MlirAttribute a) {
  return mlirAttributeIsAFloat(a) && mlirTypeEqual(mlirAttributeGetType(a), c->f32);
}
static int is_string(const checker *c, MlirAttribute a) {
  (void)c;
  return mlirAttributeIsAString(a);
}

static int has_kind(const checker *c, MlirAttribute a, om_attr_kind kind) {
  switch (kind) {
  case OM_SI64: return mlirAttributeIsAInteger(a) && mlirTypeEqual(mlirAttributeGetType(a), c->si64);
  case OM_F32: return is_f32(c, a);
  case OM_STR: return mlirAttributeIsAString(a);
  case OM_I64S: return array_of(a, is_i64, c);
  case OM_F32S: return array_of(a, is_f32, c);
  case OM_STRS: return array_of(a, is_string, c);
  case OM_ANY: return 1;
  case OM_TYPE: return mlirAttributeIsAType(a);
  default: return 0;
  }
}

static const char *const kind_name[OM_KIND_COUNT] = {
    [OM_SI64] = "si64", [OM_F32] = "f32", [OM_STR] = "a string", [OM_I64S] = "an i64 array",
    [OM_F32S] = "an f32 array", [OM_STRS] = "a string array", [OM_ANY] = "an attribute",
    [OM_TYPE] = "a type",
};

static o2m_status check_attrs(checker *c, MlirOperation op, const om_op *def) {
  for (intptr_t i = 0; i < mlirOperationGetNumDiscardableAttributes(op); i++) {
    MlirNamedAttribute na = mlirOperationGetDiscardableAttribute(op, i);
    MlirStringRef name = mlirIdentifierStr(na.name);
    char text[160];
    snprintf(text, sizeof(text), "%.*s", (int)name.length, name.data);
    if (om_attr_def_find(def, text))
      return violation(c, op, "attribute '%s' is discardable; the op has it inherent", text);
    if (strcmp(text, "onnx_node_name") == 0 && !mlirAttributeIsAString(na.attribute))
      return violation(c, op, "onnx_node_name is not a string");
  }
  int constant_values = 0;
  for (int i = 0; i < def->n_attrs; i++) {
    const om_attr_def *a = &def->attrs[i];
    MlirAttribute v = mlirOperationGetInherentAttributeByName(op, str(a->name));
    if (mlirAttributeIsNull(v)) {
      if (a->presence == OM_REQUIRED)
        return violation(c, op, "lacks its required attribute '%s'", a->name);
      if (a->presence == OM_DEFAULTED)
        return violation(c, op, "lacks attribute '%s' (onnx-mlir fills in its default, %s)",
                         a->name, a->dflt[0] ? a->dflt : "empty");
      continue;
    }
    if (!has_kind(c, v, a->kind))
      return violation(c, op, "attribute '%s' is not %s", a->name, kind_name[a->kind]);
    constant_values++;
  }
  if (strcmp(def->name, "Constant") == 0 && constant_values != 1)
    return violation(c, op, "has %d value attributes; a constant has exactly one", constant_values);
  return O2M_OK;
}

/* ---- ops --------------------------------------------------------------- */

static o2m_status check_block(checker *c, MlirBlock block);

static o2m_status check_importer_op(checker *c, MlirOperation op, const char *name) {
  if (strcmp(name, "NoValue") == 0) {
    if (mlirOperationGetNumOperands(op) != 0 || mlirOperationGetNumResults(op) != 1 ||
        !is_none(mlirValueGetType(mlirOperationGetResult(op, 0))))
      return violation(c, op, "onnx.NoValue takes nothing and gives one none");
    return O2M_OK;
  }
  if (strcmp(name, "Return") == 0 || strcmp(name, "Yield") == 0) {
    if (mlirOperationGetNumResults(op) != 0) return violation(c, op, "a terminator gives nothing");
    MlirOperation parent = mlirOperationGetParentOperation(op);
    int in_func = !mlirOperationIsNull(parent) && op_is(parent, "func.func");
    if (in_func != (strcmp(name, "Return") == 0))
      return violation(c, op, "onnx.Return ends a function, onnx.Yield a region of an onnx op");
    return O2M_OK;
  }
  if (strcmp(name, "EntryPoint") == 0) {
    MlirAttribute f = mlirOperationGetInherentAttributeByName(op, str("func"));
    if (mlirAttributeIsNull(f) || !mlirAttributeIsAFlatSymbolRef(f))
      return violation(c, op, "onnx.EntryPoint lacks its func symbol");
    c->entry_points++;
    MlirStringRef v = mlirFlatSymbolRefAttrGetValue(f);
    snprintf(c->entry_name, sizeof(c->entry_name), "%.*s", (int)v.length, v.data);
    return O2M_OK;
  }
  return violation(c, op, "onnx-mlir has no op onnx.%s", name);
}

static o2m_status check_op(checker *c, MlirOperation op) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  o2m_status s = O2M_OK;
  if (n.length > 5 && memcmp(n.data, "onnx.", 5) == 0) {
    char name[160];
    snprintf(name, sizeof(name), "%.*s", (int)n.length - 5, n.data + 5);
    const om_op *def = om_table_find(c->table, name);
    if (!def) {
      s = check_importer_op(c, op, name);
    } else {
      s = check_values(c, op, def, 0);
      if (s == O2M_OK) s = check_values(c, op, def, 1);
      if (s == O2M_OK) s = check_regions(c, op, def);
      if (s == O2M_OK) s = check_attrs(c, op, def);
    }
  }
  for (intptr_t r = 0; s == O2M_OK && r < mlirOperationGetNumRegions(op); r++)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
         s == O2M_OK && !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
      s = check_block(c, b);
  return s;
}

static o2m_status check_block(checker *c, MlirBlock block) {
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    o2m_status s = check_op(c, op);
    if (s != O2M_OK) return s;
  }
  return O2M_OK;
}

/* @main_graph ends in onnx.Return of its result types. */
static o2m_status check_function(checker *c, MlirOperation func) {
  MlirAttribute ft = mlirOperationGetInherentAttributeByName(func, str("function_type"));
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  if (mlirAttributeIsNull(ft) || mlirBlockIsNull(body)) return violation(c, func, "has no body");
  MlirType type = mlirTypeAttrGetValue(ft);
  MlirOperation ret = last_op(body);
  if (mlirOperationIsNull(ret) || !op_is(ret, "onnx.Return"))
    return violation(c, func, "does not end in onnx.Return");
  intptr_t n = mlirFunctionTypeGetNumResults(type);
  if (mlirOperationGetNumOperands(ret) != n)
    return violation(c, ret, "returns %d values; the function has %d results",
                     (int)mlirOperationGetNumOperands(ret), (int)n);
  for (intptr_t i = 0; i < n; i++)
    if (!mlirTypeEqual(mlirValueGetType(mlirOperationGetOperand(ret, i)),
                       mlirFunctionTypeGetResult(type, i)))
      return violation(c, ret, "value %d is not of the function's result type", (int)i);
  return O2M_OK;
}

o2m_status om_check_module(MlirModule module, const om_table *table, o2m_diag *diag) {
  MlirContext ctx = mlirModuleGetContext(module);
  checker c = {table, diag, mlirIntegerTypeSignedGet(ctx, 64), mlirF32TypeGet(ctx),
               mlirIntegerTypeGet(ctx, 64), 0, ""};
  MlirBlock body = mlirModuleGetBody(module);
  o2m_status s = check_block(&c, body);
  int mains = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(body); s == O2M_OK && !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (!op_is(op, "func.func")) continue;
    MlirAttribute name = mlirOperationGetInherentAttributeByName(op, str("sym_name"));
    MlirStringRef v = mlirStringAttrGetValue(name);
    if (c.entry_name[0] && v.length == strlen(c.entry_name) && memcmp(v.data, c.entry_name, v.length) == 0) {
      mains++;
      s = check_function(&c, op);
    }
  }
  if (s == O2M_OK && (c.entry_points != 1 || mains != 1))
    s = o2m_fail(diag, O2M_ERR_INVALID,
                 "onnx-mlir form check: the module needs one onnx.EntryPoint naming one function "
                 "(%d entry points, %d functions named)",
                 c.entry_points, mains);
  return s;
}
