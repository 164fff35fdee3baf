/* form_common.c - small pieces both as-written emitters use: failure
 * messages that name the model (and the node), and the cache that parses
 * each distinct type text once per emission.
 */
#include <string.h>

#include "emit/form/form.h"
#include "util/diag.h"

o2m_status form_failv(o2m_diag *diag, const o2m_model *model, const char *mlir_error,
                      o2m_status status, const char *fmt, va_list ap) {
  char reason[1536];
  vsnprintf(reason, sizeof(reason), fmt, ap);
  const char *path = model && model->path ? model->path : "<model>";
  if (status == O2M_ERR_INTERNAL && mlir_error && mlir_error[0])
    return o2m_fail(diag, status, "%s: %s (MLIR: %s)", path, reason, mlir_error);
  return o2m_fail(diag, status, "%s: %s", path, reason);
}

static o2m_status fail_with(o2m_diag *diag, const o2m_model *model, const char *mlir_error,
                            o2m_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  o2m_status s = form_failv(diag, model, mlir_error, status, fmt, ap);
  va_end(ap);
  return s;
}

o2m_status form_node_failv(o2m_diag *diag, const o2m_model *model, const char *mlir_error,
                           const o2m_node *node, o2m_status status, const char *fmt, va_list ap) {
  char reason[1024], who[256];
  vsnprintf(reason, sizeof(reason), fmt, ap);
  if (node->name[0])
    snprintf(who, sizeof(who), "node '%s'", node->name);
  else
    snprintf(who, sizeof(who), "unnamed node %d", node->index);
  return fail_with(diag, model, mlir_error, status, "graph '%s': %s (%s, domain '%s', opset %lld): %s",
                   node->graph ? node->graph->name : "", who, node->op_type,
                   node->domain[0] ? node->domain : "ai.onnx", (long long)node->opset, reason);
}

MlirType form_parse_type_cached(MlirContext ctx, o2m_strmap *cache, o2m_arena *arena,
                                const char *text) {
  void *cached = o2m_strmap_get(cache, text);
  if (cached) return (MlirType){cached};
  MlirType type = mlirTypeParseGet(ctx, mlirStringRefCreateFromCString(text));
  if (mlirTypeIsNull(type)) return type;
  char *key = o2m_arena_strdup(arena, text);
  if (!key || o2m_strmap_put(cache, arena, key, (void *)type.ptr) != 0) return (MlirType){NULL};
  return type;
}

o2m_status form_type_from_text(MlirContext ctx, o2m_strmap *cache, o2m_arena *arena,
                               const char *text, int text_failed, const char *reason,
                               MlirType *out, const char **why) {
  *why = reason;
  if (reason) return O2M_ERR_UNSUPPORTED;
  if (text_failed) {
    *why = "out of memory";
    return O2M_ERR_NOMEM;
  }
  *out = form_parse_type_cached(ctx, cache, arena, text);
  if (!mlirTypeIsNull(*out)) return O2M_OK;
  *why = "MLIR did not accept its type text";
  return O2M_ERR_INTERNAL;
}

void form_text_append(MlirStringRef s, void *text) {
  form_text *t = text;
  if (!t->cap) return;
  size_t room = t->cap - 1 - t->len;
  size_t n = s.length < room ? s.length : room;
  memcpy(t->buf + t->len, s.data, n);
  t->len += n;
  t->buf[t->len] = '\0';
}
