/* tosa_emit.c - the TOSA target: its entry in the emitter kit (name,
 * lowering table, dialects, tosa.const), the declared target (TOSA spec
 * version, profiles, and the extensions the module uses, found by walking
 * it), validation against that target (tosa-validate with strict op-spec
 * alignment), the module for run/test (then lowered to Linalg by upstream
 * MLIR's TOSA conversions), and `import --to tosa`. */
#include <stdio.h>
#include <string.h>

#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/Tensor.h>
#include <mlir-c/Dialect/Tosa.h>

#include "emit/emit.h"
#include "emit/linalg/lower_lowp.h"
#include "emit/tosa/tosa_kit.h"
#include "exec/exec.h"
#include "util/diag.h"

static void load_dialects(MlirContext mc) {
  MlirDialectHandle handles[] = {mlirGetDialectHandle__func__(), mlirGetDialectHandle__tosa__(),
                                 mlirGetDialectHandle__tensor__()};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++)
    mlirDialectHandleLoadDialect(handles[i], mc);
}

/* Whether a pool has a dilation other than 1. */
static int dilated(const o2m_node *n) {
  const o2m_attr *a = o2m_node_attr(n, "dilations");
  for (int i = 0; a && a->type == O2M_ATTR_INTS && i < a->count; i++)
    if (a->ints[i] != 1) return 1;
  return 0;
}

static int attr_is(const o2m_node *n, const char *name, const char *dflt, const char *want) {
  const o2m_attr *a = o2m_node_attr(n, name);
  const char *v = dflt;
  size_t len = strlen(dflt);
  if (a && a->type == O2M_ATTR_STRING) v = (const char *)a->s.ptr, len = a->s.len;
  return len == strlen(want) && memcmp(v, want, len) == 0;
}

/* Whether tosa.resize can express the Resize node's form: nearest or
 * linear (not antialiased), a coordinate mode it has, NCHW resized on H
 * and W only. (Scales TOSA cannot write as ratios are still refused when
 * lowering.) */
static int resize_kept(const o2m_node *n) {
  if (!attr_is(n, "mode", "nearest", "nearest") && !attr_is(n, "mode", "nearest", "linear")) return 0;
  if (attr_is(n, "mode", "nearest", "linear") && o2m_node_attr(n, "antialias") &&
      o2m_node_attr(n, "antialias")->i)
    return 0;
  static const char *const coords[] = {"asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners"};
  int coord_ok = 0;
  for (int i = 0; i < 4; i++) coord_ok |= attr_is(n, "coordinate_transformation_mode", "half_pixel", coords[i]);
  const o2m_type *x = n->n_inputs && n->inputs[0] ? &n->inputs[0]->type : NULL;
  const o2m_type *y = n->n_outputs && n->outputs[0] ? &n->outputs[0]->type : NULL;
  if (!coord_ok || !x || !y || x->rank != 4 || y->rank != 4) return 0;
  for (int k = 0; k < 2; k++)
    if (x->dims[k].size < 0 || x->dims[k].size != y->dims[k].size) return 0;
  return 1;
}

/* Zero points (inputs 2 and 3) absent or known at import: TOSA's are
 * attributes or constants. */
static int zero_points_known(const o2m_node *n) {
  for (int i = 2; i < 4 && i < n->n_inputs; i++)
    if (n->inputs[i] && !n->inputs[i]->known && !n->inputs[i]->init) return 0;
  return 1;
}

/* Forms of ops in the table that TOSA cannot express, left to the
 * transform layer: a Loop with scan outputs or carrying a sequence
 * (unrolled when its trip count is known; tosa.while_loop cannot build
 * them), dilated pools (strided
 * slices; TOSA's pools have no dilation), Resize forms tosa.resize does
 * not have (per-axis interpolation matrices), integer products whose zero
 * points are known only at run time. */
static int keeps(const o2m_node *n) {
  if (strcmp(n->op_type, "MatMulInteger") == 0 || strcmp(n->op_type, "ConvInteger") == 0) return zero_points_known(n);
  if (strcmp(n->op_type, "Resize") == 0) return resize_kept(n);
  if (strcmp(n->op_type, "Loop") == 0) return n->n_outputs <= n->n_inputs - 2 && lw_loop_carries_tensors(n);
  if (strcmp(n->op_type, "MaxPool") == 0 || strcmp(n->op_type, "AveragePool") == 0) return !dilated(n);
  return 1;
}

