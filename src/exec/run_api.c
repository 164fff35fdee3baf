/* run_api.c - o2m_model_run and o2m_results, the public face of
 * o2m_run_model (run.h): tensors given as o2m_tensor_data, checked
 * against the model's inputs, and results that own their memory. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "exec/run.h"
#include "exec/session_internal.h"
#include "util/diag.h"


/* Checks a given tensor against the model's input i (session_check_input)
 * and wraps it as an o2m_tensor. */
static o2m_status wrap_input(o2m_model *model, int i, const o2m_tensor_data *d, o2m_arena *arena,
                             o2m_tensor **out, o2m_diag *diag) {
  o2m_value_desc want;
  o2m_status s = o2m_model_input(model, i, &want, diag);
  return s ? s : session_check_input(model->path, i, &want, d, arena, out, diag);
}

o2m_status o2m_model_run(o2m_model *model, const o2m_run_config *config, int n_inputs,
                         const o2m_tensor_data *inputs, o2m_results **out, o2m_diag *diag) {
  if (!model || !out || (n_inputs && !inputs))
    return o2m_fail(diag, O2M_ERR_USAGE, "o2m_model_run: no model, inputs or output");
  *out = NULL;
  int want = o2m_model_input_count(model);
  if (n_inputs != want)
    return o2m_fail(diag, O2M_ERR_USAGE, "%s: the model takes %d inputs but %d were given", model->path, want,
                    n_inputs);
  o2m_results *r = calloc(1, sizeof(*r));
  if (!r) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  int n_out = model->graph->n_outputs;
  o2m_tensor **ins = o2m_arena_array(&r->arena, (size_t)n_inputs + 1, sizeof(*ins));
  o2m_tensor **outs = o2m_arena_array(&r->arena, (size_t)n_out + 1, sizeof(*outs));
  r->items = o2m_arena_array(&r->arena, (size_t)n_out + 1, sizeof(*r->items));
  o2m_status s = ins && outs && r->items ? O2M_OK : o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n_inputs && !s; i++) s = wrap_input(model, i, &inputs[i], &r->arena, &ins[i], diag);
  o2m_run_options options = {.target = config ? config->target : O2M_TARGET_LINALG,
                             .opt_level = config ? config->opt_level : 2};
  if (!s) s = o2m_run_model(model, &options, n_inputs, (const o2m_tensor *const *)ins, outs, &r->arena, NULL, diag);
  for (int i = 0; i < n_out && !s; i++) {
    const o2m_tensor *t = outs[i];
    r->items[i] = (o2m_tensor_data){t->name, (int)t->dtype, t->rank, t->dims, t->data, t->nbytes};
  }
  if (s) {
    o2m_results_free(r);
    return s;
  }
  r->n = n_out;
  *out = r;
  return O2M_OK;
}

int o2m_results_count(const o2m_results *results) { return results ? results->n : 0; }

const o2m_tensor_data *o2m_results_get(const o2m_results *results, int index) {
  return results && index >= 0 && index < results->n ? &results->items[index] : NULL;
}

void o2m_results_free(o2m_results *results) {
  if (!results) return;
  o2m_arena_free(&results->arena);
  free(results);
}
