/* cli_common.c - reporting and flag helpers shared by the CLI commands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/core.h"
#include "core/compare.h"
#include "onnx/value_file.h"
#include "util/diag.h"

int cli_report(const o2m_diag *diag) {
  fprintf(stderr, "onnx2mlir: error: %s\n", diag->message[0] ? diag->message : o2m_status_name(diag->status));
  return diag->status == O2M_ERR_USAGE ? EXIT_USAGE : EXIT_MODEL;
}

int cli_usage_error(const char *command, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "onnx2mlir: error: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'onnx2mlir %s%s--help'.\n", command ? command : "", command ? " " : "");
  return EXIT_USAGE;
}

static void warn_to_stderr(void *user, const char *message) {
  (void)user;
  fprintf(stderr, "onnx2mlir: warning: %s\n", message);
}

o2m_diag cli_diag(void) {
  o2m_diag d;
  memset(&d, 0, sizeof(d));
  d.warn = warn_to_stderr;
  return d;
}

int cli_flag_value(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return 0;
  if (arg[n] == '=') {
    *value = arg + n + 1;
    return 1;
  }
  if (arg[n] != 0) return 0;
  if (*i + 1 >= argc) {
    *value = NULL;
    return 1;
  }
  *value = argv[++*i];
  return 1;
}

int cli_is_help(const char *arg) {
  return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

o2m_status cli_read_input_file(o2m_arena *arena, const char *dir, int i, o2m_tensor **out, o2m_diag *diag) {
  char *path = o2m_arena_printf(arena, "%s/input_%d.pb", dir, i);
  if (!path) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  return o2m_read_tensor_file(arena, path, out, diag);
}

void cli_print_tensor(int index, const char *name, const o2m_tensor *t, const char *prefix) {
  if (index >= 0)
    printf("%soutput %d '%s': %s [", prefix, index, name ? name : "", o2m_dtype_name(t->dtype));
  else
    printf("%s%s [", prefix, o2m_dtype_name(t->dtype));
  for (int k = 0; k < t->rank; k++) printf("%s%lld", k ? "," : "", (long long)t->dims[k]);
  printf("]\n%*s ", (int)strlen(prefix), "");
  enum { SHOWN = 32 };
  for (int64_t i = 0; i < t->count && i < SHOWN; i++) {
    char text[96];
    o2m_format_element(t, i, text, sizeof(text));
    printf(" %s", text);
  }
  if (t->count > SHOWN) printf(" ... (%lld values)", (long long)t->count);
  printf("\n");
}

/* Specialises a model with sequence or optional inputs to DIR/input_<i>.pb,
 * each read by its input's type (the target then says what it lacks). */
static o2m_status specialize_to_values(o2m_model *model, const char *dir, o2m_arena *arena, o2m_diag *diag) {
  int n = o2m_runtime_input_count(model);
  o2m_io_value *values = o2m_arena_array(arena, (size_t)n + 1, sizeof(o2m_io_value));
  if (!values) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    char *path = o2m_arena_printf(arena, "%s/input_%d.pb", dir, i);
    if (!path) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
    o2m_status s = cli_read_input_value(model, i, path, arena, &values[i], diag);
    if (s) return s;
  }
  return o2m_specialize_values(model, n, values, diag);
}

/* Specialises the model to DIR/input_<i>.pb, read into arena (which must
 * outlive the import). */
o2m_status cli_specialize_to(o2m_model *model, const char *dir, o2m_arena *arena, o2m_diag *diag) {
  int n = o2m_runtime_input_count(model);
  for (int i = 0; i < n; i++) {
    o2m_type_kind kind = o2m_runtime_input(model, i)->type.kind;
    if (kind == O2M_TYPE_SEQUENCE || kind == O2M_TYPE_OPTIONAL) return specialize_to_values(model, dir, arena, diag);
  }
  o2m_tensor **inputs = o2m_arena_array(arena, (size_t)n + 1, sizeof(o2m_tensor *));
  if (!inputs) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    o2m_status s = cli_read_input_file(arena, dir, i, &inputs[i], diag);
    if (s) return s;
  }
  return o2m_specialize_inputs(model, n, (const o2m_tensor *const *)inputs, diag);
}