static const lw_target tosa_target = {.name = "TOSA", .lowering_for = tw_lowering_for,
                                      .load_dialects = load_dialects, .const_op = "tosa.const",
                                      .const_attr = "values", .keeps = keeps, .carrier = tw_carrier,
                                      .narrow = tw_narrow_argument};

o2m_status o2m_tosa_prepare(o2m_model *model, o2m_diag *diag) { return lw_prepare_model(&tosa_target, model, O2M_JIT, diag); }

/* ---- the extensions a module uses --------------------------------------------- */

enum {
  EXT_INT16 = 1 << 0, EXT_INT64 = 1 << 1, EXT_BF16 = 1 << 2, EXT_DYNAMIC = 1 << 3,
  EXT_CONTROLFLOW = 1 << 4, EXT_FFT = 1 << 5, EXT_DOUBLEROUND = 1 << 6, EXT_INT4 = 1 << 7,
  EXT_FP8E4M3 = 1 << 8, EXT_FP8E5M2 = 1 << 9,
};

static const struct {
  int bit;
  const char *name;
  int in_1_0; /* part of TOSA 1.0 */
} extensions[] = {
    {EXT_INT16, "int16", 1},     {EXT_INT64, "int64", 0},
    {EXT_BF16, "bf16", 1},       {EXT_DYNAMIC, "dynamic", 1},
    {EXT_CONTROLFLOW, "controlflow", 1}, {EXT_FFT, "fft", 1},
    {EXT_DOUBLEROUND, "doubleround", 1}, {EXT_INT4, "int4", 1},
    {EXT_FP8E4M3, "fp8e4m3", 1}, {EXT_FP8E5M2, "fp8e5m2", 1},
};

static int type_extensions(MlirType t) {
  if (!mlirTypeIsARankedTensor(t)) return 0;
  int bits = 0;
  for (intptr_t k = 0; k < mlirShapedTypeGetRank(t); k++)
    if (mlirShapedTypeIsDynamicDim(t, k)) bits |= EXT_DYNAMIC;
  MlirType e = mlirShapedTypeGetElementType(t);
  if (mlirTypeIsAInteger(e)) {
    unsigned w = mlirIntegerTypeGetWidth(e);
    bits |= w == 16 ? EXT_INT16 : w == 64 ? EXT_INT64 : w == 4 ? EXT_INT4 : 0;
  }
  if (mlirTypeIsABF16(e)) bits |= EXT_BF16;
  if (mlirTypeIsAFloat8E4M3FN(e)) bits |= EXT_FP8E4M3;
  if (mlirTypeIsAFloat8E5M2(e)) bits |= EXT_FP8E5M2;
  return bits;
}

static MlirWalkResult note_extensions(MlirOperation op, void *user) {
  int *bits = user;
  MlirIdentifier name = mlirOperationGetName(op);
  MlirStringRef s = mlirIdentifierStr(name);
  char text[64];
  size_t n = s.length < sizeof(text) - 1 ? s.length : sizeof(text) - 1;
  memcpy(text, s.data, n);
  text[n] = 0;
  if (strcmp(text, "tosa.cond_if") == 0 || strcmp(text, "tosa.while_loop") == 0) *bits |= EXT_CONTROLFLOW;
  if (strcmp(text, "tosa.fft2d") == 0 || strcmp(text, "tosa.rfft2d") == 0) *bits |= EXT_FFT;
  if (strcmp(text, "tosa.rescale") == 0) {
    MlirAttribute mode = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("rounding_mode"));
    MlirAttribute dbl = mlirAttributeParseGet(mlirOperationGetContext(op),
                                              mlirStringRefCreateFromCString("#tosa.rounding_mode<DOUBLE_ROUND>"));
    if (!mlirAttributeIsNull(mode) && mlirAttributeEqual(mode, dbl)) *bits |= EXT_DOUBLEROUND;
  }
  for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
    *bits |= type_extensions(mlirValueGetType(mlirOperationGetResult(op, i)));
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++)
    *bits |= type_extensions(mlirValueGetType(mlirOperationGetOperand(op, i)));
  return MlirWalkResultAdvance;
}

static int uses_extensions(MlirModule module) {
  int bits = 0;
  mlirOperationWalk(mlirModuleGetOperation(module), note_extensions, &bits, MlirWalkPreOrder);
  return bits != 0;
}

