/* lw_linalg.c - the Linalg parts of the emitter toolkit (lower.h): affine
 * maps, linalg.generic with a callback-built body, named ops with their
 * regions filled, linalg.fill, scf.for loops carrying values, and the
 * lowering table. */
#include <string.h>

#include <mlir-c/Dialect/Linalg.h>

#include "emit/linalg/lower.h"
#include "emit/linalg/lower_shape.h"
#include "util/diag.h"

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

static MlirNamedAttribute named(lw_ctx *cx, const char *name, MlirAttribute a) {
  return mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref(name)), a);
}

MlirAttribute lw_affine_map(lw_ctx *cx, int n_dims, int n_results, const int *exprs) {
  MlirAffineExpr e[64];
  if (n_results > 64) n_results = 64;
  for (int i = 0; i < n_results; i++)
    e[i] = exprs[i] >= 0 ? mlirAffineDimExprGet(cx->mc, exprs[i]) : mlirAffineConstantExprGet(cx->mc, 0);
  return mlirAffineMapAttrGet(mlirAffineMapGet(cx->mc, n_dims, 0, n_results, e));
}

MlirAttribute lw_identity_map(lw_ctx *cx, int n_dims) {
  return mlirAffineMapAttrGet(mlirAffineMapMultiDimIdentityGet(cx->mc, n_dims));
}

static MlirType elem_of(MlirValue shaped) {
  return mlirShapedTypeGetElementType(mlirValueGetType(shaped));
}

/* operandSegmentSizes for ins/outs */
static MlirAttribute segments(lw_ctx *cx, int n_ins, int n_outs) {
  int32_t sizes[2] = {n_ins, n_outs};
  return mlirDenseI32ArrayGet(cx->mc, 2, sizes);
}

o2m_status lw_generic(lw_ctx *cx, const lw_generic_spec *spec, MlirValue *results) {
  enum { MAX_OPERANDS = 16 };
  int n_ops = spec->n_ins + spec->n_outs;
  if (n_ops > MAX_OPERANDS || spec->n_loops > 64)
    return lw_unsupported(cx, "internal: linalg.generic with too many operands or loops");
  MlirValue operands[MAX_OPERANDS];
  MlirAttribute maps[MAX_OPERANDS];
  MlirType result_types[MAX_OPERANDS], arg_types[MAX_OPERANDS];
  MlirLocation arg_locs[MAX_OPERANDS];
  for (int i = 0; i < spec->n_ins; i++) {
    operands[i] = spec->ins[i];
    maps[i] = spec->in_maps[i];
  }
  for (int i = 0; i < spec->n_outs; i++) {
    operands[spec->n_ins + i] = spec->outs[i];
    maps[spec->n_ins + i] = spec->out_maps[i];
    result_types[i] = mlirValueGetType(spec->outs[i]);
  }
  for (int i = 0; i < n_ops; i++) {
    if (mlirValueIsNull(operands[i])) return lw_error(cx, "internal: missing operand of linalg.generic");
    MlirType t = mlirValueGetType(operands[i]);
    arg_types[i] = mlirTypeIsAShaped(t) ? elem_of(operands[i]) : t;
    arg_locs[i] = cx->loc;
  }
  MlirAttribute iters[64];
  for (int i = 0; i < spec->n_loops; i++)
    iters[i] = lw_attr_parse(cx, spec->iterators[i] == 'r' ? "#linalg.iterator_type<reduction>"
                                                             : "#linalg.iterator_type<parallel>");
  MlirNamedAttribute attrs[3] = {
      named(cx, "indexing_maps", mlirArrayAttrGet(cx->mc, n_ops, maps)),
      named(cx, "iterator_types", mlirArrayAttrGet(cx->mc, spec->n_loops, iters)),
      named(cx, "operandSegmentSizes", segments(cx, spec->n_ins, spec->n_outs)),
  };
  MlirOperation op = lw_op_attrs(cx, "linalg.generic", n_ops, operands, spec->n_outs,
                                 result_types, 3, attrs, 1);
  if (mlirOperationIsNull(op)) return lw_error(cx, "internal: cannot create linalg.generic");
  MlirBlock body = mlirBlockCreate(n_ops, arg_types, arg_locs);
  mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, 0), body);
  MlirValue args[MAX_OPERANDS], yields[MAX_OPERANDS];
  for (int i = 0; i < n_ops; i++) args[i] = mlirBlockGetArgument(body, i);
  MlirBlock saved = cx->block;
  cx->block = body;
  o2m_status s = spec->body(cx, args, yields, spec->user);
  if (!s) lw_op(cx, "linalg.yield", spec->n_outs, yields, 0, NULL, NULL, 0);
  cx->block = saved;
  if (s) return s;
  for (int i = 0; i < spec->n_outs; i++) results[i] = mlirOperationGetResult(op, i);
  return O2M_OK;
}

