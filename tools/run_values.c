/* run_values.c - `run` for models that take or give sequences and
 * optionals: each input file read by the graph input's type (TensorProto
 * or .npy for a tensor, SequenceProto, OptionalProto) with the reader
 * `test` uses (o2m_read_value_file), the outputs written in the same
 * protos (output_<i>.pb) or printed element by element. --npy writes
 * tensors only and refuses the others with a message. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/core.h"
#include "onnx/value_file.h"
#include "util/diag.h"

static int is_value_kind(o2m_type_kind k) { return k == O2M_TYPE_SEQUENCE || k == O2M_TYPE_OPTIONAL; }

int cli_model_has_values(const o2m_model *model) {
  for (int i = 0; i < o2m_runtime_input_count(model); i++)
    if (is_value_kind(o2m_runtime_input(model, i)->type.kind)) return 1;
  for (int i = 0; i < model->graph->n_outputs; i++)
    if (model->graph->output_values[i] && is_value_kind(model->graph->output_values[i]->type.kind)) return 1;
  return 0;
}

o2m_status cli_read_input_value(const o2m_model *model, int i, const char *path, o2m_arena *arena, o2m_io_value *v,
                                o2m_diag *diag) {
  const o2m_value *in = o2m_runtime_input(model, i);
  o2m_status s = o2m_read_value_file(arena, path, in->type.kind, v, diag);
  if (s) return s;
  if (v->kind == O2M_TYPE_OPTIONAL && !v->elem_kind && in->type.inner) v->elem_kind = in->type.inner->kind;
  for (int k = 0; k < v->count; k++) v->tensors[k]->name = in->name;
  return O2M_OK;
}

int cli_read_input_values(const o2m_model *model, const char *dir, char **named, int n_named, o2m_arena *arena,
                          o2m_io_value **out, o2m_diag *diag) {
  int n = o2m_runtime_input_count(model);
  o2m_io_value *v = o2m_arena_array(arena, (size_t)n + 1, sizeof(o2m_io_value));
  int *given = o2m_arena_array(arena, (size_t)n + 1, sizeof(int));
  if (!v || !given) {
    o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
    return cli_report(diag);
  }
  for (int i = 0; dir && i < n; i++) {
    char *path = o2m_arena_printf(arena, "%s/input_%d.pb", dir, i);
    if (!path || cli_read_input_value(model, i, path, arena, &v[i], diag)) return cli_report(diag);
    given[i] = 1;
  }
  for (int k = 0; k < n_named; k++) {
    const char *eq = strchr(named[k], '=');
    int i = -1;
    for (int j = 0; j < n && i < 0; j++) {
      const char *have = o2m_runtime_input(model, j)->name;
      if (strlen(have) == (size_t)(eq - named[k]) && strncmp(have, named[k], (size_t)(eq - named[k])) == 0) i = j;
    }
    if (i < 0) return cli_usage_error("run", "the model has no input '%.*s'", (int)(eq - named[k]), named[k]);
    if (cli_read_input_value(model, i, eq + 1, arena, &v[i], diag)) return cli_report(diag);
    given[i] = 1;
  }
  for (int i = 0; i < n; i++)
    if (!given[i]) {
      const char *name = o2m_runtime_input(model, i)->name;
      return cli_usage_error("run", "input '%s' is not given (--input %s=FILE or --inputs DIR)", name, name);
    }
  *out = v;
  return EXIT_OK;
}

static void print_value(int index, const char *name, const o2m_io_value *v) {
  if (v->kind == O2M_TYPE_TENSOR) {
    cli_print_tensor(index, name, v->tensors[0], "");
    return;
  }
  if (v->kind == O2M_TYPE_OPTIONAL && !v->present) {
    printf("output %d '%s': an empty optional\n", index, name);
    return;
  }
  int seq = v->kind == O2M_TYPE_SEQUENCE || v->elem_kind == O2M_TYPE_SEQUENCE;
  const char *holding = v->kind == O2M_TYPE_OPTIONAL ? "an optional holding " : "";
  if (seq)
    printf("output %d '%s': %sa sequence of %d tensor%s\n", index, name, holding, v->count, v->count == 1 ? "" : "s");
  else
    printf("output %d '%s': %sa tensor\n", index, name, holding);
  for (int k = 0; k < v->count; k++) {
    char label[32];
    snprintf(label, sizeof(label), "  [%d] ", k);
    cli_print_tensor(-1, NULL, v->tensors[k], label);
  }
}

int cli_write_output_values(const o2m_model *model, const o2m_io_value *values, const char *out_dir, int npy,
                            o2m_arena *arena, o2m_diag *diag) {
  int n = model->graph->n_outputs;
  if (!out_dir) {
    for (int i = 0; i < n; i++) print_value(i, model->graph->outputs[i].name, &values[i]);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_MODEL;
  }
  for (int i = 0; npy && i < n; i++)
    if (values[i].kind != O2M_TYPE_TENSOR)
      return cli_usage_error("run", "output %d '%s' is a %s: --npy writes tensors only (leave it out to write "
                             "output_<i>.pb, a SequenceProto or OptionalProto)", i, model->graph->outputs[i].name,
                             values[i].kind == O2M_TYPE_SEQUENCE ? "sequence" : "optional");
  if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "onnx2mlir: error: cannot create the folder '%s': %s\n", out_dir, strerror(errno));
    return EXIT_MODEL;
  }
  for (int i = 0; i < n; i++) {
    char *path = o2m_arena_printf(arena, "%s/output_%d.%s", out_dir, i, npy ? "npy" : "pb");
    if (!path) {
      o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
      return cli_report(diag);
    }
    o2m_status s = npy ? o2m_write_tensor_file(values[i].tensors[0], path, O2M_FORMAT_NPY, diag)
                       : o2m_write_value_file(&values[i], model->graph->outputs[i].name, path, diag);
    if (s) return cli_report(diag);
  }
  return EXIT_OK;
}