/* Attaches the target (tosa.target_env) and validates the module for it. */
static o2m_status attach_and_validate(o2m_model *model, MlirModule module, const char *spec,
                                      o2m_diag *diag) {
  int is_1_0 = spec && strcmp(spec, "1.0") == 0;
  int bits = 0;
  mlirOperationWalk(mlirModuleGetOperation(module), note_extensions, &bits, MlirWalkPreOrder);
  char names[256] = "";
  size_t len = 0;
  for (size_t i = 0; i < sizeof(extensions) / sizeof(extensions[0]); i++) {
    if (!(bits & extensions[i].bit) || (is_1_0 && !extensions[i].in_1_0)) continue;
    len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? "," : "", extensions[i].name);
  }
  char pass[512];
  snprintf(pass, sizeof(pass), "tosa-attach-target{profiles=pro_int,pro_fp%s%s level=none specification_version=%s}",
           len ? " extensions=" : "", names, is_1_0 ? "1.0" : "1.1.draft");
  o2m_status s = o2m_exec_run_pass(module, pass, diag);
  if (!s) s = o2m_exec_run_pass(module, "tosa-validate{strict-op-spec-alignment}", diag);
  if (!s) return O2M_OK;
  char why[sizeof(diag->message)];
  snprintf(why, sizeof(why), "%s", diag->message);
  diag->status = O2M_OK; /* the pass's message, restated with the model and spec */
  return o2m_fail(diag, s, "%s: the module is not valid TOSA %s: %s", model->path,
                  is_1_0 ? "1.0" : "1.1.draft", why);
}

/* ---- the module ---------------------------------------------------------------- */

static o2m_status build(o2m_model *model, MlirContext mc, const char *spec, int for_jit,
                        const struct o2m_io_value *inputs, struct o2m_io_value *outputs,
                        MlirModule *out, o2m_diag *diag) {
  o2m_status s = lw_emit_module(&tosa_target, model, mc, for_jit, inputs, outputs, out, diag);
  if (s) return s;
  s = attach_and_validate(model, *out, spec, diag);
  if (s) mlirModuleDestroy(*out);
  return s;
}

/* TOSA through upstream MLIR's conversions to Linalg, tensor, arith and
 * scf: what the executor then lowers like any Linalg module. */
static const char *const to_linalg[] = {
    "func.func(tosa-to-scf)",
    "tosa-to-linalg-pipeline",
    "func.func(tosa-to-tensor)",
    "func.func(tosa-to-arith{include-apply-rescale=true})",
    "canonicalize",
};

o2m_status o2m_tosa_to_linalg(MlirModule module, o2m_diag *diag) {
  o2m_status s = O2M_OK;
  for (size_t i = 0; !s && i < sizeof(to_linalg) / sizeof(to_linalg[0]); i++)
    s = o2m_exec_run_pass(module, to_linalg[i], diag);
  /* float8 casts become the integer arithmetic LLVM can run */
  return s ? s : lw_emulate_float8_casts(module, diag);
}

o2m_status o2m_emit_tosa_module_io(o2m_model *model, MlirContext mc, const struct o2m_io_value *inputs,
                                   struct o2m_io_value *outputs, MlirModule *out, o2m_diag *diag) {
  o2m_status s = build(model, mc, NULL, 1, inputs, outputs, out, diag);
  if (s) return s;
  if ((s = o2m_tosa_to_linalg(*out, diag))) mlirModuleDestroy(*out);
  return s;
}

/* ---- import --to tosa ---------------------------------------------------------- */

o2m_status o2m_emit_tosa(o2m_model *model, const o2m_import_options *options, FILE *out,
                         o2m_diag *diag) {
  MlirContext mc = mlirContextCreate();
  MlirModule module;
  o2m_status s = build(model, mc, options ? options->tosa_spec : NULL, 0, NULL, NULL, &module, diag);
  if (!s) {
    /* MLIR 22 prints a target without extensions as `extensions = []`,
     * which its own parser refuses: such a module (valid for every
     * target of its profiles) is written without tosa.target_env */
    MlirOperation op = mlirModuleGetOperation(module);
    MlirAttribute env = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("tosa.target_env"));
    if (!mlirAttributeIsNull(env) && !uses_extensions(module))
      mlirOperationRemoveAttributeByName(op, mlirStringRefCreateFromCString("tosa.target_env"));
    lw_print_module(module, options && options->bytecode, out);
    mlirModuleDestroy(module);
  }
  mlirContextDestroy(mc);
  return s;
}
