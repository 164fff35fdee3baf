/* cmd_import.c - `onnx2mlir import MODEL [--to T] [-o FILE]`: loads the
 * model, then emits it through the MLIR plugin, as text or bytecode by the
 * output file's extension. Shows progress on a terminal for big models. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/core.h"
#include "onnx/tensor_file.h"
#include "util/diag.h"

static const char import_help[] =
    "usage: onnx2mlir import MODEL [--to TARGET] [-o FILE] [--data-dir DIR]\n"
    "                        [--tosa-spec 1.0|1.1.draft] [--inputs DIR]\n\n"
    "Imports an ONNX model and writes it as MLIR.\n\n"
    "  --to TARGET     torch (default): torch-mlir's ONNX import form\n"
    "                  (torch.operator \"onnx.X\"), for torch-mlir and IREE;\n"
    "                  linalg: Linalg-on-tensors (+ tensor, arith, math, scf);\n"
    "                  tosa: TOSA (tosa.target_env attached, tosa-validate'd);\n"
    "                  stablehlo: StableHLO 1.13 in MLIR's generic syntax, for\n"
    "                  stablehlo-opt and XLA stacks (checked against the spec's\n"
    "                  op table: every node it cannot express is reported);\n"
    "                  onnx: onnx-mlir's ONNX dialect as `onnx-mlir --EmitONNXBasic`\n"
    "                  writes it, for onnx-mlir and onnx-mlir-opt (checked against\n"
    "                  onnx-mlir's op table; ops it lacks are written in ops it\n"
    "                  has where the shared layer can, else as onnx.Custom)\n"
    "  --tosa-spec V   the TOSA version to declare and validate against:\n"
    "                  1.1.draft (default: int64 tensors, dynamic dims) or 1.0\n"
    "                  (every node 1.0 cannot express is reported)\n"
    "  -o FILE         output file; FILE.mlirbc writes MLIR bytecode,\n"
    "                  anything else text; default: text to stdout\n"
    "  --data-dir DIR  where external data lives (default: the model's folder)\n"
    "  --inputs DIR    specialise the module to the inputs DIR/input_<i>.pb (one per\n"
    "                  graph input without initializer, as `run` reads them): their\n"
    "                  shapes make the module static, and small inputs read only as\n"
    "                  parameters (Resize's scales, Pad's pads, ...) become constants\n"
    "  --emit-bytecode write bytecode whatever the file name\n";

typedef struct progress_state {
  struct timespec start;
  int shown;
} progress_state;

static double seconds_since(const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* Shows "emitting N/M nodes" once the import has run for half a second. */
static void show_progress(void *user, size_t done, size_t total) {
  progress_state *p = user;
  if ((done & 255) != 0 && done != total) return;
  if (!p->shown && seconds_since(&p->start) < 0.5) return;
  p->shown = 1;
  fprintf(stderr, "\ronnx2mlir: emitting %zu/%zu nodes", done, total);
  if (done == total) fprintf(stderr, "\n");
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int cmd_import(int argc, char **argv) {
  const char *model_path = NULL, *out_path = NULL, *data_dir = NULL, *target_name = "torch";
  const char *tosa_spec = NULL, *inputs_dir = NULL;
  int force_bytecode = 0;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      fputs(import_help, stdout);
      return EXIT_OK;
    }
    if (cli_flag_value(argc, argv, &i, "--to", &target_name)) {
      if (!target_name) return cli_usage_error("import", "--to needs a target");
    } else if (cli_flag_value(argc, argv, &i, "-o", &out_path)) {
      if (!out_path) return cli_usage_error("import", "-o needs a file name");
    } else if (cli_flag_value(argc, argv, &i, "--data-dir", &data_dir)) {
      if (!data_dir) return cli_usage_error("import", "--data-dir needs a folder");
    } else if (cli_flag_value(argc, argv, &i, "--tosa-spec", &tosa_spec)) {
      if (!tosa_spec || (strcmp(tosa_spec, "1.0") != 0 && strcmp(tosa_spec, "1.1.draft") != 0))
        return cli_usage_error("import", "--tosa-spec takes 1.0 or 1.1.draft");
    } else if (cli_flag_value(argc, argv, &i, "--inputs", &inputs_dir)) {
      if (!inputs_dir) return cli_usage_error("import", "--inputs needs a folder");
    } else if (strcmp(argv[i], "--emit-bytecode") == 0) {
      force_bytecode = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error("import", "unknown option '%s'", argv[i]);
    } else if (model_path) {
      return cli_usage_error("import", "more than one model given");
    } else {
      model_path = argv[i];
    }
  }
  if (!model_path) return cli_usage_error("import", "no model given");
  int target = o2m_target_from_name(target_name);
  if (target < 0)
    return cli_usage_error("import", "unknown target '%s' (torch, onnx, linalg, tosa, stablehlo)", target_name);

  o2m_diag diag = cli_diag();
  progress_state progress = {{0, 0}, 0};
  clock_gettime(CLOCK_MONOTONIC, &progress.start);
  cli_import_fn import = cli_load_import(target, &diag);
  if (!import) return cli_report(&diag);
  o2m_load_options options = {data_dir, 0};
  o2m_model *model = NULL;
  if (o2m_model_load(model_path, &options, &model, &diag)) return cli_report(&diag);
  o2m_arena inputs_arena = {0};
  if (inputs_dir && cli_specialize_to(model, inputs_dir, &inputs_arena, &diag)) {
    o2m_model_free(model);
    o2m_arena_free(&inputs_arena);
    return cli_report(&diag);
  }

  FILE *out = stdout;
  if (out_path && strcmp(out_path, "-") != 0 && !(out = fopen(out_path, "wb"))) {
    o2m_model_free(model);
    o2m_arena_free(&inputs_arena);
    fprintf(stderr, "onnx2mlir: error: cannot write '%s'\n", out_path);
    return EXIT_MODEL;
  }
  o2m_import_options io = {(o2m_target)target, force_bytecode || (out_path && ends_with(out_path, ".mlirbc")),
                           isatty(2) ? show_progress : NULL, &progress, tosa_spec};
  o2m_status s = import(model, &io, out, &diag);
  int closed = out == stdout ? fflush(out) : fclose(out);
  o2m_model_free(model);
  o2m_arena_free(&inputs_arena);
  if (s) {
    if (out_path && out != stdout) remove(out_path);
    return cli_report(&diag);
  }
  if (closed != 0) {
    fprintf(stderr, "onnx2mlir: error: writing '%s' failed\n", out_path ? out_path : "<stdout>");
    return EXIT_MODEL;
  }
  return EXIT_OK;
}
