/* cmd_info.c - `onnx2mlir info MODEL`: loads (without MLIR) and prints the
 * library's summary. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char info_help[] =
    "usage: onnx2mlir info MODEL [--types] [--data-dir DIR]\n\n"
    "Prints a one-screen summary of an ONNX model: IR version, opsets per\n"
    "domain, producer, inputs and outputs with inferred types (symbolic dims\n"
    "by name, '?' for unknown), node count, op histogram, parameter count and\n"
    "bytes, and what each target supports. Weights are never read.\n\n"
    "  --types         also print every value with its inferred type\n"
    "  --data-dir DIR  where external data lives (default: the model's folder)\n";

int cmd_info(int argc, char **argv) {
  const char *model_path = NULL, *data_dir = NULL;
  unsigned flags = 0;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      fputs(info_help, stdout);
      return EXIT_OK;
    }
    if (strcmp(argv[i], "--types") == 0) {
      flags |= O2M_INFO_TYPES;
    } else if (cli_flag_value(argc, argv, &i, "--data-dir", &data_dir)) {
      if (!data_dir) return cli_usage_error("info", "--data-dir needs a folder");
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error("info", "unknown option '%s'", argv[i]);
    } else if (model_path) {
      return cli_usage_error("info", "more than one model given");
    } else {
      model_path = argv[i];
    }
  }
  if (!model_path) return cli_usage_error("info", "no model given");
  o2m_diag diag = cli_diag();
  o2m_load_options options = {data_dir, 0};
  o2m_model *model = NULL;
  if (o2m_model_load(model_path, &options, &model, &diag)) return cli_report(&diag);
  o2m_status s = o2m_model_write_info(model, flags, stdout, &diag);
  o2m_model_free(model);
  return s ? cli_report(&diag) : EXIT_OK;
}
