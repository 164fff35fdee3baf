/* api.c - the public API's small pieces that need no MLIR: the version,
 * o2m_free, the summary as a string, and the descriptions of a model's
 * inputs and outputs (o2m_value_desc, built in the model's arena). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "ir/type_text.h"
#include "util/diag.h"

const char *o2m_version(void) { return O2M_VERSION_STRING; }

void o2m_free(void *p) { free(p); }

o2m_status o2m_model_info_text(const o2m_model *model, unsigned flags, char **out, o2m_diag *diag) {
  if (!out) return o2m_fail(diag, O2M_ERR_USAGE, "o2m_model_info_text: no output");
  *out = NULL;
  size_t size = 0;
  FILE *f = open_memstream(out, &size);
  if (!f) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  o2m_status s = o2m_model_write_info(model, flags, f, diag);
  if (fclose(f) != 0 && !s) s = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  if (s) {
    free(*out);
    *out = NULL;
  }
  return s;
}

int o2m_model_input_count(const o2m_model *model) { return model ? o2m_runtime_input_count(model) : 0; }

int o2m_model_output_count(const o2m_model *model) {
  return model && model->graph ? model->graph->n_outputs : 0;
}

/* Fills *out for value v (typed `t`, the refined type) in the model's arena. */
static o2m_status describe(o2m_model *model, const char *name, const o2m_type *t, o2m_value_desc *out,
                           o2m_diag *diag) {
  char text[1024];
  memset(out, 0, sizeof(*out));
  out->name = name;
  out->type = o2m_arena_strdup(&model->arena, o2m_type_text(t, text, sizeof(text)));
  out->is_tensor = t->kind == O2M_TYPE_TENSOR;
  out->rank = -1;
  if (!out->type) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  if (!out->is_tensor) return O2M_OK;
  out->dtype = (int)t->elem;
  out->rank = t->rank;
  if (t->rank <= 0) return O2M_OK;
  int64_t *dims = o2m_arena_array(&model->arena, (size_t)t->rank, sizeof(*dims));
  const char **names = o2m_arena_array(&model->arena, (size_t)t->rank, sizeof(*names));
  if (!dims || !names) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int k = 0; k < t->rank; k++) {
    dims[k] = t->dims[k].sym ? -1 : t->dims[k].size;
    names[k] = t->dims[k].sym && t->dims[k].sym[0] != '?' ? t->dims[k].sym : NULL; /* '?': a fresh symbol */
  }
  out->dims = dims;
  out->dim_names = names;
  return O2M_OK;
}

o2m_status o2m_model_input(o2m_model *model, int index, o2m_value_desc *out, o2m_diag *diag) {
  if (!model || !out || index < 0 || index >= o2m_model_input_count(model))
    return o2m_fail(diag, O2M_ERR_USAGE, "o2m_model_input: no input %d", index);
  const o2m_value *v = o2m_runtime_input(model, index);
  return describe(model, v->name, &v->type, out, diag);
}

o2m_status o2m_model_output(o2m_model *model, int index, o2m_value_desc *out, o2m_diag *diag) {
  if (!model || !out || index < 0 || index >= o2m_model_output_count(model))
    return o2m_fail(diag, O2M_ERR_USAGE, "o2m_model_output: no output %d", index);
  const o2m_value *v = model->graph->output_values[index];
  return describe(model, model->graph->outputs[index].name, &v->type, out, diag);
}
