/* model.c - o2m_model_load and friends: the phases of loading in order
 * (map, decode, resolve external data, inline functions, link, infer) and
 * the model's lifetime (one arena plus the file mappings). */
#include <stdlib.h>
#include <string.h>

#include "infer/infer.h"
#include "ir/link.h"
#include "onnx/reader.h"
#include "util/diag.h"

static o2m_model *model_new(const char *path, const char *base_dir) {
  o2m_model *m = calloc(1, sizeof(*m));
  if (!m) return NULL;
  m->path = o2m_arena_strdup(&m->arena, path ? path : "<memory>");
  m->base_dir = base_dir ? o2m_arena_strdup(&m->arena, base_dir) : NULL;
  if (!m->path || (base_dir && !m->base_dir)) {
    o2m_arena_free(&m->arena);
    free(m);
    return NULL;
  }
  return m;
}

/* The directory part of `path` ("." when there is none). */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

static o2m_status run_phases(o2m_model *m, const uint8_t *bytes, size_t size,
                             const o2m_load_options *options, o2m_diag *diag) {
  o2m_status s = o2m_decode_model(m, bytes, size, diag);
  if (!s) s = o2m_resolve_external_data(m, diag);
  if (!s) s = o2m_inline_functions(m, diag);
  if (!s) s = o2m_link_model(m, diag);
  if (!s && !(options && options->skip_inference)) s = o2m_infer_model(m, diag);
  return s;
}

o2m_status o2m_model_load(const char *path, const o2m_load_options *options,
                          o2m_model **out, o2m_diag *diag) {
  *out = NULL;
  if (!path) return o2m_fail(diag, O2M_ERR_USAGE, "no model path given");
  char *dir = options && options->data_dir ? strdup(options->data_dir) : dir_of(path);
  o2m_model *m = dir ? model_new(path, dir) : NULL;
  free(dir);
  if (!m) return o2m_fail(diag, O2M_ERR_NOMEM, "%s: out of memory", path);
  o2m_status s = o2m_map_file(path, &m->mappings[0], diag);
  if (!s) {
    m->n_mappings = 1;
    s = run_phases(m, m->mappings[0].addr, m->mappings[0].size, options, diag);
  }
  if (s) {
    o2m_model_free(m);
    return s;
  }
  *out = m;
  return O2M_OK;
}

o2m_status o2m_model_load_bytes(const void *bytes, size_t size,
                                const char *name_for_messages,
                                const char *base_dir,
                                const o2m_load_options *options,
                                o2m_model **out, o2m_diag *diag) {
  *out = NULL;
  o2m_model *m = model_new(name_for_messages, base_dir);
  if (!m) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  o2m_status s = run_phases(m, bytes, size, options, diag);
  if (s) {
    o2m_model_free(m);
    return s;
  }
  *out = m;
  return O2M_OK;
}

void o2m_model_free(o2m_model *model) {
  if (!model) return;
  for (int i = 0; i < model->n_mappings; i++) o2m_unmap_file(&model->mappings[i]);
  o2m_arena_free(&model->arena);
  free(model);
}
