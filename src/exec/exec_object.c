/* exec_object.c - o2m_exec_write_object: a Linalg module as a relocatable
 * object file for the host, for `onnx2mlir compile` (src/exec/compile.c).
 *
 * Owns: the lowering to the LLVM dialect without BLAS calls (the object
 * must not need the executor), the read-only runtime inputs, the
 * translation to LLVM IR, LLVM's optimisation pipeline (default<On>) and
 * position-independent code generation for the host CPU and its features
 * (like -march=native). Nothing is printed: LLVM's errors come back as
 * the status's message.
 */
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Target/LLVMIR.h>

#include "exec/exec_internal.h"
#include "util/diag.h"

static MlirStringRef str(const char *s) { return mlirStringRefCreateFromCString(s); }

/* The runtime inputs (arguments without a weight) become read-only, so
 * that bufferization copies what it would write in place: the library's
 * callers pass const data. */
static void make_inputs_read_only(MlirOperation func, const exec_signature *sig) {
  MlirContext ctx = mlirOperationGetContext(func);
  MlirAttribute old = mlirOperationGetInherentAttributeByName(func, str("arg_attrs"));
  int have = !mlirAttributeIsNull(old) && mlirAttributeIsAArray(old) ? (int)mlirArrayAttrGetNumElements(old) : 0;
  MlirAttribute attrs[1024];
  if (sig->n_args > 1024) return;
  MlirNamedAttribute read_only = mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("bufferization.writable")),
                                                       mlirBoolAttrGet(ctx, 0));
  for (int i = 0; i < sig->n_args; i++)
    attrs[i] = sig->weight_names[i] && i < have ? mlirArrayAttrGetElement(old, i) : mlirDictionaryAttrGet(ctx, 1, &read_only);
  mlirOperationSetInherentAttributeByName(func, str("arg_attrs"), mlirArrayAttrGet(ctx, sig->n_args, attrs));
}

static o2m_status llvm_error(o2m_diag *diag, const char *what, char *message) {
  o2m_status s = o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: %s", what, message ? message : "(no message)");
  LLVMDisposeMessage(message);
  return s;
}

/* Optimises `mod` at opt_level and writes it as an object file. */
static o2m_status emit_object(LLVMModuleRef mod, int opt_level, const char *path, o2m_diag *diag) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  char *triple = LLVMGetDefaultTargetTriple(), *error = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &error)) {
    LLVMDisposeMessage(triple);
    return llvm_error(diag, "LLVM has no target for this host", error);
  }
  char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
  static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
                                               LLVMCodeGenLevelAggressive};
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, features, levels[opt_level], LLVMRelocPIC,
                                                    LLVMCodeModelDefault);
  LLVMSetTarget(mod, triple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
  char *layout_text = LLVMCopyStringRepOfTargetData(layout);
  LLVMSetDataLayout(mod, layout_text);
  LLVMDisposeMessage(layout_text);
  LLVMDisposeTargetData(layout);
  char pipeline[32];
  snprintf(pipeline, sizeof(pipeline), "default<O%d>", opt_level);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef ran = LLVMRunPasses(mod, pipeline, tm, po);
  LLVMDisposePassBuilderOptions(po);
  o2m_status s = O2M_OK;
  if (ran) s = llvm_error(diag, "LLVM's optimisation failed", LLVMGetErrorMessage(ran));
  if (!s && LLVMTargetMachineEmitToFile(tm, mod, (char *)path, LLVMObjectFile, &error))
    s = llvm_error(diag, "LLVM's code generation failed", error);
  LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  return s;
}

o2m_status o2m_exec_write_object(MlirModule module, const char *entry, int opt_level, const char *path,
                                 o2m_arena *arena, exec_signature *sig, o2m_diag *diag) {
  if (opt_level < 0 || opt_level > 3) opt_level = 2;
  o2m_status s = exec_read_signature(module, entry, arena, sig, diag);
  if (s) return s;
  make_inputs_read_only(exec_find_entry(module, entry), sig);
  if ((s = exec_lower_to_llvm(module, NULL, NULL, diag))) return s;
  LLVMContextRef llvm = LLVMContextCreate();
  exec_errors errors;
  exec_capture_begin(&errors, mlirModuleGetContext(module));
  LLVMModuleRef mod = mlirTranslateModuleToLLVMIR(mlirModuleGetOperation(module), llvm);
  exec_capture_end(&errors);
  if (!mod)
    s = o2m_fail(diag, O2M_ERR_UNSUPPORTED, "the translation to LLVM IR failed: %s",
                 errors.text[0] ? errors.text : "(no message)");
  else
    s = emit_object(mod, opt_level, path, diag);
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(llvm);
  return s;
}
