/* cmd_compile.c - `onnx2mlir compile MODEL -o LIB [--header H] ...`: loads
 * the model and compiles it through the MLIR plugin into a shared library
 * or an object with a C ABI (o2m_model_compile). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "plugin/plugin.h"
#include "util/diag.h"

static const char compile_help[] =
    "usage: onnx2mlir compile MODEL -o LIB.so|LIB.o [--header FILE.h] [--name NAME]\n"
    "                             [--weights FILE] [--runtime static|shared] [-O LEVEL]\n"
    "                             [--cpu NAME] [--data-dir DIR] [--inputs DIR]\n\n"
    "Compiles an ONNX model for this machine's CPU (or --cpu's) into a shared library (.so) or\n"
    "a relocatable object (.o) with a C ABI. Dynamic dims stay dynamic: the\n"
    "library takes any batch size. The weights are compiled in (or written to --weights FILE).\n\n"
    "  -o LIB         the library to write (.so) or object (.o)\n"
    "  --header FILE  write the C header that declares NAME_run, NAME_free_outputs,\n"
    "                 NAME_input_name and NAME_output_name and lists the inputs\n"
    "                 and outputs (see examples/compiled/)\n"
    "  --name NAME    the functions' prefix, a C identifier (default: model)\n"
    "  -O LEVEL       LLVM optimisation level 0..3 (default 2)\n"
    "  --weights FILE write the weights to FILE instead of into the library: it maps\n"
    "                 FILE (this path, made absolute) at its first call, or the file\n"
    "                 NAME_load_weights names before that, and refuses other weights\n"
    "  --runtime static|shared\n"
    "                 static (default): the runtime the code calls (products through\n"
    "                 OpenBLAS, convolutions through oneDNN, loops where they are\n"
    "                 missing; TopK, NonMaxSuppression) is linked into LIB, one file;\n"
    "                 shared: LIB needs libonnx2mlir_rt.so.0 (beside LIB, where it was\n"
    "                 at compile time, or on the system's path)\n"
    "  --cpu NAME     the CPU the library will run on (default native: this one, all\n"
    "                 its features): x86-64-v3 (AVX2) or x86-64-v4 (AVX-512) for any\n"
    "                 such machine, or a core (skylake-avx512, icelake-server,\n"
    "                 sapphirerapids, znver4, neoverse-v1, ...; a wrong one is\n"
    "                 refused with the list). The runtime's kernels pick their code\n"
    "                 when they load, on any CPU\n"
    "  --data-dir DIR where the model's external data lives\n"
    "  --inputs DIR   specialise to the inputs DIR/input_<i>.pb, as import does: their\n"
    "                 shapes become fixed, and inputs read only as parameters (Resize's\n"
    "                 sizes, reduction axes, ...) constants, for models that need them\n\n"
    "Needs the system's C compiler (cc, or $CC) to build the wrapper and link;\n"
    "a .o also needs objcopy. A model with nodes the Linalg target cannot\n"
    "lower is refused with the list of them, and nothing is written.\n";

int cmd_compile(int argc, char **argv) {
  const char *model_path = NULL, *data_dir = NULL, *level = NULL, *inputs_dir = NULL, *runtime = NULL;
  o2m_compile_options co = {0};
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      fputs(compile_help, stdout);
      return EXIT_OK;
    }
    if (cli_flag_value(argc, argv, &i, "-o", &co.output)) {
      if (!co.output) return cli_usage_error("compile", "-o needs a file name");
    } else if (cli_flag_value(argc, argv, &i, "--header", &co.header)) {
      if (!co.header) return cli_usage_error("compile", "--header needs a file name");
    } else if (cli_flag_value(argc, argv, &i, "--weights", &co.weights)) {
      if (!co.weights) return cli_usage_error("compile", "--weights needs a file name");
    } else if (cli_flag_value(argc, argv, &i, "--runtime", &runtime)) {
      if (!runtime || (strcmp(runtime, "static") != 0 && strcmp(runtime, "shared") != 0))
        return cli_usage_error("compile", "--runtime takes static or shared");
      co.shared_runtime = strcmp(runtime, "shared") == 0;
    } else if (cli_flag_value(argc, argv, &i, "--cpu", &co.cpu)) {
      if (!co.cpu || !*co.cpu) return cli_usage_error("compile", "--cpu needs a CPU name (native, x86-64-v3, ...)");
    } else if (cli_flag_value(argc, argv, &i, "--name", &co.name)) {
      if (!co.name) return cli_usage_error("compile", "--name needs a C identifier");
    } else if (cli_flag_value(argc, argv, &i, "--inputs", &inputs_dir)) {
      if (!inputs_dir) return cli_usage_error("compile", "--inputs needs a folder");
    } else if (cli_flag_value(argc, argv, &i, "--data-dir", &data_dir)) {
      if (!data_dir) return cli_usage_error("compile", "--data-dir needs a folder");
    } else if (cli_flag_value(argc, argv, &i, "-O", &level) || (strncmp(argv[i], "-O", 2) == 0 && (level = argv[i] + 2))) {
      if (!level || strlen(level) != 1 || level[0] < '0' || level[0] > '3')
        return cli_usage_error("compile", "-O takes 0, 1, 2 or 3");
      co.opt_level = level[0] == '0' ? -1 : level[0] - '0';
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error("compile", "unknown option '%s'", argv[i]);
    } else if (model_path) {
      return cli_usage_error("compile", "more than one model given");
    } else {
      model_path = argv[i];
    }
  }
  if (!model_path) return cli_usage_error("compile", "no model given");
  if (!co.output) return cli_usage_error("compile", "no output given (-o LIB.so or -o LIB.o)");
  o2m_diag diag = cli_diag();
  const struct o2m_plugin *plugin = cli_load_plugin(&diag);
  if (!plugin) return cli_report(&diag);
  o2m_load_options options = {data_dir, 0};
  o2m_model *model = NULL;
  if (o2m_model_load(model_path, &options, &model, &diag)) return cli_report(&diag);
  o2m_arena inputs_arena = {0};
  o2m_status s = inputs_dir ? cli_specialize_to(model, inputs_dir, &inputs_arena, &diag) : O2M_OK;
  if (!s) s = plugin->compile(model, &co, &diag);
  o2m_model_free(model);
  o2m_arena_free(&inputs_arena);
  return s ? cli_report(&diag) : EXIT_OK;
}