MlirValue lw_named(lw_ctx *cx, const char *name, int n_ins, const MlirValue *ins,
                   MlirValue out, const char *attrs) {
  MlirValue operands[8];
  if (n_ins > 7) return (MlirValue){NULL};
  for (int i = 0; i < n_ins; i++) operands[i] = ins[i];
  operands[n_ins] = out;
  MlirType result = mlirValueGetType(out);
  MlirNamedAttribute list[16];
  int n = 0;
  list[n++] = named(cx, "operandSegmentSizes", segments(cx, n_ins, 1));
  if (attrs && attrs[0]) {
    MlirAttribute dict = lw_attr_dict_parse(cx, attrs);
    if (mlirAttributeIsNull(dict)) {
      lw_error(cx, "internal: bad attribute text for %s: {%s}", name, attrs);
      return (MlirValue){NULL};
    }
    for (intptr_t i = 0; i < mlirDictionaryAttrGetNumElements(dict) && n < 16; i++)
      list[n++] = mlirDictionaryAttrGetElement(dict, i);
  }
  MlirOperation op = lw_op_attrs(cx, name, n_ins + 1, operands, 1, &result, n, list, 1);
  if (mlirOperationIsNull(op)) return (MlirValue){NULL};
  mlirLinalgFillBuiltinNamedOpRegion(op);
  return mlirOperationGetResult(op, 0);
}

/* ---- nodes ---------------------------------------------------------------- */

static const lw_lowering lowerings[] = {
#define LOWER(op, fn) {op, fn},
#include "emit/linalg/lower_rules.def"
#undef LOWER
    {NULL, NULL}};

lw_lower_fn lw_lowering_for(const char *domain, const char *op_type) {
  return lw_lowering_in(lowerings, domain, op_type);
}

MlirValue lw_filled(lw_ctx *cx, MlirType type, const MlirValue *dims, MlirValue scalar) {
  MlirValue empty = lw_empty(cx, type, dims);
  MlirValue ins[1] = {scalar};
  return lw_named(cx, "linalg.fill", 1, ins, empty, NULL);
}

/* ---- scf.for ---------------------------------------------------------------- */

o2m_status lw_for_begin(lw_ctx *cx, lw_for_loop *l, MlirValue lb, MlirValue ub, int n,
                        const MlirValue *init, MlirValue *iv, MlirValue *carried) {
  if (n > LW_FOR_MAX_CARRIED) return lw_error(cx, "internal: too many loop-carried values");
  MlirValue ops[3 + LW_FOR_MAX_CARRIED] = {lb, ub, lw_const_index(cx, 1)};
  MlirType types[1 + LW_FOR_MAX_CARRIED] = {lw_index_type(cx)};
  MlirLocation locs[1 + LW_FOR_MAX_CARRIED];
  for (int i = 0; i <= n; i++) locs[i] = cx->loc;
  for (int i = 0; i < n; i++) ops[3 + i] = init[i], types[1 + i] = mlirValueGetType(init[i]);
  l->op = lw_op(cx, "scf.for", 3 + n, ops, n, types + 1, NULL, 1);
  if (mlirOperationIsNull(l->op)) return lw_error(cx, "internal: cannot create scf.for");
  MlirBlock body = mlirBlockCreate(1 + n, types, locs);
  mlirRegionAppendOwnedBlock(mlirOperationGetRegion(l->op, 0), body);
  *iv = mlirBlockGetArgument(body, 0);
  for (int i = 0; i < n; i++) carried[i] = mlirBlockGetArgument(body, 1 + i);
  l->saved = cx->block;
  l->n = n;
  cx->block = body;
  return O2M_OK;
}

void lw_for_end(lw_ctx *cx, lw_for_loop *l, const MlirValue *next, MlirValue *out) {
  if (next) lw_op(cx, "scf.yield", l->n, next, 0, NULL, NULL, 0);
  cx->block = l->saved;
  for (int i = 0; out && i < l->n; i++) out[i] = mlirOperationGetResult(l->op, i);
}

o2m_status lw_for(lw_ctx *cx, MlirValue lb, MlirValue ub, int n, const MlirValue *init,
                  lw_for_body_fn body, void *user, MlirValue *out) {
  lw_for_loop l;
  MlirValue iv, carried[LW_FOR_MAX_CARRIED], next[LW_FOR_MAX_CARRIED];
  o2m_status s = lw_for_begin(cx, &l, lb, ub, n, init, &iv, carried);
  if (s) return s;
  s = body(cx, iv, carried, next, user);
  lw_for_end(cx, &l, s ? NULL : next, out);
  return s;
}

