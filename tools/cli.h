/* cli.h - what the CLI's command files share: reporting, option parsing
 * helpers and the loading of the MLIR plugin. The CLI is thin: it parses
 * flags, calls the library and turns statuses into exit codes (0 ok, 1 bad
 * or unsupported model/data, 2 bad usage). */
#ifndef O2M_CLI_H
#define O2M_CLI_H

#include "onnx2mlir.h"
#include "onnx/tensor_file.h"

enum { EXIT_OK = 0, EXIT_MODEL = 1, EXIT_USAGE = 2 };

/* Prints "onnx2mlir: error: ..." and returns the exit code for `status`. */
int cli_report(const o2m_diag *diag);
/* Prints a usage error plus a hint to `--help` and returns EXIT_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A diag whose warnings go to stderr. */
o2m_diag cli_diag(void);
/* Non-zero when argv[i] is `name` and takes a value; sets *value and
 * advances *i. Supports "--name VALUE" and "--name=VALUE". */
int cli_flag_value(int argc, char **argv, int *i, const char *name, const char **value);
int cli_is_help(const char *arg);

/* The MLIR side, loaded on demand from a plugin (cli_plugin.c). */
typedef o2m_status (*cli_import_fn)(o2m_model *, const o2m_import_options *,
                                    FILE *, o2m_diag *);
/* Loads the plugin for importing to `target` (o2m_target); on failure
 * fills diag and returns NULL. */
cli_import_fn cli_load_import(int target, o2m_diag *diag);
struct o2m_plugin;
/* Loads the full plugin and returns its table (plugin/plugin.h); on
 * failure fills diag and returns NULL. */
const struct o2m_plugin *cli_load_plugin(o2m_diag *diag);

/* DIR/input_<i>.pb (an ONNX TensorProto, as the test layout names it),
 * read into arena. */
o2m_status cli_read_input_file(o2m_arena *arena, const char *dir, int i, o2m_tensor **out,
                               o2m_diag *diag);

/* Specialises the model to the inputs DIR/input_<i>.pb (import's and
 * compile's --inputs), read into arena, which must outlive the model's use. */
o2m_status cli_specialize_to(o2m_model *model, const char *dir, o2m_arena *arena, o2m_diag *diag);

/* Prints a tensor as `run` shows an output: `prefix` and "output I
 * 'NAME': dtype [dims]" (index < 0: the dtype and dims only), then its
 * first values indented as far as the prefix. */
void cli_print_tensor(int index, const char *name, const o2m_tensor *t, const char *prefix);

/* ---- run_values.c: run's sequences and optionals ---------------------------- */
struct o2m_io_value;
/* Whether a runtime input or a graph output of `model` is a sequence or
 * an optional. */
int cli_model_has_values(const o2m_model *model);
/* Runtime input i of `model` read from `path` by its type (TensorProto or
 * .npy, SequenceProto, OptionalProto). */
o2m_status cli_read_input_value(const o2m_model *model, int i, const char *path, o2m_arena *arena,
                                struct o2m_io_value *v, o2m_diag *diag);
/* Reads every runtime input of `model` by its type: DIR/input_<i>.pb (dir
 * may be NULL), then the NAME=FILE overrides. *out: an arena array.
 * EXIT_OK or the exit code after reporting. */
int cli_read_input_values(const o2m_model *model, const char *dir, char **named, int n_named, o2m_arena *arena,
                          struct o2m_io_value **out, o2m_diag *diag);
/* Writes the graph outputs as OUTDIR/output_<i>.pb (TensorProto,
 * SequenceProto, OptionalProto; --npy: tensors only) or, without
 * out_dir, prints them. EXIT_OK or the exit code after reporting. */
int cli_write_output_values(const o2m_model *model, const struct o2m_io_value *values, const char *out_dir, int npy,
                            o2m_arena *arena, o2m_diag *diag);

int cmd_compile(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_test(int argc, char **argv);

#endif
