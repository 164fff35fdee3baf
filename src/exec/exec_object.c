/* exec_object.c - o2m_exec_write_objects: a Linalg module as relocatable
 * objects for the host, for `onnx2mlir compile` (src/exec/compile.c);
 * exec_llvm_object: one LLVM module's code.
 *
 * Owns: the lowering to the LLVM dialect with the calls of the runtime's
 * kernels (libonnx2mlir_rt, which the library links), cut into units on every core as for the
 * JIT (exec_outline.c, exec_units.c), the read-only runtime inputs,
 * LLVM's optimisation pipeline (default<On> without its loop unrolling:
 * the vectoriser's interleaving stays; unrolling copied the scalar
 * remainder of each vectorised loop up to 31 times, a third of a
 * transformer's code and compile time, for no measured speed) and
 * position-independent code generation for the host CPU and its features
 * (like -march=native) or for a CPU named from a table (`compile --cpu`).
 * Nothing is printed: LLVM's errors come back as the status's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <mlir-c/BuiltinAttributes.h>

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

/* The CPUs `compile --cpu` takes, by the architecture of the host's
 * triple: LLVM's generic levels and the server cores users deploy to (an
 * unknown name would make LLVM print a warning and guess). */
static const struct {
  const char *arch, *cpu;
} known_cpus[] = {
    {"x86_64", "x86-64"},         {"x86_64", "x86-64-v2"},      {"x86_64", "x86-64-v3"},
    {"x86_64", "x86-64-v4"},      {"x86_64", "haswell"},        {"x86_64", "skylake-avx512"},
    {"x86_64", "cascadelake"},    {"x86_64", "icelake-server"}, {"x86_64", "sapphirerapids"},
    {"x86_64", "graniterapids"},  {"x86_64", "znver2"},         {"x86_64", "znver3"},
    {"x86_64", "znver4"},         {"x86_64", "znver5"},         {"aarch64", "generic"},
    {"aarch64", "neoverse-n1"},   {"aarch64", "neoverse-n2"},   {"aarch64", "neoverse-v1"},
    {"aarch64", "neoverse-v2"},   {"aarch64", "apple-m1"},
};

o2m_status exec_check_cpu(const char *cpu, o2m_diag *diag) {
  if (!cpu || strcmp(cpu, "native") == 0) return O2M_OK;
  char *triple = LLVMGetDefaultTargetTriple(), names[512] = "native";
  int found = 0;
  for (size_t i = 0; i < sizeof(known_cpus) / sizeof(known_cpus[0]); i++) {
    if (strncmp(triple, known_cpus[i].arch, strlen(known_cpus[i].arch)) != 0) continue;
    found |= strcmp(cpu, known_cpus[i].cpu) == 0;
    snprintf(names + strlen(names), sizeof(names) - strlen(names), ", %s", known_cpus[i].cpu);
  }
  LLVMDisposeMessage(triple);
  return found ? O2M_OK : o2m_fail(diag, O2M_ERR_USAGE, "unknown CPU '%s' (this host's architecture knows %s)", cpu, names);
}

int exec_llvm_object(LLVMModuleRef mod, const char *cpu_name, int opt_level, int code_level, exec_blob *out,
                     char **error) {
  out->data = NULL, out->size = 0, *error = NULL;
  char *triple = LLVMGetDefaultTargetTriple(), *message = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &message)) {
    LLVMDisposeMessage(triple);
    *error = strdup(message ? message : "LLVM has no target for this host");
    LLVMDisposeMessage(message);
    return -1;
  }
  int host = !cpu_name || strcmp(cpu_name, "native") == 0;
  char *cpu = host ? LLVMGetHostCPUName() : NULL, *features = host ? LLVMGetHostCPUFeatures() : NULL;
  static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
                                               LLVMCodeGenLevelAggressive};
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, host ? cpu : cpu_name, host ? features : "",
                                                    levels[code_level], LLVMRelocPIC,
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
  LLVMPassBuilderOptionsSetLoopUnrolling(po, 0);
  LLVMErrorRef ran = LLVMRunPasses(mod, pipeline, tm, po);
  LLVMDisposePassBuilderOptions(po);
  LLVMMemoryBufferRef buf = NULL;
  if (ran) {
    char *m = LLVMGetErrorMessage(ran);
    *error = strdup(m ? m : "LLVM's optimisation failed");
    LLVMDisposeErrorMessage(m);
  } else if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &message, &buf)) {
    *error = strdup(message ? message : "LLVM's code generation failed");
    LLVMDisposeMessage(message);
  } else if ((out->data = malloc(LLVMGetBufferSize(buf) + 1)) != NULL) {
    out->size = LLVMGetBufferSize(buf);
    memcpy(out->data, LLVMGetBufferStart(buf), out->size);
  } else {
    *error = strdup("out of memory");
  }
  if (buf) LLVMDisposeMemoryBuffer(buf);
  LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(triple);
  if (host) LLVMDisposeMessage(cpu), LLVMDisposeMessage(features);
  return *error ? -1 : 0;
}

int exec_blob_write(const char *path, const exec_blob *b) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int bad = fwrite(b->data, 1, b->size, f) != b->size;
  return fclose(f) != 0 || bad ? -1 : 0;
}

o2m_status o2m_exec_write_objects(MlirModule module, const char *entry, const char *cpu, int opt_level,
                                  exec_blob *objects, int *n_objects, o2m_arena *arena, exec_signature *sig,
                                  o2m_diag *diag) {
  *n_objects = 0;
  if (opt_level < 0 || opt_level > 3) opt_level = 2;
  o2m_status s = exec_read_signature(module, entry, arena, sig, diag);
  if (s) return s;
  make_inputs_read_only(exec_find_entry(module, entry), sig);
  int threads = exec_compile_threads();
  int calls = 0; /* the runtime's kernels, whichever the running process finds */
  if ((s = exec_lower_to_llvm(module, entry, exec_parts_for(threads), EXEC_KERNELS_ALL, &calls, NULL, diag))) return s;
  return exec_compile_units(module, entry, cpu, opt_level, threads, objects, n_objects, NULL, diag);
}