void lw_declare_kernel(lw_ctx *cx, const char *fn, const char *signature) {
  MlirBlock body = mlirModuleGetBody(cx->module);
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute name = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("sym_name"));
    if (!mlirAttributeIsNull(name) && mlirAttributeIsAString(name)) {
      MlirStringRef s = mlirStringAttrGetValue(name);
      if (s.length == strlen(fn) && memcmp(s.data, fn, s.length) == 0) return;
    }
  }
  char attrs[1024];
  snprintf(attrs, sizeof(attrs),
           "sym_name = \"%s\", sym_visibility = \"private\", function_type = %s, llvm.emit_c_interface", fn,
           signature);
  MlirBlock saved = cx->block;
  cx->block = body;
  lw_op(cx, "func.func", 0, NULL, 0, NULL, attrs, 1);
  cx->block = saved;
}

static void load_buffer_dialects(lw_ctx *cx) {
  mlirContextGetOrLoadDialect(cx->mc, mlirStringRefCreateFromCString("bufferization"));
  mlirContextGetOrLoadDialect(cx->mc, mlirStringRefCreateFromCString("memref"));
}

MlirValue lw_kernel_operand(lw_ctx *cx, MlirValue tensor, const char *kernel_type) {
  load_buffer_dialects(cx);
  MlirType t = mlirValueGetType(tensor);
  int rank = (int)mlirShapedTypeGetRank(t);
  int64_t sizes[LW_MAX_RANK], strides[LW_MAX_RANK];
  if (rank > LW_MAX_RANK) return (MlirValue){NULL};
  for (int k = 0; k < rank; k++)
    sizes[k] = mlirShapedTypeGetDimSize(t, k), strides[k] = mlirShapedTypeGetDynamicStrideOrOffset();
  MlirAttribute layout = mlirStridedLayoutAttrGet(cx->mc, mlirShapedTypeGetDynamicStrideOrOffset(), rank, strides);
  MlirType buffer = mlirMemRefTypeGet(mlirShapedTypeGetElementType(t), rank, sizes, layout, mlirAttributeGetNull());
  MlirValue b = lw_op1(cx, "bufferization.to_buffer", 1, &tensor, buffer, "read_only");
  return mlirValueIsNull(b) ? b : lw_op1(cx, "memref.cast", 1, &b, lw_type(cx, kernel_type), NULL);
}

o2m_status lw_call_kernel_for_out(lw_ctx *cx, const char *callee, const char *signature, int n, const MlirValue *args,
                                  MlirValue y, MlirType y_type, const char *what) {
  for (int i = 0; i < n; i++)
    if (mlirValueIsNull(args[i])) return lw_error(cx, "internal: cannot pass %s's operands", what);
  lw_declare_kernel(cx, callee, signature);
  char attr[128];
  snprintf(attr, sizeof(attr), "callee = @%s", callee);
  if (mlirOperationIsNull(lw_op(cx, "func.call", n, args, 0, NULL, attr, 0)))
    return lw_error(cx, "internal: cannot call the %s kernel", what);
  MlirValue out = lw_op1(cx, "bufferization.to_tensor", 1, &y, y_type, "restrict, writable");
  return mlirValueIsNull(out) ? lw_error(cx, "internal: cannot take %s's result", what) : lw_set_out(cx, 0, out);
}

MlirValue lw_kernel_operand_any_align(lw_ctx *cx, MlirValue tensor, const char *kernel_type) {
  MlirValue cast = lw_kernel_operand(cx, tensor, kernel_type);
  if (mlirValueIsNull(cast)) return cast;
  MlirOperation to_buffer = mlirOpResultGetOwner(mlirOperationGetOperand(mlirOpResultGetOwner(cast), 0));
  mlirOperationSetAttributeByName(to_buffer, mlirStringRefCreateFromCString(O2M_WEIGHT_ANY_ALIGN_ATTR),
                                  mlirUnitAttrGet(cx->mc));
  return cast;
}

MlirValue lw_kernel_result(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes, const MlirValue *dims) {
  load_buffer_dialects(cx);
  MlirValue dynamic[LW_MAX_RANK];
  int n_dynamic = 0;
  for (int d = 0; d < rank && d < LW_MAX_RANK; d++)
    if (mlirShapedTypeIsDynamicSize(sizes[d])) dynamic[n_dynamic++] = dims[d];
  char attrs[96];
  snprintf(attrs, sizeof(attrs), "alignment = 64 : i64, operandSegmentSizes = array<i32: %d, 0>", n_dynamic);
  MlirType t = mlirMemRefTypeGet(elem, rank, sizes, mlirAttributeGetNull(), mlirAttributeGetNull());
  return lw_op1(cx, "memref.alloc", n_dynamic, dynamic, t, attrs);
}

int lw_attr_ints_or(lw_ctx *cx, const char *name, int n, int64_t dflt, int64_t *out) {
  const int64_t *v;
  int count = lw_attr_ints(cx, name, &v);
  for (int i = 0; i < n; i++) out[i] = count < 0 ? dflt : i < count ? v[i] : -1;
  return count < 0 || count == n;
}
