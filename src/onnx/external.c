/* external.c - o2m_resolve_external_data: points every tensor listed in
 * model->external at its bytes in a file next to the model.
 *
 * Locations are confined to the data directory (model->base_dir): an
 * absolute location, a ".." component, or a path that resolves through
 * symlinks to somewhere outside the directory is refused, and the file
 * opened is checked again (a path swapped after the check). Each distinct
 * file is mapped once into model->mappings; the byte range must lie
 * inside the file and match the tensor's dims and dtype exactly.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/reader.h"
#include "util/diag.h"

enum { MAX_MAPPINGS = sizeof(((o2m_model *)0)->mappings) /
                      sizeof(((o2m_model *)0)->mappings[0]) };

/* The reason a location is refused before touching the file system, or
 * NULL when it is acceptable. */
static const char *location_problem(const char *location) {
  if (!location[0]) return "is empty";
  if (location[0] == '/') return "is absolute";
  for (const char *p = location;;) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t)(slash - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.') return "has a '..' component";
    if (!slash) return NULL;
    p = slash + 1;
  }
}

/* Non-zero when the resolved `path` lies inside the resolved `dir`. */
static int inside(const char *dir, const char *path) {
  size_t n = strlen(dir);
  return strncmp(dir, path, n) == 0 && n > 0 &&
         (path[n] == '/' || (dir[n - 1] == '/' && path[n]));
}

static o2m_status tensor_fail(o2m_model *m, o2m_diag *diag, o2m_status status,
                              const o2m_tensor *t, const char *detail) {
  return o2m_fail(diag, status, "%s: tensor '%s': external data '%s' %s",
                  m->path ? m->path : "<model>", t->name,
                  t->external->location, detail);
}

/* The mapping of the file at the resolved path `real`, mapped on first use. */
static o2m_status map_once(o2m_model *m, const o2m_tensor *t, const char *real_dir,
                           const char *real, const o2m_mapping **out, o2m_diag *diag) {
  for (int i = 0; i < m->n_mappings; i++) {
    if (m->mappings[i].path && strcmp(m->mappings[i].path, real) == 0) {
      *out = &m->mappings[i];
      return O2M_OK;
    }
  }
  if (m->n_mappings >= MAX_MAPPINGS)
    return tensor_fail(m, diag, O2M_ERR_UNSUPPORTED, t,
                       "would be a file beyond the 64 a model may map");
  char *copy = o2m_arena_strdup(&m->arena, real);
  if (!copy) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  o2m_diag why = {0};
  o2m_mapping *slot = &m->mappings[m->n_mappings];
  o2m_status st = o2m_map_file_inside(copy, real_dir, slot, &why);
  if (st) return tensor_fail(m, diag, st, t, why.message);
  m->n_mappings++;
  *out = slot;
  return O2M_OK;
}

static o2m_status resolve_one(o2m_model *m, const char *real_dir,
                              o2m_tensor *t, o2m_diag *diag) {
  const o2m_external_ref *ext = t->external;
  const char *problem = location_problem(ext->location);
  if (problem) return tensor_fail(m, diag, O2M_ERR_INVALID, t, problem);
  char *joined = o2m_arena_printf(&m->arena, "%s/%s", m->base_dir,
                                  ext->location);
  if (!joined) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  char real[PATH_MAX];
  if (!realpath(joined, real)) {
    char detail[300];
    snprintf(detail, sizeof(detail), "cannot be opened: %s", strerror(errno));
    return tensor_fail(m, diag, O2M_ERR_IO, t, detail);
  }
  if (!inside(real_dir, real))
    return tensor_fail(m, diag, O2M_ERR_INVALID, t,
                       "resolves outside the data directory");
  const o2m_mapping *file = NULL;
  o2m_status st = map_once(m, t, real_dir, real, &file, diag);
  if (st) return st;
  uint64_t size = file->size, offset = (uint64_t)ext->offset;
  char detail[300];
  if (offset > size) {
    snprintf(detail, sizeof(detail),
             "has offset %llu past the end of the file (%llu bytes)",
             (unsigned long long)offset, (unsigned long long)size);
    return tensor_fail(m, diag, O2M_ERR_INVALID, t, detail);
  }
  uint64_t length = ext->length < 0 ? size - offset : (uint64_t)ext->length;
  if (length > size - offset) {
    snprintf(detail, sizeof(detail),
             "has offset %llu and length %llu past the end of the file "
             "(%llu bytes)",
             (unsigned long long)offset, (unsigned long long)length,
             (unsigned long long)size);
    return tensor_fail(m, diag, O2M_ERR_INVALID, t, detail);
  }
  if (length != t->nbytes) {
    snprintf(detail, sizeof(detail),
             "holds %llu bytes, but %lld elements of %s need %zu",
             (unsigned long long)length, (long long)t->count,
             o2m_dtype_name(t->dtype), t->nbytes);
    return tensor_fail(m, diag, O2M_ERR_INVALID, t, detail);
  }
  t->data = t->nbytes ? (const uint8_t *)file->addr + offset : NULL;
  return O2M_OK;
}

o2m_status o2m_resolve_external_data(o2m_model *model, o2m_diag *diag) {
  if (model->n_external == 0) return O2M_OK;
  const char *file = model->path ? model->path : "<model>";
  if (!model->base_dir)
    return o2m_fail(diag, O2M_ERR_INVALID,
                    "%s: tensor '%s' has external data, but the model has no "
                    "data directory to read it from",
                    file, model->external[0]->name);
  char real_dir[PATH_MAX];
  if (!realpath(model->base_dir, real_dir))
    return o2m_fail(diag, O2M_ERR_IO, "%s: data directory '%s': %s", file,
                    model->base_dir, strerror(errno));
  for (int i = 0; i < model->n_external; i++) {
    o2m_status st = resolve_one(model, real_dir, model->external[i], diag);
    if (st) return st;
  }
  return O2M_OK;
}
