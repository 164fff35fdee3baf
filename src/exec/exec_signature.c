/* exec_signature.c - what the entry function of a module takes and
 * returns, read before lowering (exec_internal.h, exec_read_signature).
 *
 * Owns: finding the func.func, the dtype/rank/dims of each argument and
 * result, the weight each argument carries (emit.h, O2M_WEIGHT_ARG_ATTR),
 * the ONNX dtype of those a target carries in a wider type
 * (O2M_CARRIED_DTYPE_ATTR), and asking for the entry's C interface (llvm.emit_c_interface).
 */
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "emit/emit.h"
#include "emit/kit/kit.h"
#include "exec/exec_internal.h"
#include "util/diag.h"

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

static o2m_status read_arg(const char *entry, MlirType type, const char *what, int index, o2m_arena *arena,
                           exec_arg *out, o2m_diag *diag) {
  o2m_dtype dtype = mlirTypeIsARankedTensor(type) ? exec_dtype_of(mlirShapedTypeGetElementType(type))
                                                  : O2M_DT_UNDEFINED;
  if (dtype == O2M_DT_UNDEFINED) {
    char text[256];
    lw_type_text(type, text, sizeof(text));
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED,
                    "%s %d of @%s has type %s; the executor takes ranked tensors of numbers or bools",
                    what, index, entry, text);
  }
  out->dtype = dtype;
  out->any_align = 0;
  out->rank = (int)mlirShapedTypeGetRank(type);
  out->dims = out->rank ? o2m_arena_array(arena, (size_t)out->rank, sizeof(int64_t)) : NULL;
  if (out->rank && !out->dims) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int k = 0; k < out->rank; k++)
    out->dims[k] = mlirShapedTypeIsDynamicDim(type, k) ? -1 : mlirShapedTypeGetDimSize(type, k);
  return O2M_OK;
}

MlirOperation exec_find_entry(MlirModule module, const char *entry) {
  MlirSymbolTable table = mlirSymbolTableCreate(mlirModuleGetOperation(module));
  MlirOperation func = mlirSymbolTableLookup(table, str(entry));
  mlirSymbolTableDestroy(table);
  MlirStringRef op_name = mlirOperationIsNull(func) ? str("") : mlirIdentifierStr(mlirOperationGetName(func));
  if (op_name.length != 9 || memcmp(op_name.data, "func.func", 9) != 0) return (MlirOperation){NULL};
  return func;
}

static MlirAttribute dict_entry(MlirAttribute dicts, int i, const char *name) {
  if (mlirAttributeIsNull(dicts) || !mlirAttributeIsAArray(dicts) || i >= (int)mlirArrayAttrGetNumElements(dicts))
    return mlirAttributeGetNull();
  MlirAttribute d = mlirArrayAttrGetElement(dicts, i);
  return mlirAttributeIsADictionary(d) ? mlirDictionaryAttrGetElementByName(d, str(name)) : mlirAttributeGetNull();
}

/* An argument or result the target carries in a wider type (emit.h,
 * O2M_CARRIED_DTYPE_ATTR) takes and gives its ONNX dtype, one element a
 * byte as the element type it is held in. */
static o2m_status read_carried(MlirAttribute dicts, int n, exec_arg *args, const char *what, o2m_diag *diag) {
  for (int i = 0; i < n; i++) {
    MlirAttribute a = dict_entry(dicts, i, O2M_CARRIED_DTYPE_ATTR);
    if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a)) continue;
    MlirStringRef name = mlirStringAttrGetValue(a);
    o2m_dtype d = o2m_dtype_named(name.data, name.length);
    if (!d || o2m_dtype_bits(d) > 8 || exec_elem_bytes(args[i].dtype) != 1)
      return o2m_fail(diag, O2M_ERR_INVALID, "%s %d: %s \"%.*s\" is not a dtype carried in a byte", what, i,
                      O2M_CARRIED_DTYPE_ATTR, (int)name.length, name.data);
    args[i].dtype = d;
  }
  return O2M_OK;
}

/* The initializer names of the weight arguments (NULL for the others),
 * and which of them may lie at any address. */
static o2m_status read_weight_names(MlirOperation func, exec_signature *sig, o2m_arena *arena, o2m_diag *diag) {
  if (!(sig->weight_names = o2m_arena_array(arena, (size_t)sig->n_args + 1, sizeof(char *))))
    return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  MlirAttribute arg_attrs = mlirOperationGetInherentAttributeByName(func, str("arg_attrs"));
  for (int i = 0; i < sig->n_args; i++) {
    MlirAttribute w = dict_entry(arg_attrs, i, O2M_WEIGHT_ARG_ATTR);
    if (mlirAttributeIsNull(w) || !mlirAttributeIsAString(w)) continue;
    sig->args[i].any_align = !mlirAttributeIsNull(dict_entry(arg_attrs, i, O2M_WEIGHT_ANY_ALIGN_ATTR));
    MlirStringRef name = mlirStringAttrGetValue(w);
    if (!(sig->weight_names[i] = o2m_arena_strndup(arena, name.data, name.length)))
      return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  }
  o2m_status s = read_carried(arg_attrs, sig->n_args, sig->args, "argument", diag);
  return s ? s : read_carried(mlirOperationGetInherentAttributeByName(func, str("res_attrs")), sig->n_results,
                              sig->results, "result", diag);
}

o2m_status exec_read_signature(MlirModule module, const char *entry, o2m_arena *arena, exec_signature *sig,
                               o2m_diag *diag) {
  MlirOperation func = exec_find_entry(module, entry);
  if (mlirOperationIsNull(func)) return o2m_fail(diag, O2M_ERR_INVALID, "the module has no func.func @%s to run", entry);
  MlirAttribute fattr = mlirOperationGetInherentAttributeByName(func, str("function_type"));
  MlirType ftype = mlirAttributeIsNull(fattr) ? (MlirType){NULL} : mlirTypeAttrGetValue(fattr);
  if (mlirTypeIsNull(ftype) || !mlirTypeIsAFunction(ftype))
    return o2m_fail(diag, O2M_ERR_INVALID, "@%s has no function type", entry);
  sig->n_args = (int)mlirFunctionTypeGetNumInputs(ftype);
  sig->n_results = (int)mlirFunctionTypeGetNumResults(ftype);
  sig->args = o2m_arena_array(arena, (size_t)sig->n_args + 1, sizeof(exec_arg));
  sig->results = o2m_arena_array(arena, (size_t)sig->n_results + 1, sizeof(exec_arg));
  if (!sig->args || !sig->results) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < sig->n_args; i++) {
    o2m_status s = read_arg(entry, mlirFunctionTypeGetInput(ftype, i), "argument", i, arena, &sig->args[i], diag);
    if (s) return s;
  }
  for (int i = 0; i < sig->n_results; i++) {
    o2m_status s = read_arg(entry, mlirFunctionTypeGetResult(ftype, i), "result", i, arena, &sig->results[i], diag);
    if (s) return s;
  }
  o2m_status s = read_weight_names(func, sig, arena, diag);
  if (s) return s;
  mlirOperationSetDiscardableAttributeByName(func, str("llvm.emit_c_interface"),
                                             mlirUnitAttrGet(mlirModuleGetContext(module)));
  return O2M_OK;
}
