/* onnx2mlir.c - the command-line entry: dispatches to one command per file
 * (cmd_*.c). Thin by design: parsing and exit codes only. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"import", cmd_import, "emit a model as MLIR (torch-mlir's ONNX form by default)"},
    {"info", cmd_info, "summarise a model: opsets, I/O types, ops, parameters"},
    {"run", cmd_run, "run a model on given inputs (JIT-compiled through MLIR)"},
    {"compile", cmd_compile, "compile a model into a shared library or object with a C ABI"},
    {"test", cmd_test, "run ONNX backend-test folders and compare the outputs"},
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: onnx2mlir COMMAND [ARGS]\n"
          "       onnx2mlir --version | --help\n\n"
          "Imports ONNX models into MLIR.\n\ncommands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\n'onnx2mlir COMMAND --help' describes a command.\n"
               "Exit status: 0 success, 1 bad or unsupported model or data, 2 bad usage.\n");
}

/* The compiled code allocates and frees its intermediate buffers on every
 * call; glibc would hand the large ones back to the kernel each time
 * (mmap/munmap, trimming), so that every call faults them in again (a
 * third of ResNet18's call time here). The CLI keeps freed memory for the
 * next call instead. */
static void keep_freed_memory(void) {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);   /* glibc's maximum */
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
}

int main(int argc, char **argv) {
  keep_freed_memory();
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (cli_is_help(argv[1])) {
    usage(stdout);
    return EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("onnx2mlir %s\n", O2M_VERSION_STRING);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
  return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
}
